"""The lock covers what pyproject.toml asks for: every requirement, on every Python we support.

``make test`` installs requirements.lock with ``--no-deps``, so a requirement missing from it
would not be installed at all (and ``pip check`` only sees what *is* installed). These tests
fail if a line is deleted, a range no longer admits the pinned version, or a pin has no hash.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import pytest
from packaging.markers import Marker, default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from conftest import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: One interpreter per supported minor version (requires-python >= 3.10).
PYTHONS = ["3.10.12", "3.11.7", "3.12.3", "3.13.1"]


@dataclass(frozen=True)
class Pin:
    name: str
    version: Version
    marker: Marker | None
    hashes: int


def _pins() -> list[Pin]:
    """The lock's entries: ``name==version ; marker`` then its ``--hash`` lines."""
    pins: list[Pin] = []
    entry: list[str] = []
    for raw in [*(REPO / "requirements.lock").read_text().splitlines(), ""]:
        line = raw.split("#", 1)[0].strip()
        if entry and (not line or not raw.startswith(" ")):
            requirement = Requirement(entry[0].rstrip(" \\"))
            (specifier,) = requirement.specifier
            assert specifier.operator == "==", entry[0]
            hashes = sum(part.startswith("--hash=sha256:") for part in entry[1:])
            pins.append(Pin(canonicalize_name(requirement.name), Version(specifier.version),
                            requirement.marker, hashes))
            entry = []
        if line:
            entry.append(line.rstrip(" \\"))
    return pins


def _requirements() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    texts = [*project["build-system"]["requires"], *project["project"]["dependencies"]]
    for extra in project["project"]["optional-dependencies"].values():
        texts += extra
    return [Requirement(text) for text in texts]


def _environment(python: str) -> dict[str, str]:
    environment = dict(default_environment())
    environment.update(python_full_version=python, python_version=python.rsplit(".", 1)[0])
    return environment


PINS = _pins()


def test_every_pin_is_exact_and_hashed() -> None:
    assert len(PINS) > 50
    assert all(pin.hashes >= 1 for pin in PINS), [pin.name for pin in PINS if not pin.hashes]


def _problems(pins: list[Pin], python: str) -> list[str]:
    """Requirements that the pins leave out, pin twice, or pin outside their range."""
    environment = _environment(python)
    problems = []
    for requirement in _requirements():
        if requirement.marker and not requirement.marker.evaluate(environment):
            continue
        name = canonicalize_name(requirement.name)
        chosen = [pin.version for pin in pins if pin.name == name
                  and (pin.marker is None or pin.marker.evaluate(environment))]
        if len(chosen) != 1:
            problems.append(f"{requirement}: {len(chosen)} pins")
        elif not requirement.specifier.contains(chosen[0], prereleases=True):
            problems.append(f"{requirement}: pinned at {chosen[0]}")
    return problems


@pytest.mark.parametrize("python", PYTHONS)
def test_every_requirement_is_locked_within_its_range(python: str) -> None:
    assert _problems(PINS, python) == []


def test_a_deleted_line_is_caught() -> None:
    without_yaml = [pin for pin in PINS if pin.name != "pyyaml"]
    assert _problems(without_yaml, PYTHONS[1]) == ["PyYAML>=6.0: 0 pins"]
