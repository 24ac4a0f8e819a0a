"""This package's own dialect, ``"connect4"`` (``Connect4Text-v0``'s default): a position as text for a language
model, a move read back from free text, and the prompt that explains both.

Columns shown to the model are **1-based**: ``1`` is the leftmost column, env column ``c`` (0-based, as in
``Connect4-v0``'s ``Discrete`` action) is shown as ``c + 1`` and, on boards of at most 26 columns, as the letter
``"abcdefghijklmnopqrstuvwxyz"[c]``. Rows are numbered from the bottom (``1`` = the row a stone falls to
first), as in chess notation.

## Answer grammar

An answer is read case-insensitively; leading and trailing white space and one final ``.`` or ``!`` are
ignored. If the text holds ``<answer>...</answer>`` (a model that reasons first), only the last such tag's
content is read; otherwise the whole text is. The content must then match, in full::

    answer  := [lead] [colword] column
    lead    := ["i" ws] verb [ws ("in" | "into" | "at" | "on")] ws      e.g. "play ", "I drop in "
             | label ws? ":" ws?                                         e.g. "move: ", "Answer:"
    verb    := "play" | "plays" | "drop" | "move" | "choose" | "pick"
    label   := "move" | "answer" | "column" | "action"
    colword := ("column" | "col" | "col.") ws?                          e.g. "column ", "col."
    column  := digits                  1 .. columns (leading zeros allowed: "04" is 4)
             | letter                  a .. the columns-th letter (boards of at most 26 columns)

So ``"4"``, ``"d"``, ``"column 4"``, ``"Col. d"``, ``"I play d"``, ``"play column 4."``, ``"Move: 4"``,
``"<think>...</think><answer>4</answer>"`` all read as env column 3. Rejected (unparseable): empty text,
two columns (``"4 5"``, ``"d or e"``), number words (``"four"``), signs or fractions (``"-1"``, ``"4.5"``),
cell names (``"d4"``), other sentences (``"I think 4"``), text longer than ``max_length`` characters. A
number or letter outside the board (``"0"``, ``"8"``, ``"h"`` on 7 columns) is rejected as out of range; a
full column parses but is an illegal move.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from connect4_env.core import Board, check_board
from connect4_env.envs.dialects.base import ECHO_LENGTH, MAX_ANSWER_LENGTH, Dialect, ParseResult, echo
from connect4_env.rules import MAX_CELLS, Rules
from connect4_env.validation import check_int

__all__ = [
    "Connect4Dialect",
    "LETTERS",
    "SYSTEM_PROMPT",
    "parse_column",
    "max_error_length",
    "column_label",
    "describe_position",
    "max_description_length",
    "rejection_note",
    "prompt_messages",
]

LETTERS = "abcdefghijklmnopqrstuvwxyz"
SYSTEM_PROMPT = (
    "You are playing Connect Four. Stones fall to the lowest empty cell of the column you choose. "
    "Columns are numbered from 1 at the left (letters a, b, c, ... name the same columns). "
    "Think briefly if you like, then give your move as <answer>N</answer>, where N is one of the legal columns "
    "listed, for example <answer>4</answer>."
)

_OPEN_TAG = re.compile(r"<answer>", re.IGNORECASE)
_CLOSE_TAG = re.compile(r"</answer>", re.IGNORECASE)
_ANSWER = re.compile(
    r"(?:(?:i\s+)?(?:play|plays|drop|move|choose|pick)(?:\s+(?:in|into|at|on))?\s+"
    r"|(?:move|answer|column|action)\s*:\s*)?"
    r"(?:(?:column|col\.?)\s*)?"
    r"(?P<column>\d+|[a-z])",
    re.IGNORECASE | re.ASCII,
)


@dataclass(frozen=True)
class Connect4Dialect(Dialect):
    """This package's own dialect: the grid with numbers above and letters below, ``X`` the model, 1-based
    columns (or letters), the answer grammar of this module's docstring, two retries a move, then a loss.
    ``history`` adds a line of both players' moves (``X4 O5``); the legal columns are listed by default.
    """

    legal_moves: bool = True

    name: ClassVar[str] = "connect4"
    base: ClassVar[int] = 1
    max_retries: ClassVar[int] = 2
    fallback: ClassVar[str] = "random"

    def system_prompt(self, rules: Rules | None = None, player: int = 0) -> str:
        """`SYSTEM_PROMPT`, whatever the board and seat."""
        return SYSTEM_PROMPT

    def render(
        self, board: Board, player: int, moves: Sequence[int], note: str | None, status: str | None
    ) -> str:
        """The position as `describe_position` shows it, the moves so far under ``history``, then ``note``."""
        last = moves[-1] if moves and len(moves) % 2 == player else None
        text = describe_position(
            board,
            player,
            last_opponent_column=last,
            status=status,
            legal=self.legal_moves,
            grid=not self.blind,
        )
        if self.history:
            spoken = " ".join(
                f"{'X' if index % 2 == player else 'O'}{move + 1}" for index, move in enumerate(moves)
            )
            text += f"Moves so far, first move first: {spoken or 'none'}.\n"
        return text + (note + "\n" if note else "")

    def read(self, text: str, board: Board) -> ParseResult:
        """`parse_column`'s reading; a full column is rejected too."""
        parsed = parse_column(text, board.rules.columns, max(len(text), 1))
        if parsed.column is not None and not board.is_legal(parsed.column):
            return ParseResult(None, f"column {parsed.column + 1} is full: answer one of the legal columns")
        return parsed

    def rejection_note(self, answer: str, error: str, tries_left: int, cut_off: bool = False) -> str:
        """`rejection_note`: why, and the tries left for this move."""
        return rejection_note(error, tries_left)

    def max_observation_length(self, rules: Rules, *, note_length: int = 0, status_length: int = 0) -> int:
        """The exact longest observation (`max_description_length`) with the default options, else a bound."""
        if (self.legal_moves, self.history, self.blind) == (True, False, False):
            return max_description_length(rules, note_length=note_length, status_length=status_length)
        return super().max_observation_length(rules, note_length=note_length, status_length=status_length)


