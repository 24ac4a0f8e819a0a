"""MatchSettings is the one declaration of the settings the Gym, vector and text envs share."""

from __future__ import annotations

import dataclasses
import inspect

import gymnasium as gym
import pytest

from connect4_env.envs.gym_env import Connect4Env
from connect4_env.envs.settings import MatchSettings
from connect4_env.envs.text_env import Connect4TextEnv
from connect4_env.envs.vector_env import Connect4VectorEnv


def _shared_parameters(cls: type, names: tuple[str, ...]) -> list[tuple[str, object]]:
    parameters = inspect.signature(cls.__init__).parameters
    return [(name, parameters[name].default) for name in parameters if name in names]


@pytest.mark.parametrize("cls", [Connect4Env, Connect4VectorEnv, Connect4TextEnv])
def test_each_env_takes_the_settings_in_their_declared_order_with_their_defaults(cls):
    declared = [(f.name, f.default) for f in dataclasses.fields(MatchSettings) if f.init]
    if cls is Connect4TextEnv:  # an unplayable answer is the text env's invalid_answer
        declared = [item for item in declared if item[0] != "illegal_action"]
    assert _shared_parameters(cls, MatchSettings.names()) == declared


def test_every_setting_has_a_docstring_on_the_api_page():
    source = inspect.getsource(MatchSettings)
    for name in MatchSettings.names():
        line = next(line for line in source.splitlines() if line.strip().startswith(f"{name}:"))
        after = source.split(line, 1)[1].lstrip()
        assert after.startswith('"""'), f"{name} has no docstring"


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"agent_first": 1}, TypeError, "agent_first"),
        ({"agent_first": "yes"}, TypeError, "agent_first"),
        ({"illegal_action": "skip"}, ValueError, "illegal_action"),
        ({"opponent": 3}, TypeError, "opponent"),
        ({"opponent": "nobody"}, ValueError, "nobody"),
        ({"opponent_kwargs": [1]}, TypeError, "opponent_kwargs"),
        ({"rows": 0}, ValueError, "rows"),
    ],
)
def test_every_env_refuses_a_bad_setting_with_the_same_error(kwargs, error, words):
    messages = set()
    makers = [
        lambda: MatchSettings(**kwargs),
        lambda: Connect4Env(**kwargs),
        lambda: Connect4VectorEnv(num_envs=2, **kwargs),
    ]
    if "illegal_action" not in kwargs:
        makers.append(lambda: Connect4TextEnv(**kwargs))
    for make in makers:
        with pytest.raises(error, match=words) as caught:
            make()
        messages.add(str(caught.value))
    assert len(messages) == 1


def test_the_envs_keep_their_settings_and_the_opponent_bound_to_the_rules():
    env = gym.make("Connect4-v0", rows=5, columns=6, opponent="random", agent_first=None)
    settings = env.unwrapped.settings
    assert (settings.rows, settings.columns, settings.agent_first) == (5, 6, None)
    assert settings.rules == env.unwrapped.rules
    assert env.unwrapped.opponent is settings.policy
    vector = gym.make_vec("Connect4-v0", num_envs=3, columns=8)
    assert vector.unwrapped.settings.columns == 8
    text = gym.make("Connect4Text-v0", win_length=3)
    assert text.unwrapped.settings.win_length == 3


def test_settings_are_frozen():
    settings = MatchSettings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.rows = 5  # type: ignore[misc]
