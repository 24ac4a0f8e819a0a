"""Regenerate the pictures of the tutorial docs/tutorials/selfplay.md ("Train a strong agent with self-play").

    .venv/bin/python tools/pictures/selfplay.py --run runs/league   # from a finished league run
    .venv/bin/python tools/pictures/selfplay.py                     # trains the page's run first (60 CPU-minutes)
    .venv/bin/python tools/pictures/selfplay.py --timesteps 6000 --snapshot-freq 2000   # a short run, by steps

Writes docs/tutorials/img/selfplay-curve.svg (the learner's score against ``mcts:100`` and random play at each
evaluation, by CPU-minutes) and selfplay-league.svg (the members' Elo on the project's ladder, and the payoff
matrix of the rating matches between the fixed members and the latest snapshots) from the run folder's ``eval.csv`` and ``league.json``.
"""

from __future__ import annotations

import argparse
import csv
import json
import tempfile
from pathlib import Path

import numpy as np

from connect4_agents._support.figures import pyplot, save_figure
from connect4_agents.sb3.train import SB3TrainConfig, train_baseline

ROOT = Path(__file__).resolve().parents[2]
WIDTH_INCHES = 7.1  # the docs' content column (see alphazero.py): text of 9 points and up stays legible
SMALL, NORMAL = 9.0, 10.0


def train(folder: Path, cpu_minutes: float, timesteps: int | None, snapshot_freq: int) -> None:
    """The page's run: ``connect4 train-sb3 --league --cpu-minutes <m> --eval-freq 250000``; with ``timesteps``,
    a run ended by its learner steps alone (no CPU budget), so that what it draws does not depend on the machine.
    """
    train_baseline(
        SB3TrainConfig(
            league=True,
            timesteps=timesteps or 10**11,
            cpu_minutes=0.0 if timesteps else cpu_minutes,
            eval_freq=min(250_000, timesteps or 250_000),
            snapshot_freq=snapshot_freq,
            out=str(folder),
            progress=False,
        )
    )


def curve(run: Path, path: Path) -> None:
    with open(run / "eval.csv", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    figure, axis = pyplot().subplots(figsize=(WIDTH_INCHES, 3.2))
    for opponent in dict.fromkeys(row["opponent"] for row in rows):
        mine = [row for row in rows if row["opponent"] == opponent]
        minutes = [float(row["cpu_seconds"]) / 60 for row in mine]
        score = [(int(row["wins"]) + 0.5 * int(row["draws"])) / int(row["games"]) for row in mine]
        axis.plot(minutes, score, marker="o", markersize=3, label=f"vs {opponent}")
    axis.axhline(0.6, color="grey", linewidth=0.8, linestyle="--")
    axis.set_xlabel("CPU-minutes of the run (training, opponents, rating matches)", fontsize=NORMAL)
    axis.set_ylabel("score (win 1, draw ½)", fontsize=NORMAL)
    axis.set_ylim(0, 1)
    axis.tick_params(labelsize=SMALL)
    axis.legend(fontsize=SMALL)
    axis.grid(alpha=0.3)
    figure.tight_layout()
    save_figure(figure, path)


def league(run: Path, path: Path, shown: int = 8) -> None:
    data = json.loads((run / "league.json").read_text())
    if data["ratings"] is None:
        raise SystemExit(f"{run / 'league.json'} has no ratings: the run added no snapshot; train it longer")
    elo = {name: value["elo"] for name, value in data["ratings"].items()}
    fixed = list(data["settings"]["fixed"])
    snapshots = [s["name"] for s in data["snapshots"]]
    chosen = snapshots[-shown:]  # the latest ones: in the pool together, so each pair played
    players = fixed + chosen
    index = {p: i for i, p in enumerate(players)}
    score = np.full((len(players), len(players)), np.nan)
    for r in data["results"]:
        if r["a"] in index and r["b"] in index:
            games = r["wins"] + r["draws"] + r["losses"]
            share = (r["wins"] + 0.5 * r["draws"]) / games
            score[index[r["a"]], index[r["b"]]] = share
            score[index[r["b"]], index[r["a"]]] = 1 - share
    figure, (left, right) = pyplot().subplots(
        1, 2, figsize=(WIDTH_INCHES, 4.2), gridspec_kw={"width_ratios": [1, 1.3]}
    )
    steps = [int(name.split("@")[1]) / 1e6 for name in snapshots]
    left.plot(steps, [elo[name] for name in snapshots], marker="o", markersize=2, label="snapshots")
    for name in fixed:
        if name in elo:
            left.axhline(elo[name], linewidth=0.8, linestyle="--", color="grey")
            left.text(0, elo[name], f" {name}", fontsize=SMALL, va="bottom")
    left.set_xlabel("learner steps (millions)", fontsize=NORMAL)
    left.set_ylabel("Elo (ladder: random 0)", fontsize=NORMAL)
    left.tick_params(labelsize=SMALL)
    image = right.imshow(score, vmin=0, vmax=1, cmap="RdYlGn", origin="lower")
    labels = [p.replace("self@", "@") for p in players]
    right.set_xticks(range(len(players)), labels, rotation=60, ha="right", fontsize=SMALL)
    right.set_yticks(range(len(players)), labels, fontsize=SMALL)
    right.set_title("score of row against column", fontsize=NORMAL)
    figure.colorbar(image, ax=right, fraction=0.046)
    figure.tight_layout()
    save_figure(figure, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", help="a finished league run folder (default: train one)")
    parser.add_argument("--cpu-minutes", type=float, default=60.0, help="the run's budget when training")
    parser.add_argument("--timesteps", type=int, help="end the run after these learner steps instead")
    parser.add_argument(
        "--snapshot-freq", type=int, default=25_000, help="the league's steps between snapshots"
    )
    parser.add_argument("--out", default=str(ROOT / "docs" / "tutorials" / "img"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        run = Path(args.run) if args.run else Path(scratch) / "league"
        if not args.run:
            train(run, args.cpu_minutes, args.timesteps, args.snapshot_freq)
        curve(run, out / "selfplay-curve.svg")
        league(run, out / "selfplay-league.svg")
    print(f"wrote {out / 'selfplay-curve.svg'} and {out / 'selfplay-league.svg'}")


if __name__ == "__main__":
    main()
