"""A player graded by perfect play (one job: that report, from its games and the test sets, to JSON and a picture).

For every move the player made in its games, the solver's verdict (`connect4_agents.ui.replay.move_verdicts`):
``best`` (the best score), ``keeps`` (not the best score, the same outcome) or ``mistake`` (a worse outcome: a
win or a draw given up, a *blunder*). The report gives, each with its 95 % Wilson interval:

- the share of moves that keep the best outcome class (``best`` or ``keeps``), over all judged moves and over
  the *non-trivial* positions only (some legal move there loses the outcome class: the figure that tells
  players apart, as in `connect4_agents.evaluation.accuracy`);
- the blunder rate (``mistake`` over judged moves), with the blunders that gave up a win and a draw counted;
- for a text policy (moves recorded with ``search`` entries of kind ``"text"``): the illegal-answer rate
  (rejected tries over all tries, those of a forfeited move included) and the share of moves the fallback
  played (a fallback's move is not the player's: it is left out of every verdict rate, in games and on the
  test sets alike);
- the forfeit rate per game, and the wins, draws and losses with the score;
- per test set, the share of non-trivial positions where the player's move keeps the best outcome class
  (`connect4_agents.evaluation.accuracy.evaluate_agents`).

Moves the solver cannot judge (a board `connect4_agents.ui.replay.can_judge` refuses, a position over its
node budget) are counted apart and left out of every verdict rate.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from connect4_agents._support.figures import pyplot, save_figure
from connect4_agents._support.files import atomic_write_json, parse_json, read_text_limited
from connect4_agents._support.progress import progress_bar
from connect4_agents.evaluation.accuracy import evaluate_agents
from connect4_agents.evaluation.arena import (
    MatchResult,
    check_agent,
    counts_in_words,
    play_match,
    wilson_interval,
)
from connect4_agents.evaluation.records import GameLog, game_log, match_logs
from connect4_agents.evaluation.test_sets import TEST_SET_SPECS, select_test_sets
from connect4_agents.solver.agent import SolverAgent
from connect4_agents.ui.replay import VERDICT_NODES, can_judge, move_verdicts
from connect4_env.policy import policy_from_spec
from connect4_env.rules import Rules, check_rules
from connect4_env.validation import check_bool, check_int

__all__ = [
    "Rate",
    "GameGrade",
    "SetGrade",
    "GradeReport",
    "grade_games",
    "grade_test_sets",
    "grade_match",
    "default_sets",
    "read_report",
    "MAX_GAMES",
    "FORMAT",
    "VERSION",
]

FORMAT = "connect4-grade"
VERSION = 1
MAX_GAMES = 1000  # games per grading run: each is tens of model calls for a language model
MAX_REPORT_BYTES = 16 << 20  # a report file larger than this is refused


def _sign(score: int) -> int:
    return (score > 0) - (score < 0)


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

    @property
    def score(self) -> Rate:
        """Points per game (win 1, draw 1/2) with their interval."""
        return Rate(self.wins + 0.5 * self.draws, self.games)

    def to_dict(self) -> dict[str, Any]:
        """The grade as a JSON-ready dict: the counts, each rate as `Rate.to_dict`, ``score`` and the
        verdicts.
        """
        data: dict[str, Any] = {"player": self.player}
        data.update({name: getattr(self, name) for name in _COUNTS})
        data["score"] = self.score.to_dict()
        data.update({name: getattr(self, name).to_dict() for name in _RATES})
        data["verdicts"] = [list(game) for game in self.verdicts]
        return data

    @classmethod
    def from_dict(cls, data: Any) -> GameGrade:
        """Read `to_dict`'s form back.

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
        return cls(
            player=data["player"],
            **counts,
            **rates,
            verdicts=tuple(tuple(game) for game in verdicts),
        )


