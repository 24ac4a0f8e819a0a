"""Single-agent Gymnasium view: the learner plays Connect Four against a fixed opponent policy."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.wrappers import PassiveEnvChecker

from connect4_env.core import Board
from connect4_env.encoding import TrackedBoard
from connect4_env.envs.seats import Seats
from connect4_env.envs.settings import MatchSettings
from connect4_env.opponent import opponent_column
from connect4_env.render import RENDER_MODES, BoardRenderer
from connect4_env.rules import IllegalMoveError, as_column, short_repr
from connect4_env.validation import check_seed

__all__ = ["Connect4Env", "RetryableEnvChecker", "make_env", "make_flat_env"]

# what reset changes, restored as a whole when it fails
_EPISODE_STATE = (
    "_game",
    "_learner",
    "_done",
    "_np_random",
    "_np_random_seed",
)
_GAME = np.zeros(1, dtype=np.int64)  # the one game's index, for Seats


class Connect4Env(gym.Env):
    """Connect Four for one learner against a fixed opponent policy (``gym.make("Connect4-v0")``).

    ## Description
    The learner and the opponent take turns dropping stones; the first to line up ``win_length`` stones
    horizontally, vertically or diagonally wins, a full board is a draw. Each ``step`` plays the learner's
    move and then, unless the game ended, the opponent's reply.

    ## Action Space
    `Discrete(columns)`: the column for the learner's stone. Python/numpy integers are accepted.

    ## Observation Space
    `Box(0, 1, (rows, columns, 2), int8)` from the learner's side: plane 0 the learner's stones, plane 1 the
    opponent's, row 0 the top row. `info["action_mask"]` (int8, one entry per column) comes with every reset
    and step; `env.unwrapped.action_masks()` returns it as bool for sb3-contrib's MaskablePPO.

    ## Rewards
    +1 when the learner wins, -1 when it loses (or makes an illegal move under `illegal_action="lose"`),
    0 for a draw and every other step.

    ## Starting State
    An empty board. If the learner moves second, `reset()` returns the position after the opponent's first
    move. `reset(seed=s)` seeds the env's RNG, which also reseeds the opponent (through its
    `reset(seed=...)`, if it has one) and picks the side when `agent_first=None`: the whole episode is then
    reproducible. Later resets without a seed continue that RNG.

    ## Episode End
    Terminated on a win, a loss, a draw or (under `"lose"`) an illegal move. Never truncated.
    `info["outcome"]` is then `"win"`, `"loss"` or `"draw"`; `info["illegal_action"]` is True after an
    illegal move.

    ## Opponents
    `opponent` may be an [`OpponentPool`][connect4_env.pool.OpponentPool]: `reset` draws the episode's member
    (with the env's generator), which plays the whole episode; `info["opponent"]` names it at every reset and
    step, and the episode's outcome is recorded with the pool. An `opponent` set on a running env plays from
    the next episode on.

    ## Arguments
    The match settings (`rows`, `columns`, `win_length`, `opponent`, `opponent_kwargs`, `agent_first`,
    `illegal_action`) are [`MatchSettings`][connect4_env.envs.settings.MatchSettings]'s fields, with their
    defaults and meaning; the env keeps them as `env.unwrapped.settings`.

    | argument | default | meaning |
    |---|---|---|
    | `rows`, `columns`, `win_length` | 6, 7, 4 | board size and line length |
    | `opponent`, `opponent_kwargs` | `"random"`, None | who answers: an agent name or spec, or an object with `act(observation, action_mask)` |
    | `agent_first` | True | True: learner moves first; False: second; None: a random side each episode |
    | `illegal_action` | `"lose"` | a full column: `"lose"` ends the episode with -1; `"raise"` raises `IllegalMoveError` |
    | `render_mode` | None | `"ansi"` (text, the columns numbered from 1: action = number - 1), `"rgb_array"` or `"human"` |
    | `tile` | 48 | pixels per cell for images |

    Out-of-range columns and non-integer actions are not moves of the action space: they always raise
    (`IllegalMoveError`, a `ValueError`, or `TypeError`), leaving the position unchanged.

    ## Version History
    * v0: initial release.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 2}

    def __init__(
        self,
        rows: int = MatchSettings.rows,
        columns: int = MatchSettings.columns,
        win_length: int = MatchSettings.win_length,
        opponent: Any = MatchSettings.opponent,
        opponent_kwargs: dict[str, Any] | None = MatchSettings.opponent_kwargs,
        agent_first: bool | None = MatchSettings.agent_first,
        illegal_action: str = MatchSettings.illegal_action,
        render_mode: str | None = None,
        tile: int = 48,
    ) -> None:
        self.settings = MatchSettings(
            rows, columns, win_length, opponent, opponent_kwargs, agent_first, illegal_action
        )
        self.rules = self.settings.rules
        self._renderer = BoardRenderer(
            render_mode, tile, fps=int(self.metadata["render_fps"]), rules=self.rules
        )
        self.render_mode = render_mode
        self.opponent = self.settings.policy
        # this episode's opponent, fixed at reset: a pool's member is drawn then, and a new `opponent` set
        # mid-episode plays from the next episode on
        self._seats = Seats(1, self.opponent)
        self.agent_first = agent_first
        self.illegal_action = illegal_action
        rows, columns = self.rules.rows, self.rules.columns
        self.observation_space = spaces.Box(0, 1, (rows, columns, 2), dtype=np.int8)
        self.action_space = spaces.Discrete(columns)
        self._no_moves = np.zeros(columns, dtype=np.int8)
        self._game = TrackedBoard(self.rules)
        self._learner = 0
        self._done = True

    @property
    def board(self) -> Board:
        """The current position ([`connect4_env.core.Board`][connect4_env.core.Board])."""
        return self._game.board

    @property
    def learner(self) -> int:
        """0 if the learner moves first this episode, else 1."""
        return self._learner

    def action_masks(self) -> np.ndarray:
        """The learner's legal columns as a bool array (all False once the episode is over)."""
        if self._done:
            return np.zeros(self.rules.columns, dtype=bool)
        return self._game.mask.astype(bool)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode (see the class docstring); returns ``(observation, {"action_mask": ...})``.

        Raises:
            IllegalMoveError: the opponent, moving first, answered an illegal or malformed column; whatever the
                opponent raised passes through. Either way the env is left exactly as before the call.
        """
        seed = check_seed(seed)
        saved = {name: getattr(self, name) for name in _EPISODE_STATE}
        seat = self._seats.seat.copy()
        rng_state = None if self._np_random is None else self._np_random.bit_generator.state
        try:
            super().reset(seed=seed)
            rng = self.np_random
            self._game = TrackedBoard(self.rules)
            if self.agent_first is None:
                self._learner = int(rng.integers(2))
            else:
                self._learner = 0 if self.agent_first else 1
            self._seats.draw(_GAME, self.opponent, rng)  # a pool's member drawn now plays the whole episode
            opponent_reset = getattr(self._seats.policy(0), "reset", None)
            if callable(opponent_reset):
                opponent_reset(seed=int(rng.integers(2**63)))
            self._done = False
            if self._learner == 1:
                self._opponent_move()
        except BaseException:
            for name, value in saved.items():
                setattr(self, name, value)
            self._seats.seat[:] = seat
            if rng_state is not None and self._np_random is not None:
                self._np_random.bit_generator.state = rng_state
            raise
        self._seats.tidy()
        if self.render_mode == "human":
            self.render()
        return self._game.observation(self._learner), self._info({"action_mask": self._game.mask.copy()})

    @property
    def episode_opponent(self) -> str | None:
        """The name of this episode's pool member (None unless ``opponent`` is an
        [`OpponentPool`][connect4_env.pool.OpponentPool]); also ``info["opponent"]``.
        """
        return self._seats.name(0)

    def _info(self, info: dict[str, Any]) -> dict[str, Any]:
        name = self._seats.name(0)
        if name is not None:
            info["opponent"] = name
        return info

    def _opponent_move(self) -> bool:
        """Let the opponent play; returns True if that ended the game (it won or filled the board).

        Nothing is played unless the opponent answers a legal column (see `opponent_column`).
        """
        game = self._game
        column = opponent_column(
            self._seats.policy(0), game.views[1 - self._learner].copy(), game.mask.copy()
        )
        return game.play(column) or game.board.ply == self.rules.cells

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Play the learner's column, then the opponent's reply; returns Gymnasium's 5-tuple.

        Raises:
            TypeError: ``action`` is not an integer. IllegalMoveError: it is out of range, or full under
                ``illegal_action="raise"``; or the opponent answered an illegal or malformed column. Whatever
                the opponent raised (KeyboardInterrupt included) passes through. After any error the game is
                exactly as before the call, and the next ``step`` is the learner's again.
            RuntimeError: the episode is over (call ``reset``).
        """
        if self._done:
            raise RuntimeError("step() called on a finished episode: call reset() first")
        column = action if type(action) is int else as_column(action)
        game = self._game
        board = game.board
        rules = self.rules
        if not 0 <= column < rules.columns:
            raise IllegalMoveError(
                f"action {short_repr(action)} is out of range: columns are 0..{rules.columns - 1}"
            )
        if board.heights[column] >= rules.rows:
            if self.illegal_action == "raise":
                raise IllegalMoveError(f"column {column} is full; legal columns are {board.legal_moves()}")
            self._done = True
            info = {"action_mask": self._no_moves.copy(), "illegal_action": True, "outcome": "loss"}
            return game.observation(self._learner), -1.0, True, False, self._finish(info, -1.0)
        reward = 0.0
        last_move = board.last_move
        if game.play(column):
            reward = 1.0
        elif board.ply != rules.cells:
            try:
                replied_and_ended = self._opponent_move()
            except BaseException:
                game.undo(column, last_move)  # all or nothing: the learner's stone goes too
                raise
            if replied_and_ended and board.winner is not None:
                reward = -1.0
        self._done = board.winner is not None or board.ply == rules.cells
        if self._done:
            outcome = "win" if reward > 0 else "loss" if reward < 0 else "draw"
            info = {"action_mask": self._no_moves.copy(), "outcome": outcome}
            return game.observation(self._learner), reward, True, False, self._finish(info, reward)
        if self.render_mode == "human":
            self.render()
        return (
            game.observation(self._learner),
            reward,
            False,
            False,
            self._info({"action_mask": game.mask.copy()}),
        )

    def _finish(self, info: dict[str, Any], reward: float) -> dict[str, Any]:
        """The last step's info; the outcome goes to the pool's record of this episode's member."""
        self._seats.record(self._seats.seat, np.array([reward]))
        if self.render_mode == "human":
            self.render()
        return self._info(info)

    def render(self) -> str | np.ndarray | None:
        """The current position in the env's ``render_mode``: text (``"ansi"``), an RGB image
        (``"rgb_array"``), or None after drawing it in the window (``"human"``) or without a render mode.
        """
        return self._renderer.render(self.board)

    def get_keys_to_action(self) -> dict[tuple[int, ...], int]:
        """Digit keys to actions for ``gymnasium.utils.play.play``: ``1`` .. ``9`` play the columns a person calls
        1 .. 9 (actions 0 .. 8) and ``0`` the tenth (action 9, on boards of 10 or more columns; wider columns
        have no key).
        """
        keys = "1234567890"[: self.board.rules.columns]
        return {(ord(key),): column for column, key in enumerate(keys)}

    def close(self) -> None:
        """Close the ``"human"`` window, if one is open; the env can still be reset and stepped."""
        self._renderer.close()


