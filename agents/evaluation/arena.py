"""Play games and matches between policies on the rules core (no environment needed)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from connect4_env.core import Board, IllegalMoveError, Rules, as_column
from connect4_env.encoding import TrackedBoard
from connect4_env.policy import bind_policy
from connect4_env.validation import check_int

__all__ = [
    "GameRecord",
    "MatchResult",
    "play_game",
    "play_match",
    "wilson_interval",
    "TournamentResult",
    "round_robin",
    "pairing_line",
]


@dataclass
class GameRecord:
    """One finished game: the moves, the winner (0 = first mover, 1 = second, None = draw), the final board,
    and (``play_game(record_search=True)``) per move the mover's ``move_info()`` (None where it has none)."""

    moves: list[int]
    winner: int | None
    board: Board
    search: list[dict[str, Any] | None] = field(default_factory=list)


def play_game(
    players: Sequence[Any],
    rules: Rules | None = None,
    on_move: Callable[[Board, int, int], None] | None = None,
    seeds: Sequence[int | None] | None = None,
    record_search: bool = False,
) -> GameRecord:
    """Play ``players[0]`` (moves first) against ``players[1]`` to the end.

    Each player is first bound to ``rules`` (default 6x7, four in a row) through its ``bind(rules)`` and reset
    through its ``reset()``, if it has them. ``on_move(board, player, column)`` is called after every move (for
    printing). ``seeds``, when given, are passed to
    the players' ``reset(seed=...)`` (one per player), so the game can be replayed exactly. With
    ``record_search``, the record keeps each mover's ``move_info()`` after its move (MCTS visits and values,
    solver scores), for game records.

    Raises:
        IllegalMoveError: a player returned an illegal column (the message names the player and the column).
        ValueError: a player cannot play these rules.
    """
    if len(players) != 2:
        raise ValueError(f"play_game needs exactly two players, got {len(players)}")
    rules = rules if rules is not None else Rules()
    game = TrackedBoard(rules)
    if seeds is not None and len(seeds) != 2:
        raise ValueError(f"play_game needs one seed per player, got {len(seeds)}")
    for index, player in enumerate(players):
        bind_policy(player, rules)
        reset = getattr(player, "reset", None)
        if callable(reset):
            if seeds is not None and seeds[index] is not None:
                reset(seed=seeds[index])
            else:
                reset()
    moves: list[int] = []
    search: list[dict[str, Any] | None] = []
    board = game.board
    while not board.is_terminal:
        mover = board.to_move
        action = players[mover].act(game.observation(mover), game.mask.copy())
        column = as_column(action)
        try:
            game.play(column)
        except IllegalMoveError as error:
            raise IllegalMoveError(
                f"player {mover} ({players[mover]!r}) chose an illegal move: {error}"
            ) from None
        moves.append(column)
        if record_search:
            info = getattr(players[mover], "move_info", None)
            search.append(info() if callable(info) else None)
        if on_move is not None:
            on_move(board, mover, column)
    return GameRecord(moves=moves, winner=board.winner, board=board, search=search)


