"""PPO self-play with RLlib: one shared, action-masked policy for both seats, then games against agents.

What ``connect4 train-rllib`` runs. Ray is imported inside the functions only: it is an optional heavy
dependency, and RLlib pins its own gymnasium, so it lives in its own venv (``make test-rllib``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from connect4_agents._support.cli import positive_int
from connect4_agents._support.config_cli import option
from connect4_agents.evaluation.arena import MatchResult, play_match
from connect4_agents.evaluation.ratings import PairingCounts, Ratings, fit_ratings, reference_ladder
from connect4_agents.rllib.agent import RLlibAgent
from connect4_env.extras import require
from connect4_env.policy import policy_from_spec
from connect4_env.rules import Rules
from connect4_env.validation import check_int

__all__ = ["RLlibTrainConfig", "NoEpisodesError", "ppo_config", "episodes_of", "train_rllib"]


@dataclass(frozen=True)
class RLlibTrainConfig:
    """The board and PPO's settings: each field is also a ``connect4 train-rllib`` option, its docstring the
    option's help.
    """

    rows: int = 6
    """Board rows."""
    columns: int = 7
    """Board columns."""
    win_length: int = 4
    """Stones in a line to win."""
    env_runners: int = 1
    """RLlib env runners: the processes that play the games (0: the driver plays them)."""
    batch_size: int = field(default=4000, metadata=option(type=positive_int))
    """Env steps per iteration."""
    minibatch_size: int = field(default=256, metadata=option(type=positive_int))
    """Env steps per gradient step."""
    epochs: int = field(default=6, metadata=option(type=positive_int))
    """Passes over each batch."""
    hidden: tuple[int, ...] = field(default=(256, 256), metadata=option(type=positive_int))
    """The policy's MLP layer sizes."""
    seed: int = 0
    """Seed of the training."""

    @property
    def rules(self) -> Rules:
        """The board these settings train on."""
        return Rules(self.rows, self.columns, self.win_length)

    def check(self) -> RLlibTrainConfig:
        """Raise TypeError / ValueError naming a bad setting (before Ray starts); returns self."""
        self.rules  # noqa: B018 - the board's own checks
        check_int("env_runners", self.env_runners, 0, 256)
        check_int("batch_size", self.batch_size, 1, 10_000_000)
        check_int("minibatch_size", self.minibatch_size, 1, self.batch_size)
        check_int("epochs", self.epochs, 1, 1000)
        check_int("seed", self.seed, 0)
        if not isinstance(self.hidden, (tuple, list)) or not 1 <= len(self.hidden) <= 16:
            raise ValueError(f"hidden must be 1 to 16 layer sizes, got {self.hidden!r:.80}")
        for size in self.hidden:
            check_int("a hidden layer's size", size, 1, 4096)
        return self


def require_rllib() -> None:
    """Nothing when RLlib imports (ray's RLlib modules and their own dependencies, not only ray).

    Raises:
        MissingExtraError: it does not: the message says it goes in a venv of its own.
    """
    require(
        "ray.rllib.algorithms.ppo",
        "ray[rllib]",
        "training with RLlib",
        install="which pins its own gymnasium: install it in a venv of its own (make test-rllib builds .venv-rllib)",
    )


class NoEpisodesError(RuntimeError):
    """An iteration played no episode: RLlib's env runners can crash while training goes on."""


def ppo_config(config: RLlibTrainConfig) -> Any:
    """RLlib's ``PPOConfig`` for ``config``: the multi-agent env of `connect4_env.integrations.rllib`, one policy
    (``"shared"``) for both seats, RLlib's ``ActionMaskingTorchRLModule``, on the new API stack.

    Raises:
        ValueError: a bad board (checked here, not in an env runner).
        ImportError: ray[rllib] is not installed.
    """
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from ray.tune.registry import register_env

    from connect4_env.integrations.rllib import Connect4MultiAgentEnv

    register_env("connect4_env", lambda env_config: Connect4MultiAgentEnv(env_config))
    env_config = {"rows": config.rows, "columns": config.columns, "win_length": config.win_length}
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
                        model_config={"fcnet_hiddens": list(config.hidden), "head_fcnet_hiddens": []},
                    )
                }
            )
        )
        .env_runners(num_env_runners=config.env_runners, num_cpus_per_env_runner=1)
        .training(
            train_batch_size_per_learner=config.batch_size,
            minibatch_size=config.minibatch_size,
            num_epochs=config.epochs,
            lr=3e-4,
            entropy_coeff=0.01,
        )
        .debugging(seed=config.seed)
    )


