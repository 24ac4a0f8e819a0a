"""Speed of the env, the batched env, MCTS and the solver in whichever tree is on ``PYTHONPATH``: one line of
JSON, for comparing two commits in one session (issue 51's "speed unchanged" goal).

    git worktree add /tmp/before <commit>   # and a folder whose connect4_env and connect4_agents link into it
    PYTHONPATH=/tmp/before-links python tools/speed_check.py /tmp/before
    PYTHONPATH=/tmp/after-links python tools/speed_check.py /tmp/after

Run the two alternately, several times each, and compare paired ratios: each figure is one measurement. The
argument is the tree the packages must come from (checked, so a run never measures the wrong one). Measures:
``Connect4-v0`` steps a second against ``random`` (random legal actions), the vector env's (256 games), MCTS
playouts a second (one search of 20,000 after a warm-up), and 6x7 positions of 14-23 random stones a second that
the solver scores column by column (the book installed).
"""

from __future__ import annotations

import json
import sys
import time

import gymnasium as gym
import numpy as np

import connect4_env
from connect4_env import Board, Rules


def env_steps(steps: int = 20_000) -> float:
    env = gym.make("Connect4-v0", opponent="random")
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    began = time.perf_counter()
    for _ in range(steps):
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            _, info = env.reset()
    return steps / (time.perf_counter() - began)


def vector_steps(steps: int = 200, games: int = 256) -> float:
    from connect4_env.envs.vector_env import Connect4VectorEnv

    env = Connect4VectorEnv(num_envs=games, opponent="random")
    _, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    began = time.perf_counter()
    for _ in range(steps):
        masks = info["action_mask"].astype(bool)
        actions = np.array([rng.choice(np.flatnonzero(mask)) if mask.any() else 0 for mask in masks])
        _, _, _, _, info = env.step(actions)
    return games * steps / (time.perf_counter() - began)


def mcts_playouts(playouts: int = 20_000) -> float:
    from connect4_agents.mcts import MCTSAgent
    from connect4_env.encoding import action_mask, observation_planes

    agent = MCTSAgent(playouts=playouts, seed=0)
    agent.bind(Rules())
    board = Board().play_moves([3, 3, 2])
    agent.act(observation_planes(board), action_mask(board))  # compiles and warms the kernels
    began = time.perf_counter()
    agent.act(observation_planes(board), action_mask(board))
    return playouts / (time.perf_counter() - began)


def solver_positions(count: int = 60) -> float:
    from connect4_agents.solver import SolverAgent

    solver = SolverAgent()
    solver.bind(Rules())
    rng = np.random.default_rng(1)
    boards: list[Board] = []
    while len(boards) < count:
        board = Board()
        for _ in range(int(rng.integers(14, 24))):
            if board.is_terminal:
                break
            board.play(int(rng.choice(board.legal_moves())))
        if not board.is_terminal:
            boards.append(board)
    solver.evaluate_board(boards[0])  # compiles the kernels, loads the book
    began = time.perf_counter()
    for board in boards:
        solver.evaluate_board(board)
    return count / (time.perf_counter() - began)


def main() -> None:
    if len(sys.argv) != 2 or not connect4_env.__file__ or not connect4_env.__file__.startswith(sys.argv[1]):
        raise SystemExit(
            f"usage: PYTHONPATH=... python tools/speed_check.py TREE (imported {connect4_env.__file__})"
        )
    figures = {
        "env": env_steps(),
        "vector": vector_steps(),
        "mcts": mcts_playouts(),
        "solver": solver_positions(),
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
