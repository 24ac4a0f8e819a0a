"""``Connect4Text-v0``: Connect Four for language models, text in and text out, over ``Connect4-v0``'s game."""

from __future__ import annotations

import string
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from connect4_env.core import Board
from connect4_env.envs.dialects import MAX_ANSWER_LENGTH, dialect_and_retries
from connect4_env.envs.dialects.connect4 import max_error_length, rejection_note
from connect4_env.envs.gym_env import Connect4Env, RetryableEnvChecker
from connect4_env.envs.settings import MatchSettings
from connect4_env.rewards import OUTCOME, MoveRubric, grade_report, make_move_rubric
from connect4_env.validation import check_choice, check_int, check_seed

__all__ = ["Connect4TextEnv", "make_text_env", "INVALID_ANSWER_MODES", "TEXT_CHARSET", "LOST_BY_ANSWER"]

MAX_RETRIES = 1_000_000  # the retries count is shown in the observation: its digits stay bounded
LOST_BY_ANSWER = "Game over: you lost, your answer was rejected: {error}."
"""The status line of a game lost by a rejected answer (``error`` says why)."""

INVALID_ANSWER_MODES = ("retry", "lose")
# the characters an observation is made of (and that Text.sample draws actions from)
TEXT_CHARSET = frozenset(string.ascii_letters + string.digits + string.punctuation + " \n")


