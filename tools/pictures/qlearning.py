"""Regenerate the pictures of the tutorial docs/tutorials/qlearning.md ("Tabular Q-learning").

    .venv/bin/python tools/pictures/qlearning.py            # writes docs/tutorials/img/qlearning-curve.png

One Q-learning run on 4x5 (four in a row) against a random player, at the package's default settings, with the
table measured every ``--every`` episodes while it trains: greedy games against a fresh random player and
against MCTS with 10 playouts, the share of decisive test-set positions where its move keeps the best outcome,
and the number of positions in the table. The numbers are printed as well. About a minute on one core.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from connect4_agents import MCTSAgent, QLearningAgent, RandomAgent
from connect4_agents._support.figures import pyplot, save_figure
from connect4_agents.evaluation import Position, evaluate_accuracy, load_test_set
from connect4_agents.evaluation.arena import play_match
from connect4_agents.evaluation.curves import LearningCurve
from connect4_env import Rules

ROOT = Path(__file__).resolve().parents[2]
RULES = Rules(4, 5, 4)


def decisive_positions() -> list[Position]:
    """The 4x5 test-set positions where at least one legal move gives the best outcome away."""
    return [p for p in load_test_set("4x5") if p.nontrivial]


def count_positions(rules: Rules) -> int:
    """Positions with a move to make (the game not over), mirror images counted once: what a full table holds.

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
    canonical = 0
    while len(stones):
        keys = np.minimum(mover + stones + bottom, mirror(mover) + mirror(stones) + bottom)
        canonical += len(np.unique(keys))
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

    positions = decisive_positions()
    full_table = count_positions(RULES)
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

    plt = pyplot()
    figure, (rates, table) = plt.subplots(1, 2, figsize=(11, 4.6), gridspec_kw={"width_ratios": [3, 2]})
    x = [e / 1000 for e, _ in points]
    rates.plot(x, [m["win_vs_random"] for _, m in points], marker=".", label="greedy: wins against random")
    rates.plot(
        x, [m["score_vs_mcts10"] for _, m in points], marker=".", label="greedy: score against mcts:10"
    )
    rates.plot(x, [m["accuracy"] for _, m in points], marker=".", label="greedy: best outcome kept (solver)")
    rates.plot([e / 1000 for e in curve.episodes], curve.win_rate, color="gray", label="training games: wins")
    rates.plot([e / 1000 for e in curve.episodes], curve.epsilon, color="black", linestyle="--", label="ε")
    rates.set_xlabel("thousands of training episodes against random")
    rates.set_ylim(0, 1)
    rates.set_title("Q-learning on 4x5, default settings")
    rates.grid(alpha=0.3)
    table.plot(x, [m["states"] / 1000 for _, m in points], marker=".", label="positions in the table")
    table.axhline(full_table / 1000, color="tab:red", linestyle=":", label="every 4x5 position")
    table.set_xlabel("thousands of training episodes against random")
    table.set_ylabel("thousands of positions")
    table.set_title("table size")
    table.grid(alpha=0.3)
    handles = [h for axis in (rates, table) for h in axis.get_legend_handles_labels()[0]]
    figure.legend(handles=handles, loc="lower center", ncol=4, fontsize=8, frameon=False)
    figure.tight_layout(rect=(0, 0.1, 1, 1))
    path = save_figure(figure, args.out / "qlearning-curve.png", dpi=80)
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


if __name__ == "__main__":
    main()
