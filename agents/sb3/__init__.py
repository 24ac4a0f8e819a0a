"""Stable-Baselines3 models as policies ([`SB3Agent`][connect4_agents.sb3.agent.SB3Agent]), their safe file
loading and their training.

Importing this package does not import torch; loading or training a model needs the ``train`` extra.
"""

from __future__ import annotations

from connect4_agents.sb3.agent import SB3Agent

__all__ = ["SB3Agent"]
