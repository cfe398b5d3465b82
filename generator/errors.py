"""The one error type for bad input: it names the file, the entry and the fix."""

from __future__ import annotations


class InputError(Exception):
    """Bad input the user can fix. The message says where (file, entry) and how."""

    def __init__(
        self,
        problem: str,
        *,
        file: str | None = None,
        entry: str | None = None,
        fix: str | None = None,
    ) -> None:
        self.problem = problem
        self.file = file
        self.entry = entry
        self.fix = fix
        super().__init__(self.render())

    def render(self) -> str:
        where = ", ".join(
            part for part in (self.file, f"entry {self.entry!r}" if self.entry else None) if part
        )
        text = f"{where}: {self.problem}" if where else self.problem
        return f"{text}\n  fix: {self.fix}" if self.fix else text


# A light install (`pip install inside-the-model`: the pinned excerpts, with MkDocs and
# pymdown-extensions) lacks the GPT-2 site's packages. The extra that brings a package, by its
# import name; any other comes with "site".
DISTRIBUTION = "inside-the-model"
EXTRA_OF = {"torch": "train"}


def install_hint(package: str) -> str:
    """ "pip install 'inside-the-model[site]'": what brings `package` (an import name)."""
    return f"pip install '{DISTRIBUTION}[{EXTRA_OF.get(package, 'site')}]'"


def missing_package(error: BaseException) -> str | None:
    """The top-level name of the package a ModuleNotFoundError says this install lacks (None for
    any other error, and for a module of the generator's own)."""
    if not isinstance(error, ModuleNotFoundError):
        return None
    top = (error.name or "").split(".")[0]
    return top if top and top != "generator" else None


def lacking(package: str, entry: str) -> InputError:
    """The error for `entry` (a command, a plugin) that needs a package this install lacks."""
    return InputError(
        f"needs {package}, which this install lacks (it comes with the"
        f" {EXTRA_OF.get(package, 'site')} extra)",
        entry=entry,
        fix=install_hint(package),
    )
