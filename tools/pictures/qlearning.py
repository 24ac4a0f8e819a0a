"""Regenerate the pictures of the tutorial docs/tutorials/qlearning.md ("Tabular Q-learning").

    .venv/bin/python tools/pictures/qlearning.py            # writes the three pictures in docs/tutorials/img/

- ``qlearning-epsilon.svg``: the exploration schedules (the default linear one, the older multiplicative one,
  the original project's constant) over a 20,000-episode plan;
- ``qlearning-curve.svg``: one Q-learning run on 4x5 (four in a row) against a random player, at the package's
  default settings, with the table measured every ``--every`` episodes while it trains: greedy games against a
  fresh random player and against MCTS with 10 playouts, the share of decisive test-set positions where its
  move keeps the best outcome, and the number of positions in the table;
- ``qlearning-coverage.svg``: the positions the page's 20,000-game table and this run's table hold, per number
  of stones, against every 4x5 position with a move to make.

The numbers are printed as well. About a minute on one core.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from matplotlib.ticker import NullFormatter

from connect4_agents import MCTSAgent, QLearningAgent, RandomAgent
from connect4_agents._support.figures import pyplot, save_figure
from connect4_agents.evaluation import Position, evaluate_accuracy, load_test_set
from connect4_agents.evaluation.arena import play_match
from connect4_agents.evaluation.curves import LearningCurve
from connect4_env import Rules

ROOT = Path(__file__).resolve().parents[2]
RULES = Rules(4, 5, 4)
PAGE_EPISODES = 20_000  # the training of the page's blocks (seed 0 against RandomAgent(seed=1))


def decisive_positions() -> list[Position]:
    """The 4x5 test-set positions where at least one legal move gives the best outcome away."""
    return [p for p in load_test_set("4x5") if p.nontrivial]


# The docs' content column is about 690 px wide: a picture up to WIDTH_INCHES wide is shown at 96 px an inch
# (an SVG keeps its size), so no text here is under 9 points, 12 px on the page.
WIDTH_INCHES = 7.1
SMALL, NORMAL = 9.0, 10.0  # points


def count_positions(rules: Rules) -> int:
    """Positions with a move to make (the game not over), mirror images counted once: what a full table holds."""
    return sum(positions_per_ply(rules))


def positions_per_ply(rules: Rules) -> list[int]:
    """`count_positions` per number of stones on the board (index 0: the empty board).

    Ply by ply over numpy arrays of ``(mover's stones, all stones)`` bitboards (the board fits in 63 bits).
    """
    height, columns = rules.height, rules.columns
    column_mask = np.uint64((1 << height) - 1)

    def has_won(stones: np.ndarray) -> np.ndarray:
        won = np.zeros(stones.shape, dtype=bool)
        for shifts in rules.win_shifts:  # the rules' own run-doubling shifts, one tuple per direction
            line = stones
            for shift in shifts:
                line = line & (line >> np.uint64(shift))
            won |= line != 0
        return won

    def mirror(stones: np.ndarray) -> np.ndarray:
        mirrored = np.zeros_like(stones)
        for c in range(columns):
            column = (stones >> np.uint64(c * height)) & column_mask
            mirrored |= column << np.uint64((columns - 1 - c) * height)
        return mirrored

    bottom = np.uint64(rules.bottom_mask)
    full = np.uint64(rules.board_mask)
    mover = np.zeros(1, dtype=np.uint64)
    stones = np.zeros(1, dtype=np.uint64)
    canonical: list[int] = []
    while len(stones):
        keys = np.minimum(mover + stones + bottom, mirror(mover) + mirror(stones) + bottom)
        canonical.append(len(np.unique(keys)))
        movers, boards = [], []
        for c in range(columns):
            open_column = (stones & np.uint64(1 << (c * height + rules.rows - 1))) == 0
            before_mover, before = mover[open_column], stones[open_column]
            after = before | (before + np.uint64(1 << (c * height)))
            going_on = ~has_won(before_mover | (after ^ before)) & (after != full)
            movers.append((before_mover ^ before)[going_on])
            boards.append(after[going_on])
        mover, stones = np.concatenate(movers), np.concatenate(boards)
        _, first = np.unique(mover + stones + bottom, return_index=True)  # one key per position
        mover, stones = mover[first], stones[first]
    return canonical


def stones_of_key(key: int, rules: Rules) -> int:
    """The number of stones of a table key (``mover + all stones + bottom row``, see ``canonical_key``).

    In each column the stones plus the column's bottom bit carry into one bit at the column's height, and the
    mover's stones, all below it, add no carry: the highest bit of a column's part is its height.
    """
    column_mask = (1 << rules.height) - 1
    return sum(((key >> (c * rules.height)) & column_mask).bit_length() - 1 for c in range(rules.columns))


def table_per_ply(agent: QLearningAgent) -> list[int]:
    """The table's rows per number of stones."""
    counts = [0] * (RULES.cells + 1)
    for key in agent.q:
        counts[stones_of_key(key, RULES)] += 1
    return counts


def measure(agent: QLearningAgent, positions: list[Position], seed: int) -> dict[str, float]:
    """Greedy play: win rate against random (1000 games), score against mcts:10 (200 games), accuracy."""
    random_games = play_match(agent, RandomAgent(seed=seed + 1), 1000, RULES)
    mcts_games = play_match(agent, MCTSAgent(playouts=10, seed=seed + 2), 200, RULES)
    accuracy = evaluate_accuracy(agent, positions, workers=1, progress=False, seed=seed)
    return {
        "win_vs_random": random_games.wins / random_games.n_games,
        "score_vs_mcts10": mcts_games.score,
        "accuracy": accuracy.optimal_class_rate,
        "states": float(len(agent.q)),
    }


def draw_epsilon(plt: Any, path: Path, total: int = 20_000) -> Path:
    """The three exploration schedules of the page's table, over a plan of ``total`` episodes."""
    schedules = {
        "default: linear to 0.05 over the first half": QLearningAgent(RULES, seed=0),
        "epsilon_decay=0.9999: a factor after every episode": QLearningAgent(
            RULES, seed=0, epsilon_decay=0.9999
        ),
        "QLearningAgent.original(): a constant 0.1": QLearningAgent.original(RULES, seed=0),
    }
    episodes = list(range(0, total + 1, 100))
    figure, axes = plt.subplots(figsize=(WIDTH_INCHES, 3.3))
    for (label, agent), style in zip(schedules.items(), ("-", "--", ":")):
        axes.plot(
            [e / 1000 for e in episodes],
            [agent.epsilon_at(e, total=total) for e in episodes],
            style,
            lw=2,
            label=label,
        )
    axes.set_xlabel(f"training episode (thousands) of a {total:,}-episode plan", fontsize=NORMAL)
    axes.set_ylabel("ε: share of random moves", fontsize=NORMAL)
    axes.set_ylim(0, 0.55)
    axes.tick_params(labelsize=SMALL)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=SMALL, frameon=False)
    figure.tight_layout()
    return save_svg(figure, path)


