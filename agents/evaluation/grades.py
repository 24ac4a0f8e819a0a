"""A player's grades by perfect play, each figure a count with its 95 % Wilson interval: its games move by move
(`GameGrade`) and its moves on one test set (`SetGrade`), with their JSON forms (see
`connect4_agents.evaluation.grading`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from connect4_agents.evaluation.arena import wilson_interval

__all__ = ["Rate", "GameGrade", "SetGrade"]


@dataclass(frozen=True)
class Rate:
    """``successes`` out of ``n``, with its rate and 95 % Wilson interval (draws may count as halves).

    Attributes:
        successes: what was counted (a win, a blunder, a rejected answer ...).
        n: out of how many.
    """

    successes: float
    n: int

    @property
    def rate(self) -> float | None:
        """``successes / n``, None when ``n`` is 0 (nothing to rate)."""
        return self.successes / self.n if self.n else None

    @property
    def ci95(self) -> tuple[float, float]:
        """The 95 % Wilson interval (``(0.0, 1.0)`` when ``n`` is 0)."""
        return wilson_interval(self.successes, self.n)

    def to_dict(self) -> dict[str, Any]:
        """``{"count", "n", "rate", "ci95"}``, JSON-ready (``rate`` null when ``n`` is 0)."""
        return {"count": self.successes, "n": self.n, "rate": self.rate, "ci95": list(self.ci95)}

    @classmethod
    def from_dict(cls, data: Any, what: str) -> Rate:
        """Read `to_dict`'s form back; ``what`` names the figure in messages.

        Raises:
            ValueError: not an object with a count within ``0..n`` and an integer ``n >= 0``.
        """
        if not isinstance(data, dict):
            raise ValueError(f"{what} must be an object with count and n, got {data!r:.80}")
        n, count = data.get("n"), data.get("count")
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ValueError(f"{what}: n must be an integer >= 0, got {n!r:.40}")
        if not isinstance(count, (int, float)) or isinstance(count, bool) or not 0 <= count <= n:
            raise ValueError(f"{what}: count must be a number within 0..{n}, got {count!r:.40}")
        return cls(count, n)

    def __str__(self) -> str:
        """``93.1% (91.2%-94.6%)``, or ``-`` when there is nothing to rate."""
        if self.rate is None:
            return "-"
        low, high = self.ci95
        return f"{self.rate:.1%} ({low:.1%}-{high:.1%})"


_RATES = (
    "best_class",
    "exact",
    "blunders",
    "nontrivial_best_class",
    "illegal_answers",
    "fallbacks",
    "forfeits",
)
_COUNTS = (
    "games",
    "wins",
    "draws",
    "losses",
    "moves",
    "unjudged",
    "blunders_from_win",
    "blunders_from_draw",
    "text_moves",
)


@dataclass(frozen=True)
class GameGrade:
    """A player's games graded move by move (see the module docstring).

    A game in which the player held both seats counts once per seat, in ``games`` and in the results.

    Attributes:
        player: the name graded, as the records' ``players`` spell it.
        games: the seats the player held (one per game, two for a game against itself).
        wins: games won (a forfeit by the other side included).
        draws: games drawn.
        losses: games lost (its own forfeits included).
        moves: moves the player made.
        unjudged: moves the solver could not judge (left out of the verdict rates).
        best_class: moves that kept the best outcome class, over the judged moves.
        exact: moves with the best score, over the judged moves.
        blunders: moves that gave up the outcome class (``mistake``), over the judged moves.
        blunders_from_win: blunders in a won position (the win given up).
        blunders_from_draw: blunders in a drawn position (the draw given up).
        nontrivial_best_class: moves that kept the best outcome class, over the judged moves in
            non-trivial positions.
        text_moves: moves with a text policy's record (``search`` entries of kind ``"text"``).
        illegal_answers: rejected tries over all tries of the text moves and the forfeited moves.
        fallbacks: text moves the fallback played, over the text moves.
        forfeits: games the player forfeited, over ``games``.
        verdicts: per game, the verdict of each of the player's moves in order (``"best"``, ``"keeps"``,
            ``"mistake"``, or None where not judged or played by the fallback).
        top3: SPIN-Bench's measure: moves whose dense rank among the legal columns by exact score is at most 3
            (ties share a rank), over the judged moves; None where not measured (a report written before it
            was). Where few scores are distinct the top 3 holds losing moves, so it counts moves that give a
            win away as good, which ``best_class`` never does.
    """

    player: str
    games: int
    wins: int
    draws: int
    losses: int
    moves: int
    unjudged: int
    best_class: Rate
    exact: Rate
    blunders: Rate
    blunders_from_win: int
    blunders_from_draw: int
    nontrivial_best_class: Rate
    text_moves: int
    illegal_answers: Rate
    fallbacks: Rate
    forfeits: Rate
    verdicts: tuple[tuple[str | None, ...], ...] = ()
    top3: Rate | None = None

    @property
    def score(self) -> Rate:
        """Points per game (win 1, draw 1/2) with their interval."""
        return Rate(self.wins + 0.5 * self.draws, self.games)

    def to_dict(self) -> dict[str, Any]:
        """The grade as a JSON-ready dict: the counts, each rate as `Rate.to_dict`, ``score``, the verdicts and
        ``top3`` (null when not measured).
        """
        data: dict[str, Any] = {"player": self.player}
        data.update({name: getattr(self, name) for name in _COUNTS})
        data["score"] = self.score.to_dict()
        data.update({name: getattr(self, name).to_dict() for name in _RATES})
        data["verdicts"] = [list(game) for game in self.verdicts]
        data["top3"] = None if self.top3 is None else self.top3.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: Any) -> GameGrade:
        """Read `to_dict`'s form back (``top3`` absent or null: not measured, as in reports written before it).

        Raises:
            ValueError: a field missing or of the wrong kind.
        """
        if not isinstance(data, dict):
            raise ValueError(f"games must be an object, got {data!r:.80}")
        if not isinstance(data.get("player"), str):
            raise ValueError(f"games.player must be a str, got {data.get('player')!r:.40}")
        counts: dict[str, Any] = {}
        for name in _COUNTS:
            value = data.get(name)
            if type(value) is not int or value < 0:
                raise ValueError(f"games.{name} must be an integer >= 0, got {value!r:.40}")
            counts[name] = value
        rates: dict[str, Any] = {name: Rate.from_dict(data.get(name), f"games.{name}") for name in _RATES}
        verdicts = data.get("verdicts", [])
        if not isinstance(verdicts, list) or not all(
            isinstance(game, list) and all(v in (None, "best", "keeps", "mistake") for v in game)
            for game in verdicts
        ):
            raise ValueError("games.verdicts must be lists of 'best', 'keeps', 'mistake' or null")
        top3 = data.get("top3")
        return cls(
            player=data["player"],
            **counts,
            **rates,
            verdicts=tuple(tuple(game) for game in verdicts),
            top3=None if top3 is None else Rate.from_dict(top3, "games.top3"),
        )


@dataclass(frozen=True)
class SetGrade:
    """A player's moves on one test set's positions.

    Attributes:
        best_class: positions where the move kept the best outcome class, over all positions.
        nontrivial_best_class: the same over the non-trivial positions (the figure that tells players apart).
        forfeits: positions the player gave up (counted as lost in both rates).
        fallbacks: positions its fallback played (a text policy's random column): in neither rate.
        nontrivial_top3: the non-trivial positions where the move ranked among the 3 best scores
            (SPIN-Bench's measure); None in a report written before it was measured.
    """

    best_class: Rate
    nontrivial_best_class: Rate
    forfeits: int = 0
    fallbacks: int = 0
    nontrivial_top3: Rate | None = None

    def to_dict(self) -> dict[str, Any]:
        """The rates as `Rate.to_dict` (``nontrivial_top3`` null when not measured), ``forfeits`` and
        ``fallbacks``.
        """
        return {
            "best_class": self.best_class.to_dict(),
            "nontrivial_best_class": self.nontrivial_best_class.to_dict(),
            "nontrivial_top3": None if self.nontrivial_top3 is None else self.nontrivial_top3.to_dict(),
            "forfeits": self.forfeits,
            "fallbacks": self.fallbacks,
        }

    @classmethod
    def from_dict(cls, data: Any, what: str) -> SetGrade:
        """Read `to_dict`'s form back.

        Raises:
            ValueError: not an object of two rates (and ``nontrivial_top3``: a rate, null or absent) and counts
                of forfeits and fallbacks (absent: 0).
        """
        if not isinstance(data, dict):
            raise ValueError(f"{what} must be an object, got {data!r:.80}")
        counts = []
        for name in ("forfeits", "fallbacks"):
            count = data.get(name, 0) if name == "fallbacks" else data.get(name)
            if type(count) is not int or count < 0:
                raise ValueError(f"{what}.{name} must be an integer >= 0, got {count!r:.40}")
            counts.append(count)
        top3 = data.get("nontrivial_top3")
        return cls(
            Rate.from_dict(data.get("best_class"), f"{what}.best_class"),
            Rate.from_dict(data.get("nontrivial_best_class"), f"{what}.nontrivial_best_class"),
            forfeits=counts[0],
            fallbacks=counts[1],
            nontrivial_top3=None if top3 is None else Rate.from_dict(top3, f"{what}.nontrivial_top3"),
        )