@dataclass(frozen=True)
class SetGrade:
    """A player's moves on one test set's positions.

    Attributes:
        best_class: positions where the move kept the best outcome class, over all positions.
        nontrivial_best_class: the same over the non-trivial positions (the figure that tells players apart).
        forfeits: positions the player gave up (counted as lost in both rates).
        fallbacks: positions its fallback played (a text policy's random column): in neither rate.
    """

    best_class: Rate
    nontrivial_best_class: Rate
    forfeits: int = 0
    fallbacks: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Both rates as `Rate.to_dict`, ``forfeits`` and ``fallbacks``."""
        return {
            "best_class": self.best_class.to_dict(),
            "nontrivial_best_class": self.nontrivial_best_class.to_dict(),
            "forfeits": self.forfeits,
            "fallbacks": self.fallbacks,
        }

    @classmethod
    def from_dict(cls, data: Any, what: str) -> SetGrade:
        """Read `to_dict`'s form back.

        Raises:
            ValueError: not an object of two rates and counts of forfeits and fallbacks (absent: 0).
        """
        if not isinstance(data, dict):
            raise ValueError(f"{what} must be an object, got {data!r:.80}")
        counts = []
        for name in ("forfeits", "fallbacks"):
            count = data.get(name, 0) if name == "fallbacks" else data.get(name)
            if type(count) is not int or count < 0:
                raise ValueError(f"{what}.{name} must be an integer >= 0, got {count!r:.40}")
            counts.append(count)
        return cls(
            Rate.from_dict(data.get("best_class"), f"{what}.best_class"),
            Rate.from_dict(data.get("nontrivial_best_class"), f"{what}.nontrivial_best_class"),
            *counts,
        )


# -- grading games ------------------------------------------------------------------------------------------
def _forfeit(game: GameLog, index: int) -> dict[str, Any] | None:
    """The game's forfeit record (its ``forfeit`` field), checked: a record built by hand is not."""
    forfeit = game.forfeit
    if forfeit is None:
        return None
    if (
        not isinstance(forfeit, dict)
        or forfeit.get("player") not in (0, 1)
        or type(forfeit["player"]) is not int
    ):
        raise ValueError(f"game {index}: forfeit must be an object with player 0 or 1, got {forfeit!r:.80}")
    return forfeit


def _tries(entry: dict[str, Any], where: str) -> tuple[int, int]:
    """``(tries, rejected)`` of a text policy's move record."""
    tries = entry.get("tries")
    if not isinstance(tries, list) or not all(isinstance(attempt, dict) for attempt in tries):
        raise ValueError(f"{where}: a text record's tries must be a list of objects, got {tries!r:.80}")
    rejected = 0
    for attempt in tries:
        column, error = attempt.get("column"), attempt.get("error")
        if not (column is None or type(column) is int) or not (error is None or isinstance(error, str)):
            raise ValueError(
                f"{where}: a try's column must be an integer or null and its error a str or null"
            )
        rejected += column is None or error is not None
    return len(tries), rejected


def _is_text(entry: Any) -> TypeGuard[dict[str, Any]]:
    return isinstance(entry, dict) and entry.get("kind") == "text"


def _check_games(games: object, player: object, solver: object) -> list[GameLog]:
    if isinstance(games, (str, bytes)) or not isinstance(games, Sequence):
        raise TypeError(f"games must be a list of GameLog records, got {type(games).__name__}")
    if not isinstance(player, str):
        raise TypeError(f"player must be a str (a name in the records' players), got {player!r:.80}")
    if solver is not None and not isinstance(solver, SolverAgent):
        raise TypeError(f"solver must be None or a SolverAgent, got {type(solver).__name__}")
    games = list(games)
    if not games:
        raise ValueError("there are no games to grade")
    for index, game in enumerate(games):
        if not isinstance(game, GameLog):
            raise TypeError(f"game {index} is a {type(game).__name__}, not a GameLog")
        if player not in game.players:
            raise ValueError(
                f"game {index} was played by {list(game.players)}, not by {player!r}; grade only the games "
                f"it played: [g for g in games if {player!r} in g.players]"
            )
    return games