def draw_curve(
    plt: Any, path: Path, points: list[tuple[int, dict[str, float]]], curve: LearningCurve, full_table: int
) -> Path:
    """The learning curve: the greedy table measured three ways, the training games, and the table's size."""
    figure, (rates, table) = plt.subplots(
        2, 1, figsize=(WIDTH_INCHES, 7.2), sharex=True, gridspec_kw={"height_ratios": [3, 1.5]}
    )
    x = [e / 1000 for e, _ in points]
    rates.plot(x, [m["win_vs_random"] for _, m in points], marker=".", label="greedy: wins against random")
    rates.plot(
        x, [m["score_vs_mcts10"] for _, m in points], marker=".", label="greedy: score against mcts:10"
    )
    rates.plot(x, [m["accuracy"] for _, m in points], marker=".", label="greedy: best outcome kept (solver)")
    rates.plot([e / 1000 for e in curve.episodes], curve.win_rate, color="gray", label="training games: wins")
    rates.plot([e / 1000 for e in curve.episodes], curve.epsilon, color="black", linestyle="--", label="ε")
    rates.set_ylim(0, 1)
    rates.set_title("Q-learning on 4x5 against random, default settings", fontsize=NORMAL)
    table.plot(x, [m["states"] / 1000 for _, m in points], marker=".", label="positions in the table")
    table.axhline(full_table / 1000, color="tab:red", linestyle=":", label="every 4x5 position")
    table.set_ylabel("thousands of\npositions", fontsize=NORMAL)
    table.set_xlabel("thousands of training episodes against random", fontsize=NORMAL)
    for axes in (rates, table):
        axes.tick_params(labelsize=SMALL)
        axes.grid(alpha=0.3)
    # one legend under both panels: inside, it would hide a curve
    handles = [handle for axes in (rates, table) for handle in axes.get_legend_handles_labels()[0]]
    figure.legend(handles=handles, loc="lower center", ncol=2, fontsize=SMALL, frameon=False)
    figure.tight_layout(rect=(0, 0.13, 1, 1))
    return save_svg(figure, path)


