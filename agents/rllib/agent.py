"""An RLlib RLModule (trained with `connect4_env.integrations.rllib`'s layout) as a policy for the arena and the envs."""

from __future__ import annotations

from typing import Any

import numpy as np

from connect4_agents.base import RulesAware, check_mask_width, legal_columns, unpack

__all__ = ["RLlibAgent"]


class RLlibAgent(RulesAware):
    """Plays the legal column with the highest logit of an action-masking RLModule (greedy, no sampling).

    Args:
        module: a torch RLModule whose input is ``{"observations", "action_mask"}`` as
            `connect4_env.integrations.rllib.Connect4MultiAgentEnv` gives it (``algo.get_module("shared")``).
    """

    name = "rllib"
    restricted_masks = True  # its best column among those the mask allows (a shield narrows it)

    def __init__(self, module: Any) -> None:
        self.module = module

    def act(self, observation: Any, action_mask: Any = None) -> int:
        """The best legal column by the module's logits.

        Raises:
            ValueError: the mask's length is not the board's width, or it allows no column.
        """
        import torch

        planes, mask = unpack(observation, action_mask)
        mask = np.asarray(mask)
        check_mask_width(mask, np.asarray(planes).shape[1])
        legal = legal_columns(mask)
        batch = {
            "obs": {
                "observations": torch.as_tensor(np.asarray(planes, dtype=np.float32).reshape(1, -1)),
                "action_mask": torch.as_tensor(mask.astype(np.float32)[None]),
            }
        }
        with torch.no_grad():
            logits = self.module.forward_inference(batch)["action_dist_inputs"][0].cpu().numpy()
        return int(legal[int(np.argmax(logits[legal]))])

    def __repr__(self) -> str:
        return "RLlibAgent()"
