"""Opponent pools for self-play and leagues: named opponents that an env draws from when an episode starts.

An [`OpponentPool`][connect4_env.pool.OpponentPool] is accepted wherever ``opponent=`` is (``Connect4-v0``, its
vector env, the SB3 VecEnv). Each game draws one member when it starts and keeps that member's policy until it
ends, whatever is added, removed or re-weighted meanwhile; ``info["opponent"]`` names the member; the env records
each finished game's outcome with the pool (`connect4_env.pool_records`), and the sampling rule reads them.

A pool is one process's object. An env in another process (an async ``gym.make_vec``, SB3's ``SubprocVecEnv``)
holds a copy: outcomes recorded there stay in that copy (which warns once), and members added to the original
do not reach it. Record the games in the original with [`record_infos`][connect4_env.pool.OpponentPool.record_infos];
a synchronous vector env (``Connect4-v0``'s own, ``make_sb3_vec_env``) shares the pool and needs none of this.
"""

from __future__ import annotations

import copy
import os
import threading
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from connect4_env.policy import bind_policy, make_policy, resolve_opponent
from connect4_env.pool_records import OUTCOMES, MemberRecord, ended_games, restored_records
from connect4_env.rules import Rules, short_repr
from connect4_env.validation import check_choice, check_int, check_number, check_seed

__all__ = ["OpponentPool", "SAMPLING_RULES"]

SAMPLING_RULES = ("uniform", "weights", "pfsp")
"""``uniform``: every member alike; ``weights``: in proportion to each member's weight; ``pfsp``: prioritised
fictitious self-play, each member's weight times a function of the learner's recent score against it."""
PFSP_RULES = ("hard", "variance", "even")


