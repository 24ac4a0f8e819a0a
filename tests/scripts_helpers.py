"""Running the bundled scripts as a user would: a subprocess from the project root."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str, stdin: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python *args`` from the project root, output captured, never raising on a non-zero exit."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        input=stdin,
        timeout=timeout,
        check=False,
    )


def default_sigint() -> None:
    """``preexec_fn`` for a child that must see Ctrl-C: a shell that starts a job in the background hands it
    SIGINT ignored, and Python then installs no KeyboardInterrupt handler; restore the default, as a
    terminal would."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(*args: str) -> subprocess.Popen[str]:
    """``python *args`` in the background, pipes for its output, SIGINT at its default (see above)."""
    return subprocess.Popen(
        [sys.executable, *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )
