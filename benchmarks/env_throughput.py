"""Moves per second of our envs against PettingZoo's ``connect_four_v3``, on the same games, in one run.

Pre-generates random 6x7 games, then replays them through each env with the usual AEC loop
(``agent_iter`` / ``last`` / ``step``); also plays ``Connect4-v0`` against its random opponent.
Prints the median of several repeats and the ratios to PettingZoo.

    python benchmarks/env_throughput.py [--games 300] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import gymnasium as gym
import numpy as np

import connect4_env  # noqa: F401  (registers Connect4-v0)
from connect4_env import Board, connect4_v0


def random_games(n_games: int, seed: int) -> list[list[int]]:
    """Random legal 6x7 games played to the end."""
    rng = np.random.default_rng(seed)
    games = []
    for _ in range(n_games):
        board = Board()
        moves: list[int] = []
        while not board.is_terminal:
            legal = board.legal_moves()
            column = legal[int(rng.integers(len(legal)))]
            board.play(column)
            moves.append(column)
        games.append(moves)
    return games


def replay(make_env, games: list[list[int]]) -> float:
    """Moves per second replaying ``games`` through the AEC env built by ``make_env``."""
    env = make_env()
    n_moves = 0
    start = time.perf_counter()
    for moves in games:
        env.reset()
        it = iter(moves)
        for _agent in env.agent_iter():
            _obs, _reward, termination, truncation, _info = env.last()
            if termination or truncation:
                env.step(None)
            else:
                env.step(next(it))
                n_moves += 1
    elapsed = time.perf_counter() - start
    env.close()
    return n_moves / elapsed


def gym_vs_random(n_steps: int, seed: int) -> float:
    """Agent steps per second of ``Connect4-v0`` against the random opponent (random learner moves)."""
    env = gym.make("Connect4-v0")
    rng = np.random.default_rng(seed)
    _obs, info = env.reset(seed=seed)
    start = time.perf_counter()
    for _ in range(n_steps):
        legal = np.flatnonzero(info["action_mask"])
        _obs, _reward, terminated, truncated, info = env.step(int(legal[int(rng.random() * legal.size)]))
        if terminated or truncated:
            _obs, info = env.reset()
    return n_steps / (time.perf_counter() - start)


def build_time(make_env, n: int = 2000) -> float:
    """Microseconds to build one env (mean over ``n`` builds)."""
    start = time.perf_counter()
    for _ in range(n):
        make_env()
    return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=300, help="random games replayed per measurement")
    parser.add_argument("--repeats", type=int, default=5, help="measurements per env (the median is shown)")
    parser.add_argument("--gym-steps", type=int, default=20000, help="Connect4-v0 steps per measurement")
    args = parser.parse_args()

    from pettingzoo.classic import connect_four_v3

    warnings.filterwarnings("ignore")
    games = random_games(args.games, seed=0)
    contenders = {
        "pettingzoo connect_four_v3 raw_env": connect_four_v3.raw_env,
        "pettingzoo connect_four_v3 env()": connect_four_v3.env,
        "connect4_env connect4_v0 raw_env": connect4_v0.raw_env,
        "connect4_env connect4_v0 env()": connect4_v0.env,
    }
    results: dict[str, list[float]] = {name: [] for name in contenders}
    builds: dict[str, list[float]] = {name: [] for name in contenders}
    gym_rates = []
    for _ in range(args.repeats):  # interleave the contenders so machine noise hits them alike
        for name, make_env in contenders.items():
            results[name].append(replay(make_env, games))
            builds[name].append(build_time(make_env))
        gym_rates.append(gym_vs_random(args.gym_steps, seed=0))
    medians = {name: statistics.median(rates) for name, rates in results.items()}
    print(f"{args.games} random 6x7 games, median of {args.repeats} runs (moves/s)")
    for name, rate in medians.items():
        print(f"  {name:40s} {rate:12,.0f}")
    raw_ratio = medians["connect4_env connect4_v0 raw_env"] / medians["pettingzoo connect_four_v3 raw_env"]
    env_ratio = medians["connect4_env connect4_v0 env()"] / medians["pettingzoo connect_four_v3 env()"]
    print(f"ratio raw_env: {raw_ratio:.1f}x   ratio env(): {env_ratio:.1f}x")
    print(f"time to build one env, median of {args.repeats} runs of 2000 builds (microseconds)")
    build_medians = {name: statistics.median(times) for name, times in builds.items()}
    for name, micros in build_medians.items():
        print(f"  {name:40s} {micros:12.1f}")
    build_ratio = (
        build_medians["connect4_env connect4_v0 env()"] / build_medians["pettingzoo connect_four_v3 env()"]
    )
    print(f"build time env(), ours / PettingZoo's: {build_ratio:.2f} (below 1 is faster)")
    print(f"Connect4-v0 vs random opponent: {statistics.median(gym_rates):,.0f} agent steps/s")


if __name__ == "__main__":
    main()
