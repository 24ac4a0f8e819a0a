"""What ``connect4 train-sb3 --hyperparameters`` may set: our defaults, the check of every value, and the
buffer and network sizes they imply, all worked out before anything is built (SB3 is not imported here).
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from connect4_agents.sb3.files import policy_parameters
from connect4_env.validation import check_bool, check_int, check_number

if TYPE_CHECKING:
    from connect4_agents.sb3.train import SB3TrainConfig

__all__ = [
    "DEFAULT_HYPERPARAMETERS",
    "HYPERPARAMETERS",
    "MAX_BUFFER_BYTES",
    "algorithm_arguments",
    "check_hyperparameters",
    "cnn_policy_kwargs",
    "linear_schedule",
    "plain_cnn_policy_kwargs",
    "policy_kwargs_of",
]

MAX_BUFFER_BYTES = 4 << 30
"""Most memory the rollout (PPO) or replay (DQN) buffer may take, worked out from the hyperparameters, the
number of envs and the board before anything is built."""


def plain_cnn_policy_kwargs(channels: int = 64, features: int = 256) -> dict[str, Any]:
    """``policy_kwargs`` for the ``cnn`` features as plain values: `connect4_agents.sb3.features.BoardCNN`'s
    ``channels`` and ``features`` as its ``features_extractor_kwargs`` and one hidden layer of 128 units
    after it (the extractor's class is added where SB3 is imported).
    """
    return {"features_extractor_kwargs": {"channels": channels, "features": features}, "net_arch": [128]}


def linear_schedule(initial: float) -> Any:
    """A learning rate falling linearly from ``initial`` to 0 over the run (SB3 calls it with the progress
    remaining, 1 -> 0): late updates get small, so the final policy does not wobble.
    """

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


def policy_kwargs_of(config: SB3TrainConfig) -> dict[str, Any]:
    """The algorithm's ``policy_kwargs`` as plain values (the feature extractor's class is added later)."""
    given = config.hyperparameters.get("policy_kwargs")
    if config.features == "cnn":
        return {**plain_cnn_policy_kwargs(), **(given or {})}
    if given is not None:
        return dict(given)
    return dict(DEFAULT_HYPERPARAMETERS[config.algo].get("policy_kwargs", {}))


def check_hyperparameters(config: SB3TrainConfig) -> None:
    """Names, types and ranges of ``config.hyperparameters``, then the memory the buffers and the network they
    ask for would take, all before anything is built (SB3 is not imported).
    """
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
    policy_kwargs = policy_kwargs_of(config)
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


def cnn_policy_kwargs(channels: int = 64, features: int = 256) -> dict[str, Any]:
    """``policy_kwargs`` for `connect4_agents.sb3.features.BoardCNN` over the ``(rows, columns, 2)``
    planes.
    """
    from connect4_agents.sb3.features import BoardCNN

    return {"features_extractor_class": BoardCNN, **plain_cnn_policy_kwargs(channels, features)}


def algorithm_arguments(config: SB3TrainConfig, out: Path) -> dict[str, Any]:
    """The keyword arguments for the algorithm: our defaults, the checked hyperparameters over them."""
    arguments = {**DEFAULT_HYPERPARAMETERS[config.algo], **config.hyperparameters}
    policy_kwargs = policy_kwargs_of(config)
    if config.features == "cnn":
        policy_kwargs = {**cnn_policy_kwargs(), **policy_kwargs}
    if policy_kwargs or "policy_kwargs" in arguments:
        arguments["policy_kwargs"] = policy_kwargs
    if isinstance(arguments.get("train_freq"), list):  # JSON has no tuples; SB3 takes (count, unit)
        arguments["train_freq"] = tuple(arguments["train_freq"])
    if importlib.util.find_spec("tensorboard") is not None:
        arguments.setdefault("tensorboard_log", str(out / "tensorboard"))
    return arguments
