"""Many ``Connect4-v0`` games stepped at once with numpy: bitboards in uint64 arrays, the opponent batched too.

``gymnasium.make_vec("Connect4-v0", num_envs=N)`` (or ``vectorization_mode="vector_entry_point"``) returns a
:class:`Connect4VectorEnv`; :func:`connect4_env.make_sb3_vec_env` wraps the same engine as a Stable-Baselines3
``VecEnv``. Observations, masks, rewards and illegal-action rules are those of ``Connect4-v0``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from connect4_env.core import Board, IllegalMoveError, Rules
from connect4_env.encoding import _cell_bit_index
from connect4_env.gym_env import check_match_settings, resolve_opponent
from connect4_env.render import BoardRenderer

__all__ = ["Connect4VectorEnv", "BatchedBoards"]

# _BYTE_BITS[b] = the 8 bits of byte b, least significant first
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little")


class BatchedBoards:
    """``n`` positions as arrays: ``stones`` (2, n) per absolute player, ``heights`` (n, columns), ``ply`` (n,).

    Bitboards are uint64 when ``(rows + 1) * columns <= 64``, else Python ints in object arrays (the same
    numpy code, elementwise in Python: correct for any size, just slower).
    """

    def __init__(self, rules: Rules, n: int) -> None:
        self.rules = rules
        self.n = n
        self.fits = rules.columns * rules.height <= 64
        self.dtype: Any = np.uint64 if self.fits else object
        self.stones = np.zeros((2, n), dtype=self.dtype)  # object dtype: Python int zeros
        self.heights = np.zeros((n, rules.columns), dtype=np.int64)
        self.ply = np.zeros(n, dtype=np.int64)
        self.bottom = np.array([1 << (c * rules.height) for c in range(rules.columns)], dtype=self.dtype)
        index = _cell_bit_index(rules.rows, rules.columns).reshape(-1)
        self.cell_shift = (
            index.astype(np.intp) if self.fits else np.array([int(i) for i in index], dtype=object)
        )
        self._scratch: np.ndarray | None = None
        # bit numbers for (cell, plane) pairs in observation order: own plane from bits 0-63, other from 64-127
        self.gather = np.stack([index, index + 64], axis=1).reshape(-1).astype(np.intp)  # used when it fits
        self.win_shifts = [[self._scalar(s) for s in shifts] for shifts in rules.win_shifts]

    def _scalar(self, value: int) -> Any:
        return np.uint64(value) if self.fits else value

    def clear(self, index: np.ndarray) -> None:
        self.stones[:, index] = 0
        self.heights[index] = 0
        self.ply[index] = 0

    def has_won(self, stones: np.ndarray) -> np.ndarray:
        """Bool per entry: does the bitboard hold win_length in a line?"""
        won = np.zeros(stones.shape, dtype=bool)
        for shifts in self.win_shifts:
            run = stones
            for shift in shifts:
                run = run & (run >> shift)
            won |= run != 0
        return won

    def play(self, index: np.ndarray, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Drop a stone for the player to move in each listed game (moves must be legal).

        Returns ``(won, full)`` bool arrays for those games.
        """
        player = self.ply[index] & 1
        heights = self.heights[index, columns]
        if self.fits:
            bits = self.bottom[columns] << heights.astype(np.uint64)
        else:
            bits = np.array([int(b) << int(h) for b, h in zip(self.bottom[columns], heights)], dtype=object)
        self.stones[player, index] |= bits
        self.heights[index, columns] += 1
        self.ply[index] += 1
        won = self.has_won(self.stones[player, index])
        return won, self.ply[index] == self.rules.cells

    def legal(self, index: np.ndarray | slice = slice(None)) -> np.ndarray:
        """Bool (k, columns): the columns that are not full."""
        return self.heights[index] < self.rules.rows

    def planes(self, own: np.ndarray, other: np.ndarray) -> np.ndarray:
        """int8 (k, rows, columns, 2) observation planes from two bitboard arrays."""
        rules = self.rules
        n = own.shape[0]
        if self.fits:
            # Unpack both bitboards' little-endian bytes into 128 bits per game, then gather the cells in
            # (row, column, plane) order: one unpack and one take, already in the observation's layout.
            pair = np.empty((n, 2), dtype="<u8")
            pair[:, 0] = own
            pair[:, 1] = other
            # bits of each byte through a 256-entry table, into a scratch buffer kept between calls: large
            # temporaries allocated and freed every step cost page faults with glibc's default settings
            if self._scratch is None or self._scratch.shape[0] < n:
                self._scratch = np.empty((n, 16, 8), dtype=np.uint8)
            bits = self._scratch[:n]
            np.take(_BYTE_BITS, pair.view(np.uint8), axis=0, out=bits)
            bits = bits.reshape(n, 128)
            cells = np.empty((n, self.gather.size), dtype=np.uint8)
            np.take(bits, self.gather, axis=1, out=cells)  # faster with out= than letting take allocate
            return cells.view(np.int8).reshape(n, rules.rows, rules.columns, 2)
        out = np.empty((n, rules.rows * rules.columns, 2), dtype=np.int8)
        out[:, :, 0] = (own[:, None] >> self.cell_shift[None, :]) & 1
        out[:, :, 1] = (other[:, None] >> self.cell_shift[None, :]) & 1
        return out.reshape(n, rules.rows, rules.columns, 2)

    def board(self, i: int) -> Board:
        """Game ``i`` as a :class:`Board` (for rendering and tests)."""
        return Board.from_stones(self.rules, int(self.stones[0, i]), int(self.stones[1, i]))