class RetryableEnvChecker(PassiveEnvChecker):
    """Gymnasium's ``PassiveEnvChecker``, left as it was when the checked call raises.

    Gymnasium's checker marks its first ``reset`` as checked *before* calling the env, so when that call
    raises (an opponent that fails while moving first) the next, successful ``reset`` goes unchecked.
    Gymnasium 1.4 also keeps the first ``reset``'s result for a data-reuse check on the first ``step``; there
    the missing result made every later ``step`` run the env's move and then raise ``TypeError`` from the
    checker: the game moved on while each call "failed". Here a failed call restores the checker's state (the
    attributes the installed Gymnasium has: 1.1 to 1.3 keep only the two flags), so the next call is checked
    as if the failed one had never happened, matching the env's own all-or-nothing calls. ``Connect4-v0`` and
    ``Connect4Flat-v0`` are registered with ``disable_env_checker=True`` and apply this checker in their entry
    points instead.
    """

    # The checker's state that its reset and step change; Gymnasium 1.4 added the last two.
    _STATE = ("checked_reset", "checked_step", "checked_data_reuse", "_previous_data")

    def _saved_state(self) -> dict[str, Any]:
        return {name: self.__dict__[name] for name in self._STATE if name in self.__dict__}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset through Gymnasium's checker; returns the env's ``(observation, info)``.

        Raises:
            Exception: whatever the env raised, with the checker's state as before the call.
        """
        saved = self._saved_state()
        try:
            return super().reset(seed=seed, options=options)
        except BaseException:
            self.__dict__.update(saved)
            raise

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        """Step through Gymnasium's checker; returns the env's 5-tuple.

        Raises:
            Exception: whatever the env raised, with the checker's state as before the call.
        """
        # every check done (no data-reuse check before Gymnasium 1.4): the checker only forwards
        if self.checked_step and self.__dict__.get("checked_data_reuse", True):
            return self.env.step(action)
        saved = self._saved_state()
        try:
            return super().step(action)
        except BaseException:
            self.__dict__.update(saved)
            raise

    # Gymnasium's wrappers keep spec as an attribute; here it reads through to the env's
    @property
    def spec(self) -> Any:  # type: ignore[override]
        """The env's spec as is: the entry point applies this checker, so a spec re-made applies it again."""
        return self.env.spec


