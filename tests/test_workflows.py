"""The GitHub workflows, read as data: actions pinned by commit, one build deployed after the
browser tests ran against it, caches keyed on what produces them, the weekly pin check."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from tests.site_helpers import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"


def load(name: str) -> dict:
    return yaml.load((WORKFLOWS / name).read_text(), Loader=yaml.BaseLoader)  # "on" stays a key


def steps(workflow: dict) -> list[dict]:
    return [step for job in workflow["jobs"].values() for step in job.get("steps", [])]


def test_every_action_is_pinned_by_a_full_commit_sha_with_its_tag():
    for path in sorted(WORKFLOWS.glob("*.yml")):
        for line in path.read_text().splitlines():
            if "uses:" in line:
                assert re.search(r"uses: [\w.-]+/[\w.-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$", line), (
                    f"{path.name}: {line.strip()}"
                )


def test_site_builds_once_and_deploys_what_the_browser_tests_saw():
    site = load("site.yml")
    jobs = site["jobs"]
    assert site["concurrency"]["group"]
    assert jobs["browser"]["needs"] == "build"
    assert set(jobs["deploy"]["needs"]) == {"test", "build", "browser"}
    build_steps = [s.get("uses", "") for s in jobs["build"]["steps"]]
    assert sum("upload-pages-artifact" in u for u in build_steps) == 1
    assert not any("upload-pages-artifact" in s.get("uses", "") for s in jobs["browser"]["steps"])
    browser = jobs["browser"]["steps"]
    assert any("download-artifact" in s.get("uses", "") for s in browser)
    env = next(s["env"] for s in browser if "ITM_TEST_SITE" in s.get("env", {}))
    assert env["ITM_TEST_SITE_URL"].startswith("${{ needs.build.outputs.base_url }}")
    build = next(s for s in jobs["build"]["steps"] if "make site" in s.get("run", ""))
    assert build["env"]["ITM_DOWNLOAD_WEIGHTS"] == "1"
    assert any("itm check-heads site" in s.get("run", "") for s in jobs["build"]["steps"])


def test_caches_are_keyed_on_what_produces_them():
    for name in ("site.yml",):
        for step in steps(load(name)):
            if "actions/cache@" not in step.get("uses", ""):
                continue
            key, path = step["with"]["key"], step["with"]["path"]
            if path == ".cache":
                for producer in ("sources/**", "generator/**", "docs/**", "constraints.txt"):
                    assert producer in key, (key, producer)
            else:  # GPT-2's weights: the pinned revision decides the files
                assert "steps.pin.outputs.revision" in key, key
        python = [s for s in steps(load(name)) if "setup-python" in s.get("uses", "")]
        assert python and all(s["with"]["cache"] == "pip" for s in python)
        assert all("constraints.txt" in s["with"]["cache-dependency-path"] for s in python)


def test_pins_are_verified_online_every_week():
    weekly = load("verify-pins.yml")
    assert weekly["on"]["schedule"][0]["cron"].split()[-1] in ("1", "MON", "mon")
    runs = " ".join(s.get("run", "") for s in steps(weekly))
    assert "itm verify --online" in runs and "gh issue create" in runs
    assert "itm verify --online --raise-evidence" in runs and "gh pr create" in runs
    # files Software Heritage has not archived (as `itm verify --online` prints them) are reported
    from generator.sources.commands import verify

    assert "NOT ARCHIVED" in runs and "NOT ARCHIVED" in Path(verify.__file__).read_text()


RETRAINED = ["tests/test_forward_standin.py"]  # where the retrain tests live


def test_what_make_test_skips_runs_every_week():
    """The tests marked retrain, which `make test` skips unless ITM_RETRAIN=1, run in the weekly
    workflow with it set, and select tests that exist."""
    import subprocess
    import sys

    runs = " ".join(s.get("run", "") for s in steps(load("verify-pins.yml")))
    assert "ITM_RETRAIN=1" in runs and "-m retrain" in runs and " ".join(RETRAINED) in runs
    listed = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "retrain", *RETRAINED],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parent.parent,
    )
    assert "retrained" in listed.stdout, listed.stdout[-2000:]
