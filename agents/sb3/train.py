"""Training Stable-Baselines3 baselines on the batched env: evaluation, checkpoints, self-play, curves.

``train_baseline(SB3TrainConfig(...))`` is what ``scripts/train_sb3.py`` runs. Outputs in ``config.out``:
``model.zip`` (+ ``model.json``: algorithm and board), ``checkpoint.zip`` (the latest periodic save),
``eval.csv`` (W/D/L against each fixed opponent at every evaluation), ``curve.png`` and, when tensorboard is
installed, ``tensorboard/``.
"""

from __future__ import annotations

import copy
import csv
import importlib.util
import io
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from connect4_agents._support.figures import pyplot, save_figure
from connect4_agents._support.files import atomic_write, atomic_write_json
from connect4_agents._support.progress import progress_bar
from connect4_agents.evaluation.arena import play_match
from connect4_agents.sb3.agent import ALGORITHMS, SB3Agent, algorithm_class
from connect4_agents.sb3.files import policy_parameters, sidecar_architecture
from connect4_env.core import Rules
from connect4_env.policy import policy_from_spec as agent_from_spec
from connect4_env.validation import check_bool, check_int, check_number

__all__ = [
    "SB3TrainConfig",
    "TrainConfig",
    "TrainResult",
    "train_baseline",
    "evaluate_policy_wdl",
    "HYPERPARAMETERS",
    "MAX_THREADS",
    "MAX_BUFFER_BYTES",
]

MAX_THREADS = 1024
"""Most torch threads a run may ask for (as ``AlphaZeroAgent``'s ``threads``)."""
MAX_BUFFER_BYTES = 4 << 30
"""Most memory the rollout (PPO) or replay (DQN) buffer may take, worked out from the hyperparameters, the
number of envs and the board before anything is built."""


@dataclass
class SB3TrainConfig:
    """Settings of one SB3 training run (each field is also a ``scripts/train_sb3.py`` option).

    ``TrainConfig`` is the same class under its former name (AlphaZero's settings are
    :class:`connect4_agents.alphazero.train.AlphaZeroTrainConfig`).
    """

    algo: str = "maskable_ppo"
    """``ppo``, ``maskable_ppo`` (sb3-contrib, uses the action masks) or ``dqn``."""
    opponent: str = "random"
    """The opponent while training: an agent spec (``random``, ``mcts:<playouts>``, ``qlearning:<table>``,
    ``solver``, ``sb3:<model.zip>``) or ``self`` (a frozen snapshot of the learner, refreshed every
    ``snapshot_freq`` steps)."""
    rows: int = 6
    columns: int = 7
    win_length: int = 4
    timesteps: int = 300_000
    """Learner steps in total (over all envs)."""
    n_envs: int = 16
    """Games played in parallel in the batched env."""
    seed: int = 0
    out: str = "runs/sb3"
    """Output folder."""
    eval_freq: int = 50_000
    """Evaluate (and checkpoint) every this many learner steps."""
    eval_games: int = 100
    """Games per evaluation opponent, alternating sides."""
    eval_opponents: tuple[str, ...] = ("random", "mcts:100")
    snapshot_freq: int = 25_000
    """Self-play: steps between refreshes of the frozen opponent."""
    threads: int = 1
    """torch threads (1 is fastest for these small networks on small machines)."""
    progress: bool = True
    features: str = "mlp"
    """``mlp`` (SB3's MlpPolicy on the flattened planes) or ``cnn`` (two 3x3 convolutions over the board, see
    :func:`cnn_policy_kwargs`)."""
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    """Extra keyword arguments for the algorithm (e.g. ``{"learning_rate": 1e-4}``), plain JSON values: the
    names in :data:`HYPERPARAMETERS` for the algorithm, each checked for its type and range."""

    def __post_init__(self) -> None:
        """Check every setting, without building anything or importing SB3.

        Raises:
            TypeError: a setting of the wrong type (``threads=1.5``, ``hyperparameters={"n_steps": "8"}``).
            ValueError: an unknown ``algo``, ``features`` or hyperparameter name, a value out of range
                (``threads`` outside 1..:data:`MAX_THREADS`, ``learning_rate`` <= 0), a bad board, or
                hyperparameters whose buffers or network would be too large (over :data:`MAX_BUFFER_BYTES`,
                or more parameters than a model file may hold).
        """
        if self.algo not in ALGORITHMS:
            raise ValueError(f"algo={self.algo!r} is not supported; allowed: {', '.join(ALGORITHMS)}")
        if self.features not in ("mlp", "cnn"):
            raise ValueError(f"features={self.features!r} is not supported; allowed: mlp, cnn")
        for name in ("timesteps", "n_envs", "eval_freq", "eval_games", "snapshot_freq"):
            check_int(name, getattr(self, name), 1)
        check_int("threads", self.threads, 1, MAX_THREADS)
        Rules(self.rows, self.columns, self.win_length)
        if not isinstance(self.hyperparameters, dict):
            raise TypeError(f"hyperparameters must be a dict, got {self.hyperparameters!r}")
        _check_hyperparameters(self)


