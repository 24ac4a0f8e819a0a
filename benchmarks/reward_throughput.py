"""Throughput of the per-move reward for training: `solver_reward` on completions of positions drawn as the GRPO
recipe draws them (`position_dataset`: random openings where the choice matters, 6x7 by default), on one core.

Three figures, each next to its peer in the same run:

- **reward from the dataset's scores** (the recipe's path: the scores are solved when the dataset is built):
  graded completions per second, and each batch's median and p99 latency, next to **reading alone** (the
  dialect's parse of the same completions, no grading): what grading adds to reading;
- **reward solved on the fly** (a dataset without ``scores``; each position solved once by a fresh shared
  rubric, its other completions read from the rubric's cache): completions per second with the solves included;
- **the solve per position** when the dataset is built: median and p99.

Completions are ``--generations`` answers per position, as a GRPO group: each legal column written as the
dialect writes it, cycling, with one unreadable answer in every eight.

    python benchmarks/reward_throughput.py [--positions 500] [--generations 8] [--dialect connect4] [--small]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from connect4_agents.evaluation import rewards
from connect4_agents.evaluation.rewards import SolverRubric
from connect4_agents.interop.trl_rewards import draw_positions, solver_reward
from connect4_env import Board, Rules
from connect4_env.envs.dialects import get_dialect


def percentiles(seconds: list[float]) -> str:
    ms = np.asarray(seconds) * 1000
    return f"median {np.percentile(ms, 50):8.3f} ms   p99 {np.percentile(ms, 99):8.3f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--positions", type=int, default=500, help="positions drawn (default 500)")
    parser.add_argument("--generations", type=int, default=8, help="completions per position (default 8)")
    parser.add_argument("--dialect", default="connect4", help="the dialect of the answers (default connect4)")
    parser.add_argument("--small", action="store_true", help="4x5 instead of 6x7 (no book needed)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rules = Rules(4, 5, 4) if args.small else Rules()
    dialect = get_dialect(args.dialect)
    began = time.perf_counter()
    positions = draw_positions(rules, n=args.positions, seed=args.seed)
    print(
        f"{len(positions)} positions on {rules.rows}x{rules.columns} drawn in {time.perf_counter() - began:.1f} s"
    )

    # the solve per position, as the dataset builds it: a fresh rubric, so nothing is cached
    rubric, solves, scores = SolverRubric(rules), [], []
    rubric.scores(
        Board(rules).play_moves([positions[0][0]] if positions[0] else [])
    )  # compile, load the book
    for moves in positions:
        board = Board.from_moves(moves, rules)
        began = time.perf_counter()
        scores.append(list(rubric.scores(board)))
        solves.append(time.perf_counter() - began)
    print(f"solve per position (dataset build)       {percentiles(solves)}")

    completions, columns = [], {"moves": [], "rows": [], "columns": [], "win_length": [], "dialect": []}
    row_scores = []
    for index, moves in enumerate(positions):
        legal = Board.from_moves(moves, rules).legal_moves()
        for generation in range(args.generations):
            if (index * args.generations + generation) % 8 == 7:
                completions.append("I am not sure.")
            else:
                completions.append(dialect.column_text(legal[generation % len(legal)]))
            columns["moves"].append(list(moves))
            columns["rows"].append(rules.rows)
            columns["columns"].append(rules.columns)
            columns["win_length"].append(rules.win_length)
            columns["dialect"].append(args.dialect)
            row_scores.append(scores[index])
    batch = args.generations * 8  # completions per reward call: 8 prompts' groups

    def timed_batches(call: object) -> tuple[float, list[float]]:
        latencies = []
        began = time.perf_counter()
        for start in range(0, len(completions), batch):
            part = slice(start, start + batch)
            tick = time.perf_counter()
            call(part)  # type: ignore[operator]
            latencies.append(time.perf_counter() - tick)
        return len(completions) / (time.perf_counter() - began), latencies

    def graded(part: slice) -> None:
        solver_reward(
            [], completions[part], **{k: v[part] for k, v in columns.items()}, scores=row_scores[part]
        )

    def read_only(part: slice) -> None:
        for text, moves in zip(completions[part], columns["moves"][part]):
            dialect.parse(text, Board.from_moves(moves, rules))

    rate, latencies = timed_batches(graded)
    peer, peer_latencies = timed_batches(read_only)
    print(
        f"reward from the dataset's scores  {rate:>10,.0f} completions/s   per batch of {batch}: "
        f"{percentiles(latencies)}"
    )
    print(
        f"reading alone (peer)              {peer:>10,.0f} completions/s   per batch: {percentiles(peer_latencies)}"
    )
    print(f"  grading's cost: the reward runs at {rate / peer:.2f}x reading's rate")

    # on the fly: no scores in the rows; the process's shared rubric solves each position once. Drawing the
    # positions filled its cache (it solves each to keep the non-trivial ones): emptied, so the solves count
    rewards._SHARED.clear()

    def on_the_fly(part: slice) -> None:
        solver_reward([], completions[part], **{k: v[part] for k, v in columns.items()})

    fly, fly_latencies = timed_batches(on_the_fly)
    print(
        f"reward solved on the fly          {fly:>10,.0f} completions/s   per batch: {percentiles(fly_latencies)}"
    )


if __name__ == "__main__":
    main()
