"""SVG drawing of a board from plain data: the picture behind ``Board._repr_svg_`` and ``render.to_svg``.

It sits below the rules core (it knows cells and colours, not the rules), so ``core`` can offer notebooks an
SVG without importing the renderers that build on it.
"""

from __future__ import annotations

from collections.abc import Sequence

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
    """Raise ValueError for a board of more than :data:`MAX_SVG_CELLS` cells (checked before any drawing)."""
    if rows * columns > MAX_SVG_CELLS:
        raise ValueError(
            f"a {rows}x{columns} board has {rows * columns:,} cells; SVG is drawn up to "
            f"{MAX_SVG_CELLS:,} cells (use render_ansi for larger boards)"
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
        owners: one row per board row, top row first: 0 empty, 1 first player, 2 second player.
        ply: the number of stones (for the title).
        last_cell: ``(row, column)`` of the stone to ring as the last move, or None.
        winning_cells: ``(row, column)`` of the stones to outline as a winning line.
        tile: the size of a cell in SVG units (the picture scales freely), 4..512.

    Returns:
        The SVG text.

    Raises:
        TypeError / ValueError: a bad ``tile``, or more than :data:`MAX_SVG_CELLS` cells.
    """
    tile = check_int("tile", tile, 4, MAX_TILE)
    rows = len(owners)
    columns = len(owners[0]) if rows else 0
    check_svg_size(rows, columns)
    width, height = columns * tile, rows * tile
    radius = STONE_RADIUS * tile
    fills = [_hex(c) for c in PALETTE]
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img">',
        f"<title>Connect Four, {rows}x{columns}, {ply} stones</title>",
        f'<rect width="{width}" height="{height}" fill="{_hex(BACKGROUND)}"/>',
    ]
    for row, line in enumerate(owners):
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
    for row, column in winning_cells:
        parts.append(
            f'<circle class="winning" cx="{(column + 0.5) * tile:g}" cy="{(row + 0.5) * tile:g}" '
            f'r="{radius:g}" fill="none" stroke="{_hex(WINNING)}" stroke-width="{2 * outline:g}"/>'
        )
    parts.append("</svg>")
    return "\n".join(parts)