def draw_coverage(plt: Any, path: Path, every: list[int], tables: dict[str, list[int]]) -> Path:
    """Per number of stones: every position with a move to make, and the rows of the tables."""
    figure, axes = plt.subplots(figsize=(WIDTH_INCHES, 3.6))
    plies = list(range(len(every)))
    axes.plot(plies, every, "k-", marker="o", ms=3, lw=2, label="every 4x5 position (mirror images once)")
    for label, counts in tables.items():
        axes.plot(plies, counts[: len(every)], marker="o", ms=3, label=label)
    axes.set_yscale("log")
    axes.set_yticks([1, 10, 100, 1000, 10_000, 100_000], ["1", "10", "100", "1,000", "10,000", "100,000"])
    axes.yaxis.set_minor_formatter(NullFormatter())
    axes.set_xticks(plies[::2])
    axes.set_xlabel("stones on the board", fontsize=NORMAL)
    axes.set_ylabel("positions", fontsize=NORMAL)
    axes.tick_params(labelsize=SMALL)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=SMALL, frameon=False, loc="lower right")
    figure.tight_layout()
    return save_svg(figure, path)


def save_svg(figure: Any, path: Path) -> Path:
    """Save as SVG with text kept as text (small files) and no date (the same file for the same numbers)."""
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "qlearning"}):
        return save_figure(figure, path, format="svg")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "tutorials" / "img", help="output folder")
    parser.add_argument("--episodes", type=int, default=200_000, help="training episodes (default 200000)")
    parser.add_argument("--every", type=int, default=10_000, help="episodes between measurements")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    plt = pyplot()
    written = [draw_epsilon(plt, args.out / "qlearning-epsilon.svg")]

    positions = decisive_positions()
    every_ply = positions_per_ply(RULES)
    full_table = sum(every_ply)
    print(f"{len(positions)} decisive positions; a full 4x5 table holds {full_table:,} positions")

    agent = QLearningAgent(RULES, seed=args.seed)
    opponent = RandomAgent(seed=args.seed + 1)
    curve = LearningCurve(window=args.every)  # ε-greedy training games, one point per --every episodes
    points: list[tuple[int, dict[str, float]]] = []
    while True:
        points.append((agent.episodes_trained, measure(agent, positions, args.seed)))
        print(
            f"{agent.episodes_trained:>8} episodes: epsilon {agent.current_epsilon():.3f}, "
            + ", ".join(f"{k} {v:,.3f}" for k, v in points[-1][1].items()),
            flush=True,
        )
        if agent.episodes_trained >= args.episodes:
            break
        episodes = min(args.every, args.episodes - agent.episodes_trained)
        agent.train(opponent, episodes, window=args.every, total_episodes=args.episodes, curve=curve)
    # rows per number of stones: the page's table (its blocks' 20,000 games, whose exploration ends at half
    # of them) and this run's
    page_agent = QLearningAgent(RULES, seed=0)
    page_agent.train(RandomAgent(seed=1), episodes=PAGE_EPISODES)
    tables = {
        f"the page's table ({PAGE_EPISODES:,} games)": table_per_ply(page_agent),
        f"this run's table ({agent.episodes_trained:,} games)": table_per_ply(agent),
    }
    for label, counts in tables.items():
        shares = ", ".join(f"{n}: {c / max(1, e):.0%}" for n, (c, e) in enumerate(zip(counts, every_ply)))
        print(f"{label}, share of each ply's positions: {shares}")

    written.append(draw_curve(plt, args.out / "qlearning-curve.svg", points, curve, full_table))
    written.append(draw_coverage(plt, args.out / "qlearning-coverage.svg", every_ply, tables))
    for path in written:
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


if __name__ == "__main__":
    main()
