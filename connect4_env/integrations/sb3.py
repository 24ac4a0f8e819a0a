"""The batched env as a Stable-Baselines3 ``VecEnv`` (needs the ``train`` extra)."""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from connect4_env.extras import require
from connect4_env.validation import check_bool, check_int, check_seed

# checked first, so that a core install gets the extra's name and the pip command instead of a bare import error
require("stable_baselines3", "train", "the SB3 VecEnv (make_sb3_vec_env)")

from stable_baselines3.common.vec_env import VecEnv, VecMonitor  # noqa: E402

from connect4_env.envs.settings import check_agent_first, check_illegal_action  # noqa: E402
from connect4_env.envs.vector_env import Connect4VectorEnv  # noqa: E402
from connect4_env.policy import resolve_opponent  # noqa: E402

__all__ = ["Connect4SB3VecEnv", "make_sb3_vec_env"]

# what set_attr may change: the settings the batched env reads at each step or reset (checked as at construction)
_SETTABLE = ("opponent", "agent_first", "illegal_action", "copy")


class Connect4SB3VecEnv(VecEnv):
    """``num_envs`` games of ``Connect4-v0`` as a Stable-Baselines3 ``VecEnv``
    ([`make_sb3_vec_env`][connect4_env.integrations.sb3.make_sb3_vec_env]).

    ## Description
    SB3's ``VecEnv`` protocol over [`Connect4VectorEnv`][connect4_env.envs.vector_env.Connect4VectorEnv] with
    same-step autoreset: each step plays the learner's column in every game, then the opponent's replies, and
    resets every game that ended.

    ## Action Space
    `Discrete(columns)` per game; `step` takes an integer array of shape `(num_envs,)` (what SB3's `predict`
    returns). Floats, bools, strings and other shapes raise `TypeError` (nothing is cast); an out-of-range
    column raises `IllegalMoveError`.

    ## Observation Space
    `Box(0, 1, (rows, columns, 2), int8)` per game, from the learner's side (plane 0 its stones, plane 1 the
    opponent's, row 0 the top row); `reset` and `step` return `(num_envs, rows, columns, 2)`.

    ## Rewards
    float32 per game: +1 win, -1 loss or a full column under `illegal_action="lose"`, 0 otherwise.

    ## Starting State
    Empty boards (the opponent's first stone played where the learner moves second). `seed(s)` before `reset()`
    makes the run reproducible (the env's RNG and the opponent's).

    ## Episode End
    `dones[i]` is True when game `i` ended by a win, a loss, a draw or an illegal move; it is then already
    reset. Never truncated.

    ## Info
    | key | when | value |
    |---|---|---|
    | `terminal_observation` | the game ended this step | its last observation (SB3 convention) |
    | `TimeLimit.truncated` | the game ended this step | always False (games end by the rules only) |
    | `outcome` | the game ended this step | `"win"`, `"loss"` or `"draw"`, as `Connect4-v0`'s final info |
    | `illegal_action` | the game ended by a full column under `"lose"` | True |
    | `episode` | the game ended, with `VecMonitor` (the default of `make_sb3_vec_env`) | `{"r", "l", "t"}` |
    | `opponent` | every step, when `opponent` is an [`OpponentPool`][connect4_env.pool.OpponentPool] | the game's pool member (for an ended game, the one it ended against) |

    `action_masks()` (and `env_method("action_masks")`, which sb3-contrib's MaskablePPO calls) gives every
    game's legal columns as bool `(num_envs, columns)`.

    ## Failures
    An opponent that raises or answers an illegal column: `step_wait` raises and every game is as before.

    ## Arguments
    `num_envs`, then `Connect4-v0`'s keyword arguments (`rows`, `columns`, `win_length`, `opponent`,
    `opponent_kwargs`, `agent_first`, `illegal_action`, `render_mode`, `tile`).

    ## Version History
    * v0: initial release.
    """

    def __init__(self, num_envs: int, **env_kwargs: Any) -> None:
        mode = env_kwargs.pop("autoreset_mode", AutoresetMode.SAME_STEP)
        if mode not in (AutoresetMode.SAME_STEP, AutoresetMode.SAME_STEP.value):
            raise ValueError(
                f"autoreset_mode={mode!r}: SB3's VecEnv resets within the step; allowed: 'SameStep'"
            )
        env_kwargs["autoreset_mode"] = AutoresetMode.SAME_STEP
        self.venv = Connect4VectorEnv(num_envs=num_envs, **env_kwargs)
        super().__init__(num_envs, self.venv.single_observation_space, self.venv.single_action_space)
        self._actions: np.ndarray | None = None
        self.render_mode = self.venv.render_mode

    def reset(self) -> np.ndarray:
        """Start every game anew; returns the observations ``(num_envs, rows, columns, 2)``."""
        seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
        observations, _ = self.venv.reset(seed=seed)
        self._reset_seeds()
        self._reset_options()
        return observations

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed the next `reset` (SB3's rule: game ``i`` gets ``seed + i``; None draws a seed).

        Raises:
            TypeError: ``seed`` is neither None nor an integer (a bool, a float); nothing is stored.
            ValueError: ``seed`` is a negative integer; nothing is stored.
        """
        return super().seed(check_seed(seed))

    def step_async(self, actions: np.ndarray) -> None:
        """Store one column per game for `step_wait`.

        Raises:
            TypeError: ``actions`` is not an integer array of shape ``(num_envs,)`` (floats, bools, strings and
                other shapes are refused, never cast).
        """
        self._actions = self.venv.check_actions(actions)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Play the stored actions; returns ``(observations, rewards, dones, infos)`` as SB3 expects.

        Raises:
            RuntimeError: no actions are stored (no
                [`step_async`][connect4_env.integrations.sb3.Connect4SB3VecEnv.step_async] since the last
                step), or the env has not been reset.
            IllegalMoveError: an out-of-range column, a full one under ``illegal_action="raise"``, or an
                illegal or malformed answer of the opponent (every game is as before the call; whatever else
                the opponent raises passes through the same way).
        """
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        observations, rewards, terminated, truncated, info = self.venv.step(self._actions)
        self._actions = None
        dones = terminated | truncated
        names = info.get("opponent")
        infos: list[dict[str, Any]] = (
            [{} for _ in range(self.num_envs)] if names is None else [{"opponent": name} for name in names]
        )
        for i in np.flatnonzero(dones):
            infos[i]["terminal_observation"] = info["final_obs"][i]
            infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
            infos[i]["outcome"] = info["final_info"]["outcome"][i]
            if info["final_info"].get("illegal_action", truncated)[i]:
                infos[i]["illegal_action"] = True
            if names is not None:  # the ended game's opponent (the new game's is in the next step's info)
                infos[i]["opponent"] = info["final_info"]["opponent"][i]
        return observations, rewards.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """Every game's legal columns, a bool array ``(num_envs, columns)`` (what sb3-contrib's MaskablePPO
        reads).
        """
        return self.venv.action_masks()

    def close(self) -> None:
        """Close the batched env's render window, if any (SB3's ``close``)."""
        self.venv.close()

    def _indices(self, indices: None | int | Iterable[int]) -> list[int]:
        """The games ``indices`` names (None: all), each checked to be one of ``0..num_envs - 1``.

        Raises:
            TypeError: ``indices`` is neither None, an integer nor an iterable of integers (a str included),
                or an index in it is not an integer.
            ValueError: an index is outside ``0..num_envs - 1``.
        """
        if indices is None:
            return list(range(self.num_envs))
        last = self.num_envs - 1
        if isinstance(indices, (str, bytes)) or not isinstance(indices, (numbers.Integral, Iterable)):
            raise TypeError(f"indices must be None, an int or ints 0..{last}, got {type(indices).__name__}")
        if isinstance(indices, numbers.Integral):
            return [check_int("indices", indices, 0, last)]
        return [check_int("indices", i, 0, last) for i in indices]

    def get_attr(self, attr_name: str, indices: None | int | Iterable[int] = None) -> list[Any]:
        """SB3's ``get_attr``: the batched env's attribute ``attr_name``, once per game that ``indices`` names
        (None: all); the games share one env, so every entry is the same object. ``"action_masks"`` gives the
        bound method [`action_masks`][connect4_env.integrations.sb3.Connect4SB3VecEnv.action_masks].

        Raises:
            AttributeError: the batched env has no attribute ``attr_name``.
            TypeError: ``indices`` is neither None, an integer nor an iterable of integers.
            ValueError: an index is outside ``0..num_envs - 1``.
        """
        if attr_name == "action_masks":
            return [self.action_masks] * len(self._indices(indices))
        if not hasattr(self.venv, attr_name):
            raise AttributeError(f"Connect4SB3VecEnv has no attribute {attr_name!r}")
        return [getattr(self.venv, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: None | int | Iterable[int] = None) -> None:
        """Change a setting of every game, checked as the constructor checks it: ``opponent`` (a spec such
        as ``"mcts:50"``, a registered name or an object with ``act``, bound to the env's rules: self-play
        curricula swap it), ``agent_first`` (for the games started from now on), ``illegal_action`` or ``copy``.

        The games share one batched env, so a setting is for all of them: ``indices`` must be None or name
        every game. Other attributes cannot be set (SB3's ``DummyVecEnv`` would write any name onto each env;
        here a new name would change nothing and ``rules``, ``num_envs`` or the spaces would break the env).

        Raises:
        Nothing is changed when it raises.

        Raises:
            TypeError: ``attr_name`` is not a str, ``indices`` is neither None, an integer nor an iterable of
                integers, or the value has the wrong type: an ``opponent`` that is neither a name nor an
                object with ``act``, an ``agent_first`` other than True, False and None, a ``copy`` that
                is not a bool.
            AttributeError: ``attr_name`` is not a setting that can be set (the message lists those that can).
            ValueError: an index outside ``0..num_envs - 1``, ``indices`` that name only some of the games, an
                unknown opponent name or spec or one that cannot play the env's rules, or an
                ``illegal_action`` other than ``"lose"`` and ``"raise"``.
        """
        if not isinstance(attr_name, str):
            raise TypeError(f"attr_name must be a str, got {attr_name!r:.80} ({type(attr_name).__name__})")
        chosen = self._indices(indices)
        if attr_name not in _SETTABLE:
            raise AttributeError(
                f"Connect4SB3VecEnv cannot set {attr_name!r}; settable: {', '.join(_SETTABLE)} (the rest is "
                "fixed at construction: make a new env)"
            )
        if sorted(set(chosen)) != list(range(self.num_envs)):
            raise ValueError(
                f"set_attr({attr_name!r}) with indices={chosen}: the {self.num_envs} games share their "
                "settings, so a setting is for every game; pass indices=None"
            )
        venv = self.venv
        if attr_name == "opponent":
            value = resolve_opponent(value, None, venv.rules)
        elif attr_name == "agent_first":
            check_agent_first(value)
        elif attr_name == "illegal_action":
            check_illegal_action(value)
        else:
            value = check_bool(attr_name, value)
        setattr(venv, attr_name, value)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: None | int | Iterable[int] = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        """SB3's ``env_method``: call the batched env's method ``method_name`` once with ``method_args`` and
        ``method_kwargs`` and return its result once per game that ``indices`` names (None: all);
        ``"action_masks"`` returns each named game's own mask instead.

        Raises:
            AttributeError: the batched env has no method ``method_name``.
            TypeError: ``indices`` is neither None, an integer nor an iterable of integers.
            ValueError: an index is outside ``0..num_envs - 1``.
        """
        chosen = self._indices(indices)
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in chosen]
        method = getattr(self.venv, method_name)
        return [method(*method_args, **method_kwargs)] * len(chosen)

    def env_is_wrapped(self, wrapper_class: type, indices: None | int | Iterable[int] = None) -> list[bool]:
        """SB3's ``env_is_wrapped``: False for every game that ``indices`` names (None: all), since no
        Gymnasium wrapper is around the games.

        Raises:
            TypeError: ``indices`` is neither None, an integer nor an iterable of integers.
            ValueError: an index is outside ``0..num_envs - 1``.
        """
        return [False] * len(self._indices(indices))

    def get_images(self) -> Sequence[np.ndarray | None]:
        """SB3's ``get_images``: one ``(rows * tile, columns * tile, 3)`` uint8 image per game under
        ``render_mode="rgb_array"``, else None per game.
        """
        images = self.venv.render() if self.venv.render_mode == "rgb_array" else None
        return list(images) if images is not None else [None] * self.num_envs


def make_sb3_vec_env(n_envs: int = 8, monitor: bool = True, **env_kwargs: Any) -> VecEnv:
    """``n_envs`` batched games as an SB3 ``VecEnv`` (wrapped in ``VecMonitor`` for episode statistics).

    ``env_kwargs`` are ``Connect4-v0``'s: ``rows``, ``columns``, ``win_length``, ``opponent``, ``agent_first``,
    ``illegal_action``, ... Use it directly with PPO, DQN or sb3-contrib's MaskablePPO.
    """
    n_envs = check_int("n_envs", n_envs, 1)
    monitor = check_bool("monitor", monitor)
    venv: VecEnv = Connect4SB3VecEnv(n_envs, **env_kwargs)
    return VecMonitor(venv) if monitor else venv
