"""Trained Stable-Baselines3 models (PPO, MaskablePPO, DQN) as policies that never choose a masked move."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from connect4_agents._support.files import require_safe_torch
from connect4_agents.base import (
    NoLegalMoveError,
    RulesAware,
    check_spec_value,
    mask_booleans,
    unpack,
)
from connect4_agents.sb3.files import ALGORITHMS, load_policy, save_policy
from connect4_env.extras import require
from connect4_env.rules import Rules
from connect4_env.validation import seeded_rng

__all__ = ["SB3Agent", "algorithm_class"]


# the activations SB3's MLP policies use, as numpy functions (the actor's numpy copy, see SB3Agent._layers)
def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


_ACTIVATIONS = {"Tanh": np.tanh, "ReLU": _relu}


def algorithm_class(name: str) -> Any:
    """The SB3 class for ``"ppo"``, ``"maskable_ppo"`` or ``"dqn"``.

    Raises:
        ValueError: ``name`` is not one of the three.
        MissingExtraError: SB3 (the ``train`` extra) is not installed, or sb3-contrib for ``"maskable_ppo"``.
    """
    homes = {"ppo": ("stable_baselines3", "PPO"), "maskable_ppo": ("sb3_contrib", "MaskablePPO")}
    homes["dqn"] = ("stable_baselines3", "DQN")
    if name in homes:
        module, attribute = homes[name]
        return getattr(require(module, "train", f"the SB3 algorithm {name!r}"), attribute)
    raise ValueError(f"unknown algorithm {name!r}; allowed: {', '.join(ALGORITHMS)}")


_HOW_TO_LOAD = (
    "load a saved model with SB3Agent.load('model.zip'), or name it in a spec as 'sb3:<model.zip>' "
    "(make_policy('sb3', policy=model.policy) takes one in memory)"
)


class SB3Agent(RulesAware):
    """A Stable-Baselines3 policy as a Connect Four agent.

    The policy's action scores (PPO logits or DQN Q-values) are masked to the legal columns before choosing,
    so a masked move is never played, whatever the model learned.

    Args:
        policy: an SB3 policy (``model.policy``) or a whole model.
        deterministic: play the best legal column (default); False samples from the masked distribution
            (PPO only; DQN is always greedy).
        seed: seed for sampling when not deterministic.
    """

    name = "sb3"
    restricted_masks = True  # its best column among those the mask allows (a shield narrows it)

    def __init__(self, policy: Any = None, *, deterministic: bool = True, seed: int | None = None) -> None:
        if policy is None:  # ``make_policy("sb3")`` calls SB3Agent(): say where a policy comes from
            raise TypeError(f"the 'sb3' agent needs a trained model: {_HOW_TO_LOAD}")
        if isinstance(policy, (str, Path)):  # a path is the commonest slip: Python's own error names no fix
            raise TypeError(f"SB3Agent() takes a policy, not a path ({policy!r}): {_HOW_TO_LOAD}")
        self.policy = getattr(policy, "policy", policy)
        self.deterministic = deterministic
        self.rng = seeded_rng(seed)
        space = self.policy.observation_space
        self.observation_shape = tuple(space.shape)
        # (policy, numpy layers or None, the tensors' versions, the tensors or None): see _layers
        self._layer_cache: tuple[Any, Any, tuple[int, ...], list[Any] | None] | None = None

    @classmethod
    def load(
        cls, path: str | Path, *, algo: str | None = None, deterministic: bool = True, seed: int | None = None
    ) -> SB3Agent:
        """Load the policy of a model saved by ``model.save``, without unpickling anything (see
        `connect4_agents.sb3.files`: the network is rebuilt from plain JSON and the weights read with
        ``torch.load(weights_only=True)``). ``algo`` (``"ppo"``, ``"maskable_ppo"``, ``"dqn"``) is read from the
        file unless given.

        Raises:
            FileNotFoundError: no file at ``path`` (nor at ``path`` with ``.zip``).
            ValueError: an unknown ``algo``, a file that is not an SB3 model file or one that cannot be loaded
                without running code stored in it (the message says which part), or a negative ``seed``.
            MissingExtraError: torch or SB3 (the ``train`` extra) is not installed, or the installed torch is
                older than 2.6 (whose ``weights_only=True`` is not safe), checked before the file is looked at.
        """
        if algo is not None and algo not in ALGORITHMS:
            raise ValueError(f"unknown algorithm {algo!r}; allowed: {', '.join(ALGORITHMS)}")
        for module in ("torch", "stable_baselines3"):
            require(module, "train", "loading an SB3 model")
        require_safe_torch(require("torch", "train", "loading an SB3 model"), "loading an SB3 model")
        path = Path(path)
        if not path.is_file() and path.with_suffix(".zip").is_file():
            path = path.with_suffix(".zip")
        if not path.is_file():
            raise FileNotFoundError(f"no model file at {path}")
        policy = load_policy(path, algo)  # its errors name the path
        return cls(policy, deterministic=deterministic, seed=seed)

    def save(self, path: str | Path) -> Path:
        """Write the policy as a model zip (atomically, with its ``.json`` sidecar) that
        [`load`][connect4_agents.sb3.agent.SB3Agent.load] reads.

        Returns:
            The path written.

        Raises:
            ValueError: a policy the safe loader could not rebuild (see
                `connect4_agents.sb3.files.save_policy`); nothing is written then.
        """
        return save_policy(path, self.policy)

    @classmethod
    def from_spec(cls, value: str, **kwargs: Any) -> SB3Agent:
        """``"sb3:<model.zip>"``: the model saved at that path (see
        [`load`][connect4_agents.sb3.agent.SB3Agent.load]).
        """
        value = check_spec_value(value)
        return cls.load(value, **kwargs)

    def reset(self, seed: int | None = None) -> None:
        """Before a game (the policy's ``reset``): a ``seed`` reseeds the sampling RNG, None keeps it.

        Raises:
            TypeError: ``seed`` is a bool, a float, a string or another type numpy cannot seed from.
            ValueError: ``seed`` is a negative integer.
        """
        if seed is not None:
            self.rng = seeded_rng(seed)

    def _check_rules(self, rules: Rules) -> None:
        # bind(rules) (RulesAware's) accepts only the board size the model was trained on
        shape = (rules.rows, rules.columns, 2)
        if len(self.observation_shape) == 3 and self.observation_shape != shape:
            raise ValueError(
                f"the model was trained on a {self.observation_shape[0]}x{self.observation_shape[1]} board "
                f"and cannot play {rules.rows}x{rules.columns}"
            )

    def __repr__(self) -> str:
        return f"SB3Agent({type(self.policy).__name__})"

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_layer_cache"] = None  # taken again from the policy after unpickling
        return state

    def _scores(self, observations: np.ndarray) -> np.ndarray:
        """Per column: logits (actor-critic policies) or Q-values (DQN), shape (batch, columns)."""
        import torch

        if observations.shape[1:] != self.observation_shape:
            raise ValueError(
                f"the model was trained on observations of shape {self.observation_shape}, "
                f"got {observations.shape[1:]} (another board size?)"
            )
        policy = self.policy
        layers = self._layers()
        if layers is not None:  # the actor in numpy: a forward pass of a small MLP without torch's overheads
            x = observations.reshape(len(observations), -1).astype(np.float32)
            for weight, bias, activation in layers:
                x = x @ weight + bias
                if activation is not None:
                    x = activation(x)
            return x.astype(np.float64)
        with torch.no_grad():
            if self._plain_logits:
                # the actor's logits as get_distribution computes them (a Box observation is only cast to
                # float by SB3's preprocessing), without building the validated Categorical: argmax and
                # softmax do not need the normalised logits it holds
                from stable_baselines3.common.policies import BaseModel

                tensor = torch.as_tensor(observations, device=policy.device).float()
                features = BaseModel.extract_features(policy, tensor, policy.pi_features_extractor)
                scores = policy.action_net(policy.mlp_extractor.forward_actor(features))
            else:
                tensor, _ = policy.obs_to_tensor(observations)
                if hasattr(policy, "q_net"):
                    scores = policy.q_net(tensor)
                else:
                    scores = policy.get_distribution(tensor).distribution.logits
        return scores.cpu().numpy().astype(np.float64)

    def _layers(self) -> list[tuple[np.ndarray, np.ndarray, Any]] | None:
        """The actor as numpy ``(weight, bias, activation)`` layers when it is SB3's MLP on the flattened
        planes (``FlattenExtractor``, then Linear layers with Tanh or ReLU, on the CPU), else None. The copy is
        taken again whenever a parameter changed since (each tensor's ``_version`` counts its in-place
        changes: an optimiser step, ``load_state_dict``), so it always computes what the policy would.
        """
        policy = self.policy
        cached = self._layer_cache
        # the same policy: only its tensors' versions to compare (None: an architecture torch computes)
        if (
            cached is not None
            and cached[0] is policy
            and (cached[3] is None or cached[2] == tuple(t._version for t in cached[3]))
        ):
            return cached[1]
        if not self._plain_logits or type(policy.pi_features_extractor).__name__ != "FlattenExtractor":
            self._layer_cache = (policy, None, (), None)
            return None
        if getattr(getattr(policy, "device", None), "type", "cpu") != "cpu":
            self._layer_cache = (policy, None, (), None)
            return None
        modules = [*policy.mlp_extractor.policy_net, policy.action_net]
        tensors = [t for module in modules for t in module.parameters()]
        versions = tuple(t._version for t in tensors)
        layers: list[list[Any]] = []
        for module in [*policy.mlp_extractor.policy_net, policy.action_net]:
            kind = type(module).__name__
            if kind == "Linear":
                weight = module.weight.detach().numpy().T.copy()
                bias = module.bias.detach().numpy().copy()
                layers.append([weight, bias, None])
            elif kind in _ACTIVATIONS and layers and layers[-1][2] is None:
                layers[-1][2] = _ACTIVATIONS[kind]
            else:  # another architecture: torch computes it
                self._layer_cache = (policy, None, (), None)
                return None
        result = [(weight, bias, activation) for weight, bias, activation in layers]
        self._layer_cache = (policy, result, versions, tensors)
        return result

    @property
    def _plain_logits(self) -> bool:
        """True for an actor-critic policy over a Box observation and a Discrete action space (PPO's,
        MaskablePPO's, as the envs give them).
        """
        policy = self.policy
        return (
            type(getattr(policy, "action_space", None)).__name__ == "Discrete"
            and type(getattr(policy, "observation_space", None)).__name__ == "Box"
            and all(
                hasattr(policy, name) for name in ("action_net", "mlp_extractor", "pi_features_extractor")
            )
        )

    def act_batch(self, observations: Any, action_masks: Any) -> np.ndarray:
        """One legal column per row (the batched env calls this)."""
        observations = np.asarray(observations)
        if observations.shape[1:] != self.observation_shape:
            raise ValueError(
                f"the model was trained on observations of shape {self.observation_shape}, "
                f"got {observations.shape[1:]} (another board size?)"
            )
        masks = np.asarray(action_masks)
        columns = self.observation_shape[1] if len(self.observation_shape) == 3 else masks.shape[-1]
        if masks.ndim != 2 or masks.shape[1] != columns:
            raise ValueError(f"action_masks have shape {masks.shape}; the board has {columns} columns")
        masks = mask_booleans(masks, "action_masks")
        if not masks.any(axis=1).all():
            raise NoLegalMoveError("no legal move: an action mask allows no column")
        scores = self._scores(observations)
        scores[~masks] = -np.inf
        if self.deterministic or hasattr(self.policy, "q_net"):
            return scores.argmax(axis=1)
        probabilities = np.exp(scores - scores.max(axis=1, keepdims=True))  # exactly 0 on masked columns
        probabilities /= probabilities.sum(axis=1, keepdims=True)
        return np.array([self.rng.choice(len(p), p=p) for p in probabilities])

    def act(self, observation: Any, action_mask: Any = None) -> int:
        """The column the policy plays in one position (the policy's ``act``): its best legal column, or one
        sampled from the masked distribution when not ``deterministic``.

        Raises:
            TypeError: the mask holds neither numbers nor booleans.
            ValueError: the observation is not of the shape the model was trained on, or the mask does not
                have one 0/1 entry per column.
            NoLegalMoveError: the mask allows no column (a ValueError).
        """
        planes, mask = unpack(observation, action_mask)
        return int(self.act_batch(np.asarray(planes)[None], np.asarray(mask)[None])[0])
