"""AlphaZero self-play throughput on 6x7: games per hour with the shipped network, and where the time goes.

Plays ``--games`` self-play games (``--parallel`` of them in lockstep, ``--simulations`` PUCT simulations a
move, the training settings of ``connect4 train-alphazero``) in this process on one thread, as one worker of
``train-alphazero`` does, ``--repeats`` times, and prints the median games per hour and positions per
second. The same run times the network's forward passes apart from the rest (the tree: selection, expansion,
backup, the boards), so it also prints the most that faster tree operations alone could gain. It is the
before/after measure for self-play speed-ups: each of
``--variants`` is measured in turn in one run and its ratio to the first printed: ``before`` (float32 forward
passes through the network's modules, a fresh tree every move, no evaluation cache: self-play before these
speed-ups existed), then each speed-up alone (``cache``: ``--evaluation-cache``; ``reuse``:
``--subtree-reuse``; ``snapshot``: the forward passes through the network's inference snapshot, batch norm
folded into the convolutions, which ``NetworkEvaluator`` always takes now; ``bfloat16``: ``--precision
bfloat16``, which runs on a CPU's AMX units where it has them), ``all`` of them, the ``defaults`` of
``train-alphazero`` (all but bfloat16), and ``playout-cap``: the defaults with ``--playout-cap 0.25
--fast-simulations 20`` (a quarter of the moves searched with all the simulations and kept for training, the
rest with 20: more games an hour, fewer kept positions a game; ``kept/s`` counts the positions kept). On a CPU without native bfloat16 the variants with it are left out
unless named: bfloat16 is emulated there and many times slower.

    python benchmarks/selfplay_throughput.py [--games 32] [--parallel 32] [--simulations 100] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from functools import partial

import numpy as np
import torch

from connect4_agents.alphazero.agent import shipped_model_path
from connect4_agents.alphazero.config import AlphaZeroTrainConfig
from connect4_agents.alphazero.files import load_model
from connect4_agents.alphazero.network import NetworkEvaluator, native_bfloat16
from connect4_agents.alphazero.selfplay import self_play


class TimedEvaluator(NetworkEvaluator):
    """The network evaluator, adding up the seconds its forward passes take."""

    seconds = 0.0
    calls = 0

    def predict(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        began = time.perf_counter()
        try:
            return super().predict(planes)
        finally:
            TimedEvaluator.seconds += time.perf_counter() - began
            TimedEvaluator.calls += 1


# each setting as train-alphazero options, and whether the forward passes use the inference snapshot
VARIANTS: dict[str, tuple[dict[str, object], bool]] = {
    "before": ({"precision": "float32", "subtree_reuse": False, "evaluation_cache": 0}, False),
    "cache": ({"precision": "float32", "subtree_reuse": False}, False),
    "reuse": ({"precision": "float32", "evaluation_cache": 0}, False),
    "snapshot": ({"precision": "float32", "subtree_reuse": False, "evaluation_cache": 0}, True),
    "bfloat16": ({"precision": "bfloat16", "subtree_reuse": False, "evaluation_cache": 0}, False),
    "all": ({"precision": "bfloat16"}, True),
    "defaults": ({}, True),
    # the defaults with playout-cap randomisation: a quarter of the moves searched in full and kept
    "playout-cap": ({"playout_cap": 0.25, "fast_simulations": 20}, True),
}
WITH_BFLOAT16 = ("bfloat16", "all")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=32)
    parser.add_argument("--parallel", type=int, default=32)
    parser.add_argument("--simulations", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--variants",
        nargs="+",
        default=None,
        choices=VARIANTS,
        help="default: before cache reuse snapshot bfloat16 all playout-cap; without native bfloat16: before "
        "cache reuse snapshot defaults playout-cap",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.variants is None:
        native = native_bfloat16()
        args.variants = (
            ["before", "cache", "reuse", "snapshot"]
            + (list(WITH_BFLOAT16) if native else ["defaults"])
            + ["playout-cap"]
        )
        if not native:
            print("this CPU has no native bfloat16: its variants are left out (name them to run them)")
    torch.set_num_threads(1)
    path = shipped_model_path()
    if path is None:
        raise SystemExit("this version ships no AlphaZero model")
    model = load_model(path)
    # self_play builds its evaluator from the network: time the forward passes through the same class
    import connect4_agents.alphazero.selfplay as selfplay_module

    rates: dict[str, list[float]] = {name: [] for name in args.variants}
    position_rates: dict[str, list[float]] = {name: [] for name in args.variants}
    network_shares: dict[str, list[float]] = {name: [] for name in args.variants}
    kept_rates: dict[str, list[float]] = {name: [] for name in args.variants}
    for repeat in range(args.repeats):  # the settings take turns, so a busy moment hits them alike
        for name in args.variants:
            settings, snapshot = VARIANTS[name]
            # snapshot=False: the forward passes through the network's modules, as before the snapshot existed
            selfplay_module.NetworkEvaluator = partial(TimedEvaluator, snapshot=snapshot)  # type: ignore[misc]
            config = AlphaZeroTrainConfig(
                simulations=args.simulations,
                parallel=args.parallel,
                games=args.games,
                seed=args.seed,
                **settings,  # type: ignore[arg-type]
            ).check()
            TimedEvaluator.seconds, TimedEvaluator.calls = 0.0, 0
            began = time.perf_counter()
            kept, _, _, plies = self_play(
                model.net, config, args.games, np.random.default_rng(args.seed + repeat)
            )
            seconds = time.perf_counter() - began
            rates[name].append(args.games / seconds * 3600)
            position_rates[name].append(plies / seconds)
            network_shares[name].append(TimedEvaluator.seconds / seconds)
            kept_rates[name].append(len(kept) / seconds)
            print(
                f"run {repeat + 1} {name}: {args.games} games, {plies} positions in {seconds:.1f} s; "
                f"{TimedEvaluator.calls} forward passes, {TimedEvaluator.seconds:.1f} s in the network"
            )
    print(
        f"self-play at {args.simulations} simulations, {args.parallel} games in lockstep, one thread (medians):"
    )
    first = args.variants[0]
    for name in args.variants:
        share = statistics.median(network_shares[name])
        ratio = statistics.median(rates[name]) / statistics.median(rates[first])
        print(
            f"  {name:9s} {statistics.median(rates[name]):7,.0f} games/hour "
            f"{statistics.median(position_rates[name]):6.1f} positions/s "
            f"({statistics.median(kept_rates[name]):5.1f} kept/s)  {ratio:4.2f}x {first}; "
            f"network {share:.0%} of the time"
        )


if __name__ == "__main__":
    main()
