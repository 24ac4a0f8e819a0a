"""Running the Markdown pages' ```python blocks as saved scripts (README.md and the docs site share this).

A block is saved as ``example.py`` in a working folder and run as ``python example.py``, as a reader would run
it (not exec'd in the test process): a block that starts worker processes must guard them with
``if __name__ == "__main__":``. A line ``<!-- test: slow -->`` just above a block's fence marks it slow (it
then runs in ``make test-slow``); ``<!-- test: rllib -->`` marks a block that needs RLlib, which runs in
``make test-rllib`` (in ``.venv-rllib``, since ``ray[rllib]`` pins its own gymnasium). A block that waits for a person's keys (``gymnasium.utils.play`` with
``wait_on_player=True``) keeps that part under its ``__main__`` guard and is run as an imported module.
Blocks that load ``runs/sb3/model.zip`` find a tiny trained model there (`sb3_model_folder`, trained once
per test process by conftest.py's ``sb3_model`` fixture).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers.extras import EXTRAS, MODULES, book_installed, installed, reason

FENCE = re.compile(r"^(?:(<!-- test: (\w+) -->)\n)?```python\n(.*?)^```", flags=re.S | re.M)
INTERACTIVE = "wait_on_player=True"
SB3_MODEL = "runs/sb3/model.zip"
MISSING = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")
MISSING_EXTRA = re.compile(r"MissingExtraError: .*?the '(\w+)' extra")
MARKS = ("slow", "rllib")


@dataclass(frozen=True)
class Block:
    """One ```python block: where it is, its code, and its mark (``"slow"`` or ``""``)."""

    name: str
    code: str
    mark: str = ""


def blocks(page: Path, name: str) -> list[Block]:
    """The ```python blocks of ``page``, named ``name:0``, ``name:1``, ...

    Raises:
        ValueError: a ``<!-- test: ... -->`` line names an unknown mark.
    """
    found = []
    for number, match in enumerate(FENCE.finditer(page.read_text())):
        mark = match.group(2) or ""
        if mark and mark not in MARKS:
            raise ValueError(f"{name}: unknown test mark {mark!r} (known: {MARKS})")
        found.append(Block(f"{name}:{number}", match.group(3), mark))
    return found


def params(found: list[Block], others: tuple[pytest.MarkDecorator, ...] = ()) -> list[object]:
    """``pytest.param`` per block, marked ``slow`` or ``rllib`` as its page says; ``others`` mark the rest."""
    marks = {"slow": (pytest.mark.slow, *others), "rllib": (pytest.mark.rllib,), "": others}
    return [pytest.param(block, id=block.name, marks=marks[block.mark]) for block in found]


def sb3_model_folder(path: Path) -> Path:
    """Write a tiny MaskablePPO model to ``path/runs/sb3/model.zip`` (a few seconds) and return ``path``."""
    import torch
    from sb3_contrib import MaskablePPO

    import connect4_env

    torch.set_num_threads(1)
    venv = connect4_env.make_sb3_vec_env(4, opponent="random", agent_first=None)
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=64, seed=0, device="cpu")
    model.learn(128)
    (path / "runs" / "sb3").mkdir(parents=True, exist_ok=True)
    model.save(path / "runs" / "sb3" / "model.zip")
    venv.close()
    return path


def run_block(block: Block, workdir: Path, source: str, sb3_model: Callable[[], Path]) -> None:
    """Save ``block`` in ``workdir`` and run it; fail with its stderr, or skip when it needs a missing extra.

    ``sb3_model()`` gives the tiny model (trained once) that is copied to ``runs/sb3/model.zip`` for a block
    that names that file.
    """
    if block.mark == "rllib" and not (installed("ray") and installed("tree")):  # dm-tree: RLlib's, not Ray's
        pytest.skip("needs RLlib, which runs in its own venv: make test-rllib")
    if SB3_MODEL in block.code and installed("sb3_contrib") and not (workdir / SB3_MODEL).exists():
        (workdir / SB3_MODEL).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sb3_model(), workdir / SB3_MODEL)
    script = workdir / "example.py"
    script.write_text(block.code)
    if INTERACTIVE in block.code:
        command = [sys.executable, "-c", f"import runpy; runpy.run_path({str(script)!r}, run_name='example')"]
    else:
        command = [sys.executable, script.name]
    result = subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=900, check=False)
    if result.returncode == 0:
        return
    text = result.stderr
    missing = MISSING.search(text)  # a block that uses an extra skips on an install without it
    if missing is not None and missing.group(1).split(".")[0] in EXTRAS:
        module = missing.group(1).split(".")[0]
        pytest.skip(reason(EXTRAS[module], module))
    # our own error for a missing extra (the solver's opening without the book, ...) names the extra
    extra = MISSING_EXTRA.search(text)
    if extra is not None and extra.group(1) in MODULES and not all(map(installed, MODULES[extra.group(1)])):
        pytest.skip(reason(extra.group(1)))
    # the same on a core install: a 6x7 solve without the book, a video without moviepy, a model without SB3
    if "SolverBudgetExceeded" in text and not book_installed():
        pytest.skip(reason("book", "bitbully_databases"))
    if "MoviePy is not installed" in text:
        pytest.skip(reason("render", "moviepy"))
    if SB3_MODEL in text and not installed("sb3_contrib"):
        pytest.skip(reason("train", "sb3_contrib"))
    pytest.fail(f"{source} block {block.name} failed as a script:\n{block.code}\n{text[-3000:]}")
