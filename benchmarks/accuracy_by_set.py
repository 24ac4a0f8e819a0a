"""Accuracy against perfect play per 6x7 test set, side by side for several agents, read as AlphaZero.jl reads
its benchmark: errors (moves whose win/draw/loss outcome is below the best) on every set, over all positions
and over the non-trivial ones (where some move loses the outcome; in the others no move can be wrong).

Every agent plays the same positions (``--sample`` drawn across the six sets with ``--seed``; all 6000 when
omitted) with the same per-position seeds; one line per agent and set, then a compact table of the
non-trivial error rates.

    python benchmarks/accuracy_by_set.py random mcts:1000 alphazero [--sample 900] [--seed 0] [--workers 2]
        [--sets 6x7-middle-medium ...]
"""

from __future__ import annotations

import argparse
import time

from connect4_agents.evaluation.accuracy import evaluate_accuracy
from connect4_agents.evaluation.test_sets import select_labelled_positions, select_test_sets


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("agents", nargs="+", help="agent specs, such as mcts:1000 alphazero:0")
    parser.add_argument(
        "--sample", type=int, default=None, help="positions drawn across the sets (default: all)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument(
        "--sets", nargs="+", default=["6x7"], help="test sets (default: 6x7, the six 6x7 sets)"
    )
    args = parser.parse_args()
    try:
        sets = select_test_sets(args.sets)
    except ValueError as error:
        parser.error(str(error))
    positions = select_labelled_positions(sets, None, args.sample, args.seed)
    hard = sum(p.nontrivial for _, p in positions)
    print(f"{len(positions)} positions of {', '.join(sets)}, {hard} of them non-trivial (seed {args.seed})")
    rows = []
    for spec in args.agents:
        began = time.perf_counter()
        report = evaluate_accuracy(spec, positions, workers=args.workers, progress=False, seed=args.seed)
        print(f"{report.table()}\n  ({time.perf_counter() - began:.0f} s)")
        rows.append((spec, report))
    short = [name.removeprefix("6x7-") for name in sets]
    print("\nerrors on the non-trivial positions, % (1 - optimal-class rate)")
    print(f"{'agent':24}" + "".join(f"{name:>15}" for name in short) + f"{'all':>8}{'all positions':>15}")
    for spec, report in rows:
        cells = [report.per_set.get(name) for name in sets]
        line = "".join(f"{100 * (1 - c.nontrivial_rate):>15.1f}" if c else f"{'-':>15}" for c in cells)
        print(
            f"{spec:24}{line}{100 * (1 - report.nontrivial_rate):>8.1f}{100 * (1 - report.optimal_class_rate):>15.1f}"
        )


if __name__ == "__main__":
    main()
