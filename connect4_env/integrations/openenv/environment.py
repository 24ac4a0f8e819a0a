"""`Connect4Text-v0` as an OpenEnv environment: its Action / Observation / State models, the OpenEnv
`Environment` the server runs (one per session), and the typed OpenEnv `EnvClient` that plays it over a
WebSocket session (the `openenv` extra: `openenv`, or `openenv-core` in its place; both are supported).

The wire format, as OpenEnv serialises these models:

    action       {"message": "I play d"}                    the model's answer, at most max_answer_length chars
    observation  {"text": ..., "legal_columns": [1, ...],   the position as Connect4Text-v0 shows it; 1-based
                  "parsed_column": 3, "parse_error": null,  the env's 0-based column read, or why not
                  "outcome": null, "retries_left": 2}       "win" / "loss" / "draw" at the end
                 + "reward" and "done" beside it             Connect4-v0's reward, terminated
    state        {"episode_id", "step_count", "board", "ply", "learner", "outcome"}
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server import Action, Environment, Observation, State
from pydantic import Field

from connect4_env.envs.text_env import Connect4TextEnv
from connect4_env.envs.text_protocol import MAX_ANSWER_LENGTH

__all__ = [
    "Connect4TextAction",
    "Connect4TextObservation",
    "Connect4TextState",
    "Connect4TextEnvironment",
    "Connect4TextClient",
    "NoGameError",
]

# openenv's StepResult has a metadata field; openenv-core's (the same package's other distribution) has not
_STEP_RESULT_HAS_METADATA = "metadata" in {field.name for field in dataclasses.fields(StepResult)}


class Connect4TextAction(Action):
    """The model's answer, read by `Connect4Text-v0`'s grammar (`"4"`, `"column 4"`, `"I play d"`)."""

    message: str = Field(max_length=MAX_ANSWER_LENGTH, description="the model's answer, as free text")


class Connect4TextObservation(Observation):
    """The position as text, with the parse of the last answer (`reward` and `done` come from OpenEnv)."""

    text: str = Field(description="the position as text (Connect4Text-v0's observation)")
    legal_columns: list[int] = Field(default_factory=list, description="legal columns, 1-based as in text")
    parsed_column: int | None = Field(
        default=None, description="the 0-based column read from the last answer"
    )
    parse_error: str | None = Field(default=None, description="why the last answer was rejected, if it was")
    outcome: str | None = Field(default=None, description="'win', 'loss' or 'draw' once the game is over")
    retries_left: int | None = Field(
        default=None, description="rejected answers still forgiven for this move"
    )


class Connect4TextState(State):
    """The session's game: the board as ASCII (`X` first mover), plies played, the learner's side."""

    board: str = ""
    ply: int = 0
    learner: int = 0
    outcome: str | None = None


class NoGameError(RuntimeError):
    """A step on an environment with no game in progress (OpenEnv's stateless HTTP `/step`, or after the end)."""


class Connect4TextEnvironment(Environment[Connect4TextAction, Connect4TextObservation, Connect4TextState]):
    """One session's `Connect4Text-v0`; keyword arguments go to
    [`Connect4TextEnv`][connect4_env.envs.text_env.Connect4TextEnv].

    Each session has its own instance (`SUPPORTS_CONCURRENT_SESSIONS`), so sessions share nothing.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, **env_kwargs: Any) -> None:
        super().__init__()
        self.env = Connect4TextEnv(**env_kwargs)
        self._state = Connect4TextState()
        self._playing = False

    def _observation(
        self, text: str, reward: float | None, done: bool, info: dict[str, Any]
    ) -> Connect4TextObservation:
        legal = [] if done else [int(c) + 1 for c in info["action_mask"].nonzero()[0]]
        board = self.env.board
        self._state.board = board.to_ascii(column_numbers=False)
        self._state.ply = board.ply
        self._state.outcome = info.get("outcome")
        return Connect4TextObservation(
            text=text,
            legal_columns=legal,
            parsed_column=info.get("parsed_column"),
            parse_error=info.get("parse_error"),
            outcome=info.get("outcome"),
            retries_left=info.get("retries_left"),
            reward=reward,
            done=done,
        )

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> Connect4TextObservation:
        """Start a game (`seed` makes it reproducible); returns the first observation.

        Raises:
            TypeError: a seed that is not an integer.
            ValueError: a negative seed.
        """
        text, info = self.env.reset(seed=seed)
        self._state = Connect4TextState(
            episode_id=episode_id or str(uuid.uuid4()), step_count=0, learner=self.env.game.learner
        )
        self._playing = True
        return self._observation(text, None, False, info)

    def step(
        self, action: Connect4TextAction, timeout_s: float | None = None, **kwargs: Any
    ) -> Connect4TextObservation:
        """Play the answer; returns the observation with Connect4-v0's reward and `done`.

        Raises:
            NoGameError: no game in progress (reset first; OpenEnv's HTTP `/step` is stateless).
            TypeError: the action is not a
                [`Connect4TextAction`][connect4_env.integrations.openenv.environment.Connect4TextAction].
        """
        if not self._playing:
            raise NoGameError(
                "no game in progress (none started here, or it is over): reset first. OpenEnv's HTTP /reset and /step are stateless (a new env per "
                "request); play a game over the /ws session (OpenEnv's EnvClient) or the /sessions routes"
            )
        if not isinstance(action, Connect4TextAction):
            raise TypeError(f"expected a Connect4TextAction, got {type(action).__name__}")
        text, reward, terminated, truncated, info = self.env.step(action.message)
        self._state.step_count += 1
        done = terminated or truncated
        self._playing = not done
        return self._observation(text, float(reward), done, info)

    @property
    def state(self) -> Connect4TextState:
        """The session's game (see [`Connect4TextState`][connect4_env.integrations.openenv.environment.Connect4TextState])."""
        return self._state

    def close(self) -> None:
        """Close the session's [`Connect4TextEnv`][connect4_env.envs.text_env.Connect4TextEnv] (OpenEnv's
        ``close``, called when the session ends).
        """
        self.env.close()


class Connect4TextClient(EnvClient[Connect4TextAction, Connect4TextObservation, Connect4TextState]):
    """OpenEnv's WebSocket client, typed for this environment: each client is one server session.

    >>> with Connect4TextClient(base_url="http://127.0.0.1:8000").sync() as env:  # doctest: +SKIP
    ...     result = env.reset(seed=0)
    ...     result = env.step(Connect4TextAction(message="4"))
    """

    def _step_payload(self, action: Connect4TextAction) -> dict[str, Any]:
        return action.model_dump()

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[Connect4TextObservation]:
        fields = dict(payload.get("observation", {}))
        fields.update(reward=payload.get("reward"), done=payload.get("done", False))
        extra = {"metadata": payload.get("metadata")} if _STEP_RESULT_HAS_METADATA else {}
        return StepResult(
            observation=Connect4TextObservation(**fields),
            reward=payload.get("reward"),
            done=payload.get("done", False),
            **extra,
        )

    def _parse_state(self, payload: dict[str, Any]) -> Connect4TextState:
        return Connect4TextState(**payload)
