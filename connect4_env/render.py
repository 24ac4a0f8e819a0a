"""Rendering: ``ansi`` text, ``rgb_array`` images drawn with numpy alone, and a ``human`` pygame window.

What a person reads numbers the columns from 1 at the left, in every view: this text (``env.render()`` under
``"ansi"``), the terminal game, the play window's keys, the HTML replay and the ``connect4`` text dialect. The
actions stay 0-based (Gymnasium's ``Discrete``): the column a person calls 4 is action 3.

pygame is imported only when a window is opened (``pip install -e ".[render]"``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import gymnasium
import numpy as np

from connect4_env.core import Board, check_board
from connect4_env.encoding import observation_planes
from connect4_env.extras import require
from connect4_env.rules import Rules
from connect4_env.svg import (
    BACKGROUND,
    MAX_TILE,
    PALETTE,
    STONE_RADIUS,
    check_svg_size,
    draw_svg,
)
from connect4_env.validation import check_bool, check_int

__all__ = [
    "RENDER_MODES",
    "MAX_IMAGE_PIXELS",
    "render_ansi",
    "grid_text",
    "colour_stones",
    "terminal_has_colour",
    "render_rgb",
    "HumanWindow",
    "BoardRenderer",
    "check_render_mode",
    "check_tile",
    "to_svg",
]

RENDER_MODES = ("human", "rgb_array", "ansi")
MAX_IMAGE_PIXELS = 1 << 26  # 64 Mpixels (192 MB as RGB): larger images are refused before drawing

_BACKGROUND = np.array(BACKGROUND, dtype=np.uint8)  # the colours of the SVG pictures, as image pixels
_PALETTE = np.array(PALETTE, dtype=np.uint8)


def check_tile(tile: object, rules: Rules | None = None) -> int:
    """``tile`` (pixels per cell) as an int in ``4..MAX_TILE`` whose image of a ``rules`` board stays within
    `MAX_IMAGE_PIXELS`.

    Raises:
        TypeError: ``tile`` is not an integer (a float, a string, a bool, None).
        ValueError: ``tile`` is outside ``4..MAX_TILE``, or the image of a ``rules`` board would have more
            than `MAX_IMAGE_PIXELS` pixels.
    """
    tile = check_int("tile", tile, 4, MAX_TILE)
    if rules is not None and rules.cells * tile * tile > MAX_IMAGE_PIXELS:
        raise ValueError(
            f"tile={tile} draws a {rules.rows}x{rules.columns} board as {rules.cells * tile * tile:,} pixels; "
            f"allowed: at most {MAX_IMAGE_PIXELS:,} (a smaller tile, or render_mode='ansi')"
        )
    return tile


def check_render_mode(render_mode: str | None) -> str | None:
    """Raise ValueError unless ``render_mode`` is None or one of RENDER_MODES."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(
            f"render_mode={render_mode!r} is not supported; allowed: None, {', '.join(RENDER_MODES)}"
        )
    return render_mode


_ANSI = ("\x1b[1;31m", "\x1b[1;33m")  # bold red (first player), bold yellow (second)
_ANSI_RESET = "\x1b[0m"


def colour_stones(text: str, swap: bool = False) -> str:
    """``text`` with every ``X`` in the first player's colour (red) and every ``O`` in the second's (yellow),
    as ANSI escape codes; ``swap`` exchanges the colours (for a board drawn from the second player's view).
    """
    first, second = _ANSI[::-1] if swap else _ANSI
    return text.replace("X", f"{first}X{_ANSI_RESET}").replace("O", f"{second}O{_ANSI_RESET}")


def terminal_has_colour(stream: Any) -> bool:
    """True when ``stream`` is a terminal that takes colours (not redirected, ``NO_COLOR`` unset, TERM not
    ``dumb``).
    """
    isatty = getattr(stream, "isatty", None)
    return (
        callable(isatty)
        and bool(isatty())
        and "NO_COLOR" not in os.environ
        and os.environ.get("TERM", "") != "dumb"
    )