def max_error_length(columns: int, max_length: int = MAX_ANSWER_LENGTH) -> int:
    """The most characters of a `parse_column` error on a board of `columns` columns reading answers of at most
    `max_length` characters (or of a text env's full-column message), whatever the answer.
    """
    hint = len(_range_hint(columns))
    return max(
        len("could not read a column from : answer , such as '4'") + ECHO_LENGTH + hint,
        len("column  is not on the board: answer ") + ECHO_LENGTH + hint,
        len("the answer has more than  characters: answer ") + len(str(max_length)) + hint,
        len("column  is full: answer one of the legal columns") + len(str(columns)),
    )


def column_label(column: int, columns: int) -> str:
    """How env column ``column`` (0-based) is shown to the model: ``"4 (d)"``, or ``"30"`` past 26 columns."""
    number = str(column + 1)
    return f"{number} ({LETTERS[column]})" if columns <= len(LETTERS) else number


def _range_hint(columns: int) -> str:
    letters = f" or a letter a..{LETTERS[columns - 1]}" if columns <= len(LETTERS) else ""
    return f"a column number 1..{columns}{letters}"


def parse_column(text: str, columns: int, max_length: int = MAX_ANSWER_LENGTH) -> ParseResult:
    """Read a column from free text by the grammar in this module's docstring.

    Args:
        text: the model's answer.
        columns: the board's width (numbers 1..columns and letters a.. are on the board).
        max_length: longer texts are rejected unread.

    Returns:
        A `ParseResult`: the 0-based column, or an error message naming what was wrong and what to answer.
        Never raises for any string. The message quotes at most `ECHO_LENGTH` characters of the answer
        (through `echo`), so it is at most `max_error_length` characters of printable ASCII.

    Raises:
        TypeError: `text` is not a `str`, or `columns` / `max_length` not an integer.
        ValueError: `columns` or `max_length` below 1.
    """
    if not isinstance(text, str):
        raise TypeError(f"a text action must be a str, got {type(text).__name__}: {text!r:.80}")
    columns = check_int("columns", columns, 1, MAX_CELLS)
    max_length = check_int("max_length", max_length, 1)
    hint = _range_hint(columns)
    if len(text) > max_length:
        return ParseResult(None, f"the answer has more than {max_length} characters: answer {hint}")
    tagged = _last_tagged(text)
    content = (tagged if tagged is not None else text).strip()
    if content[-1:] in (".", "!"):
        content = content[:-1].rstrip()
    match = _ANSWER.fullmatch(content)
    if match is None:
        return ParseResult(None, f"could not read a column from {echo(content)}: answer {hint}, such as '4'")
    token = match["column"].lower()
    if token.isdigit():
        token = token.lstrip("0") or "0"
        column = int(token) - 1 if len(token) <= 6 else columns  # a huge number is simply off the board
    else:
        column = LETTERS.index(token) if columns <= len(LETTERS) else columns
    if not 0 <= column < columns:
        return ParseResult(None, f"column {echo(token, quote=False)} is not on the board: answer {hint}")
    return ParseResult(column, None)


def _last_tagged(text: str) -> str | None:
    """The text of the last ``<answer>...</answer>`` pair (each opening tag closed by the first closing tag
    after it, pairs read left to right), or None. One pass: a regular expression's lazy ``(.*?)`` would rescan
    the rest of the text from every unclosed tag (quadratic: 64 KB of them took 5 s).
    """
    found = None
    position = 0
    while (opened := _OPEN_TAG.search(text, position)) is not None:
        closed = _CLOSE_TAG.search(text, opened.end())
        if closed is None:
            break
        found = text[opened.end() : closed.start()]
        position = closed.end()
    return found


