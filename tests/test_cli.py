"""`itm` itself: the commands each module registers, and a light install (the pinned excerpts
only: MkDocs and pymdown-extensions) that lacks the GPT-2 site's packages."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

import pytest

from generator import cli
from tests.site_helpers import ROOT

# Run `itm` as a light install would: the site extra's packages cannot be imported.
LIGHT_ITM = """
import sys
for name in ("numpy", "matplotlib", "PIL", "regex", "material", "py_mini_racer"):
    sys.modules[name] = None  # `import numpy` raises ModuleNotFoundError
from generator.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


def light_itm(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", LIGHT_ITM, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("module", sorted(cli.COMMAND_MODULES))
def test_each_module_registers_the_commands_the_cli_lists(module: str) -> None:
    """The table names each module's commands (a light install lists them without importing)."""
    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    importlib.import_module(module).register(subparsers)
    assert tuple(subparsers.choices) == cli.COMMAND_MODULES[module]


def test_a_command_whose_packages_are_missing_says_which_extra_to_install() -> None:
    """`itm` imported every command module on start, numpy with `forward`'s: in a light install
    every command, `itm pin` too, ended in a ModuleNotFoundError traceback."""
    listed = light_itm("--help")
    assert listed.returncode == 0, listed.stderr
    assert "forward" in listed.stdout and "pip install 'inside-the-model[site]'" in listed.stdout
    for command in (["forward", "--prompt", "hello"], ["check-heads", "site"]):
        refused = light_itm(*command)
        assert refused.returncode == 2, refused.stderr
        assert "Traceback" not in refused.stderr
        assert f"entry 'itm {command[0]}': needs numpy, which this install lacks" in refused.stderr
        assert "fix: pip install 'inside-the-model[site]'" in refused.stderr
    pin = light_itm("pin", "--help")  # the excerpt commands are all there
    assert pin.returncode == 0 and "--symbol" in pin.stdout, pin.stderr


def test_a_package_imported_as_a_command_runs_is_named_too(tmp_path) -> None:
    """`itm expand` imports Material's plugins only when it runs."""
    refused = light_itm("expand", str(tmp_path / "tree"))
    assert refused.returncode == 2, refused.stderr
    assert "Traceback" not in refused.stderr
    assert "entry 'itm expand': needs material" in refused.stderr
    assert "fix: pip install 'inside-the-model[site]'" in refused.stderr
