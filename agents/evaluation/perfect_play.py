"""Strength against perfect play, the standard measure: W/D/L as first player, and plies survived as second.

The opponent is `PerfectPlayer`: the exact solver choosing uniformly at random among the columns with the best
score (the protocol of Thill's n-tuple anchor, whose perfect player is BitBully breaking ties the same way).
Moving first on 6x7, where the first player wins with perfect play, a perfect agent wins every game; the figure
tells how often an agent keeps that win. Moving second, every agent loses to perfect play on 6x7, and the
figure is how long it holds out: the mean number of plies its games last (a perfect second player's last 41,
the opponent's winning stone included).

`play_against_perfect` plays the games and returns a `PerfectPlayReport`; ``connect4 perfect`` is its command.
The solver's answers are cached by position across the games, so the openings that recur cost one search.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from connect4_agents._support.files import atomic_write_json
from connect4_agents._support.progress import progress_bar
from connect4_agents.base import RulesBound
from connect4_agents.evaluation.arena import check_agent, counts_in_words, play_game, wilson_interval
from connect4_agents.evaluation.records import GameLog, write_games
from connect4_agents.solver.agent import SolverAgent, plies_to_end
from connect4_env.core import Board, check_board
from connect4_env.policy import policy_from_spec
from connect4_env.rules import Rules, check_rules
from connect4_env.validation import check_bool, check_int, seeded_rng

__all__ = ["PerfectPlayer", "PerfectPlayReport", "play_against_perfect", "perfect_game_length", "MAX_GAMES"]

MAX_GAMES = 10_000
"""The most games per seat `play_against_perfect` plays (a typo such as 1e9 is refused, not started)."""


class PerfectPlayer(RulesBound):
    """Perfect play with random tie-breaks: a column drawn uniformly among those with the best exact score.

    The best columns of each position are kept (``cache``), across games, so a position met again costs a
    lookup.

    Args:
        rules: the game (None: the bound rules', else 6x7 with four in a row).
        seed: seed of the tie-breaking generator (None: fresh entropy); ``reset(seed)`` reseeds it.
        solver: the [`SolverAgent`][connect4_agents.solver.agent.SolverAgent] that scores the positions
            (None: a new one with its defaults, which use the opening book on 6x7 when installed).

    Raises:
        TypeError: ``rules`` is not a [`Rules`][connect4_env.rules.Rules] or ``solver`` not a
            `SolverAgent`.
        ValueError: ``seed`` is negative.
    """

    name = "perfect"

    def __init__(
        self, rules: Rules | None = None, *, seed: int | None = None, solver: SolverAgent | None = None
    ) -> None:
        self._fixed_rules = check_rules(rules, None)
        self.rules = self._fixed_rules
        if solver is not None and not isinstance(solver, SolverAgent):
            raise TypeError(f"solver must be None or a SolverAgent, got {type(solver).__name__}")
        self.solver = SolverAgent() if solver is None else solver
        self.rng = seeded_rng(seed)
        self.cache: dict[tuple[Rules, int, int], tuple[int, ...]] = {}
        self.lookups = 0

    def __repr__(self) -> str:
        return "PerfectPlayer()"

    def reset(self, seed: int | None = None) -> None:
        """Start a game; a seed reseeds the tie-breaking (the cache is kept: its entries stay true).

        Raises:
            TypeError: ``seed`` is not an integer. ValueError: ``seed`` is negative.
        """
        if seed is not None:
            self.rng = seeded_rng(seed)

    def best_columns(self, board: Board) -> tuple[int, ...]:
        """The columns with the best exact score on ``board``, in increasing order (cached).

        Raises:
            TypeError: ``board`` is not a [`Board`][connect4_env.core.Board].
            ValueError: the game is over.
            SolverBudgetExceeded: the position needs more than the solver's node budget.
            MissingExtraError: an early 6x7 position without the opening book.
        """
        board = check_board(board)
        key = (board.rules, board.stones[0], board.stones[1])
        self.lookups += 1
        best = self.cache.get(key)
        if best is None:
            best = tuple(sorted(self.solver.best_columns(board, every=True)))
            self.cache[key] = best
        return best

    def choose(self, board: Board) -> int:
        """A column drawn uniformly from `best_columns` of ``board``.

        Raises:
            TypeError: ``board`` is not a [`Board`][connect4_env.core.Board] (as `best_columns`).
            ValueError: the game is over.
            SolverBudgetExceeded: the position needs more than the solver's node budget.
            MissingExtraError: an early 6x7 position without the opening book.
        """
        best = self.best_columns(board)
        return best[int(self.rng.integers(len(best)))] if len(best) > 1 else best[0]

    def act(self, observation: Any, action_mask: Any = None) -> int:
        """The policy's ``act``: `choose` on the position ``observation`` shows.

        Raises:
            ValueError: the planes or the mask do not fit the position or the bound rules; as `best_columns`.
        """
        board, _ = self.read_board(observation, action_mask)
        return self.choose(board)


def perfect_game_length(rules: Rules, solver: SolverAgent | None = None) -> tuple[int, int]:
    """How a game between two perfect players ends: ``(winner, plies)``, winner 0 (first player), 1 or -1
    for a draw, and the plies it lasts (the winning stone included).

    Raises:
        TypeError: ``rules`` is not a [`Rules`][connect4_env.rules.Rules].
        SolverBudgetExceeded: the board is too large to solve within the solver's node budget.
        MissingExtraError: 6x7 without the opening book.
    """
    rules = check_rules(rules)
    score = (SolverAgent() if solver is None else solver).score(Board(rules))
    winner = -1 if score == 0 else 0 if score > 0 else 1
    return winner, plies_to_end(score, 0, rules.cells)


def _counts(games: list[GameLog], seat: int) -> tuple[int, int, int]:
    wins = sum(1 for game in games if game.winner == seat)
    losses = sum(1 for game in games if game.winner == 1 - seat)
    return wins, len(games) - wins - losses, losses


@dataclass
class PerfectPlayReport:
    """An agent's games against perfect play, by seat.

    ``first`` and ``second`` are the games it played as first and as second player (their records, the agent
    named ``agent``, the opponent ``"perfect"``); ``perfect`` is how a game between perfect players ends
    (`perfect_game_length`), None when it was not computed.
    """

    agent: str
    rows: int
    columns: int
    win_length: int
    seed: int
    first: list[GameLog] = field(default_factory=list)
    second: list[GameLog] = field(default_factory=list)
    perfect: tuple[int, int] | None = None

    @property
    def as_first(self) -> tuple[int, int, int]:
        """Wins, draws and losses as first player."""
        return _counts(self.first, 0)

    @property
    def as_second(self) -> tuple[int, int, int]:
        """Wins, draws and losses as second player."""
        return _counts(self.second, 1)

    @property
    def plies_survived(self) -> float:
        """The mean number of plies of the games played as second player (NaN with none)."""
        return float(np.mean([len(g.moves) for g in self.second])) if self.second else math.nan

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON data: the counts, rates with 95 % Wilson intervals, the plies of each
        second-player game and their mean, and the perfect game (``perfect_winner``, ``perfect_plies``).
        """

        def block(counts: tuple[int, int, int]) -> dict[str, Any]:
            wins, draws, losses = counts
            games = wins + draws + losses
            return {
                "games": games,
                "wins": wins,
                "draws": draws,
                "losses": losses,
                "win_rate": wins / games if games else None,
                "win_rate_ci95": list(wilson_interval(wins, games)),
            }

        second = block(self.as_second)
        second["plies"] = [len(g.moves) for g in self.second]
        second["mean_plies"] = None if not self.second else round(self.plies_survived, 3)
        return {
            "agent": self.agent,
            "rows": self.rows,
            "columns": self.columns,
            "win_length": self.win_length,
            "seed": self.seed,
            "as_first": block(self.as_first),
            "as_second": second,
            "perfect_winner": None if self.perfect is None else self.perfect[0],
            "perfect_plies": None if self.perfect is None else self.perfect[1],
        }

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write `to_dict` as JSON, atomically.

        Raises:
            OSError: the file cannot be written.
        """
        atomic_write_json(path, self.to_dict())

    def table(self) -> str:
        """The report in a few lines of text.

        Such as::

        alphazero against perfect play on 6x7 (ties broken at random, seed 0)
          as first player:  43 wins, 0 draws, 7 losses in 50 games (win rate 0.86, 95% CI 0.74-0.93)
          as second player: 0 wins, 0 draws, 50 losses in 50 games; survives 30.4 plies on average
                            (a perfect player: 41)
        """
        lines = [
            f"{self.agent} against perfect play on {self.rows}x{self.columns}"
            + ("" if self.win_length == 4 else f" with {self.win_length} in a row")
            + f" (ties broken at random, seed {self.seed})"
        ]
        if self.first:
            wins, draws, losses = self.as_first
            low, high = wilson_interval(wins, len(self.first))
            lines.append(
                f"  as first player:  {counts_in_words(wins, draws, losses)} in {len(self.first)} games "
                f"(win rate {wins / len(self.first):.2f}, 95% CI {low:.2f}-{high:.2f})"
            )
        if self.second:
            perfect = ""
            if self.perfect is not None:
                perfect = f" (a perfect player: {self.perfect[1]})"
            lines.append(
                f"  as second player: {counts_in_words(*self.as_second)} in {len(self.second)} games; "
                f"survives {self.plies_survived:.1f} plies on average{perfect}"
            )
        return "\n".join(lines)


def play_against_perfect(
    agent: Any,
    *,
    first_games: int = 50,
    second_games: int = 50,
    rules: Rules | None = None,
    seed: int = 0,
    games_out: str | os.PathLike[str] | None = None,
    on_game: Callable[[GameLog, bool], None] | None = None,
    progress: bool = False,
    perfect: PerfectPlayer | None = None,
) -> PerfectPlayReport:
    """Play ``agent`` against `PerfectPlayer`: ``first_games`` with the agent moving first, then
    ``second_games`` with it moving second.

    Game ``i`` (counted over both seats) resets the agent with seed ``seed + 2 i`` and the perfect player with
    ``seed + 2 i + 1``, and the records keep both, so any game can be replayed.

    Args:
        agent: an agent spec (``"mcts:100"``, ``"alphazero:0"``, ``"shield:random"``), built with ``seed``, or
            a policy object (named by its repr).
        first_games: games with the agent moving first (0 or more).
        second_games: games with the agent moving second (0 or more).
        rules: the board (default 6x7, four in a row).
        seed: seeds the agent and the perfect player (see above).
        games_out: write each game's record here as it ends (JSON lines, `connect4 replay` reads them).
        on_game: called with each game's record and whether the agent moved first.
        progress: a progress bar.
        perfect: the perfect player to use (None: a new one); pass one to share its cache between agents.

    Returns:
        The report, with the game between perfect players (`perfect_game_length`) when it can be solved.

    Raises:
        TypeError: a setting of the wrong type, or an agent that is neither a spec nor has ``act``.
        ValueError: a count out of range (both 0 included), an unknown spec, an agent that cannot play
            ``rules``.
        SolverBudgetExceeded: a position the solver cannot solve within its node budget (a large board).
        MissingExtraError: 6x7 without the opening book (the ``book`` extra).
    """
    first_games = check_int("first_games", first_games, 0, MAX_GAMES)
    second_games = check_int("second_games", second_games, 0, MAX_GAMES)
    if first_games + second_games == 0:
        raise ValueError("first_games and second_games are both 0: there is no game to play")
    rules = check_rules(rules, None) or Rules()
    seed = check_int("seed", seed, 0)
    progress = check_bool("progress", progress)
    if on_game is not None and not callable(on_game):
        raise TypeError(f"on_game must be None or callable, got {type(on_game).__name__}")
    if perfect is not None and not isinstance(perfect, PerfectPlayer):
        raise TypeError(f"perfect must be None or a PerfectPlayer, got {type(perfect).__name__}")
    if isinstance(agent, str):
        player, name = policy_from_spec(agent, seed=seed, rules=rules), agent
    else:
        player, name = check_agent("agent", agent), repr(agent)
    perfect = PerfectPlayer(rules) if perfect is None else perfect
    report = PerfectPlayReport(name, rules.rows, rules.columns, rules.win_length, seed)
    bar = progress_bar(first_games + second_games, "games", unit="game") if progress else None
    try:
        for index in range(first_games + second_games):
            agent_first = index < first_games
            seeds = (seed + 2 * index, seed + 2 * index + 1)
            if agent_first:
                record = play_game((player, perfect), rules, seeds=seeds, names=(name, "perfect"))
            else:
                seeds = seeds[::-1]
                record = play_game((perfect, player), rules, seeds=seeds, names=("perfect", name))
            record = dataclasses.replace(record, seed=seed, game=index)
            (report.first if agent_first else report.second).append(record)
            if games_out is not None:
                write_games(games_out, [record], append=index > 0)
            if on_game is not None:
                on_game(record, agent_first)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    report.perfect = perfect_game_length(rules, perfect.solver)
    return report