def describe_position(
    board: Board,
    player: int,
    *,
    last_opponent_column: int | None = None,
    note: str | None = None,
    status: str | None = None,
    legal: bool = True,
    grid: bool = True,
) -> str:
    """The position as text, seen by ``player`` (0 = first mover): coordinates, stones, whose turn, the legal
    columns; ``status`` replaces the line on whose move it is (a game lost by a rejected answer), and ``note``
    (such as why the last answer was rejected) is added as a final line. ``legal=False`` leaves the legal
    columns out and ``grid=False`` the board (a blind prompt).

    ``X`` marks the viewer's stones and ``O`` the opponent's, whoever moved first. Returns the text.

    Raises:
        TypeError: ``board`` is not a [`Board`][connect4_env.core.Board], ``player`` or
            ``last_opponent_column`` is not an integer, or ``note`` or ``status`` is neither a str nor None.
        ValueError: ``player`` is an integer other than 0 and 1, or ``last_opponent_column`` an integer
            off the board.
    """
    rules = check_board(board).rules
    player = check_int("player", player, 0, 1)
    if last_opponent_column is not None:
        last_opponent_column = check_int("last_opponent_column", last_opponent_column, 0, rules.columns - 1)
    for name, text in (("note", note), ("status", status)):
        if text is not None and not isinstance(text, str):
            raise TypeError(f"{name} must be a str or None, got {type(text).__name__}")
    columns = rules.columns
    width, label_width = len(str(columns)), len(str(rules.rows))
    pad = " " * (label_width + 2)
    lines = [
        f"Connect Four on {rules.rows} rows x {columns} columns: line up {rules.win_length} of your stones "
        "in a row, column or diagonal to win.",
        f"You are X, the opponent is O; you moved {'first' if player == 0 else 'second'}.",
        "",
    ]
    if grid:
        lines.append(pad + " ".join(str(c + 1).rjust(width) for c in range(columns)))
        symbols = {player: "X", 1 - player: "O", None: "."}
        for row in range(rules.rows):
            cells = " ".join(symbols[board.cell(row, c)].rjust(width) for c in range(columns))
            lines.append(f"{str(rules.rows - row).rjust(label_width)}  {cells}")
        if columns <= len(LETTERS):
            lines.append(pad + " ".join(LETTERS[c].rjust(width) for c in range(columns)))
        lines.append("")
    if last_opponent_column is not None:
        lines.append(f"The opponent played column {column_label(last_opponent_column, columns)}.")
    if status is not None:
        lines.append(status)
    elif board.winner is not None:
        lines.append("Game over: you won." if board.winner == player else "Game over: you lost.")
    elif board.is_draw:
        lines.append("Game over: a draw (the board is full).")
    elif legal:
        listed = " ".join(str(c + 1) for c in board.legal_moves())
        lines.append(f"Your move ({board.ply // 2 + 1}). Legal columns: {listed}.")
    else:
        lines.append(f"Your move ({board.ply // 2 + 1}).")
    if note:
        lines.append(note)
    return "\n".join(lines) + "\n"


def max_description_length(rules: Rules, *, note_length: int = 0, status_length: int = 0) -> int:
    """The most characters `describe_position` returns for a board of `rules`, with a `note` of at most
    `note_length` characters and a `status` of at most `status_length`, whatever the position.
    """
    rows, columns = rules.rows, rules.columns
    grid = len(str(rows)) + 2 + columns * len(str(columns)) + columns - 1  # numbers, letters and each row
    everything_legal = sum(len(str(c + 1)) for c in range(columns)) + columns - 1
    lines = [
        len(
            f"Connect Four on {rows} rows x {columns} columns: line up {rules.win_length} of your stones "
            "in a row, column or diagonal to win."
        ),
        len("You are X, the opponent is O; you moved second."),
        0,
        *[grid] * (rows + 1 + (columns <= len(LETTERS))),
        0,
        len(f"The opponent played column {column_label(columns - 1, columns)}."),
        max(
            status_length,
            len("Game over: a draw (the board is full)."),
            len(f"Your move ({rules.cells // 2 + 1}). Legal columns: .") + everything_legal,
        ),
    ]
    if note_length:
        lines.append(note_length)
    return sum(lines) + len(lines)  # each line ends in a newline


def rejection_note(error: str, tries_left: int) -> str:
    """The line that tells the model why its answer was rejected and how many tries this move has left."""
    return f"Your answer was rejected: {error}. Tries left for this move: {tries_left}."


def prompt_messages(observation: str, system_prompt: str = SYSTEM_PROMPT) -> list[dict[str, str]]:
    """A chat prompt for ``observation`` (``Connect4Text-v0``'s text): the system message with the rules and the
    answer format, then the position as the user's message. Returns ``[{"role", "content"}, ...]``, the format
    of ``tokenizer.apply_chat_template`` and TRL's conversational datasets.
    """
    return [{"role": "system", "content": system_prompt}, {"role": "user", "content": observation}]
