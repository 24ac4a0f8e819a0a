"""`Connect4Text-v0` as an OpenEnv environment (one job: its wire format, made and read on both sides).

Its Action / Observation / State models, the OpenEnv `Environment` the server runs (one per session) that
fills them, and the typed OpenEnv `EnvClient` that reads them over a WebSocket session (the `openenv` extra:
`openenv`, or `openenv-core` in its place; both are supported).

A session plays against the server's opponent, or, with ``opponent="none"``, one client plays both seats (as
OpenEnv's own `connect4_env`): each step is then the move of the player to move, named by the observation's
`player`. The text is in a dialect ([`get_dialect`][connect4_env.envs.dialects.get_dialect]) chosen by the
server, or by the session at reset (``reset(dialect="json")``) among those the server offers.

The wire format, as OpenEnv serialises these models:

    action       {"message": "I play d"}                    the model's answer (over max_answer_length: rejected)
    observation  {"text": ..., "system_prompt": ...,        the position shown to `player`, in the dialect
                  "player": 0,                              who the text and reward are for (0 = first mover)
                  "legal_columns": [1, ...],                numbered as the text numbers them
                  "parsed_column": 3, "parse_error": null,  the env's 0-based column read, or why not
                  "outcome": null, "retries_left": 2,       "win" / "loss" / "draw" (player's) at the end
                  "seat_rewards": null,                     [first mover's, second's] final rewards at the end
                  "step_rewards": null}                     reward="trajectory": each step's credit at the end
                 + "reward" and "done" beside it
    state        {"episode_id", "step_count", "board", "ply", "learner", "to_move", "moves", "outcome",
                  "outcomes", "dialect", "template", "reward"}
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Collection
from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server import Action, Environment, Observation, State
from pydantic import Field

from connect4_env.envs.dialects import DIALECTS, Dialect, get_dialect
from connect4_env.envs.text_env import MAX_ANSWER_LIMIT, Connect4TextEnv
from connect4_env.integrations.openenv.rewards import (
    GAMMA,
    TRAJECTORY_SCORES,
    check_reward,
    check_trajectory_length,
    discounted_credits,
    final_rewards,
)
from connect4_env.integrations.openenv.two_seats import TwoSeatTextGame
from connect4_env.validation import check_seed

__all__ = [
    "Connect4TextAction",
    "Connect4TextObservation",
    "Connect4TextState",
    "Connect4TextEnvironment",
    "Connect4TextClient",
    "NoGameError",
    "BadResetError",
    "ResetTypeError",
    "ResetValueError",
    "NO_OPPONENT",
    "RESET_OPTIONS",
    "RESET_FIELDS",
    "MAX_EPISODE_ID_LENGTH",
]

NO_OPPONENT = "none"
"""The `opponent` that makes a session two-seat: one client plays both sides."""
RESET_OPTIONS = ("dialect", "legal_moves", "history", "blind")
"""What a session may choose at reset, besides the seed: the dialect and its options."""
RESET_FIELDS = ("seed", "episode_id", *RESET_OPTIONS)
MAX_EPISODE_ID_LENGTH = 256

# openenv's StepResult has a metadata field; openenv-core's (the same package's other distribution) has not
_STEP_RESULT_HAS_METADATA = "metadata" in {field.name for field in dataclasses.fields(StepResult)}
_OTHER_SIDE = {"win": "loss", "loss": "win", "draw": "draw"}


class Connect4TextAction(Action):
    """The model's answer, read by the session's dialect (`"4"` or `"I play d"` in this package's own,
    `"Final Answer: 3"` in Game Arena's, `{"column": 3}` in JSON).

    The model takes up to 1,000,000 characters (the most any game reads): the session's `max_answer_length`
    decides, so an answer longer than the server reads is a rejected answer under the dialect's rule (its
    reason in `parse_error`), not an error before it is sent.
    """

    message: str = Field(
        max_length=MAX_ANSWER_LIMIT,
        description="the model's answer, as free text (the server reads at most its max_answer_length)",
    )


class Connect4TextObservation(Observation):
    """The position as text for `player`, with the parse of the last answer (`reward` and `done` come from
    OpenEnv); at the end of a game, each seat's final reward and, under ``reward="trajectory"``, every step's
    credit.
    """

    text: str = Field(description="the position as text for `player` (the dialect's user message)")
    system_prompt: str = Field(default="", description="the dialect's instructions for `player`'s seat")
    player: int = Field(
        default=0,
        description="the seat the text and reward are for (0 = first mover): the model's seat against an "
        "opponent; with both seats, the player to move, or once the game is over the one who made the last step",
    )
    legal_columns: list[int] = Field(
        default_factory=list, description="legal columns, numbered as the text numbers them"
    )
    parsed_column: int | None = Field(
        default=None, description="the 0-based column read from the last answer"
    )
    parse_error: str | None = Field(default=None, description="why the last answer was rejected, if it was")
    outcome: str | None = Field(
        default=None, description="'win', 'loss' or 'draw' for `player` once the game is over"
    )
    retries_left: int | None = Field(
        default=None, description="rejected answers still forgiven for this move"
    )
    seat_rewards: list[float] | None = Field(
        default=None, description="once the game is over: [first mover's, second mover's] final reward"
    )
    step_rewards: list[float] | None = Field(
        default=None,
        description="reward='trajectory', once the game is over: every step's discounted credit, in order, "
        "for the player who made it",
    )


class Connect4TextState(State):
    """The session's game: the board as ASCII (`X` first mover), plies and moves played, the seats."""

    board: str = ""
    ply: int = 0
    learner: int | None = 0
    """The model's seat against an opponent (0 = first mover); None when one client plays both seats."""
    to_move: int | None = None
    """The player to move (0 = first mover), None once the game is over (or before it starts)."""
    moves: list[int] = Field(default_factory=list)
    """The game's moves so far, both players', 0-based columns."""
    outcome: str | None = None
    """The result for the last observation's `player`, once the game is over."""
    outcomes: list[str] | None = None
    """Once the game is over: [first mover's, second mover's] result."""
    dialect: str = "connect4"
    template: str = ""
    """The dialect's `template_hash`: the prompt template and options of this game."""
    reward: str = "outcome"


