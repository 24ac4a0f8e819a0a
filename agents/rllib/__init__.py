"""RLlib modules as policies ([`RLlibAgent`][connect4_agents.rllib.agent.RLlibAgent]); RLlib itself runs in
its own venv (``make test-rllib``).
"""

from __future__ import annotations

from connect4_agents.rllib.agent import RLlibAgent

__all__ = ["RLlibAgent"]