def grade_games(games: Sequence[GameLog], player: str, solver: SolverAgent | None = None) -> GameGrade:
    """Grade every move ``player`` made in ``games`` by perfect play (see the module docstring).

    Args:
        games: game records (`connect4_agents.evaluation.records.GameLog`), each played by ``player``.
        player: the name to grade, as the records' ``players`` spell it (a game where both seats have it
            grades both).
        solver: the solver that judges every move (its table shared by all games); None: one per board
            with the replay's node budget, on the boards `connect4_agents.ui.replay.can_judge` accepts (on
            another board no move is judged).

    Returns:
        The grade.

    Raises:
        TypeError: ``games`` is not a list of `GameLog`, ``player`` is not a str, or ``solver`` is neither
            None nor a `SolverAgent`.
        ValueError: no games, a game ``player`` did not play, a move into a full column, or a malformed
            text record or forfeit.
    """
    games = _check_games(games, player, solver)
    solvers: dict[Rules, SolverAgent] = {}
    counts = dict.fromkeys(
        ("judged", "best", "keeps", "mistake", "from_win", "from_draw", "nontrivial", "nontrivial_kept"), 0
    )
    results = [0, 0, 0]  # wins, draws, losses
    seats_held = moves = unjudged = text_moves = tries = rejected = fallbacks = forfeits = 0
    verdicts: list[tuple[str | None, ...]] = []
    for index, game in enumerate(games):
        seats = [seat for seat in (0, 1) if game.players[seat] == player]
        judge = solver
        if judge is None and can_judge(game.rules):
            judge = solvers.setdefault(game.rules, SolverAgent(node_budget=VERDICT_NODES))
        judged = move_verdicts(game, judge) if judge is not None else [None] * len(game.moves)
        mine: list[str | None] = []
        for ply, verdict in enumerate(judged):
            if ply % 2 not in seats:
                continue
            moves += 1
            entry = game.search[ply] if game.search is not None else None
            fell_back = False
            if _is_text(entry):
                text_moves += 1
                made, refused = _tries(entry, f"game {index}, move {ply}")
                tries, rejected = tries + made, rejected + refused
                fell_back = entry.get("outcome") == "fallback"
                fallbacks += fell_back
            if fell_back:  # the fallback's move, not the player's: in no verdict rate
                mine.append(None)
                continue
            if verdict is None:
                unjudged += 1
                mine.append(None)
                continue
            kind = verdict["verdict"]
            mine.append(kind)
            scores = verdict["scores"]
            best = _sign(max(s for s in scores if s is not None))
            counts["judged"] += 1
            counts[kind] += 1
            if kind == "mistake":
                counts["from_win" if best > 0 else "from_draw"] += 1
            if any(s is not None and _sign(s) < best for s in scores):
                counts["nontrivial"] += 1
                counts["nontrivial_kept"] += kind != "mistake"
        verdicts.append(tuple(mine))
        forfeit = _forfeit(game, index)
        if forfeit is not None and forfeit["player"] in seats:
            forfeits += 1
            if _is_text(forfeit.get("info")):
                made, refused = _tries(forfeit["info"], f"game {index}, forfeit")
                tries, rejected = tries + made, rejected + refused
        for seat in seats:
            seats_held += 1
            results[1 if game.winner is None else 0 if game.winner == seat else 2] += 1
    judged_moves = counts["judged"]
    return GameGrade(
        player=player,
        games=seats_held,
        wins=results[0],
        draws=results[1],
        losses=results[2],
        moves=moves,
        unjudged=unjudged,
        best_class=Rate(counts["best"] + counts["keeps"], judged_moves),
        exact=Rate(counts["best"], judged_moves),
        blunders=Rate(counts["mistake"], judged_moves),
        blunders_from_win=counts["from_win"],
        blunders_from_draw=counts["from_draw"],
        nontrivial_best_class=Rate(counts["nontrivial_kept"], counts["nontrivial"]),
        text_moves=text_moves,
        illegal_answers=Rate(rejected, tries),
        fallbacks=Rate(fallbacks, text_moves),
        forfeits=Rate(forfeits, seats_held),
        verdicts=tuple(verdicts),
    )


