"""Self-play's sample-efficiency options, each trained for the same wall time and measured against perfect play.

Trains one AlphaZero model per variant and seed on 4x5 (four in a row; the tutorial's network and settings:
32 channels, 2 blocks, 32 games of 32 simulations a generation, 100 steps of 128), each for ``--minutes`` of
wall time on one core (``--workers`` runs at once), then scores every model on ``--positions`` positions drawn
by random play and labelled by the exact solver (a seed of their own: no run saw or tuned on them), keeping
those where the choice matters (some legal move gives the best outcome away). Variants:

- ``baseline``: ``train-alphazero``'s defaults;
- ``playout-cap``: playout-cap randomisation, ``--playout-cap 0.25 --fast-simulations 8`` (a quarter of the
  moves searched with 32 simulations and kept for training, the rest with 8 and not kept);
- ``value-mix``: ``--value-mix 0.5`` (value targets half the game's result, half the search's root value);
- ``both``: the two together.

Prints, per variant, the generations and games each run fitted in the time, and the share of errors (moves
whose win/draw/loss class is below the best) of the raw policy and of a 32-simulation search, per seed and
pooled over the seeds with a 95 % Wilson interval. The board is small so that a CPU can train it to a
measurable level in minutes; it is a proxy for 6x7, not a 6x7 result.

    python benchmarks/training_tricks.py [--minutes 5] [--seeds 3] [--workers 2] [--positions 1500]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
from typing import Any

import torch

from connect4_agents import AlphaZeroAgent
from connect4_agents.alphazero.config import AlphaZeroTrainConfig
from connect4_agents.alphazero.monitor import GenerationLog
from connect4_agents.alphazero.train import train
from connect4_agents.evaluation import evaluate_accuracy
from connect4_agents.evaluation.arena import wilson_interval
from connect4_agents.evaluation.backends import run_batches
from connect4_agents.evaluation.test_set_generation import generate_test_set
from connect4_agents.evaluation.test_sets import Position, TestSetSpec

BASE: dict[str, Any] = {
    "rows": 4,
    "columns": 5,
    "win_length": 4,
    "channels": 32,
    "blocks": 2,
    "generations": 100_000,  # the wall time ends each run
    "games": 32,
    "parallel": 32,
    "simulations": 32,
    "steps": 100,
    "batch_size": 128,
    "eval_positions": 0,
    "ladder_every": 0,
}
VARIANTS: dict[str, dict[str, Any]] = {
    "baseline": {},
    "playout-cap": {"playout_cap": 0.25, "fast_simulations": 8},
    "value-mix": {"value_mix": 0.5},
    "both": {"playout_cap": 0.25, "fast_simulations": 8, "value_mix": 0.5},
}
SEARCH_SIMULATIONS = 32


class _TimeUp(Exception):
    """The run's wall time is spent (raised after a generation was saved)."""


def _run(task: tuple[str, int, float, list[Position]]) -> dict[str, Any]:
    """Train one variant with one seed for ``seconds``, then score its model on ``positions``."""
    variant, seed, seconds, positions = task
    torch.set_num_threads(1)
    config = AlphaZeroTrainConfig(**BASE, **VARIANTS[variant], seed=seed)
    logs: list[GenerationLog] = []
    began = time.perf_counter()

    def stop_in_time(log: GenerationLog) -> None:
        logs.append(log)
        if time.perf_counter() - began >= seconds:
            raise _TimeUp

    with tempfile.TemporaryDirectory() as folder:
        with contextlib.suppress(_TimeUp):
            train(config, folder, on_generation=stop_in_time)
        model = f"{folder}/model.zip"
        errors = {}
        for simulations in (0, SEARCH_SIMULATIONS):
            agent = AlphaZeroAgent.load(model, simulations=simulations, seed=seed)
            report = evaluate_accuracy(agent, positions, workers=1, progress=False, seed=seed)
            errors[simulations] = report.n - report.optimal_class
    return {
        "variant": variant,
        "seed": seed,
        "seconds": time.perf_counter() - began,
        "generations": len(logs),
        "games": sum(log.games for log in logs),
        "positions": sum(log.positions for log in logs),
        "n": len(positions),
        "raw_errors": errors[0],
        "search_errors": errors[SEARCH_SIMULATIONS],
    }


def _pooled(rows: list[dict[str, Any]], key: str) -> str:
    errors, n = sum(r[key] for r in rows), sum(r["n"] for r in rows)
    low, high = wilson_interval(errors, n)
    per_seed = " ".join(f"{r[key] / r['n']:5.1%}" for r in rows)
    return f"{errors / n:5.1%} [{low:5.1%}, {high:5.1%}] (seeds: {per_seed})"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=float, default=5.0, help="wall time of each run (default 5)")
    parser.add_argument("--seeds", type=int, default=3, help="runs per variant (default 3)")
    parser.add_argument("--workers", type=int, default=2, help="runs at once, one core each (default 2)")
    parser.add_argument(
        "--positions", type=int, default=1500, help="positions drawn for the scoring (default 1500)"
    )
    parser.add_argument("--variants", nargs="+", choices=sorted(VARIANTS), default=list(VARIANTS))
    args = parser.parse_args()

    drawn = generate_test_set(TestSetSpec("4x5-heldout", 4, 5, 4, args.positions, (0, 19)), seed=20261126)
    positions = [p for p in drawn if p.nontrivial]
    print(f"{len(positions)} of {len(drawn)} drawn 4x5 positions where the choice matters")
    tasks = [(v, seed, args.minutes * 60, positions) for v in args.variants for seed in range(args.seeds)]
    results = run_batches(_run, tasks, workers=args.workers)
    print(
        f"\n4x5, {args.minutes:g} min of wall time a run, one core each, {args.seeds} seeds; errors = moves"
    )
    print(
        "whose win/draw/loss class is below the best, on the positions above (95 % Wilson interval, pooled)"
    )
    for variant in args.variants:
        rows = [r for r in results if r["variant"] == variant]
        generations = statistics.median(r["generations"] for r in rows)
        games = statistics.median(r["games"] for r in rows)
        kept = statistics.median(r["positions"] for r in rows)
        print(f"{variant:12} median {generations:g} generations, {games:g} games, {kept:g} positions kept")
        print(f"{'':12} raw policy     {_pooled(rows, 'raw_errors')}")
        print(f"{'':12} {SEARCH_SIMULATIONS} simulations {_pooled(rows, 'search_errors')}")


if __name__ == "__main__":
    main()
