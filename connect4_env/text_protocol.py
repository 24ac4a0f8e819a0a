"""The text protocol of ``Connect4Text-v0``: a position as text for a language model, a move read back from free
text, and the prompt that explains both. Pure functions on :class:`~connect4_env.core.Board`; no env here.

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
from dataclasses import dataclass

from connect4_env.core import Board, check_board
from connect4_env.rules import MAX_CELLS
from connect4_env.validation import check_int

__all__ = [
    "LETTERS",
    "MAX_ANSWER_LENGTH",
    "ParseResult",
    "parse_column",
    "column_label",
    "describe_position",
    "SYSTEM_PROMPT",
    "prompt_messages",
]

LETTERS = "abcdefghijklmnopqrstuvwxyz"
MAX_ANSWER_LENGTH = 4096

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
class ParseResult:
    """What :func:`parse_column` read: ``column`` (0-based env column) or ``error`` (a message for the model)."""

    column: int | None
    error: str | None

    @property
    def ok(self) -> bool:
        """True when a column on the board was read."""
        return self.column is not None


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
        A :class:`ParseResult`: the 0-based column, or an error message naming what was wrong and what to
        answer. Never raises for any string.

    Raises:
        TypeError: ``text`` is not a ``str``, or ``columns`` / ``max_length`` not an integer. ValueError:
            ``columns`` or ``max_length`` below 1.
    """
    if not isinstance(text, str):
        raise TypeError(f"a text action must be a str, got {type(text).__name__}: {text!r:.80}")
    columns = check_int("columns", columns, 1, MAX_CELLS)
    max_length = check_int("max_length", max_length, 1)
    hint = _range_hint(columns)
    if len(text) > max_length:
        return ParseResult(
            None, f"the answer has {len(text)} characters, more than {max_length}: answer {hint}"
        )
    tagged = _last_tagged(text)
    content = (tagged if tagged is not None else text).strip()
    if content[-1:] in (".", "!"):
        content = content[:-1].rstrip()
    match = _ANSWER.fullmatch(content)
    if match is None:
        # quoted, non-ASCII and control characters escaped: the message (and the text env's observation that
        # echoes it) stays within printable ASCII, whatever the model wrote
        shown = ascii(content)
        if len(shown) > 42:
            shown = shown[:38] + "..." + shown[-1]
        return ParseResult(None, f"could not read a column from {shown}: answer {hint}, such as '4'")
    token = match["column"].lower()
    if token.isdigit():
        shown = token.lstrip("0") or "0"
        column = int(shown) - 1 if len(shown) <= 6 else columns  # a huge number is simply off the board
    else:
        column = LETTERS.index(token) if columns <= len(LETTERS) else columns
        shown = token
    if not 0 <= column < columns:
        return ParseResult(None, f"column {shown} is not on the board: answer {hint}")
    return ParseResult(column, None)


def _last_tagged(text: str) -> str | None:
    """The text of the last ``<answer>...</answer>`` pair (each opening tag closed by the first closing tag
    after it, pairs read left to right), or None. One pass: a regular expression's lazy ``(.*?)`` would rescan
    the rest of the text from every unclosed tag (quadratic: 64 KB of them took 5 s)."""
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
) -> str:
    """The position as text, seen by ``player`` (0 = first mover): coordinates, stones, whose turn, the legal
    columns; ``status`` replaces the line on whose move it is (a game lost by a rejected answer), and ``note``
    (such as why the last answer was rejected) is added as a final line.

    ``X`` marks the viewer's stones and ``O`` the opponent's, whoever moved first. Returns the text.

    Raises:
        TypeError: ``board`` is not a Board, or ``player`` / ``last_opponent_column`` not an integer, or
            ``note`` / ``status`` not a str. ValueError: ``player`` not 0 or 1, or ``last_opponent_column`` off
            the board.
    """
    rules = check_board(board).rules
    player = check_int("player", player, 0, 1)
    if last_opponent_column is not None:
        last_opponent_column = check_int("last_opponent_column", last_opponent_column, 0, rules.columns - 1)
    for name, text in (("note", note), ("status", status)):
        if text is not None and not isinstance(text, str):
            raise TypeError(f"{name} must be a str or None, got {type(text).__name__}")
    columns = rules.columns
    lettered = columns <= len(LETTERS)
    width = len(str(columns))
    label_width = len(str(rules.rows))
    numbers = " ".join(str(c + 1).rjust(width) for c in range(columns))
    pad = " " * (label_width + 2)
    lines = [
        f"Connect Four on {rules.rows} rows x {columns} columns: line up {rules.win_length} of your stones "
        "in a row, column or diagonal to win.",
        f"You are X, the opponent is O; you moved {'first' if player == 0 else 'second'}.",
        "",
        pad + numbers,
    ]
    symbols = {player: "X", 1 - player: "O", None: "."}
    for row in range(rules.rows):
        cells = " ".join(symbols[board.cell(row, c)].rjust(width) for c in range(columns))
        lines.append(f"{str(rules.rows - row).rjust(label_width)}  {cells}")
    if lettered:
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
    else:
        legal = " ".join(str(c + 1) for c in board.legal_moves())
        lines.append(f"Your move ({board.ply // 2 + 1}). Legal columns: {legal}.")
    if note:
        lines.append(note)
    return "\n".join(lines) + "\n"


SYSTEM_PROMPT = (
    "You are playing Connect Four. Stones fall to the lowest empty cell of the column you choose. "
    "Columns are numbered from 1 at the left (letters a, b, c, ... name the same columns). "
    "Think briefly if you like, then give your move as <answer>N</answer>, where N is one of the legal columns "
    "listed, for example <answer>4</answer>."
)


def prompt_messages(observation: str, system_prompt: str = SYSTEM_PROMPT) -> list[dict[str, str]]:
    """A chat prompt for ``observation`` (``Connect4Text-v0``'s text): the system message with the rules and the
    answer format, then the position as the user's message. Returns ``[{"role", "content"}, ...]``, the format
    of ``tokenizer.apply_chat_template`` and TRL's conversational datasets."""
    return [{"role": "system", "content": system_prompt}, {"role": "user", "content": observation}]
