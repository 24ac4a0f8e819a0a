"""Tournaments of agent specs on a process pool or Ray, the same games for the same seed on any backend.

Every game is planned before any is played: pairing ``p``, game ``g`` (A moves first in the even games), and a
seed per player derived from ``(seed, p, g)`` with which each agent is reset before the game. Batches of games
go to [`connect4_agents.evaluation.backends.run_batches`][connect4_agents.evaluation.backends.run_batches];
each worker builds its agents from their specs once and reuses them, so the moves of a game do not depend on
which worker played it.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from connect4_agents._support.progress import progress_bar
from connect4_agents.evaluation.arena import (
    MatchResult,
    check_callable,
    play_game,
    wilson_interval,
)
from connect4_agents.evaluation.backends import plan_batches, run_batches, worker_policy
from connect4_agents.evaluation.ratings import PairingCounts
from connect4_agents.evaluation.records import RESULTS, GameLog
from connect4_env.rules import Rules, check_rules
from connect4_env.validation import check_bool, check_int

__all__ = [
    "TournamentResult",
    "pairing_line",
    "game_logs",
    "GameOutcome",
    "plan_pairings",
    "run_tournament",
    "pairing_counts",
    "game_seeds",
]


@dataclass
class TournamentResult:
    """What [`run_tournament`][connect4_agents.evaluation.tournament.run_tournament] fills: each pairing's
    `connect4_agents.evaluation.arena.MatchResult` and every agent's points (1 a win, 0.5 a draw).
    """

    points: dict[str, float] = field(default_factory=dict)
    pairings: list[tuple[str, str, MatchResult]] = field(default_factory=list)

    def pairing_line(self, index: int) -> str:
        """One pairing's W/D/L from the first-named side, with a 95 % interval on its score."""
        return pairing_line(*self.pairings[index])

    def points_table(self) -> str:
        """Total points, best first."""
        rows = sorted(self.points.items(), key=lambda item: -item[1])
        return "\n".join(["points:"] + [f"  {name:40s} {total:7.1f}" for name, total in rows])

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the points and each pairing's summary (see ``MatchResult.summary``)."""
        return {
            "points": dict(self.points),
            "pairings": [{"a": a, "b": b, **result.summary()} for a, b, result in self.pairings],
        }


def pairing_line(a: str, b: str, result: MatchResult) -> str:
    """A pairing's W/D/L from ``a``'s side, with a 95 % interval on its score."""
    low, high = wilson_interval(result.wins + 0.5 * result.draws, result.n_games)
    return (
        f"{a} vs {b}: {result.wins} W / {result.draws} D / {result.losses} L "
        f"(score {result.score:.3f}, 95% CI {low:.3f}-{high:.3f})"
    )


@dataclass(frozen=True)
class GameOutcome:
    """One planned and played game: A against B, who moved first, the moves, and the winner's seat."""

    pairing: int
    game: int
    a: str
    b: str
    a_first: bool
    moves: tuple[int, ...]
    winner: int | None  # 0 = the first mover, 1 = the second, None = draw
    search: tuple[dict[str, Any] | None, ...] | None = None  # per move, with record_search
    forfeit: dict[str, Any] | None = None  # who gave up and why (a text policy out of answers)

    @property
    def players(self) -> tuple[str, str]:
        """The first mover's spec, then the second's."""
        return (self.a, self.b) if self.a_first else (self.b, self.a)

    @property
    def a_result(self) -> int:
        """1 if A won, 0 for a draw, -1 if A lost."""
        if self.winner is None:
            return 0
        return 1 if (self.winner == 0) == self.a_first else -1

    def to_dict(self) -> dict[str, Any]:
        """The game as a JSON-ready dict: ``pairing``, ``game``, ``first`` and ``second`` (the specs in seat
        order), ``moves`` and ``winner`` (the seat: 0 first mover, 1 second, None a draw), and ``forfeit``'s
        seat when a player gave up; the search numbers are left out.
        """
        data = {
            "pairing": self.pairing,
            "game": self.game,
            "first": self.players[0],
            "second": self.players[1],
            "moves": list(self.moves),
            "winner": self.winner,
        }
        if self.forfeit is not None:
            data["forfeit"] = self.forfeit["player"]
        return data


MAX_GAMES = 10_000_000  # games in one run: its plan is a list, and at a game a millisecond that is hours


