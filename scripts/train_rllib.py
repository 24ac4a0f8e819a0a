"""PPO self-play with RLlib: one shared, action-masked policy for both seats, then games against the ladder.

    make test-rllib                                   # builds .venv-rllib (ray[rllib] pins its own gymnasium)
    .venv-rllib/bin/python scripts/train_rllib.py --iterations 50
    .venv-rllib/bin/python scripts/train_rllib.py --address auto --env-runners 8    # on a running Ray cluster

Uses connect4_env.rllib's multi-agent env (observations laid out for RLlib's ActionMaskingTorchRLModule) on
RLlib's new API stack. Saves an RLlib checkpoint per --checkpoint-every iterations and at the end under
--out (RLlib's own format: restore it with Algorithm.from_checkpoint, which unpickles, so only your own), prints
episodes and mean episode length per iteration, and plays the trained policy (greedy) against --eval-opponents, rating it against the reference ladder's fixed Elo
on 6x7.
Fails (exit 1) if an iteration played no episode: RLlib's env runners can crash while training goes on.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from connect4_agents._support.cli import check_output_dir, positive_int, run_cli
from connect4_agents.evaluation.arena import play_match
from connect4_agents.evaluation.ratings import PairingCounts, fit_ratings, reference_ladder

from connect4_env import Rules


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--iterations", type=positive_int, default=20, help="training iterations (default 20)"
    )
    parser.add_argument("--rows", type=int, default=6)
    parser.add_argument("--columns", type=int, default=7)
    parser.add_argument("--win-length", type=int, default=4)
    parser.add_argument("--env-runners", type=int, default=1, help="RLlib env runners (default 1)")
    parser.add_argument("--batch-size", type=positive_int, default=4000, help="env steps per iteration")
    parser.add_argument("--minibatch-size", type=positive_int, default=256)
    parser.add_argument("--epochs", type=positive_int, default=6, help="passes over each batch")
    parser.add_argument("--hidden", type=positive_int, nargs="+", default=[256, 256], help="MLP layer sizes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--address", default=None, help="a Ray cluster's address (default: a local Ray)")
    parser.add_argument("--num-cpus", type=positive_int, default=None, help="CPUs for a local Ray")
    parser.add_argument("--out", default="runs/rllib", help="folder for the checkpoints")
    parser.add_argument("--checkpoint-every", type=positive_int, default=10)
    parser.add_argument("--eval-games", type=int, default=40, help="games per ladder opponent (0: none)")
    parser.add_argument("--eval-opponents", nargs="*", default=["random", "mcts:10", "mcts:100"])
    return parser


def make_config(args: argparse.Namespace) -> Any:
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from ray.tune.registry import register_env

    from connect4_env.rllib import Connect4MultiAgentEnv

    register_env("connect4_env", lambda config: Connect4MultiAgentEnv(config))
    env_config = {"rows": args.rows, "columns": args.columns, "win_length": args.win_length}
    Connect4MultiAgentEnv(env_config)  # a bad board fails here, not in an env runner
    return (
        PPOConfig()
        .environment("connect4_env", env_config=env_config)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kwargs: "shared")
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    "shared": RLModuleSpec(
                        module_class=ActionMaskingTorchRLModule,
                        model_config={"fcnet_hiddens": list(args.hidden), "head_fcnet_hiddens": []},
                    )
                }
            )
        )
        .env_runners(num_env_runners=args.env_runners, num_cpus_per_env_runner=1)
        .training(
            train_batch_size_per_learner=args.batch_size,
            minibatch_size=args.minibatch_size,
            num_epochs=args.epochs,
            lr=3e-4,
            entropy_coeff=0.01,
        )
        .debugging(seed=args.seed)
    )


def episodes_of(result: dict[str, Any]) -> tuple[int, float]:
    runners = result.get("env_runners", {})
    return int(runners.get("num_episodes", 0) or 0), float(runners.get("episode_len_mean", float("nan")))


def train(args: argparse.Namespace) -> int:
    import ray
    from connect4_agents.rllib.agent import RLlibAgent

    from connect4_env.policy import policy_from_spec

    out = check_output_dir(args.out)
    rules = Rules(args.rows, args.columns, args.win_length)
    opponents = {spec: policy_from_spec(spec, seed=args.seed, rules=rules) for spec in args.eval_opponents}
    options: dict[str, Any] = {"include_dashboard": False, "logging_level": "ERROR"}
    options.update({"address": args.address} if args.address else {"num_cpus": args.num_cpus})
    ray.init(**options)
    try:
        algo = make_config(args).build_algo()
        try:
            for iteration in range(1, args.iterations + 1):
                result = algo.train()
                episodes, length = episodes_of(result)
                print(
                    f"iteration {iteration}: {episodes} episodes, mean length {length:.1f} plies", flush=True
                )
                if episodes == 0:
                    print(
                        "error: no episode was played: the env runners failed (see the log above)",
                        file=sys.stderr,
                    )
                    return 1
                if iteration % args.checkpoint_every == 0 or iteration == args.iterations:
                    path = algo.save(str(Path(out, f"checkpoint_{iteration:04d}").resolve()))
                    print(f"checkpoint: {path.checkpoint.path}", flush=True)
            agent = RLlibAgent(algo.get_module("shared"))
            counts = []
            for spec, opponent in opponents.items():
                if args.eval_games > 0:
                    match = play_match(agent, opponent, args.eval_games, rules)
                    print(match.table("rllib", spec), flush=True)
                    counts.append(PairingCounts("rllib", spec, match.wins, match.draws, match.losses))
            ladder = reference_ladder()
            if counts and rules == Rules() and all(c.b in ladder for c in counts):
                fixed = {c.b: ladder[c.b] for c in counts}
                print(fit_ratings(counts, fixed=fixed, bootstrap=200, seed=args.seed).table(), flush=True)
        finally:
            algo.stop()
    finally:
        ray.shutdown()
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_cli(train, build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
