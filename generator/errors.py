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
