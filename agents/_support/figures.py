"""Figures for the scripts' plots: matplotlib without a display, saved atomically (the ``train`` extra)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from connect4_agents._support.extras import require
from connect4_agents._support.files import atomic_write

__all__ = ["pyplot", "save_figure"]

_FORMATS = ("png", "svg", "pdf", "jpg", "jpeg")


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend (no window, works without a display).

    Raises:
        MissingExtraError: matplotlib (the ``train`` extra) is not installed.
    """
    matplotlib = require("matplotlib", "train", "a plot")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(figure: Any, path: str | os.PathLike[str], dpi: int = 100, format: str | None = None) -> Path:
    """Write ``figure`` to ``path`` atomically and close it; returns the path.

    ``format``: the file format; None takes it from the suffix (png, svg, pdf, jpg), png otherwise.
    """
    path = Path(path)
    if format is None:
        suffix = path.suffix[1:].lower()
        format = suffix if suffix in _FORMATS else "png"
    try:
        atomic_write(path, lambda stream: figure.savefig(stream, format=format, dpi=dpi))
    finally:
        pyplot().close(figure)
    return path
