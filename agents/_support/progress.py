"""One progress bar for every long run (training, matches, tournaments): tqdm when installed, else none."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["progress_bar", "write_line"]


def progress_bar(total: int | None, description: str, unit: str = "it", initial: int = 0) -> Any:
    """A tqdm bar of ``total`` steps (None: a counter with no end) starting at ``initial`` (a resumed run's
    progress: its rate and ETA count only what is done from there), or None when tqdm (the ``train`` extra) is
    not installed.

    Callers write ``if bar is not None: bar.update(1)`` and close it in a ``finally``.
    """
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc=description, unit=unit, mininterval=0.5, initial=initial)


def write_line(text: str) -> None:
    """Print a line to stdout while a progress bar may be drawn: through ``tqdm.write`` when tqdm is installed
    (the bar is cleared first and redrawn below the line, so the line never lands on the bar's own line when
    stdout and stderr share a terminal or a log file), else ``print``.
    """
    try:
        from tqdm.auto import tqdm
    except ImportError:
        print(text, flush=True)
        return
    tqdm.write(text)
    sys.stdout.flush()
