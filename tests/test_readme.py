"""Every ```python block in README.md runs as a saved script (see examples.py for the conventions); the README's
links point into the repository, its extras list, like the getting-started page's table, names every extra of
pyproject.toml, and its Tests section names the make targets CI runs."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.examples import Block, blocks, params, run_block

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = blocks(README, "README.md")


def test_readme_has_examples() -> None:
    # Gymnasium, PettingZoo, play against the AI, train a baseline, evaluate an agent
    assert len(BLOCKS) >= 5


def test_importing_agents_does_not_import_torch() -> None:
    code = "import sys, connect4_agents; assert 'torch' not in sys.modules; from connect4_agents import SB3Agent; print(SB3Agent)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "SB3Agent" in out


@pytest.mark.parametrize("block", params(BLOCKS))
def test_readme_example_runs(block: Block, tmp_path: Path, sb3_model: Callable[[], Path]) -> None:
    run_block(block, tmp_path, "README.md", sb3_model)


def test_readme_links_point_to_files_of_the_repository() -> None:
    # the README links into docs/ by relative paths (they work on any Git host and in a clone)
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)\s]*)?\)", README.read_text())
    local = [t for t in targets if "://" not in t]
    assert len(local) >= 10
    missing = [t for t in local if not (README.parent / t).exists()]
    assert missing == []


ROOT = README.parent


def _extras() -> set[str]:
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")
    return set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])


def _listed(paragraph: str) -> set[str]:
    """The backticked names of a list such as "Extras: `fast` (numba), `book` (...), ..."."""
    return set(re.findall(r"`([a-z][a-z0-9-]*)`", paragraph))


def test_the_readme_lists_every_extra() -> None:
    text = README.read_text()
    paragraph = text[text.index("\nExtras: ") :].split("\n\n")[0]
    assert _listed(paragraph) == _extras()


def test_the_getting_started_table_lists_every_extra() -> None:
    text = (ROOT / "docs" / "getting-started.md").read_text()
    table = text[text.index("| extra | what it adds |") :].split("\n\n")[0]
    rows = set(re.findall(r"^\| `([a-z][a-z0-9-]*)` \|", table, re.MULTILINE))
    assert rows == _extras()


def test_the_extras_checks_read_what_they_should() -> None:
    assert _listed("Extras: `fast` (numba), `train` (SB3, `torch`), `docs`.") == {
        "fast",
        "train",
        "torch",
        "docs",
    }
    assert {"llm", "openenv", "openspiel", "train", "dev"} <= _extras()


def test_the_tests_section_names_what_ci_runs() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    ci = set(re.findall(r"^stage make (test[\w-]*|lint|type|docs|check)\b", script, re.MULTILINE))
    for lane in re.findall(r"^lane \S+ (.*) &$", script, re.MULTILINE):  # stages run side by side
        ci |= set(re.findall(r"(?:^|[\s\"])(test[\w-]*|lint|type|docs|check)\b", lane))
    text = README.read_text()
    section = text[text.index("\n## Tests\n") :].split("\n## ")[1]
    assert set(re.findall(r"`make (test[\w-]*|lint|type|docs|check)`", section)) | {"test"} == ci
