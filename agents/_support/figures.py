"""Figures for the commands' plots: matplotlib without a display, saved atomically (the ``train`` extra)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from connect4_agents._support.files import atomic_write
from connect4_env.extras import require

__all__ = ["pyplot", "save_figure", "check_figure_path"]

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


def check_figure_path(name: str, path: Path) -> Path:
    """``path`` for a picture: its suffix names a format `save_figure` writes (.png, .svg, .pdf, .jpg,
    .jpeg; none: png), checked before any work so that ``--plot x.txt`` is not a PNG named ``x.txt``.

    Raises:
        ValueError: another suffix (named, with the allowed ones).
    """
    suffix = path.suffix[1:].lower()
    if suffix and suffix not in _FORMATS:
        allowed = ", ".join(f".{f}" for f in _FORMATS)
        raise ValueError(
            f"{name} {str(path)!r}: a picture is written as {allowed} (or no suffix: png), not .{suffix}"
        )
    return path


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
