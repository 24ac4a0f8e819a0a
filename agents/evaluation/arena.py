"""Play games and matches between policies on the rules core (no environment needed)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from connect4_agents.evaluation.records import RESULTS, GameLog
from connect4_env.core import Board
from connect4_env.encoding import TrackedBoard
from connect4_env.policy import Forfeit, bind_policy
from connect4_env.rules import IllegalMoveError, Rules, as_column, check_rules
from connect4_env.validation import check_bool, check_int, check_number

__all__ = [
    "MatchResult",
    "play_game",
    "play_match",
    "wilson_interval",
    "counts_in_words",
]


def _labels(players: Sequence[Any], names: Sequence[str] | None) -> tuple[str, str]:
    """The two seats' labels for the record: ``names`` (checked), or each player's repr."""
    if names is None:
        return (repr(players[0]), repr(players[1]))
    if isinstance(names, str) or len(names) != 2 or not all(isinstance(name, str) for name in names):
        raise TypeError(f"names must be two strings (first mover first), got {names!r:.80}")
    return (names[0], names[1])


def check_agent(name: str, agent: object) -> Any:
    """``agent`` if it has an ``act`` method (a policy object, not a spec string).

    Raises:
        TypeError: it has none; a string gets a hint to build the agent from its spec.
    """
    if not callable(getattr(agent, "act", None)):
        hint = (
            f"; build one from a spec with connect4_env.policy.policy_from_spec({agent!r})"
            if isinstance(agent, str)
            else ""
        )
        raise TypeError(
            f"{name} must be an agent with act(observation, action_mask), got {agent!r:.80} "
            f"({type(agent).__name__}){hint}"
        )
    return agent


def check_callable(name: str, value: object) -> None:
    """Nothing if ``value`` is None or callable.

    Raises:
        TypeError: it is neither.
    """
    if value is not None and not callable(value):
        raise TypeError(f"{name} must be None or callable, got {value!r:.80} ({type(value).__name__})")


def play_game(
    players: Sequence[Any],
    rules: Rules | None = None,
    on_move: Callable[[Board, int, int], None] | None = None,
    seeds: Sequence[int | None] | None = None,
    record_search: bool = False,
    *,
    names: Sequence[str] | None = None,
) -> GameLog:
    """Play ``players[0]`` (moves first) against ``players[1]`` to the end.

    Each player is first bound to ``rules`` (default 6x7, four in a row) through its ``bind(rules)`` and reset
    through its ``reset()``, if it has them. ``on_move(board, player, column)`` is called after every move (for
    printing). A player whose ``act`` raises [`Forfeit`][connect4_env.policy.Forfeit] loses there: the game
    ends without its move, and the record's ``forfeit`` names the player and the reason (with the player's
    account of the failed move under ``record_search``). ``seeds``, when given, are passed to
    the players' ``reset(seed=...)`` (one per player), so the game can be replayed exactly. With
    ``record_search``, the record keeps each mover's ``move_info()`` after its move (MCTS visits and values,
    solver scores), for game records.

    Returns:
        The game as a `connect4_agents.evaluation.records.GameLog`, ready for
        `connect4_agents.evaluation.records.write_games`: its ``moves``, ``winner`` (0 = first
        mover, 1 = second, None = draw), ``final_board``, ``seeds`` (as given), ``search`` (one entry per
        move with ``record_search``, else None) and ``players``: ``names`` (the agents' specs, first mover
        first), or each player's repr when not given.

    Raises:
        IllegalMoveError: a player returned an illegal column (the message names the player and the column).
        TypeError: ``names`` is not two strings.
        ValueError: a player cannot play these rules.
    """
    if isinstance(players, (str, bytes)) or not isinstance(players, Sequence):
        raise TypeError(f"players must be a pair of agents (first mover first), got {players!r:.80}")
    if len(players) != 2:
        raise ValueError(f"play_game needs exactly two players, got {len(players)}")
    for index, player in enumerate(players):
        check_agent(f"players[{index}]", player)
    labels = _labels(players, names)
    rules = check_rules(rules, None) or Rules()
    if seeds is not None:
        if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence):
            raise TypeError(f"seeds must be None or one seed per player, got {seeds!r:.80}")
        if len(seeds) != 2:
            raise ValueError(f"play_game needs one seed per player, got {len(seeds)}")
    check_bool("record_search", record_search)
    check_callable("on_move", on_move)
    return _play(players, rules, labels, seeds, record_search, on_move)


def _play(
    players: Sequence[Any],
    rules: Rules,
    labels: tuple[str, str],
    seeds: Sequence[int | None] | None = None,
    record_search: bool = False,
    on_move: Callable[[Board, int, int], None] | None = None,
) -> GameLog:
    """`play_game` on checked arguments."""
    game = TrackedBoard(rules)
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
    forfeit: dict[str, Any] | None = None
    board = game.board
    while not board.is_terminal:
        mover = board.to_move
        try:
            action = players[mover].act(game.observation(mover), game.mask.copy())
        except Forfeit as given_up:
            forfeit = {
                "player": mover,
                "reason": given_up.reason,
                "info": given_up.info if record_search else None,
            }
            break
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
    if forfeit is not None:
        result = RESULTS[1 - forfeit["player"]]
    else:
        result = "draw" if board.winner is None else RESULTS[board.winner]
    return GameLog(
        rules.rows,
        rules.columns,
        rules.win_length,
        labels,
        tuple(moves),
        result,
        seeds=None if seeds is None else (seeds[0], seeds[1]),
        search=tuple(search) if record_search else None,
        forfeit=forfeit,
    )


def counts_in_words(wins: int, draws: int, losses: int) -> str:
    """``"3 wins, 1 draw, 0 losses"``: W/D/L counts as a match summary writes them."""
    return ", ".join(
        f"{count} {word if count == 1 else plural}"
        for count, word, plural in (
            (wins, "win", "wins"),
            (draws, "draw", "draws"),
            (losses, "loss", "losses"),
        )
    )


def wilson_interval(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson score interval for a proportion (``successes`` may count draws as halves).

    Raises:
        TypeError: ``n`` is not an integer, or ``successes`` or ``z`` is not a real number.
        ValueError: ``n`` is negative, ``successes`` is outside ``0..n`` (or NaN), or ``z`` is not above 0
            (or not finite).
    """
    n = check_int("n", n, 0)
    successes = check_number("successes", successes, 0, n)
    z = check_number("z", z, 0, above_minimum=True)
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class MatchResult:
    """Wins, draws and losses of player A against B, overall and by the side A played.

    ``names`` are A's and B's labels (the ``names`` given to `play_match`, else the agents' reprs), for
    ``str(result)``: ``"SB3Agent(...) vs RandomAgent(): 180 wins, 5 draws, 15 losses in 200 games (score
    0.91)"``, the score being A's points per game (win 1, draw 1/2).
    """

    wins: int = 0
    draws: int = 0
    losses: int = 0
    by_side: dict[str, list[int]] = field(default_factory=lambda: {"first": [0, 0, 0], "second": [0, 0, 0]})
    games: list[GameLog] = field(default_factory=list)
    names: tuple[str, str] | None = field(default=None, repr=False, compare=False)

    def __str__(self) -> str:
        players = f"{self.names[0]} vs {self.names[1]}: " if self.names is not None else ""
        counts = counts_in_words(self.wins, self.draws, self.losses)
        games = "1 game" if self.n_games == 1 else f"{self.n_games} games"
        return f"{players}{counts} in {games} (score {self.score:.2f})"

    @property
    def n_games(self) -> int:
        """The games counted: wins, draws and losses together."""
        return self.wins + self.draws + self.losses

    def add(self, a_result: int, a_first: bool) -> None:
        """Count one game: ``a_result`` 1 if A won, 0 for a draw, -1 if A lost; ``a_first`` if A moved first."""
        slot = {1: 0, 0: 1, -1: 2}[check_int("a_result", a_result, -1, 1)]
        a_first = check_bool("a_first", a_first)
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