# -- grading on the test sets -------------------------------------------------------------------------------
def default_sets(rules: Rules) -> tuple[str, ...]:
    """The test sets of the board ``rules``: ``("6x7",)`` (the six 6x7 sets) for 6x7 with four in a row, the
    shipped set of a smaller board (``("4x5",)``, ``("5x5-w3",)``), none for a board without one.

    Raises:
        TypeError: ``rules`` is not a [`Rules`][connect4_env.rules.Rules].
    """
    rules = check_rules(rules)
    if rules == Rules():
        return ("6x7",)
    name = f"{rules.rows}x{rules.columns}" + ("" if rules.win_length == 4 else f"-w{rules.win_length}")
    return (name,) if name in TEST_SET_SPECS else ()


def grade_test_sets(
    agent: Any,
    sets: Sequence[str],
    *,
    sample: int | None = None,
    seed: int = 0,
    workers: int | None = None,
    progress: bool = True,
) -> dict[str, SetGrade]:
    """The agent's move in the positions of ``sets``, graded per set (through
    [`evaluate_agents`][connect4_agents.evaluation.accuracy.evaluate_agents], on the sets it can play). A
    position the agent forfeits counts as lost; one its fallback played is counted apart, in no rate.

    Args:
        agent: an agent spec or a policy object.
        sets: set names, ``"6x7"`` or ``"all"`` (see
            `connect4_agents.evaluation.test_sets.select_test_sets`).
        sample: only this many positions, drawn with ``seed`` from all the sets' positions (None: all).
        seed: seeds the agent per position and draws the sample.
        workers: worker processes (None: one per CPU; 1 plays here).
        progress: a progress bar over the positions.

    Returns:
        Set name -> its grade.

    Raises:
        TypeError: as `evaluate_agents`.
        ValueError: as `evaluate_agents` (an unknown set, a spec that cannot play any of them ...).
    """
    (report,) = evaluate_agents(
        [agent], list(sets), sample=sample, seed=seed, workers=workers, progress=progress
    )
    return {
        name: SetGrade(
            Rate(part.optimal_class, part.n),
            Rate(part.nontrivial_optimal_class, part.nontrivial),
            part.forfeits,
            part.fallbacks,
        )
        for name, part in report.per_set.items()
    }


