"""Headless Chromium for the browser tests, through tools/pictures/docs_site.py (the script that also takes the
docs' screenshots): one lookup of the browser, one set of flags, and one rule when it is missing — the test
skips, or fails on CI, where .ci/run installs it."""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path

import pytest

_SCRIPT = Path(__file__).resolve().parents[2] / "tools" / "pictures" / "docs_site.py"
_SPEC = importlib.util.spec_from_file_location("docs_site", _SCRIPT)
assert _SPEC is not None and _SPEC.loader is not None
site_tools = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(site_tools)


def require_chromium() -> str:
    """The Chromium on the PATH; skips the test without one (fails it on CI)."""
    path = site_tools.chromium()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs chromium for the browser tests (.ci/run installs it)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return str(path)


def browser(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Headless Chromium run with ``args`` (see `require_chromium` when there is none)."""
    require_chromium()
    return site_tools.browser(*args, timeout=timeout)