def play_match(
    player_a: Any,
    player_b: Any,
    n_games: int,
    rules: Rules | None = None,
    keep_games: bool = False,
    on_game: Callable[[int, GameLog, bool], None] | None = None,
    result: MatchResult | None = None,
    record_search: bool = False,
    *,
    names: Sequence[str] | None = None,
) -> MatchResult:
    """``n_games`` games, A moving first in the even-numbered ones; results from A's side.

    ``on_game(index, record, a_moved_first)`` is called after each game (for progress bars). ``result``, when
    given, is filled in place, so a caller keeps the finished games if the match is interrupted.
    ``keep_games`` keeps each game's `connect4_agents.evaluation.records.GameLog` in
    ``result.games`` (numbered by ``game``; its ``players`` are ``names``, A's then B's, in seat order, or
    the agents' reprs); ``record_search`` adds the movers' search numbers to them (see `play_game`).

    Returns:
        ``result`` (a new `MatchResult` when not given) with the games counted.

    Raises:
        TypeError: ``n_games`` is not an integer, a player has no ``act`` method (a spec string included),
            ``names`` is not two strings, ``rules`` is not a [`Rules`][connect4_env.rules.Rules],
            ``keep_games`` or ``record_search`` is not a bool, ``on_game`` is not callable, or ``result`` is
            not a `MatchResult` (all checked before any game).
        ValueError: ``n_games`` is below 1, or a player cannot play ``rules``.
        IllegalMoveError: a player returned an illegal column (the games before it are counted in
            ``result``).
    """
    n_games = check_int("n_games", n_games, 1)
    check_agent("player_a", player_a)
    check_agent("player_b", player_b)
    labels = _labels((player_a, player_b), names)
    rules = check_rules(rules, None) or Rules()
    check_bool("keep_games", keep_games)
    check_bool("record_search", record_search)
    check_callable("on_game", on_game)
    if result is not None and not isinstance(result, MatchResult):
        raise TypeError(f"result must be None or a MatchResult, got {type(result).__name__}")
    result = MatchResult() if result is None else result
    if result.names is None:
        result.names = labels
    for index in range(n_games):
        a_first = index % 2 == 0
        players = (player_a, player_b) if a_first else (player_b, player_a)
        seats = labels if a_first else labels[::-1]
        record = dataclasses.replace(_play(players, rules, seats, record_search=record_search), game=index)
        a_seat = 0 if a_first else 1
        result.add(0 if record.winner is None else 1 if record.winner == a_seat else -1, a_first)
        if keep_games:
            result.games.append(record)
        if on_game is not None:
            on_game(index, record, a_first)
    return result
