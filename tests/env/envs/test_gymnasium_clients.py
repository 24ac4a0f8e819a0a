"""Every registered Gymnasium id as ``gym.make`` and ``gym.make_vec`` build it, on the installed Gymnasium.

``make test-gymnasium-versions`` runs this file on each Gymnasium minor that ``pyproject.toml`` allows (the main
venv has the newest): ``Connect4-v0``'s env checker once used private attributes that only Gymnasium 1.4's
``PassiveEnvChecker`` has, and every env failed at its first ``reset`` on 1.1 to 1.3.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import connect4_env  # noqa: F401  (registers the ids)

IDS = sorted(
    env_id for env_id, spec in gym.registry.items() if str(spec.entry_point).startswith("connect4_env.")
)


class FailsOnce:
    """Plays the first legal column, but raises on its first ``act`` (a flaky opponent)."""

    def __init__(self) -> None:
        self.failures_left = 1

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        if self.failures_left:
            self.failures_left -= 1
            raise RuntimeError("opponent failed")
        return int(np.flatnonzero(action_mask)[0])


def _action(env_id: str, column: int) -> int | str:
    return str(column + 1) if env_id == "Connect4Text-v0" else column  # the text env reads 1-based columns


def _play(env: gym.Env, env_id: str, seed: int) -> int:
    """Random legal moves until the game ends; returns the number of steps."""
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    for steps in range(1, 50):
        column = int(rng.choice(np.flatnonzero(info["action_mask"])))
        _, reward, terminated, truncated, info = env.step(_action(env_id, column))
        assert reward in (-1.0, 0.0, 1.0)
        if terminated or truncated:
            return steps
    raise AssertionError("a 6x7 game lasts at most 21 learner moves")


def test_our_three_ids_are_registered() -> None:
    assert IDS == ["Connect4-v0", "Connect4Flat-v0", "Connect4Text-v0"]


@pytest.mark.parametrize("env_id", IDS)
def test_each_id_plays_whole_games_through_gym_make(env_id: str) -> None:
    env = gym.make(env_id)
    for seed in range(3):
        assert 4 <= _play(env, env_id, seed) <= 21
    env.close()


@pytest.mark.parametrize("env_id", IDS)
def test_a_failed_first_reset_leaves_the_env_usable(env_id: str) -> None:
    env = gym.make(env_id, opponent=FailsOnce(), agent_first=False)
    with pytest.raises(RuntimeError, match="opponent failed"):
        env.reset(seed=0)
    assert 3 <= _play(env, env_id, 0) <= 21  # moving second, the learner may lose at its third move


@pytest.mark.parametrize("mode", ["vector_entry_point", "sync"])
@pytest.mark.parametrize("autoreset", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_make_vec_steps_through_episode_ends(mode: str, autoreset: AutoresetMode) -> None:
    kwargs = (
        {"vector_kwargs": {"autoreset_mode": autoreset}} if mode == "sync" else {"autoreset_mode": autoreset}
    )
    envs = gym.make_vec("Connect4-v0", num_envs=3, vectorization_mode=mode, **kwargs)
    assert envs.metadata["autoreset_mode"] == autoreset
    rng = np.random.default_rng(0)
    _, info = envs.reset(seed=0)
    ended = 0
    for _ in range(60):
        mask = info["action_mask"].astype(bool)
        actions = np.array([rng.choice(np.flatnonzero(row)) if row.any() else 0 for row in mask])
        _, _, terminated, truncated, info = envs.step(actions)
        ended += int(np.sum(terminated | truncated))
    assert ended >= 3
    envs.close()
