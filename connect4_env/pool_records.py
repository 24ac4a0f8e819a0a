"""The learner's record against each member of an opponent pool: its games, the outcomes of the latest ones
(which PFSP sampling reads), the games that ended in a vector step's infos, and records restored from their
saved form.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from connect4_env.rules import short_repr
from connect4_env.validation import check_int

__all__ = ["MemberRecord", "OUTCOMES", "ended_games", "restored_records"]

OUTCOMES = ("win", "draw", "loss")
"""A finished game's outcome, from the learner's side (as ``info["outcome"]``)."""
_SCORES = {"win": 1.0, "draw": 0.5, "loss": 0.0}
_TOTALS = {"win": "wins", "draw": "draws", "loss": "losses"}


@dataclass
class MemberRecord:
    """The learner's games against one member: totals, and the outcomes of the most recent ``window`` games."""

    wins: int = 0
    """Games the learner won against the member."""
    draws: int = 0
    """Drawn games."""
    losses: int = 0
    """Games the learner lost."""
    recent: deque[float] = field(default_factory=deque)
    """The learner's scores (1 win, 0.5 draw, 0 loss) in the latest games, oldest first, at most ``window``."""

    @property
    def games(self) -> int:
        """All recorded games against the member."""
        return self.wins + self.draws + self.losses

    def add(self, outcome: str, window: int) -> None:
        """Count a game of ``outcome`` (one of `OUTCOMES`), keeping the latest ``window`` in ``recent``."""
        total = _TOTALS[outcome]
        setattr(self, total, getattr(self, total) + 1)
        self.recent.append(_SCORES[outcome])
        if len(self.recent) > window:
            self.recent.popleft()

    def score(self) -> float:
        """The learner's recent score against the member, ``(points + 1) / (games + 2)`` over the window: 0.5
        before any game, so a new member is neither favoured nor neglected.
        """
        return (sum(self.recent) + 1.0) / (len(self.recent) + 2.0)

    def as_dict(self) -> dict[str, Any]:
        """The record as plain JSON values: games, wins, draws, losses, win_rate (totals) and recent_score."""
        games = self.games
        return {
            "games": games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "win_rate": self.wins / games if games else None,
            "recent_score": self.score(),
            "recent": list(self.recent),
        }


def ended_games(infos: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> list[tuple[Any, Any]]:
    """``(opponent, outcome)`` of each game that ended in one vector step, read from its ``infos``: a
    Gymnasium vector env's info dict (``info["outcome"]`` with its ``_outcome`` mask, and ``final_info`` under
    ``SameStep`` autoreset), or SB3's list of one info dict per env. Entries without both (games still
    playing, opponents of no pool) are left out.

    Raises:
        TypeError: ``infos`` is neither a mapping nor a sequence of mappings.
    """
    ended: list[tuple[Any, Any]] = []
    if isinstance(infos, Mapping):
        for source in (infos, infos.get("final_info")):
            if not isinstance(source, Mapping) or "outcome" not in source or "opponent" not in source:
                continue
            mask = source.get("_outcome", np.ones(len(source["outcome"]), dtype=bool))
            ended.extend(
                (source["opponent"][i], source["outcome"][i]) for i in np.flatnonzero(np.asarray(mask))
            )
    elif isinstance(infos, Sequence) and not isinstance(infos, (str, bytes)):
        for info in infos:
            if not isinstance(info, Mapping):
                raise TypeError(f"infos must hold one dict per env, got {short_repr(info)}")
            ended.append((info.get("opponent"), info.get("outcome")))
    else:
        raise TypeError(
            f"infos must be a vector env's info dict or a list of info dicts, got {short_repr(infos)}"
        )
    return [(name, outcome) for name, outcome in ended if name is not None and outcome is not None]


def restored_records(stats: Mapping[str, Mapping[str, Any]], window: int) -> dict[str, MemberRecord]:
    """The records saved as ``OpponentPool.stats()`` (a resumed run's), each checked; ``recent`` keeps the
    latest ``window`` scores.

    Raises:
        TypeError: an entry that is not a mapping, or counts that are not integers.
        ValueError: negative counts, or recent scores other than 0, 0.5 and 1.
        KeyError: an entry without ``wins``, ``draws``, ``losses`` or ``recent``.
    """
    restored: dict[str, MemberRecord] = {}
    for name, entry in stats.items():
        if not isinstance(name, str) or not isinstance(entry, Mapping):
            raise TypeError(f"stats map member names to their records, got {short_repr(name)}")
        counts = [check_int(key, entry[key], 0, 10**15) for key in ("wins", "draws", "losses")]
        recent = entry["recent"]
        if isinstance(recent, (str, bytes)) or not isinstance(recent, Iterable):
            raise TypeError(f"recent scores of {name!r} must be a list, got {short_repr(recent)}")
        scores = list(recent)[-window:]
        if any(score not in (0, 0.5, 1) or isinstance(score, bool) for score in scores):
            raise ValueError(f"recent scores of {name!r} must be 0, 0.5 or 1, got {short_repr(scores)}")
        wins, draws, losses = counts
        restored[name] = MemberRecord(wins, draws, losses, recent=deque(float(s) for s in scores))
    return restored