def game_seeds(seed: int, pairing: int, game: int) -> tuple[int, int]:
    """The seeds the two players of a game are reset with (first mover's, second mover's).

    Raises:
        TypeError: ``seed``, ``pairing`` or ``game`` is not an integer.
        ValueError: ``seed``, ``pairing`` or ``game`` is a negative integer.
    """
    seed, pairing, game = (
        check_int(name, value, 0) for name, value in (("seed", seed), ("pairing", pairing), ("game", game))
    )
    first, second = np.random.SeedSequence([seed, pairing, game]).generate_state(2)
    return int(first), int(second)


def plan_pairings(specs: Sequence[str], gauntlet: str | None = None) -> list[tuple[str, str]]:
    """Every pair of ``specs`` (a round robin), or ``gauntlet`` against each of ``specs`` only.

    Raises:
        TypeError: ``specs`` is a string rather than a list of them.
        ValueError: fewer than two players, a spec named twice, or the gauntlet's agent also in ``specs``.
    """
    if isinstance(specs, str):
        raise TypeError(f"specs must be a list of agent specs, got the string {specs!r}")
    specs = list(specs)
    duplicates = sorted(spec for spec, count in Counter(specs).items() if count > 1)
    if duplicates:
        raise ValueError(f"agents named more than once: {duplicates}")
    if gauntlet is not None:
        if gauntlet in specs:
            raise ValueError(f"the gauntlet's agent {gauntlet!r} is also on the ladder")
        if not specs:
            raise ValueError("a gauntlet needs at least one ladder agent")
        return [(gauntlet, spec) for spec in specs]
    if len(specs) < 2:
        raise ValueError(f"a tournament needs at least two agents, got {len(specs)}")
    if len(specs) * (len(specs) - 1) // 2 > MAX_GAMES:
        raise ValueError(f"{len(specs):,} agents make more than {MAX_GAMES:,} pairings")
    return list(itertools.combinations(specs, 2))


def game_logs(outcomes: Sequence[GameOutcome], rules: Rules, seed: int) -> list[GameLog]:
    """The games as records (`connect4_agents.evaluation.records`): each with the players' reset seeds, its
    number in its pairing as ``game`` and the pairing's number as the extra field ``pairing``.
    """
    logs = []
    for o in outcomes:
        winner = "draw" if o.winner is None else RESULTS[o.winner]
        log = GameLog(
            rules.rows,
            rules.columns,
            rules.win_length,
            o.players,
            o.moves,
            winner,
            seed,
            game_seeds(seed, o.pairing, o.game),
            o.game,
            o.search,
            {"pairing": o.pairing},
            o.forfeit,
        )
        logs.append(log)
    return logs


def _play_games(
    batch: tuple[tuple[int, int, int], int, list[tuple[int, int, str, str]], bool],
) -> list[GameOutcome]:
    """Play a batch of planned games (run in the workers)."""
    size, seed, games, record_search = batch
    rules = Rules(*size)
    outcomes = []
    for pairing, game, a, b in games:
        a_first = game % 2 == 0
        first, second = (a, b) if a_first else (b, a)
        record = play_game(
            (worker_policy(first, rules), worker_policy(second, rules)),
            rules,
            seeds=game_seeds(seed, pairing, game),
            record_search=record_search,
        )
        outcomes.append(
            GameOutcome(
                pairing, game, a, b, a_first, record.moves, record.winner, record.search, record.forfeit
            )
        )
    return outcomes


def _fill(pairings: list[tuple[str, str]], matches: list[MatchResult], result: TournamentResult) -> None:
    """Put the pairings that have games, in plan order, and everyone's points into ``result`` (in place)."""
    result.points = {name: 0.0 for pair in pairings for name in pair}
    result.pairings = []
    for (a, b), match in zip(pairings, matches):
        if match.n_games:
            result.pairings.append((a, b, match))
            result.points[a] += match.wins + 0.5 * match.draws
            result.points[b] += match.losses + 0.5 * match.draws


def pairing_counts(result: TournamentResult) -> list[PairingCounts]:
    """The W/D/L counts of each pairing, for
    [`connect4_agents.evaluation.ratings.fit_ratings`][connect4_agents.evaluation.ratings.fit_ratings].
    """
    return [PairingCounts(a, b, m.wins, m.draws, m.losses) for a, b, m in result.pairings]


