"""Watch or play one game of Connect Four between two agents.

    python scripts/play.py --player0 human --player1 random
    python scripts/play.py --player0 random --player1 random --rows 4 --columns 5 --win-length 3

Agent specs: random, human, and (when installed) mcts:<playouts>, qlearning:<table.npz>, solver, sb3:<model.zip>.
"""

from __future__ import annotations

import argparse

from agents import agent_from_spec
from agents.arena import play_game
from agents.cli import run_cli
from connect4_env import Board, Rules
from connect4_env.render import render_ansi


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--player0", default="human", help="agent spec of the first player (X)")
    parser.add_argument("--player1", default="random", help="agent spec of the second player (O)")
    parser.add_argument("--rows", type=int, default=6)
    parser.add_argument("--columns", type=int, default=7)
    parser.add_argument("--win-length", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0, help="seed for the agents that take one")
    return parser


def play(args: argparse.Namespace) -> int:
    rules = Rules(args.rows, args.columns, args.win_length)
    players = [
        agent_from_spec(args.player0, seed=args.seed, rules=rules),
        agent_from_spec(args.player1, seed=args.seed + 1, rules=rules),
    ]
    watching = not any(spec.startswith("human") for spec in (args.player0, args.player1))

    def show(board: Board, player: int, column: int) -> None:
        if watching:
            print(f"{'XO'[player]} plays column {column}\n{render_ansi(board)}")

    record = play_game(players, rules, on_move=show)
    if not watching:
        print(render_ansi(record.board))
    outcome = (
        "draw"
        if record.winner is None
        else f"{'XO'[record.winner]} ({['player0', 'player1'][record.winner]}) wins"
    )
    moves = "".join(str(c) for c in record.moves) if rules.columns <= 10 else record.moves
    print(f"{outcome} after {len(record.moves)} moves: {moves}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_cli(play, build_parser().parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