def grid_text(cells: Sequence[Sequence[int | None]], colour: bool = False) -> str:
    """Rows of cells as a person reads them, top row first (``X`` for 0, the first mover's stones, ``O`` for 1,
    ``.`` for None), with the column numbers, from 1, under them; every column as wide as the widest number.
    ``colour`` paints the stones (red and yellow) with ANSI escape codes.

    Returns:
        The text, without a final newline.
    """
    columns = len(cells[0]) if cells else 0
    width = len(str(columns))
    symbols = {0: "X", 1: "O", None: "."}
    lines = [" ".join(symbols[cell].rjust(width) for cell in row) for row in cells]
    lines.append(" ".join(str(column + 1).rjust(width) for column in range(columns)))
    text = "\n".join(lines)
    return colour_stones(text) if colour else text


def render_ansi(board: Board, colour: bool = False) -> str:
    """The board as text (``X`` moves first, ``O`` second), the columns numbered from 1 under it (the column a
    person calls 4 is action 3), and a status line (``O to move``, ``X wins``, ``draw``); ``colour`` paints the
    stones (red and yellow) with ANSI escape codes. The terminal game shows the same text.

    Raises:
        TypeError: ``board`` is not a [`Board`][connect4_env.core.Board].
    """
    winner = check_board(board).winner
    if winner is not None:
        status = f"{'XO'[winner]} wins"
    elif board.is_draw:
        status = "draw"
    else:
        status = f"{'XO'[board.to_move]} to move"
    rules = board.rules
    cells = [[board.cell(row, column) for column in range(rules.columns)] for row in range(rules.rows)]
    return f"{grid_text(cells, colour)}\n{status}\n"


@lru_cache(maxsize=16)
def _disc(tile: int) -> np.ndarray:
    centre = (tile - 1) / 2
    y, x = np.ogrid[:tile, :tile]
    return (x - centre) ** 2 + (y - centre) ** 2 <= (STONE_RADIUS * tile) ** 2


def _owners(board: Board) -> np.ndarray:
    """``(rows, columns)``: 0 for an empty cell, 1 for the first player's stone, 2 for the second's (row 0 at
    the top); one pass over the bitboards, not a big-int test per cell.
    """
    planes = observation_planes(board, 0)
    result: np.ndarray = planes[:, :, 0] + 2 * planes[:, :, 1]
    return result


def render_rgb(board: Board, tile: int = 48) -> np.ndarray:
    """An ``(rows * tile, columns * tile, 3)`` uint8 image of the board (row 0 at the top), in the colours
    of `connect4_env.svg`; the play window shows this image too.

    Raises:
        TypeError: ``board`` is not a [`Board`][connect4_env.core.Board], or ``tile`` is not an integer.
        ValueError: ``tile`` is outside ``4..MAX_TILE``, or the image would have more than
            `MAX_IMAGE_PIXELS` pixels.
    """
    rules = check_board(board).rules
    tile = check_tile(tile, rules)
    colours = _PALETTE[_owners(board)]  # (rows, columns, 3)
    disc = _disc(tile)[None, :, None, :, None]  # broadcast over (rows, tile, columns, tile, 3)
    image = np.where(disc, colours[:, None, :, None, :], _BACKGROUND)
    return np.ascontiguousarray(image.reshape(rules.rows * tile, rules.columns * tile, 3).astype(np.uint8))