TrainConfig = SB3TrainConfig  # the former name, kept for existing scripts


@dataclass
class TrainResult:
    model_path: Path
    interrupted: bool
    timesteps: int
    seconds: float
    evaluations: list[dict[str, Any]]


def _plain_cnn_policy_kwargs(channels: int = 64, features: int = 256) -> dict[str, Any]:
    return {"features_extractor_kwargs": {"channels": channels, "features": features}, "net_arch": [128]}


def cnn_policy_kwargs(channels: int = 64, features: int = 256) -> dict[str, Any]:
    """``policy_kwargs`` for :class:`connect4_agents.sb3.features.BoardCNN` over the ``(rows, columns, 2)`` planes."""
    from connect4_agents.sb3.features import BoardCNN

    return {"features_extractor_class": BoardCNN, **_plain_cnn_policy_kwargs(channels, features)}


def linear_schedule(initial: float) -> Any:
    """A learning rate falling linearly from ``initial`` to 0 over the run (SB3 calls it with the progress
    remaining, 1 -> 0): late updates get small, so the final policy does not wobble."""

    def schedule(progress_remaining: float) -> float:
        return progress_remaining * initial

    return schedule


_PPO: dict[str, Any] = {
    "n_steps": 256,
    "batch_size": 512,
    "n_epochs": 4,
    "learning_rate": linear_schedule(3e-4),
    "ent_coef": 0.01,
    "gamma": 0.97,
    "policy_kwargs": {"net_arch": [128, 128]},
}

# Defaults that train well on this env (the rest are SB3's own defaults).
DEFAULT_HYPERPARAMETERS: dict[str, dict[str, Any]] = {
    "ppo": dict(_PPO),
    "maskable_ppo": dict(_PPO),
    "dqn": {
        "learning_starts": 5_000,
        "buffer_size": 200_000,
        "exploration_fraction": 0.3,
        "train_freq": 4,
        "target_update_interval": 2_000,
        "learning_rate": 3e-4,
    },
}


_Check = Callable[[str, Any], Any]


def _int(minimum: int, maximum: int) -> _Check:
    return lambda name, value: check_int(name, value, minimum, maximum)


def _real(minimum: float, maximum: float, *, above_minimum: bool = False, none: bool = False) -> _Check:
    def check(name: str, value: Any) -> Any:
        if none and value is None:
            return None
        return check_number(name, value, minimum, maximum, above_minimum=above_minimum)

    return check


def _optional_text(name: str, value: Any) -> Any:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name} must be a folder name (a string) or null, got {value!r}")
    return value


def _dict(name: str, value: Any) -> Any:
    if not isinstance(value, dict):
        raise TypeError(f"{name} must be a JSON object, got {value!r}")
    return value


