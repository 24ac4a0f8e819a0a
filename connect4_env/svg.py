"""SVG drawing of a board from plain data: the picture behind ``Board._repr_svg_`` and ``render.to_svg``.

It sits below the rules core (it knows cells and colours, not the rules), so ``core`` can offer notebooks an
SVG without importing the renderers that build on it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from connect4_env.validation import check_int

__all__ = [
    "BACKGROUND",
    "PALETTE",
    "LAST_MOVE",
    "WINNING",
    "STONE_RADIUS",
    "LAST_MOVE_RADIUS",
    "ring_width",
    "MAX_TILE",
    "MAX_SVG_CELLS",
    "check_svg_size",
    "draw_svg",
]

# The one set of colours and proportions of every picture of a board: SVG, rgb_array and the play window.
BACKGROUND = (30, 80, 200)  # the blue frame
PALETTE = (
    (235, 235, 235),  # empty hole
    (220, 40, 40),  # first player (X): red
    (245, 200, 30),  # second player (O): yellow
)
LAST_MOVE = (255, 255, 255)  # the ring in the stone played last
WINNING = (34, 221, 68)  # the outline of the stones of a winning line
STONE_RADIUS = 0.4  # a stone's radius, in cells
LAST_MOVE_RADIUS = 0.55  # the last move's ring, in stone radii
MAX_TILE = 512  # pixels (SVG units) per cell
MAX_SVG_CELLS = 250_000  # about 100 bytes a cell: a 25 MB SVG; larger boards are refused
_NAMES = ("empty", "player0", "player1")


def _hex(colour: Sequence[int]) -> str:
    return "#" + "".join(f"{int(c):02x}" for c in colour)


def ring_width(tile: float) -> float:
    """The width of the last move's ring at ``tile`` units a cell (the winning outline is twice it)."""
    return max(1.0, tile / 16)


def check_svg_size(rows: int, columns: int) -> None:
    """Raise ValueError for a board of more than `MAX_SVG_CELLS` cells (checked before any drawing)."""
    if rows * columns > MAX_SVG_CELLS:
        raise ValueError(
            f"a {rows}x{columns} board has {rows * columns:,} cells; SVG is drawn up to "
            f"{MAX_SVG_CELLS:,} cells (use render_ansi for larger boards)"
        )


def _check_owners(owners: object) -> list[list[int]]:
    """``owners`` as a list of equally long rows of 0 / 1 / 2 (checked before anything is drawn)."""
    if isinstance(owners, np.ndarray):
        owners = owners.tolist()
    if isinstance(owners, (str, bytes)) or not isinstance(owners, Sequence):
        raise TypeError(f"owners must be a sequence of rows, got {type(owners).__name__}")
    grid: list[list[int]] = []
    for row, line in enumerate(owners):
        if isinstance(line, (str, bytes)) or not isinstance(line, Sequence):
            raise TypeError(f"owners[{row}] must be a sequence of cells, got {type(line).__name__}")
        if row == 0:
            check_svg_size(len(owners), len(line))  # before reading any cell: a huge grid is refused at once
        elif len(line) != len(grid[0]):
            raise ValueError(
                f"owners must be rectangular: row 0 has {len(grid[0])} cells, row {row} {len(line)}"
            )
        grid.append([check_int(f"owners[{row}][{column}]", v, 0, 2) for column, v in enumerate(line)])
    return grid


def _check_cell(name: str, cell: object, rows: int, columns: int) -> tuple[int, int]:
    """``cell`` as a ``(row, column)`` pair of ints inside a ``rows`` x ``columns`` grid."""
    if isinstance(cell, (str, bytes)) or not isinstance(cell, Sequence):
        raise TypeError(f"{name} must be a (row, column) pair, got {type(cell).__name__}")
    if len(cell) != 2:
        raise ValueError(f"{name} must be a (row, column) pair, got {len(cell)} values")
    if rows == 0 or columns == 0:
        raise ValueError(f"{name} names a cell of an empty grid")
    return check_int(f"{name}'s row", cell[0], 0, rows - 1), check_int(
        f"{name}'s column", cell[1], 0, columns - 1
    )


