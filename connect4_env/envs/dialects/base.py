"""What every dialect is: the `Dialect` base class, the answer-length bound, the parse result and the one helper
that quotes a model's answer in a message.
"""

from __future__ import annotations

import hashlib
import re
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

from connect4_env.core import Board
from connect4_env.rules import Rules
from connect4_env.validation import check_bool, check_int

__all__ = ["MAX_ANSWER_LENGTH", "ECHO_LENGTH", "RETHINK_QUOTE_LENGTH", "ParseResult", "Dialect", "echo"]

MAX_ANSWER_LENGTH = 1_000_000
"""The longest answer read, in characters, by default and at most: ``Connect4Text-v0``, ``connect4
serve-openenv`` and ``TextPolicy`` all take it (a longer one is a rejected answer). Kaggle's Game Arena harness
and TextArena cap no answer; this leaves room for the longest answer a model's output limit allows (128 K
tokens, even at 8 characters a token), while every reader stays linear in time and memory."""
ECHO_LENGTH = 42
"""The most characters of a model's answer that a rejection message quotes (see `echo`)."""
RETHINK_QUOTE_LENGTH = 1000
"""The most characters of a rejected answer that a Game Arena rethink prompt quotes (its end, where the
final answer is)."""

_UNSAFE = re.compile(r"[^\x20-\x7e\n]")


@dataclass(frozen=True)
class ParseResult:
    """What a reader read: `column` (0-based env column) or `error` (a message for the model)."""

    column: int | None
    error: str | None

    @property
    def ok(self) -> bool:
        """True when a column on the board was read."""
        return self.column is not None


def echo(text: str, *, quote: bool = True, limit: int = ECHO_LENGTH) -> str:
    """A piece of a model's answer as a rejection message quotes it: printable ASCII, at most `limit` characters.

    Every part of an answer that a message repeats goes through here, so a message (and the observation or
    prompt that shows it) stays short and within printable ASCII whatever the model wrote. The text is
    written as Python's `ascii()` writes it (quoted, with non-ASCII and control characters escaped); with
    `quote=False`, text that is printable ASCII without quotes or backslashes (a number, a letter) is kept
    bare. What is longer than `limit` keeps its start, then `"..."` (and the closing quote when quoted).

    Args:
        text: the piece to quote.
        quote: False: printable ASCII is shown bare (anything else is still quoted).
        limit: the most characters returned (at least 5).

    Returns:
        The quoted text, at most `limit` characters of printable ASCII.

    Raises:
        TypeError: `text` is not a `str`, `quote` not a bool or `limit` not an integer.
        ValueError: `limit` below 5.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    quote, limit = check_bool("quote", quote), check_int("limit", limit, 5)
    # only what can be shown is looked at: ascii() of a megabyte answer would build megabytes
    head = text[: limit + 1]
    if not quote and head.isascii() and head.isprintable() and not any(c in head for c in "'\"\\"):
        return head if len(head) <= limit else head[: limit - 3] + "..."
    shown = ascii(head)
    if len(text) > len(head):
        shown = shown[:-1] + "..." + shown[-1]
    return shown if len(shown) <= limit else shown[: limit - 4] + "..." + shown[-1]  # the closing quote kept


def printable_tail(text: str, limit: int) -> str:
    """The last ``limit`` characters of ``text`` as printable ASCII and newlines (anything else becomes ``?``),
    so a quoted answer keeps an observation short and in the text env's charset.
    """
    tail = text[-limit:] if len(text) > limit else text
    return ("..." if len(text) > limit else "") + _UNSAFE.sub("?", tail)


def last_match(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The last match of ``pattern`` in ``text``, in one pass that keeps no other match."""
    last = deque(pattern.finditer(text), maxlen=1)
    return last[0] if last else None


def game_over(board: Board, player: int) -> str:
    """The closing line of a finished game for ``player``."""
    if board.winner is None:
        return "Game over: a draw (the board is full)."
    return "Game over: you won." if board.winner == player else "Game over: you lost."