def _train_freq(name: str, value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        if len(value) != 2:
            raise ValueError(f"{name} must be a count or [count, 'step' or 'episode'], got {value!r}")
        if value[1] not in ("step", "episode"):
            raise ValueError(f"{name}'s unit must be 'step' or 'episode', got {value[1]!r}")
        return [check_int(f"{name}[0]", value[0], 1, 1_000_000), value[1]]
    return check_int(name, value, 1, 1_000_000)


def _gradient_steps(name: str, value: Any) -> Any:
    if check_int(name, value, -1, 10_000) == 0:
        raise ValueError(f"{name} must be -1 (as many as steps collected) or 1..10000, got 0")
    return value


_COMMON: dict[str, _Check] = {
    "learning_rate": _real(0, 1, above_minimum=True),
    "gamma": _real(0, 1),
    "batch_size": _int(1, 1 << 24),
    "max_grad_norm": _real(0, 1e6, above_minimum=True),
    "stats_window_size": _int(1, 1_000_000),
    "tensorboard_log": _optional_text,
    "policy_kwargs": _dict,
}
_PPO_CHECKS: dict[str, _Check] = {
    **_COMMON,
    "n_steps": _int(1, 1 << 24),
    "n_epochs": _int(1, 10_000),
    "gae_lambda": _real(0, 1),
    "clip_range": _real(0, 10, above_minimum=True),
    "clip_range_vf": _real(0, 10, above_minimum=True, none=True),
    "normalize_advantage": check_bool,
    "ent_coef": _real(0, 10),
    "vf_coef": _real(0, 10),
    "target_kl": _real(0, 10, above_minimum=True, none=True),
}
HYPERPARAMETERS: dict[str, dict[str, _Check]] = {
    "ppo": _PPO_CHECKS,
    "maskable_ppo": _PPO_CHECKS,
    "dqn": {
        **_COMMON,
        "buffer_size": _int(1, 1 << 26),
        "learning_starts": _int(0, 1 << 53),
        "tau": _real(0, 1, above_minimum=True),
        "train_freq": _train_freq,
        "gradient_steps": _gradient_steps,
        "n_steps": _int(1, 1000),
        "target_update_interval": _int(1, 1 << 53),
        "exploration_fraction": _real(0, 1, above_minimum=True),
        "exploration_initial_eps": _real(0, 1),
        "exploration_final_eps": _real(0, 1),
    },
}
"""Per algorithm, the hyperparameters ``--hyperparameters`` may set and the check of each value (counts have
a maximum so that buffers stay bounded; the rest are SB3's constructor arguments, set by the trainer)."""

_POLICY_KWARGS = {
    "ppo": ("net_arch", "features_extractor_kwargs", "share_features_extractor", "ortho_init"),
    "dqn": ("net_arch", "features_extractor_kwargs"),
}
_POLICY_KWARGS["maskable_ppo"] = _POLICY_KWARGS["ppo"]
_POLICY_KWARGS_COMMON = ("normalize_images", "optimizer_kwargs")


def _policy_kwargs(config: SB3TrainConfig) -> dict[str, Any]:
    """The algorithm's ``policy_kwargs`` as plain values (the feature extractor's class is added later)."""
    given = config.hyperparameters.get("policy_kwargs")
    if config.features == "cnn":
        return {**_plain_cnn_policy_kwargs(), **(given or {})}
    if given is not None:
        return dict(given)
    return dict(DEFAULT_HYPERPARAMETERS[config.algo].get("policy_kwargs", {}))


def _check_hyperparameters(config: SB3TrainConfig) -> None:
    """Names, types and ranges of ``config.hyperparameters``, then the memory the buffers and the network they
    ask for would take, all before anything is built (SB3 is not imported)."""
    checks = HYPERPARAMETERS[config.algo]
    unknown = sorted(set(config.hyperparameters) - set(checks), key=str)
    if unknown:
        raise ValueError(
            f"hyperparameters {unknown} are not arguments of {config.algo} that this trainer passes on; "
            f"allowed: {', '.join(sorted(checks))}"
        )
    try:
        json.dumps(config.hyperparameters, allow_nan=True)
    except (TypeError, ValueError) as error:
        raise TypeError(f"hyperparameters must hold plain JSON values ({error})") from None
    for key, value in config.hyperparameters.items():
        checks[key](f"hyperparameters['{key}']", value)
    given = config.hyperparameters.get("policy_kwargs", {})
    allowed = _POLICY_KWARGS[config.algo] + _POLICY_KWARGS_COMMON
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise ValueError(
            f"hyperparameters['policy_kwargs'] {unknown} are not settings of {config.algo}'s MlpPolicy that "
            f"this trainer passes on; allowed: {', '.join(sorted(allowed))}"
        )
    for key in ("share_features_extractor", "ortho_init", "normalize_images"):
        if key in given:
            check_bool(f"hyperparameters['policy_kwargs']['{key}']", given[key])
    if "optimizer_kwargs" in given:
        _dict("hyperparameters['policy_kwargs']['optimizer_kwargs']", given["optimizer_kwargs"])
    policy_kwargs = _policy_kwargs(config)
    try:
        policy_parameters(config.algo, config.rows, config.columns, policy_kwargs, config.features)
    except (TypeError, ValueError) as error:
        raise type(error)(
            f"hyperparameters['policy_kwargs'] (with the defaults: {policy_kwargs!r}): {error}"
        ) from None
    settings = {**DEFAULT_HYPERPARAMETERS[config.algo], **config.hyperparameters}
    cells = config.rows * config.columns
    if config.algo == "dqn":
        stored = max(int(settings.get("buffer_size", 1_000_000)) // config.n_envs, 1) * config.n_envs
        size = stored * (2 * 2 * cells + 20)  # observations and next observations, int8
        what = f"buffer_size={settings.get('buffer_size', 1_000_000)} (with {config.n_envs} envs)"
        freq = settings.get("train_freq", 4)
        if isinstance(freq, list) and freq[1] == "episode" and config.n_envs != 1:
            raise ValueError(
                f"hyperparameters['train_freq'] {freq!r} counts episodes, which SB3 allows only with n_envs=1, "
                f"got n_envs={config.n_envs}"
            )
    else:
        transitions = int(settings.get("n_steps", 2048)) * config.n_envs
        size = 2 * transitions * (2 * cells + 40)  # the buffer, and its flattened copy while training
        what = f"n_steps * n_envs = {transitions:,} steps"
        if settings.get("normalize_advantage", True) and (
            transitions < 2 or int(settings.get("batch_size", 64)) < 2
        ):
            raise ValueError(
                f"hyperparameters: with normalize_advantage, batch_size and n_steps * n_envs must be at least "
                f"2, got batch_size={settings.get('batch_size', 64)} and n_steps * n_envs={transitions}"
            )
    if size > MAX_BUFFER_BYTES:
        raise ValueError(
            f"hyperparameters: {what} of a {config.rows}x{config.columns} board would need about "
            f"{size / 2**30:,.1f} GiB of buffers; allowed: at most {MAX_BUFFER_BYTES / 2**30:.0f} GiB "
            "(use fewer steps, envs or a smaller buffer)"
        )


def _algorithm_arguments(config: SB3TrainConfig, out: Path) -> dict[str, Any]:
    """The keyword arguments for the algorithm: our defaults, the checked hyperparameters over them."""
    arguments = {**DEFAULT_HYPERPARAMETERS[config.algo], **config.hyperparameters}
    policy_kwargs = _policy_kwargs(config)
    if config.features == "cnn":
        policy_kwargs = {**cnn_policy_kwargs(), **policy_kwargs}
    if policy_kwargs or "policy_kwargs" in arguments:
        arguments["policy_kwargs"] = policy_kwargs
    if isinstance(arguments.get("train_freq"), list):  # JSON has no tuples; SB3 takes (count, unit)
        arguments["train_freq"] = tuple(arguments["train_freq"])
    if importlib.util.find_spec("tensorboard") is not None:
        arguments.setdefault("tensorboard_log", str(out / "tensorboard"))
    return arguments


def save_model(model: Any, path: Path, config: SB3TrainConfig, timesteps: int) -> Path:
    """``model.save`` through a temporary file, plus a ``.json`` sidecar naming the algorithm and board."""
    atomic_write(path, model.save)
    meta = {
        "algo": config.algo,
        **sidecar_architecture(model, config.features),
        "rows": config.rows,
        "columns": config.columns,
        "win_length": config.win_length,
        "timesteps": timesteps,
        "opponent": config.opponent,
        "seed": config.seed,
    }
    atomic_write_json(path.with_suffix(".json"), meta)
    return path


def evaluate_policy_wdl(
    policy: Any, opponents: dict[str, Any], games: int, rules: Rules
) -> list[dict[str, Any]]:
    """W/D/L of ``policy`` (an SB3 policy) against each opponent, alternating sides."""
    agent = SB3Agent(policy)
    rows = []
    for name, opponent in opponents.items():
        result = play_match(agent, opponent, games, rules)
        rows.append(
            {
                "opponent": name,
                "games": games,
                "wins": result.wins,
                "draws": result.draws,
                "losses": result.losses,
                "win_rate": result.wins / games,
                "score": result.score,
            }
        )
    return rows


class _SelfPlayOpponent:
    """The training opponent for ``self``: a frozen copy of the learner's policy, refreshed by a callback."""

    def __init__(self) -> None:
        self.agent: SB3Agent | None = None

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        if self.agent is None:
            raise RuntimeError("the self-play snapshot is not set yet")
        return self.agent.act_batch(observations, action_masks)

    def act(self, observation: Any, action_mask: Any = None) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])

    def refresh(self, policy: Any) -> None:
        snapshot = copy.deepcopy(policy)
        snapshot.set_training_mode(False)
        self.agent = SB3Agent(snapshot, deterministic=False, seed=0)

    def __repr__(self) -> str:
        return "SelfPlaySnapshot()"


