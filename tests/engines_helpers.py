"""Site engines besides MkDocs for the tests that build with them (tests/test_expand.py, the
pinned-excerpts example site), each installed once per test session in a venv of its own.

    exe = zensical()    # the `zensical` command; pytest.skip only when the registry is unreachable

Not the project's venv: Zensical's dependencies (Markdown, pymdown-extensions, Pygments, Jinja2)
would move versions the site's bytes depend on. They are installed under constraints.txt, so the
packages both engines use are the site's, and a comparison of the two builds compares engines,
not Markdown releases. The venv lives in the system's temporary folder under a name that says
what it holds (Zensical's version, Python's, constraints.txt's digest): it is made under a lock
(`make test` runs two pytest processes side by side) and marked complete last, so a later session
reuses it and one cut off halfway is made anew. (tests/engine_helpers.py is the model engine's.)
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ZENSICAL = "zensical==0.0.73"  # the newest release that installs from the registries here
INSTALL_DEADLINE = 600  # seconds for the venv and pip install (about 45 s here)
# What pip says when it cannot reach the registry (any version exists for a reachable one).
UNREACHABLE = (
    "from versions: none",
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "ConnectTimeoutError",
)


def zensical() -> Path:
    """The `zensical` command of its own venv, made on the first call of the session."""
    exe, skip_reason = _installed(ZENSICAL, "zensical")
    if exe is None:
        pytest.skip(skip_reason)
    return exe


@functools.cache
def _installed(requirement: str, command: str) -> tuple[Path | None, str]:
    """(the command, "") from a venv holding `requirement`, or (None, why the registry could not
    be reached); an install that fails for another reason fails the test."""
    constraints = ROOT / "constraints.txt"
    digest = hashlib.sha256(
        f"{requirement}\n{sys.version}\n".encode() + constraints.read_bytes()
    ).hexdigest()[:16]
    venv = (
        Path(tempfile.gettempdir()) / "itm-engines" / f"{requirement.replace('==', '-')}-{digest}"
    )
    done = venv / "installed"  # written last: a venv without it was cut off
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{venv}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            shutil.rmtree(venv, ignore_errors=True)
            why = _install(venv, requirement, constraints)
            if why:
                return None, why
            done.write_text(requirement + "\n")
    return venv / "bin" / command, ""


def _install(venv: Path, requirement: str, constraints: Path) -> str:
    """Make the venv and install into it; "" when done, else why the registry is unreachable."""
    # The venv without pip of its own (ensurepip takes seconds): this pip installs into it.
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install"]
    try:
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", str(venv)],
            check=True,
            capture_output=True,
            timeout=INSTALL_DEADLINE,
        )
        done = subprocess.run(
            [
                *pip,
                "--quiet",
                "--retries",
                "1",
                "--timeout",
                "60",
                "-c",
                str(constraints),
                requirement,
            ],
            capture_output=True,
            text=True,
            timeout=INSTALL_DEADLINE,
        )
    except subprocess.TimeoutExpired:
        return f"the package registry did not deliver {requirement} in {INSTALL_DEADLINE} s"
    if done.returncode == 0:
        return ""
    said = done.stdout + done.stderr
    if any(sign in said for sign in UNREACHABLE):
        return f"the package registry is unreachable: pip cannot install {requirement}"
    raise AssertionError(f"pip install {requirement} failed:\n{said[-3000:]}")
