"""A small convolutional feature extractor for SB3 policies on the ``(rows, columns, 2)`` board planes."""

from __future__ import annotations

from typing import Any

import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

__all__ = ["BoardCNN"]


class BoardCNN(BaseFeaturesExtractor):
    """Two 3x3 convolutions (padding 1) over the planes, then a linear layer to ``features`` units."""

    def __init__(self, observation_space: Any, channels: int = 64, features: int = 256) -> None:
        super().__init__(observation_space, features)
        rows, columns, planes = observation_space.shape
        self.net = torch.nn.Sequential(
            torch.nn.Conv2d(planes, channels, 3, padding=1),
            torch.nn.ReLU(),
            torch.nn.Conv2d(channels, channels, 3, padding=1),
            torch.nn.ReLU(),
            torch.nn.Flatten(),
            torch.nn.Linear(channels * rows * columns, features),
            torch.nn.ReLU(),
        )

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        """``(batch, features)`` features of ``(batch, rows, columns, 2)`` float planes (SB3's
        ``BaseFeaturesExtractor.forward``).
        """
        return self.net(observations.permute(0, 3, 1, 2))
