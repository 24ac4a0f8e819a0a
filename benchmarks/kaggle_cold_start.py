"""A Kaggle submission's first move on a machine that never ran it, against Kaggle's own negamax's first move.

    python benchmarks/kaggle_cold_start.py                       # 5 runs of each of mcts, solver, alphazero, ntuple
    python benchmarks/kaggle_cold_start.py --runs 2 --agents mcts

Each run is a new process in the kaggle-environments venv (``.venv-kaggle``, which holds no copy of our
package, as on Kaggle) with a fresh ``TMPDIR`` (where the submission unpacks, and numba caches its compilations
beside the unpacked sources) and no ``NUMBA_CACHE_DIR``: nothing of the submission is loaded or compiled yet.
It plays ``--games`` games of kaggle-environments' ``env.run`` against Kaggle's built-in ``negamax``, the
submission moving first in the first game, with Kaggle's settings (``actTimeout`` 2 s, a 60 s overage bank),
and reads each move's time as Kaggle measures it (``duration`` in the episode's logs: the submission file's
loading counts toward its first move). Printed per agent: the median and worst first move, the slowest later
move, the moves Kaggle did not count as done (a timeout, an error), and the ratio of the median first move to
the peer's, Kaggle's built-in ``negamax`` agent's first move in the same runs. Then, an experiment (no peer):
the first warm move, the first the agent's log does not call cold (its compiled search, or its network, plays:
``warm after <n> cold moves``), as ``game.move`` of the submission's own moves, median and worst, with the
seconds of the submission's moves until then (Kaggle's ``duration``s, the file's loading included), and the
slowest of all its moves against ``actTimeout``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from connect4_agents.interop.kaggle_submission import write_kaggle_submission

ROOT = Path(__file__).resolve().parents[1]
AGENTS = ("mcts", "solver", "alphazero", "ntuple")
# plays the games and prints, as JSON, each side's move times per game and the submission's statuses; then waits
# for the submission's loading threads, so that the process ends with nothing half done
RUN = """
import json, sys, threading
from kaggle_environments import make
path, games = sys.argv[1], int(sys.argv[2])
ours, negamax, statuses, logs = [], [], [], []
for game in range(games):
    side = game % 2
    env = make("connectx")
    steps = env.run([path, "negamax"] if side == 0 else ["negamax", path])
    for index, times in ((side, ours), (1 - side, negamax)):
        times.append([entry[index]["duration"] for entry in env.logs
                      if len(entry) > index and entry[index] and "duration" in entry[index]])
    logs.append([entry[side].get("stderr", "") for entry in env.logs
                 if len(entry) > side and entry[side] and "duration" in entry[side]])
    statuses.append(steps[-1][side].status)
for thread in threading.enumerate():
    if thread.name.startswith("connect4-kaggle"):
        thread.join(600)
