"""Regenerate the pictures of the tutorial docs/tutorials/ntuple.md ("From a Q-table to n-tuples").

    .venv/bin/python tools/pictures/ntuple.py --run runs/ntuple   # from a finished connect4 train-ntuple run
    .venv/bin/python tools/pictures/ntuple.py                     # trains the page's run first (60 CPU-minutes)
    .venv/bin/python tools/pictures/ntuple.py --games 2000        # a short run, by games

Writes docs/tutorials/img/ntuple-tuples.svg (six of the shipped network's tuples drawn on the board, and how
many tuples cover each cell) and ntuple-curve.svg (the run's test-set errors on the non-trivial positions, and
its wins as first player against perfect play, by CPU-minutes of training) from the run folder's curve.csv.
"""

from __future__ import annotations

import argparse
import csv
import tempfile
from pathlib import Path

import numpy as np

from connect4_agents._support.figures import pyplot, save_figure
from connect4_agents.ntuple import NTupleAgent
from connect4_agents.ntuple.run import NTupleTrainConfig, train_ntuple

ROOT = Path(__file__).resolve().parents[2]
WIDTH_INCHES = 7.1  # the docs' content column (see alphazero.py)
SMALL, NORMAL = 9.0, 10.0
COLOURS = ["tab:red", "tab:blue", "tab:green", "tab:orange", "tab:purple", "tab:brown"]


def tuples_picture(path: Path, shown: int = 6) -> None:
    """Six tuples of the shipped network on the board (left) and the tuples through each cell (right)."""
    network = NTupleAgent().network
    rules = network.rules
    plt = pyplot()
    figure, (left, right) = plt.subplots(1, 2, figsize=(WIDTH_INCHES, 3.0))
    for axis in (left, right):
        axis.set_xlim(-0.6, rules.columns - 0.4)
        axis.set_ylim(-0.6, rules.rows - 0.4)
        axis.set_aspect("equal")
        axis.set_xticks(range(rules.columns))
        axis.set_yticks([])
        axis.tick_params(labelsize=SMALL)
    for column in range(rules.columns):
        for row in range(rules.rows):
            left.add_patch(plt.Circle((column, row), 0.42, fill=False, color="lightgrey"))
    for index, cells in enumerate(network.tuples[:shown].tolist()):
        places = np.array([divmod(cell, rules.height) for cell in cells], dtype=float)
        offset = (index - shown / 2) * 0.05  # lines that share cells stay apart
        left.plot(
            places[:, 0] + offset,
            places[:, 1] + offset,
            "-o",
            color=COLOURS[index % len(COLOURS)],
            markersize=4,
            linewidth=1.6,
        )
    left.set_title(f"{shown} of the {network.n_tuples} tuples ({network.length} cells each)", fontsize=NORMAL)
    cover = np.zeros((rules.rows, rules.columns))
    for cells in network.rows.tolist():  # tuples and mirror images
        for cell in cells:
            column, row = divmod(cell, rules.height)
            cover[row, column] += 1
    image = right.imshow(cover, origin="lower", cmap="Blues")
    for (row, column), count in np.ndenumerate(cover):
        right.text(column, row, int(count), ha="center", va="center", fontsize=SMALL - 1)
    right.set_title("tuples through each cell (with mirror images)", fontsize=NORMAL)
    figure.colorbar(image, ax=right, shrink=0.8).ax.tick_params(labelsize=SMALL)
    figure.tight_layout()
    save_figure(figure, path)


def curve_picture(run: Path, path: Path) -> None:
    """Errors and first-player wins at each curve point of ``run``, by CPU-minutes of training."""
    with open(run / "curve.csv", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    minutes = [float(row["train_seconds"]) / 60 for row in rows]
    figure, left = pyplot().subplots(figsize=(WIDTH_INCHES, 3.2))
    left.plot(
        minutes,
        [float(r["errors_pct"]) for r in rows],
        "o-",
        color="tab:red",
        markersize=3,
        label="errors on non-trivial test positions (%)",
    )
    games = [int(r["wins"]) + int(r["draws"]) + int(r["losses"]) for r in rows]
    left.plot(
        minutes,
        [100 * int(r["wins"]) / n if n else np.nan for r, n in zip(rows, games)],
        "s-",
        color="tab:blue",
        markersize=3,
        label="wins as first player against perfect play (%)",
    )
    left.set_xlabel("CPU-minutes of training", fontsize=NORMAL)
    left.set_ylim(0, 100)
    left.tick_params(labelsize=SMALL)
    left.grid(alpha=0.3)
    left.legend(fontsize=SMALL)
    figure.tight_layout()
    save_figure(figure, path)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--run", type=Path, help="a finished train-ntuple run folder (default: train one)")
    parser.add_argument("--cpu-minutes", type=float, default=60.0, help="the run's budget when training one")
    parser.add_argument("--games", type=int, help="train for these self-play games instead (by count)")
    parser.add_argument(
        "--curve-games", type=int, default=20, help="games against perfect play a curve point"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "tutorials" / "img")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:  # a run trained here is removed once drawn
        run = args.run
        if run is None:
            run = Path(scratch) / "ntuple"
            train_ntuple(
                NTupleTrainConfig(
                    cpu_minutes=None if args.games else args.cpu_minutes,
                    games=args.games,
                    curve_games=args.curve_games,
                    out=str(run),
                    progress=False,
                    final_games=0,
                )
            )
        tuples_picture(args.out / "ntuple-tuples.svg")
        curve_picture(run, args.out / "ntuple-curve.svg")


if __name__ == "__main__":
    main()
