"""`Connect4Text-v0` as an OpenEnv `Environment`: the server runs one per session (the `openenv` extra).

A session plays against the server's opponent or, with ``opponent="none"``, one client plays both seats (as
OpenEnv's own `connect4_env`), each step the move of the player to move. The text is in a dialect chosen by the
server, or by the session at reset (``reset(dialect="json")``) among those the server offers.

The reward is the text env's (``reward="outcome"``: +1 / -1 / 0 for the player who made the step), OpenEnv's
discounted trajectory credit (``"trajectory"``, RFC 004's `ExponentialDiscountingTrajectoryRubric` applied to
each seat's own steps): 0 until the end, then the mover's score, 1 win, 0.5 draw, 0 loss; at the end every step
`t` of a seat that made `k` more steps after it gets ``gamma ** k * score`` (`step_rewards`); or a per-move
reward (``"solver"``, another name registered under the ``connect4_env.rewards`` entry points, or a rubric
object: see `connect4_env.rewards`): every step's reward is the rubric's grade of the move for the seat that
made it, both seats' moves when one client plays both, the dialect's ``rejected_answer_reward`` (-1) for a
rejected answer, and nothing added at the end (`move_grade` has the grade).
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from typing import Any

from openenv.core.env_server import Environment

from connect4_env.envs.dialects import DIALECTS, Dialect, get_dialect
from connect4_env.envs.settings import MatchSettings
from connect4_env.envs.text_env import Connect4TextEnv
from connect4_env.envs.two_seats import TwoSeatTextGame
from connect4_env.integrations.openenv.models import Connect4TextAction as Action
from connect4_env.integrations.openenv.models import Connect4TextObservation as Observation
from connect4_env.integrations.openenv.models import Connect4TextState as State
from connect4_env.rewards import MoveRubric, SharedRubric, grade_report, make_move_rubric, rubric_names
from connect4_env.rules import Rules
from connect4_env.validation import check_choice, check_name_list, check_number, check_seed

__all__ = [
    "Connect4TextEnvironment",
    "NoGameError",
    "BadResetError",
    "discounted_credits",
    "session_kwargs",
    "RESET_FIELDS",
]

NO_OPPONENT = "none"
"""The `opponent` that makes a session two-seat: one client plays both sides."""
RESET_FIELDS = ("seed", "episode_id", "dialect", "legal_moves", "history", "blind")
"""What reset takes: the seed, the episode id, and the dialect and its options."""
MAX_EPISODE_ID_LENGTH = 256
GAMMA = 0.99
"""The trajectory discount by default (`ExponentialDiscountingTrajectoryRubric`'s)."""
MAX_TRAJECTORY_STEPS = 100_000
"""The most steps a game may take under ``reward="trajectory"``, which keeps a seat per step: a game of
``cells`` moves with ``max_retries`` rejected answers forgiven per move takes ``cells * (max_retries + 1)``."""
REWARDS = {
    "outcome": {"win": 1.0, "draw": 0.0, "loss": -1.0},  # Connect4-v0's
    "trajectory": {"win": 1.0, "draw": 0.5, "loss": 0.0},  # RFC 004's
}
_OTHER_SIDE = {"win": "loss", "loss": "win", "draw": "draw"}


class NoGameError(RuntimeError):
    """A step with no game in progress (OpenEnv's stateless HTTP `/step`, or after the end)."""


class BadResetError(Exception):
    """A reset argument the client got wrong (answered with 422 or an error frame, never 500)."""


class ResetTypeError(BadResetError, TypeError):
    """A reset argument of the wrong type, or one that reset does not take."""


class ResetValueError(BadResetError, ValueError):
    """A reset argument with a wrong value (a dialect the server does not offer, a negative seed)."""


def discounted_credits(step_players: Sequence[int], finals: Sequence[float], gamma: float) -> list[float]:
    """Every step's credit, in order: ``gamma ** (steps its player made after it) * finals[player]``."""
    left = [list(step_players).count(seat) for seat in range(len(finals))]
    credits = []
    for player in step_players:
        left[player] -= 1
        credits.append(finals[player] * gamma ** left[player])
    return credits


class Connect4TextEnvironment(Environment[Action, Observation, State]):
    """One session's game: [`Connect4TextEnv`][connect4_env.envs.text_env.Connect4TextEnv] against the
    opponent, or with ``opponent="none"`` (or None) a
    [`TwoSeatTextGame`][connect4_env.envs.two_seats.TwoSeatTextGame], the client in both seats.

    Args:
        reward: ``"outcome"``, ``"trajectory"``, a registered rubric's name such as ``"solver"`` (built here),
            or a rubric object (see the module docstring).
        gamma: the trajectory discount, ``0..1``.
        session_dialects: the dialects a session may choose at reset (None: all); the server's own
            (``env_kwargs["dialect"]``) is always allowed.
        **env_kwargs: the game's: `Connect4TextEnv`'s arguments, or with two seats `TwoSeatTextGame`'s.

    Raises:
        TypeError: a bad argument's type (as the game's).
        ValueError: a bad argument's value; an unknown reward (the message lists the known ones) or a rubric
            that cannot grade the board (``"solver"`` on 6x7 without the opening book, or over 30 cells); with
            two seats, `agent_first` other than True or `opponent_kwargs`; under ``reward="trajectory"``, a
            `max_retries` that lets a game take more than `MAX_TRAJECTORY_STEPS` steps.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(
        self,
        *,
        reward: str | MoveRubric = "outcome",
        gamma: float = GAMMA,
        session_dialects: Collection[str] | None = None,
        **env_kwargs: Any,
    ) -> None:
        super().__init__()
        known = [*REWARDS, *rubric_names()]
        if isinstance(reward, str):
            self.reward = check_choice("reward", reward[:40], tuple(known))
        elif callable(reward):
            self.reward = str(getattr(reward, "name", type(reward).__name__))
        else:
            raise TypeError(
                f"reward must be a str, one of {known}, or a rubric(board, column) -> float; got "
                f"{type(reward).__name__}"
            )
        self.gamma = check_number("gamma", gamma, 0.0, 1.0)
        sizes = {name: env_kwargs.get(name, getattr(MatchSettings, name)) for name in ("rows", "columns")}
        rules = Rules(**sizes, win_length=env_kwargs.get("win_length", MatchSettings.win_length))
        # built once, before the game: a board the rubric cannot grade fails here
        self.rubric = (
            None if isinstance(reward, str) and reward in REWARDS else make_move_rubric(reward, rules)
        )
        opponent = env_kwargs.get("opponent", "random")
        self.two_seats = opponent is None or (isinstance(opponent, str) and opponent == NO_OPPONENT)
        if self.two_seats:
            env_kwargs.pop("opponent")
            for name, meaningless in (("agent_first", True), ("opponent_kwargs", None)):
                if env_kwargs.pop(name, meaningless) is not meaningless:
                    raise ValueError(
                        f"{name} has no meaning when one client plays both seats (opponent='none')"
                    )
        self._kwargs = env_kwargs
        self.env: Connect4TextEnv | TwoSeatTextGame = self._build(env_kwargs)
        steps = self.env.rules.cells * (self.env.max_retries + 1 if self.env.invalid_answer == "retry" else 1)
        if self.rubric is None and self.reward == "trajectory" and steps > MAX_TRAJECTORY_STEPS:
            raise ValueError(
                f"reward='trajectory' keeps every step of a game: with max_retries={self.env.max_retries} on "
                f"{self.env.rules.cells} cells a game may take {steps} steps, more than {MAX_TRAJECTORY_STEPS}; "
                "lower max_retries"
            )
        offered: Collection[str] = DIALECTS
        if session_dialects is not None:
            offered = check_name_list("session_dialects", session_dialects, "dialect names")
            for name in offered:
                check_choice("session_dialects", name[:40], tuple(DIALECTS))
        self.session_dialects = tuple(d for d in DIALECTS if d in offered or d == self.env.dialect.name)
        self._server_dialect = self.env.dialect.name
        self._state = State()
        self._playing = False
        self._step_players: list[int] = []

    def _build(self, kwargs: dict[str, Any]) -> Connect4TextEnv | TwoSeatTextGame:
        if self.two_seats:
            return TwoSeatTextGame(**kwargs)  # this environment grades both seats' moves (see `step`)
        return Connect4TextEnv(**kwargs, reward=self.rubric if self.rubric is not None else "outcome")

    def _game_for(self, dialect: object, options: dict[str, Any]) -> Connect4TextEnv | TwoSeatTextGame:
        """The game a reset plays: the session's own when the dialect and options are its, else a new one
        (the opponent carried over); nothing of the session changes here.
        """
        if dialect is not None and not isinstance(dialect, str):
            raise TypeError(
                f"dialect must be a str, one of {list(self.session_dialects)}, got {type(dialect).__name__}"
            )
        if dialect is not None and dialect not in self.session_dialects:
            offered = ", ".join(self.session_dialects)
            raise ValueError(
                f"dialect {dialect!r} is not offered by this server; choose one of {offered}"
                if dialect in DIALECTS
                else f"unknown dialect {dialect[:40]!r}; this server offers {offered}"
            )
        settings = {
            name: self._kwargs.get(name) if value is None else value for name, value in options.items()
        }
        name = dialect or self._server_dialect
        if get_dialect(name, **settings) == self.env.dialect:  # get_dialect checks the options
            return self.env
        kwargs = {**self._kwargs, **settings, "dialect": name}
        if isinstance(self.env, Connect4TextEnv):  # the same opponent, not a second one built
            kwargs["opponent"] = self.env.settings.policy
            kwargs.pop("opponent_kwargs", None)
        return self._build(kwargs)

    @property
    def dialect(self) -> Dialect:
        """The session's dialect (the server's, or the one chosen at the last reset)."""
        return self.env.dialect

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        dialect: str | None = None,
        legal_moves: bool | None = None,
        history: bool | None = None,
        blind: bool | None = None,
        **kwargs: Any,
    ) -> Observation:
        """Start a game (`seed` makes it reproducible) in the dialect and options named (None: the server's);
        returns the first observation. A reset that fails leaves the session as it was, its game included.

        Raises:
            ResetTypeError: an argument of the wrong type, or one that reset does not take (a `TypeError`).
            ResetValueError: a negative seed, a dialect the server does not offer, an `episode_id` longer than
                `MAX_EPISODE_ID_LENGTH`, or `blind=True` with `history=False` (a `ValueError`).
        """
        try:
            if kwargs:
                shown = ", ".join(repr(name)[:40] for name in sorted(kwargs)[:5])
                raise TypeError(f"reset takes {', '.join(RESET_FIELDS)}; got {shown}")
            check_seed(seed)
            if episode_id is not None and not isinstance(episode_id, str):
                raise TypeError(f"episode_id must be a str or None, got {type(episode_id).__name__}")
            if episode_id is not None and len(episode_id) > MAX_EPISODE_ID_LENGTH:
                raise ValueError(
                    f"episode_id must be at most {MAX_EPISODE_ID_LENGTH} characters, got {len(episode_id)}"
                )
            game = self._game_for(dialect, {"legal_moves": legal_moves, "history": history, "blind": blind})
        except TypeError as error:
            raise ResetTypeError(str(error)) from None
        except ValueError as error:
            raise ResetValueError(str(error)) from None
        text, info = game.reset(seed=seed)  # a new game that fails to start is dropped; the session's stays
        self.env = game
        learner = game.game.learner if isinstance(game, Connect4TextEnv) else None
        self._state = State(
            episode_id=episode_id or str(uuid.uuid4()),
            learner=learner,
            dialect=game.dialect.name,
            template=game.template_hash,
            reward=self.reward,
        )
        self._step_players = []
        self._playing = True
        return self._observation(text, None, False, info)

    def step(self, action: Action, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        """Play the answer (for the player to move, with two seats); returns the observation.

        Raises:
            NoGameError: no game in progress (reset first; OpenEnv's HTTP `/step` is stateless).
        """
        if not self._playing:
            raise NoGameError(
                "no game in progress (none started here, or it is over): reset first. OpenEnv's HTTP /reset and "
                "/step are stateless (a new env per request); play a game over the /ws session (OpenEnv's "
                "EnvClient) or the /sessions routes"
            )
        if not isinstance(action, Action):
            raise TypeError(f"expected a Connect4TextAction, got {type(action).__name__}")
        mover = self._mover()
        grade = self._two_seat_grade(action.message)  # before the move: a rubric that fails changes nothing
        text, reward, terminated, truncated, info = self.env.step(action.message)
        if self.rubric is not None and isinstance(self.env, TwoSeatTextGame):
            if grade is not None:
                reward, info["move_grade"] = grade["reward"], grade
            else:
                reward = self.env.dialect.rejected_answer_reward
        self._step_players.append(mover)
        self._state.step_count += 1
        self._playing = not (terminated or truncated)
        return self._observation(text, float(reward), not self._playing, info)

    def _two_seat_grade(self, message: str) -> dict[str, Any] | None:
        """With two seats under a rubric, the grade of the move ``message`` names for the player to move (read as
        the game will read it), or None (no rubric, another game, or a rejected answer).
        """
        game = self.env
        if self.rubric is None or not isinstance(game, TwoSeatTextGame):
            return None
        parsed = game.dialect.parse(message, game.board, game.max_answer_length)
        if parsed.error is not None or parsed.column is None:
            return None
        return grade_report(self.rubric, game.board, parsed.column)

    def _mover(self) -> int:
        return self.env.game.learner if isinstance(self.env, Connect4TextEnv) else self.env.board.to_move

    def _observation(self, text: str, reward: float | None, done: bool, info: dict[str, Any]) -> Observation:
        player = int(info["player"]) if done and self.two_seats else self._mover()
        board, state = self.env.board, self._state
        state.board, state.ply, state.moves = board.to_ascii(column_numbers=False), board.ply, self.env.moves
        state.to_move = None if done else board.to_move
        state.outcome = info.get("outcome")
        seat_rewards = step_rewards = None
        if done:
            outcomes = [info["outcome"], _OTHER_SIDE[info["outcome"]]][:: 1 if player == 0 else -1]
            state.outcomes = outcomes
        if done and self.rubric is None:  # under a rubric, every step's reward was its move's grade
            seat_rewards = [REWARDS[self.reward][outcome] for outcome in outcomes]
            if self.reward == "trajectory":
                step_rewards = discounted_credits(self._step_players, seat_rewards, self.gamma)
                reward = seat_rewards[player]
        elif reward is not None and self.rubric is None and self.reward == "trajectory":
            reward = 0.0  # the rubric's intermediate reward
        env = self.env
        return Observation(
            text=text,
            system_prompt=env.system_prompt
            if isinstance(env, Connect4TextEnv)
            else env.system_prompt(player),
            player=player,
            legal_columns=[]
            if done
            else [int(c) + self.env.dialect.base for c in info["action_mask"].nonzero()[0]],
            parsed_column=info.get("parsed_column"),
            parse_error=info.get("parse_error"),
            outcome=info.get("outcome"),
            retries_left=info.get("retries_left"),
            move_grade=info.get("move_grade"),
            seat_rewards=seat_rewards,
            step_rewards=step_rewards,
            reward=reward,
            done=done,
        )

    @property
    def state(self) -> State:
        """The session's game (see [`Connect4TextState`][connect4_env.integrations.openenv.models.Connect4TextState])."""
        return self._state

    def close(self) -> None:
        """Close the session's game (called when the session ends)."""
        self.env.close()


def session_kwargs(env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The server's sessions' arguments: ``env_kwargs`` checked by building one environment, with a per-move
    reward (``reward="solver"``) built once, as a `SharedRubric`, so every session grades with one rubric (one
    solver, the scores it found kept once), a move at a time.

    Raises:
        TypeError: a bad argument's type (as `Connect4TextEnvironment`).
        ValueError: a bad argument's value (as `Connect4TextEnvironment`).
    """
    probe = Connect4TextEnvironment(**env_kwargs)
    probe.close()
    if probe.rubric is None or isinstance(probe.rubric, SharedRubric):
        return env_kwargs
    return {**env_kwargs, "reward": SharedRubric(probe.rubric, probe.reward)}
