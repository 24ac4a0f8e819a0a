"""atomic_write: a regular file is replaced whole; a device or a named pipe is written to, never replaced."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from connect4_agents._support.files import atomic_write


def test_a_regular_file_is_replaced_whole(tmp_path: Path) -> None:
    path = tmp_path / "out" / "file.bin"
    assert atomic_write(path, lambda stream: stream.write(b"one")) == path and path.read_bytes() == b"one"
    with pytest.raises(RuntimeError):
        atomic_write(
            path, lambda stream: (stream.write(b"half"), (_ for _ in ()).throw(RuntimeError("stop")))
        )
    assert path.read_bytes() == b"one" and sorted(p.name for p in path.parent.iterdir()) == ["file.bin"]


def test_dev_null_stays_a_device() -> None:
    devnull = Path(os.devnull)
    before = devnull.stat()
    atomic_write(devnull, lambda stream: stream.write(b"x" * 1000))
    after = devnull.stat()
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_is_written_through(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    atomic_write(fifo, lambda stream: stream.write(b"through the pipe"))
    reader.join(timeout=10)
    assert received == [b"through the pipe"] and stat.S_ISFIFO(fifo.stat().st_mode)
