"""External policies for connect4_env: each consumes ``(observation, action_mask)`` and returns a column."""

from __future__ import annotations

from typing import Any

from agents.base import NoLegalMoveError, Policy
from agents.mcts import MCTSAgent
from agents.qlearning import QLearningAgent
from agents.random_agent import RandomAgent
from agents.registry import agent_from_spec, agent_names, make_agent, register_agent
from agents.solver import SolverAgent

__all__ = [
    "Policy",
    "NoLegalMoveError",
    "RandomAgent",
    "MCTSAgent",
    "SolverAgent",
    "QLearningAgent",
    "make_agent",
    "register_agent",
    "agent_names",
    "agent_from_spec",
    "SB3Agent",
    "AlphaZeroAgent",
]


def __getattr__(name: str) -> Any:
    # SB3Agent and AlphaZeroAgent need torch (the train extra): imported on first use, so that
    # ``import agents`` stays light
    if name == "SB3Agent":
        from agents.sb3_agent import SB3Agent

        return SB3Agent
    if name == "AlphaZeroAgent":
        from agents.alphazero import AlphaZeroAgent

        return AlphaZeroAgent
    raise AttributeError(f"module 'agents' has no attribute {name!r}")
