"""A person at the keyboard, as a policy."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from connect4_agents.base import RulesAware, check_mask_width, legal_columns, unpack
from connect4_env.render import colour_stones, grid_text, terminal_has_colour
from connect4_env.validation import check_bool

__all__ = ["HumanAgent"]


class HumanAgent(RulesAware):
    """Shows the board (``X`` = you) and asks for a column until a legal one is typed.

    Columns are numbered from 1 at the left, under the board and in what the person types, as in every view a
    person reads ([`render_ansi`][connect4_env.render.render_ansi]); ``act`` returns the action, the column
    number minus 1.

    Args:
        input_fn: reads a line, given the prompt (default ``input``).
        output_fn: prints a text (default ``print``).
        colour: paint the stones red (first player) and yellow (second) with ANSI codes; None (default): when
            standard output is a terminal that takes colours.
    """

    name = "human"

    def __init__(
        self,
        input_fn: Callable[[str], str] = input,
        *,
        output_fn: Callable[[str], None] = print,
        colour: bool | None = None,
    ) -> None:
        for name, function in (("input_fn", input_fn), ("output_fn", output_fn)):
            if not callable(function):
                raise TypeError(f"{name} must be callable, got {function!r:.80} ({type(function).__name__})")
        self.input_fn = input_fn
        self.output_fn = output_fn
        self.colour = terminal_has_colour(sys.stdout) if colour is None else check_bool("colour", colour)

    def act(self, observation: Any, action_mask: Any = None) -> int:
        """Show the board through ``output_fn`` and read lines from ``input_fn`` until one is a legal column
        number (from 1); returns that column as an action (from 0: the number minus 1). A line that is not a
        legal column is answered with the legal ones and asked again.

        Raises:
            TypeError: the mask holds neither numbers nor booleans.
            ValueError: the planes are not ``(rows, columns, 2)``, or the mask does not have one 0/1 entry per
                column.
            NoLegalMoveError: the mask allows no column (a ValueError).
            EOFError: ``input_fn`` reached the end of its input (``input`` after Ctrl-D) before a legal
                column was typed.
        """
        planes, mask = unpack(observation, action_mask)
        planes = np.asarray(planes)
        check_mask_width(mask, planes.shape[1])
        legal = [int(c) + 1 for c in legal_columns(mask)]
        rows, columns = planes.shape[0], planes.shape[1]
        cells = [
            [0 if planes[r, c, 0] else 1 if planes[r, c, 1] else None for c in range(columns)]
            for r in range(rows)
        ]
        goal = f", {self.rules.win_length} in a row wins" if self.rules is not None else ""
        text = f"{grid_text(cells)}\n(you are X{goal})"
        if self.colour:  # X is you: red if you moved first (as many stones as the opponent), else yellow
            text = colour_stones(text, swap=int(planes[..., 0].sum()) != int(planes[..., 1].sum()))
        self.output_fn(text)
        choices = " ".join(map(str, legal))
        while True:
            text = self.input_fn(f"your move [{choices}]: ").strip()
            # ASCII digits only, no more of them than the widest column number has
            if text.isascii() and text.isdigit() and len(text) <= len(str(columns)) and int(text) in legal:
                return int(text) - 1
            self.output_fn(f"{text[:40]!r} is not a legal column; type one of {choices}")
