"""``make_agent(name, **kwargs)``: agents by name, as used by ``Connect4-v0``'s ``opponent=``."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from connect4_env.core import Rules
from connect4_env.policy import bind_policy

__all__ = ["make_agent", "register_agent", "agent_names", "agent_from_spec"]

# name -> "module:Class", imported on first use so that optional dependencies stay optional.
_REGISTRY: dict[str, str | Callable[..., Any]] = {
    "random": "agents.random_agent:RandomAgent",
    "human": "agents.human:HumanAgent",
    "mcts": "agents.mcts:MCTSAgent",
    "solver": "agents.solver:SolverAgent",
    "qlearning": "agents.qlearning:QLearningAgent",
    "sb3": "agents.sb3_agent:SB3Agent",
}


def register_agent(name: str, factory: str | Callable[..., Any]) -> None:
    """Register ``factory`` (a callable, or an ``"module:attr"`` string) under ``name``."""
    _REGISTRY[name] = factory


def agent_names() -> list[str]:
    """The names :func:`make_agent` knows."""
    return sorted(_REGISTRY)


def make_agent(name: str, **kwargs: Any) -> Any:
    """Build the agent registered as ``name`` with ``kwargs``.

    Raises:
        ValueError: no agent has that name (the message lists the known ones).
    """
    if not isinstance(name, str) or name not in _REGISTRY:
        raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(agent_names())}")
    factory = _REGISTRY[name]
    if isinstance(factory, str):
        module_name, attr = factory.split(":")
        factory = getattr(importlib.import_module(module_name), attr)
    return factory(**kwargs)


def agent_from_spec(spec: str, seed: int | None = None, rules: Rules | None = None) -> Any:
    """Build an agent from a command-line spec: ``"name"`` or ``"name:value"``, bound to ``rules`` if given.

    The value is the agent's main setting: ``mcts:200`` (playouts), ``qlearning:table.npz`` (a saved table),
    ``sb3:model.zip`` (a saved model). ``seed`` goes to agents that take one. Other settings: build the
    agent with :func:`make_agent` instead.

    Raises:
        ValueError: unknown name, a value the agent cannot take, or an agent that cannot play ``rules``.
    """
    agent = _agent_from_spec(spec, seed)
    return agent if rules is None else bind_policy(agent, rules)


def _agent_from_spec(spec: str, seed: int | None) -> Any:
    name, _, value = spec.partition(":")
    kwargs: dict[str, Any] = {}
    takes_seed = name not in _UNSEEDED
    if takes_seed and seed is not None:
        kwargs["seed"] = seed
    if value:
        if name not in _SPEC_VALUE:
            raise ValueError(f"agent spec {spec!r}: {name!r} takes no ':value'")
        key, convert = _SPEC_VALUE[name]
        try:
            kwargs[key] = convert(value)
        except ValueError:
            raise ValueError(f"agent spec {spec!r}: {value!r} is not a valid {key}") from None
    if name in _LOADERS and value:
        return _LOADERS[name](kwargs.pop(_SPEC_VALUE[name][0]), **kwargs)
    return make_agent(name, **kwargs)


def _load_qtable(path: str, **kwargs: Any) -> Any:
    from agents.qlearning import QLearningAgent

    return QLearningAgent.load(path, **kwargs)


def _load_sb3(path: str, **kwargs: Any) -> Any:
    from agents.sb3_agent import SB3Agent

    return SB3Agent.load(path, **kwargs)


# spec value -> keyword argument; agents loaded from a file; agents without a seed.
_SPEC_VALUE: dict[str, tuple[str, Callable[[str], Any]]] = {
    "mcts": ("playouts", int),
    "qlearning": ("path", str),
    "sb3": ("path", str),
}
_LOADERS: dict[str, Callable[..., Any]] = {"qlearning": _load_qtable, "sb3": _load_sb3}
_UNSEEDED = {"human"}
