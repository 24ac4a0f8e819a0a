"""Learning throughput of the n-tuple learner: self-play transitions per second, learning included, one core.

Each repeat trains a fresh network (the defaults of ``connect4 train-ntuple``: 70 tuples of 8 cells, TD(0.5))
for ``--games`` self-play games in the compiled kernel and counts the moves played (each move is one
transition: its afterstate valued, the move chosen, the trace updated). The peer, measured in the same run on
the same machine: PettingZoo's ``connect_four_v3`` stepping random moves through its AEC loop, which learns
nothing. Prints the medians of ``--repeats`` runs and their ratio; process time, so another process on the
machine does not count against either.

    python benchmarks/ntuple_throughput.py [--games 20000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np

from connect4_agents.ntuple import NTupleNetwork, NTupleTrainer
from connect4_env import Rules


def ntuple_transitions_per_second(games: int, seed: int) -> float:
    """Self-play transitions (moves) per CPU second of a fresh default network, learning included."""
    network = NTupleNetwork.create(Rules(), seed=seed)
    trainer = NTupleTrainer(network, games=games + 100, seed=seed)
    trainer.train(100)  # the kernel compiled (or loaded from numba's cache) before the clock starts
    moves = trainer.moves
    began = time.process_time()
    trainer.train(games)
    return (trainer.moves - moves) / (time.process_time() - began)


def pettingzoo_steps_per_second(games: int, seed: int) -> float:
    """PettingZoo connect_four_v3 random moves per CPU second (the AEC loop, masks honoured, no learning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pettingzoo.classic import connect_four_v3
    env = connect_four_v3.env()
    rng = np.random.default_rng(seed)
    steps = 0
    began = time.process_time()
    for game in range(games):
        env.reset(seed=seed + game)
        for _agent in env.agent_iter():
            observation, _reward, termination, truncation, _info = env.last()
            if termination or truncation:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
            steps += 1
    env.close()
    return steps / (time.process_time() - began)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=20_000, help="self-play games per repeat (n-tuple)")
    parser.add_argument("--peer-games", type=int, default=300, help="random games per repeat (PettingZoo)")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    ours = [ntuple_transitions_per_second(args.games, seed) for seed in range(args.repeats)]
    peer = [pettingzoo_steps_per_second(args.peer_games, seed) for seed in range(args.repeats)]
    ours_median, peer_median = statistics.median(ours), statistics.median(peer)
    print(
        f"n-tuple self-play, learning included: {ours_median:,.0f} transitions/s (median of {args.repeats})"
    )
    print(f"PettingZoo connect_four_v3, random moves, no learning: {peer_median:,.0f} steps/s")
    print(f"ratio: {ours_median / peer_median:.1f}x")


if __name__ == "__main__":
    main()