def make_env(**kwargs: Any) -> gym.Env:
    """``Connect4-v0``'s entry point: [`Connect4Env`][connect4_env.envs.gym_env.Connect4Env] inside
    [`RetryableEnvChecker`][connect4_env.envs.gym_env.RetryableEnvChecker].

    Returns:
        The checked env; ``gym.make`` adds ``OrderEnforcing`` around it.

    Raises:
        TypeError: as [`Connect4Env`][connect4_env.envs.gym_env.Connect4Env] for bad arguments.
        ValueError: as [`Connect4Env`][connect4_env.envs.gym_env.Connect4Env] for bad arguments.
    """
    return RetryableEnvChecker(Connect4Env(**kwargs))


# gym.make reads the creator's render modes from here (``render_mode="rgb_array_list"`` support)
make_env.metadata = Connect4Env.metadata  # type: ignore[attr-defined]


def make_flat_env(**kwargs: Any) -> gym.Env:
    """``Connect4Flat-v0``: ``Connect4-v0`` with a flat float32 observation of ``rows * columns * 2`` values.

    For scripts that feed observations straight into a linear layer (CleanRL's ``ppo.py``, ``dqn.py``):
    ``python ppo.py --env-id connect4_env:Connect4Flat-v0`` runs unchanged.

    ## Description

    [`Connect4Env`][connect4_env.envs.gym_env.Connect4Env] inside Gymnasium's ``DtypeObservation(float32)`` and
    ``FlattenObservation`` wrappers (and the env checker). Only the observation differs: the game, the arguments
    and their defaults, ``info["action_mask"]``, the starting state and episode ends are
    [`Connect4Env`][connect4_env.envs.gym_env.Connect4Env]'s.

    ## Action Space

    [`Connect4Env`][connect4_env.envs.gym_env.Connect4Env]'s: ``Discrete(columns)``.

    ## Observation Space

    ``Box(0.0, 1.0, (rows * columns * 2,), float32)``: ``Connect4-v0``'s planes from the learner's side flattened
    row by row, so index ``2 * (row * columns + column)`` is the learner's stone at (``row``, ``column``) and the
    next index the opponent's; row 0 is the top row. ``observation.reshape(rows, columns, 2)`` gives the planes
    back.

    ## Rewards

    [`Connect4Env`][connect4_env.envs.gym_env.Connect4Env]'s: +1 for a win, -1 for a loss, 0 otherwise.

    ## Version History

    - v0: initial release (0.1.0).

    Raises:
        TypeError: as [`Connect4Env`][connect4_env.envs.gym_env.Connect4Env] for bad arguments.
        ValueError: as [`Connect4Env`][connect4_env.envs.gym_env.Connect4Env] for bad arguments.
    """
    env = Connect4Env(**kwargs)
    flat = gym.wrappers.FlattenObservation(gym.wrappers.DtypeObservation(env, np.float32))
    return RetryableEnvChecker(flat)


make_flat_env.metadata = Connect4Env.metadata  # type: ignore[attr-defined]
