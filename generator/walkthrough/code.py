"""The code panel: the engine's own attention() with its real line numbers, each line tied to a
step, next to the pinned upstream excerpts. Both go through generator.render.code."""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from markupsafe import Markup

from generator.blocks import Block
from generator.engine import attention, step_lines
from generator.errors import InputError
from generator.render import code as code_render
from generator.sources.excerpt import split_lines
from generator.walkthrough.blocks import CodePanel, CodeStep

UPSTREAM = ("gpt2.attn", "hf.gpt2-attention-forward")  # excerpt ids in sources/lock.toml


@dataclass(frozen=True)
class EngineExcerpt:
    """Lines of a function of this repository, cut from its file as it is on disk."""

    path: str  # "generator/engine/attention.py", relative to the repository root
    first_line: int
    text: str  # the lines, each ending in "\n"
    steps: dict[str, tuple[int, int]]  # {step: (first, last)} line numbers in the same file
    block_id: str  # the fence's id: its lines are #__span-<block_id>-<line>

    @property
    def last_line(self) -> int:
        return self.first_line + self.text.count("\n") - 1


def engine_excerpt(root: Path, func=attention) -> EngineExcerpt:
    """func's lines read from its file under `root`, numbered as in that file."""
    path, first, text = source_lines(root, func, func)
    block_id = code_render.fence_id("wt", f"engine.{func.__name__}", first)
    return EngineExcerpt(path, first, text, step_lines(func), block_id)


def source_lines(root: Path, first_func, last_func) -> tuple[str, int, str]:
    """(path under root, first line, text) of one file's lines from first_func's first line to
    last_func's last, as on disk; an error if they changed since they were imported."""
    source = Path(inspect.getsourcefile(first_func) or inspect.getfile(first_func)).resolve()
    try:
        path = source.relative_to(root.resolve()).as_posix()
    except ValueError:
        path = source.as_posix()
    first, last = function_lines(first_func)[0], function_lines(last_func)[1]
    on_disk = split_lines(source.read_text(encoding="utf-8"))
    text = "".join(line + "\n" for line in on_disk[first - 1 : last])
    for func in dict.fromkeys((first_func, last_func)):  # each once, in order
        lines, start = inspect.getsourcelines(func)
        read = "".join(line + "\n" for line in on_disk[start - 1 : start - 1 + len(lines)])
        if read != "".join(lines):
            raise InputError(
                f"{func.__name__} changed on disk since it was imported",
                file=path,
                entry=func.__name__,
                fix="rebuild: the page must show the code that computed its numbers",
            )
    return path, first, text


def function_lines(func) -> tuple[int, int]:
    """(first, last) line numbers of func in its file."""
    lines, first = inspect.getsourcelines(func)
    return first, first + len(lines) - 1


def code_panel(
    engine: EngineExcerpt,
    upstream: list,
    step_titles: dict[str, str],
    *,
    sources: str | None,
    render: Callable[[Block], str],
) -> CodePanel:
    """Our engine's function (lines tied to steps) beside the upstream tabs, whose evidence
    links to `sources` (the Sources page's URL); `render` is the page's block renderer."""
    return CodePanel(
        block_id=engine.block_id,
        path=engine.path,
        first_line=engine.first_line,
        last_line=engine.last_line,
        steps=tuple(
            CodeStep(key, step_titles[key], first, last)
            for key, (first, last) in engine.steps.items()
        ),
        fence=Markup(
            code_render.fence(engine.text, first_line=engine.first_line, block_id=engine.block_id)
        ),
        tabs=Markup(
            textwrap.dedent(code_render.code_tabs(upstream, sources=sources, render=render))
        ),
    )
