"""TextArena's ``ConnectFour`` env (its prompt, its ``ActionFormattingWrapper`` and its move regex): a header of
column numbers, rows top first, ``[col N]`` answers; one free invalid answer a move, the second loses.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from connect4_env.core import Board
from connect4_env.envs.dialects.base import Dialect, ParseResult, echo
from connect4_env.rules import Rules

__all__ = ["TextArenaDialect"]

# TextArena's own pattern, Unicode as its regex is: any decimal digit (``[٣]``), any white space after ``col``
# (a no-break space, a line break)
_BRACKET = re.compile(r"\[(?:col\s*)?(\d+)\]", re.IGNORECASE)


@dataclass(frozen=True)
class TextArenaDialect(Dialect):
    """TextArena's ``ConnectFour``: an answer without ``[`` or ``]`` is read as ``[answer]``; the first line
    where a ``[N]`` or ``[col N]`` starts (any case; any white space after ``col``, a no-break space or a line
    break included; ``N`` in any script's decimal digits, ``[٣]`` is 3) gives the last such bracket starting on
    it; ``[column 3]`` is rejected. The moves so far are shown by default (TextArena's message log).
    """

    history: bool = True

    name: ClassVar[str] = "textarena"
    max_retries: ClassVar[int] = 1

    def system_prompt(self, rules: Rules | None = None, player: int = 0) -> str:
        """TextArena's ConnectFour prompt for ``player``."""
        rules = rules or Rules()
        return (
            f"You are Player {player} in Connect Four.\n"
            f"Your disc symbol: {'XO'[player]}.\n"
            f"The game board has {rules.rows} rows and {rules.columns} columns.\n"
            f"Players take turns dropping their disc into one of the columns (0 to {rules.columns - 1}).\n"
            f"The first to connect {rules.win_length} of their own discs vertically, horizontally, or "
            "diagonally wins.\n"
            "On your turn, enter the column number in squared brackets to make your move.\n"
            "For example: '[col 4]' or '[col 1]'."
        )

    def render(
        self, board: Board, player: int, moves: Sequence[int], note: str | None, status: str | None
    ) -> str:
        """TextArena's ``[GAME]`` messages: the moves, the board (or that it is hidden), then status and note."""
        rules = board.rules
        lines = []
        if self.history:
            lines += [
                f"[GAME] Player {index % 2} dropped their disk ({'XO'[index % 2]}) into column {move}."
                for index, move in enumerate(moves)
            ]
        if self.blind:
            lines.append("[GAME] The game board is not visible to players.")
        else:
            width = len(str(rules.columns - 1))
            header = " ".join(str(c).rjust(width) for c in range(rules.columns))
            lines += ["[GAME] Board state:", header, "-" * len(header)]
            for row in range(rules.rows):
                cells = ("." if (s := board.cell(row, c)) is None else "XO"[s] for c in range(rules.columns))
                lines.append(" ".join(cell.rjust(width) for cell in cells))
        if self.legal_moves and status is None:
            lines.append("[GAME] Legal columns: " + ", ".join(f"[{c}]" for c in board.legal_moves()))
        if status is not None:
            lines.append(f"[GAME] {status}")
        if note:
            lines.append(f"[GAME] {note}")
        return "\n".join(lines) + "\n"

    def read(self, text: str, board: Board) -> ParseResult:
        """The last bracket starting on the first line where one starts, as TextArena reads it."""
        if "[" not in text and "]" not in text:
            text = f"[{text}]"
        first = _BRACKET.search(text)
        if first is None:
            return ParseResult(None, "Invalid action format. Expected format: '[col x]'")
        # TextArena's greedy ``.*`` takes the last bracket that starts on the first line where one starts
        line_end = text.find("\n", first.start())
        line_end = len(text) if line_end < 0 else line_end
        last = first
        for match in _BRACKET.finditer(text, first.end()):
            if match.start() >= line_end:
                break
            last = match
        token = last[1]
        column = int(token) if len(token) <= 6 else board.rules.columns
        if column >= board.rules.columns:
            return ParseResult(None, f"Column {echo(token, quote=False)} is out of bounds")
        if not board.is_legal(column):
            return ParseResult(None, f"Column {column} is full")
        return ParseResult(column, None)

    def rejection_note(self, answer: str, error: str, tries_left: int, cut_off: bool = False) -> str:
        """TextArena's invalid-move message with the reason."""
        return (
            f"You attempted an invalid move. Reason: {error}. Please resubmit a valid move and remember to "
            "follow the game rules to avoid penalties."
        )
