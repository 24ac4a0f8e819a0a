"""Every ```python block in README.md runs (blocks that load runs/sb3/model.zip get a tiny trained model)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from extras import EXTRAS, book_installed, installed, reason

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder to run the blocks in, with ``runs/sb3/model.zip`` when a block loads it."""
    path = tmp_path_factory.mktemp("readme")
    if any("runs/sb3/model.zip" in block for block in BLOCKS) and installed("sb3_contrib"):
        import torch
        from sb3_contrib import MaskablePPO

        import connect4_env

        torch.set_num_threads(1)
        venv = connect4_env.make_sb3_vec_env(4, opponent="random", agent_first=None)
        model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=64, seed=0, device="cpu")
        model.learn(128)
        (path / "runs" / "sb3").mkdir(parents=True)
        model.save(path / "runs" / "sb3" / "model.zip")
        venv.close()
    return path


def test_readme_has_examples() -> None:
    assert len(BLOCKS) >= 4


def test_importing_agents_does_not_import_torch() -> None:
    code = "import sys, connect4_agents; assert 'torch' not in sys.modules; from connect4_agents import SB3Agent; print(SB3Agent)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "SB3Agent" in out


# A block that opens a window and waits for a person's keys (gymnasium.utils.play) keeps that part under its
# ``__main__`` guard: it is run as an imported module, which checks everything but the wait.
INTERACTIVE = "wait_on_player=True"
MISSING = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index: int, workdir: Path) -> None:
    # each block is saved and run as ``python file.py``, as a reader would (not exec'd in this process): a
    # block that starts worker processes must then guard them with ``if __name__ == "__main__":``
    block = BLOCKS[index]
    script = workdir / f"readme_block_{index}.py"
    script.write_text(block)
    if INTERACTIVE in block:
        command = [sys.executable, "-c", f"import runpy; runpy.run_path({str(script)!r}, run_name='readme')"]
    else:
        command = [sys.executable, script.name]
    result = subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=600, check=False)
    if result.returncode == 0:
        return
    text = result.stderr
    missing = MISSING.search(text)  # a block that uses an extra skips on an install without it
    if missing is not None and missing.group(1).split(".")[0] in EXTRAS:
        name = missing.group(1).split(".")[0]
        pytest.skip(reason(EXTRAS[name], name))
    # the same on a core install: a 6x7 solve without the book, a video without moviepy, a model without SB3
    if "SolverBudgetExceeded" in text and not book_installed():
        pytest.skip(reason("book", "bitbully_databases"))
    if "MoviePy is not installed" in text:
        pytest.skip(reason("render", "moviepy"))
    if "runs/sb3/model.zip" in text and not installed("sb3_contrib"):
        pytest.skip(reason("train", "sb3_contrib"))
    pytest.fail(f"README.md python block {index} failed as a script:\n{block}\n{text[-3000:]}")