# -- the report ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GradeReport:
    """One player graded by perfect play: its games and the test sets.

    Attributes:
        player: the player's name (its spec).
        opponent: the opponent's name (None when the games came from elsewhere).
        rows: board rows of the games.
        columns: board columns of the games.
        win_length: stones in a line to win.
        seed: the run's seed (None if none).
        games: the grade of its games.
        sets: set name -> the grade on that test set (empty when none was played).
    """

    player: str
    opponent: str | None
    rows: int
    columns: int
    win_length: int
    seed: int | None
    games: GameGrade
    sets: dict[str, SetGrade] = field(default_factory=dict)

    @property
    def rules(self) -> Rules:
        """The games' board."""
        return Rules(self.rows, self.columns, self.win_length)

    def to_dict(self) -> dict[str, Any]:
        """The report as a JSON-ready dict (``format`` ``"connect4-grade"``, ``version`` 1), what
        [`from_dict`][connect4_agents.evaluation.grading.GradeReport.from_dict] reads.
        """
        return {
            "format": FORMAT,
            "version": VERSION,
            "player": self.player,
            "opponent": self.opponent,
            "rows": self.rows,
            "columns": self.columns,
            "win_length": self.win_length,
            "seed": self.seed,
            "games": self.games.to_dict(),
            "sets": {name: grade.to_dict() for name, grade in self.sets.items()},
        }

    @classmethod
    def from_dict(cls, data: Any) -> GradeReport:
        """Build and check a report from a decoded JSON object.

        Raises:
            ValueError: not an object, another format or version, or a field missing or of the wrong kind.
        """
        if not isinstance(data, dict):
            raise ValueError(f"a grade report must be a JSON object, got {type(data).__name__}")
        if data.get("format") != FORMAT or type(data.get("version")) is not int or data["version"] != VERSION:
            raise ValueError(
                f"not a grade report of this version: format {data.get('format')!r:.40}, version "
                f"{data.get('version')!r:.20} (expected {FORMAT!r}, {VERSION})"
            )
        if not isinstance(data.get("player"), str):
            raise ValueError(f"player must be a str, got {data.get('player')!r:.40}")
        opponent = data.get("opponent")
        if opponent is not None and not isinstance(opponent, str):
            raise ValueError(f"opponent must be a str or null, got {opponent!r:.40}")
        try:
            rules = Rules(data.get("rows"), data.get("columns"), data.get("win_length"))  # type: ignore[arg-type]
        except TypeError as error:
            raise ValueError(str(error)) from None
        seed = data.get("seed")
        if seed is not None and type(seed) is not int:
            raise ValueError(f"seed must be an integer or null, got {seed!r:.40}")
        sets = data.get("sets", {})
        if not isinstance(sets, dict):
            raise ValueError(f"sets must be an object, got {sets!r:.80}")
        return cls(
            data["player"],
            opponent,
            rules.rows,
            rules.columns,
            rules.win_length,
            seed,
            GameGrade.from_dict(data.get("games")),
            {str(name): SetGrade.from_dict(grade, f"sets.{name}") for name, grade in sets.items()},
        )

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Write the report as indented JSON, atomically; returns the path."""
        return atomic_write_json(path, self.to_dict())

    def bars(self) -> list[tuple[str, Rate, str]]:
        """The picture's bars: ``(label, rate, kind)``, kind ``"share"`` (higher is better) or ``"rate"``
        (lower is better).
        """
        games = self.games
        bars = [
            ("best class\nin games", games.best_class, "share"),
            ("best class\nin games,\nnon-trivial", games.nontrivial_best_class, "share"),
        ]
        bars += [
            (_set_label(name), grade.nontrivial_best_class, "share") for name, grade in self.sets.items()
        ]
        bars += [
            ("blunders", games.blunders, "rate"),
            ("illegal\nanswers", games.illegal_answers, "rate"),
            ("forfeits", games.forfeits, "rate"),
        ]
        return bars

    def plot(self, path: str | os.PathLike[str]) -> Path:
        """Bars with 95 % interval whiskers (see `bars`), saved to ``path`` (png, svg, pdf or jpg by its
        suffix); a figure with nothing to rate shows ``n/a``. Returns the path.

        Raises:
            MissingExtraError: matplotlib (the ``train`` extra) is not installed.
        """
        plt = pyplot()
        bars = self.bars()
        figure, axis = plt.subplots(figsize=(max(6.0, 0.95 * len(bars) + 1.5), 4.2))
        colours = {"share": "#3a7bbf", "rate": "#c8553d"}
        for x, (_, rate, kind) in enumerate(bars):
            if rate.rate is None:
                axis.text(x, 0.02, "n/a", ha="center", va="bottom", fontsize=8, color="grey")
                continue
            low, high = rate.ci95
            axis.bar(
                x,
                rate.rate,
                width=0.7,
                color=colours[kind],
                yerr=[[rate.rate - low], [high - rate.rate]],
                capsize=3,
            )
            axis.text(x, min(high + 0.02, 1.02), f"n={rate.n:g}", ha="center", va="bottom", fontsize=7)
        axis.set_xticks(range(len(bars)), [label for label, _, _ in bars], fontsize=7)
        axis.set_ylim(0, 1.3)
        axis.set_ylabel("share, with 95 % interval")
        against = f" against {self.opponent}" if self.opponent is not None else ""
        axis.set_title(
            f"{self.player}{against}: {self.games.games} games on {self.rows}x{self.columns}", fontsize=9
        )
        axis.grid(axis="y", alpha=0.3)
        handles = [plt.Rectangle((0, 0), 1, 1, color=colours[k]) for k in ("share", "rate")]
        axis.legend(
            handles,
            ["kept the best outcome (higher is better)", "lower is better"],
            fontsize=7,
            loc="upper right",
            ncol=2,
        )
        figure.tight_layout()
        return save_figure(figure, path, dpi=110)

    def table(self) -> str:
        """The report as a few lines of text: results, then each figure with its count and interval."""
        games = self.games
        against = f" against {self.opponent}" if self.opponent is not None else ""
        score = games.score
        shown = "-" if score.rate is None else f"{score.rate:.2f} ({score.ci95[0]:.2f}-{score.ci95[1]:.2f})"
        results = counts_in_words(games.wins, games.draws, games.losses)
        lines = [
            f"{self.player}{against}: {games.games} games on {self.rows}x{self.columns}, {results} "
            f"(score {shown})",
            f"  {'':38} {'n':>6}  share (95% interval)",
        ]

        def row(label: str, rate: Rate) -> None:
            lines.append(f"  {label:38} {rate.n:>6}  {rate}")

        row("moves keeping the best outcome", games.best_class)
        row("  in non-trivial positions", games.nontrivial_best_class)
        row("moves with the best score", games.exact)
        row("blunders (a win or draw given up)", games.blunders)
        lines.append(
            f"  {'  of a win / of a draw':38} {'':>6}  {games.blunders_from_win} / {games.blunders_from_draw}"
        )
        lines.append(f"  {'moves not judged':38} {games.unjudged:>6}")
        row("illegal answers (rejected tries)", games.illegal_answers)
        row("moves played by the fallback", games.fallbacks)
        row("forfeits (per game)", games.forfeits)
        if self.sets:
            lines.append("  test sets, non-trivial positions: moves keeping the best outcome")
            for name, grade in self.sets.items():
                row(f"  {name}", grade.nontrivial_best_class)
                if grade.forfeits:
                    lines[-1] += f"  ({grade.forfeits} positions forfeited)"
                if grade.fallbacks:
                    lines[-1] += f"  ({grade.fallbacks} played by the fallback, not rated)"
        return "\n".join(lines)


def _set_label(name: str) -> str:
    """A set's bar label on lines short enough to sit side by side: ``6x7`` / ``middle-medium`` /
    ``non-trivial``.
    """
    board, _, rest = name.partition("-")
    return "\n".join(part for part in (board, rest, "non-trivial") if part)


def read_report(path: str | os.PathLike[str]) -> GradeReport:
    """A report written by [`GradeReport.write`][connect4_agents.evaluation.grading.GradeReport.write].

    Raises:
        ValueError: not a report (see `GradeReport.from_dict`), not JSON, or over 16 MB.
        OSError: the file cannot be read.
    """
    return GradeReport.from_dict(
        parse_json(read_text_limited(path, MAX_REPORT_BYTES, "grade report"), str(path))
    )


# -- a player's games and sets, graded -----------------------------------------------------------------------
def _player(agent: Any, name: str, seed: int, rules: Rules) -> tuple[Any, str]:
    """The policy and its name: a spec built with ``seed`` and bound to ``rules``, or an object as it is."""
    if isinstance(agent, str):
        return policy_from_spec(agent, seed=seed, rules=rules), agent
    return check_agent(name, agent), repr(agent)


def grade_match(
    player: Any,
    opponent: Any = "mcts:100",
    *,
    games: int = 20,
    rules: Rules | None = None,
    sets: Sequence[str] | None = None,
    sample: int | None = None,
    seed: int = 0,
    workers: int | None = None,
    progress: bool = True,
    games_out: str | os.PathLike[str] | None = None,
    on_games: Callable[[MatchResult], None] | None = None,
) -> GradeReport:
    """Play ``player`` against ``opponent`` with paired seats, grade its moves, and grade it on test sets.

    Args:
        player: an agent spec (``"mcts:10"``, ``"text:mypkg.llm:answer"``), built with ``seed``, or a policy
            object (named by its repr).
        opponent: a spec (built with ``seed + 1``) or a policy object.
        games: games to play, an even number from 2 to `MAX_GAMES`: the player moves first in half of them
            (see `connect4_agents.evaluation.arena.play_match`).
        rules: the board (default 6x7, four in a row).
        sets: test sets to grade the player on (None: `default_sets` of the board; empty: none).
        sample: grade only this many test-set positions, drawn with ``seed`` (None: all).
        seed: seeds the players and the test-set positions.
        workers: worker processes for the test sets (None: one per CPU; 1 plays here).
        progress: progress bars.
        games_out: write the game records (search entries, so a text policy's prompts and answers, included)
            here, one JSON line each as the game ends (appended and flushed to disk: a run killed after
            hours of model calls keeps every finished game); the file is emptied first.
        on_games: called with the match result after the games, before the test sets (to print it).

    Returns:
        The report (its ``opponent`` the opponent's name, its ``sets`` empty when none was graded).

    Raises:
        TypeError: a setting of the wrong type, or a player neither a spec nor an object with ``act``.
        ValueError: an odd ``games`` or one out of range, an unknown spec or test set, a player that cannot
            play ``rules``.
        IllegalMoveError: a player chose an illegal column (the games before it are written to
            ``games_out``).
    """
    games = check_int("games", games, 2, MAX_GAMES)
    if games % 2:
        raise ValueError(f"games={games}: paired seats need an even number of games (each seat in half)")
    rules = check_rules(rules, None) or Rules()
    seed = check_int("seed", seed, 0)
    progress = check_bool("progress", progress)
    if sets is not None and (isinstance(sets, (str, bytes)) or not isinstance(sets, Sequence)):
        raise TypeError(f"sets must be None or a list of test set names, got {sets!r:.80}")
    chosen = default_sets(rules) if sets is None else tuple(sets)
    if chosen:  # an unknown set is refused before any game is played
        select_test_sets(list(chosen))
    if sample is not None:
        check_int("sample", sample, 1)
    agent, name = _player(player, "player", seed, rules)
    rival, rival_name = _player(opponent, "opponent", seed + 1, rules)
    names = (name, rival_name)
    result = MatchResult()
    # opened before any game is played, so an unwritable path costs no model call
    stream = None if games_out is None else open(games_out, "w", encoding="utf-8")  # noqa: SIM115
    bar = progress_bar(games, "games", unit="game") if progress else None

    def game_over(index: int, record: GameLog, a_first: bool) -> None:
        if bar is not None:
            bar.update(1)
        if stream is not None:  # as match_logs labels it, and as write_games writes it
            log = game_log(record, names if a_first else names[::-1], rules, seed=seed, game=index)
            stream.write(json.dumps(log.to_dict(), separators=(",", ":")) + "\n")
            stream.flush()
            os.fsync(stream.fileno())

    try:
        play_match(
            agent,
            rival,
            games,
            rules,
            keep_games=True,
            record_search=True,
            names=names,
            result=result,
            on_game=game_over,
        )
    finally:
        if bar is not None:
            bar.close()
        if stream is not None:
            stream.close()
    logs = match_logs(result, names, rules, seed=seed)
    if on_games is not None:
        on_games(result)
    graded = grade_games(logs, name)
    set_grades = (
        grade_test_sets(player, chosen, sample=sample, seed=seed, workers=workers, progress=progress)
        if chosen
        else {}
    )
    return GradeReport(
        name, rival_name, rules.rows, rules.columns, rules.win_length, seed, graded, set_grades
    )
