"""Atomic file writes: a temporary file in the target folder, renamed over the target when complete."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

__all__ = ["atomic_write", "atomic_write_json"]


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def atomic_write(path: str | os.PathLike[str], write: Callable[[BinaryIO], object]) -> Path:
    """Call ``write(stream)`` on a temporary binary file beside ``path``, then rename it to ``path``.

    A crash or Ctrl-C part-way leaves the old file (or none), never a truncated one. The file gets the usual
    permissions (``0o666`` less the umask), not the temporary file's private ones.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            write(stream)
        os.chmod(temporary, _default_mode())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def atomic_write_json(path: str | os.PathLike[str], data: Any) -> Path:
    """Write ``data`` as indented JSON through :func:`atomic_write`."""
    return atomic_write(path, lambda stream: stream.write(json.dumps(data, indent=2).encode()))
