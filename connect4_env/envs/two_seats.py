"""A game of Connect Four in text where one client plays both seats, as OpenEnv's own `connect4_env` does (no
built-in opponent): each answer is the move of the player to move, read in a dialect, and each observation is
shown to the next player to move. The text env's twin for self-play; `connect4 serve-openenv --opponent none`
serves it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from connect4_env.core import Board
from connect4_env.envs.dialects import MAX_ANSWER_LENGTH, dialect_and_retries
from connect4_env.envs.text_env import INVALID_ANSWER_MODES, LOST_BY_ANSWER, MAX_RETRIES
from connect4_env.rules import Rules
from connect4_env.validation import check_choice, check_int, check_seed

__all__ = ["TwoSeatTextGame"]


class TwoSeatTextGame:
    """Connect Four for one client that plays both seats, text in and text out, in a dialect
    (see [`get_dialect`][connect4_env.envs.dialects.get_dialect]).

    Its `reset` and `step` are shaped as [`Connect4TextEnv`][connect4_env.envs.text_env.Connect4TextEnv]'s:
    the same texts, `info` keys and rejection rule, with these differences:

    - `step(answer)` is the move of the player to move (``info["player"]``, 0 = first mover), and the text
      returned is the position shown to the player to move next (while the game goes on; the same player
      after a rejected answer that is forgiven) or, once the game is over, to the player who made the last
      step (``"Game over: you won."``, or why the answer lost).
    - The reward and ``info["outcome"]`` are for the player who made the step: +1 and ``"win"`` for a winning
      move, 0 and ``"draw"`` for a move that fills the board, -1 and ``"loss"`` for a rejected answer that
      loses (`invalid_answer` and `max_retries` as in the text env; retries count per move, for the mover).
    - There is no randomness: `reset`'s seed is checked and has no effect.

    Raises:
        TypeError: a board size, `max_retries` or `max_answer_length` that is not an int, or a dialect or
            option of the wrong type.
        ValueError: a board size out of range (see [`Rules`][connect4_env.rules.Rules]), an unknown
            `invalid_answer` or dialect, or `max_retries` / `max_answer_length` out of range.
    """

    def __init__(
        self,
        rows: int = 6,
        columns: int = 7,
        win_length: int = 4,
        invalid_answer: str = "retry",
        max_retries: int | None = None,
        max_answer_length: int = MAX_ANSWER_LENGTH,
        dialect: str = "connect4",
        legal_moves: bool | None = None,
        history: bool | None = None,
        blind: bool | None = None,
    ) -> None:
        self.rules = Rules(rows, columns, win_length)
        check_choice("invalid_answer", invalid_answer, INVALID_ANSWER_MODES)
        self.dialect, self.max_retries = dialect_and_retries(
            dialect, max_retries, MAX_RETRIES, legal_moves=legal_moves, history=history, blind=blind
        )
        self.max_answer_length = check_int("max_answer_length", max_answer_length, 1, MAX_ANSWER_LENGTH)
        self.invalid_answer = invalid_answer
        self.board = Board(self.rules)
        self._moves: list[int] = []
        self._retries_left = self.max_retries
        self._done = True

    @property
    def moves(self) -> list[int]:
        """The game's moves so far, both players', 0-based columns (a copy)."""
        return list(self._moves)

    @property
    def to_move(self) -> int | None:
        """The player to move (0 = first mover), or None once the game is over."""
        return None if self._done else self.board.to_move

    @property
    def template_hash(self) -> str:
        """The dialect's [`template_hash`][connect4_env.envs.dialects.Dialect.template_hash]."""
        return self.dialect.template_hash

    def system_prompt(self, player: int) -> str:
        """The dialect's instructions for ``player``'s seat (the system message before its observations).

        Raises:
            TypeError: ``player`` is not an int.
            ValueError: ``player`` is not 0 or 1.
        """
        return self.dialect.system_prompt(self.rules, player)

    def _mask(self) -> np.ndarray:
        return np.array(self.board.legal_mask(), dtype=np.int8)

    def _text(self, player: int, note: str | None = None, status: str | None = None) -> str:
        return self.dialect.observation(self.board, player, self._moves, note, status)

    def reset(self, *, seed: int | None = None) -> tuple[str, dict[str, Any]]:
        """Start a game on an empty board; returns ``(text, info)``: the first mover's observation, and
        ``info`` with ``action_mask``, ``player`` (0), ``dialect`` and ``template``.

        Raises:
            TypeError: ``seed`` is not an integer or None.
            ValueError: ``seed`` is negative.
        """
        check_seed(seed)
        self.board = Board(self.rules)
        self._moves = []
        self._retries_left = self.max_retries
        self._done = False
        info = {"action_mask": self._mask(), "player": 0, "dialect": self.dialect.name}
        info["template"] = self.template_hash
        return self._text(0), info

    def step(self, answer: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Read ``answer`` as the move of the player to move and play it.

        Returns:
            Gymnasium's 5-tuple ``(text, reward, terminated, truncated, info)`` (see the class docstring);
            ``info`` has ``player`` (who made the step), ``action_mask`` (for the player to move next),
            ``parsed_column``, ``parse_error`` and ``retries_left`` (as the text env's), and once the game is
            over ``outcome`` (for ``player``), and ``illegal_action`` when a rejected answer lost it.

        Raises:
            TypeError: ``answer`` is not a str (nothing changes).
            RuntimeError: the game is over (reset first).
        """
        if not isinstance(answer, str):
            raise TypeError(f"an answer must be a str, got {type(answer).__name__}")
        if self._done:
            raise RuntimeError("step() called on a finished game: call reset() first")
        player = self.board.to_move
        parsed = self.dialect.parse(answer, self.board, self.max_answer_length)
        info: dict[str, Any] = {"player": player, "parsed_column": parsed.column, "parse_error": parsed.error}
        if parsed.error is None:
            assert parsed.column is not None  # a parse without an error names a legal column
            won = self.board.play(parsed.column)
            self._moves.append(parsed.column)
            self._retries_left = self.max_retries
            info["retries_left"] = self._retries_left
            if won or self.board.is_draw:
                self._done = True
                info.update(action_mask=np.zeros(self.rules.columns, dtype=np.int8))
                info["outcome"] = "win" if won else "draw"
                return self._text(player), float(won), True, False, info  # the dialect words the end
            info["action_mask"] = self._mask()
            return self._text(self.board.to_move), 0.0, False, False, info
        if self.invalid_answer == "retry" and self._retries_left > 0:
            self._retries_left -= 1
            info.update(action_mask=self._mask(), retries_left=self._retries_left)
            note = self.dialect.rejection_note(answer, parsed.error, self._retries_left)
            return self._text(player, note=note), 0.0, False, False, info
        self._done = True
        info.update(retries_left=self._retries_left, outcome="loss", illegal_action=True)
        info["action_mask"] = np.zeros(self.rules.columns, dtype=np.int8)
        return self._text(player, status=LOST_BY_ANSWER.format(error=parsed.error)), -1.0, True, False, info

    def close(self) -> None:
        """Nothing to release (the same call as the text env's)."""
