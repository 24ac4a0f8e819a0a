"""The rewards of `connect4 serve-openenv`: the env's own outcome reward, or OpenEnv's discounted trajectory
credit (RFC 004's `ExponentialDiscountingTrajectoryRubric`), for one seat or both (standard library only).

| `reward=` | a step's `reward` | at the end of the game |
|---|---|---|
| `"outcome"` (default) | `Connect4-v0`'s, for the player who made the step: +1 win, -1 loss, 0 draw and every other step | `seat_rewards`: each seat's +1 / -1 / 0 |
| `"trajectory"` | 0 until the game ends, then the mover's final score: 1 win, 0.5 draw, 0 loss | `seat_rewards`: each seat's score; `step_rewards`: every step's discounted credit |

The trajectory credit is OpenEnv's rubric applied to each seat's own steps: a seat that made `T` steps (its
rejected answers count: each is a step the rubric sees) with final score `R` gets `gamma ** (T - 1 - t) * R`
for its step `t` (0-based), so its last step gets `R` and earlier ones less (`gamma=1`: all equal; `gamma=0`:
only the last). The scores are RFC 004's (1 / 0.5 / 0, the `TrajectoryRubric` range `0.0-1.0`), not the
outcome reward's +1 / 0 / -1.
"""

from __future__ import annotations

from collections.abc import Sequence

from connect4_env.validation import check_choice, check_number

__all__ = [
    "REWARD_MODES",
    "GAMMA",
    "MAX_TRAJECTORY_STEPS",
    "OUTCOME_REWARDS",
    "TRAJECTORY_SCORES",
    "check_reward",
    "check_trajectory_length",
    "final_rewards",
    "discounted_credits",
]

REWARD_MODES = ("outcome", "trajectory")
GAMMA = 0.99
"""The trajectory discount by default (`ExponentialDiscountingTrajectoryRubric`'s)."""
MAX_TRAJECTORY_STEPS = 100_000
"""The most steps a game may take under ``reward="trajectory"``, which keeps a seat per step and sends a credit
per step at the end: a game of ``cells`` moves with ``max_retries`` rejected answers forgiven per move takes at
most ``cells * (max_retries + 1)``."""
OUTCOME_REWARDS = {"win": 1.0, "draw": 0.0, "loss": -1.0}
"""A seat's final reward under ``reward="outcome"`` (`Connect4-v0`'s)."""
TRAJECTORY_SCORES = {"win": 1.0, "draw": 0.5, "loss": 0.0}
"""A seat's final score under ``reward="trajectory"`` (RFC 004's win / draw / loss)."""


def check_reward(reward: object, gamma: object) -> tuple[str, float]:
    """A reward mode and its discount, checked.

    Returns:
        ``(reward, gamma)``, ``gamma`` as a float.

    Raises:
        TypeError: ``reward`` is not a str, or ``gamma`` not a real number.
        ValueError: ``reward`` is not one of `REWARD_MODES`, or ``gamma`` is outside ``0..1``.
    """
    if not isinstance(reward, str):
        raise TypeError(f"reward must be a str, one of {list(REWARD_MODES)}, got {type(reward).__name__}")
    check_choice("reward", reward[:40], REWARD_MODES)
    return reward, check_number("gamma", gamma, 0.0, 1.0)


def check_trajectory_length(cells: int, invalid_answer: str, max_retries: int) -> None:
    """Check that a game's steps stay within `MAX_TRAJECTORY_STEPS` under ``reward="trajectory"``.

    Raises:
        ValueError: ``cells * (max_retries + 1)`` (``cells`` under ``invalid_answer="lose"``) is more.
    """
    longest = cells * (max_retries + 1 if invalid_answer == "retry" else 1)
    if longest > MAX_TRAJECTORY_STEPS:
        raise ValueError(
            f"reward='trajectory' keeps every step of a game: with max_retries={max_retries} on {cells} cells a "
            f"game may take {longest} steps, more than {MAX_TRAJECTORY_STEPS}; lower max_retries"
        )


def final_rewards(reward: str, outcomes: Sequence[str]) -> list[float]:
    """Each seat's final reward (``outcomes[p]`` is seat ``p``'s ``"win"``, ``"draw"`` or ``"loss"``).

    Raises:
        ValueError: an unknown mode or outcome.
    """
    table = {"outcome": OUTCOME_REWARDS, "trajectory": TRAJECTORY_SCORES}[
        check_choice("reward", reward, REWARD_MODES)
    ]
    return [table[check_choice("outcome", outcome, tuple(table))] for outcome in outcomes]


def discounted_credits(step_players: Sequence[int], finals: Sequence[float], gamma: float) -> list[float]:
    """Every step's credit, in the order the steps were made: for the player who made it,
    ``gamma ** (steps left to that player after it) * finals[player]``.

    Args:
        step_players: who made each step (0 or 1), first step first.
        finals: each seat's final score (``finals[p]`` for seat ``p``).
        gamma: the discount, ``0..1``.

    Returns:
        One credit per step.

    Raises:
        ValueError: a step by a seat that ``finals`` has no score for.
    """
    counts = [0] * len(finals)
    for player in step_players:
        if not 0 <= player < len(finals):
            raise ValueError(f"a step by seat {player!r}; seats are 0..{len(finals) - 1}")
        counts[player] += 1
    credits = []
    for player in step_players:
        counts[player] -= 1  # the seat's steps after this one
        credits.append(finals[player] * gamma ** counts[player])
    return credits
