"""AlphaZero-style learning: a policy/value network guiding a PUCT search (needs torch: the ``train`` extra)."""

from connect4_agents.alphazero.agent import DEFAULT_SIMULATIONS, AlphaZeroAgent
from connect4_agents.alphazero.files import ModelFile, load_model, save_model
from connect4_agents.alphazero.network import NetworkEvaluator, PolicyValueNet

__all__ = [
    "AlphaZeroAgent",
    "DEFAULT_SIMULATIONS",
    "ModelFile",
    "load_model",
    "save_model",
    "NetworkEvaluator",
    "PolicyValueNet",
]
