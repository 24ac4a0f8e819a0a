"""Self-play PPO for Connect Four in one file, CleanRL style: torch, the batched env and an opponent pool.

    python recipes/selfplay_ppo.py                       # 64 games at once, 2M steps
    python recipes/selfplay_ppo.py --total-steps 200000  # a quick look
    python recipes/selfplay_ppo.py --help                # every option, its meaning and its default

The learner plays ``gym.make_vec("Connect4-v0")`` against an ``OpponentPool``: it starts with random play and
``mcts:10``, and every ``--snapshot-every`` updates a frozen copy of the learner joins it. Each game draws its
opponent when it starts (prioritised fictitious self-play: the members the learner loses to come up more often) and
keeps it to the end. Illegal columns are masked out of the policy. At the end the learner plays ``--eval-games``
games against random play and ``mcts:100`` (greedy, a random side each game).

It prints what it runs and where its files go, then a progress line every ``--log-every`` updates (steps done of
the total, elapsed time and the time left at the rate so far). Files, under ``--out``: ``args.json`` (the settings,
written first) and ``model.pt`` (the learner's weights and board size, written at the end; Ctrl-C saves it too).
Play the saved model as a policy with the action mask (``Agent`` is this file's network):

    from connect4_agents.interop.torch_policy import TorchPolicy

    checkpoint = torch.load("runs/selfplay_ppo/model.pt", weights_only=True)
    agent = Agent(checkpoint["rows"], checkpoint["columns"])
    agent.load_state_dict(checkpoint["state_dict"])
    policy = TorchPolicy(agent, observation="planes", forward=lambda x: agent.policy(agent.features(x)))
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import signal
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
from torch import nn

import connect4_env  # noqa: F401  (registers Connect4-v0)
from connect4_env import OpponentPool


def setting(default: object, help: str) -> object:
    """A field of ``Args``: its default, and its help in ``--help`` (where argparse adds the default)."""
    return dataclasses.field(default=default, metadata={"help": help})


@dataclasses.dataclass
class Args:
    seed: int = setting(1, "seed of torch, the envs and the opponent pool")
    num_envs: int = setting(64, "games played at once in the batched env")
    num_steps: int = setting(64, "steps per game in each rollout: a batch is num-envs * num-steps")
    total_steps: int = setting(2_000_000, "learner steps in all, rounded down to whole batches")
    learning_rate: float = setting(3e-4, "Adam's learning rate")
    gamma: float = setting(0.99, "discount factor")
    gae_lambda: float = setting(0.95, "lambda of generalised advantage estimation")
    update_epochs: int = setting(4, "passes over each batch")
    minibatches: int = setting(4, "minibatches each batch is split into")
    clip_coef: float = setting(0.2, "PPO's clipping of the probability ratio")
    ent_coef: float = setting(0.01, "weight of the entropy bonus")
    vf_coef: float = setting(0.5, "weight of the value loss")
    max_grad_norm: float = setting(0.5, "the gradient's norm is clipped to this")
    snapshot_every: int = setting(20, "updates between frozen copies of the learner joining the pool")
    eval_games: int = setting(100, "games against random and against mcts:100 at the end")
    threads: int = setting(1, "torch threads")
    log_every: int = setting(10, "updates between progress lines (the first update always prints one)")
    out: str = setting("runs/selfplay_ppo", "folder for args.json and model.pt")


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """The docstring as written, and each option's default after its help."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    for field in dataclasses.fields(Args):
        parser.add_argument(
            f"--{field.name.replace('_', '-')}",
            type=type(field.default),
            default=field.default,
            help=field.metadata["help"],
        )
    return parser


def parse_args(argv: list[str] | None = None) -> Args:
    parser = build_parser()
    args = Args(**vars(parser.parse_args(argv)))
    if min(args.num_envs, args.num_steps, args.update_epochs, args.minibatches, args.log_every) < 1:
        parser.error(
            "--num-envs, --num-steps, --update-epochs, --minibatches and --log-every must be at least 1"
        )
    if args.snapshot_every < 1 or args.eval_games < 1 or args.threads < 1:
        parser.error("--snapshot-every, --eval-games and --threads must be at least 1")
    if args.total_steps < args.num_envs * args.num_steps:
        parser.error(f"--total-steps {args.total_steps} is less than one batch (num-envs * num-steps)")
    if args.minibatches > args.num_envs * args.num_steps:
        parser.error(f"--minibatches {args.minibatches} is more than the batch's steps")
    return args


