"""MCTS playouts per second from the empty 6x7 board: ours against OpenSpiel's MCTSBot, in one run.

Both use random rollouts and UCT with c = sqrt(2); OpenSpiel's bot runs with ``solve=True`` like ours.
Prints the median of several runs and the ratio. Needs open-spiel (in the dev extra).

    python benchmarks/mcts_speed.py [--playouts 200000] [--openspiel-simulations 3000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from connect4_agents.mcts.agent import MCTSAgent
from connect4_env import Board


def ours(playouts: int, seed: int) -> float:
    agent = MCTSAgent(playouts=playouts, seed=seed)
    result = agent.search(Board())
    return result.playouts / result.elapsed


def openspiel(simulations: int, seed: int) -> float:
    import pyspiel
    from open_spiel.python.algorithms import mcts

    game = pyspiel.load_game("connect_four")
    rng = np.random.RandomState(seed)
    bot = mcts.MCTSBot(
        game,
        uct_c=2**0.5,
        max_simulations=simulations,
        evaluator=mcts.RandomRolloutEvaluator(1, rng),
        random_state=rng,
        solve=True,
    )
    start = time.perf_counter()
    bot.step(game.new_initial_state())
    return simulations / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--playouts", type=int, default=200_000, help="our playouts per measurement")
    parser.add_argument(
        "--openspiel-simulations", type=int, default=3000, help="OpenSpiel simulations per measurement"
    )
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    start = time.perf_counter()
    MCTSAgent(playouts=10, seed=0).search(Board())
    first_call = time.perf_counter() - start
    ours_rates, openspiel_rates = [], []
    for repeat in range(args.repeats):
        ours_rates.append(ours(args.playouts, seed=repeat))
        openspiel_rates.append(openspiel(args.openspiel_simulations, seed=repeat))
    ours_median, openspiel_median = statistics.median(ours_rates), statistics.median(openspiel_rates)
    print(f"first MCTS search in this process (numba compile or cache load): {first_call:.2f} s")
    print(f"empty 6x7 board, median of {args.repeats} runs, one core")
    print(f"  connect4_env MCTSAgent       {ours_median:12,.0f} playouts/s")
    print(f"  OpenSpiel MCTSBot (Python)   {openspiel_median:12,.0f} simulations/s")
    print(f"ratio: {ours_median / openspiel_median:.1f}x")


if __name__ == "__main__":
    main()
