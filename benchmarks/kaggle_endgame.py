"""How far from the end the Kaggle agents' endgame solver takes over: of the shipped 6x7 test-set positions,
the share it proves within its node budget (a fifth of the move's time), by the number of empty cells.

    python benchmarks/kaggle_endgame.py                  # Kaggle's 2 s a move less the 0.4 s margin
    python benchmarks/kaggle_endgame.py --move-seconds 0.2 --sample 10

A position it proves, the solver plays (the quickest win, else a draw, else the slowest loss); the rest the
policy plays. Each position is searched with a fresh transposition table, as on a game's first solved move (in
a game the table is kept, so later moves are cheaper). Needs the fast extra (numba), as Kaggle's image has it.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

import numpy as np

from connect4_agents.evaluation.test_sets import load_test_set, test_set_names
from connect4_agents.interop import kaggle
from connect4_agents.interop.kaggle_endgame import endgame_node_budget
from connect4_agents.solver import SolverAgent
from connect4_agents.solver.agent import SolverBudgetExceeded
from connect4_env.core import Board


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--move-seconds", type=float, default=2.0 - kaggle.DEFAULT_MARGIN)
    parser.add_argument("--sample", type=int, default=25, help="positions per row (default 25)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    budget = endgame_node_budget(args.move_seconds)
    by_empty: dict[int, list[tuple[int, ...]]] = defaultdict(list)
    for name in test_set_names():
        if name.startswith("6x7"):
            for position in load_test_set(name):
                by_empty[(42 - len(position.moves)) // 4 * 4].append(position.moves)
    rng = np.random.default_rng(args.seed)
    print(f"node budget {budget:,} ({args.move_seconds} s a move, a fifth of it; fresh table each position)")
    print("empty cells | proved | median ms | max ms")
    for low in sorted(by_empty, reverse=True):
        pool = by_empty[low]
        picked = [pool[int(i)] for i in rng.choice(len(pool), min(args.sample, len(pool)), replace=False)]
        proved, seconds = 0, []
        for moves in picked:
            board = Board.from_moves(moves)
            solver = SolverAgent(board.rules, book=False, table_size=1 << 20)
            solver.node_budget = budget
            start = time.perf_counter()
            try:
                solver.best_columns(board, every=False)
                proved += 1
            except SolverBudgetExceeded:
                pass
            seconds.append(time.perf_counter() - start)
        print(
            f"{low:>5}-{low + 3:<5} | {proved:>3}/{len(picked):<3} | {1000 * statistics.median(seconds):9.0f} | "
            f"{1000 * max(seconds):6.0f}"
        )


if __name__ == "__main__":
    main()
