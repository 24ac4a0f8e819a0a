"""Tabular Q-learning: the agent, its training loop and its ``.npz`` file format."""

from __future__ import annotations

from connect4_agents.qlearning.agent import QLearningAgent, canonical_key

__all__ = ["QLearningAgent", "canonical_key"]