def draw_svg(
    owners: Sequence[Sequence[int]],
    *,
    ply: int,
    last_cell: tuple[int, int] | None = None,
    winning_cells: Sequence[tuple[int, int]] = (),
    tile: int = 48,
) -> str:
    """A standalone SVG document of a board: one circle per cell, any size.

    Args:
        owners: one row per board row, top row first: 0 empty, 1 first player, 2 second player (lists, tuples
            or a 2-D numpy array).
        ply: the number of stones (for the title).
        last_cell: ``(row, column)`` of the stone to ring as the last move, or None.
        winning_cells: ``(row, column)`` of the stones to outline as a winning line.
        tile: the size of a cell in SVG units (the picture scales freely), 4..512.

    Returns:
        The SVG text.

    Raises:
        TypeError: ``tile``, ``ply``, an owner or a cell's coordinate is not an integer; ``owners`` or one of
            its rows is not a sequence; ``last_cell`` or ``winning_cells`` (or one of its cells) is not a
            sequence (a str neither).
        ValueError: ``tile`` is outside ``4..512`` or ``ply`` outside ``0..rows * columns``; more than
            `MAX_SVG_CELLS` cells; rows of unequal length; an owner other than 0 / 1 / 2; a cell that is not a
            pair or lies outside the grid; more winning cells than cells (each named).
    """
    tile = check_int("tile", tile, 4, MAX_TILE)
    grid = _check_owners(owners)
    rows = len(grid)
    columns = len(grid[0]) if rows else 0
    ply = check_int("ply", ply, 0, rows * columns)
    if last_cell is not None:
        last_cell = _check_cell("last_cell", last_cell, rows, columns)
    if isinstance(winning_cells, (str, bytes)) or not isinstance(winning_cells, Sequence):
        raise TypeError(
            f"winning_cells must be a sequence of (row, column) pairs, got {type(winning_cells).__name__}"
        )
    if len(winning_cells) > rows * columns:
        raise ValueError(f"winning_cells holds {len(winning_cells)} cells; the grid has {rows * columns}")
    winning = [
        _check_cell(f"winning_cells[{k}]", cell, rows, columns) for k, cell in enumerate(winning_cells)
    ]
    width, height = columns * tile, rows * tile
    radius = STONE_RADIUS * tile
    fills = [_hex(c) for c in PALETTE]
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img">',
        f"<title>Connect Four, {rows}x{columns}, {ply} stones</title>",
        f'<rect width="{width}" height="{height}" fill="{_hex(BACKGROUND)}"/>',
    ]
    for row, line in enumerate(grid):
        for column, owner in enumerate(line):
            parts.append(
                f'<circle class="{_NAMES[owner]}" cx="{(column + 0.5) * tile:g}" cy="{(row + 0.5) * tile:g}" '
                f'r="{radius:g}" fill="{fills[owner]}"/>'
            )
    outline = ring_width(tile)
    if last_cell is not None:
        row, column = last_cell
        parts.append(
            f'<circle class="last-move" cx="{(column + 0.5) * tile:g}" cy="{(row + 0.5) * tile:g}" '
            f'r="{radius * LAST_MOVE_RADIUS:g}" fill="none" stroke="{_hex(LAST_MOVE)}" stroke-width="{outline:g}"/>'
        )
    for row, column in winning:
        parts.append(
            f'<circle class="winning" cx="{(column + 0.5) * tile:g}" cy="{(row + 0.5) * tile:g}" '
            f'r="{radius:g}" fill="none" stroke="{_hex(WINNING)}" stroke-width="{2 * outline:g}"/>'
        )
    parts.append("</svg>")
    return "\n".join(parts)
