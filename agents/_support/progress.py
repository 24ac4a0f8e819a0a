"""One progress bar for every long run (training, matches, tournaments): tqdm when installed, else none."""

from __future__ import annotations

from typing import Any

__all__ = ["progress_bar"]


def progress_bar(total: int, description: str, unit: str = "it") -> Any:
    """A tqdm bar of ``total`` steps, or None when tqdm (the ``train`` extra) is not installed.

    Callers write ``if bar is not None: bar.update(1)`` and close it in a ``finally``.
    """
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc=description, unit=unit, mininterval=0.5)