class Agent(nn.Module):
    """Two convolutions over the board's two planes, then a policy head and a value head."""

    def __init__(self, rows: int, columns: int) -> None:
        super().__init__()
        self.rows, self.columns = rows, columns
        self.body = nn.Sequential(
            nn.Conv2d(2, 64, 3, padding=1), nn.ReLU(),
            nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(),
            nn.Flatten(), nn.Linear(64 * rows * columns, 256), nn.ReLU(),
        )  # fmt: skip
        self.policy = nn.Linear(256, columns)
        self.value = nn.Linear(256, 1)

    def features(self, planes: torch.Tensor) -> torch.Tensor:
        return self.body(planes.permute(0, 3, 1, 2).float())  # (N, rows, columns, 2) -> channels first

    def distribution(self, hidden: torch.Tensor, masks: torch.Tensor) -> torch.distributions.Categorical:
        logits = self.policy(hidden).masked_fill(~masks, -1e9)  # illegal columns get no probability
        return torch.distributions.Categorical(logits=logits)

    def act(self, planes, masks, action=None):
        hidden = self.features(planes)
        dist = self.distribution(hidden, masks)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.value(hidden).squeeze(-1)


class Frozen:
    """A snapshot of the learner as a pool member: ``act_batch`` answers all its games in one forward pass."""

    def __init__(self, agent: Agent, seed: int) -> None:
        self.agent = copy.deepcopy(agent).eval()
        self.generator = torch.Generator().manual_seed(seed)

    @torch.no_grad()
    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        hidden = self.agent.features(torch.as_tensor(observations))
        dist = self.agent.distribution(hidden, torch.as_tensor(action_masks, dtype=torch.bool))
        return torch.multinomial(dist.probs, 1, generator=self.generator).squeeze(-1).numpy()

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.act_batch(observation[None], np.asarray(action_mask)[None])[0])


def evaluate(agent: Agent, opponent: str, games: int, seed: int) -> float:
    """The learner's score (win 1, draw 1/2) over ``games`` games, greedy, on a random side each game."""
    envs = gym.make_vec("Connect4-v0", num_envs=games, opponent=opponent, agent_first=None)
    planes, info = envs.reset(seed=seed)
    done = np.zeros(games, dtype=bool)
    reward_sum = np.zeros(games)
    while not done.all():
        with torch.no_grad():
            hidden = agent.features(torch.as_tensor(planes))
            masks = torch.as_tensor(envs.unwrapped.action_masks())
            actions = agent.distribution(hidden, masks).probs.argmax(-1).numpy()
        planes, rewards, terminated, _, info = envs.step(actions)
        reward_sum += np.where(done, 0.0, rewards)  # after a game ends its env restarts: ignore that game
        done |= terminated
    envs.close()
    return float(np.mean((reward_sum + 1) / 2))


def duration(seconds: float) -> str:
    """``42 s``, ``12 min`` or ``1.5 h``."""
    if seconds < 100:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 6000 else f"{seconds / 3600:.1f} h"


def save(agent: Agent, out: Path, steps: int) -> Path:
    """Write the learner's weights with its board size and the steps it trained for; returns the path."""
    path = out / "model.pt"
    state = {"state_dict": agent.state_dict(), "rows": agent.rows, "columns": agent.columns, "steps": steps}
    torch.save(state, path)
    return path


