"""`itm expand OUT` refuses an OUT it cannot use before building anything: a clear error naming
the path and the fix, never a traceback, and whatever was at OUT left as it was."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.site_helpers import ROOT, build_env


def expand(out: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator.cli", "expand", *options, str(out)],
        cwd=ROOT,
        env=build_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    ("where", "problem"),
    [
        ("a-file", "not a folder"),  # OUT is a regular file
        ("a-file/tree", "cannot create the folder"),  # OUT's parent is a regular file
        ("full", "the folder is not empty"),
    ],
)
def test_expand_refuses_an_unusable_out_before_building(
    tmp_path: Path, where: str, problem: str
) -> None:
    (tmp_path / "a-file").write_text("keep me\n")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "mine.txt").write_text("mine\n")
    done = expand(tmp_path / where)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert problem in done.stderr and str(tmp_path / where) in done.stderr
    assert "fix:" in done.stderr
    assert (tmp_path / "a-file").read_text() == "keep me\n"
    assert (tmp_path / "full" / "mine.txt").read_text() == "mine\n"


def test_expand_refuses_a_site_without_the_generator(tmp_path: Path) -> None:
    """The example site quotes pinned excerpts with pinned-excerpts alone: it has no macros to
    expand, and expand told it to restore this project's sources/checkpoints.toml (review)."""
    config = ROOT / "examples" / "pinned-excerpts" / "mkdocs.yml"
    done = expand(tmp_path / "tree", "-f", str(config))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "checkpoints.toml" not in done.stderr
    assert "does not use the inside-the-model plugin" in done.stderr
    assert f"{config}, entry 'plugins'" in done.stderr
    assert not (tmp_path / "tree").exists()


@pytest.mark.parametrize(
    "text",
    ["site_name: x\nnav: [1, 2\n", "site_name: x\ntheme: {name: no-such-theme}\n"],
)
def test_expand_refuses_a_config_mkdocs_cannot_load(tmp_path: Path, text: str) -> None:
    """A YAML error printed a traceback (ConfigurationError); a bad value exited with MkDocs'
    own Abort, without naming the file."""
    config = tmp_path / "mkdocs.yml"
    config.write_text(text)
    done = expand(tmp_path / "tree", "-f", str(config))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"{config}: MkDocs cannot load it" in done.stderr and "fix:" in done.stderr
    assert not (tmp_path / "tree").exists()
