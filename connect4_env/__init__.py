"""connect4_env: a fast, correct Connect Four for reinforcement learning.

- [`connect4_env.core`][connect4_env.core]: the pure rules (bitboards, any size and ``win_length``).
- `connect4_env.connect4_v0`: the PettingZoo AEC environment (``env()`` / ``raw_env()``).
- ``gymnasium.make("Connect4-v0")``: the single-agent view against a fixed opponent (registered on import);
  ``"Connect4Flat-v0"``: the same with a flat float32 observation (CleanRL's scripts).
- ``gymnasium.make("Connect4Text-v0")``: the same game as text for language models (`connect4_env.envs.text_env`).
- [`Connect4Env`][connect4_env.envs.gym_env.Connect4Env] /
  [`Connect4VectorEnv`][connect4_env.envs.vector_env.Connect4VectorEnv]: the classes behind ``Connect4-v0`` and its
  vector form; `Policy`: the protocol every opponent and agent follows;
  [`OpponentPool`][connect4_env.pool.OpponentPool]: named opponents drawn per episode (self-play, leagues).
- ``pettingzoo.make("aec", "connect4_env/connect4_v0")`` and ``pettingzoo.make("parallel", ...)``: the AEC env
  and its Parallel view (``connect4_v0.parallel_env()``) from PettingZoo's registry (registered on import,
  PettingZoo >= 1.27).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import pettingzoo

from connect4_env import connect4_v0
from connect4_env.core import Board
from connect4_env.encoding import action_mask, board_from_observation, observation_planes
from connect4_env.envs.gym_env import Connect4Env
from connect4_env.envs.vector_env import Connect4VectorEnv
from connect4_env.policy import Policy
from connect4_env.pool import OpponentPool
from connect4_env.rules import IllegalMoveError, Rules

__all__ = [
    "Board",
    "Rules",
    "IllegalMoveError",
    "Connect4Env",
    "Connect4VectorEnv",
    "Policy",
    "OpponentPool",
    "connect4_v0",
    "observation_planes",
    "action_mask",
    "board_from_observation",
    "make_sb3_vec_env",
    "PETTINGZOO_ID",
]
__version__ = "0.1.0"
PETTINGZOO_ID = "connect4_env/connect4_v0"


def make_sb3_vec_env(n_envs: int = 8, monitor: bool = True, **env_kwargs: Any) -> Any:
    """``n_envs`` batched ``Connect4-v0`` games as a Stable-Baselines3 ``VecEnv`` (needs the ``train`` extra).

    See [`connect4_env.integrations.sb3.make_sb3_vec_env`][connect4_env.integrations.sb3.make_sb3_vec_env].
    """
    from connect4_env.integrations.sb3 import make_sb3_vec_env as make

    return make(n_envs, monitor=monitor, **env_kwargs)


if "Connect4-v0" not in gymnasium.registry:
    gymnasium.register(
        id="Connect4-v0",
        entry_point="connect4_env.envs.gym_env:make_env",
        vector_entry_point="connect4_env.envs.vector_env:Connect4VectorEnv",
        # the entry point applies Gymnasium's checker itself, in a version a failed call leaves unchanged
        disable_env_checker=True,
    )
# the same game with a flat float32 observation, for scripts that feed it to a linear layer (CleanRL)
if "Connect4Flat-v0" not in gymnasium.registry:
    gymnasium.register(
        id="Connect4Flat-v0", entry_point="connect4_env.envs.gym_env:make_flat_env", disable_env_checker=True
    )
# text in, text out, for language models (connect4_env.envs.text_env; served over OpenEnv by connect4 serve-openenv)
if "Connect4Text-v0" not in gymnasium.registry:
    gymnasium.register(
        id="Connect4Text-v0", entry_point="connect4_env.envs.text_env:make_text_env", disable_env_checker=True
    )


# PettingZoo >= 1.27 keeps a registry as Gymnasium does; older versions have none (use connect4_v0.env()).
def _in_pettingzoo_registry(api: str) -> bool:
    try:
        pettingzoo.spec(api, PETTINGZOO_ID)  # ids are normalised there ("connect4_env/connect4-v0")
    except Exception:  # PettingZoo raises its own error type for unknown ids
        return False
    return True


if callable(getattr(pettingzoo, "register", None)):
    if not _in_pettingzoo_registry("aec"):
        pettingzoo.register("aec", PETTINGZOO_ID, entry_point="connect4_env.envs.pettingzoo_env:env")
    if not _in_pettingzoo_registry("parallel"):
        pettingzoo.register(
            "parallel", PETTINGZOO_ID, entry_point="connect4_env.envs.parallel_env:parallel_env"
        )
