"""Opponent pools in the batched env: the speed of 4 network members against 1, and the episode-boundary rule.

Speed: a 64-game ``Connect4-v0`` vector env whose opponent is one SB3 network (MaskablePPO's default MLP,
through ``SB3Agent.act_batch``), next to the same env whose opponent is an ``OpponentPool`` of 4 such networks
(each game draws one when it starts; the games facing one member are answered in one call a step). The learner
plays random legal columns. Env steps per second, median of ``--repeats`` runs of ``--steps`` steps each; the
ratio pool / single is the figure (the peer is the single-member env in the same run).

Correctness: 64 games of the pool env until ``--episodes`` games have ended, the pool changed every
``--change-every`` steps (a new member joins, the oldest leaves, a weight changes). Every game must keep the name
``info["opponent"]`` gave at its start to its end, and every reply must be the named member's (deterministic
networks, replayed from the boards).

    python benchmarks/pool_throughput.py [--steps 2000] [--repeats 5] [--episodes 10000]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from connect4_agents import RandomAgent
from connect4_agents.sb3.agent import SB3Agent
from connect4_env import OpponentPool
from connect4_env.encoding import action_mask, observation_planes
from connect4_env.envs.vector_env import Connect4VectorEnv


def network(seed: int) -> SB3Agent:
    """A freshly initialised MaskablePPO MLP policy (deterministic moves), as a pool member."""
    from sb3_contrib import MaskablePPO

    from connect4_env import make_sb3_vec_env

    venv = make_sb3_vec_env(1, monitor=False)
    model = MaskablePPO("MlpPolicy", venv, seed=seed, device="cpu")
    venv.close()
    return SB3Agent(model.policy, deterministic=True)


def rate(opponent, steps: int, seed: int) -> float:
    env = Connect4VectorEnv(num_envs=64, opponent=opponent, agent_first=None)
    env.reset(seed=seed)
    learner = RandomAgent(seed=seed)
    for _ in range(50):  # warm-up
        env.step(learner.act_batch(None, env.action_masks()))
    start = time.perf_counter()
    for _ in range(steps):
        env.step(learner.act_batch(None, env.action_masks()))
    return steps * 64 / (time.perf_counter() - start)


def check_boundaries(
    members: list[SB3Agent], episodes: int, change_every: int, seed: int
) -> tuple[int, int, int]:
    """Episodes ended, replies checked, violations (a name changed mid-game or a reply not the member's)."""
    pool = OpponentPool({f"m{k}": member for k, member in enumerate(members)}, sampling="weights", seed=seed)
    env = Connect4VectorEnv(num_envs=64, opponent=pool, agent_first=None)
    learner = RandomAgent(seed=seed)
    _, info = env.reset(seed=seed)
    names = info["opponent"].copy()
    ended = checked = violations = step = 0
    spare = 0
    while ended < episodes:
        step += 1
        if step % change_every == 0:  # a member joins, the oldest leaves, a weight changes
            spare += 1
            pool.add(f"n{spare}", members[spare % len(members)], weight=1.0 + spare % 3)
            pool.remove(pool.names[0])
            pool.set_weight(pool.names[-1], 0.5)
        boards = [env.boards.board(i) for i in range(64)]
        restarting = env._needs_reset.copy()
        actions = learner.act_batch(None, env.action_masks())
        _, _, terminated, _, info = env.step(actions)
        for i in range(64):
            if restarting[i]:
                names[i] = info["opponent"][i]
                continue
            violations += info["opponent"][i] != names[i]
            board = boards[i]
            if not board.play(int(actions[i])) and board.ply < board.rules.cells:
                after = env.boards.board(i)
                grown = [c for c in range(board.rules.columns) if after.heights[c] != board.heights[c]]
                member = pool[names[i]] if names[i] in pool else _retired(pool, names[i], members)
                expected = member.act(observation_planes(board, board.to_move), action_mask(board))
                violations += grown != [expected]
                checked += 1
            ended += int(terminated[i])
    return ended, checked, violations


def _retired(pool: OpponentPool, name: str, members: list[SB3Agent]) -> SB3Agent:
    """A member that left the pool while games against it went on: the policy it was added with."""
    index = int(name[1:])
    return members[index % len(members)] if name.startswith("n") else members[index]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--change-every", type=int, default=200)
    args = parser.parse_args()
    torch.set_num_threads(1)
    members = [network(seed) for seed in range(4)]
    single, pooled = [], []
    for repeat in range(args.repeats):
        single.append(rate(members[0], args.steps, repeat))
        pooled.append(
            rate(OpponentPool({f"m{k}": m for k, m in enumerate(members)}, seed=repeat), args.steps, repeat)
        )
    one, four = statistics.median(single), statistics.median(pooled)
    print(
        f"64 games, learner random; env steps per second, median of {args.repeats} runs of {args.steps} steps"
    )
    print(f"  1 network member : {one:10,.0f}  (runs: {', '.join(f'{r:,.0f}' for r in single)})")
    print(f"  4 network members: {four:10,.0f}  (runs: {', '.join(f'{r:,.0f}' for r in pooled)})")
    print(f"  ratio 4 / 1      : {four / one:10.2f}")
    ended, checked, violations = check_boundaries(members, args.episodes, args.change_every, seed=7)
    print(
        f"episode boundaries: {ended:,} episodes, pool changed every {args.change_every} steps, {checked:,} replies "
        f"checked, {violations} violations"
    )


if __name__ == "__main__":
    main()
