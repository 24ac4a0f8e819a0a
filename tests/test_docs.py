"""Every ```python block in the documentation site's pages (docs/**/*.md) runs as a script of its own."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from extras import EXTRAS, needs, reason

# The site is built with the docs extra (make docs); its examples are checked where the site can be built.
pytestmark = needs("docs")

DOCS = Path(__file__).resolve().parents[1] / "docs"
FENCE = re.compile(r"^```python\n(.*?)^```", flags=re.S | re.M)
BLOCKS = [
    (f"{page.relative_to(DOCS)}:{number}", block)
    for page in sorted(DOCS.rglob("*.md"))
    for number, block in enumerate(FENCE.findall(page.read_text()))
]
MISSING = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")


def test_docs_have_examples() -> None:
    # the getting-started page's first Gymnasium and PettingZoo loops at least
    pages = {name.split(":")[0] for name, _ in BLOCKS}
    assert "getting-started.md" in pages
    assert len(BLOCKS) >= 2


def test_fence_finds_every_python_block() -> None:
    # the pattern must not stop at a ``` inside a line nor swallow the next block
    text = "intro\n```python\nx = '```'\n```\n\n```bash\nls\n```\n```python\ny = 2\n```\n"
    assert FENCE.findall(text) == ["x = '```'\n", "y = 2\n"]


@pytest.mark.parametrize("name, block", BLOCKS, ids=[name for name, _ in BLOCKS])
def test_docs_example_runs(name: str, block: str, tmp_path: Path) -> None:
    # saved and run as ``python file.py`` in an empty folder, as a reader would (not exec'd in this process)
    script = tmp_path / "example.py"
    script.write_text(block)
    result = subprocess.run(
        [sys.executable, script.name], cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False
    )
    if result.returncode == 0:
        return
    missing = MISSING.search(result.stderr)  # a block that uses an extra skips on an install without it
    if missing is not None and missing.group(1).split(".")[0] in EXTRAS:
        module = missing.group(1).split(".")[0]
        pytest.skip(reason(EXTRAS[module], module))
    pytest.fail(f"docs/{name} python block failed as a script:\n{block}\n{result.stderr[-3000:]}")
