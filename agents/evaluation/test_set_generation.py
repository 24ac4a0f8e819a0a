"""The shipped test sets made again: positions drawn by random play, every move scored by the solver, written
byte for byte as `connect4_agents.evaluation.test_sets` reads them (``connect4 make-test-sets``).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from connect4_agents._support.files import atomic_write, atomic_write_json, parse_json
from connect4_agents.evaluation.test_sets import (
    DATA_DIR,
    MANIFEST,
    TEST_SET_SPECS,
    Position,
    TestSetSpec,
    test_set_path,
)
from connect4_agents.solver.agent import SolverAgent, plies_to_end
from connect4_env import Board
from connect4_env.validation import check_int

__all__ = ["generate_test_set", "write_test_set", "encode_positions", "position_key"]


def position_key(board: Board) -> tuple[int, int]:
    """A key for a position, the same for its mirror image and for every move order that reaches it.

    The test sets keep one position per key; the AlphaZero teacher leaves the test sets' keys out of its
    training positions.
    """
    rules = board.rules
    mover, mask = board.stones[board.to_move], board.mask
    return min((mover, mask), (rules.mirror(mover), rules.mirror(mask)))


def generate_test_set(
    spec: TestSetSpec, seed: int, solver: Any = None, on_position: Callable[[int], None] | None = None
) -> list[Position]:
    """Draw ``spec.size`` positions by random play and score every move exactly.

    Each candidate: a ply drawn uniformly from ``spec.plies``, uniformly random moves up to it; kept when the
    game is not over, the mover cannot win at once, it is new (up to mirror image and transposition), and its
    plies left under perfect play fall in ``spec.remaining``. The same ``seed`` gives the same list.
    ``on_position(count)`` is called after each kept position.

    Raises:
        RuntimeError: fewer positions than ``spec.size`` were found in ``200 * spec.size`` candidates.
    """
    seed = check_int("seed", seed, 0)
    solver = solver if solver is not None else SolverAgent(node_budget=None)
    rules = spec.rules
    rng = np.random.default_rng(np.random.SeedSequence([seed, *spec.name.encode()]))
    seen: set[tuple[int, int]] = set()
    positions: list[Position] = []
    for _ in range(200 * spec.size):
        if len(positions) == spec.size:
            return positions
        target = int(rng.integers(spec.plies[0], spec.plies[1] + 1))
        board = Board(rules)
        moves: list[int] = []
        while board.ply < target and not board.is_terminal:
            legal = board.legal_moves()
            column = legal[int(rng.integers(len(legal)))]
            board.play(column)
            moves.append(column)
        if board.is_terminal or board.ply != target or board.winning_moves():
            continue
        key = position_key(board)
        if key in seen:
            continue
        seen.add(key)
        score = solver.score(board)
        if not spec.remaining[0] <= plies_to_end(score, board.ply, rules.cells) <= spec.remaining[1]:
            continue
        scores = tuple(solver.evaluate_board(board))
        best = max(s for s in scores if s is not None)
        if best != score:  # two searches of the same position disagree: a solver bug, never ship it
            raise RuntimeError(f"solver disagrees with itself on moves {moves}: {score} vs {best}")
        positions.append(Position(tuple(moves), rules.rows, rules.columns, rules.win_length, scores, score))
        if on_position is not None:
            on_position(len(positions))
    if len(positions) < spec.size:
        raise RuntimeError(f"only {len(positions)} of {spec.size} positions found for {spec.name}")
    return positions


def encode_positions(positions: Iterable[Position]) -> bytes:
    """The gzip file's bytes: JSON lines, no file name and time stamp 0 (the same positions, the same bytes)."""
    text = "".join(p.to_json() + "\n" for p in positions).encode()
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as stream:
        stream.write(text)
    return buffer.getvalue()


def write_test_set(
    spec: TestSetSpec, positions: list[Position], seed: int, directory: str | os.PathLike[str] | None = None
) -> dict[str, Any]:
    """Write one set atomically and record it in the folder's manifest; returns its manifest entry."""
    directory = Path(directory if directory is not None else DATA_DIR)
    data = encode_positions(positions)
    atomic_write(test_set_path(spec.name, directory), lambda stream: stream.write(data))
    manifest_path = directory / MANIFEST
    manifest = parse_json(manifest_path.read_text(), "test-set manifest") if manifest_path.exists() else {}
    entry = {
        "rows": spec.rows,
        "columns": spec.columns,
        "win_length": spec.win_length,
        "positions": len(positions),
        "plies": list(spec.plies),
        "remaining": [spec.remaining[0], min(spec.remaining[1], spec.rows * spec.columns)],
        "description": spec.description,
        "seed": seed,
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    manifest[spec.name] = entry
    ordered = {name: manifest[name] for name in TEST_SET_SPECS if name in manifest}
    atomic_write_json(manifest_path, ordered)
    return entry
