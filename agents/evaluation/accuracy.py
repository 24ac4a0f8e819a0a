"""How often an agent's move is as good as perfect play, on positions with exact scores (one job: that
measure, its counts and reports, and the runs over the positions in workers).

A move is *optimal-class* when it keeps the best outcome the position allows (a win if there is one, else a
draw); *exact* when it has the best score (the quickest win, the slowest loss); its *regret* is the best score
minus its score, in the solver's units (two points per ply sooner or later, see
`connect4_agents.solver.agent`).

Every rate is given over all positions and over the *non-trivial* ones
([`Position.nontrivial`][connect4_agents.evaluation.test_sets.Position.nontrivial]: some move has a worse
outcome than the best). In a trivial position every move keeps the outcome, so random play is right there too;
the non-trivial rate is the one that tells agents apart, as AlphaZero.jl's benchmark reads its errors. Reports
break both down per test set.

An agent that gives a position up ([`Forfeit`][connect4_env.policy.Forfeit]: a text policy out of answers) is
scored as a loss right there (below the score of any move), and the forfeits are counted. A move its fallback
played (a text policy's random column after no answer: its `move_info` says ``"outcome": "fallback"``) is not
the agent's: it is counted in ``fallbacks`` and left out of every rate and of ``n``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from connect4_agents._support.figures import pyplot, save_figure
from connect4_agents._support.progress import progress_bar
from connect4_agents.evaluation.arena import check_callable, wilson_interval
from connect4_agents.evaluation.backends import plan_batches, run_batches, worker_policy
from connect4_agents.evaluation.test_sets import (
    TEST_SET_SPECS,
    Position,
    _check_name,
    load_test_set,
    score_outcome,
    select_labelled_positions,
    select_test_sets,
)
from connect4_env.encoding import TrackedBoard
from connect4_env.policy import Forfeit
from connect4_env.rules import IllegalMoveError, as_column
from connect4_env.validation import check_bool, check_int, check_name_list

__all__ = [
    "AccuracyReport",
    "SetAccuracy",
    "evaluate_accuracy",
    "evaluate_agents",
    "position_seed",
    "playable_sets",
    "plot_reports",
]


def position_seed(seed: int, index: int) -> int:
    """The agent's seed for the ``index``-th position (independent of how positions are split in batches).

    Raises:
        TypeError: ``seed`` or ``index`` is not an integer.
        ValueError: ``seed`` or ``index`` is a negative integer.
    """
    seed, index = check_int("seed", seed, 0), check_int("index", index, 0)
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])


@dataclass
class SetAccuracy:
    """Counts for one group of positions, and the rates and intervals read from them.

    Attributes:
        n: positions counted.
        optimal_class: positions where the move kept the best outcome.
        exact: positions where the move had the best score.
        regret: the sum over positions of the best score minus the move's score.
        nontrivial: non-trivial positions counted.
        nontrivial_optimal_class: non-trivial positions where the move kept the best outcome.
        forfeits: positions the agent gave up (counted in the others as a loss right there).
        fallbacks: positions where the agent's fallback played, not the agent (in none of the others).
    """

    n: int = 0
    optimal_class: int = 0
    exact: int = 0
    regret: float = 0.0
    nontrivial: int = 0
    nontrivial_optimal_class: int = 0
    forfeits: int = 0
    fallbacks: int = 0

    def add(self, position: Position, column: int | None) -> None:
        """Count the move ``column`` in ``position``; ``column`` must be on the board (the caller checks
        legality first). None: the agent forfeited, scored as a loss right there, below any move's score.

        Raises:
            ValueError: ``column`` is full in ``position`` (nothing is counted).
        """
        if column is None:  # a loss now: below any move's score (the quickest loss scores 1 - stones left)
            score: int | None = position.ply - position.rules.cells
            self.forfeits += 1
        else:
            score = position.move_scores[column]
        if score is None:  # a full column: the caller checks legality first
            raise ValueError(f"column {column} is full")
        kept = score_outcome(score) == position.outcome
        self.n += 1
        self.optimal_class += kept
        self.exact += score == position.score
        self.regret += position.score - score
        if position.nontrivial:
            self.nontrivial += 1
            self.nontrivial_optimal_class += kept

    @property
    def optimal_class_rate(self) -> float:
        """The share of positions where the move kept the best outcome (NaN when there are none)."""
        return self.optimal_class / self.n if self.n else math.nan

    @property
    def exact_rate(self) -> float:
        """The share of positions where the move had the best score (NaN when there are none)."""
        return self.exact / self.n if self.n else math.nan

    @property
    def mean_regret(self) -> float:
        """The mean of the best score minus the move's score, in the solver's units (NaN when there are no
        positions).
        """
        return self.regret / self.n if self.n else math.nan

    @property
    def optimal_class_ci95(self) -> tuple[float, float]:
        """The 95 % Wilson interval of
        [`optimal_class_rate`][connect4_agents.evaluation.accuracy.SetAccuracy.optimal_class_rate]
        (``(0.0, 1.0)`` when there are no positions).
        """
        return wilson_interval(self.optimal_class, self.n)

    @property
    def exact_ci95(self) -> tuple[float, float]:
        """The 95 % Wilson interval of
        [`exact_rate`][connect4_agents.evaluation.accuracy.SetAccuracy.exact_rate] (``(0.0, 1.0)`` when
        there are no positions).
        """
        return wilson_interval(self.exact, self.n)

    @property
    def nontrivial_rate(self) -> float:
        """The optimal-class rate on the non-trivial positions only (NaN when there are none)."""
        return self.nontrivial_optimal_class / self.nontrivial if self.nontrivial else math.nan

    @property
    def nontrivial_ci95(self) -> tuple[float, float]:
        """The 95 % Wilson interval of
        [`nontrivial_rate`][connect4_agents.evaluation.accuracy.SetAccuracy.nontrivial_rate] (``(0.0, 1.0)``
        when there are no non-trivial positions).
        """
        return wilson_interval(self.nontrivial_optimal_class, self.nontrivial)

    def to_dict(self) -> dict[str, Any]:
        """The counts' rates and intervals as a JSON-ready dict: ``n``, ``optimal_class_rate``,
        ``optimal_class_ci95``, ``exact_rate``, ``exact_ci95``, ``mean_regret``, ``nontrivial_n``,
        ``nontrivial_optimal_class_rate``, ``nontrivial_optimal_class_ci95`` (intervals as two-item lists,
        an empty group's rates as NaN), ``forfeits`` and ``fallbacks``.
        """
        return {
            "n": self.n,
            "optimal_class_rate": self.optimal_class_rate,
            "optimal_class_ci95": list(self.optimal_class_ci95),
            "exact_rate": self.exact_rate,
            "exact_ci95": list(self.exact_ci95),
            "mean_regret": self.mean_regret,
            "nontrivial_n": self.nontrivial,
            "nontrivial_optimal_class_rate": self.nontrivial_rate,
            "nontrivial_optimal_class_ci95": list(self.nontrivial_ci95),
            "forfeits": self.forfeits,
            "fallbacks": self.fallbacks,
        }


@dataclass
class AccuracyReport(SetAccuracy):
    """An agent's accuracy over all positions, with a breakdown per set.

    The counts, rates and intervals inherited from
    [`SetAccuracy`][connect4_agents.evaluation.accuracy.SetAccuracy] (``n``, ``optimal_class_rate``,
    ``exact_rate``, ``mean_regret``, ``nontrivial_rate``, their 95 % Wilson intervals, ...) are over all
    positions.

    Attributes:
        agent: the agent's spec or repr.
        per_set: set name -> [`SetAccuracy`][connect4_agents.evaluation.accuracy.SetAccuracy] of that set's
            positions.
        moves: the column chosen in each position, in order (None where the agent forfeited; the fallback's
            column where it played).
    """

    agent: str = ""
    per_set: dict[str, SetAccuracy] = field(default_factory=dict)
    moves: list[int | None] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The report as a JSON-ready dict: ``agent``, the fields of
        [`SetAccuracy.to_dict`][connect4_agents.evaluation.accuracy.SetAccuracy.to_dict] over all positions,
        and ``per_set`` (set name -> that set's dict); the moves are left out.
        """
        return {
            "agent": self.agent,
            **super().to_dict(),
            "per_set": {name: part.to_dict() for name, part in self.per_set.items()},
        }

    def table(self) -> str:
        """One line per set and one for all: the optimal-class rate over all positions and over the
        non-trivial ones, the exact rate, each with its 95 % interval, and the mean regret; the positions
        forfeited and those the fallback played, where there are any.
        """
        lines = [
            f"{self.agent}",
            f"  {'set':20} {'n':>5} {'optimal class':>21}  {'n':>5} {'non-trivial':>21} {'exact':>21} {'regret':>6}",
        ]
        rows = list(self.per_set.items()) + ([("all", self)] if len(self.per_set) > 1 else [])
        for name, part in rows:
            lines.append(
                f"  {name:20} {part.n:>5} {_rate(part.optimal_class_rate, part.optimal_class_ci95)}"
                f"  {part.nontrivial:>5} {_rate(part.nontrivial_rate, part.nontrivial_ci95)}"
                f" {_rate(part.exact_rate, part.exact_ci95)} {part.mean_regret:>6.2f}"
                + (f"  ({part.forfeits} forfeited)" if part.forfeits else "")
                + (f"  ({part.fallbacks} by the fallback, not rated)" if part.fallbacks else "")
            )
        if self.forfeits:
            lines.append(
                f"  a forfeited position counts as a loss there: in a lost position that keeps the outcome "
                f"class, so read the non-trivial rate ({self.forfeits} forfeited in all)"
            )
        if self.fallbacks:
            lines.append(
                f"  the fallback, not the agent, played {self.fallbacks} of {self.fallbacks + self.n} positions: "
                "they are left out of n and of every rate"
            )
        return "\n".join(lines)

    def plot(self, path: str) -> None:
        """Bars per set (optimal-class and exact rates) with 95 % interval whiskers, saved to ``path``."""
        plot_reports([self], path)


def _rate(rate: float, interval: tuple[float, float]) -> str:
    """``93.1% (91.2%-94.6%)`` in 21 characters, ``-`` where there is nothing to rate."""
    if math.isnan(rate):
        return f"{'-':>21}"
    return f"{rate:>6.1%} ({interval[0]:.1%}-{interval[1]:.1%})".rjust(21)


def plot_reports(reports: Sequence[AccuracyReport], path: str) -> None:
    """One panel per set, one pair of bars (optimal class, exact) per agent, saved to ``path``."""
    names = list(dict.fromkeys(name for report in reports for name in report.per_set))
    width = 0.8 / max(1, len(reports))
    figure, axes = pyplot().subplots(
        2, 1, figsize=(max(6.0, 1.2 * len(names) * max(1, len(reports)) ** 0.5), 7)
    )
    for axis, metric in zip(axes, ("optimal_class", "exact")):
        for k, report in enumerate(reports):
            xs, ys, low, high = [], [], [], []
            for i, name in enumerate(names):
                part = report.per_set.get(name)
                if part is None:
                    continue
                rate = getattr(part, f"{metric}_rate")
                lo, hi = getattr(part, f"{metric}_ci95")
                xs.append(i + (k - (len(reports) - 1) / 2) * width)
                ys.append(rate)
                low.append(rate - lo)
                high.append(hi - rate)
            axis.bar(xs, ys, width=width, yerr=[low, high], capsize=2, label=report.agent)
        axis.set_xticks(range(len(names)), names, rotation=30, ha="right")
        axis.set_ylim(0, 1.05)
        axis.set_ylabel("optimal-class moves" if metric == "optimal_class" else "exact-score moves")
        axis.grid(axis="y", alpha=0.3)
    axes[0].legend(fontsize=8)
    figure.tight_layout()
    save_figure(figure, path, dpi=110)


# -- the work done in each worker -----------------------------------------------------------------------------
def _fell_back(policy: Any) -> bool:
    """Whether the policy's last move was its fallback's, by its `move_info` record (a text policy's)."""
    move_info = getattr(policy, "move_info", None)
    record = move_info() if callable(move_info) else None
    return isinstance(record, dict) and record.get("outcome") == "fallback"


def _choose_moves(batch: tuple[Any, int, list[tuple[int, Position]]]) -> list[tuple[int | None, bool]]:
    """The agent's column in each position of the batch (None where it forfeited) and whether its fallback
    chose it, its seed reset from the position's index.
    """
    agent, seed, items = batch
    columns: list[tuple[int | None, bool]] = []
    for index, position in items:
        rules = position.rules
        policy = worker_policy(agent, rules)
        game = TrackedBoard(rules)
        for move in position.moves:
            game.play(move)
        reset = getattr(policy, "reset", None)
        if callable(reset):
            reset(seed=position_seed(seed, index))
        try:
            action = policy.act(game.observation(game.board.to_move), game.mask.copy())
        except Forfeit:  # counted as a loss there, as a game counts it
            columns.append((None, False))
            continue
        # the same check as a game's: an integer (numpy's too), never a float or a string read as one
        columns.append((as_column(action), _fell_back(policy)))
    return columns


def playable_sets(agent: Any, names: Sequence[str]) -> list[str]:
    """The sets among ``names`` whose board ``agent`` (a spec or a policy) can play.

    A Q-table plays only its own board size, for example; a spec that cannot be built at all raises.

    Raises:
        ValueError: ``agent`` is a spec that fails on every board, with that board's error.
    """
    playable, error = [], None
    for name in check_name_list("names", names, "test set names"):
        rules = TEST_SET_SPECS[_check_name(name)].rules
        try:
            worker_policy(agent, rules)
        except ValueError as exc:
            error = exc
            continue
        playable.append(name)
    if not playable and error is not None:
        raise error
    return playable


def _agent_name(agent: Any) -> str:
    return agent if isinstance(agent, str) else repr(agent)


def _positions(test_set: Any) -> list[tuple[str, Position]]:
    if isinstance(test_set, str) or (
        isinstance(test_set, Sequence) and test_set and all(isinstance(x, str) for x in test_set)
    ):
        # read as the command line's --test-sets: a set named twice would count its positions twice
        names = select_test_sets([test_set] if isinstance(test_set, str) else list(test_set))
        return [(name, p) for name in names for p in load_test_set(name)]
    if isinstance(test_set, Sequence) and all(isinstance(x, Position) for x in test_set):
        return [(f"{p.rows}x{p.columns}-w{p.win_length}", p) for p in test_set]
    if isinstance(test_set, Sequence) and all(
        isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str) and isinstance(x[1], Position)
        for x in test_set
    ):
        return [(name, p) for name, p in test_set]
    raise TypeError(
        "test_set must be a set name, a list of set names, a list of Position objects or of (set name, "
        "Position) pairs, "
        f"got {type(test_set).__name__}"
    )


