"""Atomic file writes: a temporary file in the target folder, renamed over the target when complete."""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from connect4_env.extras import MissingExtraError

T = TypeVar("T")

__all__ = [
    "atomic_write",
    "atomic_write_json",
    "check_file_target",
    "is_version",
    "require_safe_torch",
    "read_json_lines",
    "read_text_limited",
    "read_zip_member",
    "json_lines",
    "parse_json",
    "MAX_JSON_DEPTH",
]

MAX_JSON_DEPTH = 64  # our formats nest at most ~5 deep; Python's parser would recurse until RecursionError
# torch.load(weights_only=True) keeps a file's code from running only from torch 2.6 on (CVE-2025-32434)
SAFE_TORCH = (2, 6)


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, someone else's
        return True
    return True


def _remove_stale_temporaries(path: Path) -> None:
    """Delete ``.{name}.{pid}.*.tmp`` files left beside ``path`` by writers that died (SIGKILL, power loss)."""
    prefix = f".{path.name}."
    try:
        candidates = [
            p for p in path.parent.iterdir() if p.name.startswith(prefix) and p.name.endswith(".tmp")
        ]
    except OSError:
        return
    for candidate in candidates:
        pid = candidate.name[len(prefix) :].split(".", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _process_alive(int(pid)):
            candidate.unlink(missing_ok=True)


def is_version(value: object, expected: int) -> bool:
    """Whether a file's ``"version"`` field is the integer ``expected``: JSON's ``true`` and ``1.0`` equal 1
    in Python, and are not a version.
    """
    return type(value) is int and value == expected


def require_safe_torch(torch: Any, what: str) -> None:
    """Refuse to read model weights with a torch whose ``torch.load(weights_only=True)`` is not safe.

    Before torch 2.6 a crafted file runs code even with ``weights_only=True`` (CVE-2025-32434), so our loaders,
    which rely on it, refuse those releases instead of loading.

    Args:
        torch: the imported torch module.
        what: what needs it, for the message, e.g. ``"loading an SB3 model"``.

    Raises:
        MissingExtraError: the installed torch is older than 2.6 (the message names its version).
    """
    match = re.match(r"(\d+)\.(\d+)", str(torch.__version__))
    if match is None or (int(match[1]), int(match[2])) < SAFE_TORCH:
        raise MissingExtraError(
            f"{what} needs torch {'.'.join(map(str, SAFE_TORCH))} or later, whose "
            f"torch.load(weights_only=True) runs no code from the file (CVE-2025-32434); found torch "
            f"{torch.__version__}: pip install --upgrade 'torch>=2.6'"
        )


def check_file_target(what: str, path: object) -> Path:
    """``path`` as a `Path` if a file can be written there: a path (str or os.PathLike), not a folder.

    Raises:
        TypeError: ``path`` is not a str or os.PathLike.
        ValueError: ``path`` is a folder (the message says ``what`` it is: "--json", "json_out").
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{what} must be a file path, got {path!r:.80} ({type(path).__name__})")
    if Path(path).is_dir():
        raise ValueError(f"{what} {path} is a folder; pass a file name")
    return Path(path)


def atomic_write(path: str | os.PathLike[str], write: Callable[[BinaryIO], object]) -> Path:
    """Call ``write(stream)`` on a temporary binary file beside ``path``, then rename it to ``path``.

    A crash or Ctrl-C part-way leaves the old file (or none), never a truncated one; temporaries left by a
    writer that was killed outright are removed by the next write to the same path. If ``path`` is a
    symbolic link, the file it points to is replaced and the link kept. The file gets the usual permissions
    (``0o666`` less the umask), not the temporary file's private ones.

    A target that exists and is not a regular file (``/dev/null``, a named pipe) is written to directly:
    renaming over it would replace the device or pipe with a file.

    Returns:
        The path written (the link's target when ``path`` is a link).
    """
    path = Path(os.path.realpath(path))
    if path.exists() and not path.is_file() and not path.is_dir():
        with open(path, "wb") as stream:
            write(stream)
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(path)
    handle, temporary = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp"
    )
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
    """Write ``data`` as indented JSON through `atomic_write`."""
    return atomic_write(path, lambda stream: stream.write(json.dumps(data, indent=2).encode()))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def parse_json(text: str | bytes, what: str, *, allow_nan: bool = False) -> Any:
    """Decode untrusted JSON: every reader of a file or argument goes through here.

    Args:
        text: the JSON document.
        what: what it holds, for messages (e.g. ``"Q-table metadata"``).
        allow_nan: accept ``NaN`` and ``Infinity`` (refused by default: no format of ours writes them).

    Returns:
        The decoded value.

    Raises:
        ValueError: not JSON (``json.JSONDecodeError`` is a ValueError), not UTF-8, a refused constant, or
            arrays/objects nested more than `MAX_JSON_DEPTH` deep (Python's parser and every walk of the
            value recurse, so a deep document would otherwise end in ``RecursionError``).
    """
    try:
        value = json.loads(text) if allow_nan else json.loads(text, parse_constant=_no_constant)
    except UnicodeDecodeError as error:
        raise ValueError(f"{what} is not UTF-8 text ({error})") from None
    except RecursionError:
        raise ValueError(f"{what} nests arrays/objects more than {MAX_JSON_DEPTH} deep") from None
    # iteratively, as a recursive walk of a deep value is what fails
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth >= MAX_JSON_DEPTH:
                    raise ValueError(f"{what} nests arrays/objects more than {MAX_JSON_DEPTH} deep")
                pending.append((child, depth + 1))
    return value


def read_text_limited(path: str | os.PathLike[str], max_bytes: int, what: str) -> str:
    """The UTF-8 text of ``path``, read no further than ``max_bytes`` + 1 bytes.

    Raises:
        ValueError: the file is over ``max_bytes`` or not UTF-8 (``what`` names the content).
        OSError: the file cannot be read.
    """
    with open(path, "rb") as raw:
        data = raw.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ValueError(f"{path}: over {max_bytes:,} bytes of {what}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: {what} are not UTF-8 text ({error})") from None


def read_zip_member(archive: zipfile.ZipFile, name: str, limit: int) -> bytes:
    """The bytes of the member `name` of `archive`, at most `limit` of them.

    The member's declared size (its header's) is checked against `limit` before anything is decompressed,
    and the reading stops at `limit + 1` bytes whatever the header says, so a member that lies about its size
    (a deflate stream of zeros declared small) costs at most `limit + 1` bytes of memory.

    Raises:
        KeyError: no such member.
        ValueError: declared or found larger than `limit`, or unreadable: a bad CRC or deflate stream, a
            truncated member, an encrypted one, an unknown compression method (the message starts with
            `name`; callers put the file's path in front).
    """
    info = archive.getinfo(name)
    if info.file_size > limit:
        raise ValueError(f"{name} is {info.file_size:,} bytes; allowed: at most {limit:,}")
    try:
        with archive.open(info) as member:
            data = member.read(limit + 1)
    except (zipfile.BadZipFile, zlib.error, EOFError, RuntimeError, NotImplementedError) as error:
        raise ValueError(f"{name} cannot be read from the zip ({error})") from None
    if len(data) > limit:
        raise ValueError(f"{name} is larger than the zip says")
    return data


def read_json_lines(
    path: str | os.PathLike[str], max_bytes: int, what: str, build: Callable[[Any], T]
) -> list[T]:
    """``build(value)`` for the JSON value of each non-blank line of ``path`` (see `json_lines`); a
    ValueError from ``build`` is raised again with the file and the line number in front.
    """
    built = []
    for number, value in json_lines(path, max_bytes, what):
        try:
            built.append(build(value))
        except ValueError as error:
            raise ValueError(f"{path}, line {number}: {error}") from None
    return built


def json_lines(path: str | os.PathLike[str], max_bytes: int, what: str) -> Iterator[tuple[int, Any]]:
    """The decoded JSON value of each non-blank line of ``path`` (``.gz`` content is decompressed), with its
    line number. NaN and Infinity are refused.

    Raises:
        ValueError: the file is over ``max_bytes`` (decompressed), not readable gzip, or a line is not JSON
            (the message names the file and the line; ``what`` names the content, e.g. "positions").
        OSError: the file cannot be read.
    """
    path = Path(path)
    with open(path, "rb") as raw:
        data = raw.read(max_bytes + 1)
    if data[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
                data = stream.read(max_bytes + 1)
        except (OSError, EOFError) as error:
            raise ValueError(f"{path}: not a readable gzip file ({error})") from None
    if len(data) > max_bytes:
        raise ValueError(f"{path}: over {max_bytes >> 20} MB of {what}")
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = parse_json(line, what)
        except ValueError as error:
            raise ValueError(f"{path}, line {number}: not JSON ({error})") from None
        yield number, value
