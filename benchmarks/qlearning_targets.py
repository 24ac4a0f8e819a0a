"""What tabular Q-learning reaches on 4x5 against random: win rates per side and solver-best moves.

Trains a table against the random agent, then plays 2000 greedy games against a fresh random agent
(alternating sides) and scores the table's moves in the first 300 of them with the exact solver: a move counts
as best when it keeps the position's best outcome (win if winnable, else draw).

    python benchmarks/qlearning_targets.py [--episodes 1000000] [--alpha A] [--preset default|original]
"""

from __future__ import annotations

import argparse
import time

from connect4_agents import QLearningAgent, RandomAgent
from connect4_agents.evaluation.arena import play_match
from connect4_agents.evaluation.metrics import optimal_move_rate
from connect4_agents.solver.agent import SolverAgent
from connect4_env import Board, Rules


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--episodes", type=int, default=1_000_000)
    parser.add_argument("--alpha", type=float, default=None, help="learning rate (default: the agent's)")
    parser.add_argument(
        "--epsilon-decay", type=float, default=None, help="per-episode factor (default: the linear schedule)"
    )
    parser.add_argument("--preset", choices=["default", "original"], default="default")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rules = Rules(4, 5, 4)
    if args.preset == "original":
        agent = QLearningAgent.original(seed=args.seed)
    else:
        settings = {"alpha": args.alpha} if args.alpha is not None else {}
        agent = QLearningAgent(rules, seed=args.seed, epsilon_decay=args.epsilon_decay, **settings)
    start = time.perf_counter()
    agent.train(RandomAgent(seed=args.seed + 1), args.episodes, window=10_000)
    seconds = time.perf_counter() - start
    result = play_match(agent, RandomAgent(seed=args.seed + 2), 2000, rules, keep_games=True)
    summary = result.summary()
    boards = []
    for index, record in enumerate(result.games[:300]):
        board, seat = Board(rules), index % 2
        for column in record.moves:
            if board.to_move == seat:
                boards.append(board.copy())
            board.play(column)
    rate = optimal_move_rate(agent, SolverAgent(), boards)
    print(
        f"{args.preset} settings, {args.episodes:,} episodes against random in {seconds:.0f} s, {len(agent.q):,} states"
    )
    for side in ("as_first", "as_second"):
        block = summary[side]
        low, high = block["win_rate_ci95"]
        print(
            f"  {side:10s} win {block['win_rate']:.3f} (95% CI {low:.3f}-{high:.3f}), draw {block['draw_rate']:.3f}, "
            f"loss {block['loss_rate']:.3f}"
        )
    print(f"  solver-best moves on {len(boards)} positions it met: {rate:.3f}")


if __name__ == "__main__":
    main()
