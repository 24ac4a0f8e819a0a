"""Many ``Connect4-v0`` games stepped at once with numpy: bitboards in int64 arrays, each game's opponent
answered in batches (``gymnasium.make_vec("Connect4-v0", num_envs=N)``; `connect4_env.make_sb3_vec_env` wraps
the same engine as a Stable-Baselines3 ``VecEnv``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from connect4_env.batched import BatchedBoards
from connect4_env.envs.seats import Seats
from connect4_env.envs.settings import MatchSettings
from connect4_env.render import BoardRenderer
from connect4_env.rules import IllegalMoveError, Rules
from connect4_env.validation import check_bool, check_choice, check_int, check_seed

__all__ = ["Connect4VectorEnv", "MAX_BATCH_CELLS"]

MAX_BATCH_CELLS = 1 << 24
"""The most cells (``num_envs * rows * columns``) one batch may hold. Memory grows ~13 bytes a cell (the
observation, its returned copy, the mask and the reset's conversion of bitboards to planes: 268 boards of
1000x1000 = 268 M cells reached 3.6 GB), so 16.8 M cells stay near 200-250 MB, while the usual batches fit
with room to spare (65,536 boards of 6x7 are 2.75 M cells; the limit allows ~400,000 of them)."""

_OUTCOMES = np.array(["draw", "win", "loss"], dtype=object)  # indexed by (reward > 0) + 2 * (reward < 0)


class Connect4VectorEnv(VectorEnv):
    """``num_envs`` games of ``Connect4-v0`` in lockstep, stepped as arrays (``gymnasium.make_vec("Connect4-v0")``).

    ## Description
    Each game is ``Connect4-v0``: the learner drops a stone, then, unless the game ended, the opponent replies.
    All games step together; the opponent answers all of them in one ``act_batch(observations,
    action_masks)`` call when it has one (the random agent does), else game by game with ``act``.

    ## Action Space
    `MultiDiscrete([columns] * num_envs)`: one column per game, as an integer array of shape `(num_envs,)`.
    Floats, bools, strings and other shapes raise `TypeError`; an out-of-range column raises
    `IllegalMoveError`.

    ## Observation Space
    `Box(0, 1, (num_envs, rows, columns, 2), int8)`: each game from the learner's side (plane 0 its stones,
    plane 1 the opponent's, row 0 the top row), as `Connect4-v0`.

    ## Rewards
    Per game: +1 when the learner wins, -1 when it loses or plays a full column under `illegal_action="lose"`,
    0 otherwise (float64 array).

    ## Starting State
    Empty boards; in games where the learner moves second, the opponent's first stone is already played.
    `reset(seed=s)` seeds the env's RNG (sides under `agent_first=None`) and reseeds the opponent through its
    `reset(seed=...)`: the whole run is then reproducible. A list of seeds is accepted for Gymnasium's
    `reset(seed=[...])`; its first entry seeds the env.

    ## Episode End
    A game terminates on a win, a loss, a draw or (under `"lose"`) an illegal move; never truncated. Under
    `autoreset_mode="NextStep"` (Gymnasium's default) the next step resets that game and ignores its action;
    under `"SameStep"` it is reset at once and its last observation is in `info["final_obs"]`.

    ## Info
    Every key `Connect4-v0` reports, in Gymnasium's vector layout (a value array and a `_key` bool mask per
    key), equal key by key to what `gym.make_vec("Connect4-v0", vectorization_mode="sync")` reports for the
    same games and autoreset mode:

    | key, mask | when | value |
    |---|---|---|
    | `action_mask`, `_action_mask` | always | int8 `(num_envs, columns)`: each game's legal columns (all 0 for a game that ended this step, as `Connect4-v0`) |
    | `outcome`, `_outcome` | `"NextStep"`, a game ended | object `(num_envs,)`: `"win"`, `"loss"` or `"draw"` for the ended games, None elsewhere |
    | `illegal_action`, `_illegal_action` | `"NextStep"`, a full column was played under `"lose"` | bool `(num_envs,)` |
    | `final_obs`, `_final_obs` | `"SameStep"`, a game ended | object array: the last observation of those games |
    | `final_info`, `_final_info` | `"SameStep"`, a game ended | a dict in the same layout: the ended games' `action_mask` (all 0), `outcome` and `illegal_action` (and `opponent`) |
    | `opponent`, `_opponent` | always, while a pool is in play (see below) | object `(num_envs,)`: each game's pool member, None for a game whose opponent is no pool's |

    Under `"SameStep"` the top-level `action_mask` of an ended game is that of its new game, as sync mode
    reports it.

    `action_masks()` gives every game's legal columns as bool `(num_envs, columns)` (all True for a game that
    resets on the next step), for sb3-contrib's MaskablePPO.

    ## Opponents
    `opponent` may be an [`OpponentPool`][connect4_env.pool.OpponentPool]: each game draws a member when it
    starts (with the env's seeded generator) and keeps it to its end, whatever the pool does meanwhile; the
    games facing one member are answered by one call a step; each ended game's outcome is recorded with the
    pool. An `opponent` set on a running env (a curriculum's swap) plays from each game's next start on. Under
    a pool, sync mode's games draw from their own generators, so the parity with sync mode above holds for the
    draws only in distribution.

    ## Failures
    If the opponent raises (KeyboardInterrupt included) or answers an illegal or malformed column, `step` and
    `reset` raise (`IllegalMoveError` naming the opponent and its answer, or the opponent's own exception) and
    leave every game exactly as it was before the call.

    ## Arguments
    | argument | default | meaning |
    |---|---|---|
    | `num_envs` | 1 | games stepped together |
    | `rows`, `columns`, `win_length`, `opponent`, `opponent_kwargs`, `agent_first`, `illegal_action` | as `Connect4-v0` | [`MatchSettings`][connect4_env.envs.settings.MatchSettings]'s fields; kept as `env.settings` |
    | `autoreset_mode` | `"NextStep"` | `"NextStep"` or `"SameStep"` |
    | `render_mode` | None | `"ansi"` or `"rgb_array"` (one per game) |
    | `tile` | 48 | pixels per cell for images |
    | `compiled` | None | None: the numba-compiled rules kernels when the `fast` extra is installed and the board fits in 63 bits; False: their plain-Python build |
    | `copy` | True | return a fresh observation array each call; False returns the env's own buffer, overwritten by the next call (faster; as Gymnasium's `SyncVectorEnv(copy=False)`) |

    ## Version History
    * v0: initial release. Since 0.1.0 (no version bump: the added keys are additive, and the rest fixes the
      documented parity with `Connect4-v0` under sync mode): `outcome` reported; a game that ends shows an
      all-0 `action_mask`; `final_info` is a dict of arrays (Gymnasium 1.x's layout) instead of an object
      array of dicts; under `"SameStep"`, `illegal_action` only inside `final_info`.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        num_envs: int = 1,
        rows: int = MatchSettings.rows,
        columns: int = MatchSettings.columns,
        win_length: int = MatchSettings.win_length,
        opponent: Any = MatchSettings.opponent,
        opponent_kwargs: dict[str, Any] | None = MatchSettings.opponent_kwargs,
        agent_first: bool | None = MatchSettings.agent_first,
        illegal_action: str = MatchSettings.illegal_action,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        render_mode: str | None = None,
        tile: int = 48,
        copy: bool = True,
        compiled: bool | None = None,
    ) -> None:
        num_envs = check_int("num_envs", num_envs, 1, 1 << 24)
        # the batch's size is checked before any opponent is built
        self.rules = Rules(rows, columns, win_length)
        if num_envs * self.rules.cells > MAX_BATCH_CELLS:
            raise ValueError(
                f"num_envs={num_envs} boards of {self.rules.rows}x{self.rules.columns} are "
                f"{num_envs * self.rules.cells:,} cells; allowed: num_envs * rows * columns <= "
                f"{MAX_BATCH_CELLS:,} (MAX_BATCH_CELLS)"
            )
        self.copy = check_bool("copy", copy)
        if compiled is not None:
            check_bool("compiled", compiled)
        modes = {mode.value: mode for mode in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)}
        mode = getattr(autoreset_mode, "value", autoreset_mode)
        self.autoreset_mode = modes[check_choice("autoreset_mode", mode, modes)]
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        if render_mode == "human":
            raise ValueError("the vector env renders 'ansi' or 'rgb_array' only")
        self._renderer = BoardRenderer(render_mode, tile, rules=self.rules)
        self.render_mode = render_mode
        self.num_envs = num_envs
        # the opponent is built last, once every cheap setting is known to be good
        self.settings = MatchSettings(
            rows, columns, win_length, opponent, opponent_kwargs, agent_first, illegal_action
        )
        self.opponent = self.settings.policy
        self.agent_first = agent_first
        self.illegal_action = illegal_action
        rows, columns = self.rules.rows, self.rules.columns
        self.single_observation_space = spaces.Box(0, 1, (rows, columns, 2), dtype=np.int8)
        self.single_action_space = spaces.Discrete(columns)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.boards = BatchedBoards(self.rules, num_envs, compiled=compiled)
        self.learner = np.zeros(num_envs, dtype=np.int64)
        # Every game from the learner's side, kept up to date stone by stone: a step writes two cells per
        # game instead of re-encoding every board.
        self._obs = np.zeros((num_envs, rows, columns, 2), dtype=np.int8)
        self._needs_reset = np.zeros(num_envs, dtype=bool)
        self._all = np.arange(num_envs)
        self._has_reset = False
        # each game's opponent, fixed when the game starts (a pool's member, or `opponent` as it was then)
        self._seats = Seats(num_envs, self.opponent)

    def _play(
        self, index: np.ndarray, columns: np.ndarray, plane: int, journal: list
    ) -> tuple[np.ndarray, np.ndarray]:
        """Play ``columns`` in the listed games for the learner (plane 0) or the opponent (plane 1).

        The moves go into ``journal`` before they are played, with each game's ply before them: a rollback
        takes back just the moves that were made, even when Ctrl-C lands between the entry and the move.
        """
        journal.append((index, columns, plane, self.boards.ply[index]))
        won, full = self.boards.play(index, columns)
        rows = self.rules.rows - self.boards.heights[index, columns]
        self._obs[index, rows, columns, plane] = 1
        return won, full

    def _undo(self, index: np.ndarray, columns: np.ndarray, plane: int, ply: np.ndarray) -> None:
        """Take back the moves `_play` journaled, in the games where they were made (past ``ply``)."""
        made = self.boards.ply[index] > ply
        index, columns = index[made], columns[made]
        rows = self.rules.rows - self.boards.heights[index, columns]
        self._obs[index, rows, columns, plane] = 0
        self.boards.undo(index, columns)

    def _opponent_moves(self, index: np.ndarray, journal: list) -> tuple[np.ndarray, np.ndarray]:
        """Let each game's opponent move in the listed games (the planes from its side built only when it asks
        for them); returns (won, full) for them. Nothing is played unless every answer is legal.
        """
        columns = self._seats.answer(index, self._their_view, self.boards.legal)
        return self._play(index, columns, 1, journal)

    def _their_view(self, games: np.ndarray) -> Callable[[], np.ndarray]:
        return lambda: np.ascontiguousarray(self._obs[games][..., ::-1])

    def opponent_names(self) -> np.ndarray:
        """Each game's opponent: its pool member's name, or None for an opponent that is not a pool's (object
        array ``(num_envs,)``; ``info["opponent"]``).
        """
        return self._seats.names()

    def _reset_games(self, index: np.ndarray, journal: list) -> None:
        if index.size == 0:
            return
        self.boards.clear(index)
        self._obs[index] = 0
        if self.agent_first is None:
            self.learner[index] = self.np_random.integers(2, size=index.size)
        else:
            self.learner[index] = 0 if self.agent_first else 1
        self._seats.draw(index, self.opponent, self.np_random)
        second = index[self.learner[index] == 1]
        if second.size:
            self._opponent_moves(second, journal)

    def _save_games(self, index: np.ndarray, journal: list) -> tuple:
        """What `_reset_games` is about to change in the listed games, for `_rollback`."""
        games = self.boards.snapshot(index), self.learner[index], self._obs[index], self._seats.seat[index]
        return index, games, self.np_random.bit_generator.state, len(journal)

    def _rollback(self, journal: list, saved: tuple | None) -> None:
        """Undo a failed step: restore the games that were being reset (their new moves go with it), then take
        back the moves played before, last to first.
        """
        if saved is not None:
            index, (boards, learner, obs, seats), rng_state, mark = saved
            self.boards.restore(index, boards)
            self.learner[index] = learner
            self._seats.seat[index] = seats
            self._obs[index] = obs
            self.np_random.bit_generator.state = rng_state
            journal = journal[:mark]
        for index, columns, plane, ply in reversed(journal):
            self._undo(index, columns, plane, ply)

    def _observations(self) -> np.ndarray:
        return self._obs.copy() if self.copy else self._obs

    def _infos(self) -> dict[str, Any]:
        """The info of a reset, or of a step with no game ending: every game's legal columns, and each game's
        pool member when a pool is in play.
        """
        info = {
            "action_mask": self.boards.legal().view(np.int8),
            "_action_mask": np.ones(self.num_envs, dtype=bool),
        }
        if self._seats.pooled(self.opponent):
            info["opponent"] = self._seats.names()
            info["_opponent"] = np.ones(self.num_envs, dtype=bool)
        return info

    def _ending_infos(
        self, info: dict[str, Any], rewards: np.ndarray, terminated: np.ndarray, illegal: np.ndarray
    ) -> dict[str, Any]:
        """Add what ``Connect4-v0`` reports when a game ends to ``info`` (Gymnasium's vector layout: a value
        array and a ``_key`` mask per key): ``action_mask`` all 0, ``outcome``, and ``illegal_action`` after a
        full column. Built with a few array operations, only on steps where some game ended.
        """
        ended = np.flatnonzero(terminated)
        info["action_mask"][ended] = 0
        if illegal.any():
            info["illegal_action"] = illegal.copy()
            info["_illegal_action"] = illegal.copy()
        outcome = np.empty(self.num_envs, dtype=object)  # None where no game ended, as sync mode
        ended_rewards = rewards[ended]
        outcome[ended] = _OUTCOMES[(ended_rewards > 0) + 2 * (ended_rewards < 0)]
        info["outcome"] = outcome
        info["_outcome"] = terminated.copy()
        return info

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start every game anew; returns ``(observations, info)`` (see the class docstring).

        Raises:
            TypeError: ``seed`` is not an int, None or a list of them. ValueError: an empty list or a
                negative seed. IllegalMoveError, or whatever the opponent raised: the opponent failed its
                first move; the env is then exactly as before the call.
        """
        if isinstance(seed, (list, tuple)):
            if len(seed) == 0:
                raise ValueError("reset(seed=[]) needs at least one seed (or pass seed=None)")
            seed = seed[0]
        seed = check_seed(seed)
        saved = self._save_games(self._all, [])
        saved_rng = (self._np_random, self._np_random_seed)
        needs_reset = self._needs_reset.copy()
        try:
            if seed is not None:
                self._np_random, self._np_random_seed = seeding.np_random(seed)
            rng = self.np_random
            reset = getattr(self.opponent, "reset", None)
            if callable(reset):
                reset(seed=int(rng.integers(2**63)))
            self._reset_games(self._all, [])
        except BaseException:
            self._np_random, self._np_random_seed = saved_rng  # the old generator; _rollback rewinds it
            self._rollback([], saved)
            self._needs_reset[:] = needs_reset
            raise
        self._needs_reset[:] = False
        self._has_reset = True
        self._seats.tidy()
        return self._observations(), self._infos()

    def action_masks(self) -> np.ndarray:
        """Bool (num_envs, columns): each game's legal columns (all True for a game that resets next step)."""
        masks = self.boards.legal()
        masks[self._needs_reset] = True
        return masks

    def check_actions(self, actions: Any) -> np.ndarray:
        """``actions`` as int64 columns if they are an integer array of shape ``(num_envs,)``.

        Raises:
            TypeError: any other type, dtype (float, bool, str) or shape; nothing is cast.
        """
        actions = np.asarray(actions)
        integers = np.issubdtype(actions.dtype, np.integer) and actions.dtype != np.bool_
        if actions.shape != (self.num_envs,) or not integers:
            raise TypeError(
                f"actions must be an integer array of shape ({self.num_envs},), got an array of shape "
                f"{actions.shape} and dtype {actions.dtype}"
            )
        return actions.astype(np.int64, copy=False)

    def _full_columns(self, actions: np.ndarray, active: np.ndarray) -> np.ndarray:
        """The ``active`` games whose action is a full column (a loss under ``illegal_action="lose"``).

        Raises:
            IllegalMoveError: an active game's action is out of range, or a full column under
                ``illegal_action="raise"``.
        """
        columns = self.rules.columns
        out_of_range = active & ((actions < 0) | (actions >= columns))
        if out_of_range.any():
            i = int(np.flatnonzero(out_of_range)[0])
            raise IllegalMoveError(
                f"action {actions[i]} in game {i} is out of range: columns are 0..{columns - 1}"
            )
        safe_actions = np.where(active, actions, 0)
        full = active & (self.boards.heights[self._all, safe_actions] >= self.rules.rows)
        if full.any() and self.illegal_action == "raise":
            i = int(np.flatnonzero(full)[0])
            raise IllegalMoveError(
                f"column {actions[i]} is full in game {i}; legal columns are "
                f"{np.flatnonzero(self.boards.legal(slice(i, i + 1))[0]).tolist()}"
            )
        return full

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Play one column in every game, then the opponent's replies; returns Gymnasium's 5-tuple of arrays.

        Raises:
            RuntimeError: before the first ``reset``. TypeError: ``actions`` is not an integer array of shape
                ``(num_envs,)``. IllegalMoveError: an out-of-range column, a full one under
                ``illegal_action="raise"``, or an illegal or malformed answer of the opponent; whatever the
                opponent raised passes through. After any error every game is exactly as before the call.
        """
        if not self._has_reset:
            raise RuntimeError("step() called before reset()")
        actions = self.check_actions(actions)
        n, columns = self.num_envs, self.rules.columns
        rewards = np.zeros(n, dtype=np.float64)
        terminated = np.zeros(n, dtype=bool)
        next_step = self.autoreset_mode == AutoresetMode.NEXT_STEP
        resetting = self._needs_reset if next_step else np.zeros(n, bool)
        active = ~resetting
        full = self._full_columns(actions, active)
        rewards[full] = -1.0
        terminated[full] = True
        journal: list = []
        saved = None
        final_obs = None
        try:
            moving = np.flatnonzero(active & ~full)
            if moving.size:
                won, board_full = self._play(moving, actions[moving], 0, journal)
                rewards[moving[won]] = 1.0
                terminated[moving[won | board_full]] = True
                replying = moving[~(won | board_full)]
                if replying.size:
                    won, board_full = self._opponent_moves(replying, journal)
                    rewards[replying[won]] = -1.0
                    terminated[replying[won | board_full]] = True
            ended = np.flatnonzero(terminated)
            ended_seats = self._seats.seat[ended]
            if next_step:
                to_reset = np.flatnonzero(resetting)
            else:
                to_reset = np.flatnonzero(terminated)
                if to_reset.size:
                    final_obs = self._obs[to_reset]
            if to_reset.size:
                saved = self._save_games(to_reset, journal)
                self._reset_games(to_reset, journal)
        except BaseException:
            self._rollback(journal, saved)
            raise
        self._seats.record(ended_seats, rewards[ended])
        info = self._infos()
        if next_step:
            self._needs_reset = terminated.copy()
            if terminated.any():
                self._ending_infos(info, rewards, terminated, full)
        elif final_obs is not None:
            # as Gymnasium's SyncVectorEnv: the ended games' step info goes under "final_info" (a dict of
            # arrays, one mask per key); the top level holds the new games' reset info
            info["final_obs"] = np.full(n, None, dtype=object)
            for game, observation in zip(to_reset.tolist(), final_obs):
                info["final_obs"][game] = observation
            info["_final_obs"] = terminated.copy()
            final_info = {
                "action_mask": np.zeros((n, columns), dtype=np.int8),
                "_action_mask": terminated.copy(),
            }
            if "opponent" in info:  # the ended games' opponents; the top level names the new games'
                final_info["opponent"] = np.full(n, None, dtype=object)
                final_info["opponent"][ended] = self._seats.names(ended_seats)
                final_info["_opponent"] = terminated.copy()
            info["final_info"] = self._ending_infos(final_info, rewards, terminated, full)
            info["_final_info"] = terminated.copy()
        self._seats.tidy()
        return self._observations(), rewards, terminated, np.zeros(n, dtype=bool), info

    def render(self) -> tuple[Any, ...] | None:
        """One rendering per game (``"ansi"`` text or ``"rgb_array"`` image), or None without a render mode."""
        if self.render_mode is None:
            return None
        return tuple(self._renderer.render(self.boards.board(i)) for i in range(self.num_envs))
