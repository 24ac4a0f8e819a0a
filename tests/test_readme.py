"""Every ```python block in README.md runs as a saved script (see examples.py for the conventions)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from examples import Block, blocks, params, run_block

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
