"""Every ```python block in the documentation site's pages (docs/**/*.md) runs as a saved script.

The conventions (slow marks, interactive blocks, the SB3 model some blocks load) are in examples.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.examples import FENCE, Block, blocks, params, run_block
from helpers.extras import needs

# The site is built with the docs extra (make docs); its examples are checked where the site can be built,
# except RLlib's, which run in .venv-rllib (make test-rllib) where the docs extra is not installed.
DOCS_EXTRA = needs("docs")

DOCS = Path(__file__).resolve().parents[1] / "docs"
BLOCKS = [block for page in sorted(DOCS.rglob("*.md")) for block in blocks(page, str(page.relative_to(DOCS)))]


def test_docs_have_examples() -> None:
    # the getting-started page's first Gymnasium and PettingZoo loops at least
    pages = {block.name.split(":")[0] for block in BLOCKS}
    assert "getting-started.md" in pages
    assert len(BLOCKS) >= 2


def test_fence_finds_every_python_block() -> None:
    # the pattern must not stop at a ``` inside a line nor swallow the next block, and reads a block's mark
    text = (
        "intro\n```python\nx = '```'\n```\n\n```bash\nls\n```\n<!-- test: slow -->\n```python\ny = 2\n```\n"
    )
    assert [(m.group(2), m.group(3)) for m in FENCE.finditer(text)] == [
        (None, "x = '```'\n"),
        ("slow", "y = 2\n"),
    ]


def test_marks_reach_pytest(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```python\na = 1\n```\n<!-- test: slow -->\n```python\nb = 2\n```\n<!-- test: rllib -->\n```python\nc = 3\n```\n"
    )
    found = params(blocks(page, "page.md"), (DOCS_EXTRA,))
    names = [[mark.name for mark in param.marks] for param in found]  # type: ignore[attr-defined]
    assert names == [
        ["skipif"],
        ["slow", "skipif"],
        ["rllib"],
    ]  # the docs extra's skipif, and no docs need for RLlib


def test_unknown_mark_is_an_error(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("<!-- test: fast -->\n```python\nx = 1\n```\n")
    with pytest.raises(ValueError, match="fast"):
        blocks(page, "page.md")


@pytest.mark.parametrize("block", params(BLOCKS, (DOCS_EXTRA,)))
def test_docs_example_runs(block: Block, tmp_path: Path, sb3_model: Callable[[], Path]) -> None:
    run_block(block, tmp_path, "docs", sb3_model)
