"""AlphaZero self-play throughput on 6x7: games per hour with the shipped network, and where the time goes.

Plays ``--games`` self-play games (``--parallel`` of them in lockstep, ``--simulations`` PUCT simulations a
move, the training settings of ``connect4 train-alphazero``) in this process on one thread, as one worker of
``train-alphazero`` does, ``--repeats`` times, and prints the median games per hour and positions per
second. The same run times the network's forward passes apart from the rest (the tree: selection, expansion,
backup, the boards), so it also prints the most that faster tree operations alone could gain. It is the
before/after measure for self-play speed-ups: run it on both versions on the same machine. Each
``--precisions`` setting (``train-alphazero --precision``: float32, bfloat16) is measured in turn in one run, and
the ratio printed: bfloat16's forward passes run on a CPU's AMX units where it has them.

    python benchmarks/selfplay_throughput.py [--games 32] [--parallel 32] [--simulations 100] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from connect4_agents.alphazero.config import PRECISIONS, AlphaZeroTrainConfig
from connect4_agents.alphazero.files import load_model
from connect4_agents.alphazero.network import NetworkEvaluator
from connect4_agents.alphazero.selfplay import self_play
from connect4_agents.alphazero.agent import shipped_model_path


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=32)
    parser.add_argument("--parallel", type=int, default=32)
    parser.add_argument("--simulations", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--precisions", nargs="+", default=list(PRECISIONS), choices=PRECISIONS)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    path = shipped_model_path()
    if path is None:
        raise SystemExit("this version ships no AlphaZero model")
    model = load_model(path)
    # self_play builds its evaluator from the network: time the forward passes through the same class
    import connect4_agents.alphazero.selfplay as selfplay_module

    selfplay_module.NetworkEvaluator = TimedEvaluator  # type: ignore[misc]
    rates: dict[str, list[float]] = {p: [] for p in args.precisions}
    position_rates: dict[str, list[float]] = {p: [] for p in args.precisions}
    network_shares: dict[str, list[float]] = {p: [] for p in args.precisions}
    for repeat in range(args.repeats):  # the settings take turns, so a busy moment hits them alike
        for precision in args.precisions:
            config = AlphaZeroTrainConfig(
                simulations=args.simulations,
                parallel=args.parallel,
                games=args.games,
                seed=args.seed,
                precision=precision,
            ).check()
            TimedEvaluator.seconds, TimedEvaluator.calls = 0.0, 0
            began = time.perf_counter()
            _, _, _, plies = self_play(model.net, config, args.games, np.random.default_rng(args.seed + repeat))
            seconds = time.perf_counter() - began
            rates[precision].append(args.games / seconds * 3600)
            position_rates[precision].append(plies / seconds)
            network_shares[precision].append(TimedEvaluator.seconds / seconds)
            print(
                f"run {repeat + 1} {precision}: {args.games} games, {plies} positions in {seconds:.1f} s; "
                f"{TimedEvaluator.calls} forward passes, {TimedEvaluator.seconds:.1f} s in the network"
            )
    print(f"self-play at {args.simulations} simulations, {args.parallel} games in lockstep, one thread (medians):")
    for precision in args.precisions:
        share = statistics.median(network_shares[precision])
        print(
            f"  {precision:9s} {statistics.median(rates[precision]):7,.0f} games/hour "
            f"{statistics.median(position_rates[precision]):6.1f} positions/s; network {share:.0%} of the time "
            f"(free tree operations: at most {1 / share:.1f}x faster)"
        )
    if len(args.precisions) > 1:
        first, *others = args.precisions
        for other in others:
            ratio = statistics.median(rates[other]) / statistics.median(rates[first])
            print(f"games/hour, {other} / {first}: {ratio:.2f}x")


if __name__ == "__main__":
    main()
