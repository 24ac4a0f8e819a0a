"""The Q-table file format: a compressed ``.npz`` of plain arrays and JSON metadata, read without pickle.

Arrays: ``keys`` (n, key_bytes) uint8, little-endian canonical keys; ``q`` (n, columns) float64; ``meta``: a
JSON string with the format tag, version, board size, hyper-parameters and episodes trained.

Loading trusts nothing in the file: the zip's member list, every array's header (dtype, shape, order) and the
metadata are checked before an array is read, the decompressed size is capped, and duplicate keys are refused.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np
from connect4_agents._support.files import atomic_write

from connect4_env.core import Rules
from connect4_env.validation import check_int

if TYPE_CHECKING:
    from connect4_agents.qlearning.agent import QLearningAgent

__all__ = ["FILE_FORMAT", "FILE_VERSION", "DEFAULT_MAX_BYTES", "save_qtable", "load_qtable", "key_bytes"]

FILE_FORMAT = "connect4_env.qtable"
FILE_VERSION = 1
DEFAULT_MAX_BYTES = 4 << 30  # decompressed arrays of a table file, at most (4 GiB)
_META_MAX_BYTES = 1 << 16
_MEMBERS = ("keys.npy", "q.npy", "meta.npy")


def key_bytes(rules: Rules) -> int:
    """Bytes per stored key on this board (keys are below ``2 ** (columns * height + 1)``)."""
    return (rules.columns * rules.height + 8) // 8 + 1


def save_qtable(agent: QLearningAgent, path: str | os.PathLike[str]) -> Path:
    """Write ``agent``'s table to ``path`` atomically (see the module docstring); returns the path written."""
    rules = agent.rules
    width = key_bytes(rules)
    keys = sorted(agent.q)
    key_array = np.frombuffer(b"".join(k.to_bytes(width, "little") for k in keys), dtype=np.uint8)
    key_array = key_array.reshape(len(keys), width)
    q = np.array([agent.q[k] for k in keys], dtype=np.float64).reshape(len(keys), rules.columns)
    meta = {
        "format": FILE_FORMAT,
        "version": FILE_VERSION,
        "rows": rules.rows,
        "columns": rules.columns,
        "win_length": rules.win_length,
        **agent.settings(),
        "planned_episodes": agent.planned_episodes,
        "episodes_trained": agent.episodes_trained,
        "states": len(keys),
    }
    return atomic_write(
        path, lambda stream: np.savez_compressed(stream, keys=key_array, q=q, meta=np.array(json.dumps(meta)))
    )


def _header(member: IO[bytes]) -> tuple[tuple[int, ...], bool, np.dtype]:
    version = np.lib.format.read_magic(member)
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(member, max_header_size=10_000)
    if version == (2, 0):
        return np.lib.format.read_array_header_2_0(member, max_header_size=10_000)
    raise ValueError(f"npy format version {version} is not supported")


