"""AlphaZero self-play throughput on 6x7: games per hour with the shipped network, and where the time goes.

Plays ``--games`` self-play games (``--simulations`` PUCT simulations a move, the training settings of
``connect4 train-alphazero``) in this process on one thread, as one worker of ``train-alphazero`` does,
``--repeats`` times, and prints the median games per hour and positions per second (games differ in length
from run to run: positions per second is the steadier ratio). The same run times the network's forward passes
apart from the rest (the tree: selection, expansion, backup, the boards). It is the before/after measure for
self-play speed-ups: each of ``--variants`` is measured in turn in one run and its ratio to the first printed:

- ``before``: self-play before these speed-ups existed: float32 forward passes through the network's modules,
  a fresh tree every move, no evaluation cache, 32 games in lockstep (the old default). It runs, as every
  variant through the modules does, with subnormal floats flushed to zero (``torch.set_flush_denormal``): the
  shipped weights hold subnormals, which the inference snapshot zeroes, and on an Intel CPU they slow the
  modules about 11x; flushing them keeps the ratios about the speed-ups rather than that accident;
- each speed-up alone, on top of ``before``: ``cache`` (``--evaluation-cache``), ``reuse``
  (``--subtree-reuse``), ``snapshot`` (the forward passes through the network's inference snapshot, batch
  norm folded into the convolutions, which ``NetworkEvaluator`` always takes now), ``bfloat16`` (the snapshot
  in bfloat16, ``--precision bfloat16``, on a CPU's AMX units where it has them), ``lockstep`` (128 games in
  lockstep, ``--parallel 128``, the default now: bigger network batches);
- ``defaults``: the defaults of ``train-alphazero`` (all of them, bfloat16 only where the CPU computes it
  natively, else Winograd convolutions in float32); ``float32``: the defaults with plain float32 convolutions;
  ``winograd``: the defaults with the residual blocks' convolutions as Winograd convolutions, in float32 (what
  a CPU without native bfloat16 gets, with numba);
- ``playout-cap``: the defaults with ``--playout-cap 0.25 --fast-simulations 20`` (a quarter of the moves
  searched with all the simulations and kept for training, the rest with 20: more games an hour, fewer kept
  positions a game; ``kept/s`` counts the positions kept).

On a CPU without native bfloat16 the variants with it are left out unless named: bfloat16 is emulated there
and many times slower (``defaults`` is then float32). ``--parallel`` sets the games in lockstep of every
variant.

    python benchmarks/selfplay_throughput.py [--games 128] [--simulations 100] [--repeats 3] [--variants ...]
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
BEFORE: dict[str, object] = {
    "precision": "float32",
    "subtree_reuse": False,
    "evaluation_cache": 0,
    "parallel": 32,
}
VARIANTS: dict[str, tuple[dict[str, object], bool]] = {
    "before": (BEFORE, False),
    "cache": ({**BEFORE, "evaluation_cache": 200_000}, False),
    "reuse": ({**BEFORE, "subtree_reuse": True}, False),
    "snapshot": (BEFORE, True),
    "bfloat16": ({**BEFORE, "precision": "bfloat16"}, True),
    "lockstep": ({**BEFORE, "parallel": 128}, False),
    "defaults": ({}, True),
    "float32": ({"precision": "float32"}, True),
    "winograd": ({"precision": "winograd"}, True),
    # the defaults with playout-cap randomisation: a quarter of the moves searched in full and kept
    "playout-cap": ({"playout_cap": 0.25, "fast_simulations": 20}, True),
}
WITH_BFLOAT16 = ("bfloat16",)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=128)
    parser.add_argument(
        "--parallel", type=int, default=None, help="games in lockstep, every variant (default: each its own)"
    )
    parser.add_argument("--simulations", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--variants",
        nargs="+",
        default=None,
        choices=VARIANTS,
        help="default: before cache reuse snapshot bfloat16 lockstep defaults float32 playout-cap; without "
        "native bfloat16, bfloat16 and float32 are left out",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.variants is None:
        native = native_bfloat16()
        args.variants = [
            name for name in VARIANTS if native or name not in (*WITH_BFLOAT16, "float32")
        ]  # without it, the defaults are float32
        if not native:
            print("this CPU has no native bfloat16: its variants are left out (name them to run them)")
    torch.set_num_threads(1)
    path = shipped_model_path()
    if path is None:
        raise SystemExit("this version ships no AlphaZero model")
    model = load_model(path)
    # self_play builds its evaluator from the network: time the forward passes through the same class
    import connect4_agents.alphazero.selfplay as selfplay_module

    if any(
        selfplay_module.forward_precision(str(VARIANTS[name][0].get("precision", "auto"))) == "winograd"
        for name in args.variants
    ):
        with torch.inference_mode():  # compile (or load) the Winograd kernels before anything is timed
            model.net.inference(winograd=True)(torch.zeros(1, 2, 6, 7))
    rates: dict[str, list[float]] = {name: [] for name in args.variants}
    position_rates: dict[str, list[float]] = {name: [] for name in args.variants}
    network_shares: dict[str, list[float]] = {name: [] for name in args.variants}
    kept_rates: dict[str, list[float]] = {name: [] for name in args.variants}
    for repeat in range(args.repeats):  # the settings take turns, so a busy moment hits them alike
        for name in args.variants:
            settings, snapshot = VARIANTS[name]
            # snapshot=False: the forward passes through the network's modules, as before the snapshot existed
            selfplay_module.NetworkEvaluator = partial(TimedEvaluator, snapshot=snapshot)  # type: ignore[misc]
            if args.parallel is not None:
                settings = {**settings, "parallel": args.parallel}
            if "fast_simulations" in settings:  # at most the full searches' simulations
                settings = {
                    **settings,
                    "fast_simulations": min(settings["fast_simulations"], args.simulations),
                }
            config = AlphaZeroTrainConfig(
                simulations=args.simulations,
                games=args.games,
                seed=args.seed,
                **settings,  # type: ignore[arg-type]
            ).check()
            torch.set_flush_denormal(not snapshot)  # the modules hold the subnormals: see the docstring
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
    torch.set_flush_denormal(False)
    print(f"self-play at {args.simulations} simulations, {args.games} games, one thread (medians):")
    first = args.variants[0]
    for name in args.variants:
        share = statistics.median(network_shares[name])
        ratio = statistics.median(rates[name]) / statistics.median(rates[first])
        position_ratio = statistics.median(position_rates[name]) / statistics.median(position_rates[first])
        print(
            f"  {name:11s} {statistics.median(rates[name]):7,.0f} games/hour ({ratio:5.2f}x {first}) "
            f"{statistics.median(position_rates[name]):6.1f} positions/s ({position_ratio:5.2f}x) "
            f"{statistics.median(kept_rates[name]):6.1f} kept/s; network {share:.0%} of the time"
        )


if __name__ == "__main__":
    main()
