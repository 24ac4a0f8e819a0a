"""Run every benchmark on the benchmarks page and keep its output there: one command for the page's tables.

Each benchmark runs as its own process with the command the page names; its output goes to
``benchmarks/results/<name>.txt`` under a header with the command, the date and the machine, and the docs page
(docs/benchmarks.md) includes those files. A benchmark that fails (a peer such as pgx or OpenSpiel not
installed) leaves its file saying so, and the others still run. The peers are not in any extra; put them on
``PYTHONPATH`` beside the venv, e.g. ``pip install --target build/peers pgx open-spiel bitbully`` then
``PYTHONPATH=build/peers python benchmarks/report.py`` (``make bench-report``). The whole run takes about
half an hour on 2 cores; ``--only NAME ...`` reruns some.

    python benchmarks/report.py [--only env_throughput mcts_speed ...] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# name -> the arguments after ``python``, as the page quotes them (the vector env is pinned to one core, as
# pgx would otherwise spread over every core while ours uses one)
COMMANDS: dict[str, list[str]] = {
    "env_throughput": ["benchmarks/env_throughput.py", "--repeats", "5"],
    "vector_throughput": ["benchmarks/vector_throughput.py", "--seconds", "3", "--repeats", "3"],
    "mcts_speed": ["benchmarks/mcts_speed.py", "--repeats", "3"],
    "mcts_strength": ["benchmarks/mcts_strength.py"],
    "solver_times": ["benchmarks/solver_times.py"],
    "solver_latency": ["benchmarks/solver_latency.py"],
    "sb3_fps": ["benchmarks/sb3_fps.py"],
    "alphazero_speed": ["benchmarks/alphazero_speed.py"],
    "selfplay_throughput": ["benchmarks/selfplay_throughput.py"],
    "openenv_latency": ["benchmarks/openenv_latency.py", "--steps", "1000"],
    "reward_throughput": ["benchmarks/reward_throughput.py"],
    "qlearning_targets": ["benchmarks/qlearning_targets.py", "--episodes", "1000000"],
    "kaggle_cold_start": ["benchmarks/kaggle_cold_start.py", "--runs", "5", "--games", "1"],
    "pool_throughput": [
        "benchmarks/pool_throughput.py",
        "--steps",
        "2000",
        "--repeats",
        "5",
        "--episodes",
        "10000",
    ],
}
PINNED = {"vector_throughput"}


def machine() -> str:
    """One line about this machine: CPU model, cores, OS and Python."""
    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def command_line(name: str) -> list[str]:
    """The process to start for benchmark ``name`` (``taskset -c 0`` first where the page pins it)."""
    command = [sys.executable, *COMMANDS[name]]
    if name in PINNED and shutil.which("taskset"):
        command = ["taskset", "-c", "0", *command]
    return command


def run(name: str, out: Path) -> bool:
    """Run one benchmark from the repository root and write its header and output; True when it succeeded."""
    started = time.perf_counter()
    result = subprocess.run(
        command_line(name),
        cwd=HERE.parent,
        capture_output=True,
        text=True,
        check=False,
        env=os.environ.copy(),
    )
    seconds = time.perf_counter() - started
    shown = ("taskset -c 0 " if name in PINNED else "") + "python " + " ".join(COMMANDS[name])
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    lines = [f"$ {shown}", f"# {date}, {machine()}, {seconds:.0f} s", ""]
    if result.returncode == 0:
        lines.append(result.stdout.rstrip().replace(str(HERE.parent), "."))
    else:
        last = (result.stderr.strip().splitlines() or ["(no output)"])[-1]
        lines.append(
            f"not run to the end (exit code {result.returncode}): {last}".replace(str(HERE.parent), ".")
        )
    path = out / f"{name}.txt"
    partial = path.with_suffix(".txt.part")
    partial.write_text("\n".join(lines) + "\n")
    partial.replace(path)  # a half-written table never reaches the page
    return result.returncode == 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", nargs="+", choices=sorted(COMMANDS), help="run these benchmarks only")
    parser.add_argument("--out", type=Path, default=HERE / "results", help="folder for the outputs")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    failed = []
    for name in args.only or list(COMMANDS):
        print(f"{name} ...", flush=True)
        if not run(name, args.out):
            failed.append(name)
    if failed:
        print(f"not run to the end: {', '.join(failed)} (see their files in {args.out})", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
