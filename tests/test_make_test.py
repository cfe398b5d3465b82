"""`make test` runs its two halves side by side: the recipe itself, run with stand-ins for pytest,
ruff and mypy (a virtualenv of scripts), so that what it does with their exit codes, its temporary
folder and an interrupt is checked in a second, without running any test."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.site_helpers import ROOT

# A stand-in for pytest: records its pid under $FAKE_DIR (named by the half it is), then waits
# for $FAKE_DIR/<half>.go to hold an exit code, or is killed. Interrupts reach it as they would a
# shell command: an ignored SIGINT stays ignored, as in Python.
FAKE_PYTEST = """#!/bin/sh
case "$*" in *"not browser"*) half=rest ;; *) half=browser ;; esac
awk '/^SigIgn/ {print $2}' /proc/$$/status > "$FAKE_DIR/$half.ignored"
echo $$ > "$FAKE_DIR/$half.pid.tmp" && mv "$FAKE_DIR/$half.pid.tmp" "$FAKE_DIR/$half.pid"
echo "$half half ran"
while [ ! -s "$FAKE_DIR/$half.go" ]; do sleep 0.05; done
exit "$(cat "$FAKE_DIR/$half.go")"
"""


def fake_venv(tmp_path: Path) -> Path:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    for name, text in {"pytest": FAKE_PYTEST, "ruff": "#!/bin/sh\n", "mypy": "#!/bin/sh\n"}.items():
        (venv / "bin" / name).write_text(text)
        (venv / "bin" / name).chmod(0o755)
    (venv / "bin" / "python").symlink_to(sys.executable)  # restores each half's SIGINT
    (venv / "bin" / ".test-deps").touch()  # newer than pyproject.toml and constraints.txt
    return venv


def start_make(
    tmp_path: Path, *, sigint_ignored: bool = False
) -> tuple[subprocess.Popen, Path, Path]:
    """make test with the stand-ins; its output goes to tmp_path/out (a pipe would be held open
    by any half left running). `sigint_ignored`: make starts with SIGINT ignored, as it does
    when a script runs it in the background."""
    fake, temp = tmp_path / "fake", tmp_path / "temp"
    fake.mkdir()
    temp.mkdir()
    env = {**os.environ, "FAKE_DIR": str(fake), "TMPDIR": str(temp), "ITM_CHROMIUM": "/bin/true"}
    process = subprocess.Popen(
        ["make", "--no-print-directory", "test", f"VENV={fake_venv(tmp_path)}"],
        cwd=ROOT,
        env=env,
        stdout=(tmp_path / "out").open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, as a terminal's foreground job
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
        if sigint_ignored
        else None,
    )
    return process, fake, temp


def pid_of(fake: Path, half: str, process: subprocess.Popen) -> int:
    """The half's pid, once it has started (a safety deadline only against hanging forever)."""
    deadline = time.monotonic() + 60
    while not (fake / f"{half}.pid").exists():
        assert process.poll() is None, (fake.parent / "out").read_text()
        assert time.monotonic() < deadline, f"the {half} half never started"
        time.sleep(0.02)
    return int((fake / f"{half}.pid").read_text())


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# 5: pytest found no test to run (a PYTEST_ADDOPTS -k that selects tests of one half only)
@pytest.mark.parametrize(("rest", "browser"), [(0, 0), (0, 1), (1, 0), (0, 5), (5, 0), (5, 5)])
def test_both_halves_exit_codes_decide_and_the_temp_folder_goes(
    tmp_path: Path, rest: int, browser: int
) -> None:
    process, fake, temp = start_make(tmp_path)
    pid_of(fake, "rest", process), pid_of(fake, "browser", process)
    (fake / "browser.go").write_text(str(browser))
    (fake / "rest.go").write_text(str(rest))
    process.wait(timeout=60)
    output = (tmp_path / "out").read_text()
    passed = {rest, browser} <= {0, 5} and (rest, browser) != (5, 5)
    assert (process.returncode == 0) == passed, output
    assert f"the rest exited {rest}, the browser tests {browser}" in output
    assert "browser half ran" in output and "rest half ran" in output
    assert list(temp.iterdir()) == []


def test_an_interrupt_stops_both_halves_and_removes_the_temp_folder(tmp_path: Path) -> None:
    """Ctrl-C sends SIGINT to the foreground process group. A non-interactive shell starts a
    background command with SIGINT ignored, so unless the recipe passes the interrupt on, the
    browser half runs on (Chromium and all) after make has returned, and its folder stays."""
    process, fake, temp = start_make(tmp_path)
    pids = [pid_of(fake, "rest", process), pid_of(fake, "browser", process)]
    try:
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=60)
        assert process.returncode != 0
        assert [pid for pid in pids if alive(pid)] == []
        assert list(temp.iterdir()) == []
    finally:
        for pid in pids:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("sigint_ignored", [False, True])
def test_each_half_starts_with_sigint_at_its_default(tmp_path: Path, sigint_ignored: bool) -> None:
    """A shell starts background commands with SIGINT ignored and Python keeps it so, down to
    the builds the tests start: the test that interrupts a build with SIGINT then saw it finish
    (exit 0). Each half must start with SIGINT at its default, however make was started."""
    process, fake, _ = start_make(tmp_path, sigint_ignored=sigint_ignored)
    halves = ("rest", "browser")
    for half in halves:
        pid_of(fake, half, process)
    ignored = {half: int((fake / f"{half}.ignored").read_text(), 16) for half in halves}
    for half in halves:
        (fake / f"{half}.go").write_text("0")
    process.wait(timeout=60)
    assert {half: mask & (1 << (signal.SIGINT - 1)) for half, mask in ignored.items()} == {
        "rest": 0,
        "browser": 0,
    }


def test_the_readme_tells_readers_to_serve_the_site_not_to_open_it_from_the_file_system() -> None:
    """ "open site/index.html" gave directory listings, no search and a walkthrough that does not
    step (file:// pages cannot fetch): the README says to use `make serve`, and why."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert not re.search(r"\bopen `?site/index\.html", readme + makefile)  # as the way to read it
    assert "make serve" in readme and "file://" in readme and "search" in readme
