"""The last-resort handler of every entry point: an unexpected exception, a bug of ours, reaches
the user as one line naming the command, its input and where to report it, never as a traceback.

- `itm` (generator.cli) runs its main through `exit_code`: the line on stderr, exit 70
  (EX_SOFTWARE); Ctrl-C exits 130, quietly.
- A drawing worker (generator.drawing) draws each figure under `last_resort`: the line reaches
  the build as the figure's DrawingError.
- The MkDocs plugins' classes are decorated with `guard_events`: each `on_*` event turns an
  unexpected exception (and an InputError that escaped) into a PluginError, which MkDocs prints
  as one `ERROR` line before `Aborted with a BuildError!` (any other exception is a traceback).
- The pinned_excerpts Markdown extension expands its blocks under `last_resort` (so it does
  under Zensical or Python-Markdown alone, where no plugin event surrounds it).

Errors that already tell the user what to do pass through unchanged (InputError, and whatever
an entry point names as expected: MkDocs' own errors), and so do KeyboardInterrupt and
SystemExit (not Exceptions). ITM_TRACEBACK=1 (generator.settings) lets a bug through with its
traceback, for whoever is fixing it.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from generator.settings import tracebacks_wanted

ISSUES = "https://github.com/inside-the-model/inside-the-model/issues"  # pyproject's Issues URL
EXIT_BUG = 70  # EX_SOFTWARE (sysexits.h): an internal software error
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports Ctrl-C
MAX_DETAIL = 300  # characters of the exception's message quoted

PluginClass = TypeVar("PluginClass", bound=type)


class Bug(Exception):
    """An unexpected exception, told in one line (its message is that line)."""


def bug_report(command: str, error: BaseException, where: str | None = None) -> str:
    """One line: what failed, on what, the exception, and where to report it."""
    lines = str(error).strip().splitlines()
    detail = f"{type(error).__name__}: {lines[0][:MAX_DETAIL]}" if lines else type(error).__name__
    on = f" on {where}" if where else ""
    return (
        f"{command}{on} failed: {detail}. This is a bug in Inside the Model: please report it at"
        f" {ISSUES}, with the command and this message"
    ).replace("\n", "\\n")


@contextmanager
def last_resort(
    command: str,
    where: str | None = None,
    *,
    raise_as: Callable[[str], Exception] = Bug,
    expected: tuple[type[BaseException], ...] = (),
) -> Iterator[None]:
    """Run the block; an unexpected exception leaves it as `raise_as(one line)`, without its
    traceback (unless ITM_TRACEBACK is set). `command` names what ran, `where` its input."""
    try:
        yield
    except Exception as error:
        if isinstance(error, (_input_error(), Bug, *expected)) or tracebacks_wanted():
            raise
        raise raise_as(bug_report(command, error, where)) from None


def _input_error() -> type[Exception]:
    """InputError as the generator loaded now raises it: `mkdocs serve` re-imports the generator
    when its code changed (generator.plugin), and the plugin keeps the module it started with."""
    from generator.errors import InputError

    return InputError


def exit_code(
    command: str, main: Callable[[], int], *, expected: tuple[type[BaseException], ...] = ()
) -> int:
    """A process's exit code from `main()`: a bug is one line on stderr and EXIT_BUG; Ctrl-C is
    EXIT_INTERRUPTED, with nothing printed."""
    try:
        with last_resort(command, expected=expected):
            return main()
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Bug as bug:
        print(f"error: {bug}", file=sys.stderr)
        return EXIT_BUG


def guard_events(name: str) -> Callable[[PluginClass], PluginClass]:
    """A class decorator for a MkDocs plugin: every event it defines (on_*, CombinedEvent parts
    included) runs under last_resort; `name` starts its messages ("Inside the Model")."""

    def decorate(cls: PluginClass) -> PluginClass:
        from mkdocs.plugins import CombinedEvent

        for attribute, value in list(vars(cls).items()):
            if not attribute.startswith("on_"):
                continue
            if isinstance(value, CombinedEvent):
                guarded = [_guarded(name, method) for method in value.methods]
                setattr(cls, attribute, CombinedEvent(*guarded))
            elif callable(value):
                setattr(cls, attribute, _guarded(name, value))
        return cls

    return decorate


def _guarded(name: str, event: Callable[..., Any]) -> Callable[..., Any]:
    """The event, raising only MkDocs' errors (its priority and name kept by functools.wraps)."""
    from mkdocs.exceptions import MkDocsException, PluginError

    def plugin_error(line: str) -> PluginError:
        return PluginError(f"{name}: {line}")

    @functools.wraps(event)
    def run(plugin: Any, *args: Any, **kwargs: Any) -> Any:
        command = f"`mkdocs {getattr(plugin, 'command', None) or 'build'}` ({event.__name__})"
        try:
            with last_resort(
                command, _input(args, kwargs), raise_as=plugin_error, expected=(MkDocsException,)
            ):
                return event(plugin, *args, **kwargs)
        except Exception as error:
            if isinstance(error, _input_error()):  # told as MkDocs tells a plugin's errors
                raise plugin_error(str(error)) from None
            raise

    return run


def _input(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """What an event was working on: its page ("docs/index.md"), else the site's mkdocs.yml."""
    from mkdocs.config.defaults import MkDocsConfig

    page = kwargs.get("page")
    config = next((a for a in (*args, *kwargs.values()) if isinstance(a, MkDocsConfig)), None)
    try:
        if page is not None:
            docs = Path(config["docs_dir"]).name + "/" if config is not None else ""
            return f"{docs}{page.file.src_uri}"
        return str(config.config_file_path) if config is not None else None
    except Exception:  # a half-made page or config: the message goes without it
        return None
