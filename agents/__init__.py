"""External policies for connect4_env: each consumes ``(observation, action_mask)`` and returns a column."""

from __future__ import annotations

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
]
