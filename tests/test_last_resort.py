"""No Python traceback reaches a user: each entry point driven into its last-resort handler by a
RuntimeError raised deep inside, and what the user sees is one line naming the command, its input
and where to report the bug (generator/last_resort.py). Ctrl-C stays quiet; ITM_TRACEBACK=1 keeps
the traceback for developers."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from generator.last_resort import EXIT_BUG, ISSUES
from tests.site_helpers import ROOT, build_env, patched_mkdocs, tree_digest

BOOM = "def boom(*args, **kwargs):\n    raise RuntimeError('boom')\n"


def raising(name: str) -> str:
    """A patch (tests.site_helpers.patched_mkdocs) making `module.name` raise RuntimeError."""
    return BOOM + f"module.{name} = boom\n"


def assert_one_line_report(text: str, *parts: str) -> None:
    """The bug told in one line that names `parts`, the exception and where to report it."""
    assert "Traceback" not in text, text
    (line,) = [line for line in text.splitlines() if "RuntimeError: boom" in line]
    assert f"please report it at {ISSUES}, with the command and this message" in line, line
    for part in parts:
        assert part in line, (part, line)


def test_the_report_address_is_the_projects_issues_url() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["urls"]["Issues"] == ISSUES


# ---------------------------------------------------------------- itm


def test_a_bug_in_itm_is_one_line_and_exit_70(monkeypatch, capsys) -> None:
    """`itm numbers` re-raised an unexpected exception: the user got its traceback."""
    from generator import accounting
    from generator.cli import main

    monkeypatch.delenv("ITM_TRACEBACK", raising=False)
    monkeypatch.setattr(
        accounting, "flop_rows", lambda *a: (_ for _ in ()).throw(RuntimeError("boom"))
    )
    code = main(["numbers", "--model", "gpt2", "--context", "64"])
    out, err = capsys.readouterr()
    assert code == EXIT_BUG and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ")
    assert_one_line_report(err, "`itm numbers --model gpt2 --context 64` failed")


def test_itm_traceback_keeps_the_traceback_for_developers(monkeypatch) -> None:
    from generator import accounting
    from generator.cli import main

    monkeypatch.setenv("ITM_TRACEBACK", "1")
    monkeypatch.setattr(
        accounting, "flop_rows", lambda *a: (_ for _ in ()).throw(RuntimeError("boom"))
    )
    with pytest.raises(RuntimeError, match="boom"):
        main(["numbers", "--model", "gpt2"])


def test_ctrl_c_in_itm_exits_130_quietly(monkeypatch, capsys) -> None:
    from generator import accounting
    from generator.cli import main

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(accounting, "flop_rows", interrupted)
    assert main(["numbers", "--model", "gpt2"]) == 130
    assert capsys.readouterr() == ("", "")


# ---------------------------------------------------------------- the drawing worker


def broken_drawing() -> bytes:
    """A figure's drawing with a bug deep inside."""
    raise RuntimeError("boom")


def test_the_build_quotes_the_workers_one_line(tmp_path: Path, monkeypatch, capfd) -> None:
    """A drawing that raised printed its traceback from the worker, which the build quoted: the
    build's error is one line, and the worker (whose stderr is the build's) prints nothing."""
    from generator.drawing import Drawing, DrawingError, Figure

    monkeypatch.delenv("ITM_TRACEBACK", raising=False)
    broken = Figure("figures/broken.svg", "tests.test_last_resort:broken_drawing", (), "c" * 64)
    with pytest.raises(DrawingError) as caught:
        Drawing([broken], tmp_path, workers=1).files()
    assert "could not draw figures/broken.svg: the drawing worker on" in str(caught.value)
    assert_one_line_report(str(caught.value), "figures/broken.svg")
    assert capfd.readouterr().err == ""


# ---------------------------------------------------------------- the MkDocs plugins