class OpponentPool:
    """Named opponents that an env draws from at the start of each episode.

    Members are given as a mapping of names to opponents, or as a list of agent specs (each named by its
    spec). An opponent is anything ``opponent=`` takes: an agent name or spec (``"random"``, ``"mcts:100"``,
    ``"sb3:runs/a/model.zip"``), a path to an SB3 model file, an object with ``act(observation, action_mask)``,
    or a live Stable-Baselines3 model or policy, which is copied and frozen when it joins (later training of the
    original does not reach the member; needs the ``train`` extra).

    ## Sampling
    - ``"uniform"``: every member equally likely (weights ignored).
    - ``"weights"``: in proportion to each member's weight (default 1; ``set_weight``).
    - ``"pfsp"``: prioritised fictitious self-play (AlphaStar's): each member's weight times ``f(score)``, where
      ``score`` is the learner's recent score against it (wins 1, draws 0.5, over the last ``window`` games, with
      one win and one loss of prior) and ``f`` is ``pfsp``: ``"hard"`` ``(1 - score) ** power`` (train against
      the members the learner cannot yet beat), ``"variance"`` ``score * (1 - score)`` (the even matches), or
      ``"even"`` ``1`` (weights only).

    ## Episodes
    An env calls [`draw`][connect4_env.pool.OpponentPool.draw] when a game starts and holds the drawn policy to the
    game's end, then calls [`record`][connect4_env.pool.OpponentPool.record] with the outcome: changing the pool
    never changes a game in progress. Drawing with the env's random generator makes a seeded env reproducible;
    ``draw()`` without one uses the pool's own generator (``seed``).

    ## Rules
    An env binds the pool to its rules (``bind``), which binds every member and every later one; a pool serves
    one board size.

    Pickles (the members must) and compares by its members' names, weights and records.

    Args:
        members: a mapping ``{name: opponent}`` or an iterable of agent specs (named by themselves); may be empty
            until ``add``.
        sampling: one of [`SAMPLING_RULES`][connect4_env.pool.SAMPLING_RULES].
        weights: ``{name: weight}`` for some members (the rest weigh 1).
        seed: seeds the pool's own generator (for ``draw()`` without one).
        pfsp: ``"hard"``, ``"variance"`` or ``"even"`` (see Sampling).
        power: the exponent of ``"hard"``.
        window: how many of each member's latest games its score is read from.

    Raises:
        TypeError: ``members`` is not a mapping or an iterable of specs; a name that is not a str; a weight,
            power or window that is not a number; an opponent of a type ``opponent=`` does not take.
        ValueError: an unknown sampling or pfsp rule; a repeated or empty name; a negative or non-finite weight;
            an unknown agent spec.
    """

    def __init__(
        self,
        members: Mapping[str, Any] | Iterable[str] | None = None,
        *,
        sampling: str = "uniform",
        weights: Mapping[str, float] | None = None,
        seed: int | None = None,
        pfsp: str = "hard",
        power: float = 2.0,
        window: int = 100,
    ) -> None:
        self.sampling = check_choice("sampling", sampling, SAMPLING_RULES)
        self.pfsp = check_choice("pfsp", pfsp, PFSP_RULES)
        self.power = check_number("power", power, 0)
        self.window = check_int("window", window, 1)
        self.rules: Rules | None = None
        # draw() may race add()/remove() from another thread (a league adding snapshots while envs draw)
        self._lock = threading.RLock()
        self._origin = os.getpid()  # a copy unpickled in another process records only there (see record)
        self._warned_copy = False
        self._members: dict[str, Any] = {}
        self._weights: dict[str, float] = {}
        self._records: dict[str, MemberRecord] = {}
        self._rng = np.random.default_rng(check_seed(seed))
        if members is None:
            items: list[tuple[Any, Any]] = []
        elif isinstance(members, Mapping):
            items = list(members.items())
        elif isinstance(members, (str, bytes)) or not isinstance(members, Iterable):
            raise TypeError(
                f"members must be a mapping of names to opponents or a list of agent specs, got {short_repr(members)}"
            )
        else:
            items = []
            for spec in members:
                if not isinstance(spec, str):
                    raise TypeError(
                        f"a list of members holds agent specs (str), got {short_repr(spec)}; name other "
                        "opponents with a mapping {name: opponent}"
                    )
                items.append((spec, spec))
        weights = {} if weights is None else dict(weights)
        for name, opponent in items:
            self.add(name, opponent, weight=weights.pop(name, 1.0))
        if weights:
            raise ValueError(f"weights name no member: {sorted(weights)}; members: {self.names}")

    # -- members -----------------------------------------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        """The members' names, in the order they joined."""
        with self._lock:
            return list(self._members)

    def __len__(self) -> int:
        return len(self._members)

    def __contains__(self, name: object) -> bool:
        return name in self._members

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __getitem__(self, name: str) -> Any:
        """The member's policy (bound to the pool's rules).

        Raises:
            KeyError: no member has this name.
        """
        try:
            return self._members[name]
        except KeyError:
            raise KeyError(f"no member {name!r}; members: {self.names}") from None

    def add(self, name: str, opponent: Any, weight: float = 1.0) -> None:
        """Let ``opponent`` join under ``name`` (see the class docstring for what an opponent may be).

        Games already drawn keep their opponents; the new member can be drawn from the next game on. Its record
        starts empty, or continues a removed member's of the same name.

        Raises:
            TypeError: ``name`` is not a str; ``weight`` is not a number; an opponent ``opponent=`` does not take.
            ValueError: ``name`` is empty or already a member; ``weight`` is negative or not finite; an unknown
                agent spec; an opponent that cannot play the pool's rules.
        """
        if not isinstance(name, str):
            raise TypeError(f"a member's name must be a str, got {short_repr(name)}")
        if not name:
            raise ValueError("a member's name must not be empty")
        weight = check_number("weight", weight, 0)
        policy = _frozen(opponent)
        with self._lock:
            if name in self._members:  # checked under the lock: another thread may add the same name
                raise ValueError(f"{name!r} is already a member; remove it first or choose another name")
            if self.rules is not None:
                policy = bind_policy(policy, self.rules)
            self._members[name] = policy
            self._weights[name] = weight
            self._records.setdefault(name, MemberRecord())

    def remove(self, name: str) -> Any:
        """Take the member out of the pool; returns its policy. Games playing it go on to their end, and their
        outcomes are still recorded.

        Raises:
            KeyError: no member has this name.
        """
        with self._lock:
            policy = self[name]
            del self._members[name], self._weights[name]
            return policy

    def set_weight(self, name: str, weight: float) -> None:
        """Change a member's weight (read by ``"weights"`` and ``"pfsp"`` sampling).

        Raises:
            KeyError: no member has this name.
            TypeError: ``weight`` is not a number.
            ValueError: ``weight`` is negative or not finite.
        """
        weight = check_number("weight", weight, 0)
        with self._lock:
            self[name]
            self._weights[name] = weight

    def weight(self, name: str) -> float:
        """A member's weight.

        Raises:
            KeyError: no member has this name.
        """
        with self._lock:
            self[name]
            return self._weights[name]

    # -- episodes ----------------------------------------------------------------------------------------------
    def probabilities(self) -> dict[str, float]:
        """Each member's chance of being drawn now, under the pool's sampling rule.

        Raises:
            ValueError: the pool is empty, or every member weighs 0.
        """
        with self._lock:
            return self._probabilities()

    def _probabilities(self) -> dict[str, float]:
        if not self._members:
            raise ValueError("the opponent pool is empty: add a member before a game starts")
        names = list(self._members)
        if self.sampling == "uniform":
            return {name: 1.0 / len(names) for name in names}
        weights = np.array([self._weights[name] for name in names], dtype=np.float64)
        if self.sampling == "pfsp":
            scores = np.array([self._records[name].score() for name in names])
            if self.pfsp == "hard":
                weights = weights * (1.0 - scores) ** self.power
            elif self.pfsp == "variance":
                weights = weights * scores * (1.0 - scores)
        largest = float(weights.max())
        if not largest > 0.0:
            raise ValueError(f"every member of the pool weighs 0: {dict(zip(names, weights.tolist()))}")
        weights = weights / largest  # so that the sum is finite however large the weights (two of 1e308)
        return dict(zip(names, (weights / weights.sum()).tolist()))

    def draw(self, rng: np.random.Generator | None = None, size: int | None = None) -> Any:
        """Draw members' names under the sampling rule: one name, or a list of ``size`` names.

        Args:
            rng: the generator to draw with (an env passes its own); None: the pool's.
            size: None for one name, else how many (independent draws).

        Raises:
            ValueError: the pool is empty or every member weighs 0.
        """
        with self._lock:
            chances = self._probabilities()
            rng = self._rng if rng is None else rng
            names = list(chances)
            picks = rng.choice(len(names), size=1 if size is None else size, p=list(chances.values()))
        if size is None:
            return names[int(picks[0])]
        return [names[int(k)] for k in picks]

    def draw_members(self, rng: np.random.Generator | None = None, size: int = 1) -> list[tuple[str, Any]]:
        """Like [`draw`][connect4_env.pool.OpponentPool.draw] with ``size``, each name with its policy, read
        together: a member removed by another thread meanwhile is still returned with its policy.

        Raises:
            ValueError: the pool is empty or every member weighs 0.
        """
        with self._lock:
            names = self.draw(rng, size=size)
            return [(name, self._members[name]) for name in names]

    def record(self, name: str, outcome: str) -> None:
        """Count a finished game against the member ``name`` (current or removed): ``outcome`` is the learner's
        ``"win"``, ``"draw"`` or ``"loss"``.

        Raises:
            KeyError: ``name`` never was a member.
            ValueError: an unknown outcome.
        """
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome={short_repr(outcome)} is not an outcome; allowed: {OUTCOMES}")
        with self._lock:
            self.record_of(name).add(outcome, self.window)
            warn = self._origin != os.getpid() and not self._warned_copy
            self._warned_copy = self._warned_copy or warn
        if warn:
            warnings.warn(
                f"this OpponentPool is a copy in process {os.getpid()} (an async gym.make_vec or SB3's "
                "SubprocVecEnv sends each env its own): the games recorded here stay in this copy, and members "
                "added to the original do not reach it. Record the games in the original with "
                "pool.record_infos(infos) after each step, or use a synchronous vector env",
                RuntimeWarning,
                stacklevel=2,
            )

    def record_infos(self, infos: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> int:
        """Record the games that ended in one vector step, from its ``infos``: for a pool whose envs run in
        other processes (an async ``gym.make_vec``, SB3's ``SubprocVecEnv``), whose copies of the pool the
        caller's never hears from. An env in this process records by itself: do not call this for it too.

        Args:
            infos: a Gymnasium vector env's info dict or SB3's list of one per env (see
                [`ended_games`][connect4_env.pool_records.ended_games]).

        Returns:
            How many games were recorded.

        Raises:
            TypeError: ``infos`` is neither a mapping nor a sequence of mappings.
            KeyError: an ended game's opponent never was a member of this pool.
            ValueError: an unknown outcome.
        """
        ended = ended_games(infos)
        for name, outcome in ended:
            self.record(name, outcome)
        return len(ended)

    def record_of(self, name: str) -> MemberRecord:
        """The learner's record against ``name`` (a current or removed member); read it, do not change it.

        Raises:
            KeyError: ``name`` never was a member.
        """
        try:
            return self._records[name]
        except (KeyError, TypeError):
            raise KeyError(f"{short_repr(name)} never was a member of this pool") from None

    def load_stats(self, stats: Mapping[str, Mapping[str, Any]]) -> None:
        """Restore records saved from [`stats`][connect4_env.pool.OpponentPool.stats] (a resumed run): each
        named entry's totals and recent scores replace the record of that name (kept for names that are not
        members now, as removed members' are).

        Raises:
            TypeError: an entry that is not a mapping, or counts that are not integers.
            ValueError: negative counts, or recent scores other than 0, 0.5 and 1.
            KeyError: an entry without ``wins``, ``draws``, ``losses`` or ``recent``.
        """
        restored = restored_records(stats, self.window)
        with self._lock:
            self._records.update(restored)

    def stats(self) -> dict[str, dict[str, Any]]:
        """Every member's record (removed members' too) as plain values (see `MemberRecord.as_dict`), with its
        weight (None once removed) and current chance of being drawn (0 once removed).
        """
        with self._lock:
            try:
                chances = self._probabilities()
            except ValueError:  # empty, or every member weighs 0
                chances = {}
            return {
                name: {
                    **record.as_dict(),
                    "member": name in self._members,
                    "weight": self._weights.get(name),
                    "probability": chances.get(name, 0.0),
                }
                for name, record in self._records.items()
            }

    # -- policy protocol ---------------------------------------------------------------------------------------
    def bind(self, rules: Rules) -> None:
        """Serve ``rules``: bind every member to them (and every later member).

        Raises:
            ValueError: the pool already serves other rules, or a member cannot play these.
        """
        with self._lock:
            if self.rules is not None and self.rules != rules:
                raise ValueError(f"this pool serves {self.rules}; make another pool for {rules}")
            for name, policy in self._members.items():
                self._members[name] = bind_policy(policy, rules)
            self.rules = rules

    def reset(self, seed: int | None = None) -> None:
        """Reseed the pool's generator and each member that has ``reset(seed=...)`` (with seeds drawn from it).

        Raises:
            TypeError: ``seed`` is not an int or None.
            ValueError: ``seed`` is negative.
        """
        rng = np.random.default_rng(check_seed(seed))
        with self._lock:
            self._rng = rng
            for policy in self._members.values():
                reset = getattr(policy, "reset", None)
                if callable(reset):
                    reset(seed=int(self._rng.integers(2**63)))

    def act(self, observation: Any, action_mask: Any) -> int:
        """Refused: a pool is not one policy. An env draws a member per game (see the class docstring).

        Raises:
            TypeError: always.
        """
        raise TypeError(
            "an OpponentPool is drawn from per game by the envs (opponent=pool); draw a member with "
            "pool[pool.draw()] to play it directly"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OpponentPool):
            return NotImplemented
        return (
            self.names == other.names
            and self._weights == other._weights
            and self._records == other._records
            and (self.sampling, self.pfsp, self.power, self.window)
            == (other.sampling, other.pfsp, other.power, other.window)
        )

    __hash__ = None  # type: ignore[assignment]

    def __getstate__(self) -> dict[str, Any]:
        with self._lock:
            return {key: value for key, value in self.__dict__.items() if key != "_lock"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        shown = ", ".join(self.names[:8]) + (", ..." if len(self) > 8 else "")
        return f"OpponentPool([{shown}], sampling={self.sampling!r})"


def _frozen(opponent: Any) -> Any:
    """The policy a member plays: a spec resolved, a model file loaded, a live SB3 model or policy copied."""
    if isinstance(opponent, Path):
        opponent = f"sb3:{opponent}"
    if isinstance(opponent, str) or callable(getattr(opponent, "act", None)):
        return resolve_opponent(opponent)
    policy = getattr(opponent, "policy", opponent)  # an SB3 algorithm holds its policy
    if callable(getattr(policy, "predict", None)) and callable(getattr(policy, "set_training_mode", None)):
        snapshot = copy.deepcopy(policy)
        snapshot.set_training_mode(False)
        return make_policy("sb3", policy=snapshot, deterministic=False)
    raise TypeError(
        "a pool member must be an agent name or spec, an SB3 model file, an object with "
        f"act(observation, action_mask), or a live SB3 model or policy; got {short_repr(opponent)}"
    )
