"""The wire format of `Connect4Text-v0` over OpenEnv: its Action, Observation and State models (the `openenv`
extra: `openenv`, or `openenv-core` in its place).

    action       {"message": "I play d"}                    the model's answer (over max_answer_length: rejected)
    observation  {"text", "system_prompt", "player",        the position shown to `player` (0 = first mover)
                  "legal_columns", "parsed_column",         numbered as the text numbers them; the 0-based read
                  "parse_error", "outcome", "retries_left", "win" / "loss" / "draw" (player's) at the end
                  "move_grade",                             under a per-move reward: the move's grade
                  "seat_rewards", "step_rewards"}           at the end: each seat's reward, each step's credit
                 + "reward" and "done" beside it
    state        {"episode_id", "step_count", "board", "ply", "learner", "to_move", "moves", "outcome",
                  "outcomes", "dialect", "template", "reward"}
"""

from __future__ import annotations

from typing import Any

from openenv.core.env_server import Action, Observation, State
from pydantic import Field

from connect4_env.envs.dialects import MAX_ANSWER_LENGTH

__all__ = ["Connect4TextAction", "Connect4TextObservation", "Connect4TextState"]


class Connect4TextAction(Action):
    """The model's answer, read by the session's dialect (`"4"` in this package's own, `"Final Answer: 3"` in
    Game Arena's, `{"column": 3}` in JSON). The model takes up to 1,000,000 characters: the session's
    `max_answer_length` decides, so a longer answer is a rejected answer (`parse_error`), not a refused message.
    """

    message: str = Field(max_length=MAX_ANSWER_LENGTH, description="the model's answer, as free text")


class Connect4TextObservation(Observation):
    """The position as text for `player`, with the parse of the last answer (`reward` and `done` are
    OpenEnv's); at the end of a game, each seat's final reward and, under ``reward="trajectory"``, every step's
    credit. Under a per-move reward (``reward="solver"``), `reward` is the grade of the move just made for the
    seat that made it, `move_grade` says why, and `seat_rewards` and `step_rewards` are None.
    """

    text: str = Field(description="the position as text for `player` (the dialect's user message)")
    system_prompt: str = Field(default="", description="the dialect's instructions for `player`'s seat")
    player: int = Field(
        default=0,
        description="the seat the text and reward are for (0 = first mover): the model's against an opponent; "
        "with both seats, the player to move, or once the game is over the one who made the last step",
    )
    legal_columns: list[int] = Field(default_factory=list, description="numbered as the text numbers them")
    parsed_column: int | None = Field(
        default=None, description="the 0-based column read from the last answer"
    )
    parse_error: str | None = Field(default=None, description="why the last answer was rejected, if it was")
    outcome: str | None = Field(default=None, description="'win', 'loss' or 'draw' for `player` at the end")
    retries_left: int | None = Field(default=None, description="rejected answers still forgiven this move")
    move_grade: dict[str, Any] | None = Field(
        default=None,
        description="under a per-move reward (reward='solver'), the grade of the move just made: 'reward', and "
        "the solver's 'verdict' ('best', 'keeps' or 'mistake'), 'rank' (1 the best) and 'classes_lost'; None "
        "for a rejected answer or under 'outcome' and 'trajectory'",
    )
    seat_rewards: list[float] | None = Field(
        default=None,
        description="at the end, under 'outcome' and 'trajectory': [first mover's, second mover's] final reward",
    )
    step_rewards: list[float] | None = Field(
        default=None, description="reward='trajectory', at the end: every step's discounted credit, in order"
    )


class Connect4TextState(State):
    """The session's game: the board as ASCII (`X` first mover), plies and moves played, the seats."""

    board: str = ""
    ply: int = 0
    learner: int | None = 0
    """The model's seat against an opponent (0 = first mover); None when one client plays both seats."""
    to_move: int | None = None
    """The player to move, None once the game is over (or before it starts)."""
    moves: list[int] = Field(default_factory=list)
    """Both players' moves so far, 0-based columns."""
    outcome: str | None = None
    """The result for the last observation's `player`, once the game is over."""
    outcomes: list[str] | None = None
    """Once the game is over: [first mover's, second mover's] result."""
    dialect: str = "connect4"
    template: str = ""
    """The dialect's `template_hash`: the prompt template and options of this game."""
    reward: str = "outcome"
    """The server's reward: ``outcome``, ``trajectory`` or a per-move rubric's name (``solver``)."""
