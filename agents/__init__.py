"""connect4_agents: policies for connect4_env, each consuming ``(observation, action_mask)`` and returning a
column. Installed from the repository's ``agents/`` folder under the import name ``connect4_agents`` (the
name ``agents`` belongs to other packages, such as the OpenAI Agents SDK).

One subpackage per family (``mcts``, ``solver``, ``qlearning``, ``ntuple``, ``sb3``, ``rllib``, ``alphazero``), the
measurements in ``evaluation``, the play window and replay page in ``ui``. The public names are importable from
here: ``from connect4_agents import MCTSAgent, make_policy``.
"""

from __future__ import annotations

from typing import Any

from connect4_agents import alphazero  # light: its torch modules load on first use
from connect4_agents.base import NoLegalMoveError
from connect4_agents.human import HumanAgent
from connect4_agents.mcts import MCTSAgent
from connect4_agents.ntuple import NTupleAgent
from connect4_agents.qlearning import QLearningAgent
from connect4_agents.random_agent import RandomAgent
from connect4_agents.rllib import RLlibAgent
from connect4_agents.sb3 import SB3Agent
from connect4_agents.shield import Shield
from connect4_agents.solver import SolverAgent
from connect4_env.policy import Policy, make_policy, policy_from_spec, policy_names, register_policy

__all__ = [
    "Policy",
    "NoLegalMoveError",
    "RandomAgent",
    "HumanAgent",
    "MCTSAgent",
    "SolverAgent",
    "QLearningAgent",
    "NTupleAgent",
    "SB3Agent",
    "RLlibAgent",
    "AlphaZeroAgent",
    "Shield",
    "make_policy",
    "register_policy",
    "policy_names",
    "policy_from_spec",
]

# The registry lives at the policy boundary (connect4_env.policy) so the envs resolve names without importing
# this package; the agents' root exports it under its one set of names. The names themselves are the entry
# points of the ``connect4_env.policies`` group in pyproject.toml.


def __getattr__(name: str) -> Any:
    # AlphaZeroAgent's module imports torch (the train extra): imported on first use, so that
    # ``import connect4_agents`` stays light
    if name == "AlphaZeroAgent":
        return alphazero.AlphaZeroAgent  # raises MissingExtraError naming the train extra on a core install
    raise AttributeError(f"module 'connect4_agents' has no attribute {name!r}")
