"""MaskablePPO training speed on our batched env against a PettingZoo ``connect_four_v3`` wrapper, one thread.

The peer is the usual single-agent wrapper around PettingZoo's AEC env: the learner plays one side, a random
opponent the other, masks through ``action_masks()``; ``--n-envs`` copies in SB3's ``DummyVecEnv``. Ours is
``connect4_env.make_sb3_vec_env`` with the same number of games. Same MaskablePPO hyper-parameters, same
number of steps, medians of several runs.

    python benchmarks/sb3_fps.py [--steps 20000] [--n-envs 8] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import gymnasium as gym
import numpy as np
import torch

import connect4_env


class PettingZooConnectFour(gym.Env):
    """connect_four_v3 as a single-agent env: the learner vs a uniformly random opponent, random sides."""

    def __init__(self) -> None:
        from pettingzoo.classic import connect_four_v3

        self.aec = connect_four_v3.env()
        self.observation_space = gym.spaces.Box(0, 1, (6, 7, 2), dtype=np.int8)
        self.action_space = gym.spaces.Discrete(7)
        self.rng = np.random.default_rng(0)
        self.learner = "player_0"

    def _opponent_turns(self) -> tuple[float, bool]:
        for agent in self.aec.agent_iter():
            obs, reward, termination, truncation, _ = self.aec.last()
            if termination or truncation:
                return float(self.aec.rewards[self.learner]), True
            if agent == self.learner:
                self._obs = obs
                return 0.0, False
            self.aec.step(int(self.rng.choice(np.flatnonzero(obs["action_mask"]))))
        return 0.0, True

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.aec.reset(seed=seed)
        self.learner = "player_0" if self.np_random.random() < 0.5 else "player_1"
        self._opponent_turns()
        return self._obs["observation"], {}

    def step(self, action):
        self.aec.step(int(action))
        reward, done = self._opponent_turns()
        return self._obs["observation"], reward, done, False, {}

    def action_masks(self) -> np.ndarray:
        return self._obs["action_mask"].astype(bool)


def measure(make_venv, steps: int, seed: int) -> float:
    from sb3_contrib import MaskablePPO

    venv = make_venv()
    model = MaskablePPO("MlpPolicy", venv, n_steps=256, batch_size=512, n_epochs=4, seed=seed, device="cpu")
    start = time.perf_counter()
    model.learn(steps)
    return model.num_timesteps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--n-envs", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

    peer = lambda: VecMonitor(DummyVecEnv([PettingZooConnectFour] * args.n_envs))  # noqa: E731
    mine = lambda: connect4_env.make_sb3_vec_env(args.n_envs)  # noqa: E731
    peer_rates, our_rates = [], []
    for seed in range(args.repeats):
        peer_rates.append(measure(peer, args.steps, seed))
        our_rates.append(measure(mine, args.steps, seed))
    peer_median, our_median = statistics.median(peer_rates), statistics.median(our_rates)
    print(f"MaskablePPO, {args.n_envs} envs, {args.steps:,} steps, 1 thread, median of {args.repeats}")
    print(f"  PettingZoo connect_four_v3 wrapper (DummyVecEnv)  {peer_median:10,.0f} steps/s")
    print(f"  connect4_env.make_sb3_vec_env                     {our_median:10,.0f} steps/s")
    print(f"ratio: {our_median / peer_median:.1f}x")


if __name__ == "__main__":
    main()
