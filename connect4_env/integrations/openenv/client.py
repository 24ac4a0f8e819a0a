"""OpenEnv's WebSocket client, typed for `Connect4Text-v0` (the `openenv` extra, either distribution)."""

from __future__ import annotations

import dataclasses
from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from connect4_env.integrations.openenv.models import (
    Connect4TextAction,
    Connect4TextObservation,
    Connect4TextState,
)

__all__ = ["Connect4TextClient"]

# openenv's StepResult has a metadata field; openenv-core's (the same package's other distribution) has not
_HAS_METADATA = "metadata" in {field.name for field in dataclasses.fields(StepResult)}


class Connect4TextClient(EnvClient[Connect4TextAction, Connect4TextObservation, Connect4TextState]):
    """OpenEnv's WebSocket client for `connect4 serve-openenv`: each client is one server session.

    Examples:
        >>> with Connect4TextClient(base_url="http://127.0.0.1:8000").sync() as env:  # doctest: +SKIP
        ...     result = env.reset(seed=0, dialect="game_arena")
        ...     result = env.step(Connect4TextAction(message="Final Answer: 3"))
    """

    def _step_payload(self, action: Connect4TextAction) -> dict[str, Any]:
        return action.model_dump()

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[Connect4TextObservation]:
        reward, done = payload.get("reward"), payload.get("done", False)
        observation = Connect4TextObservation(
            **{**payload.get("observation", {}), "reward": reward, "done": done}
        )
        extra = {"metadata": payload.get("metadata")} if _HAS_METADATA else {}
        return StepResult(observation=observation, reward=reward, done=done, **extra)

    def _parse_state(self, payload: dict[str, Any]) -> Connect4TextState:
        return Connect4TextState(**payload)
