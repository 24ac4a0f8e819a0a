"""Random-play throughput of the batched env at batch 1, 64, 1024 and 4096, next to pgx's connect_four.

Both sides play uniformly random legal moves: the learner's actions come from the masks, the env's random
opponent replies. We count board moves (stones dropped, the opponent's included) per second, which is what
one pgx ``step`` is; env steps per second (one learner move and the reply) are shown too. pgx (JAX on CPU,
``jit(vmap(step))``) runs in the same process when it is installed (``pip install pgx``).

Our env runs on one core; XLA spreads pgx over every core it sees. For a one-core comparison pin the process:

    taskset -c 0 python benchmarks/vector_throughput.py [--seconds 3] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np

from connect4_agents import RandomAgent
from connect4_env.envs.vector_env import Connect4VectorEnv


def ours(
    batch: int, seconds: float, seed: int, warmup: float = 1.0, **env_kwargs: Any
) -> tuple[float, float]:
    env = Connect4VectorEnv(num_envs=batch, opponent=RandomAgent(seed=seed), **env_kwargs)
    env.reset(seed=seed)
    learner = RandomAgent(seed=seed + 1000)
    moves = steps = 0
    start = time.perf_counter()
    # Warm up first, as pgx is (its compile): the allocator settles into steady state for the per-step arrays.
    resetting = np.zeros(batch, dtype=bool)  # games that ended last step: the next step resets them
    while time.perf_counter() - start < warmup:
        _, _, resetting, _, _ = env.step(learner.act_batch(None, env.action_masks()))
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        actions = learner.act_batch(None, env.action_masks())
        before = env.boards.ply.copy()
        _, _, terminated, _, _ = env.step(actions)
        after = env.boards.ply
        moves += int(np.where(resetting, after, after - before).sum())
        resetting = terminated
        steps += batch
    elapsed = time.perf_counter() - start
    return moves / elapsed, steps / elapsed


def pgx_rate(batch: int, seconds: float, seed: int) -> float | None:
    try:
        import jax
        import jax.numpy as jnp
        import pgx
    except ImportError:
        return None
    env = pgx.make("connect_four")
    init = jax.jit(jax.vmap(env.init))
    step = jax.jit(jax.vmap(env.step))

    @jax.jit
    def random_actions(key, mask):
        logits = jnp.where(mask, 0.0, -jnp.inf)
        return jax.random.categorical(key, logits, axis=-1)

    @jax.jit
    def autoreset(state, key):
        fresh = init(jax.random.split(key, batch))
        done = state.terminated | state.truncated
        return jax.tree_util.tree_map(
            lambda new, old: jnp.where(done.reshape((-1,) + (1,) * (old.ndim - 1)), new, old), fresh, state
        )

    key = jax.random.PRNGKey(seed)
    key, sub = jax.random.split(key)
    state = init(jax.random.split(sub, batch))
    for _ in range(3):  # compile
        key, a, b = jax.random.split(key, 3)
        state = autoreset(step(state, random_actions(a, state.legal_action_mask)), b)
    jax.block_until_ready(state)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        key, a, b = jax.random.split(key, 3)
        state = autoreset(step(state, random_actions(a, state.legal_action_mask)), b)
        steps += batch
    jax.block_until_ready(state)
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per measurement")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"random play on 6x7, median of {args.repeats} runs of {args.seconds} s, {cores} core(s) available")
    print(f"{'env':34s} {'batch':>6} {'board moves/s':>15} {'env steps/s':>13}")
    best_ours = 0.0
    variants = [("Connect4VectorEnv", {}, (1, 64, 1024, 4096))]
    variants.append(("  plain Python (compiled=False)", {"compiled": False}, (4096,)))
    variants.append(("  copy=False (own buffer)", {"copy": False}, (4096,)))
    for label, kwargs, batches in variants:
        for batch in batches:
            runs = [ours(batch, args.seconds, seed, **kwargs) for seed in range(args.repeats)]
            moves = statistics.median(r[0] for r in runs)
            steps = statistics.median(r[1] for r in runs)
            if not kwargs and batch == 4096:
                best_ours = moves
            print(f"{label:34s} {batch:>6} {moves:>15,.0f} {steps:>13,.0f}")
    rates = [pgx_rate(4096, args.seconds, seed) for seed in range(args.repeats)]
    if rates[0] is None:
        print("pgx is not installed: pip install pgx to compare")
        return
    pgx_median = statistics.median(r for r in rates if r is not None)
    print(f"{'pgx connect_four (JAX, CPU)':34s} {4096:>6} {pgx_median:>15,.0f}")
    print(f"ratio at batch 4096, defaults (board moves/s): {best_ours / pgx_median:.2f}x pgx")


if __name__ == "__main__":
    main()
