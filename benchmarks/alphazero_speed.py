"""The cost of one AlphaZero move on 6x7, against our compiled MCTS measured on the same positions.

Times ``AlphaZeroAgent`` (the shipped model unless ``--model``) at ``--simulations`` and with the raw policy
(``simulations=0``), and ``MCTSAgent(playouts=--playouts)``, one thread each, on ``--positions`` test-set
positions with 10 to 32 stones. Prints the median, min and max seconds a move, and the ratio of the medians.
The AlphaZero rows are timed twice: as the agent plays (its forward passes through the network's inference
snapshot, batch norm folded into the convolutions) and through the network's modules, as before the snapshot.

    python benchmarks/alphazero_speed.py [--positions 60] [--simulations 200] [--playouts 10000]
"""

from __future__ import annotations

import argparse
import statistics
import time

from connect4_agents import make_policy
from connect4_agents.evaluation.test_sets import select_positions, test_set_names
from connect4_env.encoding import action_mask, observation_planes


def move_times(spec: str, positions: list, modules: bool = False, **kwargs) -> list[float]:
    agent = make_policy(spec, seed=0, **kwargs)
    if modules:  # the forward passes through the network's modules, as before the inference snapshot
        agent.evaluator.snapshot = False
    times = []
    for position in positions:
        board = position.board()
        observation, mask = observation_planes(board), action_mask(board)
        agent.reset()
        start = time.perf_counter()
        agent.act(observation, mask)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--positions", type=int, default=60)
    parser.add_argument("--simulations", type=int, default=200)
    parser.add_argument("--playouts", type=int, default=10000)
    parser.add_argument("--model", default=None, help="a model.zip (default: the shipped 6x7 model)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()  # AlphaZeroAgent sets torch to one thread (its threads=1)
    names = [name for name in test_set_names() if name.startswith("6x7")]
    positions = select_positions(names, (10, 32), args.positions, args.seed)
    model = {} if args.model is None else {"model": args.model}
    make_policy("mcts", playouts=100).act(  # compile the MCTS kernels before timing
        observation_planes(positions[0].board()), action_mask(positions[0].board())
    )
    rows = [
        (
            f"alphazero, {args.simulations} simulations",
            move_times("alphazero", positions, simulations=args.simulations, **model),
        ),
        ("alphazero, raw policy", move_times("alphazero", positions, simulations=0, **model)),
        (
            f"alphazero, {args.simulations} sims, modules",
            move_times("alphazero", positions, modules=True, simulations=args.simulations, **model),
        ),
        (
            "alphazero, raw policy, modules",
            move_times("alphazero", positions, modules=True, simulations=0, **model),
        ),
        (f"mcts, {args.playouts} playouts (compiled)", move_times("mcts", positions, playouts=args.playouts)),
    ]
    print(f"{len(positions)} positions of 6x7 with 10-32 stones, seconds a move, one thread")
    for name, times in rows:
        print(
            f"  {name:<38} median {statistics.median(times):.4f}  min {min(times):.4f}  max {max(times):.4f}"
        )
    ratio = statistics.median(rows[0][1]) / statistics.median(rows[-1][1])
    print(
        f"alphazero ({args.simulations} simulations) / mcts ({args.playouts} playouts), medians: {ratio:.2f}"
    )
    for kind, snapshot, modules in ((f"{args.simulations} simulations", 0, 2), ("raw policy", 1, 3)):
        speedup = statistics.median(rows[modules][1]) / statistics.median(rows[snapshot][1])
        print(f"alphazero {kind}, modules / inference snapshot, medians: {speedup:.2f}x")


if __name__ == "__main__":
    main()