class Connect4TextEnv(gym.Env):
    """Connect Four for a language model against a fixed opponent (``gym.make("Connect4Text-v0")``).

    ## Description
    `Connect4-v0`'s game with text in place of arrays: the observation is the position as text, the action is
    the model's answer as free text. It wraps a `Connect4Env` (rewards, episode ends, the opponent and its
    seeding are that env's); it only reads the answer and decides what an unreadable one costs.

    ## Action Space
    `Text(max_answer_length)`: any `str`. It is read by `connect4_env.envs.dialects.connect4.parse_column` (its
    module's docstring has the grammar): `"4"`, `"d"`, `"column 4"`, `"I play d"`, `"Move: 4"` or
    `"...<answer>4</answer>"`, case-insensitive. **Columns are 1-based in text**: answer `N` (or the `N`-th
    letter) is `Connect4-v0`'s action `N - 1`. A non-`str` action raises `TypeError`.

    ## Observation Space
    `Text(max_length, charset=TEXT_CHARSET)`: the board with column numbers above (`1..columns`) and letters
    below (`a..`, up to 26 columns), rows numbered from the bottom, `X` the model's stones and `O` the
    opponent's, the opponent's last column, whose move it is and the legal columns (1-based). For example
    (after the model played 4 and the opponent 5)::

        Connect Four on 6 rows x 7 columns: line up 4 of your stones in a row, column or diagonal to win.
        You are X, the opponent is O; you moved first.

           1 2 3 4 5 6 7
        6  . . . . . . .
        ...
        1  . . . X O . .
           a b c d e f g

        The opponent played column 5 (e).
        Your move (2). Legal columns: 1 2 3 4 5 6 7.

    `info["action_mask"]` (int8, 0-based columns) comes with every reset and step, as in `Connect4-v0`;
    `reset`'s info also names the `dialect` and its `template` hash. Under another dialect the observation is
    that harness's text, and its `Text` space's `max_length` a bound on it rather than the exact longest.

    ## Rewards
    With `reward="outcome"` (the default), as `Connect4-v0`: +1 win, -1 loss, 0 draw and every other step. A
    rejected answer (unreadable, off the board, or a full column) under `invalid_answer="retry"` gives 0 and
    leaves the position as it was; once the retries are spent, or at once under `"lose"`, it loses: -1.

    With a per-move reward (`reward="solver"`, another registered name, or a rubric object: see
    [`connect4_env.rewards`][connect4_env.rewards]) every accepted answer is paid the rubric's grade of the
    model's move on the position before it (the opponent's reply is not graded), and the end of the game adds
    nothing: the grade already says what perfect play makes of the move. Every rejected answer is paid the
    dialect's `rejected_answer_reward` (-1.0 for every built-in dialect), whether the game goes on (under
    `"retry"`) or ends with it. `"solver"`'s scale:

    | the model's move | reward |
    |---|---|
    | has the best exact score (the quickest win, the slowest loss, or a draw) | +1.0 |
    | keeps the best outcome class (win, draw or loss), not the best score | +0.5 |
    | gives one class up (a win for a draw, a draw for a loss) | -0.5 |
    | gives a win up for a loss | -1.0 |
    | a rejected answer (no move) | -1.0 |

    Each graded step's `info["move_grade"]` has the grade: `reward`, and under `"solver"` `verdict`
    (`"best"`, `"keeps"` or `"mistake"`), `rank` (the move's dense rank by exact score, 1 the best) and
    `classes_lost` (0, 1 or 2).

    ## Starting State
    As `Connect4-v0` (an empty board, or after the opponent's first move when the model moves second;
    `reset(seed=s)` makes the episode reproducible).

    ## Episode End
    As `Connect4-v0`: terminated on a win, a loss, a draw, or a rejected answer that loses; never truncated.
    `info["outcome"]` is then `"win"`, `"loss"` or `"draw"` (under every reward), and `info["illegal_action"]`
    is True when a rejected answer lost. Every step's `info` has the parse: `info["parsed_column"]` (the
    0-based column read, or None) and `info["parse_error"]` (None, or the message also shown in the
    observation's last line), and `info["retries_left"]` for this move.

    ## Arguments
    | argument | default | meaning |
    |---|---|---|
    | `reward` | `"outcome"` | `"outcome"`: the game's result at its end; `"solver"` (or another name registered under the `connect4_env.rewards` entry points): each move graded by perfect play, built here, so a board it cannot grade (`"solver"`: 6x7 without the `book` extra, another board over 30 cells, or one whose empty board needs over 20,000,000 solver nodes) raises `ValueError` now; or any `rubric(board, column) -> float` ([`connect4_env.rewards`][connect4_env.rewards]) |
    | `invalid_answer` | `"retry"` | `"retry"`: a rejected answer costs 0 and is explained in the next observation, up to `max_retries` times a move, then loses; `"lose"`: it loses at once |
    | `max_retries` | None | rejected answers forgiven per move under `"retry"` (at most 1,000,000); None: the dialect's rule (2 for `"connect4"`, 1 for `"game_arena"` and `"textarena"`, 3 for `"deepmind_game_arena"`, 0 for `"json"`) |
    | `dialect` | `"connect4"` | how the position is shown and the answer read: this package's own, or Game Arena's (Kaggle's harness or DeepMind's package), TextArena's or OpenEnv's JSON ([`connect4_env.envs.dialects`][connect4_env.envs.dialects]); the observation and the grammar described here are `"connect4"`'s |
    | `legal_moves`, `history`, `blind` | None | the dialect's options: list the legal columns, show both players' moves, hide the board (None: the dialect's default) |
    | `max_answer_length` | None | longer answers are rejected unread (1 to 1,000,000, `MAX_ANSWER_LENGTH`); None: the dialect's default (`MAX_ANSWER_LENGTH` for every built-in dialect, as `serve-openenv` and `TextPolicy`) |
    | `rows`, `columns`, `win_length`, `opponent`, `opponent_kwargs`, `agent_first` | as `Connect4-v0` | [`MatchSettings`][connect4_env.envs.settings.MatchSettings]'s fields (all but `illegal_action`: a rejected answer is `invalid_answer`'s), passed to `Connect4Env`; kept as `env.settings` |
    | `render_mode` | None | `"ansi"` returns the observation text |

    ## Version History
    * v0: initial release.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 2}

    def __init__(
        self,
        rows: int = MatchSettings.rows,
        columns: int = MatchSettings.columns,
        win_length: int = MatchSettings.win_length,
        opponent: Any = MatchSettings.opponent,
        opponent_kwargs: dict[str, Any] | None = MatchSettings.opponent_kwargs,
        agent_first: bool | None = MatchSettings.agent_first,
        invalid_answer: str = "retry",
        max_retries: int | None = None,
        max_answer_length: int | None = None,
        render_mode: str | None = None,
        dialect: str = "connect4",
        legal_moves: bool | None = None,
        history: bool | None = None,
        blind: bool | None = None,
        reward: str | MoveRubric = OUTCOME,
    ) -> None:
        check_choice("invalid_answer", invalid_answer, INVALID_ANSWER_MODES)
        self.dialect, self.max_retries = dialect_and_retries(
            dialect, max_retries, MAX_RETRIES, legal_moves=legal_moves, history=history, blind=blind
        )
        if max_answer_length is None:
            max_answer_length = self.dialect.answer_length
        self.max_answer_length = check_int("max_answer_length", max_answer_length, 1, MAX_ANSWER_LENGTH)
        check_choice("render_mode", render_mode, (None, "ansi"))
        self.invalid_answer = invalid_answer
        self.render_mode = render_mode
        self.game = Connect4Env(
            rows, columns, win_length, opponent, opponent_kwargs, agent_first, illegal_action="lose"
        )
        self.rules = self.game.rules
        self.settings = self.game.settings
        self.reward = reward
        self.rubric = make_move_rubric(reward, self.rules)
        # the longest observation: the board's text with the longest rejection message, whatever the answer
        error = max_error_length(self.rules.columns, self.max_answer_length)
        note_length = len(rejection_note("", self.max_retries)) + error
        status_length = len(LOST_BY_ANSWER.format(error="")) + error
        longest = self.dialect.max_observation_length(
            self.rules, note_length=note_length, status_length=status_length
        )
        self.observation_space = spaces.Text(longest, min_length=1, charset=TEXT_CHARSET)
        self.action_space = spaces.Text(self.max_answer_length, min_length=0, charset=TEXT_CHARSET)
        self._text = ""
        self._retries_left = self.max_retries
        self._done = True
        self._moves: list[int] = []

    @property
    def board(self) -> Board:
        """The current position ([`connect4_env.core.Board`][connect4_env.core.Board])."""
        return self.game.board

    @property
    def moves(self) -> list[int]:
        """The episode's moves so far, both players', 0-based columns (a copy)."""
        return list(self._moves)

    @property
    def system_prompt(self) -> str:
        """The dialect's instructions for the model's seat (the system message before the observations)."""
        return self.dialect.system_prompt(self.rules, self.game.learner)

    @property
    def template_hash(self) -> str:
        """The dialect's `template_hash`
        ([`Dialect.template_hash`][connect4_env.envs.dialects.Dialect.template_hash]), also in
        ``reset``'s info as ``"template"``.
        """
        return self.dialect.template_hash

    def _describe(self, note: str | None = None, status: str | None = None) -> str:
        self._text = self.dialect.observation(self.board, self.game.learner, self._moves, note, status)
        return self._text

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start an episode; returns ``(text, info)`` with ``info["action_mask"]``.

        Raises:
            IllegalMoveError: the opponent, moving first, answered an illegal or malformed column; whatever else
                the opponent raised passes through (as
                [`Connect4Env.reset`][connect4_env.envs.gym_env.Connect4Env.reset]). Either way the env is then as
                before the call.
        """
        seed = check_seed(seed)
        super().reset(seed=seed)
        _, info = self.game.reset(seed=seed, options=options)
        self._retries_left = self.max_retries
        self._done = False
        last = self.board.last_move
        self._moves = [last] if self.board.ply == 1 and last is not None else []
        info.update(dialect=self.dialect.name, template=self.template_hash)
        return self._describe(), info

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Read ``action``, then play it through ``Connect4-v0``'s step (the model's move and the reply).

        Returns:
            Gymnasium's 5-tuple ``(text, reward, terminated, truncated, info)``.

        Raises:
            TypeError: ``action`` is not a ``str`` (nothing changes).
            RuntimeError: the episode is over.
            Exception: whatever the opponent raised, with the game as before the call (see
                [`Connect4Env.step`][connect4_env.envs.gym_env.Connect4Env.step]), or the rubric raised (the move
                is graded before it is played; a reward that is not a finite number is a `TypeError` or
                `ValueError`).
        """
        if not isinstance(action, str):
            raise TypeError(
                f"Connect4Text-v0 takes a str action (the model's answer), got {type(action).__name__}"
            )
        if self._done:
            raise RuntimeError("step() called on a finished episode: call reset() first")
        parsed = self.dialect.parse(action, self.board, self.max_answer_length)
        error = parsed.error
        rejected_reward = -1.0 if self.rubric is None else self.dialect.rejected_answer_reward
        if error is None:
            assert parsed.column is not None
            # graded before the move is played: a rubric that fails leaves the game as it was
            grade = None if self.rubric is None else grade_report(self.rubric, self.board, parsed.column)
            ply = self.board.ply
            _, reward, terminated, truncated, info = self.game.step(parsed.column)
            if grade is not None:
                reward = grade["reward"]
                info["move_grade"] = grade
            self._moves.append(parsed.column)
            reply = self.board.last_move
            if self.board.ply == ply + 2 and reply is not None:  # the opponent replied
                self._moves.append(reply)
            self._retries_left = self.max_retries
        elif self.invalid_answer == "retry" and self._retries_left > 0:
            self._retries_left -= 1
            note = self.dialect.rejection_note(action, error, self._retries_left)
            info = {"action_mask": self.game.action_masks().astype(np.int8)}
            info.update(parsed_column=parsed.column, parse_error=error, retries_left=self._retries_left)
            return self._describe(note), 0.0 if self.rubric is None else rejected_reward, False, False, info
        else:
            # a rejected answer that loses: Connect4-v0's illegal-move ending, without a stone played
            reward, terminated, truncated = rejected_reward, True, False
            no_moves = np.zeros(self.rules.columns, dtype=np.int8)
            info = {"action_mask": no_moves, "illegal_action": True, "outcome": "loss"}
        self._done = terminated or truncated
        info.update(parsed_column=parsed.column, parse_error=error, retries_left=self._retries_left)
        if error is None:
            return self._describe(), float(reward), terminated, truncated, info
        status = LOST_BY_ANSWER.format(error=error)
        return self._describe(status=status), float(reward), terminated, truncated, info

    def render(self) -> str | None:
        """The last observation's text under ``render_mode="ansi"``, else None."""
        return self._text if self.render_mode == "ansi" else None

    def close(self) -> None:
        """Close the wrapped `Connect4Env` (nothing stays open: the text env draws no window)."""
        self.game.close()


def make_text_env(**kwargs: Any) -> gym.Env:
    """``Connect4Text-v0``'s entry point: `Connect4TextEnv` inside
    [`RetryableEnvChecker`][connect4_env.envs.gym_env.RetryableEnvChecker].

    Raises:
        TypeError: bad arguments, as `Connect4TextEnv`.
        ValueError: bad arguments, as `Connect4TextEnv`.
    """
    return RetryableEnvChecker(Connect4TextEnv(**kwargs))


make_text_env.metadata = Connect4TextEnv.metadata  # type: ignore[attr-defined]
