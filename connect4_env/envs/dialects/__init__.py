"""Dialects: how a position is shown to a language model and how its answer is read, in the conventions of the
harnesses that evaluate models on games. One class a dialect, one file a harness; no env here.

| dialect | board shown | columns | answer | a rejected answer |
|---|---|---|---|---|
| `"connect4"` (this package's own) | grid with numbers above, letters below, `X` = the model | 1-based (or a letter) | `4`, `d`, `column 4`, `Move: 4`, `...<answer>4</answer>` | told why, 2 retries a move, then a loss |
| `"game_arena"` (Kaggle's Game Arena harness in kaggle-environments: lenient) | OpenSpiel's text: top row first, `x` first mover, `o`, `.` | 0-based | reasoning, then `Final Answer: 3`; else the last legal number | one rethink quoting the answer, then a forfeit |
| `"deepmind_game_arena"` (DeepMind's `game_arena` package: strict) | OpenSpiel's text spaced out (`. x o`), the moves so far (`x3 o3`) | 0-based | reasoning, then `Final Answer: 3`: what follows the last `:` or `is` | three rethinks, then a forfeit |
| `"textarena"` (TextArena `ConnectFour`) | header `0 1 2 ...`, dashes, rows top first, `X` Player 0, `O` | 0-based | `[col 3]`, `[3]`, a bare `3` | one free invalid answer a move, the second loses |
| `"json"` (OpenEnv `connect4_env` / tool calls) | a JSON object: `board` rows top first, `1` first mover, `-1`, `0` | 0-based | `{"column": 3}`, a `drop_disc` tool call | a loss at once |

Each dialect takes three options, each None for the dialect's own default: ``legal_moves`` (list the legal
columns), ``history`` (both players' moves so far) and ``blind`` (no board: the moves only, so ``history``
is then always on). A dialect is identified in records by ``template_hash``, a short hash of its prompt
text and options: two runs with the same hash showed the model the same prompts.

Each class's docstring says how it reads an answer, following its harness's own parser (kaggle-environments'
``open_spiel_env`` connect_four harness; DeepMind's ``game_arena.harness.parsers``; TextArena's
``ActionFormattingWrapper`` and ``ConnectFour`` env; OpenEnv's ``Connect4Action``). Every reader works in one
pass over the answer and keeps only its last match, so reading takes memory of about the answer's size whatever
it holds, and a rejection quotes at most a few dozen of its characters.

A new harness is one new file, a subclass of [`Dialect`][connect4_env.envs.dialects.base.Dialect], and one line
in `DIALECTS`; the text env, `Connect4Text-v0`'s ``dialect=``, the two-seat game, the OpenEnv server and
`TextPolicy` all look the name up there.
"""

from __future__ import annotations

import dataclasses

from connect4_env.envs.dialects.base import MAX_ANSWER_LENGTH, Dialect, ParseResult, echo
from connect4_env.envs.dialects.connect4 import Connect4Dialect
from connect4_env.envs.dialects.deepmind_game_arena import DeepMindGameArenaDialect
from connect4_env.envs.dialects.game_arena import GameArenaDialect
from connect4_env.envs.dialects.json_dialect import MAX_JSON_DEPTH, JsonDialect, scan_json
from connect4_env.envs.dialects.textarena import TextArenaDialect
from connect4_env.validation import check_choice, check_int

__all__ = [
    "DIALECTS",
    "Dialect",
    "Connect4Dialect",
    "GameArenaDialect",
    "DeepMindGameArenaDialect",
    "TextArenaDialect",
    "JsonDialect",
    "ParseResult",
    "get_dialect",
    "dialect_and_retries",
    "echo",
    "scan_json",
    "MAX_ANSWER_LENGTH",
    "MAX_JSON_DEPTH",
]

DIALECTS: dict[str, type[Dialect]] = {
    dialect.name: dialect
    for dialect in (
        Connect4Dialect,
        GameArenaDialect,
        DeepMindGameArenaDialect,
        TextArenaDialect,
        JsonDialect,
    )
}
"""The registry: each dialect's class by its name, which every ``dialect=`` argument looks up."""


def get_dialect(
    name: str | Dialect = "connect4",
    *,
    legal_moves: bool | None = None,
    history: bool | None = None,
    blind: bool | None = None,
) -> Dialect:
    """The dialect ``name`` (or a copy of a dialect) with its options; None keeps the dialect's default.

    Defaults: ``connect4`` lists the legal columns, no history; ``game_arena`` neither (as its harness);
    ``deepmind_game_arena`` shows the moves and no list (its prompt without legal actions);
    ``textarena`` shows the moves (TextArena's message log) and no list; ``json`` lists them
    (``legal_actions``, as OpenEnv), no history. ``blind=True`` turns ``history`` on.

    Raises:
        TypeError: ``name`` is not a str or `Dialect`, or an option not a bool or None.
        ValueError: ``name`` is not in `DIALECTS`, or ``blind=True`` with ``history=False``.
    """
    given = {"legal_moves": legal_moves, "history": history, "blind": blind}
    if blind is True and history is None:
        given["history"] = True
    options = {option: value for option, value in given.items() if value is not None}
    if isinstance(name, Dialect):
        return dataclasses.replace(name, **options)
    if not isinstance(name, str):
        raise TypeError(f"dialect must be a str, one of {list(DIALECTS)}, got {type(name).__name__}")
    return DIALECTS[check_choice("dialect", name, DIALECTS)](**options)


def dialect_and_retries(
    dialect: str,
    max_retries: int | None,
    limit: int,
    *,
    legal_moves: bool | None = None,
    history: bool | None = None,
    blind: bool | None = None,
) -> tuple[Dialect, int]:
    """A player's dialect (by name, with its options) and its rejected answers forgiven a move: ``max_retries``,
    or the dialect's rule when None; what the text env, the two-seat game and `TextPolicy` take.

    Raises:
        TypeError: ``dialect`` is not a str, an option not a bool or None, or ``max_retries`` not an int.
        ValueError: an unknown dialect, ``blind=True`` with ``history=False``, or ``max_retries`` outside
            ``0..limit``.
    """
    chosen = get_dialect(dialect, legal_moves=legal_moves, history=history, blind=blind)
    retries = chosen.max_retries if max_retries is None else max_retries
    return chosen, check_int("max_retries", retries, 0, limit)