class NoGameError(RuntimeError):
    """A step on an environment with no game in progress (OpenEnv's stateless HTTP `/step`, or after the end)."""


class BadResetError(Exception):
    """A reset argument the client got wrong (the server answers it with 422 or an error frame, never 500):
    raised as `ResetTypeError` or `ResetValueError`.
    """


class ResetTypeError(BadResetError, TypeError):
    """A reset argument of the wrong type, or one that reset does not take."""


class ResetValueError(BadResetError, ValueError):
    """A reset argument with a wrong value (a dialect the server does not offer, a negative seed)."""


def _check_dialects(session_dialects: Collection[str] | None) -> tuple[str, ...]:
    if session_dialects is None:
        return DIALECTS
    if isinstance(session_dialects, (str, bytes)) or not isinstance(session_dialects, Collection):
        raise TypeError(
            f"session_dialects must be a list of dialect names, got {type(session_dialects).__name__}"
        )
    for name in session_dialects:
        if not isinstance(name, str):
            raise TypeError(f"session_dialects must hold dialect names, got a {type(name).__name__}")
        if name not in DIALECTS:
            raise ValueError(
                f"unknown dialect {name[:40]!r} in session_dialects; dialects: {', '.join(DIALECTS)}"
            )
    return tuple(name for name in DIALECTS if name in session_dialects)


