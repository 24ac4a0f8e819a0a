"""A person at the keyboard, as a policy."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from connect4_agents.base import RulesAware, check_mask_width, legal_columns, unpack
from connect4_env.render import colour_stones, terminal_has_colour
from connect4_env.validation import check_bool

__all__ = ["HumanAgent"]


class HumanAgent(RulesAware):
    """Shows the board (``X`` = you) and asks for a column until a legal one is typed.

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
        """Show the board through ``output_fn`` and read lines from ``input_fn`` until one is a legal column;
        returns that column (the policy's ``act``). A line that is not a legal column is answered with the
        legal ones and asked again.

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
        legal = [int(c) for c in legal_columns(mask)]
        rows, columns = planes.shape[0], planes.shape[1]
        lines = [
            " ".join("X" if planes[r, c, 0] else "O" if planes[r, c, 1] else "." for c in range(columns))
            for r in range(rows)
        ]
        lines.append(" ".join(str(c % 10) for c in range(columns)))
        goal = f", {self.rules.win_length} in a row wins" if self.rules is not None else ""
        text = "\n".join(lines) + f"\n(you are X{goal})"
        if self.colour:  # X is you: red if you moved first (as many stones as the opponent), else yellow
            text = colour_stones(text, swap=int(planes[..., 0].sum()) != int(planes[..., 1].sum()))
        self.output_fn(text)
        while True:
            text = self.input_fn(f"your move {legal}: ").strip()
            if text.lstrip("-").isdigit() and int(text) in legal:
                return int(text)
            self.output_fn(f"{text!r} is not a legal column; choose one of {legal}")
