"""How often an agent's move is as good as perfect play: the counts of one group of positions
(`SetAccuracy`), a report per agent over all of them and per test set (`AccuracyReport`), as a table, JSON and
a picture (see `connect4_agents.evaluation.accuracy`, which runs the agents over the positions).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from connect4_agents._support.figures import pyplot, save_figure
from connect4_agents.evaluation.arena import wilson_interval
from connect4_agents.evaluation.rewards import TOP_RANKS, score_ranks
from connect4_agents.evaluation.test_sets import Position, score_outcome

__all__ = ["AccuracyReport", "SetAccuracy", "plot_reports"]


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
        nontrivial_top3: non-trivial positions where the move's score ranked among the 3 best (SPIN-Bench's
            measure: dense ranks, ties sharing one; a forfeit is not).
        forfeits: positions the agent gave up (counted in the others as a loss right there).
        fallbacks: positions where the agent's fallback played, not the agent (in none of the others).
    """

    n: int = 0
    optimal_class: int = 0
    exact: int = 0
    regret: float = 0.0
    nontrivial: int = 0
    nontrivial_optimal_class: int = 0
    nontrivial_top3: int = 0
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
            if column is not None:
                rank = score_ranks(position.move_scores)[column]
                self.nontrivial_top3 += rank is not None and rank <= TOP_RANKS

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
        [`optimal_class_rate`][connect4_agents.evaluation.accuracy_report.SetAccuracy.optimal_class_rate]
        (``(0.0, 1.0)`` when there are no positions).
        """
        return wilson_interval(self.optimal_class, self.n)

    @property
    def exact_ci95(self) -> tuple[float, float]:
        """The 95 % Wilson interval of
        [`exact_rate`][connect4_agents.evaluation.accuracy_report.SetAccuracy.exact_rate] (``(0.0, 1.0)`` when
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
        [`nontrivial_rate`][connect4_agents.evaluation.accuracy_report.SetAccuracy.nontrivial_rate] (``(0.0, 1.0)``
        when there are no non-trivial positions).
        """
        return wilson_interval(self.nontrivial_optimal_class, self.nontrivial)

    def to_dict(self) -> dict[str, Any]:
        """The counts' rates and intervals as a JSON-ready dict: ``n``, ``optimal_class_rate``,
        ``optimal_class_ci95``, ``exact_rate``, ``exact_ci95``, ``mean_regret``, ``nontrivial_n``,
        ``nontrivial_optimal_class_rate``, ``nontrivial_optimal_class_ci95``, ``nontrivial_top3_rate``
        (intervals as two-item lists, an empty group's rates as NaN), ``forfeits`` and ``fallbacks``.
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
            "nontrivial_top3_rate": self.nontrivial_top3 / self.nontrivial if self.nontrivial else math.nan,
            "forfeits": self.forfeits,
            "fallbacks": self.fallbacks,
        }


@dataclass
class AccuracyReport(SetAccuracy):
    """An agent's accuracy over all positions, with a breakdown per set.

    The counts, rates and intervals inherited from
    [`SetAccuracy`][connect4_agents.evaluation.accuracy_report.SetAccuracy] (``n``, ``optimal_class_rate``,
    ``exact_rate``, ``mean_regret``, ``nontrivial_rate``, their 95 % Wilson intervals, ...) are over all
    positions.

    Attributes:
        agent: the agent's spec or repr.
        per_set: set name -> [`SetAccuracy`][connect4_agents.evaluation.accuracy_report.SetAccuracy] of that set's
            positions.
        moves: the column chosen in each position, in order (None where the agent forfeited; the fallback's
            column where it played).
    """

    agent: str = ""
    per_set: dict[str, SetAccuracy] = field(default_factory=dict)
    moves: list[int | None] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The report as a JSON-ready dict: ``agent``, the fields of
        [`SetAccuracy.to_dict`][connect4_agents.evaluation.accuracy_report.SetAccuracy.to_dict] over all positions,
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
