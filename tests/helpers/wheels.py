"""Building our wheel once per test run (shared by pytest-xdist workers) and running programs outside the
repository, for the tests that install the wheel in fresh venvs."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# pip's arguments for installing into a fresh venv: quiet, through the constraints (the CPU torch)
PIP_INSTALL = ("-m", "pip", "install", "--quiet", "--constraint", str(ROOT / "constraints.txt"))


def run(python: Path, *args: str, cwd: Path | None = None) -> str:
    """Run ``python *args`` (outside the repository, whose agents/ folder would shadow an installed ``agents``);
    returns its stdout, failing the test with its output when it exits non-zero."""
    done = subprocess.run(
        [str(python), *args], capture_output=True, text=True, timeout=600, cwd=cwd or Path(python).parents[2]
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done.stdout


def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built once per test run: setuptools builds in the source tree's build/ folder, so
    two builds at once (two xdist workers) would collide; the first worker builds under a lock, the others
    take its wheel."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # this run's folder either way
    out = shared / "wheel"
    with open(shared / "wheel.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = sorted(out.glob("connect4_env-*.whl"))
        if not found:
            run(Path(sys.executable), "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(ROOT))
            found = sorted(out.glob("connect4_env-*.whl"))
    (wheel,) = found
    return wheel