def evaluate_accuracy(
    agent: Any,
    test_set: str | Sequence[str] | Sequence[Position] | Sequence[tuple[str, Position]],
    *,
    backend: str = "process",
    workers: int | None = None,
    progress: bool = True,
    seed: int = 0,
    address: str | None = None,
    batch_size: int | None = None,
) -> AccuracyReport:
    """Ask ``agent`` for a move in every position of ``test_set`` and compare it with perfect play.

    Args:
        agent: an agent spec (``"mcts:1000"``, built in each worker) or a policy object (sent to the
            workers; bound to each position's rules).
        test_set: a shipped set's name
            ([`test_set_names`][connect4_agents.evaluation.test_sets.test_set_names]), a list of names (or
            ``"6x7"``, ``"all"``: read by `connect4_agents.evaluation.test_sets.select_test_sets`, which
            refuses a set named twice), a list of [`Position`][connect4_agents.evaluation.test_sets.Position],
            or a list of ``(set name, Position)`` pairs (what
            `connect4_agents.evaluation.test_sets.select_labelled_positions` returns). The per-set breakdown
            is by name (by board for bare positions).
        backend: where the positions are played, ``"process"`` or ``"ray"`` (see
            `connect4_agents.evaluation.backends`).
        workers: the number of worker processes or Ray tasks at once (default: the CPUs available).
        progress: a progress bar (tqdm) over positions.
        seed: the agent is reset with a seed derived from ``seed`` and the position's index before each
            position, so the same seed gives the same moves on any backend and number of workers.
        address: the Ray cluster to join with ``backend="ray"``, such as ``"ray://head:10001"`` (default: a
            local one).
        batch_size: positions per task (default: about four tasks per worker, at most 100 positions each).

    Raises:
        TypeError: ``test_set`` is none of the forms above, ``progress`` is not a bool, ``seed``, ``workers``
            or ``batch_size`` is not an integer, ``address`` is not a str, or ``agent`` is neither a spec nor
            an object with ``act``.
        ValueError: an unknown set or one named twice, no positions, a negative ``seed``, ``workers`` or
            ``batch_size`` out of range, an unknown ``backend``, an ``address`` without ``backend="ray"``, or
            an agent that is an unknown spec or cannot play a set's board (checked before any position).
        MissingExtraError: ``backend="ray"`` without Ray (the ``distributed`` extra).
        IllegalMoveError: the agent chose a full or out-of-range column.
    """
    check_bool("progress", progress)
    seed = check_int("seed", seed, 0)
    labelled = _positions(test_set)
    if not labelled:
        raise ValueError("test_set holds no positions")
    indexed = list(enumerate(p for _, p in labelled))
    n_workers, chunks = plan_batches(indexed, workers, batch_size, largest=100)
    for rules in {p.rules for _, p in labelled}:  # fail early, here, if the agent cannot play a board
        worker_policy(agent, rules)
    batches = [(agent, seed, chunk) for chunk in chunks]
    bar = progress_bar(len(indexed), "positions", unit="pos") if progress else None
    try:
        results = run_batches(
            _choose_moves,
            batches,
            backend=backend,
            workers=n_workers,
            address=address,
            on_result=None if bar is None else lambda i, r: bar.update(len(r)),
        )
    finally:
        if bar is not None:
            bar.close()
    report = AccuracyReport(agent=_agent_name(agent))
    for (name, position), (column, fell_back) in zip(labelled, (c for batch in results for c in batch)):
        if column is not None:
            column = as_column(column)
            if not 0 <= column < position.columns or position.move_scores[column] is None:
                raise IllegalMoveError(
                    f"{report.agent} chose column {column}, which is not legal after {position.moves}"
                )
        part = report.per_set.setdefault(name, SetAccuracy())
        report.moves.append(column)
        if fell_back:  # not the agent's move: counted apart, in no rate
            report.fallbacks += 1
            part.fallbacks += 1
            continue
        report.add(position, column)
        part.add(position, column)
    return report