def _callbacks(
    config: SB3TrainConfig,
    rules: Rules,
    out: Path,
    evaluations: list[dict[str, Any]],
    opponents: dict[str, Any],
    self_play: _SelfPlayOpponent | None,
    start: float,
    cpu_start: float,
) -> list[Any]:
    from stable_baselines3.common.callbacks import BaseCallback

    class Evaluate(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.next_eval = config.eval_freq

        def _on_step(self) -> bool:
            if self.num_timesteps >= self.next_eval:
                self.next_eval += config.eval_freq
                self.evaluate()
            return True

        def evaluate(self) -> None:
            seconds = time.perf_counter() - start
            cpu_seconds = (
                time.process_time() - cpu_start
            )  # this process so far: training and earlier evaluations
            for row in evaluate_policy_wdl(self.model.policy, opponents, config.eval_games, rules):
                row = {
                    "timesteps": self.num_timesteps,
                    "seconds": round(seconds, 1),
                    "cpu_seconds": round(cpu_seconds, 1),
                    **row,
                }
                evaluations.append(row)
                self.logger.record(f"eval/{row['opponent']}_win_rate", row["win_rate"])
            _write_csv(out / "eval.csv", evaluations)
            save_model(self.model, out / "checkpoint.zip", config, self.num_timesteps)

    class Snapshot(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.next_snapshot = config.snapshot_freq

        def _on_step(self) -> bool:
            if self_play is not None and self.num_timesteps >= self.next_snapshot:
                self.next_snapshot += config.snapshot_freq
                self_play.refresh(self.model.policy)
            return True

    class Progress(BaseCallback):
        def _on_training_start(self) -> None:
            self.bar = progress_bar(config.timesteps, "steps", unit="step")

        def _on_step(self) -> bool:
            self.bar.n = self.num_timesteps
            if evaluations:
                self.bar.set_postfix(
                    {row["opponent"]: f"{row['win_rate']:.2f}" for row in evaluations[-len(opponents) :]},
                    refresh=False,
                )
            self.bar.update(0)
            return True

        def _on_training_end(self) -> None:
            self.bar.close()

    callbacks: list[Any] = [Evaluate(), Snapshot()]
    if config.progress and importlib.util.find_spec("tqdm") is not None:  # progress_bar gives None without it
        callbacks.append(Progress())
    return callbacks


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    def write(stream: Any) -> None:
        text = io.TextIOWrapper(stream, newline="", encoding="utf-8")
        writer = csv.DictWriter(text, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
        text.flush()
        text.detach()

    atomic_write(path, write)


def plot_evaluations(rows: list[dict[str, Any]], path: Path, title: str) -> Path:
    """Win rate against each evaluation opponent over training, as a PNG."""
    figure, axis = pyplot().subplots(figsize=(7, 4))
    for opponent in dict.fromkeys(row["opponent"] for row in rows):
        mine = [row for row in rows if row["opponent"] == opponent]
        axis.plot(
            [r["timesteps"] for r in mine], [r["win_rate"] for r in mine], marker="o", label=f"vs {opponent}"
        )
    axis.set_xlabel("learner steps")
    axis.set_ylabel("win rate")
    axis.set_ylim(0, 1)
    axis.set_title(title)
    axis.legend()
    figure.tight_layout()
    return save_figure(figure, path, dpi=100, format="png")


def train_baseline(config: SB3TrainConfig) -> TrainResult:
    """Train ``config.algo`` against ``config.opponent`` on the batched env; Ctrl-C still saves the model.

    Every setting is checked again, the opponents and the model are built, and only then is anything written
    to ``config.out`` (or torch's thread count set).

    Raises:
        TypeError / ValueError: a bad setting or opponent spec, or hyperparameters that SB3 refuses (its
            AssertionError, RuntimeError, ValueError or TypeError while building the model, turned into a
            ValueError naming the hyperparameters); nothing is written then.
    """
    import torch

    from connect4_env.sb3_vec_env import make_sb3_vec_env

    config.__post_init__()  # the fields may have changed since the config was made
    rules = Rules(config.rows, config.columns, config.win_length)
    out = Path(config.out)
    self_play = _SelfPlayOpponent() if config.opponent == "self" else None
    opponent = (
        self_play
        if self_play is not None
        else agent_from_spec(config.opponent, seed=config.seed + 1, rules=rules)
    )
    eval_opponents = {
        spec: agent_from_spec(spec, seed=config.seed + 100, rules=rules) for spec in config.eval_opponents
    }
    venv = make_sb3_vec_env(
        config.n_envs,
        rows=rules.rows,
        columns=rules.columns,
        win_length=rules.win_length,
        opponent=opponent,
        agent_first=None,
        illegal_action="lose",
    )
    venv.seed(config.seed)
    try:
        model = algorithm_class(config.algo)(
            "MlpPolicy", venv, seed=config.seed, device="cpu", verbose=0, **_algorithm_arguments(config, out)
        )
    except (AssertionError, RuntimeError, ValueError, TypeError) as error:
        venv.close()
        raise ValueError(
            f"hyperparameters {config.hyperparameters!r} do not make a {config.algo} model: {error}"
        ) from None
    torch.set_num_threads(config.threads)
    if self_play is not None:
        self_play.refresh(model.policy)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out / "config.json", asdict(config))
    evaluations: list[dict[str, Any]] = []
    start, cpu_start = time.perf_counter(), time.process_time()
    interrupted = False
    callbacks = _callbacks(config, rules, out, evaluations, eval_opponents, self_play, start, cpu_start)
    try:
        model.learn(total_timesteps=config.timesteps, callback=callbacks)
    except KeyboardInterrupt:
        interrupted = True
    seconds = time.perf_counter() - start
    if not interrupted and (not evaluations or evaluations[-1]["timesteps"] != model.num_timesteps):
        callbacks[0].evaluate()
    model_path = save_model(model, out / "model.zip", config, model.num_timesteps)
    if evaluations and importlib.util.find_spec("matplotlib") is not None:
        plot_evaluations(evaluations, out / "curve.png", f"{config.algo} vs {config.opponent}")
    venv.close()
    return TrainResult(model_path, interrupted, int(model.num_timesteps), seconds, evaluations)