class Connect4TextEnvironment(Environment[Connect4TextAction, Connect4TextObservation, Connect4TextState]):
    """One session's game: [`Connect4TextEnv`][connect4_env.envs.text_env.Connect4TextEnv] against the
    opponent, or, with ``opponent="none"`` (or None), a
    [`TwoSeatTextGame`][connect4_env.integrations.openenv.two_seats.TwoSeatTextGame] where the client plays
    both seats.

    Each session has its own instance (`SUPPORTS_CONCURRENT_SESSIONS`), so sessions share nothing.

    Args:
        reward: ``"outcome"`` (the env's +1 / -1 / 0 for the player who made the step) or ``"trajectory"``
            (OpenEnv's discounted trajectory credit; see `connect4_env.integrations.openenv.rewards`).
        gamma: the trajectory discount, ``0..1``.
        session_dialects: the dialects a session may choose at reset (None: all of `DIALECTS`); the
            server's own dialect (``env_kwargs["dialect"]``) is always allowed.
        **env_kwargs: for the game: `Connect4TextEnv`'s arguments (`opponent`, `dialect`, `legal_moves`,
            `history`, `blind`, `invalid_answer`, `max_retries`, the board size, ...). With two seats, only the
            board size, `invalid_answer`, `max_retries`, `max_answer_length` and the dialect's.

    Raises:
        TypeError: a bad argument's type (as `Connect4TextEnv`'s, or `TwoSeatTextGame`'s).
        ValueError: a bad argument's value; with two seats, `agent_first` other than True, or
            `opponent_kwargs`; under ``reward="trajectory"``, a `max_retries` that lets a game take more than
            [`MAX_TRAJECTORY_STEPS`][connect4_env.integrations.openenv.rewards.MAX_TRAJECTORY_STEPS] steps.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(
        self,
        *,
        reward: str = "outcome",
        gamma: float = GAMMA,
        session_dialects: Collection[str] | None = None,
        **env_kwargs: Any,
    ) -> None:
        super().__init__()
        self.reward, self.gamma = check_reward(reward, gamma)
        opponent = env_kwargs.get("opponent", "random")
        self.two_seats = opponent is None or (isinstance(opponent, str) and opponent == NO_OPPONENT)
        kwargs = dict(env_kwargs)
        if self.two_seats:
            del kwargs["opponent"]
            if kwargs.pop("agent_first", True) is not True:
                raise ValueError(
                    "agent_first has no meaning when one client plays both seats (opponent='none')"
                )
            if kwargs.pop("opponent_kwargs", None) is not None:
                raise ValueError(
                    "opponent_kwargs has no meaning when one client plays both seats (opponent='none')"
                )
        self.env: Connect4TextEnv | TwoSeatTextGame = self._build(kwargs)
        if self.reward == "trajectory":
            check_trajectory_length(self.env.rules.cells, self.env.invalid_answer, self.env.max_retries)
        self._kwargs = kwargs
        offered = _check_dialects(session_dialects)
        self.session_dialects = tuple(
            name for name in DIALECTS if name in offered or name == self.env.dialect.name
        )
        self._server_dialect = self.env.dialect
        self._state = Connect4TextState()
        self._playing = False
        self._step_players: list[int] = []

    def _build(self, kwargs: dict[str, Any]) -> Connect4TextEnv | TwoSeatTextGame:
        return TwoSeatTextGame(**kwargs) if self.two_seats else Connect4TextEnv(**kwargs)

    def _dialect_game(self, options: dict[str, Any]) -> Connect4TextEnv | TwoSeatTextGame:
        """The game for a reset's dialect options (None: the server's): the session's own when they name
        its dialect, else a new one (the opponent carried over); nothing of the session changes here.
        """
        name = options["dialect"]
        if name is not None:
            if not isinstance(name, str):
                raise TypeError(
                    f"dialect must be a str, one of {list(self.session_dialects)}, got {type(name).__name__}"
                )
            offered = ", ".join(self.session_dialects)
            if name not in DIALECTS:
                raise ValueError(f"unknown dialect {name[:40]!r}; this server offers {offered}")
            if name not in self.session_dialects:
                raise ValueError(f"dialect {name!r} is not offered by this server; choose one of {offered}")
        settings: dict[str, Any] = {
            "dialect": name or self._server_dialect.name,
            "legal_moves": self._kwargs.get("legal_moves"),
            "history": self._kwargs.get("history"),
            "blind": self._kwargs.get("blind"),
        }
        settings.update({key: value for key, value in options.items() if value is not None})
        dialect = get_dialect(
            settings["dialect"],
            legal_moves=settings["legal_moves"],
            history=settings["history"],
            blind=settings["blind"],
        )  # checks the options
        if dialect == self.env.dialect:
            return self.env
        kwargs = {**self._kwargs, **settings}
        if isinstance(self.env, Connect4TextEnv):  # the same opponent, not a second one built
            kwargs["opponent"] = self.env.settings.policy
            kwargs.pop("opponent_kwargs", None)
        return self._build(kwargs)

    def _reset_game(
        self,
        seed: object,
        episode_id: object,
        dialect: object,
        legal_moves: object,
        history: object,
        blind: object,
        unknown: dict[str, Any],
    ) -> Connect4TextEnv | TwoSeatTextGame:
        """Check a reset's arguments; returns the game to reset (see `_dialect_game`)."""
        if unknown:
            shown = ", ".join(repr(name)[:40] for name in sorted(unknown)[:5])
            raise TypeError(f"reset takes {', '.join(RESET_FIELDS)}; got {shown}")
        check_seed(seed)
        if episode_id is not None and not isinstance(episode_id, str):
            raise TypeError(f"episode_id must be a str or None, got {type(episode_id).__name__}")
        if episode_id is not None and len(episode_id) > MAX_EPISODE_ID_LENGTH:
            raise ValueError(
                f"episode_id must be at most {MAX_EPISODE_ID_LENGTH} characters, got {len(episode_id)}"
            )
        options = {"dialect": dialect, "legal_moves": legal_moves, "history": history, "blind": blind}
        return self._dialect_game(options)

    @property
    def dialect(self) -> Dialect:
        """The session's dialect (the server's, or the one chosen at the last reset)."""
        return self.env.dialect

    def _player(self, info: dict[str, Any], done: bool) -> int:
        if isinstance(self.env, Connect4TextEnv):
            return self.env.game.learner
        return int(info["player"]) if done else int(self.env.board.to_move)

    def _observation(
        self, text: str, reward: float | None, done: bool, info: dict[str, Any]
    ) -> Connect4TextObservation:
        player = self._player(info, done)
        base = self.env.dialect.base
        legal = [] if done else [int(c) + base for c in info["action_mask"].nonzero()[0]]
        board = self.env.board
        state = self._state
        state.board = board.to_ascii(column_numbers=False)
        state.ply = board.ply
        state.moves = self.env.moves
        state.to_move = None if done else board.to_move
        state.outcome = info.get("outcome")
        seat_rewards = step_rewards = None
        if done:
            outcomes = ["draw", "draw"]
            outcomes[player] = info["outcome"]
            outcomes[1 - player] = _OTHER_SIDE[info["outcome"]]
            state.outcomes = outcomes
            seat_rewards = final_rewards(self.reward, outcomes)
            if self.reward == "trajectory":
                step_rewards = discounted_credits(self._step_players, seat_rewards, self.gamma)
                reward = TRAJECTORY_SCORES[info["outcome"]]
        elif reward is not None and self.reward == "trajectory":
            reward = 0.0  # the rubric's intermediate reward
        if isinstance(self.env, Connect4TextEnv):
            system_prompt = self.env.system_prompt
        else:
            system_prompt = self.env.system_prompt(player)
        return Connect4TextObservation(
            text=text,
            system_prompt=system_prompt,
            player=player,
            legal_columns=legal,
            parsed_column=info.get("parsed_column"),
            parse_error=info.get("parse_error"),
            outcome=info.get("outcome"),
            retries_left=info.get("retries_left"),
            seat_rewards=seat_rewards,
            step_rewards=step_rewards,
            reward=reward,
            done=done,
        )

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        dialect: str | None = None,
        legal_moves: bool | None = None,
        history: bool | None = None,
        blind: bool | None = None,
        **kwargs: Any,
    ) -> Connect4TextObservation:
        """Start a game (`seed` makes it reproducible); returns the first observation.

        The dialect options name this game's dialect (among `session_dialects`) and its options; None takes
        the server's. A reset that fails leaves the session as it was, its game included.

        Raises:
            ResetTypeError: a seed that is not an integer, an `episode_id` that is not a str, a dialect
                option of the wrong type, or an argument that reset does not take (a `TypeError`).
            ResetValueError: a negative seed, a dialect the server does not offer, an `episode_id` longer
                than `MAX_EPISODE_ID_LENGTH`, or `blind=True` with `history=False` (a `ValueError`).
            Exception: whatever the opponent raised when it moves first (the session's game is kept).
        """
        try:
            game = self._reset_game(seed, episode_id, dialect, legal_moves, history, blind, kwargs)
        except TypeError as error:
            raise ResetTypeError(str(error)) from None
        except ValueError as error:
            raise ResetValueError(str(error)) from None
        text, info = game.reset(seed=seed)  # a new game that fails to start is dropped; the session's stays
        self.env = game
        learner = game.game.learner if isinstance(game, Connect4TextEnv) else None
        self._state = Connect4TextState(
            episode_id=episode_id or str(uuid.uuid4()),
            step_count=0,
            learner=learner,
            dialect=game.dialect.name,
            template=game.template_hash,
            reward=self.reward,
        )
        self._step_players = []
        self._playing = True
        return self._observation(text, None, False, info)

    def step(
        self, action: Connect4TextAction, timeout_s: float | None = None, **kwargs: Any
    ) -> Connect4TextObservation:
        """Play the answer (for the player to move, with two seats); returns the observation with the
        session's reward and `done`.

        Raises:
            NoGameError: no game in progress (reset first; OpenEnv's HTTP `/step` is stateless).
            TypeError: the action is not a
                [`Connect4TextAction`][connect4_env.integrations.openenv.environment.Connect4TextAction].
        """
        if not self._playing:
            raise NoGameError(
                "no game in progress (none started here, or it is over): reset first. OpenEnv's HTTP /reset and "
                "/step are stateless (a new env per request); play a game over the /ws session (OpenEnv's "
                "EnvClient) or the /sessions routes"
            )
        if not isinstance(action, Connect4TextAction):
            raise TypeError(f"expected a Connect4TextAction, got {type(action).__name__}")
        mover = self.env.game.learner if isinstance(self.env, Connect4TextEnv) else self.env.board.to_move
        text, reward, terminated, truncated, info = self.env.step(action.message)
        self._step_players.append(mover)
        self._state.step_count += 1
        done = terminated or truncated
        self._playing = not done
        return self._observation(text, float(reward), done, info)

    @property
    def state(self) -> Connect4TextState:
        """The session's game (see [`Connect4TextState`][connect4_env.integrations.openenv.environment.Connect4TextState])."""
        return self._state

    def close(self) -> None:
        """Close the session's game (OpenEnv's ``close``, called when the session ends)."""
        self.env.close()


class Connect4TextClient(EnvClient[Connect4TextAction, Connect4TextObservation, Connect4TextState]):
    """OpenEnv's WebSocket client, typed for this environment: each client is one server session.

    Examples:
        >>> with Connect4TextClient(base_url="http://127.0.0.1:8000").sync() as env:  # doctest: +SKIP
        ...     result = env.reset(seed=0, dialect="game_arena")
        ...     result = env.step(Connect4TextAction(message="Final Answer: 3"))
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