def run_tournament(
    specs: Sequence[str],
    n_games: int,
    rules: Rules | None = None,
    *,
    seed: int = 0,
    gauntlet: str | None = None,
    backend: str = "process",
    workers: int | None = None,
    address: str | None = None,
    progress: bool = True,
    batch_size: int | None = None,
    result: TournamentResult | None = None,
    on_pairing: Callable[[str, str, MatchResult], None] | None = None,
    games: list[GameOutcome] | None = None,
    record_search: bool = False,
) -> tuple[TournamentResult, list[GameOutcome]]:
    """Play every pairing of ``specs`` (or ``gauntlet`` against each) ``n_games`` times, alternating sides.

    ``result`` and ``games``, when given, are kept up to date as games finish (a caller keeps the finished
    games if the run is interrupted); ``on_pairing(a, b, match)`` is called when a pairing's last game is in.
    ``record_search`` keeps each move's search numbers in the games (for `game_logs`).

    Returns:
        The tournament (pairings in plan order) and every game, sorted by pairing and game.

    All arguments and every agent spec are checked here, before any game.

    Raises:
        TypeError: ``specs`` is a string rather than a list; ``n_games``, ``seed``, ``workers`` or
            ``batch_size`` is not an integer; ``progress`` or ``record_search`` is not a bool; ``rules`` is
            not a [`Rules`][connect4_env.rules.Rules]; ``result`` is not a `TournamentResult` or ``games`` not
            a list; ``on_pairing`` is not callable; ``address`` is not a str; or a spec is neither a string
            nor an object with ``act``.
        ValueError: ``n_games`` outside ``1..MAX_GAMES`` or more than ``MAX_GAMES`` games in all, a negative
            ``seed``, fewer than two players, a spec named twice or the gauntlet's agent also in ``specs``,
            an unknown spec or one that cannot be built for ``rules``, ``workers`` or ``batch_size`` out of
            range, an unknown ``backend``, or an ``address`` without ``backend="ray"``.
        MissingExtraError: ``backend="ray"`` without Ray (the ``distributed`` extra).
        IllegalMoveError: an agent chose an illegal column.
    """
    n_games = check_int("n_games", n_games, 1, MAX_GAMES)
    seed = check_int("seed", seed, 0)
    check_bool("progress", progress)
    check_bool("record_search", record_search)
    rules = check_rules(rules, None) or Rules()
    if result is not None and not isinstance(result, TournamentResult):
        raise TypeError(f"result must be None or a TournamentResult, got {type(result).__name__}")
    if games is not None and not isinstance(games, list):
        raise TypeError(f"games must be None or a list (filled as games finish), got {type(games).__name__}")
    check_callable("on_pairing", on_pairing)
    pairings = plan_pairings(specs, gauntlet)
    if len(pairings) * n_games > MAX_GAMES:
        raise ValueError(
            f"{len(pairings)} pairings of n_games={n_games:,} make {len(pairings) * n_games:,} games; one run plays "
            f"at most {MAX_GAMES:,}"
        )
    for spec in dict.fromkeys(name for pair in pairings for name in pair):
        worker_policy(
            spec, rules
        )  # a bad spec fails here, not in a worker (and is built once when in-process)
    planned = [(p, g, a, b) for p, (a, b) in enumerate(pairings) for g in range(n_games)]
    n_workers, chunks = plan_batches(planned, workers, batch_size, largest=20)
    size = (rules.rows, rules.columns, rules.win_length)
    batches = [(size, seed, chunk, record_search) for chunk in chunks]
    result = TournamentResult() if result is None else result
    outcomes: list[GameOutcome] = [] if games is None else games
    matches = [MatchResult() for _ in pairings]
    bar = progress_bar(len(planned), "games", unit="game") if progress else None

    def finished(_: int, batch: list[GameOutcome]) -> None:
        outcomes.extend(batch)
        for outcome in batch:
            matches[outcome.pairing].add(outcome.a_result, outcome.a_first)
        _fill(pairings, matches, result)
        if bar is not None:
            bar.update(len(batch))
        for pairing in dict.fromkeys(outcome.pairing for outcome in batch):  # a pairing ends in one batch
            if matches[pairing].n_games == n_games and on_pairing is not None:
                on_pairing(*pairings[pairing], matches[pairing])

    try:
        run_batches(
            _play_games, batches, backend=backend, workers=n_workers, address=address, on_result=finished
        )
    finally:
        if bar is not None:
            bar.close()
    outcomes.sort(key=lambda o: (o.pairing, o.game))
    return result, outcomes