class HumanWindow:
    """A pygame window that shows ``render_rgb`` images."""

    def __init__(self, caption: str = "Connect Four", fps: int = 2) -> None:
        self._pygame: Any = require(
            "pygame", "render", 'render_mode="human"', hint='(or use render_mode="rgb_array" or "ansi")'
        )
        self._caption = caption
        self._fps = fps
        self._screen: Any = None
        self._clock: Any = None

    def show(self, image: np.ndarray) -> None:
        """Show ``image`` (an ``(height, width, 3)`` uint8 array), opening the window at its size on the first
        call, then wait for the next frame at ``fps`` frames a second.
        """
        pygame = self._pygame
        if self._screen is None:
            pygame.display.init()
            pygame.display.set_caption(self._caption)
            self._screen = pygame.display.set_mode((image.shape[1], image.shape[0]))
            self._clock = pygame.time.Clock()
        surface = pygame.surfarray.make_surface(image.transpose(1, 0, 2))
        self._screen.blit(surface, (0, 0))
        pygame.event.pump()
        pygame.display.flip()
        self._clock.tick(self._fps)

    def close(self) -> None:
        """Close the window if one is open; the next `show` opens a
        new one.
        """
        if self._screen is not None:
            self._pygame.display.quit()
            self._screen = None


class BoardRenderer:
    """What both environments' ``render()`` does for a given ``render_mode``; drops its window on pickling.

    Raises:
        TypeError: ``tile`` is not an integer.
        ValueError: an unknown ``render_mode``, or ``tile`` is outside ``4..MAX_TILE`` (with ``rules`` and an
            image mode, also a ``tile`` that would draw more than `MAX_IMAGE_PIXELS` pixels).
    """

    def __init__(
        self, render_mode: str | None, tile: int = 48, fps: int = 2, rules: Rules | None = None
    ) -> None:
        self.render_mode = check_render_mode(render_mode)
        self.tile = check_tile(tile, rules if render_mode in ("rgb_array", "human") else None)
        self.fps = fps
        self._window: HumanWindow | None = None

    def render(self, board: Board) -> str | np.ndarray | None:
        """Render ``board`` as Gymnasium's ``render()`` does for this ``render_mode``.

        Returns:
            The text of `render_ansi` for ``"ansi"``, the image of
            `render_rgb` for ``"rgb_array"``, and None for ``"human"``
            (the image is shown in a pygame window, opened on the first call) and for no mode (with
            Gymnasium's warning).

        Raises:
            TypeError: ``board`` is not a [`Board`][connect4_env.core.Board] (with a render mode set).
            MissingExtraError: ``"human"`` without pygame (the ``render`` extra).
        """
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        if self.render_mode == "ansi":
            return render_ansi(board)
        image = render_rgb(board, self.tile)
        if self.render_mode == "rgb_array":
            return image
        if self._window is None:
            self._window = HumanWindow(fps=self.fps)
        self._window.show(image)
        return None

    def close(self) -> None:
        """Close the pygame window if one is open (Gymnasium's ``close()``); rendering again reopens it."""
        if self._window is not None:
            self._window.close()
            self._window = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_window"] = None
        return state


def to_svg(board: Board, *, last_move: bool = True, winning_line: bool = True, tile: int = 48) -> str:
    """The board as a standalone SVG document: one circle per cell, any board size.

    Colours as in ``rgb_array`` (red first player, yellow second, on blue). ``last_move`` rings the stone
    played last; ``winning_line`` outlines the winner's line(s) of ``win_length`` stones. ``tile`` is the
    size of a cell in SVG units (the picture scales freely).

    Raises:
        TypeError: ``board`` is not a [`Board`][connect4_env.core.Board], ``last_move`` or
            ``winning_line`` is not a bool, or ``tile`` is not an integer.
        ValueError: ``tile`` is outside ``4..MAX_TILE``, or the board has more than `MAX_SVG_CELLS` cells.
    """
    if not isinstance(board, Board):
        raise TypeError(f"to_svg draws a connect4_env.Board, got {type(board).__name__}")
    check_bool("last_move", last_move)
    check_bool("winning_line", winning_line)
    tile_units = check_int("tile", tile, 4, MAX_TILE)
    check_svg_size(board.rules.rows, board.rules.columns)
    return draw_svg(
        _owners(board).tolist(),
        ply=board.ply,
        last_cell=board.last_cell() if last_move else None,
        winning_cells=board.winning_cells() if winning_line else (),
        tile=tile_units,
    )
