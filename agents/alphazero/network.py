"""The policy/value network: a small residual CNN over the ``(rows, columns, 2)`` planes, any board size.

Input: the mover's planes (plane 0 its stones, plane 1 the opponent's), as ``(batch, 2, rows, columns)``.
Trunk: a 3x3 convolution to ``channels`` feature maps and ``blocks`` residual blocks (two 3x3 convolutions
with batch norm each). Policy head: for each column, the features of the cell where a stone would land
there, joined with the board's mean features, through two 1x1 layers to one logit per column. Value head: the
board's mean and max features through a small MLP to ``tanh``, the expected result for the player to move.
No layer depends on the board's size, so one network runs on any board (a saved model is still bound to the
size it was trained on).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from connect4_env.core import Board
from connect4_env.encoding import observation_planes
from connect4_env.validation import check_choice

__all__ = ["PolicyValueNet", "NetworkEvaluator", "planes_tensor", "count_parameters"]


class _Block(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(y)))


class PolicyValueNet(nn.Module):
    """Policy logits (one per column) and a value in [-1, 1] for the player to move."""

    def __init__(self, channels: int = 64, blocks: int = 4) -> None:
        super().__init__()
        self.channels = int(channels)
        self.blocks = int(blocks)
        self.stem = nn.Sequential(
            nn.Conv2d(2, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels), nn.ReLU()
        )
        self.trunk = nn.Sequential(*[_Block(channels) for _ in range(blocks)])
        self.policy = nn.Sequential(
            nn.Conv1d(2 * channels, channels, 1), nn.ReLU(), nn.Conv1d(channels, 1, 1)
        )
        self.value = nn.Sequential(nn.Linear(2 * channels, 64), nn.ReLU(), nn.Linear(64, 1), nn.Tanh())

    def config(self) -> dict[str, int]:
        return {"channels": self.channels, "blocks": self.blocks}

    def forward(self, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        rows = planes.shape[2]
        features = self.trunk(self.stem(planes))  # (B, F, R, C)
        heights = planes.sum(dim=(1, 2))  # stones per column, (B, C)
        landing = (rows - 1 - heights).clamp(min=0).long()  # row index (0 = top) where a stone would land
        index = landing[:, None, None, :].expand(-1, features.shape[1], 1, -1)
        local = features.gather(2, index).squeeze(2)  # (B, F, C)
        mean = features.mean(dim=(2, 3))
        joined = torch.cat([local, mean[:, :, None].expand_as(local)], dim=1)
        logits = self.policy(joined).squeeze(1)  # (B, C)
        pooled = torch.cat([mean, features.amax(dim=(2, 3))], dim=1)
        return logits, self.value(pooled).squeeze(1)


def planes_tensor(planes: np.ndarray) -> torch.Tensor:
    """``(batch, rows, columns, 2)`` planes as the network's ``(batch, 2, rows, columns)`` float tensor."""
    return torch.from_numpy(np.ascontiguousarray(np.asarray(planes, dtype=np.float32).transpose(0, 3, 1, 2)))


class NetworkEvaluator:
    """The network as an :class:`connect4_agents.mcts.puct.Evaluator`: softmax priors over the legal columns and values,
    one forward pass per batch of positions (no gradients, eval mode). ``symmetric``: each position is also
    evaluated mirrored (left to right, in the same forward pass) and the two logits and values averaged, the
    game being symmetric under that reflection. ``precision``: ``"float32"`` (default) or ``"bfloat16"``, the
    forward passes under ``torch.autocast`` (about 3x faster on CPUs with AMX; the outputs differ from float32's
    by bfloat16's rounding, about 1e-2 in the logits)."""

    def __init__(self, net: PolicyValueNet, symmetric: bool = False, precision: str = "float32") -> None:
        self.net = net
        self.symmetric = bool(symmetric)
        self.precision = check_choice("precision", precision, ("float32", "bfloat16"))

    def evaluate(self, boards: Sequence[Board]) -> tuple[np.ndarray, np.ndarray]:
        planes = np.stack([observation_planes(board) for board in boards])
        if self.symmetric:
            count = len(boards)
            logits, values = self.predict(np.concatenate([planes, planes[:, :, ::-1, :]]))
            logits = (logits[:count] + logits[count:, ::-1]) / 2
            values = (values[:count] + values[count:]) / 2
        else:
            logits, values = self.predict(planes)
        masks = np.stack([[board.is_legal(c) for c in range(board.rules.columns)] for board in boards])
        logits = np.where(masks, logits, -np.inf)
        logits -= logits.max(axis=1, keepdims=True)
        priors = np.exp(logits)
        return priors / priors.sum(axis=1, keepdims=True), values

    def predict(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Raw logits and values for ``(batch, rows, columns, 2)`` planes."""
        self.net.eval()
        with (
            torch.inference_mode(),
            torch.autocast("cpu", torch.bfloat16, enabled=self.precision == "bfloat16"),
        ):
            logits, values = self.net(planes_tensor(planes))
        return logits.float().numpy().astype(np.float64), values.float().numpy().astype(np.float64)


def count_parameters(net: Any) -> int:
    return int(sum(p.numel() for p in net.parameters()))
