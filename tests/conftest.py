from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

try:  # the RLlib venv runs a few tests without the dev extra's Hypothesis
    from hypothesis import settings
except ModuleNotFoundError:
    settings = None

# No test depends on the wall clock: Hypothesis' default deadline (200 ms an example) failed examples that a
# busy machine ran slowly, so every property test runs without one (a test's own @settings may still bound
# its examples by count).
if settings is not None:
    settings.register_profile("no-deadline", deadline=None)
    settings.load_profile("no-deadline")

# Windows open on a dummy video driver in tests (no display on CI).
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
sys.path.insert(0, str(Path(__file__).parent))
# SB3 makes an empty SB3-<date> folder in the system temp dir for each model built with verbose=0 and no
# tensorboard_log (the docs' examples): here they go to one folder per process, removed at its exit
# (subprocesses inherit it).
if "SB3_LOGDIR" not in os.environ:
    os.environ["SB3_LOGDIR"] = tempfile.mkdtemp(prefix="sb3-logs-")
    atexit.register(shutil.rmtree, os.environ["SB3_LOGDIR"], ignore_errors=True)


@pytest.fixture(scope="session")
def sb3_model() -> Iterator[Callable[[], Path]]:
    """A function returning a tiny trained MaskablePPO model file, trained on first use only, once per
    process (the examples that load ``runs/sb3/model.zip`` get a copy; see examples.py)."""
    from helpers.examples import sb3_model_folder

    folder = Path(tempfile.mkdtemp(prefix="sb3-model-"))
    made: list[Path] = []

    def get() -> Path:
        if not made:
            made.append(sb3_model_folder(folder) / "runs" / "sb3" / "model.zip")
        return made[0]

    yield get
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(autouse=True)
def _no_loading_thread_outlives_its_test() -> Iterator[None]:
    """A Kaggle submission loads its kernels and policy in daemon threads, which set Python's switch interval
    while they run and set it back when the last one ends. One left running after its test (compiling for
    minutes where numba is cold) made the next test in its worker see a loading process, and a test that
    changed the interval meanwhile restored the loading one for good: three Kaggle tests failed by the order
    xdist gave them. Each test's loading threads end before the next test starts, and the interval is set back."""
    import threading
    import time
    import warnings

    interval = sys.getswitchinterval()
    yield
    deadline = time.monotonic() + 120  # real kernels compile for a minute or two where numba is cold
    for thread in threading.enumerate():
        if getattr(thread, "connect4_kaggle_loading", False):
            thread.join(max(0.0, deadline - time.monotonic()))
            if (
                thread.is_alive()
            ):  # a test that failed left it waiting on its event: no longer counted as loading
                thread.connect4_kaggle_loading = False  # type: ignore[attr-defined]
                warnings.warn(f"the loading thread {thread.name!r} outlived its test", stacklevel=1)
    if sys.getswitchinterval() != interval:
        sys.setswitchinterval(interval)
