"""SB3Agent runs an MLP actor as a numpy copy of its layers: the same logits as SB3's, kept in step with training."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from helpers.extras import importorskip

for _module in ("stable_baselines3", "sb3_contrib", "torch"):
    importorskip(_module)

import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402

from connect4_agents.sb3.agent import SB3Agent  # noqa: E402
from connect4_agents.sb3.hyperparameters import cnn_policy_kwargs  # noqa: E402
from connect4_env import make_sb3_vec_env  # noqa: E402


def _sb3_logits(policy, observations):
    with torch.no_grad():
        tensor, _ = policy.obs_to_tensor(observations)
        return policy.get_distribution(tensor).distribution.logits.numpy()


def _same(a, b):
    return np.abs((a - a.max(1, keepdims=True)) - (b - b.max(1, keepdims=True))).max() < 1e-5


@pytest.mark.parametrize(
    ("algo", "kwargs", "numpy_copy"),
    [
        (MaskablePPO, {}, True),
        pytest.param(
            PPO,
            {"policy_kwargs": {"activation_fn": torch.nn.ReLU, "net_arch": [32, 16]}},
            True,
            marks=pytest.mark.slow,
        ),
        pytest.param(
            MaskablePPO,
            {"policy_kwargs": cnn_policy_kwargs(channels=8, features=16)},
            False,
            marks=pytest.mark.slow,
        ),
    ],
)
def test_the_agents_logits_are_sb3s_before_and_after_training(algo, kwargs, numpy_copy):
    observations = np.random.default_rng(0).integers(0, 2, (200, 6, 7, 2)).astype(np.int8)
    model = algo(
        "MlpPolicy",
        make_sb3_vec_env(2, monitor=False),
        seed=1,
        device="cpu",
        n_steps=32,
        batch_size=32,
        **kwargs,
    )
    agent = SB3Agent(model.policy)
    assert (agent._layers() is not None) is numpy_copy
    assert _same(agent._scores(observations), _sb3_logits(model.policy, observations))
    model.learn(64)  # the optimiser changes the weights in place: the copy follows
    assert _same(agent._scores(observations), _sb3_logits(model.policy, observations))
    model.policy.load_state_dict({k: v * 0.5 for k, v in model.policy.state_dict().items()})
    assert _same(agent._scores(observations), _sb3_logits(model.policy, observations))
    restored = pickle.loads(pickle.dumps(agent))
    assert _same(restored._scores(observations), _sb3_logits(model.policy, observations))
