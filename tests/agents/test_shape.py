"""One shape for every agent: one positional argument, the rest keyword-only; old spellings name the new one;
every learned agent round-trips through ``save`` / ``load``; ``connect4_env`` exports the env classes."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.extras import importorskip

from connect4_agents import HumanAgent, MCTSAgent, QLearningAgent, RandomAgent, SolverAgent
from connect4_env import Board, Rules
from connect4_env.encoding import action_mask, observation_planes

HEAVY = {"SB3Agent": "stable_baselines3", "AlphaZeroAgent": "torch", "RLlibAgent": None}
POSITIONS = ["", "3", "33", "334", "0123", "3322114", "6605544"]  # moves, column digits


def agent_class(name: str) -> Any:
    needs = HEAVY.get(name)
    if needs is not None:
        importorskip(needs)
    return getattr(importlib.import_module("connect4_agents"), name)


@pytest.mark.parametrize(
    ("name", "first"),
    [
        ("RandomAgent", "seed"),
        ("HumanAgent", "input_fn"),
        ("MCTSAgent", "playouts"),
        ("SolverAgent", "rules"),
        ("QLearningAgent", "rules"),
        ("SB3Agent", "policy"),
        ("RLlibAgent", "module"),
        ("AlphaZeroAgent", "model"),
    ],
)
def test_one_positional_argument_then_keyword_only(name: str, first: str) -> None:
    parameters = list(inspect.signature(agent_class(name)).parameters.values())
    assert parameters[0].name == first
    assert parameters[0].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters[1:]), parameters


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda: MCTSAgent(2000, 0.5), "positional argument"),
        (lambda: MCTSAgent(win_length=3), "win_length"),
        (lambda: MCTSAgent(max_nodes=5000), "max_nodes"),
        (lambda: SolverAgent(4), r"rules=Rules\(win_length=4\)"),
        (lambda: SolverAgent(None, 3), "positional argument"),
        (lambda: SolverAgent(max_nodes=1000), "max_nodes"),
        (lambda: HumanAgent(input, print), "positional argument"),
        (lambda: QLearningAgent(3, 4, 3), "positional argument"),
        (lambda: QLearningAgent(rows=6), "rows"),
        (lambda: QLearningAgent.load("table.npz", 3), "positional argument"),
    ],
)
def test_spellings_removed_before_1_0_raise_type_error(call: Any, fragment: str) -> None:
    # the compatibility layer for the spellings of 0.1.0 is gone: an old call fails, it is never reinterpreted
    with pytest.raises(TypeError, match=fragment):
        call()


def test_rules_fix_the_board_of_search_agents() -> None:
    three = Rules(5, 6, 3)
    for agent in (MCTSAgent(50, rules=three), SolverAgent(three)):
        assert agent.rules == three and agent.win_length == 3
        agent.bind(three)
        with pytest.raises(ValueError, match="built for 5x6 with win_length=3"):
            agent.bind(Rules())


def moves_on_positions(agent: Any, rules: Rules) -> list[int]:
    columns: list[int] = []
    for moves in POSITIONS:
        board = Board.from_moves([int(c) % rules.columns for c in moves], rules)
        if board.is_terminal:
            continue
        agent.reset(seed=0)
        columns.append(int(agent.act(observation_planes(board), action_mask(board))))
    return columns


def test_q_table_round_trips_through_save_and_load(tmp_path: Path) -> None:
    rules = Rules(4, 5, 4)
    agent = QLearningAgent(rules, seed=0)
    agent.train(RandomAgent(seed=1), 300, window=300)
    path = agent.save(tmp_path / "table.npz")
    loaded = QLearningAgent.load(path, seed=0)
    assert loaded.q.keys() == agent.q.keys()
    assert moves_on_positions(loaded, rules) == moves_on_positions(agent, rules)


def test_alphazero_round_trips_through_save_and_load(tmp_path: Path) -> None:
    importorskip("torch")
    from connect4_agents.alphazero import AlphaZeroAgent
    from connect4_agents.alphazero.network import PolicyValueNet

    agent = AlphaZeroAgent(PolicyValueNet(channels=8, blocks=1), simulations=8, seed=0, threads=None)
    path = agent.save(tmp_path / "model.zip")
    loaded = AlphaZeroAgent.load(path, simulations=8, seed=0, threads=None)
    assert loaded.simulations == 8
    assert moves_on_positions(loaded, Rules()) == moves_on_positions(agent, Rules())
    with pytest.raises(FileNotFoundError):
        AlphaZeroAgent.load(tmp_path / "missing.zip")


@pytest.mark.parametrize("kind", ["ppo", "dqn"])
def test_sb3_round_trips_through_save_and_load(tmp_path: Path, kind: str) -> None:
    importorskip("stable_baselines3")
    import torch
    from gymnasium import spaces
    from stable_baselines3.common.policies import ActorCriticPolicy
    from stable_baselines3.dqn.policies import DQNPolicy

    from connect4_agents.sb3 import SB3Agent

    torch.manual_seed(0)
    observation_space = spaces.Box(0, 1, (6, 7, 2), dtype=np.int8)
    policy_class = ActorCriticPolicy if kind == "ppo" else DQNPolicy
    policy = policy_class(observation_space, spaces.Discrete(7), lambda _: 0.0, net_arch=[16])
    agent = SB3Agent(policy)
    path = agent.save(tmp_path / "model.zip")
    loaded = SB3Agent.load(path)
    assert type(loaded.policy) is policy_class
    assert moves_on_positions(loaded, Rules()) == moves_on_positions(agent, Rules())
    planes = np.stack([observation_planes(Board.from_moves([3, 3, 4]))]).astype(np.int8)
    np.testing.assert_allclose(loaded._scores(planes), agent._scores(planes), rtol=1e-6)


def test_sb3_save_refuses_what_the_safe_loader_could_not_rebuild(tmp_path: Path) -> None:
    importorskip("stable_baselines3")
    import torch
    from gymnasium import spaces
    from stable_baselines3.common.policies import ActorCriticPolicy

    from connect4_agents.sb3 import SB3Agent

    observation_space = spaces.Box(0, 1, (6, 7, 2), dtype=np.int8)
    policy = ActorCriticPolicy(
        observation_space, spaces.Discrete(7), lambda _: 0.0, activation_fn=torch.nn.ReLU
    )
    with pytest.raises(ValueError, match="activation_fn"):
        SB3Agent(policy).save(tmp_path / "model.zip")
    assert not (tmp_path / "model.zip").exists() and not (tmp_path / "model.json").exists()


def test_connect4_env_exports_the_env_classes_and_policy() -> None:
    from connect4_env import Connect4Env, Connect4VectorEnv, Policy
    from connect4_env.envs.gym_env import Connect4Env as GymEnv
    from connect4_env.envs.vector_env import Connect4VectorEnv as VectorEnv
    from connect4_env.policy import Policy as PolicyProtocol

    assert (Connect4Env, Connect4VectorEnv, Policy) == (GymEnv, VectorEnv, PolicyProtocol)
    import connect4_env

    assert {"Connect4Env", "Connect4VectorEnv", "Policy"} <= set(connect4_env.__all__)
