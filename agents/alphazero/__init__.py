"""AlphaZero-style learning: a policy/value network guiding a PUCT search (needs torch: the ``train`` extra).

``agent`` (the policy), ``network``, ``files`` (the safe model format), ``config`` (a training run's
settings), ``selfplay`` (games and the replay buffer), ``monitor`` (accuracy, Elo, logs, curve) and ``train``
(the driver). The names below import torch on first use, so ``import connect4_agents.alphazero.config`` (what a
command line needs) does not.
"""

from __future__ import annotations

import importlib
from typing import Any

from connect4_env.extras import require

__all__ = [
    "AlphaZeroAgent",
    "DEFAULT_SIMULATIONS",
    "ModelFile",
    "load_model",
    "save_model",
    "NetworkEvaluator",
    "PolicyValueNet",
    "AlphaZeroTrainConfig",
]

_HOMES = {
    "AlphaZeroAgent": "agent",
    "DEFAULT_SIMULATIONS": "agent",
    "ModelFile": "files",
    "load_model": "files",
    "save_model": "files",
    "NetworkEvaluator": "network",
    "PolicyValueNet": "network",
    "AlphaZeroTrainConfig": "config",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        if _HOMES[name] != "config":  # every other module imports torch: say which extra brings it
            require("torch", "train", f"connect4_agents.alphazero.{name}")
        return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
