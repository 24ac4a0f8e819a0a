"""A grade report (`connect4 grade`'s): a player's grades in its games and on the test sets, as JSON, a table
and a picture, and read back from its file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from connect4_agents._support.figures import pyplot, save_figure
from connect4_agents._support.files import atomic_write_json, parse_json, read_text_limited
from connect4_agents.evaluation.arena import counts_in_words
from connect4_agents.evaluation.grades import GameGrade, Rate, SetGrade
from connect4_env.rules import Rules

__all__ = ["GradeReport", "read_report", "FORMAT", "VERSION"]

FORMAT = "connect4-grade"
VERSION = 1
MAX_REPORT_BYTES = 16 << 20  # a report file larger than this is refused


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
        [`from_dict`][connect4_agents.evaluation.grade_report.GradeReport.from_dict] reads.
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
        if games.top3 is not None:
            bars.append(("top 3 by\nscore\n(SPIN-Bench)", games.top3, "share"))
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
            ["shares: higher is better", "rates: lower is better"],
            fontsize=7,
            loc="upper right",
            ncol=2,
        )
        figure.tight_layout()
        return save_figure(figure, path, dpi=110)

    def table(self) -> str:
        """The report as a few lines of text: results, then each figure with its count and interval (the
        top-3 share, SPIN-Bench's, beside the outcome class, ``not measured`` in a report that predates it).
        """
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
        if games.top3 is not None:  # a report written before it was measured has none
            row("top-3 moves by score (SPIN-Bench)", games.top3)
        else:
            lines.append(f"  {'top-3 moves by score (SPIN-Bench)':38} {'':>6}  not measured")
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
            if any(grade.nontrivial_top3 is not None for grade in self.sets.values()):
                lines.append("  test sets, non-trivial positions: top-3 moves by score (SPIN-Bench)")
                for name, grade in self.sets.items():
                    if grade.nontrivial_top3 is not None:
                        row(f"  {name}", grade.nontrivial_top3)
        return "\n".join(lines)


def _set_label(name: str) -> str:
    """A set's bar label on lines short enough to sit side by side: ``6x7`` / ``middle-medium`` /
    ``non-trivial``.
    """
    board, _, rest = name.partition("-")
    return "\n".join(part for part in (board, rest, "non-trivial") if part)


def read_report(path: str | os.PathLike[str]) -> GradeReport:
    """A report written by [`GradeReport.write`][connect4_agents.evaluation.grade_report.GradeReport.write].

    Raises:
        ValueError: not a report (see `GradeReport.from_dict`), not JSON, or over 16 MB.
        OSError: the file cannot be read.
    """
    return GradeReport.from_dict(
        parse_json(read_text_limited(path, MAX_REPORT_BYTES, "grade report"), str(path))
    )