@dataclass(frozen=True)
class Dialect(ABC):
    """One harness's way of showing a position and reading an answer: a subclass a harness, registered by name
    in [`DIALECTS`][connect4_env.envs.dialects.DIALECTS] (build one with
    [`get_dialect`][connect4_env.envs.dialects.get_dialect]).

    A subclass sets the class attributes below and writes `render`, `read` and `rejection_note` (and
    `system_prompt` when it has one, `max_observation_length` when its text can pass the shared bound); a
    subclass redeclares a field (as a frozen dataclass) to change its default. The constructor is
    the edge: it checks the options, and every method then trusts its typed arguments (a
    [`Board`][connect4_env.core.Board], a player 0 or 1, 0-based columns).

    Attributes:
        legal_moves: the legal columns are listed.
        history: both players' moves so far are shown.
        blind: no board is shown (the moves are; needs ``history``).
        name: the dialect's name in records and in ``dialect=`` arguments.
        base: how columns are numbered in text, 0 (the harnesses) or 1 (this package's own).
        max_retries: rejected answers forgiven a move by the harness's rule (then the game is lost).
        fallback: what `TextPolicy` does by default when no legal column comes (``"forfeit"``, the harnesses'
            rule, or ``"random"``).
        answer_length: the default longest answer read (at most `MAX_ANSWER_LENGTH`).
        rejected_answer_reward: the format reward of a rejected answer under a per-move reward
            (``Connect4Text-v0(reward="solver")``, see `connect4_env.rewards`): -1.0 for every built-in dialect,
            the reward of the worst move, so that no answer is worth less than a legal one.

    Raises:
        TypeError: an option is not a bool.
        ValueError: ``blind`` without ``history``.
    """

    legal_moves: bool = False
    history: bool = False
    blind: bool = False

    name: ClassVar[str]
    base: ClassVar[int] = 0
    max_retries: ClassVar[int]
    fallback: ClassVar[str] = "forfeit"
    answer_length: ClassVar[int] = MAX_ANSWER_LENGTH
    rejected_answer_reward: ClassVar[float] = -1.0

    def __post_init__(self) -> None:
        for option in ("legal_moves", "history", "blind"):
            object.__setattr__(self, option, check_bool(option, getattr(self, option)))
        if self.blind and not self.history:
            raise ValueError("blind=True needs history: a blind prompt shows the moves instead of the board")

    # -- what a subclass writes -------------------------------------------------------------------------

    def system_prompt(self, rules: Rules | None = None, player: int = 0) -> str:
        """The instructions that come before the position for ``player`` (0 = first mover) on ``rules``' board
        (None: the standard one); "" when the harness's prompt is one message.
        """
        return ""

    @abstractmethod
    def render(
        self, board: Board, player: int, moves: Sequence[int], note: str | None, status: str | None
    ) -> str:
        """`observation`'s text, ``status`` given (the closing line of a finished game included)."""

    @abstractmethod
    def read(self, text: str, board: Board) -> ParseResult:
        """The column ``text`` names by this dialect's rule, or why none: never raises for a str."""

    @abstractmethod
    def rejection_note(self, answer: str, error: str, tries_left: int, cut_off: bool = False) -> str:
        """What the next prompt adds after a rejected answer: the harness's retry text.

        Args:
            answer: the rejected answer (the Game Arena dialects quote its end).
            error: why it was rejected.
            tries_left: answers left for this move.
            cut_off: the reply was cut off at the length limit (Game Arena then asks for a shorter one).
        """

    # -- shared -----------------------------------------------------------------------------------------

    def observation(
        self,
        board: Board,
        player: int,
        moves: Sequence[int] = (),
        note: str | None = None,
        status: str | None = None,
    ) -> str:
        """The position as the user's message for ``player`` (0 = first mover).

        Args:
            board: the position.
            player: who the model is (0 or 1).
            moves: the game's moves so far (0-based columns, first move first), for the history option and
                the opponent's last move; they are not checked against ``board``.
            note: a line added at the end (such as why the last answer was rejected), or None.
            status: replaces the line on whose move it is (a game lost by a rejected answer), or None: the
                closing line of a finished game, or the turn's line.
        """
        if status is None and board.is_terminal:
            status = game_over(board, player)
        return self.render(board, player, moves, note, status)

    def parse(self, text: str, board: Board, max_length: int = MAX_ANSWER_LENGTH) -> ParseResult:
        """Read a column from ``text`` by this dialect's rule, for ``board``.

        Returns:
            A `ParseResult`: the 0-based column, or an error for the model. A full column or a number off the
            board is an error here (the harnesses reject both the same way); so is a text longer than
            ``max_length``, unread. Never raises for a str.
        """
        if len(text) > max_length:
            return ParseResult(None, f"the answer has more than {max_length} characters")
        return self.read(text, board)

    def prompt(self, board: Board, player: int, moves: Sequence[int] = (), note: str | None = None) -> str:
        """The whole prompt as one string: the system prompt, a blank line and the observation."""
        return "\n\n".join(message["content"] for message in self.messages(board, player, moves, note))

    def messages(
        self, board: Board, player: int, moves: Sequence[int] = (), note: str | None = None
    ) -> list[dict[str, str]]:
        """The prompt as chat messages (``[{"role", "content"}, ...]``, the shape of
        ``tokenizer.apply_chat_template`` and TRL's conversational datasets): a system message when the
        dialect has one, then the observation as the user's message.
        """
        system = self.system_prompt(board.rules, player)
        chat = [{"role": "system", "content": system}] if system else []
        return [*chat, {"role": "user", "content": self.observation(board, player, moves, note)}]

    @cached_property
    def template_hash(self) -> str:
        """8 hex characters identifying the prompt template and options: a hash of the dialect's system
        prompt and of a fixed position's observation with a note, on the standard board.
        """
        board = Board(Rules()).play_moves([3, 3, 2])
        parts = [
            self.name,
            repr((self.legal_moves, self.history, self.blind, self.max_retries)),
            self.system_prompt(Rules(), 1),
            self.observation(board, 1, (3, 3, 2), note=self.rejection_note("4", "why", 0)),
        ]
        return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:8]

    def column_text(self, column: int) -> str:
        """How env column ``column`` (0-based) is written in this dialect's text."""
        return str(column + self.base)

    def max_observation_length(self, rules: Rules, *, note_length: int = 0, status_length: int = 0) -> int:
        """An upper bound on the characters of `observation` on ``rules``' board with a note of at most
        ``note_length`` characters and a status of at most ``status_length``, whatever the position.
        """
        digits = len(str(rules.columns)) + 2  # a column's number, with a sign or comma and a space
        grid = (rules.rows + 3) * (rules.columns * (digits + 1) + 8)  # rows, header, letters, separator
        listing = rules.columns * (digits + 1) + 80  # the legal columns and their line
        history = rules.cells * (digits + 50) + 80  # one move: up to a sentence each (TextArena's)
        fixed = 2000  # the fixed sentences (the Game Arena prompt is the longest)
        return grid + listing + history + fixed + note_length + status_length + RETHINK_QUOTE_LENGTH + 8
