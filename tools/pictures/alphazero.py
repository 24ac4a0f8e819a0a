"""Regenerate the pictures of the tutorial docs/tutorials/alphazero.md ("AlphaZero in miniature").

    .venv/bin/python tools/pictures/alphazero.py          # writes docs/tutorials/img/alphazero-curve.svg

Trains the page's small 4x5 model (the same settings and seeds as its training block, for more generations: the
first 30 generations are the page's run) and measures it after every generation on the decisive positions of
the 4x5 test set (those where some legal move gives the best outcome away): the raw policy every generation,
with 50 simulations of search every 10. Random play, MCTS and a Q-table trained for 200,000 episodes are
measured on the same positions for reference. The numbers are printed as well.

Slow: about five minutes on one core (torch is held to one thread, as the page's blocks are).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

import matplotlib
import torch

from connect4_agents import QLearningAgent, RandomAgent
from connect4_agents._support.figures import pyplot, save_figure
from connect4_agents.alphazero import AlphaZeroAgent
from connect4_agents.alphazero.config import AlphaZeroTrainConfig
from connect4_agents.alphazero.monitor import GenerationLog
from connect4_agents.alphazero.train import train
from connect4_agents.evaluation import Position, evaluate_accuracy, load_test_set

ROOT = Path(__file__).resolve().parents[2]
# The docs' content column is about 690 px wide: a picture up to WIDTH_INCHES wide is shown at 96 px an inch
# (an SVG keeps its size), so no text here is under 9 points, 12 px on the page.
WIDTH_INCHES = 7.1
SMALL, NORMAL = 9.0, 10.0  # points


def decisive_positions() -> list[Position]:
    """The 4x5 test-set positions where at least one legal move gives the best outcome away."""
    return [p for p in load_test_set("4x5") if p.nontrivial]


def accuracy(player: object, positions: list[Position]) -> float:
    """The share of ``positions`` where ``player`` (a spec or a policy) keeps the best outcome."""
    return evaluate_accuracy(player, positions, workers=1, progress=False).optimal_class_rate


def page_config(generations: int, seed: int) -> AlphaZeroTrainConfig:
    """The settings of the page's training block."""
    return AlphaZeroTrainConfig(
        rows=4,
        columns=5,
        win_length=4,
        channels=32,
        blocks=2,
        generations=generations,
        games=32,
        parallel=32,
        simulations=32,
        steps=100,
        batch_size=128,
        eval_positions=300,
        eval_simulations=0,
        seed=seed,
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "tutorials" / "img", help="output folder")
    parser.add_argument("--generations", type=int, default=60, help="generations to train (default 60)")
    parser.add_argument(
        "--search-every", type=int, default=10, help="generations between search measurements"
    )
    parser.add_argument(
        "--table-episodes", type=int, default=200_000, help="the reference Q-table's training episodes"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)

    positions = decisive_positions()
    table = QLearningAgent(seed=args.seed)
    table.train(RandomAgent(seed=args.seed + 1), args.table_episodes, window=args.table_episodes)
    references = {
        "random": accuracy("random", positions),
        f"Q-table, {args.table_episodes:,} episodes": accuracy(table, positions),
        "mcts:200": accuracy("mcts:200", positions),
        "mcts:1000": accuracy("mcts:1000", positions),
    }
    print(f"{len(positions)} decisive positions; " + ", ".join(f"{k} {v:.3f}" for k, v in references.items()))

    rows: list[tuple[GenerationLog, float, float | None]] = []
    with tempfile.TemporaryDirectory() as work:
        model = Path(work) / "model.zip"

        def measure(log: GenerationLog) -> None:  # model.zip holds this generation when this is called
            raw = accuracy(AlphaZeroAgent.load(model, simulations=0, seed=0), positions)
            searched = None
            if log.generation % args.search_every == 0:
                searched = accuracy(AlphaZeroAgent.load(model, simulations=50, seed=0), positions)
            rows.append((log, raw, searched))
            print(
                f"generation {log.generation}: policy loss {log.policy_loss:.3f}, value loss {log.value_loss:.3f}, "
                f"log's raw accuracy (all 300) {log.raw_accuracy:.3f}, decisive raw {raw:.3f}"
                + ("" if searched is None else f", decisive 50 simulations {searched:.3f}"),
                flush=True,
            )

        train(page_config(args.generations, args.seed), work, on_generation=measure)

    path = draw(pyplot(), args.out / "alphazero-curve.svg", rows, references, len(positions))
    print(f"wrote {path}")


def draw(
    plt: Any,
    path: Path,
    rows: list[tuple[GenerationLog, float, float | None]],
    references: dict[str, float],
    positions: int,
) -> Path:
    """The losses over the generations, and the accuracies with the references' as gray lines."""
    figure, (losses, accuracies) = plt.subplots(
        2, 1, figsize=(WIDTH_INCHES, 7.0), gridspec_kw={"height_ratios": [1, 1.7]}
    )
    generations = [log.generation for log, _, _ in rows]
    losses.plot(generations, [log.policy_loss for log, _, _ in rows], label="policy (cross-entropy)")
    losses.plot(generations, [log.value_loss for log, _, _ in rows], label="value (squared error)")
    losses.set_xlabel("generation (32 self-play games each)", fontsize=NORMAL)
    losses.set_title("training losses", fontsize=NORMAL)
    losses.set_ylim(bottom=0)
    losses.legend(fontsize=SMALL)
    accuracies.plot(
        generations, [100 * raw for _, raw, _ in rows], marker=".", label="network alone (raw policy)"
    )
    searched = [(log.generation, s) for log, _, s in rows if s is not None]
    accuracies.plot(
        [g for g, _ in searched], [100 * s for _, s in searched], marker="o", label="network + 50 simulations"
    )
    styles = {"random": ":", "mcts:200": "--", "mcts:1000": "-"}
    for name, value in references.items():
        accuracies.axhline(100 * value, color="gray", linestyle=styles.get(name, "-."), linewidth=1)
        accuracies.annotate(
            name,
            (generations[-1], 100 * value),
            xytext=(4, 1),
            textcoords="offset points",
            va="bottom",
            fontsize=SMALL,
            color="dimgray",
        )
    accuracies.set_xlabel("generation", fontsize=NORMAL)
    accuracies.set_ylabel(f"% of {positions} decisive positions", fontsize=NORMAL)
    accuracies.set_title("best outcome kept (4x5 test set, solver-scored)", fontsize=NORMAL)
    accuracies.set_xlim(right=generations[-1] * 1.3)  # room for the references' names
    accuracies.legend(fontsize=SMALL, loc="lower center")
    for axes in (losses, accuracies):
        axes.tick_params(labelsize=SMALL)
        axes.grid(alpha=0.3)
    figure.tight_layout()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "alphazero"}):
        return save_figure(figure, path, format="svg")


if __name__ == "__main__":
    main()