def wilson_interval(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson score interval for a proportion (``successes`` may count draws as halves)."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class MatchResult:
    """Wins, draws and losses of player A against B, overall and by the side A played."""

    wins: int = 0
    draws: int = 0
    losses: int = 0
    by_side: dict[str, list[int]] = field(default_factory=lambda: {"first": [0, 0, 0], "second": [0, 0, 0]})
    games: list[GameRecord] = field(default_factory=list)

    @property
    def n_games(self) -> int:
        return self.wins + self.draws + self.losses

    def add(self, a_result: int, a_first: bool) -> None:
        """Count one game: ``a_result`` 1 if A won, 0 for a draw, -1 if A lost; ``a_first`` if A moved first."""
        slot = {1: 0, 0: 1, -1: 2}[a_result]
        self.by_side["first" if a_first else "second"][slot] += 1
        if slot == 0:
            self.wins += 1
        elif slot == 1:
            self.draws += 1
        else:
            self.losses += 1

    @property
    def score(self) -> float:
        """A's points per game: win 1, draw 1/2."""
        return (self.wins + 0.5 * self.draws) / max(1, self.n_games)

    def summary(self) -> dict[str, Any]:
        """A JSON-ready dict with rates and 95 % Wilson intervals, overall and per side."""

        def block(w: int, d: int, losses: int) -> dict[str, Any]:
            n = w + d + losses
            return {
                "games": n,
                "wins": w,
                "draws": d,
                "losses": losses,
                "win_rate": w / n if n else 0.0,
                "win_rate_ci95": wilson_interval(w, n),
                "draw_rate": d / n if n else 0.0,
                "loss_rate": losses / n if n else 0.0,
                "loss_rate_ci95": wilson_interval(losses, n),
            }

        return {
            "overall": block(self.wins, self.draws, self.losses),
            "as_first": block(*self.by_side["first"]),
            "as_second": block(*self.by_side["second"]),
        }

    def table(self, name_a: str, name_b: str) -> str:
        """The W/D/L table from A's side, per side and overall, with 95 % Wilson intervals on the win rate."""
        summary = self.summary()
        lines = [
            f"{name_a} vs {name_b}: {self.n_games} games, {name_a} moving first in half of them",
            f"{'side of ' + name_a:>18} {'games':>6} {'wins':>6} {'draws':>6} {'losses':>6}   win rate (95% CI)",
        ]
        for label, key in (("first", "as_first"), ("second", "as_second"), ("overall", "overall")):
            block = summary[key]
            low, high = block["win_rate_ci95"]
            lines.append(
                f"{label:>18} {block['games']:>6} {block['wins']:>6} {block['draws']:>6} {block['losses']:>6}"
                f"   {block['win_rate']:.3f} ({low:.3f}-{high:.3f})"
            )
        return "\n".join(lines)


@dataclass
class TournamentResult:
    """A round robin: each pairing's :class:`MatchResult` and every agent's points (1 a win, 0.5 a draw)."""

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


def round_robin(
    players: dict[str, Any],
    n_games: int,
    rules: Rules | None = None,
    on_pairing: Callable[[TournamentResult], None] | None = None,
    result: TournamentResult | None = None,
) -> TournamentResult:
    """Every pair of ``players`` (name -> agent) plays ``n_games`` games, alternating who starts.

    ``on_pairing(result)`` is called after each pairing; ``result``, when given, is filled in place, so a caller
    keeps the finished pairings if the tournament is interrupted.

    Raises:
        TypeError / ValueError: fewer than two players or a bad ``n_games``.
    """
    n_games = check_int("n_games", n_games, 1)
    if len(players) < 2:
        raise ValueError(f"a tournament needs at least two players, got {len(players)}")
    result = TournamentResult() if result is None else result
    for name in players:
        result.points.setdefault(name, 0.0)
    for a, b in itertools.combinations(players, 2):
        match = play_match(players[a], players[b], n_games, rules)
        result.points[a] += match.wins + 0.5 * match.draws
        result.points[b] += match.losses + 0.5 * match.draws
        result.pairings.append((a, b, match))
        if on_pairing is not None:
            on_pairing(result)
    return result


def play_match(
    player_a: Any,
    player_b: Any,
    n_games: int,
    rules: Rules | None = None,
    keep_games: bool = False,
    on_game: Callable[[int, GameRecord, bool], None] | None = None,
    result: MatchResult | None = None,
    record_search: bool = False,
) -> MatchResult:
    """``n_games`` games, A moving first in the even-numbered ones; results from A's side.

    ``on_game(index, record, a_moved_first)`` is called after each game (for progress bars). ``result``, when
    given, is filled in place, so a caller keeps the finished games if the match is interrupted.
    ``keep_games`` keeps each :class:`GameRecord` in ``result.games``; ``record_search`` adds the movers'
    search numbers to them (see :func:`play_game`).

    Raises:
        TypeError / ValueError: ``n_games`` is not an integer >= 1.
    """
    n_games = check_int("n_games", n_games, 1)
    result = MatchResult() if result is None else result
    for index in range(n_games):
        a_first = index % 2 == 0
        players = (player_a, player_b) if a_first else (player_b, player_a)
        record = play_game(players, rules, record_search=record_search)
        a_seat = 0 if a_first else 1
        result.add(0 if record.winner is None else 1 if record.winner == a_seat else -1, a_first)
        if keep_games:
            result.games.append(record)
        if on_game is not None:
            on_game(index, record, a_first)
    return result
