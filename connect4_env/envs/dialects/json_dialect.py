"""OpenEnv's ``connect4_env`` action (``{"column": N}``) and ``drop_disc`` tool calls: the state as a JSON object,
0-based columns, a rejected answer loses at once. Also `scan_json`, the one bounded scan of JSON's structure that
this reader and the OpenEnv server's limits share.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from connect4_env.core import Board
from connect4_env.envs.dialects.base import ECHO_LENGTH, Dialect, ParseResult, echo, last_match
from connect4_env.rules import Rules

__all__ = ["JsonDialect", "scan_json", "JSON_TRIES", "MAX_JSON_DEPTH", "MAX_JSON_TOKENS"]

JSON_TRIES = 32
"""The most places a ``json`` answer is decoded from (its last candidate objects)."""
MAX_JSON_DEPTH = 32
"""The deepest nesting of arrays and objects a ``json`` answer's object (or a tool call's ``arguments``
string) may have to be decoded: a deeper one is not read (Python's decoder recurses once a level)."""
MAX_JSON_TOKENS = 4096
"""The most brackets, commas, quotes and backslashes an object may hold to be decoded: a tool call holds
tens, and the decoded value (and the work to find where it ends) stays small whatever the answer."""

_JSON_TOKEN = re.compile(r'[\[\]{},"\\]')
_OBJECT_START = re.compile(r'\{\s*["}]')
_TOOL_TEXT = re.compile(r"drop_disc\s*\(\s*(?:column\s*=\s*)?(-?\d+)\s*\)", re.IGNORECASE | re.ASCII)


def scan_json(
    text: str | bytes, start: int = 0, max_depth: int | None = None, max_tokens: int | None = None
) -> tuple[int, int | None]:
    """How deeply the first array or object in ``text`` (from ``start``) nests, and where it ends: one pass over
    its structure without decoding (brackets inside strings do not count), so a nesting or size limit can be
    checked before a parser that recurses once a level is given the text. A JSON parser reads one value, so
    what follows the first one is never parsed. Any text gives an answer, never an error.

    Args:
        text: JSON, as `str` or as UTF-8 `bytes`.
        start: where to start reading.
        max_depth: stop reading once the nesting passes this (the depth is then ``max_depth + 1``).
        max_tokens: stop reading after this many brackets, commas, quotes and backslashes.

    Returns:
        ``(depth, end)``: the deepest nesting read (0 for a scalar), and one past the bracket that closes the
        first array or object, or None when it is not closed or a limit stopped the reading.
    """
    if isinstance(text, bytes):
        text = text.decode("latin-1")  # byte for byte: a UTF-8 sequence holds no ASCII byte
    depth = deepest = tokens = 0
    in_string = False
    escaped_at = -1
    for match in _JSON_TOKEN.finditer(text, start):
        tokens += 1
        if max_tokens is not None and tokens > max_tokens:
            return deepest, None
        at = match.start()
        if at == escaped_at:  # the character after a backslash inside a string
            continue
        char = match.group()
        if in_string:
            if char == "\\":
                escaped_at = at + 1
            in_string = char != '"'
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if max_depth is not None and depth > max_depth:
                return deepest, None
        elif char in "]}":
            depth -= 1
            if depth <= 0:
                return deepest, (at + 1 if depth == 0 else None)
    return deepest, None


def _decode_json(text: str, start: int = 0) -> tuple[object, int] | None:
    """``(value, end)`` of the JSON value at ``text[start]`` (after white space), or None when there is none or
    it is an array or object past `MAX_JSON_DEPTH` / `MAX_JSON_TOKENS` (so decoding neither recurses deeply
    nor builds a large value).
    """
    while start < len(text) and text[start] in " \t\n\r":
        start += 1
    if (
        start < len(text)
        and text[start] in "[{"
        and scan_json(text, start, MAX_JSON_DEPTH, MAX_JSON_TOKENS)[1] is None
    ):
        return None
    try:
        return json.JSONDecoder().raw_decode(text, start)
    except ValueError:  # not JSON there (a number of more than 4,300 digits included)
        return None


def _last_named_column(text: str) -> object:
    """The ``column`` named by the last outermost JSON object in ``text`` that names one (see `_column_of`):
    at most `JSON_TRIES` decodes, from the last places where a ``{`` can open an object. An object inside
    another (a tool call's arguments) is read only through the outer one.
    """
    starts = deque((match.start() for match in _OBJECT_START.finditer(text)), maxlen=JSON_TRIES)
    objects = [(start, decoded[1], decoded[0]) for start in starts if (decoded := _decode_json(text, start))]
    outermost = [
        value for start, end, value in objects if not any(s < start and end <= e for s, e, _ in objects)
    ]
    for value in reversed(outermost):
        column = _column_of(value)
        if column is not None:
            return column
    return None


def _column_of(value: object, message: bool = True) -> object:
    """The ``column`` a decoded object names: ``{"column": N}`` or a tool call's arguments."""
    if not isinstance(value, dict):
        return None
    if "column" in value:
        return value["column"]
    calls = value.get("tool_calls") if message else None  # an OpenAI chat message: its last call naming one
    if isinstance(calls, list):
        named = (_column_of(call, message=False) for call in reversed(calls[:64]))
        return next((column for column in named if column is not None), None)
    call = value.get("function", value)  # OpenAI's {"type": "function", "function": {...}} or the bare call
    if not isinstance(call, dict) or call.get("name") != "drop_disc":
        return None
    arguments = call.get("arguments", call.get("parameters"))
    if isinstance(arguments, str):  # a JSON string, bounded as the answer is
        decoded = _decode_json(arguments)
        if decoded is None or arguments[decoded[1] :].strip():
            return None
        arguments = decoded[0]
    return arguments.get("column") if isinstance(arguments, dict) else None


def _shown(value: object) -> str:
    """A decoded ``column`` value as a rejection quotes it: at most `ECHO_LENGTH` characters."""
    if isinstance(value, int):
        text = str(value) if abs(value) < 10**40 else ("-" if value < 0 else "") + "1" + "0" * 40
        return echo(text, quote=False)
    if isinstance(value, str):
        return echo(json.dumps(value[: ECHO_LENGTH + 1]))
    return echo(json.dumps(value)[: ECHO_LENGTH + 1])


@dataclass(frozen=True)
class JsonDialect(Dialect):
    """OpenEnv's JSON: the last JSON object in the answer (of its last `JSON_TRIES` candidates) with a
    ``"column"`` integer (``{"column": 3}``), or a tool call ``{"name": "drop_disc", "arguments": {"column":
    3}}`` (``arguments`` may be a JSON string), or ``drop_disc(3)`` / ``drop_disc(column=3)`` written as text.
    An object (or ``arguments`` string) nested deeper than `MAX_JSON_DEPTH` or holding more than
    `MAX_JSON_TOKENS` brackets, commas and quotes is not read, so a hostile answer is rejected like any
    unreadable one. The legal columns are listed by default (``legal_actions``, as OpenEnv).
    """

    legal_moves: bool = True

    name: ClassVar[str] = "json"
    max_retries: ClassVar[int] = 0

    def system_prompt(self, rules: Rules | None = None, player: int = 0) -> str:
        """The state's keys explained and the answer's form."""
        return (
            "You are playing Connect Four. Each turn you get the game state as a JSON object: `board` lists the "
            "rows from the top, with 1 for the first player's discs, -1 for the second player's and 0 for an "
            "empty cell; `player` is your number (1 or -1). Line up "
            f"{(rules or Rules()).win_length} of your discs in a row, "
            "column or diagonal to win. Columns are numbered from 0 at the left. Answer with a JSON object "
            'naming the column, {"column": N}, or call the tool drop_disc with {"column": N}.'
        )

    def render(
        self, board: Board, player: int, moves: Sequence[int], note: str | None, status: str | None
    ) -> str:
        """A JSON object: ``board`` (rows top first, 1 the first mover, -1, 0), ``player``, and as asked
        ``legal_actions``, ``moves``, ``status`` and ``note``.
        """
        rules = board.rules
        state: dict[str, object] = {}
        if not self.blind:
            state["board"] = [
                [0 if (stone := board.cell(row, c)) is None else 1 - 2 * stone for c in range(rules.columns)]
                for row in range(rules.rows)
            ]
        state["player"] = 1 if player == 0 else -1
        if self.legal_moves:
            state["legal_actions"] = [] if status is not None else board.legal_moves()
        if self.history:
            state["moves"] = list(moves)
        if status is not None:
            state["status"] = status
        if note:
            state["note"] = note
        return json.dumps(state, separators=(", ", ": ")) + "\n"

    def read(self, text: str, board: Board) -> ParseResult:
        """The last object's (or tool call's) ``column``, else the last ``drop_disc(N)``, if a legal column."""
        named = _last_named_column(text)
        if named is None and (call := last_match(_TOOL_TEXT, text)) is not None:
            named = int(call[1]) if len(call[1]) <= 7 else board.rules.columns
        if named is None:
            return ParseResult(None, 'no column could be read: answer {"column": N}')
        if isinstance(named, float) and named.is_integer() and abs(named) < 1e9:
            named = int(named)  # {"column": 3.0}, which OpenEnv's pydantic model also takes
        elif isinstance(named, str) and named.isascii() and named.isdigit() and len(named) <= 7:
            named = int(named)  # {"column": "3"}, likewise
        if type(named) is not int:
            return ParseResult(None, f"column must be an integer, got {_shown(named)}")
        if not 0 <= named < board.rules.columns:
            return ParseResult(
                None, f"column {_shown(named)} is not on the board (0 to {board.rules.columns - 1})"
            )
        if not board.is_legal(named):
            return ParseResult(None, f"column {named} is full")
        return ParseResult(named, None)

    def rejection_note(self, answer: str, error: str, tries_left: int, cut_off: bool = False) -> str:
        """Why the answer was rejected (a rejected answer loses at once by OpenEnv's rule)."""
        return f"Your answer was rejected: {error}."