def test_a_bug_in_the_site_plugin_is_one_error_line_and_the_site_stays(tmp_path: Path) -> None:
    """An unexpected exception in an event of `inside-the-model` was MkDocs' traceback."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("the previous site\n")
    before = tree_digest(site)
    script = patched_mkdocs({"generator.memo": raising("links_digest")})
    env = {k: v for k, v in build_env().items() if k != "ITM_TRACEBACK"}
    done = subprocess.run(
        [sys.executable, "-c", script, "build", "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode != 0, done.stderr
    assert_one_line_report(
        done.stderr,
        "Inside the Model: `mkdocs build` (on_page_markdown) on docs/",
    )
    assert tree_digest(site) == before
    assert not list(tmp_path.glob(".site.staging*"))


def test_a_bug_in_an_event_or_a_card_of_pinned_excerpts_is_one_line(tmp_path: Path) -> None:
    """The pinned-excerpts plugin's events, and its Markdown extension (which MkDocs runs
    between events), each stop the build with one line; the previous site stays."""
    from tests.pinned_helpers import build, make_toy_site
    from tests.test_pinned_excerpts import tree_digest as site_digest

    site = make_toy_site(tmp_path)
    assert build(site).returncode == 0
    before = site_digest(site.site)
    event = build(site, patches={"generator.sources.resolve": raising("resolve_excerpts")})
    card = build(site, patches={"generator.render.card": raising("excerpt_card")})
    for done in (event, card):
        assert done.returncode != 0 and site_digest(site.site) == before, done.stderr
    assert_one_line_report(event.stderr, "Pinned excerpts: `mkdocs build` (on_config) on ")
    assert_one_line_report(
        card.stderr, "Pinned excerpts: the pinned_excerpts Markdown extension on docs/index.md"
    )


def test_a_bug_in_the_extension_alone_is_one_line(tmp_path: Path, monkeypatch) -> None:
    """Python-Markdown (or Zensical) running the extension itself, without the plugin."""
    import markdown
    from mkdocs.exceptions import PluginError

    from generator.render import card
    from tests.pinned_helpers import make_toy_site
    from tests.sources_helpers import REPO

    site = make_toy_site(tmp_path)
    monkeypatch.setenv("ITM_GIT_DIRS", f"{REPO}={site.upstream}")
    monkeypatch.setenv("ITM_OFFLINE", "1")
    monkeypatch.setenv("ITM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ITM_TRACEBACK", raising=False)
    monkeypatch.setattr(
        card, "excerpt_card", lambda *a: (_ for _ in ()).throw(RuntimeError("boom"))
    )
    with pytest.raises(PluginError) as raised:
        markdown.markdown(
            "/// excerpt | toy.helper\n///\n",
            extensions=["attr_list", "pymdownx.superfences", "pinned_excerpts"],
            extension_configs={"pinned_excerpts": {"lock": str(site.lock)}},
        )
    assert "\n" not in str(raised.value)
    assert_one_line_report(str(raised.value), "the pinned_excerpts Markdown extension failed")


def test_events_let_ctrl_c_and_mkdocs_errors_through(monkeypatch) -> None:
    """KeyboardInterrupt is not a bug (MkDocs and the plugins' publishing handle it), and a
    PluginError already says what to do; an InputError that escaped becomes a PluginError."""
    from mkdocs.exceptions import PluginError
    from mkdocs.plugins import BasePlugin

    from generator.errors import InputError
    from generator.last_resort import guard_events

    monkeypatch.delenv("ITM_TRACEBACK", raising=False)

    @guard_events("Test")
    class Plugin(BasePlugin):
        def on_config(self, config):
            raise self.raises

    plugin = Plugin()
    for raised in (KeyboardInterrupt(), PluginError("told")):
        plugin.raises = raised
        with pytest.raises(type(raised)) as caught:
            plugin.on_config(None)
        assert caught.value is raised
    plugin.raises = InputError("bad", file="x.toml", fix="mend it")
    with pytest.raises(PluginError, match="^Test: x.toml: bad\n  fix: mend it$"):
        plugin.on_config(None)
