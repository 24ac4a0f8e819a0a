"""Exact-solver times: small boards from empty, the 6x7 opening with and without the opening book, a
solver-vs-solver game, and 6x7 positions from ply 12 on.

The 6x7 positions come from games between two MCTS agents (1000 playouts a move), so they look like real
play rather than random moves. Prints the median and worst time per position (a position's time is the
``evaluate`` of every column), with a fresh transposition table each time. Without the book, positions that
need more than the default node budget are reported as such (the budget is the search's time limit).

    python benchmarks/solver_times.py [--games 10] [--plies 12 16 20 24] [--opening-plies 0 2 4 6 8 10 12]
"""

from __future__ import annotations

import argparse
import statistics
import time

from connect4_agents.evaluation.arena import play_game
from connect4_agents.mcts.agent import MCTSAgent
from connect4_agents.solver.agent import SolverAgent, SolverBudgetExceeded, describe_score
from connect4_agents.solver.book import load_book
from connect4_env import Board, Rules
from connect4_env.encoding import action_mask, observation_planes


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=10, help="MCTS games to take 6x7 positions from")
    parser.add_argument("--plies", type=int, nargs="+", default=[12, 16, 20, 24])
    parser.add_argument("--opening-plies", type=int, nargs="+", default=[0, 2, 4, 6, 8, 10, 12])
    parser.add_argument("--no-book-games", type=int, default=3, help="games per opening ply without the book")
    args = parser.parse_args()

    SolverAgent(table_size=1009).score(Board(Rules(4, 4, 4)))  # compile / load the kernels
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
        score = solver.score(Board(Rules(rows, columns, win_length)))
        elapsed = time.perf_counter() - start
        print(
            f"  {rows}x{columns} (win {win_length}): {describe_score(score, Rules(rows, columns, win_length), 0):18s}"
            f" {elapsed:7.3f} s  {solver.last_nodes:>12,} nodes"
        )

    games = [
        play_game([MCTSAgent(playouts=1000, seed=2 * g), MCTSAgent(playouts=1000, seed=2 * g + 1)]).moves
        for g in range(args.games)
    ]
    if load_book() is None:
        print("the opening book is not installed (pip install -e '.[book]'): skipping the 6x7 opening")
    else:
        load_book()
        print("6x7 opening (all seven columns evaluated), with the book / without it:")
        for ply in args.opening_plies:
            with_book = [_timed(SolverAgent(), moves[:ply]) for moves in games if len(moves) > ply]
            acts = [_timed(SolverAgent(), moves[:ply], act=True) for moves in games if len(moves) > ply]
            without = [
                _timed(SolverAgent(book=False), moves[:ply])
                for moves in games[: args.no_book_games]
                if len(moves) > ply
            ]
            over = sum(t is None for t in without)
            done = [t for t in without if t is not None]
            rest = f"median {statistics.median(done):.3f} s" if done else "-"
            print(
                f"  ply {ply:2d}: book: evaluate median {statistics.median(with_book):.3f} s, worst "
                f"{max(with_book):.3f} s, act worst {max(t or 0.0 for t in acts):.3f} s"
                f" | no book: {rest}, {over}/{len(without)} over the default budget"
            )
        first, second = SolverAgent(), SolverAgent()
        board, times = Board(), []
        while not board.is_terminal:
            player = first if board.to_move == 0 else second
            start = time.perf_counter()
            board.play(player.act(observation_planes(board), action_mask(board)))
            times.append(time.perf_counter() - start)
        outcome = "draw" if board.winner is None else f"player {board.winner} wins with stone {board.ply}"
        print(
            f"solver vs solver from the empty board: {outcome}; {sum(times):.2f} s in all, "
            f"median {1000 * statistics.median(times):.1f} ms a move, worst {max(times):.3f} s"
        )

    print(f"6x7 positions from {args.games} MCTS(1000) self-play games:")
    for ply in args.plies:
        times, act_times = [], []
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
            start = time.perf_counter()
            SolverAgent().act(observation_planes(board), action_mask(board))
            act_times.append(time.perf_counter() - start)
        if times:
            print(
                f"  ply {ply}: {len(times)} positions, evaluate (every column exact) median "
                f"{statistics.median(times):.3f} s, worst {max(times):.3f} s; act median "
                f"{statistics.median(act_times):.3f} s, worst {max(act_times):.3f} s"
            )


def _timed(solver: SolverAgent, moves: list[int], act: bool = False) -> float | None:
    """Seconds to evaluate every column of the position (or to ``act``), or None past the node budget."""
    board = Board.from_moves(moves)
    start = time.perf_counter()
    try:
        if act:
            solver.act(observation_planes(board), action_mask(board))
        else:
            solver.evaluate_board(board)
    except SolverBudgetExceeded:
        return None
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
