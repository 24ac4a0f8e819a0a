"""A declared floor is a tested floor: ``make test-lowest`` installs exactly the oldest releases that
``pyproject.toml`` allows of the core's libraries, and ``make test-gymnasium-versions`` every Gymnasium minor
between that floor and the one installed here."""

from __future__ import annotations

import re
from pathlib import Path

import gymnasium
import tomllib

ROOT = Path(__file__).resolve().parents[1]


def _make_variable(name: str) -> list[str]:
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    match = re.search(rf"^{name} := (.*)$", text, re.MULTILINE)
    assert match, f"the Makefile sets no {name}"
    return match[1].split()


def _release(version: str) -> tuple[int, ...]:
    parts = tuple(int(part) for part in version.split("."))
    return parts + (0,) * (3 - len(parts))


def _core_floors() -> dict[str, tuple[int, ...]]:
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    floors = {}
    for requirement in dependencies:
        match = re.fullmatch(r"([a-z]+)>=([\d.]+)", requirement)
        assert match, f"{requirement!r}: a core dependency is declared as name>=floor"
        floors[match[1]] = _release(match[2])
    return floors


def test_the_lowest_venv_pins_each_core_floor() -> None:
    pins = {}
    for pin in _make_variable("LOWEST_PINS"):
        name, version = pin.split("==")
        pins[name] = _release(version)
    assert pins == _core_floors()


def test_each_gymnasium_minor_from_the_floor_to_the_installed_one_is_tested() -> None:
    tested = {_release(version)[:2] for version in _make_variable("GYMNASIUM_VERSIONS")}
    floor = _core_floors()["gymnasium"]
    installed = _release(re.match(r"[\d.]+", gymnasium.__version__)[0].rstrip("."))
    assert floor[0] == installed[0] == 1, "a new Gymnasium major: extend GYMNASIUM_VERSIONS by hand"
    between = {(1, minor) for minor in range(floor[1], installed[1])}
    assert between <= tested | {floor[:2]}
