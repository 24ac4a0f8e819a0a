"""Every ```python block in README.md runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
# Blocks that need a trained model on disk are shown, not run (tests/test_sb3.py covers SB3Agent.load).
BLOCKS = [
    b for b in re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S) if "runs/sb3/" not in b
]


def test_readme_has_examples() -> None:
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index: int) -> None:
    exec(compile(BLOCKS[index], f"README.md[python block {index}]", "exec"), {"__name__": "__readme__"})
