"""Kaggle's Game Arena harness (kaggle-environments' ``open_spiel_env`` connect_four harness): OpenSpiel's board,
0-based columns, reasoning then ``Final Answer: N``, read leniently; one rethink quoting the answer, then a
forfeit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from connect4_env.core import Board
from connect4_env.envs.dialects.base import (
    RETHINK_QUOTE_LENGTH,
    Dialect,
    ParseResult,
    echo,
    last_match,
    printable_tail,
)

__all__ = ["GameArenaDialect", "openspiel_board", "history_line"]

# Kaggle's patterns are Unicode: ``\s`` takes a no-break space, and ``\d+`` a run of any script's digits, which
# names a column only when it is all ASCII (``3\u0663`` is one number, no column)
_FINAL_ANSWER = re.compile(r"final\s+answer\s*:\s*(\d+)", re.IGNORECASE)
_NUMBER = re.compile(r"\d+")


def openspiel_board(board: Board) -> str:
    """OpenSpiel's ``connect_four`` state string: the top row first, ``x`` the first mover, ``o``, ``.``."""
    columns = range(board.rules.columns)
    rows = (
        "".join("." if (s := board.cell(row, c)) is None else "xo"[s] for c in columns)
        for row in range(board.rules.rows)
    )
    return "\n".join(rows) + "\n"


def history_line(moves: Sequence[int]) -> str:
    """The moves as OpenSpiel's action strings with the mover's letter (``x3 o3 x2``), or ``None``."""
    return " ".join(f"{'xo'[index % 2]}{move}" for index, move in enumerate(moves)) or "None"


def _legal_digits(token: str, board: Board) -> int | None:
    """The column a number written as ``token`` names, if legal (read as written: ``"03"`` and ``"٣"`` name
    none).
    """
    if len(token) > 6 or not token.isascii() or str(int(token)) != token:
        return None
    column = int(token)
    return column if column < board.rules.columns and board.is_legal(column) else None


class GameArenaDialect(Dialect):
    """Kaggle's Game Arena harness, lenient: the last ``Final Answer: N`` (any case, any white space around the
    colon) if ``N`` is a legal column; otherwise the last number anywhere in the answer that is a legal column
    (their fallback, so ``"I considered column 2. Final Answer: 7"`` plays 2); otherwise rejected. ``N`` is
    read as written: ``03`` is no column, and a run of digits in any script (``3٣``) is one number, no
    column. A reply cut off at the length limit (``finish_reason="length"``, known to `TextPolicy`) is read the
    same way; when it gives no legal column, the retry text asks for a shorter answer.
    """

    name: ClassVar[str] = "game_arena"
    max_retries: ClassVar[int] = 1

    def render(
        self, board: Board, player: int, moves: Sequence[int], note: str | None, status: str | None
    ) -> str:
        """Kaggle's prompt: the rules, the board (unless blind), the moves and legal columns as asked, the
        answer format, then whose move it is (or ``status``) and ``note``.
        """
        rules, name = board.rules, "xo"[player]
        lines = [
            "You are a strong Connect X player. Analyze the game state below and choose the best move.",
            "",
            "I. Game rules and configuration",
            "",
            "A. Game: Connect X (generalized Connect Four).",
            f"B. Board size: {rules.rows} rows and {rules.columns} columns.",
            "C. Gravity: a disc falls to the lowest empty cell of its column.",
            f"D. Win condition: the first player to get {rules.win_length} of their discs in a row "
            "(horizontally, vertically or diagonally) wins.",
            "E. Legal moves: you cannot play a column whose top row (row 0) is occupied.",
            f"F. Column indices: columns are 0-indexed from left to right (0 to {rules.columns - 1}).",
            f"G. You are playing as player {name}.",
            "",
            "II. Input data",
            "",
        ]
        if not self.blind:
            lines += ["Current board state:", "", openspiel_board(board)]
        if self.history:
            lines += ["The moves played so far are:", history_line(moves), ""]
        if self.legal_moves and status is None:
            lines += ["The legal moves are:", " ".join(str(c) for c in board.legal_moves()), ""]
        lines += [
            "III. Required final answer format",
            "",
            "Start with your reasoning and end with the final answer, on a single, final, new line, in the "
            "exact format:",
            "",
            "Final Answer: <column_index>",
            "",
            "where <column_index> is a single integer, the zero-based column index.",
            status if status is not None else f"It is your move (player {name}). Choose the best column.",
        ]
        return "\n".join(lines + ([note] if note else [])) + "\n"

    def read(self, text: str, board: Board) -> ParseResult:
        """The last legal ``Final Answer: N``, else the last legal number, else why none."""
        # one pass each, keeping only the last match: a list of every number would cost ~64 bytes a character
        final = last_match(_FINAL_ANSWER, text)
        if final is not None and (column := _legal_digits(final[1], board)) is not None:
            return ParseResult(column, None)
        column = None
        for match in _NUMBER.finditer(text):
            legal = _legal_digits(match[0], board)
            if legal is not None:
                column = legal
        if column is not None:
            return ParseResult(column, None)
        if final is not None:
            return ParseResult(None, f"Final Answer {echo(final[1], quote=False)} is not a legal column")
        return ParseResult(
            None, "no legal column index could be read (end with 'Final Answer: <column_index>')"
        )

    def rejection_note(self, answer: str, error: str, tries_left: int, cut_off: bool = False) -> str:
        """Kaggle's rethink: the end of the answer quoted, or a request for a shorter one after a cut-off."""
        if cut_off:
            return (
                "Your last answer was cut off at the length limit before it gave a move, so no move was "
                "recorded. Reason more briefly this time and end with the final answer line."
            )
        return (
            "No legal column could be read from your previous response. Think again and answer a legal, "
            "strong column. End with the final answer on its own last line, exactly in the format:\n"
            "Final Answer: <column_index>\n\n"
            f"Your previous response concluded with:\n{printable_tail(answer, RETHINK_QUOTE_LENGTH)}"
        )
