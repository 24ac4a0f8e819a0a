"""Accuracy against perfect play: each agent's move in every position of the test sets, scored by the solver.

    python scripts/evaluate.py random mcts:1000                         # the six 6x7 sets
    python scripts/evaluate.py mcts:0.1s --test-sets 6x7-begin-hard 6x7-end-easy --json acc.json --plot acc.png
    python scripts/evaluate.py qlearning:runs/qlearning/qtable.npz --test-sets all   # the sets it can play
    python scripts/evaluate.py mcts:10000 --backend ray                 # on a local Ray (or --address)
    python scripts/evaluate.py mcts:1000 --plies 10-32 --sample 500     # 500 positions of 10 to 32 stones

Prints per set the share of moves that keep the best win/draw/loss outcome ("optimal class") and of moves with
the best score ("exact"), with 95 % Wilson intervals, and the mean regret in solver score points. The same
--seed gives the same moves on any backend and number of workers (time budgets, mcts:<seconds>s, excepted).
"""

from __future__ import annotations

import argparse
import sys

from connect4_agents._support.cli import check_output_file, positive_int, run_cli
from connect4_agents._support.files import atomic_write_json
from connect4_agents.evaluation.accuracy import evaluate_accuracy, playable_sets, plot_reports
from connect4_agents.evaluation.backends import BACKENDS
from connect4_agents.evaluation.test_sets import select_positions, select_test_sets, test_set_names


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("agents", nargs="+", help="agent specs: random, mcts:1000, mcts:0.1s, solver, ...")
    parser.add_argument(
        "--test-sets",
        nargs="+",
        default=["6x7"],
        metavar="NAME",
        help="'all', '6x7' (the six 6x7 sets, default) or set names: " + ", ".join(test_set_names()),
    )
    parser.add_argument(
        "--plies",
        metavar="MIN-MAX",
        type=ply_range,
        default=None,
        help="only positions with MIN to MAX stones played (e.g. 10-32)",
    )
    parser.add_argument(
        "--sample", type=positive_int, default=None, help="N of those positions, drawn with --seed"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backend", choices=BACKENDS, default="process")
    parser.add_argument("--workers", type=positive_int, default=None, help="worker processes (default: CPUs)")
    parser.add_argument("--address", default=None, help="a Ray cluster's address (--backend ray)")
    parser.add_argument("--json", metavar="PATH", default=None, help="write the reports as JSON here")
    parser.add_argument("--plot", metavar="PATH", default=None, help="bars per set and agent")
    parser.add_argument("--no-progress", action="store_true")
    return parser


def ply_range(text: str) -> tuple[int, int]:
    """An argparse type: ``MIN-MAX`` plies, 0 <= MIN <= MAX."""
    low, dash, high = text.partition("-")
    if not (dash and low.isdigit() and high.isdigit() and int(low) <= int(high)):
        raise argparse.ArgumentTypeError(f"{text!r} is not a range of plies such as 10-32")
    return int(low), int(high)


def evaluate(args: argparse.Namespace) -> int:
    out = check_output_file(args.json) if args.json else None
    plot = check_output_file(args.plot) if args.plot else None
    sets = select_test_sets(args.test_sets)
    plans = {spec: playable_sets(spec, sets) for spec in args.agents}
    reports = []
    for spec, playable in plans.items():
        chosen = (
            playable
            if args.plies is None and args.sample is None
            else select_positions(playable, args.plies, args.sample, args.seed)
        )
        if not chosen:
            raise ValueError(f"no position of {playable} has {args.plies[0]} to {args.plies[1]} stones")
        report = evaluate_accuracy(
            spec,
            chosen,
            backend=args.backend,
            workers=args.workers,
            address=args.address,
            seed=args.seed,
            progress=not args.no_progress,
        )
        reports.append(report)
        print(report.table(), flush=True)
    if out is not None:
        atomic_write_json(out, {"seed": args.seed, "reports": [r.to_dict() for r in reports]})
    if plot is not None:
        plot_reports(reports, str(plot))
        print(f"plot: {plot}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_cli(evaluate, build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
