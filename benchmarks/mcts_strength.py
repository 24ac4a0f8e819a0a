"""MCTS strength against OpenSpiel's MCTSBot at equal thinking time, and best-move rates on solved positions.

1. Head to head on 6x7: our MCTSAgent with ``--seconds`` per move against OpenSpiel's MCTSBot given as many
   simulations as it runs in the same time (measured at the start), alternating who moves first. OpenSpiel's
   bot plays through the public adapter (``connect4_agents.interop.openspiel``, the ``openspiel`` extra).
2. Positions from random play (plies ``--min-ply``..``--max-ply``), scored by the exact solver: how often
   each bot's move keeps the best game-theoretic outcome (win if winnable, else draw).
3. Equal playouts: on ``--equal-positions`` solver-scored positions (plies 10-32, moves not all of one
   outcome), our default MCTSAgent with the solver on and off and OpenSpiel's MCTSBot (uct_c 2, solve=True),
   each with ``--playouts`` playouts / simulations a move, ``--seeds`` searches per position.

    python benchmarks/mcts_strength.py [--seconds 0.05] [--games 40] [--positions 100] [--equal-positions 220]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from connect4_agents.evaluation.arena import wilson_interval
from connect4_agents.interop.openspiel import OpenSpielPolicy, openspiel_mcts
from connect4_agents.mcts.agent import MCTSAgent
from connect4_agents.solver.agent import SolverAgent
from connect4_env import Board
from connect4_env.encoding import action_mask, observation_planes


def openspiel_bot(simulations: int, seed: int, uct_c: float = 2**0.5) -> OpenSpielPolicy:
    """OpenSpiel's MCTSBot (random rollouts, solve=True) on its C++ connect_four, as a policy of ours through
    the public adapter (connect4_agents.interop.openspiel)."""
    return openspiel_mcts(simulations, seed=seed, uct_c=uct_c)


def move(policy: Any, board: Board) -> int:
    return int(policy.act(observation_planes(board), action_mask(board)))


def openspiel_rate(seed: int) -> float:
    bot = openspiel_bot(2000, seed)
    start = time.perf_counter()
    move(bot, Board())
    return 2000 / (time.perf_counter() - start)


def head_to_head(seconds: float, simulations: int, games: int) -> tuple[int, int, int]:
    wins = draws = losses = 0
    for game in range(games):
        ours = MCTSAgent(playouts=None, time_limit=seconds, seed=game)
        theirs = openspiel_bot(simulations, seed=game)
        our_seat = game % 2
        board = Board()
        while not board.is_terminal:
            board.play(move(ours if board.to_move == our_seat else theirs, board))
        if board.winner is None:
            draws += 1
        elif board.winner == our_seat:
            wins += 1
        else:
            losses += 1
    return wins, draws, losses


def scored_positions(
    n: int, min_ply: int, max_ply: int, seed: int
) -> list[tuple[list[int], list[int | None]]]:
    """Random positions where the moves do not all have the same outcome, with the solver's outcomes."""
    rng = np.random.default_rng(seed)
    solver = SolverAgent(node_budget=30_000_000)
    positions = []
    while len(positions) < n:
        board, moves = Board(), []
        for _ in range(int(rng.integers(min_ply, max_ply + 1))):
            if board.is_terminal:
                break
            legal = board.legal_moves()
            moves.append(legal[rng.integers(len(legal))])
            board.play(moves[-1])
        if board.is_terminal:
            continue
        try:
            scores = solver.evaluate_board(board)
        except RuntimeError:
            continue
        outcomes = [None if s is None else (s > 0) - (s < 0) for s in scores]
        if len({o for o in outcomes if o is not None}) > 1:
            positions.append((moves, outcomes))
    return positions


def equal_playouts(n: int, playouts: int, seeds: int) -> None:
    positions = scored_positions(n, 10, 32, seed=7)
    bots = {
        "ours, solver on (default)": lambda i: MCTSAgent(playouts=playouts, seed=i),
        "ours, solver off": lambda i: MCTSAgent(playouts=playouts, seed=i, solver=False),
        "OpenSpiel MCTSBot": lambda i: openspiel_bot(playouts, seed=i, uct_c=2.0),
    }
    print(
        f"equal playouts ({playouts} a move), {n} solver-scored positions (plies 10-32), {seeds} seeds each:"
    )
    for name, make in bots.items():
        rates = []
        for seed in range(seeds):
            hits = 0
            for index, (moves, outcomes) in enumerate(positions):
                column = move(make(1000 * seed + index), Board.from_moves(moves))
                hits += outcomes[column] == max(o for o in outcomes if o is not None)
            rates.append(hits / len(positions))
        spread = f" (seeds: {', '.join(f'{r:.3f}' for r in rates)})" if seeds > 1 else ""
        print(f"  {name:28s} {float(np.mean(rates)):.3f}{spread}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=0.05, help="thinking time per move (default 0.05)")
    parser.add_argument("--games", type=int, default=40, help="head-to-head games (default 40)")
    parser.add_argument("--positions", type=int, default=100, help="solver-scored positions (default 100)")
    parser.add_argument("--min-ply", type=int, default=10)
    parser.add_argument("--max-ply", type=int, default=24)
    parser.add_argument("--equal-positions", type=int, default=220, help="positions for part 3 (0: skip)")
    parser.add_argument("--playouts", type=int, default=1000, help="playouts a move in part 3 (default 1000)")
    parser.add_argument("--seeds", type=int, default=3, help="searches per position in part 3 (default 3)")
    parser.add_argument("--skip-timed", action="store_true", help="run part 3 only")
    args = parser.parse_args()

    MCTSAgent(playouts=10, seed=0).search(Board())  # compile / load the kernels first
    if args.equal_positions:
        equal_playouts(args.equal_positions, args.playouts, args.seeds)
    if args.skip_timed:
        return
    simulations = max(1, int(openspiel_rate(0) * args.seconds))
    print(f"{args.seconds} s per move: OpenSpiel MCTSBot gets {simulations} simulations per move")

    wins, draws, losses = head_to_head(args.seconds, simulations, args.games)
    score = (wins + 0.5 * draws) / args.games
    low, high = wilson_interval(wins + 0.5 * draws, args.games)
    print(
        f"head to head, {args.games} games alternating sides: ours {wins} W / {draws} D / {losses} L "
        f"(score {score:.3f}, 95% CI {low:.3f}-{high:.3f})"
    )

    positions = scored_positions(args.positions, args.min_ply, args.max_ply, seed=1)
    hits = {"ours": 0, "openspiel": 0}
    for index, (moves, outcomes) in enumerate(positions):
        board = Board.from_moves(moves)
        best = max(o for o in outcomes if o is not None)
        ours = MCTSAgent(playouts=None, time_limit=args.seconds, seed=index)
        hits["ours"] += outcomes[ours.act(observation_planes(board), action_mask(board))] == best
        hits["openspiel"] += outcomes[move(openspiel_bot(simulations, seed=index), board)] == best
    n = len(positions)
    if not n:
        return
    print(f"best-move rate on {n} solver-scored positions (plies {args.min_ply}-{args.max_ply}):")
    for name, count in hits.items():
        low, high = wilson_interval(count, n)
        print(f"  {name:10s} {count / n:.3f} (95% CI {low:.3f}-{high:.3f})")


if __name__ == "__main__":
    main()