def evaluate_agents(
    agents: Sequence[str],
    test_sets: Sequence[str],
    *,
    plies: tuple[int, int] | None = None,
    sample: int | None = None,
    seed: int = 0,
    backend: str = "process",
    workers: int | None = None,
    address: str | None = None,
    progress: bool = True,
    on_report: Callable[[AccuracyReport], None] | None = None,
) -> list[AccuracyReport]:
    """[`evaluate_accuracy`][connect4_agents.evaluation.accuracy.evaluate_accuracy] of each agent spec on the
    sets among ``test_sets`` that it can play (what ``scripts/evaluate.py`` runs).

    Args:
        agents: agent specs (``"mcts:1000"``).
        test_sets: set names, ``"6x7"`` (the six 6x7 sets) or ``"all"`` (see
            `connect4_agents.evaluation.test_sets.select_test_sets`).
        plies: only the positions with ``plies[0]`` to ``plies[1]`` stones (None: all).
        sample: only ``sample`` of those positions, drawn with ``seed`` (None: all; see
            `connect4_agents.evaluation.test_sets.select_positions`).
        seed: draws the sample, and seeds the agents as in
            [`evaluate_accuracy`][connect4_agents.evaluation.accuracy.evaluate_accuracy].
        backend: ``"process"`` or ``"ray"``, as for
            [`evaluate_accuracy`][connect4_agents.evaluation.accuracy.evaluate_accuracy].
        workers: worker processes or Ray tasks at once (default: the CPUs available).
        address: the Ray cluster to join with ``backend="ray"`` (default: a local one).
        progress: a progress bar over each agent's positions.
        on_report: called with each agent's report as soon as it is done (to print it).

    Returns:
        One report per agent, in the order of ``agents``.

    Raises:
        TypeError: ``agents`` is not a list (a lone string included), ``test_sets`` is not a list of
            strings, ``on_report`` is not callable, a spec is neither a string nor an object with ``act``, or
            ``plies``, ``sample`` or another setting has the wrong type.
        ValueError: an unknown set or one named twice, a spec that cannot play any of the sets (checked for
            every spec before any plays), a ``plies`` range or ``sample`` out of range, no position in the
            range, or a setting out of range.
        MissingExtraError: ``backend="ray"`` without Ray (the ``distributed`` extra).
    """
    if isinstance(agents, (str, bytes)) or not isinstance(agents, Sequence):
        raise TypeError(
            f"agents must be a list of agent specs or policies, got {agents!r:.80} ({type(agents).__name__})"
            + (f"; write [{agents!r}] for one" if isinstance(agents, str) else "")
        )
    sets = select_test_sets(test_sets)
    check_callable("on_report", on_report)
    # every spec is checked against the sets before any of them plays
    plans = [(spec, playable_sets(spec, sets)) for spec in agents]
    reports = []
    for spec, playable in plans:
        chosen = (
            playable
            if plies is None and sample is None
            else select_labelled_positions(playable, plies, sample, seed)
        )
        if not chosen:
            low, high = plies if plies is not None else (0, 0)
            raise ValueError(f"no position of {playable} has {low} to {high} stones")
        report = evaluate_accuracy(
            spec, chosen, backend=backend, workers=workers, address=address, seed=seed, progress=progress
        )
        reports.append(report)
        if on_report is not None:
            on_report(report)
    return reports
