"""Elo ratings from game results: Bradley-Terry maximum likelihood with bootstrap intervals, files and picture.

Model: player ``i`` scores against ``j`` with probability ``1 / (1 + 10 ** ((R_j - R_i) / 400))``. A draw counts
as half a win and half a loss (half points), the usual convention of chess ratings; Davidson's draw model is not
used. Every pairing also gets ``prior_draws`` virtual drawn games (default 1, as BayesElo does with its prior):
without them a player who won every game would have an infinite rating. The fit is
``scipy.optimize.minimize`` (L-BFGS-B, analytic gradient) on the log-likelihood; one player is the anchor
(rating 0, ``random`` by default), or given players keep fixed ratings (a gauntlet against a rated ladder).
When every pairing has a fixed player (a gauntlet, a league's snapshots against its fixed members), each other
player's likelihood is its own and all are solved at once by bracketed Newton steps.

Intervals: ``bootstrap`` times, each pairing's games are resampled with replacement (wins, draws and losses
drawn in their observed proportions) and the ratings refitted; the 2.5 and 97.5 percentiles are the interval.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from connect4_agents._support.figures import pyplot, save_figure
from connect4_agents._support.files import parse_json, read_text_limited
from connect4_agents.evaluation.bradley_terry import MAX_COUNT, fit_strengths
from connect4_env.rules import Rules
from connect4_env.validation import check_int, check_number

__all__ = [
    "Ratings",
    "fit_ratings",
    "PairingCounts",
    "ELO_PER_NATURAL_UNIT",
    "read_ladder",
    "read_ratings",
    "read_ratings_board",
    "MAX_ELO",
    "REFERENCE_LADDER",
    "reference_ladder",
    "check_fit_settings",
    "MAX_PLOTTED",
]

MAX_PLOTTED = 40
"""The most players `Ratings.plot` draws (the highest-rated of those asked for)."""

ELO_PER_NATURAL_UNIT = 400 / math.log(10)
# measured with connect4 tournament on 6x7 (see the README); --gauntlet rates a new agent against it
REFERENCE_LADDER = Path(__file__).resolve().parent.parent / "data" / "ladder_6x7.json"


_MAX_RATINGS_BYTES = 16 << 20  # a ladder of thousands of agents is well under 1 MB
MAX_ELO = 100_000  # a rating file's Elo values: far beyond any real ladder, and no overflow in the fit


def read_ladder(path: str | os.PathLike[str]) -> tuple[tuple[int, int, int], dict[str, float]]:
    """The board ``(rows, columns, win_length)`` and the ratings (spec -> Elo) of a ratings file written by
    ``connect4 tournament --json``, read and checked once (what a gauntlet's ``--ladder`` needs).

    Raises:
        TypeError: ``path`` is not a str or os.PathLike.
        ValueError: ``path`` is a folder, or the file is over 16 MB, not such JSON, does not name its board
            or names something that is not one, or holds a rating that is not a finite number.
        OSError: the file cannot be read.
    """
    data = _read_ratings_file(path)
    return _board_of(path, data), _ratings_of(path, data)


def read_ratings(path: str | os.PathLike[str]) -> dict[str, float]:
    """The ``{"ratings": {spec: {"elo": x, ...}}}`` of a file written by ``connect4 tournament --json``.

    Raises:
        TypeError: ``path`` is not a str or os.PathLike.
        ValueError: ``path`` is a folder, or the file is over 16 MB, not such JSON, or holds a rating that is
            not a finite number.
        OSError: the file cannot be read.
    """
    return _ratings_of(path, _read_ratings_file(path))


def read_ratings_board(path: str | os.PathLike[str]) -> tuple[int, int, int]:
    """``(rows, columns, win_length)`` of the games a ratings file (``tournament.py --json``) was played on.

    Raises:
        TypeError: ``path`` is not a str or os.PathLike.
        ValueError: ``path`` is a folder, or the file is over 16 MB, not JSON, or does not say its board or
            says something that is not one.
        OSError: the file cannot be read.
    """
    return _board_of(path, _read_ratings_file(path))


def _read_ratings_file(path: object) -> Any:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(
            f"a ratings file's path must be a str or a path, got {path!r:.80} ({type(path).__name__})"
        )
    if Path(path).is_dir():
        raise ValueError(
            f"{path} is a folder; a ladder is a ratings file (the JSON that tournament.py --json writes)"
        )
    text = read_text_limited(path, _MAX_RATINGS_BYTES, "ratings")
    try:
        return parse_json(text, "ratings", allow_nan=True)
    except ValueError as error:
        raise ValueError(f"{path}: not a ratings file written by tournament.py --json ({error})") from None


def _ratings_of(path: object, data: Any) -> dict[str, float]:
    try:
        ratings = {str(spec): _elo(entry["elo"]) for spec, entry in data["ratings"].items()}
    except (KeyError, TypeError, AttributeError, ValueError, OverflowError) as error:
        raise ValueError(f"{path}: not a ratings file written by tournament.py --json ({error})") from None
    bad = [spec for spec, elo in ratings.items() if not math.isfinite(elo) or abs(elo) > MAX_ELO]
    if bad:
        raise ValueError(f"{path}: ratings of {bad} are not finite numbers within ±{MAX_ELO:,}")
    return ratings


def _board_of(path: object, data: Any) -> tuple[int, int, int]:
    if not isinstance(data, dict) or any(k not in data for k in ("rows", "columns", "win_length")):
        raise ValueError(
            f"{path}: a ratings file names its board (rows, columns, win_length); this one does not"
        )
    try:
        rules = Rules(data["rows"], data["columns"], data["win_length"])
    except (TypeError, ValueError) as error:
        raise ValueError(f"{path}: its board is not one ({error})") from None
    return rules.rows, rules.columns, rules.win_length


def _elo(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"an elo must be a number, got {value!r:.40}")
    return float(value)


def reference_ladder() -> dict[str, float]:
    """The shipped 6x7 ladder's ratings: spec -> Elo (random = 0)."""
    return read_ratings(REFERENCE_LADDER)


@dataclass(frozen=True)
class PairingCounts:
    """Wins, draws and losses of ``a`` against ``b``."""

    a: str
    b: str
    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        """The games of the pairing: wins, draws and losses together."""
        return self.wins + self.draws + self.losses


@dataclass
class Ratings:
    """Fitted ratings: ``elo[player]`` and ``ci95[player] = (low, high)``, anchored as ``anchor`` says."""

    elo: dict[str, float]
    ci95: dict[str, tuple[float, float]]
    anchor: str
    pairings: list[PairingCounts] = field(default_factory=list)
    draws: str = "half points"
    prior_draws: float = 1.0
    bootstrap: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The ratings as a JSON-ready dict, the shape ``tournament.py --json`` writes and `read_ratings`
        reads: ``ratings`` (player -> ``{"elo", "ci95"}``), ``anchor``, ``draws``, ``prior_draws`` and
        ``bootstrap``; the pairings are left out.
        """
        return {
            "ratings": {p: {"elo": self.elo[p], "ci95": list(self.ci95[p])} for p in self.elo},
            "anchor": self.anchor,
            "draws": self.draws,
            "prior_draws": self.prior_draws,
            "bootstrap": self.bootstrap,
        }

    def table(self) -> str:
        """Players best first: Elo and its 95 % interval."""
        width = max(8, *(len(p) for p in self.elo))
        lines = [f"{'player':{width}} {'Elo':>7}   95% interval", "-" * (width + 30)]
        for player in sorted(self.elo, key=lambda p: -self.elo[p]):
            low, high = self.ci95[player]
            lines.append(f"{player:{width}} {self.elo[player]:7.0f}   [{low:6.0f}, {high:6.0f}]")
        lines.append(f"(anchor {self.anchor}; draws as {self.draws}; {self.bootstrap} bootstrap samples)")
        return "\n".join(lines)

    def plot(self, path: str, players: Sequence[str] | None = None) -> None:
        """Ratings with interval bars, and the head-to-head scores as a heat map, saved to ``path``.

        Args:
            path: the picture's file.
            players: the rated players to show (default: all); at most `MAX_PLOTTED` are drawn, the
                highest-rated of them (the picture grows with the square of the players: a league of hundreds
                of snapshots would take gigabytes).
        """
        chosen = list(self.elo) if players is None else [p for p in players if p in self.elo]
        players = sorted(chosen, key=lambda p: self.elo[p])[-MAX_PLOTTED:]
        index = {p: i for i, p in enumerate(players)}
        score = np.full((len(players), len(players)), np.nan)
        for pairing in self.pairings:
            if pairing.games and pairing.a in index and pairing.b in index:
                share = (pairing.wins + 0.5 * pairing.draws) / pairing.games
                score[index[pairing.a], index[pairing.b]] = share
                score[index[pairing.b], index[pairing.a]] = 1 - share
        size = max(4.0, 0.6 * len(players) + 2)
        figure, (left, right) = pyplot().subplots(1, 2, figsize=(2 * size + 2, size))
        elo = [self.elo[p] for p in players]
        low = [self.elo[p] - self.ci95[p][0] for p in players]
        high = [self.ci95[p][1] - self.elo[p] for p in players]
        left.errorbar(elo, range(len(players)), xerr=[low, high], fmt="o", capsize=4)
        left.set_yticks(range(len(players)), players)
        left.set_xlabel(
            f"Elo (anchor {self.anchor} = {self.elo.get(self.anchor, 0):.0f}), 95% bootstrap interval"
        )
        left.grid(axis="x", alpha=0.3)
        image = right.imshow(score, vmin=0, vmax=1, cmap="RdYlGn", origin="lower")
        right.set_xticks(range(len(players)), players, rotation=45, ha="right")
        right.set_yticks(range(len(players)), players)
        right.set_title("score of row against column")
        for i in range(len(players)):
            for j in range(len(players)):
                if not np.isnan(score[i, j]):
                    right.text(j, i, f"{score[i, j]:.2f}", ha="center", va="center", fontsize=8)
        figure.colorbar(image, ax=right, fraction=0.046)
        figure.tight_layout()
        save_figure(figure, path, dpi=110)


def fit_ratings(
    pairings: Sequence[PairingCounts],
    *,
    anchor: str | None = "random",
    fixed: Mapping[str, float] | None = None,
    bootstrap: int = 1000,
    prior_draws: float = 1.0,
    seed: int = 0,
) -> Ratings:
    """Elo ratings of every player in ``pairings``.

    Args:
        pairings: W/D/L counts per pair of players.
        anchor: the player rated 0 (default ``"random"``; when absent, the first player named). Ignored when
            ``fixed`` is given.
        fixed: player -> Elo held fixed (the others are fitted against them), e.g. a rated ladder.
        bootstrap: resamples for the 95 % intervals (0: no intervals, each interval is the point).
        prior_draws: virtual drawn games added to every pairing (> 0: it keeps ratings finite).
        seed: the bootstrap's random generator.

    Raises:
        TypeError: ``pairings`` is not a list of
            [`PairingCounts`][connect4_agents.evaluation.ratings.PairingCounts], a player's name is not a str,
            or a count is not an int.
        ValueError: no games, a negative count, a player paired with itself, a player or a group of players
            with no games linking it to the anchor or the fixed players, a fixed player who did not play, or a
            bad number.
    """
    _check_pairings(pairings)
    bootstrap = check_fit_settings(anchor, bootstrap)
    # with no prior a perfect record has no finite maximum-likelihood rating: the fit would stop anywhere
    prior_draws = check_number("prior_draws", prior_draws, 0.0, above_minimum=True)
    if fixed is not None and not isinstance(fixed, Mapping):
        raise TypeError(
            f"fixed must be None or a mapping player -> Elo, got {fixed!r:.80} ({type(fixed).__name__})"
        )
    seed = check_int("seed", seed, 0)
    players = list(dict.fromkeys(name for p in pairings for name in (p.a, p.b)))
    if not players or sum(p.games for p in pairings) == 0:
        raise ValueError("no games to rate")
    index = {name: k for k, name in enumerate(players)}
    start = np.zeros(len(players))
    roots, anchor_name = _roots(players, index, start, fixed, anchor)
    _check_connected(players, pairings, roots)
    free = np.array([k not in roots for k in range(len(players))])
    pairs = np.array([[index[p.a], index[p.b]] for p in pairings], dtype=np.int64)
    counts = np.array([[p.wins, p.draws, p.losses] for p in pairings], dtype=np.float64)

    def solve(wdl: np.ndarray) -> np.ndarray:
        points = wdl[:, 0] + 0.5 * wdl[:, 1] + 0.5 * prior_draws
        games = wdl.sum(axis=1) + prior_draws
        return fit_strengths(pairs, points, games, free, start, guess) * ELO_PER_NATURAL_UNIT

    guess = start
    elo = solve(counts)
    guess = elo / ELO_PER_NATURAL_UNIT  # the bootstrap's fits start from the point estimate
    if bootstrap:
        rng = np.random.default_rng(seed)
        totals = counts.sum(axis=1).astype(np.int64)
        shares = counts / np.maximum(1, totals)[:, None]
        samples = np.empty((bootstrap, len(players)))
        for b in range(bootstrap):
            resampled = np.array([rng.multinomial(n, share) for n, share in zip(totals, shares)], dtype=float)
            samples[b] = solve(resampled)
        bounds = np.percentile(samples, [2.5, 97.5], axis=0)
    else:
        bounds = np.stack([elo, elo])
    low, high = bounds[0], bounds[1]
    for name, rating in (fixed or {}).items():  # exactly as given, not through the natural-unit round trip
        elo[index[name]] = low[index[name]] = high[index[name]] = float(rating)
    return Ratings(
        elo={p: float(elo[k]) for p, k in index.items()},
        ci95={p: (float(low[k]), float(high[k])) for p, k in index.items()},
        anchor=anchor_name,
        pairings=list(pairings),
        prior_draws=prior_draws,
        bootstrap=bootstrap,
    )


def _check_pairings(pairings: object) -> None:
    if isinstance(pairings, (str, bytes)) or not isinstance(pairings, Sequence):
        raise TypeError(f"pairings must be a list of PairingCounts, got {type(pairings).__name__}")
    for pairing in pairings:
        if not isinstance(pairing, PairingCounts):
            raise TypeError(f"pairings must hold PairingCounts, got {type(pairing).__name__}")
        for name in (pairing.a, pairing.b):
            if not isinstance(name, str):
                raise TypeError(
                    f"a player's name must be a str, got {name!r:.80} ({type(name).__name__}) in {pairing!r:.160}"
                )
        for field_name in ("wins", "draws", "losses"):
            check_int(
                f"{field_name} of {pairing.a} vs {pairing.b}", getattr(pairing, field_name), 0, MAX_COUNT
            )
        if pairing.a == pairing.b:
            raise ValueError(f"{pairing.a!r} cannot be paired with itself")


def _roots(
    players: list[str],
    index: dict[str, int],
    start: np.ndarray,
    fixed: Mapping[str, float] | None,
    anchor: str | None,
) -> tuple[list[int], str]:
    """The players whose ratings are given (``start`` holds them, in natural units) and the anchor's name."""
    if not fixed:
        anchor_name = anchor if anchor in index else players[0]
        return [index[anchor_name]], anchor_name
    unknown = sorted(set(fixed) - set(players))
    if unknown:
        raise ValueError(f"fixed ratings for players who did not play: {unknown}")
    for name, rating in fixed.items():
        start[index[name]] = check_number(f"fixed[{name!r}]", rating) / ELO_PER_NATURAL_UNIT
    if len(fixed) == len(players):
        raise ValueError("fixed holds every player's rating: nobody is left to fit")
    return [index[name] for name in fixed], "fixed: " + ", ".join(fixed)


def check_fit_settings(anchor: object, bootstrap: object) -> int:
    """The checks of [`fit_ratings`][connect4_agents.evaluation.ratings.fit_ratings]'s ``anchor`` and
    ``bootstrap`` (callers that fit after many games make them first); returns ``bootstrap``.

    Raises:
        TypeError: ``anchor`` is neither a str nor None, or ``bootstrap`` is not an integer.
        ValueError: ``bootstrap`` is outside ``0..1_000_000``.
    """
    if anchor is not None and not isinstance(anchor, str):
        raise TypeError(f"anchor must be a player's name (str) or None, got {type(anchor).__name__}")
    return check_int("bootstrap", bootstrap, 0, 1_000_000)


def _check_connected(players: list[str], pairings: Sequence[PairingCounts], roots: list[int]) -> None:
    neighbours: dict[str, set[str]] = {p: set() for p in players}
    for p in pairings:
        if p.games:
            neighbours[p.a].add(p.b)
            neighbours[p.b].add(p.a)
    reached = {players[k] for k in roots}
    frontier = list(reached)
    while frontier:
        for other in neighbours[frontier.pop()]:
            if other not in reached:
                reached.add(other)
                frontier.append(other)
    missing = [p for p in players if p not in reached]
    if missing:
        raise ValueError(
            f"no games link {missing} to the rated players {[players[k] for k in roots]}: "
            "their ratings cannot be measured"
        )
