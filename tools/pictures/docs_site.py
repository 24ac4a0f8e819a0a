"""Screenshots of the documentation site: its home page and the MCTS tutorial, as Chromium shows them.

Builds the site (as ``make docs`` does) into a temporary folder, serves it on a local port, and saves
``site-index.png`` and ``site-mcts-tutorial.png`` under ``--out`` (default ``docs/img``). Needs the ``docs``
extra and Chromium (``apt-get install chromium``). tests/test_site.py uses the same functions to check the
built site in the browser.

    python tools/pictures/docs_site.py [--out docs/img]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = {"site-index.png": "", "site-mcts-tutorial.png": "tutorials/mcts/"}
BROWSER_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars"]


def build_site(site: Path) -> None:
    """Build the site strictly into ``site`` (the mkdocstrings links in build/typecheck made first).

    Raises:
        RuntimeError: the build failed (its last output lines say why).
    """
    links = ROOT / "build" / "typecheck"
    links.mkdir(parents=True, exist_ok=True)
    for name, target in (("connect4_agents", "agents"), ("connect4_env", "connect4_env")):
        link = links / name
        if not link.is_symlink():
            with contextlib.suppress(FileExistsError):  # made meanwhile by another build (test workers)
                link.symlink_to(Path("..", "..", target))
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env, check=False)
    if result.returncode != 0:
        raise RuntimeError("mkdocs build failed:\n" + result.stderr[-3000:])


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


@contextlib.contextmanager
def serve(site: Path) -> Iterator[str]:
    """Serve ``site`` on a free local port for the ``with`` block; yields the base URL (ending in ``/``)."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def chromium() -> str | None:
    """The Chromium (or Chrome) on the PATH, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def browser(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run headless Chromium with ``args``.

    Raises:
        RuntimeError: no Chromium on the PATH.
    """
    path = chromium()
    if path is None:
        raise RuntimeError("chromium is not installed (apt-get install chromium)")
    return subprocess.run(
        [path, *BROWSER_FLAGS, *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def screenshot(url: str, path: Path, size: str = "1280,900") -> None:
    """Save what Chromium shows at ``url`` as a PNG.

    Raises:
        RuntimeError: Chromium is missing or wrote no picture.
    """
    result = browser(f"--window-size={size}", "--virtual-time-budget=3000", f"--screenshot={path}", url)
    if result.returncode != 0 or not path.exists():
        raise RuntimeError(f"chromium made no screenshot of {url}: {result.stderr[-2000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img", help="folder for the screenshots")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    site = ROOT / "build" / "site-pictures"
    build_site(site)
    with serve(site) as base:
        for name, page in PAGES.items():
            screenshot(base + page, args.out / name)
            print(f"wrote {args.out / name}")


if __name__ == "__main__":
    main()