print(json.dumps({"ours": ours, "negamax": negamax, "statuses": statuses, "logs": logs}))
"""


def cold_run(kaggle_python: Path, path: Path, games: int) -> dict[str, list]:
    """One process that never ran ``path`` plays ``games`` games; what ``RUN`` prints."""
    environment = {key: value for key, value in os.environ.items() if key != "NUMBA_CACHE_DIR"}
    with tempfile.TemporaryDirectory(prefix="kaggle-cold-") as temp:
        done = subprocess.run(
            [str(kaggle_python), "-c", RUN, str(path), str(games)],
            capture_output=True,
            text=True,
            timeout=1800,
            cwd=temp,
            env={**environment, "TMPDIR": temp},
            check=False,
        )
    if done.returncode != 0:
        raise RuntimeError(f"the kaggle-environments run failed:\n{done.stderr[-3000:]}")
    result: dict[str, list] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def first_warm_move(run: dict[str, list]) -> tuple[int, int, float] | None:
    """``(game, move, seconds)`` of a run's first warm move (both from 1; the seconds of the submission's moves
    before it), or None when its games ended cold. Each game runs the file again (a new agent, which logs
    its own cold start): a game whose first move logs none is warm from its first move."""
    seconds = 0.0
    for game, (logs, times) in enumerate(zip(run["logs"], run["ours"]), 1):
        for move, (log, duration) in enumerate(zip(logs, times), 1):
            if "warm after" in log or (move == 1 and "cold start" not in log):
                return game, move, seconds
            seconds += duration
    return None


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5, help="cold processes an agent (default 5)")
    parser.add_argument(
        "--games", type=int, default=4, help="games a run, the first one moving first (default 4)"
    )
    parser.add_argument(
        "--agents", nargs="+", default=list(AGENTS), choices=AGENTS, help="the submissions to time"
    )
    parser.add_argument(
        "--kaggle-python",
        type=Path,
        default=ROOT / ".venv-kaggle" / "bin" / "python",
        help="a Python with kaggle-environments and without our package (default .venv-kaggle, make venvs)",
    )
    args = parser.parse_args()
    if args.runs < 1 or args.games < 1:
        parser.error("--runs and --games must be at least 1")
    if not args.kaggle_python.exists():
        parser.error(f"no {args.kaggle_python}: make venvs builds .venv-kaggle, or pass --kaggle-python")
    print(
        f"first move from a cold start in kaggle-environments' env.run (fresh TMPDIR, no numba cache; actTimeout "
        f"2 s, 60 s overage), {args.runs} runs an agent, {args.games} games a run; peer: Kaggle's negamax's "
        "first move in the same runs"
    )
    print(
        f"{'agent':<10} {'first median':>12} {'worst':>7} {'later max':>10} {'not done':>9} {'/ negamax':>10}"
    )
    warm_lines = []
    with tempfile.TemporaryDirectory(prefix="kaggle-submissions-") as folder:
        for agent in args.agents:
            path = write_kaggle_submission(agent, Path(folder) / f"{agent}.py")
            firsts, peers, later, not_done, warm = [], [], [], 0, []
            for _ in range(args.runs):
                run = cold_run(args.kaggle_python, path, args.games)
                firsts.append(run["ours"][0][0])
                later.extend(run["ours"][0][1:] + [t for times in run["ours"][1:] for t in times])
                peers.append(run["negamax"][0][0])
                not_done += sum(status != "DONE" for status in run["statuses"])
                warm.append(first_warm_move(run))
            warm_lines.append(_warm_line(agent, warm, max([*firsts, *later]), args.games))
            first, peer = statistics.median(firsts), statistics.median(peers)
            print(
                f"{agent:<10} {first:>10.2f} s {max(firsts):>5.2f} s {max(later, default=0.0):>8.2f} s "
                f"{not_done:>9} {first / peer:>9.1f}x"
            )
            print(f"{'  negamax':<10} {peer:>10.2f} s {max(peers):>5.2f} s")
    print(
        "\nfirst warm move (game.move of the submission's moves; its moves' seconds until then), median and "
        "worst of the runs; slowest move of all (actTimeout 2 s)"
    )
    print(f"{'agent':<10} {'median':>15} {'worst':>15} {'slowest move':>13}  each run")
    for line in warm_lines:
        print(line)
    return 0


def _warm_line(agent: str, warm: list[tuple[int, int, float] | None], slowest: float, games: int) -> str:
    """One agent's row of first warm moves: median and worst (a run that never warmed is the worst)."""
    never = (games + 1, 0, float("inf"))  # sorts after every warm move
    ranked = sorted((w or never) for w in warm)

    def shown(entry: tuple[int, int, float]) -> str:
        return f"not in {games} games" if entry == never else f"{entry[0]}.{entry[1]} ({entry[2]:.1f} s)"

    runs = ", ".join(shown(w or never) for w in warm)
    median = ranked[(len(ranked) - 1) // 2]  # the lower median: a move that happened
    return f"{agent:<10} {shown(median):>15} {shown(ranked[-1]):>15} {slowest:>11.2f} s  {runs}"


if __name__ == "__main__":
    sys.exit(main())