def main() -> None:
    # Ctrl-C stops the run and saves the model, even when started from a parent that ignores SIGINT (pytest-xdist's
    # workers do; a child inherits the ignoring, and Python then never raises KeyboardInterrupt)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    args = parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # written first: an unwritable --out fails before any work
    (out / "args.json").write_text(json.dumps(dataclasses.asdict(args), indent=2) + "\n")
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    batch = args.num_envs * args.num_steps
    updates = args.total_steps // batch
    print(
        f"self-play PPO on 6x7: {updates:,} updates of {args.num_envs} games x {args.num_steps} steps = "
        f"{updates * batch:,} learner steps against random, mcts:10 and a snapshot of the learner every "
        f"{args.snapshot_every} updates; then {args.eval_games} games each against random and mcts:100.\n"
        f"files: {out / 'args.json'} now, {out / 'model.pt'} at the end (Ctrl-C stops early and saves it). "
        f"A progress line every {args.log_every} updates.",
        flush=True,
    )
    pool = OpponentPool({"random": "random", "mcts:10": "mcts:10"}, sampling="pfsp", seed=args.seed)
    envs = gym.make_vec(
        "Connect4-v0", num_envs=args.num_envs, opponent=pool, agent_first=None, autoreset_mode="SameStep"
    )
    rules = envs.unwrapped.rules
    agent = Agent(rules.rows, rules.columns)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    shape = (args.num_steps, args.num_envs)
    planes_buf = torch.zeros(shape + envs.single_observation_space.shape, dtype=torch.int8)
    masks_buf = torch.zeros(shape + (rules.columns,), dtype=torch.bool)
    actions_buf = torch.zeros(shape, dtype=torch.long)
    logprobs_buf, rewards_buf, dones_buf, values_buf = (torch.zeros(shape) for _ in range(4))

    planes, _ = envs.reset(seed=args.seed)
    planes = torch.as_tensor(planes)
    masks = torch.as_tensor(envs.unwrapped.action_masks())
    done = torch.zeros(args.num_envs)
    start = time.time()
    trained = 0  # learner steps of the updates done
    try:
        for update in range(1, updates + 1):
            for step in range(args.num_steps):  # collect a rollout
                planes_buf[step], masks_buf[step], dones_buf[step] = planes, masks, done
                with torch.no_grad():
                    action, logprob, _, value = agent.act(planes, masks)
                actions_buf[step], logprobs_buf[step], values_buf[step] = action, logprob, value
                next_planes, reward, terminated, truncated, _ = envs.step(action.numpy())
                rewards_buf[step] = torch.as_tensor(reward, dtype=torch.float32)
                planes = torch.as_tensor(next_planes)
                masks = torch.as_tensor(envs.unwrapped.action_masks())
                done = torch.as_tensor(terminated | truncated, dtype=torch.float32)

            with torch.no_grad():  # generalised advantage estimation, bootstrapped from the last state
                next_value = agent.act(planes, masks)[3]
                advantages = torch.zeros(shape)
                last = torch.zeros(args.num_envs)
                for t in reversed(range(args.num_steps)):
                    next_nonterminal = 1.0 - (done if t == args.num_steps - 1 else dones_buf[t + 1])
                    following = next_value if t == args.num_steps - 1 else values_buf[t + 1]
                    delta = rewards_buf[t] + args.gamma * following * next_nonterminal - values_buf[t]
                    last = delta + args.gamma * args.gae_lambda * next_nonterminal * last
                    advantages[t] = last
                returns = advantages + values_buf

            flat = [
                x.reshape((batch,) + x.shape[2:]) for x in (planes_buf, masks_buf, actions_buf, logprobs_buf)
            ]
            b_planes, b_masks, b_actions, b_logprobs = flat
            b_advantages, b_returns = advantages.reshape(-1), returns.reshape(-1)
            minibatch = batch // args.minibatches
            for _ in range(args.update_epochs):  # PPO's clipped objective over shuffled minibatches
                order = torch.randperm(batch)
                for begin in range(0, batch, minibatch):
                    idx = order[begin : begin + minibatch]
                    _, logprob, entropy, value = agent.act(b_planes[idx], b_masks[idx], b_actions[idx])
                    ratio = (logprob - b_logprobs[idx]).exp()
                    adv = b_advantages[idx]
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                    policy_loss = torch.max(
                        -adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)
                    )
                    loss = (
                        policy_loss.mean()
                        + args.vf_coef * 0.5 * (value - b_returns[idx]).pow(2).mean()
                        - args.ent_coef * entropy.mean()
                    )
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                    optimizer.step()

            trained = update * batch
            # a frozen copy joins; games in progress keep their opponents
            if update % args.snapshot_every == 0:
                pool.add(f"self@{trained}", Frozen(agent, seed=args.seed + update))
                scores = {
                    name: round(s["recent_score"], 2) for name, s in pool.stats().items() if s["member"]
                }
                print(f"{trained:>9} steps  recent score by member: {scores}", flush=True)
            if update == 1 or update % args.log_every == 0 or update == updates:
                elapsed = time.time() - start
                left = elapsed / update * (updates - update)
                print(
                    f"update {update}/{updates}  {trained:,}/{updates * batch:,} steps  "
                    f"{duration(elapsed)} elapsed, about {duration(left)} left",
                    flush=True,
                )
    except KeyboardInterrupt:
        print(f"interrupted after {trained:,} steps", flush=True)
    envs.close()
    print(f"model saved to {save(agent, out, trained)}", flush=True)
    for opponent in ("random", "mcts:100"):
        print(f"score vs {opponent}: {evaluate(agent, opponent, args.eval_games, args.seed):.2f}", flush=True)


if __name__ == "__main__":
    main()
