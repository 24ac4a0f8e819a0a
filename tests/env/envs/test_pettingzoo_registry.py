"""``pettingzoo.make("aec", "connect4_env/connect4_v0")``: PettingZoo's registry serves our env, and the flow of
PettingZoo's SB3 connect-four tutorial (action-masked PPO, then a match against random) runs with only the id
changed."""

from __future__ import annotations

import numpy as np
import pettingzoo
import pytest
from helpers.extras import importorskip

import connect4_env

IDS = [connect4_env.PETTINGZOO_ID, "classic/connect_four_v3"]
# PettingZoo keeps a registry from 1.27 on; older releases (the floor is 1.25) have none to test
pytestmark = pytest.mark.skipif(
    not callable(getattr(pettingzoo, "register", None)), reason="PettingZoo < 1.27 has no registry"
)


def test_registered_on_import() -> None:
    spec = pettingzoo.spec("aec", connect4_env.PETTINGZOO_ID)
    assert spec.entry_point == "connect4_env.envs.pettingzoo_env:env"
    env = pettingzoo.make("aec", connect4_env.PETTINGZOO_ID, rows=5, columns=6, win_length=4)
    env.reset(seed=0)
    assert env.observation_space("player_0")["observation"].shape == (5, 6, 2)
    assert env.metadata["name"] == "connect4_v0"
    env.close()


@pytest.mark.parametrize("env_id", IDS)
def test_the_sb3_tutorial_flow_runs_with_only_the_id_changed(env_id: str) -> None:
    importorskip("sb3_contrib")
    import gymnasium as gym
    import pettingzoo.utils
    import torch
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from sb3_contrib.common.wrappers import ActionMasker

    torch.set_num_threads(1)

    class MaskedSingleAgent(pettingzoo.utils.BaseWrapper, gym.Env):
        """Both seats as one Gymnasium-like env (the tutorial's wrapper, written for this test)."""

        def reset(self, seed=None, options=None):  # type: ignore[no-untyped-def]
            super().reset(seed, options)
            self.observation_space = super().observation_space(self.possible_agents[0])["observation"]
            self.action_space = super().action_space(self.possible_agents[0])
            return self.observe(self.agent_selection), {}

        def step(self, action):  # type: ignore[no-untyped-def]
            mover = self.agent_selection
            super().step(action)
            return (
                self.observe(self.agent_selection),
                self._cumulative_rewards[mover],
                self.terminations[mover],
                self.truncations[mover],
                self.infos[mover],
            )

        def observe(self, agent):  # type: ignore[no-untyped-def]
            return super().observe(agent)["observation"]

        def action_mask(self):  # type: ignore[no-untyped-def]
            return super().observe(self.agent_selection)["action_mask"]

    env = MaskedSingleAgent(pettingzoo.make("aec", env_id))
    env.reset(seed=0)
    env = ActionMasker(env, lambda e: e.action_mask())
    model = MaskablePPO(
        MaskableActorCriticPolicy, env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu"
    )
    model.learn(total_timesteps=128)
    env.close()

    game = pettingzoo.make("aec", env_id)
    finished = 0
    for i in range(3):
        game.reset(seed=i)
        game.action_space(game.possible_agents[0]).seed(i)
        for agent in game.agent_iter():
            obs, reward, termination, truncation, info = game.last()
            observation, action_mask = obs.values()  # the tutorial relies on this key order
            if termination or truncation:
                finished += 1
                break
            if agent == game.possible_agents[0]:
                action = game.action_space(agent).sample(action_mask)
            else:
                action = int(model.predict(observation, action_masks=action_mask, deterministic=True)[0])
            assert action_mask[action] == 1
            game.step(action)
        assert sum(game.rewards.values()) == 0 and set(game.rewards.values()) <= {-1, 0, 1}
    game.close()
    assert finished == 3
    assert isinstance(observation, np.ndarray)


def test_the_parallel_view_is_in_pettingzoos_registry_too():
    from pettingzoo.test import parallel_api_test

    from connect4_env.envs.parallel_env import Connect4ParallelEnv

    env = pettingzoo.make("parallel", connect4_env.PETTINGZOO_ID, rows=5, columns=6)
    assert isinstance(env, Connect4ParallelEnv) and env.wait_action == 6
    parallel_api_test(env, num_cycles=50)
