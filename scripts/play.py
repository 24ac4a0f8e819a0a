"""Watch or play one game of Connect Four between two agents.

    python scripts/play.py --player0 human --player1 random
    python scripts/play.py --player0 random --player1 random --rows 4 --columns 5 --win-length 3

Agent specs: random, human, and (when installed) mcts:<playouts>, qlearning:<table.npz>, solver, sb3:<model.zip>.
"""

from __future__ import annotations

import argparse
import sys

from agents import agent_from_spec
from agents.arena import play_game
from connect4_env import Rules
from connect4_env.render import render_ansi


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--player0", default="human", help="agent spec of the first player (X)")
    parser.add_argument("--player1", default="random", help="agent spec of the second player (O)")
    parser.add_argument("--rows", type=int, default=6)
    parser.add_argument("--columns", type=int, default=7)
    parser.add_argument("--win-length", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0, help="seed for the agents that take one")
    args = parser.parse_args(argv)

    try:
        rules = Rules(args.rows, args.columns, args.win_length)
        players = [
            agent_from_spec(args.player0, seed=args.seed, rules=rules),
            agent_from_spec(args.player1, seed=args.seed + 1, rules=rules),
        ]
    except (ValueError, TypeError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    watching = not any(spec.startswith("human") for spec in (args.player0, args.player1))

    def show(board, player, column):
        if watching:
            print(f"{'XO'[player]} plays column {column}\n{render_ansi(board)}")

    try:
        record = play_game(players, rules, on_move=show)
    except (EOFError, KeyboardInterrupt):
        print("\ngame abandoned")
        return 1
    if not watching:
        print(render_ansi(record.board))
    outcome = (
        "draw"
        if record.winner is None
        else f"{'XO'[record.winner]} ({['player0', 'player1'][record.winner]}) wins"
    )
    print(
        f"{outcome} after {len(record.moves)} moves: {''.join(str(c) for c in record.moves) if args.columns <= 10 else record.moves}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
