"""Exact-solver times: small boards from empty, and 6x7 positions from ply 20 on.

The 6x7 positions come from games between two MCTS agents (1000 playouts a move), so they look like real
play rather than random moves. Prints the median and worst time per position (a position's time is the
``evaluate`` of every column), with a fresh transposition table each time.

    python benchmarks/solver_times.py [--games 10] [--plies 12 16 20 24]
"""

from __future__ import annotations

import argparse
import statistics
import time

from agents.arena import play_game
from agents.mcts import MCTSAgent
from agents.solver import SolverAgent, describe_score
from connect4_env import Board, Rules


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=10, help="MCTS games to take 6x7 positions from")
    parser.add_argument("--plies", type=int, nargs="+", default=[12, 16, 20, 24])
    args = parser.parse_args()

    SolverAgent(table_size=1009).score(Board.empty(4, 4, 4))  # compile / load the kernels
    print("small boards from empty (win_length 4 unless noted):")
    for rows, columns, win_length in [
        (4, 4, 4),
        (4, 5, 4),
        (5, 4, 4),
        (3, 5, 3),
        (5, 5, 4),
        (5, 6, 4),
        (6, 5, 4),
    ]:
        solver = SolverAgent()
        start = time.perf_counter()
        score = solver.score(Board.empty(rows, columns, win_length))
        elapsed = time.perf_counter() - start
        print(
            f"  {rows}x{columns} (win {win_length}): {describe_score(score, Rules(rows, columns, win_length), 0):18s}"
            f" {elapsed:7.3f} s  {solver.last_nodes:>12,} nodes"
        )

    games = [
        play_game([MCTSAgent(playouts=1000, seed=2 * g), MCTSAgent(playouts=1000, seed=2 * g + 1)]).moves
        for g in range(args.games)
    ]
    print(f"6x7 positions from {args.games} MCTS(1000) self-play games:")
    for ply in args.plies:
        times = []
        for moves in games:
            if len(moves) <= ply:
                continue
            board = Board.from_moves(moves[:ply])
            if board.is_terminal:
                continue
            solver = SolverAgent()
            start = time.perf_counter()
            solver.evaluate_board(board)
            times.append(time.perf_counter() - start)
        if times:
            print(
                f"  ply {ply}: {len(times)} positions, median {statistics.median(times):.3f} s, worst {max(times):.3f} s"
            )


if __name__ == "__main__":
    main()
