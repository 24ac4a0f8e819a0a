"""A round-robin tournament between agents: every pair plays N games, alternating who starts.

    python scripts/tournament.py random mcts:100 solver --games 20
    python scripts/tournament.py sb3:runs/sb3/model.zip random mcts:100 --games 200 --out results.json

Agent specs: random, solver, mcts:<playouts>, qlearning:<table.npz>, sb3:<model.zip>. Prints each pairing's W/D/L
(from the first-named agent's side) with a 95 % interval on its score, and a table of total points.
"""

from __future__ import annotations

import argparse
import itertools
import sys

from agents import agent_from_spec
from agents._files import atomic_write_json
from agents.arena import play_match, wilson_interval
from connect4_env import Rules


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("agents", nargs="+", help="two or more agent specs")
    parser.add_argument("--games", type=int, default=20, help="games per pairing (default 20)")
    parser.add_argument("--rows", type=int, default=6)
    parser.add_argument("--columns", type=int, default=7)
    parser.add_argument("--win-length", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="write the results as JSON here")
    args = parser.parse_args(argv)
    if len(args.agents) < 2:
        parser.error("give at least two agents")
    try:
        rules = Rules(args.rows, args.columns, args.win_length)
        players = {
            spec: agent_from_spec(spec, seed=args.seed + i, rules=rules) for i, spec in enumerate(args.agents)
        }
    except (ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    points = dict.fromkeys(players, 0.0)
    pairings = []
    for a, b in itertools.combinations(players, 2):
        result = play_match(players[a], players[b], args.games, rules)
        points[a] += result.wins + 0.5 * result.draws
        points[b] += result.losses + 0.5 * result.draws
        low, high = wilson_interval(result.wins + 0.5 * result.draws, result.n_games)
        print(
            f"{a} vs {b}: {result.wins} W / {result.draws} D / {result.losses} L "
            f"(score {result.score:.3f}, 95% CI {low:.3f}-{high:.3f})"
        )
        pairings.append({"a": a, "b": b, **result.summary()})
    print("\npoints:")
    for spec, total in sorted(points.items(), key=lambda item: -item[1]):
        print(f"  {spec:40s} {total:7.1f}")
    if args.out:
        data = {
            "rows": rules.rows,
            "columns": rules.columns,
            "win_length": rules.win_length,
            "games_per_pairing": args.games,
            "points": points,
            "pairings": pairings,
        }
        atomic_write_json(args.out, data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
