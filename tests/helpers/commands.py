"""Running the ``connect4`` commands as a user would: a subprocess from the project root."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# ``connect4`` as this interpreter runs it (the installed launcher may belong to another environment)
CONNECT4 = (sys.executable, "-m", "connect4_agents.commands")

# Seconds after which a run that should have reached its next step counts as hung. Only a hang guard: the
# tests wait for events (a line printed, a file written), never for a time, so nothing they assert depends on
# the machine's speed or load.
HANG_GUARD = 600


def run(*args: str, stdin: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``connect4 *args`` from the project root, output captured, never raising on a non-zero exit."""
    return subprocess.run(
        [*CONNECT4, *args],
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


def _own_session() -> None:
    default_sigint()
    os.setsid()


def start(*args: str, new_session: bool = False) -> subprocess.Popen[str]:
    """``connect4 *args`` in the background, pipes for its output, SIGINT at its default (see above).

    ``new_session``: the child leads a session of its own, so that `session_processes` finds everything
    it started (pool workers, Ray's daemons) and ``os.killpg`` reaches its group as a terminal's Ctrl-C does.
    """
    return subprocess.Popen(
        [*CONNECT4, *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_own_session if new_session else default_sigint,
    )


def session_processes(session: int) -> list[str]:
    """The processes alive in session ``session`` (pid, sid, command line)."""
    output = subprocess.run(
        ["ps", "-ww", "-eo", "pid=,sid=,args="], capture_output=True, text=True, check=True
    )
    return [line for line in output.stdout.splitlines() if line.split()[1] == str(session)]


def wait_for(condition: Callable[[], bool], process: subprocess.Popen[str], what: str) -> None:
    """Poll until ``condition()`` holds while ``process`` runs; fail, naming ``what``, if it ends first or
    the `HANG_GUARD` passes."""
    deadline = time.monotonic() + HANG_GUARD
    while not condition():
        if process.poll() is not None:
            raise AssertionError(f"the run ended (exit code {process.returncode}) before {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} after {HANG_GUARD} s: the run looks hung")
        time.sleep(0.2)


def read_until(process: subprocess.Popen[str], wanted: str | re.Pattern[str], stream: str = "stdout") -> str:
    """Read ``process``'s standard output (or ``stream="stderr"``) up to the first line holding ``wanted`` (a
    string, or a regex that must match in it); a progress bar's redrawn line (after ``\\r``) counts as a line.
    Returns the text read. Fails if the output ends first; a run still silent after the `HANG_GUARD` is
    killed."""
    source = getattr(process, stream)
    assert source is not None

    def holds(line: str) -> bool:
        return wanted in line if isinstance(wanted, str) else wanted.search(line) is not None

    guard = threading.Timer(HANG_GUARD, process.kill)
    guard.start()
    text: list[str] = []
    line: list[str] = []
    try:
        while char := source.read(1):
            text.append(char)
            if char not in "\r\n":
                line.append(char)
            elif holds("".join(line)):
                return "".join(text)
            else:
                line = []
    finally:
        guard.cancel()
    raise AssertionError(f"the output ended without {wanted!r}: {''.join(text)[-2000:]}")


def wait_gone(session: int, seconds: float = 60) -> list[str]:
    """Wait until session ``session`` has no process left; returns those still there after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not session_processes(session):
            return []
        time.sleep(0.2)
    return session_processes(session)


def signal_after(
    process: subprocess.Popen[str], first_line: str, signum: int, delay: float = 0, timeout: float = 60
) -> str:
    """Wait for ``first_line`` in the command's first line of output (then ``delay`` seconds), send it
    ``signum``, wait for its end; returns its standard error. Killed (its whole group when it leads one) if it
    does not end in time."""
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert first_line in line, line
        time.sleep(delay)
        os.kill(process.pid, signum)
        _, err = process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            if os.getpgid(process.pid) == process.pid:
                os.killpg(process.pid, signal.SIGKILL)
            else:
                process.kill()
            process.communicate()
    return err
