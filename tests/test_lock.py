"""constraints.txt pins every dependency exactly, agrees with pyproject.toml's ranges, and is what
this environment was installed from (make site / make test install with --constraint)."""

from __future__ import annotations

import tomllib
from importlib import metadata

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.site_helpers import ROOT


def locked() -> dict[str, Version]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, sep, version = line.partition("==")
        assert sep and version and not any(c in version for c in "<>=!~;@ "), line
        pins[canonicalize_name(name)] = Version(version)
    return pins


def declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"].values()
    return [Requirement(r) for r in [*project["dependencies"], *(r for e in extras for r in e)]]


def test_every_declared_dependency_is_locked_inside_its_range():
    pins = locked()
    for requirement in declared():
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{name} is declared but not in constraints.txt: run make lock"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            requirement,
            pins[name],
        )


def test_this_environment_was_installed_from_the_lock():
    pins = locked()
    installed = {canonicalize_name(d.metadata["Name"]): d.version for d in metadata.distributions()}
    differing = {
        name: (str(version), installed[name])
        for name, version in pins.items()
        if name in installed and Version(installed[name]).public != str(version)
    }
    assert differing == {}, "reinstall with `make` (the venv predates constraints.txt)"