def episodes_of(result: dict[str, Any]) -> tuple[int, float]:
    """The episodes an ``Algorithm.train()`` result played and their mean length in plies (NaN if none)."""
    runners = result.get("env_runners", {})
    return int(runners.get("num_episodes", 0) or 0), float(runners.get("episode_len_mean", float("nan")))


def train_rllib(
    config: RLlibTrainConfig,
    *,
    iterations: int,
    out: str | Path,
    checkpoint_every: int = 10,
    eval_games: int = 40,
    eval_opponents: Sequence[str] = ("random", "mcts:10", "mcts:100"),
    address: str | None = None,
    num_cpus: int | None = None,
    on_iteration: Callable[[int, int, float], None] | None = None,
    on_checkpoint: Callable[[str], None] | None = None,
    on_match: Callable[[str, MatchResult], None] | None = None,
) -> Ratings | None:
    """Train ``iterations`` PPO iterations on a local Ray (or the cluster at ``address``), then play the
    trained policy (greedy) ``eval_games`` games against each of ``eval_opponents``.

    A checkpoint (RLlib's own format) is saved under ``out`` every ``checkpoint_every`` iterations and at the
    end. Ray is shut down however this ends.

    Args:
        config: the board and PPO's settings.
        iterations: PPO iterations to train.
        out: the folder the checkpoints are saved under (``checkpoint_<iteration>``).
        checkpoint_every: iterations between checkpoints (the last iteration is always saved).
        eval_games: games against each evaluation opponent after training (0: no evaluation).
        eval_opponents: the agent specs the trained policy plays after training (built, and so checked,
            before Ray starts).
        address: the Ray cluster to join (None: start a local Ray).
        num_cpus: the CPUs a local Ray may use (None: Ray's default; ignored with ``address``).
        on_iteration: called with each iteration's number, episodes and mean episode length.
        on_checkpoint: called with each checkpoint's path.
        on_match: called with each opponent's spec and the match (results from the policy's side).

    Returns:
        Elo ratings against the reference ladder's fixed ratings, when the board is 6x7 and every opponent is
        a ladder agent; else None.

    Raises:
        TypeError: a board setting of ``config`` is not an integer, or an evaluation opponent's spec is not a
            str (before Ray starts).
        ValueError: ``config``'s board is out of the rules' range, or an evaluation opponent's spec is unknown
            or cannot play that board (before Ray starts).
        NoEpisodesError: an iteration played no episode (the env runners failed).
        ImportError: ray[rllib] is not installed.
    """
    import ray

    rules = config.rules
    # the opponents are built first, so a bad spec fails before Ray starts
    opponents = {spec: policy_from_spec(spec, seed=config.seed, rules=rules) for spec in eval_opponents}
    options: dict[str, Any] = {"include_dashboard": False, "logging_level": "ERROR"}
    options.update({"address": address} if address else {"num_cpus": num_cpus})
    ray.init(**options)
    try:
        algo = ppo_config(config).build_algo()
        try:
            for iteration in range(1, iterations + 1):
                episodes, length = episodes_of(algo.train())
                if on_iteration is not None:
                    on_iteration(iteration, episodes, length)
                if episodes == 0:
                    raise NoEpisodesError("no episode was played: the env runners failed (see the log above)")
                if iteration % checkpoint_every == 0 or iteration == iterations:
                    saved = algo.save(str(Path(out, f"checkpoint_{iteration:04d}").resolve()))
                    if on_checkpoint is not None:
                        on_checkpoint(str(saved.checkpoint.path))
            agent = RLlibAgent(algo.get_module("shared"))
            counts = []
            for spec, opponent in opponents.items():
                if eval_games > 0:
                    match = play_match(agent, opponent, eval_games, rules)
                    if on_match is not None:
                        on_match(spec, match)
                    counts.append(PairingCounts("rllib", spec, match.wins, match.draws, match.losses))
            ladder = reference_ladder()
            if counts and rules == Rules() and all(c.b in ladder for c in counts):
                fixed = {c.b: ladder[c.b] for c in counts}
                return fit_ratings(counts, fixed=fixed, bootstrap=200, seed=config.seed)
            return None
        finally:
            algo.stop()
    finally:
        ray.shutdown()
