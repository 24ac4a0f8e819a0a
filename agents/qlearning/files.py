"""The Q-table file format: a compressed ``.npz`` of plain arrays and JSON metadata, read without pickle.

Arrays: ``keys`` (n, key_bytes) uint8, little-endian canonical keys; ``q`` (n, columns) float64; ``meta``: a
JSON string with the format tag, version, board size, hyper-parameters and episodes trained.

Loading trusts nothing in the file: the zip's member list, every member's declared size, every array's header
(dtype, shape, order) and the metadata are checked before an array is read, and no member is read past the
bytes its checked header needs, whatever the zip declares; what loading allocates (the arrays *and* the agent's table of
Python objects built from them, about 250 bytes a state on 6x7) is capped by ``max_bytes`` before anything is
built; keys that are not positions of the declared board, and duplicate keys, are refused.

This module knows nothing of the agent: it writes and reads arrays and metadata
(`QTableFile`);
[`connect4_agents.qlearning.QLearningAgent.load`][connect4_agents.qlearning.agent.QLearningAgent.load] builds
the agent from them.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from connect4_agents._support.files import atomic_write, is_version, parse_json
from connect4_agents._support.npy import ARCHIVE_ERRORS, peek_npy, read_npy
from connect4_env.rules import Rules
from connect4_env.validation import check_int

__all__ = [
    "FILE_FORMAT",
    "FILE_VERSION",
    "DEFAULT_MAX_BYTES",
    "QTableFile",
    "save_qtable",
    "load_qtable",
    "key_bytes",
    "table_bytes_per_state",
]

FILE_FORMAT = "connect4_env.qtable"
FILE_VERSION = 1
DEFAULT_MAX_BYTES = 4 << 30  # decompressed arrays of a table file, at most (4 GiB)
_META_MAX_BYTES = 1 << 16
_MEMBERS = ("keys.npy", "q.npy", "meta.npy")
_KEY_CHUNK = 1 << 18  # keys checked per numpy pass (bounds the bit matrix to a few tens of MB)


def key_bytes(rules: Rules) -> int:
    """Bytes per stored key on this board (keys are below ``2 ** (columns * height + 1)``)."""
    return (rules.columns * rules.height + 8) // 8 + 1


def table_bytes_per_state(rules: Rules) -> int:
    """Bytes a loaded agent's table takes per state (a dict of Python ints to numpy rows), slightly over.

    Measured with tracemalloc: 252 bytes a state on 6x7 (the row array ~170, its key int ~32, the dict slot ~50).
    """
    return 208 + 8 * rules.columns + key_bytes(rules)


@dataclass(frozen=True)
class QTableFile:
    """The content of a table file, checked.

    Attributes:
        rules: the board the table plays.
        keys: (n, key bytes) uint8, little-endian canonical keys, each a position of ``rules``, no duplicates.
        q: (n, columns) float64, finite; row i belongs to key i.
        meta: the JSON metadata (hyper-parameters, episodes trained, ...), a dict.
    """

    rules: Rules
    keys: np.ndarray
    q: np.ndarray
    meta: dict[str, Any]

    def table(self) -> dict[int, np.ndarray]:
        """The table as the agent keeps it: canonical key -> its own copy of the row."""
        return {int.from_bytes(k.tobytes(), "little"): row.copy() for k, row in zip(self.keys, self.q)}


def save_qtable(
    path: str | os.PathLike[str], rules: Rules, table: Mapping[int, np.ndarray], settings: Mapping[str, Any]
) -> Path:
    """Write ``table`` (canonical key -> Q row) to ``path`` atomically; returns the path written.

    ``settings`` (hyper-parameters, episode counts) go into the metadata beside the board and state count.
    """
    width = key_bytes(rules)
    keys = sorted(table)
    key_array = np.frombuffer(b"".join(k.to_bytes(width, "little") for k in keys), dtype=np.uint8)
    key_array = key_array.reshape(len(keys), width)
    q = np.array([table[k] for k in keys], dtype=np.float64).reshape(len(keys), rules.columns)
    meta = {
        "format": FILE_FORMAT,
        "version": FILE_VERSION,
        "rows": rules.rows,
        "columns": rules.columns,
        "win_length": rules.win_length,
        **settings,
        "states": len(keys),
    }
    return atomic_write(
        path, lambda stream: np.savez_compressed(stream, keys=key_array, q=q, meta=np.array(json.dumps(meta)))
    )


def load_qtable(path: str | os.PathLike[str], max_bytes: int = DEFAULT_MAX_BYTES) -> QTableFile:
    """Read a table written by `save_qtable`, checking everything before reading the arrays.

    Args:
        path: the ``.npz`` file.
        max_bytes: the most bytes loading may allocate: the decompressed arrays plus the agent's table built
            from them (`table_bytes_per_state` a state; default 4 GiB, about 13 M states on 6x7).

    Returns:
        The checked arrays and metadata.

    Raises:
        FileNotFoundError: no file at ``path`` (a folder included).
        TypeError: ``max_bytes`` is not an integer.
        ValueError: ``max_bytes`` is below 1; or the file is not a Q-table file, is corrupt or truncated, has
            a board size, array shape, dtype or state count that disagrees with its metadata, needs more than
            ``max_bytes``, or holds keys that are not positions of the board, duplicate keys, NaN or infinite
            values, or metadata that is not JSON or nests too deeply.
    """
    max_bytes = check_int("max_bytes", max_bytes, 1)
    path = Path(path)
    if not path.is_file():
        folder = " (a folder; a Q-table is a .npz file)" if path.is_dir() else ""
        raise FileNotFoundError(f"no Q-table file at {path}{folder}")
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            names = [info.filename for info in infos]
            if sorted(names) != sorted(_MEMBERS):
                raise ValueError(
                    f"not a Q-table file: it holds {sorted(names)[:8]}, expected {list(_MEMBERS)}"
                )
            sizes = {info.filename: info.file_size for info in infos}
            if sizes["meta.npy"] > _META_MAX_BYTES:
                raise ValueError(
                    f"its metadata takes {sizes['meta.npy']:,} bytes (at most {_META_MAX_BYTES:,})"
                )
            meta_shape, meta_dtype = peek_npy(archive, "meta.npy")
            if meta_shape != () or meta_dtype.kind != "U":
                raise ValueError(f"its metadata is {meta_dtype} {meta_shape}, not a JSON string")
            if meta_dtype.itemsize > _META_MAX_BYTES:  # the string's declared width is what would be read
                raise ValueError(
                    f"its metadata is a string of {meta_dtype.itemsize:,} bytes (at most {_META_MAX_BYTES:,})"
                )
            meta = parse_json(str(read_npy(archive, "meta.npy", (), meta_dtype)[()]), "Q-table metadata")
            rules, states = _check_meta(meta)
            width = key_bytes(rules)
            expected = states * (width + 8 * rules.columns + table_bytes_per_state(rules))
            if expected > max_bytes:
                raise ValueError(
                    f"its {states:,} states take about {expected:,} bytes loaded (arrays and table); "
                    f"max_bytes={max_bytes:,}"
                )
            for name, member_bytes in (("keys.npy", states * width), ("q.npy", states * 8 * rules.columns)):
                if sizes[name] > member_bytes + 10_000:
                    raise ValueError(
                        f"{name} claims {sizes[name]:,} bytes where {member_bytes:,} are expected"
                    )
            keys = read_npy(archive, "keys.npy", (states, width), np.dtype(np.uint8))
            q = read_npy(archive, "q.npy", (states, rules.columns), np.dtype("<f8"))
    except ARCHIVE_ERRORS as error:
        raise ValueError(f"{path} is corrupt or truncated: {error}") from None
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    if states and np.unique(keys.view(f"V{width}").reshape(-1)).size != states:
        raise ValueError(f"{path}: the table lists a position more than once (duplicate keys)")
    if not np.isfinite(q).all():
        raise ValueError(f"{path}: the Q-values contain NaN or infinity")
    for start in range(0, states, _KEY_CHUNK):
        bad = _not_positions(keys[start : start + _KEY_CHUNK], rules)
        if bad is not None:
            key = int.from_bytes(keys[start + bad].tobytes(), "little")
            raise ValueError(
                f"{path}: key {key:#x} (entry {start + bad}) is not a position of a {rules.rows}x{rules.columns} board"
            )
    return QTableFile(rules, keys, q, meta)


def _not_positions(keys: np.ndarray, rules: Rules) -> int | None:
    """The index of the first key that is not a position's key (``mover + mask + bottom``), else None.

    Column by column a key holds ``height = rows + 1`` bits: the stones of the player to move under a marker
    bit one above the column's top stone. So each column's bits are non-zero, no bits lie above the last
    column, and the player to move has ``stones // 2`` of the ``stones`` on the board.
    """
    height, columns = rules.height, rules.columns
    bits = np.unpackbits(keys, axis=1, bitorder="little")
    used = columns * height
    stray = bits[:, used:].any(axis=1)
    cells = bits[:, :used].reshape(len(keys), columns, height)
    empty_column = ~np.any(cells, axis=2)
    # the marker is each column's highest set bit: its index is the column's stone count
    top = height - 1 - np.argmax(cells[:, :, ::-1], axis=2)
    stones = top.sum(axis=1)
    mover = cells.sum(axis=(1, 2), dtype=np.int64) - columns
    bad = stray | np.any(empty_column, axis=1) | (mover != stones // 2)
    return int(np.argmax(bad)) if bad.any() else None


def _check_meta(meta: Any) -> tuple[Rules, int]:
    """The board and state count the metadata names, checked (sizes within the rules' limits)."""
    if not isinstance(meta, dict) or meta.get("format") != FILE_FORMAT:
        tag = meta.get("format") if isinstance(meta, dict) else None
        raise ValueError(f"not a Q-table file (format tag {tag!r})")
    version = meta.get("version")
    if not is_version(version, FILE_VERSION):
        raise ValueError(
            f"Q-table format version {version!r}; this version reads version {FILE_VERSION} (an integer)"
        )
    try:
        rules = Rules(meta["rows"], meta["columns"], meta["win_length"])
        states = check_int("states", meta["states"], 0)
    except (KeyError, TypeError) as error:
        raise ValueError(f"incomplete or invalid metadata: {error!r}") from None
    return rules, states
