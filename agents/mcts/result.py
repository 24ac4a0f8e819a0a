"""What one MCTS search found, to read, print, plot and record:
[`SearchResult`][connect4_agents.mcts.result.SearchResult], and the UCB1 score the search ranks moves by
([`ucb1`][connect4_agents.mcts.result.ucb1]).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from connect4_agents._support.figures import pyplot, save_figure
from connect4_agents.mcts.kernels import DRAW, LOSS, WIN

__all__ = ["SearchResult", "ucb1", "PROOF_NAMES"]

PROOF_NAMES = {LOSS: "loss", DRAW: "draw", WIN: "win"}


def ucb1(wins: float, visits: float, parent_visits: float, c: float = math.sqrt(2)) -> float:
    """UCB1 score of a child: mean result plus ``c * sqrt(ln(parent_visits) / visits)``.

    Examples:
        >>> round(ucb1(1, 1, 4), 3), round(ucb1(0.5, 1, 4), 3), round(ucb1(0, 1, 4), 3)
        (2.665, 2.165, 1.665)
    """
    if visits <= 0:
        return math.inf
    return wins / visits + c * math.sqrt(math.log(parent_visits) / visits)


@dataclass
class SearchResult:
    """What one search saw, per column, from the view of the player to move.

    ``visits[c]`` playouts through the move (mirror twins share their representative's numbers),
    ``mean_value[c]`` its average result (win 1, draw 1/2; NaN if never tried), ``proven[c]`` "win",
    "loss", "draw" or None (unproven), ``proof_depth[c]`` the further plies to the end of a proven win or
    loss line (the line found, not always the shortest). ``root_proven`` is the position's proven value for
    the player to move, or None.
    """

    column: int
    reason: str
    visits: list[int]
    mean_value: list[float]
    proven: list[str | None]
    proof_depth: list[int]
    ucb: list[float]
    playouts: int
    root_visits: int
    elapsed: float
    nodes: int
    reused_tree: bool
    root_proven: str | None
    mirrored: dict[int, int] = field(default_factory=dict)

    @property
    def playouts_per_second(self) -> float:
        """``playouts / elapsed``; infinite when no time was measured (``elapsed`` 0)."""
        return self.playouts / self.elapsed if self.elapsed > 0 else math.inf

    def to_dict(self) -> dict[str, Any]:
        """The per-column numbers as plain JSON (a game record's ``search`` entry): ``kind`` "mcts", the
        ``column`` chosen, ``visits``, ``values`` (mean results, win 1 draw 1/2, None where never tried),
        ``proven`` ("win", "draw", "loss" or None) and ``playouts``.
        """
        return {
            "kind": "mcts",
            "column": self.column,
            "visits": [int(v) for v in self.visits],
            "values": [None if math.isnan(v) else round(float(v), 4) for v in self.mean_value],
            "proven": list(self.proven),
            "playouts": int(self.playouts),
        }

    def plot(self, path: str | os.PathLike[str], title: str | None = None) -> Path:
        """Draw the search: visits per column (bars, the chosen one darker) and mean values (dots, right
        axis; proven wins, draws and losses marked), saved atomically to ``path`` (png, svg or pdf by the
        suffix). Needs matplotlib (the ``train`` extra). Returns the path.
        """
        plt = pyplot()
        columns = list(range(len(self.visits)))
        figure, visits_axis = plt.subplots(figsize=(max(4.0, 0.7 * len(columns) + 1.5), 3.2))
        colours = ["#1f4e9c" if c == self.column else "#8fb0e0" for c in columns]
        visits_axis.bar(columns, self.visits, color=colours)
        visits_axis.set_xlabel("column")
        visits_axis.set_ylabel("visits")
        visits_axis.set_xticks(columns)
        value_axis = visits_axis.twinx()
        values = [math.nan if math.isnan(v) else v for v in self.mean_value]
        value_axis.plot(columns, values, "o", color="#d62728", label="mean value")
        value_axis.set_ylim(-0.05, 1.05)
        value_axis.set_ylabel("mean value (win 1, draw 1/2)")
        for column, proof in enumerate(self.proven):
            if proof is not None:
                value_axis.annotate(proof, (column, 1.0), ha="center", va="bottom", fontsize=8)
        visits_axis.set_title(
            title or f"MCTS: {self.playouts:,} playouts, chose column {self.column} ({self.reason})",
            fontsize=9,
        )
        figure.tight_layout()
        return save_figure(figure, path)

    def table(self) -> str:
        """The search as a text table, one row per column."""
        lines = [f"{'column':>6} {'visits':>8} {'mean':>6} {'UCB1':>6}  proven"]
        for column, visits in enumerate(self.visits):
            mean = self.mean_value[column]
            if visits == 0 and math.isnan(mean) and self.proven[column] is None:
                continue
            proof = self.proven[column] or ""
            if proof in ("win", "loss"):
                plies = self.proof_depth[column] + 1
                proof += f" in {plies} {'ply' if plies == 1 else 'plies'}"
            if column in self.mirrored:
                proof += f"{' ' if proof else ''}(mirror of {self.mirrored[column]})"
            marker = " <" if column == self.column else ""
            ucb = self.ucb[column]
            lines.append(
                f"{column:>6} {visits:>8} {mean:>6.3f} {ucb:>6.3f}  {proof}{marker}"
                if not math.isnan(mean)
                else f"{column:>6} {visits:>8} {'-':>6} {'-':>6}  {proof}{marker}"
            )
        lines.append(
            f"chosen {self.column} ({self.reason}); {self.playouts:,} playouts in {self.elapsed:.3f} s "
            f"({self.playouts_per_second:,.0f}/s), {self.nodes:,} nodes, tree reused: {'yes' if self.reused_tree else 'no'}"
            + (f", root proven: {self.root_proven}" if self.root_proven else "")
        )
        return "\n".join(lines)
