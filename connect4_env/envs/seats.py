"""Which opponent each game faces: fixed when the game starts, kept to its end.

[`Seats`][connect4_env.envs.seats.Seats] is "this game's opponent" for both single-agent envs: the vector env's
games (and through it the SB3 VecEnv) and `Connect4-v0`'s one game. A game's opponent is a pool member drawn
when the game starts, or the env's ``opponent`` as it was then; adding, removing or re-weighting members, or
setting a new ``opponent``, changes only the games that start later.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from connect4_env.opponent import opponent_columns
from connect4_env.pool import OpponentPool

__all__ = ["Seats"]

_TIDY_FROM = 64  # opponents remembered before the ones no game faces are forgotten


class Seats:
    """Each of ``num_envs`` games' opponent, as an index into a list of (pool or None, member name or None,
    policy) entries; games facing one opponent share an entry, so they can be answered by one call.

    Args:
        num_envs: the games.
        opponent: the opponent every game faces until it is first drawn for (a policy, not a pool).
    """

    def __init__(self, num_envs: int, opponent: Any) -> None:
        self.seat = np.zeros(num_envs, dtype=np.int64)
        self._entries: list[tuple[OpponentPool | None, str | None, Any]] = []
        self._index: dict[tuple[int, str | None, int], int] = {}
        self._entry(None, None, opponent)

    def _entry(self, pool: OpponentPool | None, name: str | None, policy: Any) -> int:
        """The index of this opponent's entry, added if new."""
        key = (id(pool), name, id(policy))
        entry = self._index.get(key)
        if entry is None or self._entries[entry][2] is not policy:
            entry = len(self._entries)
            self._entries.append((pool, name, policy))
            self._index[key] = entry
        return entry

    def draw(self, games: np.ndarray, opponent: Any, rng: np.random.Generator) -> None:
        """Fix the opponents of the games starting now: a pool's members drawn per game with ``rng``, else
        ``opponent`` itself.

        Raises:
            ValueError: the pool is empty or every member weighs 0 (nothing is changed).
        """
        if not isinstance(opponent, OpponentPool):
            entry = self._entry(None, None, opponent)
            if entry or len(self._entries) > 1:  # with one entry every seat is 0 already
                self.seat[games] = entry
            return
        drawn = opponent.draw_members(rng, size=games.size)  # with their policies: safe against remove()
        entries = {name: self._entry(opponent, name, policy) for name, policy in dict(drawn).items()}
        self.seat[games] = [entries[name] for name, _ in drawn]

    def policy(self, game: int) -> Any:
        """The policy game ``game`` faces."""
        return self._entries[self.seat[game]][2]

    def name(self, game: int) -> str | None:
        """The pool member game ``game`` faces, None when its opponent is no pool's."""
        return self._entries[self.seat[game]][1]

    def answer(
        self,
        games: np.ndarray,
        observations: Callable[[np.ndarray], Callable[[], np.ndarray]],
        masks: Callable[[np.ndarray], np.ndarray],
    ) -> np.ndarray:
        """The columns the opponents of ``games`` play there, each checked legal (see
        [`opponent_columns`][connect4_env.opponent.opponent_columns]); the games facing one opponent are
        answered by one call. ``observations(games)`` builds those games' planes when asked, ``masks(games)``
        gives their legal columns.

        Raises:
            IllegalMoveError: an opponent's answer is illegal or malformed; whatever it raised passes through.
        """
        seats = self.seat[games]
        if len(self._entries) == 1 or (seats == seats[0]).all():  # the common case: one opponent for all
            policy = self._entries[seats[0]][2]
            return opponent_columns(policy, observations(games), masks(games), games)
        columns = np.empty(games.size, dtype=np.int64)
        for entry in np.unique(seats).tolist():
            facing = seats == entry
            part = games[facing]
            columns[facing] = opponent_columns(self._entries[entry][2], observations(part), masks(part), part)
        return columns

    def pooled(self, opponent: Any) -> bool:
        """True when a game faces a pool's member, or ``opponent`` (the next games') is a pool."""
        return isinstance(opponent, OpponentPool) or any(pool is not None for pool, _, _ in self._entries)

    def names(self, seats: np.ndarray | None = None) -> np.ndarray:
        """The pool member names of ``seats`` (default every game's), None where the opponent is no pool's."""
        names = np.array([name for _, name, _ in self._entries] + [None], dtype=object)[:-1]
        return names[self.seat if seats is None else seats]

    def record(self, seats: np.ndarray, rewards: np.ndarray) -> None:
        """Count ended games' outcomes (the learner's ``rewards``, one per seat) with their members' pools."""
        if not self.pooled(None):
            return
        for entry, reward in zip(seats.tolist(), rewards.tolist()):
            pool, name, _ = self._entries[entry]
            if pool is not None and name is not None:
                pool.record(name, "win" if reward > 0 else "loss" if reward < 0 else "draw")

    def tidy(self) -> None:
        """Forget the opponents no game faces any more. Call it between steps, never inside one: a rollback
        restores seat numbers saved before.
        """
        if len(self._entries) <= _TIDY_FROM:
            return
        used, self.seat = np.unique(self.seat, return_inverse=True)
        self._entries = [self._entries[k] for k in used.tolist()]
        self._index = {
            (id(pool), name, id(policy)): k for k, (pool, name, policy) in enumerate(self._entries)
        }
