"""Where the n-tuples lie on the board: random walks over neighbouring cells, and their mirror images.

An n-tuple is an ordered list of ``n`` distinct cells. The network reads one lookup table per tuple, indexed by
the states of its cells, so a tuple sees every pattern of those cells exactly; many overlapping tuples
together generalise over the positions no table could list. Thill, Koch and Konen (PPSN 2012) found that
tuples grown by *random walks* (each cell a neighbour of the one before, in any of the eight directions) learn
Connect Four better than straight lines or random scattered cells: a walk covers the compact shapes (lines,
bends, blocks) in which threats are made. `random_walk_tuples` draws such walks; a tuple may not repeat a cell,
and no two tuples (nor a tuple and another's mirror image) cover the same set of cells.

Cells are named as in the bitboards, ``column * (rows + 1) + row`` (row 0 at the bottom), so the kernels read
a cell's state at that index.
"""

from __future__ import annotations

import numpy as np

from connect4_env.rules import Rules

__all__ = ["random_walk_tuples", "mirror_tuples", "cell_bit", "bit_cell"]

_NEIGHBOURS = [(dc, dr) for dc in (-1, 0, 1) for dr in (-1, 0, 1) if (dc, dr) != (0, 0)]


def cell_bit(rules: Rules, column: int, row: int) -> int:
    """The bit (and the kernels' cell index) of ``(column, row)``, row 0 at the bottom."""
    return column * rules.height + row


def bit_cell(rules: Rules, bit: int) -> tuple[int, int]:
    """``(column, row)`` of a cell's bit (the inverse of `cell_bit`)."""
    return divmod(bit, rules.height)


def mirror_tuples(rules: Rules, tuples: np.ndarray) -> np.ndarray:
    """The same tuples reflected left-right: column ``c`` becomes ``columns - 1 - c``, in the same order."""
    columns, rows = np.divmod(np.asarray(tuples, dtype=np.int64), rules.height)
    return (rules.columns - 1 - columns) * rules.height + rows


def random_walk_tuples(rules: Rules, count: int, length: int, seed: int) -> np.ndarray:
    """``count`` tuples of ``length`` cells, each a random walk over neighbouring cells (see the module).

    A walk starts on a uniformly random cell and steps to a uniformly random neighbour (eight directions) not
    already in the tuple; a walk that runs out of such neighbours starts again. A tuple whose set of cells
    equals an earlier tuple's, or its mirror image's, is drawn again.

    Returns:
        An int64 array (count, length) of cell bits (`cell_bit`).

    Raises:
        ValueError: ``length`` exceeds the board's cells, or ``count`` such distinct tuples cannot be found
            (tried ``1000 * count`` walks).
    """
    cells = rules.rows * rules.columns
    if length > cells:
        raise ValueError(f"a tuple of {length} cells does not fit on a board of {cells} cells")
    rng = np.random.default_rng(seed)
    found: list[list[int]] = []
    seen: set[frozenset[int]] = set()
    attempts = 0
    while len(found) < count:
        attempts += 1
        if attempts > 1000 * count:
            raise ValueError(
                f"could not find {count} distinct tuples of {length} cells on a {rules.rows}x{rules.columns} "
                f"board (found {len(found)})"
            )
        walk = [(int(rng.integers(rules.columns)), int(rng.integers(rules.rows)))]
        while len(walk) < length:
            column, row = walk[-1]
            steps = [
                (column + dc, row + dr)
                for dc, dr in _NEIGHBOURS
                if 0 <= column + dc < rules.columns
                and 0 <= row + dr < rules.rows
                and (column + dc, row + dr) not in walk
            ]
            if not steps:
                break
            walk.append(steps[int(rng.integers(len(steps)))])
        if len(walk) < length:
            continue
        bits = [cell_bit(rules, c, r) for c, r in walk]
        key = frozenset(bits)
        mirrored = frozenset(int(b) for b in mirror_tuples(rules, np.array(bits)))
        if key in seen or mirrored in seen:
            continue
        seen.add(key)
        found.append(bits)
    return np.array(found, dtype=np.int64).reshape(count, length)