def _read(archive: zipfile.ZipFile, name: str, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    with archive.open(name) as member:
        found_shape, fortran, found_dtype = _header(member)
        if found_shape != shape or found_dtype != dtype or fortran:
            raise ValueError(
                f"array {name[:-4]!r} is {found_dtype} {found_shape}{' (Fortran order)' if fortran else ''}; "
                f"expected {dtype} {shape}"
            )
        data = member.read(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize)
    array = np.frombuffer(data, dtype=dtype)
    if array.size != int(np.prod(shape, dtype=np.int64)):
        raise ValueError(f"array {name[:-4]!r} is truncated")
    return array.reshape(shape)


def _peek(archive: zipfile.ZipFile, name: str) -> tuple[tuple[int, ...], np.dtype]:
    with archive.open(name) as member:
        shape, fortran, dtype = _header(member)
    if fortran:
        raise ValueError(f"array {name[:-4]!r} is stored in Fortran order")
    return shape, dtype


def load_qtable(
    path: str | os.PathLike[str], seed: int | None = None, max_bytes: int = DEFAULT_MAX_BYTES
) -> QLearningAgent:
    """Read a table written by :func:`save_qtable`, checking everything before reading the arrays.

    Args:
        path: the ``.npz`` file.
        seed: seed of the loaded agent's tie-breaking and exploration.
        max_bytes: the most decompressed bytes the arrays may take (default 4 GiB).

    Raises:
        FileNotFoundError: no such file. ValueError: not a Q-table file; corrupt or truncated; a board size,
            array shape, dtype or state count that disagrees with the metadata; more than ``max_bytes``;
            duplicate keys; NaN or infinite values.
    """
    from connect4_agents.qlearning.agent import QLearningAgent

    max_bytes = check_int("max_bytes", max_bytes, 1)
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no Q-table file at {path}")
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
            meta_shape, meta_dtype = _peek(archive, "meta.npy")
            if meta_shape != () or meta_dtype.kind != "U":
                raise ValueError(f"its metadata is {meta_dtype} {meta_shape}, not a JSON string")
            meta = json.loads(str(_read(archive, "meta.npy", (), meta_dtype)[()]))
            rules, states = _check_meta(meta)
            width = key_bytes(rules)
            expected = states * (width + 8 * rules.columns)
            if expected > max_bytes:
                raise ValueError(f"its {states:,} states take {expected:,} bytes; max_bytes={max_bytes:,}")
            for name, member_bytes in (("keys.npy", states * width), ("q.npy", states * 8 * rules.columns)):
                if sizes[name] > member_bytes + 10_000:
                    raise ValueError(
                        f"{name} claims {sizes[name]:,} bytes where {member_bytes:,} are expected"
                    )
            keys = _read(archive, "keys.npy", (states, width), np.dtype(np.uint8))
            q = _read(archive, "q.npy", (states, rules.columns), np.dtype("<f8"))
    except (
        zipfile.BadZipFile,
        EOFError,
        OSError,
        json.JSONDecodeError,
        KeyError,
        UnicodeDecodeError,
    ) as error:
        raise ValueError(f"{path} is corrupt or truncated: {error}") from None
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    if states and np.unique(keys.view(f"V{width}").reshape(-1)).size != states:
        raise ValueError(f"{path}: the table lists a position more than once (duplicate keys)")
    if not np.isfinite(q).all():
        raise ValueError(f"{path}: the Q-values contain NaN or infinity")
    try:
        agent = QLearningAgent(
            rules.rows,
            rules.columns,
            rules.win_length,
            alpha=meta["alpha"],
            gamma=meta["gamma"],
            epsilon=meta["epsilon"],
            epsilon_min=meta["epsilon_min"],
            exploration_fraction=meta.get("exploration_fraction", 0.5),
            epsilon_decay=meta["epsilon_decay"],
            rewards=meta["rewards"],
            updates=meta.get("updates", "backward"),
            seed=seed,
        )
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"{path} has incomplete or invalid metadata: {error}") from None
    agent.q = {int.from_bytes(k.tobytes(), "little"): row.copy() for k, row in zip(keys, q)}
    trained = meta.get("episodes_trained", 0)
    agent.episodes_trained = trained if isinstance(trained, int) and trained >= 0 else 0
    planned = meta.get("planned_episodes")
    agent.planned_episodes = planned if isinstance(planned, int) and planned > 0 else None
    return agent


def _check_meta(meta: Any) -> tuple[Rules, int]:
    """The board and state count the metadata names, checked (sizes within the rules' limits)."""
    if not isinstance(meta, dict) or meta.get("format") != FILE_FORMAT:
        tag = meta.get("format") if isinstance(meta, dict) else None
        raise ValueError(f"not a Q-table file (format tag {tag!r})")
    if meta.get("version") != FILE_VERSION:
        raise ValueError(f"Q-table format version {meta.get('version')!r}; this version reads {FILE_VERSION}")
    try:
        rules = Rules(meta["rows"], meta["columns"], meta["win_length"])
        states = check_int("states", meta["states"], 0)
    except (KeyError, TypeError) as error:
        raise ValueError(f"incomplete or invalid metadata: {error!r}") from None
    return rules, states
