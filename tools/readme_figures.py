"""Measure the README's figures of default runs: each command runs as a user types it, with its defaults.

    .venv/bin/python tools/readme_figures.py                    # the short runs: make run's demo, connect4 train-sb3
    .venv/bin/python tools/readme_figures.py --only train-sb3
    .venv/bin/python tools/readme_figures.py --only league      # 60 CPU-minutes of training, then the test sets

Each command runs in a new temporary folder (its outputs land there, not in the clone), one at a time. CPU time is
the command's process and every process it waited for (``getrusage`` of this script's children), so a run's
worker processes count too; wall time depends on what else the machine runs, CPU time far less. For each figure
the script prints the command, what it measured and the README's words for it, to be copied into the README by
hand (``README`` below is the sentence each figure belongs to).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent  # the venv's bin folder: its python and its connect4


@dataclass
class Run:
    """One finished command: its output, its CPU-seconds (its process and those it waited for) and wall time."""

    command: list[str]
    folder: Path
    stdout: str
    cpu_seconds: float
    wall_seconds: float


def run(command: list[str], folder: Path, env: dict[str, str] | None = None) -> Run:
    """Run ``command`` (``connect4 ...``, or ``python`` and the bundled match script, the venv's, from the clone) in ``folder``
    and measure it; exits with the command's own error if it fails."""
    print(f"$ {' '.join(command)}", flush=True)
    argv = [
        str(BIN / command[0]),
        *(str(ROOT / word) if word.startswith("scripts/") else word for word in command[1:]),
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        argv, cwd=folder, env={**os.environ, **(env or {})}, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{command[0]} failed with exit code {done.returncode}:\n{done.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Run(command, folder, done.stdout, cpu, wall)


def final_evaluations(eval_csv: Path) -> dict[str, dict[str, str]]:
    """The last row of ``eval.csv`` (``connect4 train-sb3``'s evaluations) for each opponent."""
    with eval_csv.open(newline="") as file:
        return {row["opponent"]: row for row in csv.DictReader(file)}


def score(row: dict[str, str]) -> float:
    """The learner's score in an evaluation row: a win 1, a draw 1/2."""
    return (int(row["wins"]) + int(row["draws"]) / 2) / int(row["games"])


def wdl(row: dict[str, str]) -> str:
    """``99 W / 0 D / 1 L of 100``."""
    return f"{row['wins']} W / {row['draws']} D / {row['losses']} L of {row['games']}"


def nontrivial_errors(evaluate_json: Path) -> float:
    """The share of the non-trivial test-set positions whose move loses the best outcome (``connect4 evaluate
    --json``'s first report, over all its sets)."""
    report = json.loads(evaluate_json.read_text())["reports"][0]
    return 1.0 - float(report["nontrivial_optimal_class_rate"])


def demo(folder: Path) -> list[str]:
    """``make run``: the bundled match, once with an empty numba cache (it compiles the kernels), then again."""
    command = ["python", "scripts/mcts_vs_qlearning.py", "demo"]
    cache = {"NUMBA_CACHE_DIR": str(folder / "numba-cache")}
    cold = run(command, folder, cache)
    warm = run(command, folder, cache)
    return [
        f"first run (empty numba cache): {cold.cpu_seconds:.1f} CPU-seconds ({cold.wall_seconds:.1f} s wall)",
        f"cache filled: {warm.cpu_seconds:.1f} CPU-seconds ({warm.wall_seconds:.1f} s wall)",
        f"README: About {warm.cpu_seconds:.0f} CPU-seconds with numba's kernel cache filled, "
        f"{cold.cpu_seconds:.0f} on a first run, which compiles the kernels.",
    ]


def train_sb3(folder: Path) -> list[str]:
    """``connect4 train-sb3``: MaskablePPO against random play, 300,000 steps, evaluated against random and
    ``mcts:100``."""
    done = run(["connect4", "train-sb3"], folder)
    rows = final_evaluations(folder / "runs" / "sb3" / "eval.csv")
    steps = int(rows["random"]["timesteps"])
    lines = [f"{steps:,} learner steps, {done.cpu_seconds:.1f} CPU-seconds ({done.wall_seconds:.0f} s wall)"]
    lines += [f"against {opponent}: {wdl(row)}, score {score(row):.2f}" for opponent, row in rows.items()]
    lines.append(
        f"README: take about {done.cpu_seconds:.0f} CPU-seconds and win {rows['random']['wins']} games of "
        f"{rows['random']['games']} against random, {rows['mcts:100']['wins']} against `mcts:100`"
    )
    return lines


def league(folder: Path) -> list[str]:
    """``connect4 train-sb3 --league`` (60 CPU-minutes), then its model on the six 6x7 test sets."""
    done = run(["connect4", "train-sb3", "--league"], folder)
    rows = final_evaluations(folder / "runs" / "sb3" / "eval.csv")
    steps = int(rows["mcts:100"]["timesteps"])
    run(
        ["connect4", "evaluate", "sb3:runs/sb3/model.zip", "--workers", "1", "--json", "evaluate.json"],
        folder,
    )
    errors = nontrivial_errors(folder / "evaluate.json")
    return [
        f"{steps:,} learner steps, {done.cpu_seconds / 60:.1f} CPU-minutes of training and evaluation",
        f"against mcts:100: {wdl(rows['mcts:100'])}; against random: {wdl(rows['random'])}",
        f"non-trivial errors on the six 6x7 test sets: {errors:.1%}",
        f"README: it beat `mcts:100` {score(rows['mcts:100']):.3g} over {rows['mcts:100']['games']} games "
        f"(alternating seats), while its moves still lose the best outcome in {errors:.0%} of the test sets' "
        "positions where the choice matters.",
    ]


FIGURES: dict[str, tuple[str, Callable[[Path], list[str]]]] = {
    "demo": ("About 4 CPU-seconds with numba's kernel cache filled", demo),
    "train-sb3": ("`connect4 train-sb3` is the full run", train_sb3),
    "league": ("`connect4 train-sb3 --league` trains MaskablePPO", league),
}
"""Each figure: the words of the README sentence that quotes it (tests/test_readme.py checks they are there),
and the function that measures it."""
SHORT = ("demo", "train-sb3")
"""The figures measured by default: each takes under a few CPU-minutes (the league trains for 60)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", nargs="+", choices=list(FIGURES), help="the figures to measure")
    args = parser.parse_args(argv)
    print(
        f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    for name in args.only or SHORT:
        with tempfile.TemporaryDirectory(prefix=f"readme-{name}-") as folder:
            lines = FIGURES[name][1](Path(folder))
        print(f"{name}:", *(f"  {line}" for line in lines), sep="\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
