"""recipes/selfplay_ppo.py, the single-file self-play PPO recipe, runs as a user runs it and learns something."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_the_selfplay_recipe_runs_adds_snapshots_and_beats_random_play():
    result = subprocess.run(
        [
            sys.executable,
            "recipes/selfplay_ppo.py",
            "--total-steps",
            "16384",
            "--num-envs",
            "32",
            "--num-steps",
            "64",
            "--snapshot-every",
            "2",
            "--eval-games",
            "40",
        ],  # fmt: skip
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    progress = [line for line in result.stdout.splitlines() if "recent score by member" in line]
    assert len(progress) == 4 and "self@4096" in progress[0] and "self@16384" in progress[-1]
    score = float(re.search(r"score vs random: ([0-9.]+)", result.stdout).group(1))
    assert score >= 0.6, result.stdout  # 8 updates already beat random play more often than not
    assert re.search(r"score vs mcts:100: [0-9.]+", result.stdout)
