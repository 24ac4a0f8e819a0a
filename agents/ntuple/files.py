"""The n-tuple network's file format: a compressed ``.npz`` of plain arrays and JSON metadata, read without pickle.

Members: ``tuples.npy`` (n_tuples, length) int64, the tuples' cells (bits of the board's layout, see
`connect4_agents.ntuple.tuples`); ``weights.npy`` (2, n_tuples, 4**length) float32, one table set per side
(see `connect4_agents.ntuple.kernels`); ``meta.npy``, a JSON string: the format tag and version, the board,
the learner's settings and its training counts (games, moves, the schedules' progress), so that a checkpoint
resumes a run where it stopped.

Loading trusts nothing in the file: the member list, every member's header, the metadata and the sizes are
checked before an array is read (`connect4_agents._support.npy`), what loading allocates is capped by
``max_bytes``, and the tuples must be distinct cells of the board, the weights finite.
"""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from connect4_agents._support.files import atomic_write, is_version, parse_json
from connect4_agents._support.npy import ARCHIVE_ERRORS, peek_npy, read_npy
from connect4_agents.ntuple.kernels import STATES
from connect4_env.rules import Rules
from connect4_env.validation import check_int

__all__ = ["FILE_FORMAT", "FILE_VERSION", "DEFAULT_MAX_BYTES", "NTupleFile", "save_network", "load_network"]

FILE_FORMAT = "connect4_env.ntuple"
FILE_VERSION = 1
DEFAULT_MAX_BYTES = 2 << 30  # the decompressed arrays of a network file, at most (2 GiB)
MAX_LENGTH = 12  # cells per tuple: a table of 4**12 entries (16.8 M) per tuple and side already
_META_MAX_BYTES = 1 << 16
_MEMBERS = ("meta.npy", "tuples.npy", "weights.npy")


@dataclass(frozen=True)
class NTupleFile:
    """The content of a network file, checked.

    Attributes:
        rules: the board the network plays.
        tuples: (n_tuples, length) int64 cells, each a cell of ``rules``' board, distinct within a tuple.
        weights: (2, n_tuples, 4**length) float32, finite.
        meta: the JSON metadata, a dict.
    """

    rules: Rules
    tuples: np.ndarray
    weights: np.ndarray
    meta: dict[str, Any]


def save_network(
    path: str | os.PathLike[str],
    rules: Rules,
    tuples: np.ndarray,
    weights: np.ndarray,
    meta: dict[str, Any],
) -> Path:
    """Write a network to ``path`` atomically (a reader never sees half a file); returns the path written.

    ``meta`` (settings, counts) goes into the metadata beside the format tag, the board and the tuple shape.
    """
    header = {
        "format": FILE_FORMAT,
        "version": FILE_VERSION,
        "rows": rules.rows,
        "columns": rules.columns,
        "win_length": rules.win_length,
        "n_tuples": int(tuples.shape[0]),
        "length": int(tuples.shape[1]),
    }
    text = json.dumps({**meta, **header})
    return atomic_write(
        path,
        lambda stream: np.savez_compressed(
            stream,
            meta=np.array(text),
            tuples=np.ascontiguousarray(tuples, dtype=np.int64),
            weights=np.ascontiguousarray(weights, dtype=np.float32),
        ),
    )


def load_network(path: str | os.PathLike[str], max_bytes: int = DEFAULT_MAX_BYTES) -> NTupleFile:
    """Read a network written by `save_network`, checking everything before reading the arrays.

    Args:
        path: the ``.npz`` file.
        max_bytes: the most bytes the arrays may take once read (default 2 GiB).

    Returns:
        The checked arrays and metadata.

    Raises:
        FileNotFoundError: no file at ``path`` (a folder included).
        TypeError: ``max_bytes`` is not an integer.
        ValueError: ``max_bytes`` is below 1; or the file is not an n-tuple network file, is corrupt or
            truncated, names a board or tuple shape its arrays disagree with, needs more than ``max_bytes``,
            or holds tuples whose cells are off the board or repeated, NaN or infinite weights, or metadata
            that is not JSON.
    """
    max_bytes = check_int("max_bytes", max_bytes, 1)
    path = Path(path)
    if not path.is_file():
        folder = " (a folder; a network is a .npz file)" if path.is_dir() else ""
        raise FileNotFoundError(f"no n-tuple network file at {path}{folder}")
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            names = sorted(info.filename for info in infos)
            if names != sorted(_MEMBERS):
                raise ValueError(
                    f"not an n-tuple network file: it holds {names[:8]}, expected {list(_MEMBERS)}"
                )
            meta_shape, meta_dtype = peek_npy(archive, "meta.npy")
            if meta_shape != () or meta_dtype.kind != "U" or meta_dtype.itemsize > _META_MAX_BYTES:
                raise ValueError(
                    f"its metadata is {meta_dtype} {meta_shape}, not a JSON string of at most 64 KB"
                )
            meta = parse_json(str(read_npy(archive, "meta.npy", (), meta_dtype)[()]), "n-tuple metadata")
            rules, n_tuples, length = _check_meta(meta)
            entries = STATES**length
            needed = n_tuples * length * 8 + 2 * n_tuples * entries * 4
            if needed > max_bytes:
                raise ValueError(
                    f"its {n_tuples} tuples of {length} cells take {needed:,} bytes loaded; max_bytes={max_bytes:,}"
                )
            tuples = read_npy(archive, "tuples.npy", (n_tuples, length), np.dtype("<i8"))
            weights = read_npy(archive, "weights.npy", (2, n_tuples, entries), np.dtype("<f4"))
    except ARCHIVE_ERRORS as error:
        raise ValueError(f"{path} is corrupt or truncated: {error}") from None
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    _check_tuples(path, rules, tuples)
    if not np.isfinite(weights).all():
        raise ValueError(f"{path}: the weights contain NaN or infinity")
    return NTupleFile(rules, tuples.copy(), weights.copy(), meta)


def _check_meta(meta: Any) -> tuple[Rules, int, int]:
    """The board and tuple shape the metadata names, checked."""
    if not isinstance(meta, dict) or meta.get("format") != FILE_FORMAT:
        tag = meta.get("format") if isinstance(meta, dict) else None
        raise ValueError(f"not an n-tuple network file (format tag {tag!r})")
    version = meta.get("version")
    if not is_version(version, FILE_VERSION):
        raise ValueError(f"n-tuple format version {version!r}; this version reads version {FILE_VERSION}")
    try:
        rules = Rules(meta["rows"], meta["columns"], meta["win_length"])
        n_tuples = check_int("n_tuples", meta["n_tuples"], 1)
        length = check_int("length", meta["length"], 1, MAX_LENGTH)
    except (KeyError, TypeError) as error:
        raise ValueError(f"incomplete or invalid metadata: {error!r}") from None
    return rules, n_tuples, length


def _check_tuples(path: Path, rules: Rules, tuples: np.ndarray) -> None:
    columns, rows = np.divmod(tuples, rules.height)
    if (tuples < 0).any() or (columns >= rules.columns).any() or (rows >= rules.rows).any():
        raise ValueError(f"{path}: a tuple names a cell off the {rules.rows}x{rules.columns} board")
    ordered = np.sort(tuples, axis=1)
    if (ordered[:, 1:] == ordered[:, :-1]).any():
        raise ValueError(f"{path}: a tuple names the same cell twice")
