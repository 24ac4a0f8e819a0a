"""The settings of a match between a learner and an opponent, declared once for ``Connect4-v0``, its batched
version and the text env.

The three envs take these settings as keyword arguments of the same names, order and defaults (tests check their
signatures against [`MatchSettings`][connect4_env.envs.settings.MatchSettings]), and each checks them by building
one ``MatchSettings``: the checks, the messages and the meaning of each setting live here only.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from connect4_env.policy import resolve_opponent
from connect4_env.rules import Rules
from connect4_env.validation import check_choice

__all__ = ["MatchSettings", "ILLEGAL_ACTION_MODES", "check_agent_first", "check_illegal_action"]

ILLEGAL_ACTION_MODES = ("lose", "raise")
"""What a full column does: ``"lose"`` ends the episode as a loss, ``"raise"`` raises ``IllegalMoveError``."""


def check_agent_first(agent_first: object) -> bool | None:
    """``agent_first`` as given, once checked.

    Returns:
        True, False or None, as given.

    Raises:
        TypeError: ``agent_first`` is not True, False or None (numbers and strings included).
    """
    if agent_first is not None and agent_first is not True and agent_first is not False:
        raise TypeError(f"agent_first must be True, False or None (random side), got {agent_first!r}")
    return agent_first


def check_illegal_action(illegal_action: object) -> str:
    """``illegal_action`` as given, once checked.

    Returns:
        ``"lose"`` or ``"raise"``.

    Raises:
        ValueError: ``illegal_action`` is not one of [`ILLEGAL_ACTION_MODES`][connect4_env.envs.settings.ILLEGAL_ACTION_MODES].
    """
    check_choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
    return str(illegal_action)


@dataclass(frozen=True)
class MatchSettings:
    """One learner's match against an opponent: the board, who the opponent is, who moves first, and what a full
    column does.

    ``Connect4-v0``, ``gym.make_vec("Connect4-v0")`` and ``Connect4Text-v0`` take these fields as keyword
    arguments (the text env all but ``illegal_action``: an unplayable answer there is its ``invalid_answer``'s
    business). Building one checks every field.

    Raises:
        TypeError: ``agent_first`` is not True, False or None; ``opponent`` is neither a name nor an object with
            ``act``; ``opponent_kwargs`` is not a dict; a board size that is not an integer.
        ValueError: an unknown ``illegal_action`` or opponent name, ``opponent_kwargs`` with a spec or an object,
            a board size out of range (see [`Rules`][connect4_env.rules.Rules]), or an opponent that cannot play
            these rules.
    """

    rows: int = 6
    """Rows of the board (see [`Rules`][connect4_env.rules.Rules] for the allowed sizes)."""
    columns: int = 7
    """Columns of the board; the action space is ``Discrete(columns)``."""
    win_length: int = 4
    """Stones in a line that win."""
    opponent: Any = "random"
    """Who answers the learner: an agent name or spec for ``make_policy`` (``"random"``, ``"mcts:200"``,
    ``"sb3:model.zip"``), any object with ``act(observation, action_mask)``, or an
    [`OpponentPool`][connect4_env.pool.OpponentPool] (a member drawn per episode); it is given these rules
    through its ``bind(rules)``. Set a new one on a running env and it plays from the next episode on."""
    opponent_kwargs: dict[str, Any] | None = None
    """Keyword arguments for ``make_policy`` when ``opponent`` is a bare name."""
    agent_first: bool | None = True
    """True: the learner moves first; False: second; None: a random side each episode, drawn from the env's
    seeded RNG."""
    illegal_action: str = "lose"
    """A full column played by the learner: ``"lose"`` ends the episode with reward -1; ``"raise"`` raises
    ``IllegalMoveError`` and leaves the game as it was."""
    rules: Rules = dataclasses.field(init=False, repr=False, compare=False)
    """The board's [`Rules`][connect4_env.rules.Rules], built from ``rows``, ``columns`` and ``win_length``."""
    policy: Any = dataclasses.field(init=False, repr=False, compare=False)
    """The opponent as a policy bound to ``rules`` (what the env asks for moves)."""

    def __post_init__(self) -> None:
        """Check every field and build ``rules`` and ``policy`` (see the class's ``Raises``)."""
        rules = Rules(self.rows, self.columns, self.win_length)
        check_agent_first(self.agent_first)
        check_illegal_action(self.illegal_action)
        object.__setattr__(self, "rules", rules)
        object.__setattr__(self, "policy", resolve_opponent(self.opponent, self.opponent_kwargs, rules))

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The settings' names in their declared order: the envs' shared keyword arguments."""
        return tuple(field.name for field in dataclasses.fields(cls) if field.init)
