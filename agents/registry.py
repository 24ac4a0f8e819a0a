"""``make_agent(name, **kwargs)``: agents by name, as used by ``Connect4-v0``'s ``opponent=``."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["make_agent", "register_agent", "agent_names"]

# name -> "module:Class", imported on first use so that optional dependencies stay optional.
_REGISTRY: dict[str, str | Callable[..., Any]] = {
    "random": "agents.random_agent:RandomAgent",
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
