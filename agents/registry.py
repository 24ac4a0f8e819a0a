"""Agents by name, as ``Connect4-v0``'s ``opponent=`` and the scripts use them.

The registry itself lives at the policy boundary (:mod:`connect4_env.policy`), so the envs resolve names
without importing this package; these are its names on the agents' side. The built-in agents are declared as
entry points (``connect4_env.policies`` in ``pyproject.toml``): ``random``, ``human``, ``mcts``, ``solver``,
``qlearning``, ``sb3``.
"""

from __future__ import annotations

from connect4_env.policy import make_policy, policy_from_spec, policy_names, register_policy

__all__ = ["make_agent", "register_agent", "agent_names", "agent_from_spec"]

make_agent = make_policy
register_agent = register_policy
agent_names = policy_names
agent_from_spec = policy_from_spec
