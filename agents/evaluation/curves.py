"""The learning curve of a training run: per window of episodes, mean return and win/draw/loss rates."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from connect4_agents._support.figures import pyplot, save_figure

__all__ = ["LearningCurve"]


@dataclass
class LearningCurve:
    """Per window of episodes: the learner's mean return and its win, draw and loss rates."""

    window: int
    episodes: list[int] = field(default_factory=list)
    mean_return: list[float] = field(default_factory=list)
    win_rate: list[float] = field(default_factory=list)
    draw_rate: list[float] = field(default_factory=list)
    loss_rate: list[float] = field(default_factory=list)
    epsilon: list[float] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The curve as a JSON-ready dict of its fields: ``window`` and the per-window lists ``episodes``,
        ``mean_return``, ``win_rate``, ``draw_rate``, ``loss_rate`` and ``epsilon`` (the lists themselves, not
        copies).
        """
        return {
            k: getattr(self, k)
            for k in ("window", "episodes", "mean_return", "win_rate", "draw_rate", "loss_rate", "epsilon")
        }

    def plot(self, path: str | os.PathLike[str], title: str = "Q-learning") -> Path:
        """Save the curve as a PNG (needs matplotlib, in the ``train`` extra)."""
        figure, (top, bottom) = pyplot().subplots(2, 1, figsize=(7, 6), sharex=True)
        top.plot(self.episodes, self.mean_return, color="tab:blue")
        top.set_ylabel(f"mean return per {self.window} episodes")
        top.set_title(title)
        bottom.plot(self.episodes, self.win_rate, label="win", color="tab:green")
        bottom.plot(self.episodes, self.draw_rate, label="draw", color="tab:gray")
        bottom.plot(self.episodes, self.loss_rate, label="loss", color="tab:red")
        bottom.set_ylabel("rate")
        bottom.set_xlabel("episodes")
        bottom.set_ylim(0, 1)
        bottom.legend()
        figure.tight_layout()
        return save_figure(figure, path, dpi=100, format="png")
