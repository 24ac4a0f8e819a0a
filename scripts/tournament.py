"""A round-robin tournament between agents: every pair plays N games, alternating who starts.

    python scripts/tournament.py random mcts:100 solver --games 20
    python scripts/tournament.py sb3:runs/sb3/model.zip random mcts:100 --games 200 --out results.json

Agent specs: random, solver, mcts:<playouts>, qlearning:<table.npz>, sb3:<model.zip>. Prints each pairing's W/D/L
(from the first-named agent's side) with a 95 % interval on its score, and a table of total points. Ctrl-C
stops early and still writes the finished pairings to --out.
"""

from __future__ import annotations

import argparse
import sys

from agents import agent_from_spec
from agents.arena import TournamentResult, round_robin
from agents.cli import check_output_file, positive_int, run_cli
from agents.files import atomic_write_json
from connect4_env import Rules


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("agents", nargs="+", help="two or more agent specs")
    parser.add_argument("--games", type=positive_int, default=20, help="games per pairing (default 20)")
    parser.add_argument("--rows", type=int, default=6)
    parser.add_argument("--columns", type=int, default=7)
    parser.add_argument("--win-length", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="write the results as JSON here")
    return parser


def tournament(args: argparse.Namespace) -> int:
    out = check_output_file(args.out) if args.out else None
    rules = Rules(args.rows, args.columns, args.win_length)
    players = {
        spec: agent_from_spec(spec, seed=args.seed + i, rules=rules) for i, spec in enumerate(args.agents)
    }
    result = TournamentResult()

    def write(finished: bool) -> None:
        if out is not None:
            data = {
                "rows": rules.rows,
                "columns": rules.columns,
                "win_length": rules.win_length,
                "games_per_pairing": args.games,
                "finished": finished,
                **result.to_dict(),
            }
            atomic_write_json(out, data)

    try:
        round_robin(players, args.games, rules, on_pairing=lambda r: print(r.pairing_line(-1)), result=result)
    except KeyboardInterrupt:
        write(finished=False)
        if out is not None:
            print(
                f"\ninterrupted: {len(result.pairings)} finished pairings written to {out}", file=sys.stderr
            )
        raise
    print("\n" + result.points_table())
    write(finished=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if len(args.agents) < 2:
        parser.error("give at least two agents")
    return run_cli(tournament, args)


if __name__ == "__main__":
    sys.exit(main())