class Connect4VectorEnv(VectorEnv):
    """``num_envs`` games of ``Connect4-v0`` in lockstep (same arguments, plus ``num_envs``/``autoreset_mode``).

    The opponent's replies are computed for all games at once when it offers
    ``act_batch(observations, action_masks)`` (the random agent does); otherwise game by game with ``act``.
    ``autoreset_mode``: ``"NextStep"`` (Gymnasium's default: the step after a game ends resets it and ignores
    its action) or ``"SameStep"`` (reset at once; ``info["final_obs"]`` holds the last observation).
    ``action_masks()`` gives every game's legal columns (bool, ``(num_envs, columns)``).
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        num_envs: int = 1,
        rows: int = 6,
        columns: int = 7,
        win_length: int = 4,
        opponent: Any = "random",
        opponent_kwargs: dict[str, Any] | None = None,
        agent_first: bool | None = True,
        illegal_action: str = "lose",
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        render_mode: str | None = None,
        tile: int = 48,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        self.rules = Rules(rows, columns, win_length)
        check_match_settings(agent_first, illegal_action)
        try:
            self.autoreset_mode = AutoresetMode(autoreset_mode)
        except ValueError:
            allowed = [m.value for m in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)]
            raise ValueError(
                f"autoreset_mode={autoreset_mode!r} is not supported; allowed: {allowed}"
            ) from None
        if self.autoreset_mode == AutoresetMode.DISABLED:
            raise ValueError("autoreset_mode 'Disabled' is not supported; use 'NextStep' or 'SameStep'")
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        if render_mode == "human":
            raise ValueError("the vector env renders 'ansi' or 'rgb_array' only")
        self._renderer = BoardRenderer(render_mode, tile)
        self.render_mode = render_mode
        self.num_envs = num_envs
        self.opponent = resolve_opponent(opponent, opponent_kwargs, self.rules)
        self.agent_first = agent_first
        self.illegal_action = illegal_action
        rows, columns = self.rules.rows, self.rules.columns
        self.single_observation_space = spaces.Box(0, 1, (rows, columns, 2), dtype=np.int8)
        self.single_action_space = spaces.Discrete(columns)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.boards = BatchedBoards(self.rules, num_envs)
        self.learner = np.zeros(num_envs, dtype=np.int64)
        self._needs_reset = np.zeros(num_envs, dtype=bool)
        self._all = np.arange(num_envs)
        self._has_reset = False

    # -- helpers -------------------------------------------------------------------------------------------
    def _observations(self, index: np.ndarray, seat: np.ndarray) -> np.ndarray:
        stones = self.boards.stones
        own = np.where(seat == 0, stones[0, index], stones[1, index])
        other = np.where(seat == 0, stones[1, index], stones[0, index])
        return self.boards.planes(own, other)

    def _opponent_moves(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Let the opponent move in the listed games; returns (won, full) for them."""
        seat = 1 - self.learner[index]
        # An opponent that declares it ignores observations (the random agent) is spared building them.
        observations = (
            self._observations(index, seat) if getattr(self.opponent, "uses_observations", True) else None
        )
        masks = self.boards.legal(index)
        act_batch = getattr(self.opponent, "act_batch", None)
        if callable(act_batch):
            columns = np.asarray(act_batch(observations, masks.astype(np.int8)), dtype=np.int64)
        else:
            if observations is None:
                observations = self._observations(index, seat)
            columns = np.array(
                [self.opponent.act(observations[k], masks[k].astype(np.int8)) for k in range(index.size)],
                dtype=np.int64,
            ).reshape(index.size)
        bad = (columns < 0) | (columns >= self.rules.columns)
        if not bad.any():
            bad = ~masks[np.arange(index.size), columns]
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise IllegalMoveError(
                f"the opponent {self.opponent!r} chose column {columns[k]} in game {int(index[k])}; "
                f"legal columns are {np.flatnonzero(masks[k]).tolist()}"
            )
        return self.boards.play(index, columns)

    def _reset_games(self, index: np.ndarray) -> None:
        if index.size == 0:
            return
        self.boards.clear(index)
        if self.agent_first is None:
            self.learner[index] = self.np_random.integers(2, size=index.size)
        else:
            self.learner[index] = 0 if self.agent_first else 1
        second = index[self.learner[index] == 1]
        if second.size:
            self._opponent_moves(second)

    def _infos(self, illegal: np.ndarray | None = None) -> dict[str, Any]:
        info: dict[str, Any] = {
            "action_mask": self.boards.legal().astype(np.int8),
            "_action_mask": np.ones(self.num_envs, dtype=bool),
        }
        if illegal is not None and illegal.any():
            info["illegal_action"] = illegal.copy()
            info["_illegal_action"] = illegal.copy()
        return info

    # -- API -----------------------------------------------------------------------------------------------
    def reset(self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None):
        if isinstance(seed, list):
            seed = seed[0]
        if seed is not None:
            self._np_random, self._np_random_seed = seeding.np_random(seed)
        rng = self.np_random
        reset = getattr(self.opponent, "reset", None)
        if callable(reset):
            reset(seed=int(rng.integers(2**63)))
        self._reset_games(self._all)
        self._needs_reset[:] = False
        self._has_reset = True
        return self._observations(self._all, self.learner), self._infos()

    def action_masks(self) -> np.ndarray:
        """Bool (num_envs, columns): each game's legal columns (all True for a game that resets next step)."""
        masks = self.boards.legal()
        masks[self._needs_reset] = True
        return masks

    def step(self, actions: Any):
        if not self._has_reset:
            raise RuntimeError("step() called before reset()")
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or not np.issubdtype(actions.dtype, np.integer):
            raise TypeError(
                f"actions must be {self.num_envs} integer columns, got an array of shape {actions.shape} "
                f"and dtype {actions.dtype}"
            )
        actions = actions.astype(np.int64)
        n, columns = self.num_envs, self.rules.columns
        rewards = np.zeros(n, dtype=np.float64)
        terminated = np.zeros(n, dtype=bool)
        resetting = (
            self._needs_reset.copy() if self.autoreset_mode == AutoresetMode.NEXT_STEP else np.zeros(n, bool)
        )
        active = ~resetting
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
        rewards[full] = -1.0
        terminated[full] = True
        moving = np.flatnonzero(active & ~full)
        if moving.size:
            won, board_full = self.boards.play(moving, actions[moving])
            rewards[moving[won]] = 1.0
            terminated[moving[won | board_full]] = True
            replying = moving[~(won | board_full)]
            if replying.size:
                won, board_full = self._opponent_moves(replying)
                rewards[replying[won]] = -1.0
                terminated[replying[won | board_full]] = True
        self._reset_games(np.flatnonzero(resetting))
        truncated = np.zeros(n, dtype=bool)
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            self._needs_reset = terminated.copy()
            return (
                self._observations(self._all, self.learner),
                rewards,
                terminated,
                truncated,
                self._infos(full),
            )
        final_obs = None
        if terminated.any():
            done = np.flatnonzero(terminated)
            final_obs = self._observations(done, self.learner[done])
            final_masks = self.boards.legal(done).astype(np.int8)
            self._reset_games(done)
        info = self._infos(full)
        if final_obs is not None:
            info["final_obs"] = np.empty(n, dtype=object)
            info["final_info"] = np.empty(n, dtype=object)
            for k, game in enumerate(done.tolist()):
                info["final_obs"][game] = final_obs[k]
                info["final_info"][game] = {
                    "action_mask": np.zeros_like(final_masks[k]),
                    "illegal_action": bool(full[game]),
                }
            info["_final_obs"] = terminated.copy()
            info["_final_info"] = terminated.copy()
        return self._observations(self._all, self.learner), rewards, terminated, truncated, info

    def render(self) -> tuple[Any, ...] | None:
        if self.render_mode is None:
            return None
        return tuple(self._renderer.render(self.boards.board(i)) for i in range(self.num_envs))
