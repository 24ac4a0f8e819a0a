"""Per-move rewards ("move rubrics"): what a text env pays for each move, and how a reward is named.

A *move rubric* is any callable ``rubric(board, column) -> float``: the reward of playing ``column`` (0-based,
legal) on ``board`` (the position before the move, a copy) for the player to move. ``Connect4Text-v0`` and the
OpenEnv server take a reward by name or as such an object:

| `reward` | each move | a rejected answer | the game's end |
|---|---|---|---|
| `"outcome"` (default) | 0 | 0 (under `"retry"`), -1 when it loses | +1 win, -1 loss, 0 draw |
| `"solver"` | the move's grade by perfect play (below) | the dialect's `rejected_answer_reward` (-1) | nothing more |
| a registered name, or a rubric object | `rubric(board, column)` | the dialect's `rejected_answer_reward` | nothing more |

`"solver"` is [`SolverRubric`][connect4_agents.evaluation.rewards.SolverRubric] (the `connect4_agents`
package): +1.0 for a move with the best exact score, +0.5 for one that keeps the best outcome class (win, draw
or loss), -0.5 for one that gives a class up, -1.0 for a win given up for a loss. It grades 6x7 boards with
the opening book installed and boards of at most 30 cells whose empty board it solves within 20,000,000 nodes
(4x7, 5x6, 6x5 and smaller with four in a row; not 3x10), and refuses any other board when it is built.

Names resolve as agents' do (`connect4_env.policy`): installed packages declare theirs under the
``connect4_env.rewards`` entry-point group (``name = "module:attr"``), and `register_rubric` adds more at run
time; the factory is called with the game's [`Rules`][connect4_env.rules.Rules] and returns the rubric, so a
board it cannot grade fails where the env is built, before any training step.

A rubric may also have ``grade(board, column)`` returning an object with ``reward`` and, if it has them,
``verdict``, ``rank`` and ``classes_lost`` (as `SolverRubric`'s `MoveGrade`); `grade_report` then reports them
beside the reward (the env's ``info["move_grade"]``).
"""

from __future__ import annotations

import inspect
import math
import numbers
import threading
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from connect4_env.core import Board
from connect4_env.policy import did_you_mean
from connect4_env.registry import EntryPointRegistry
from connect4_env.rules import Rules

__all__ = [
    "MoveRubric",
    "OUTCOME",
    "ENTRY_POINT_GROUP",
    "GRADE_FIELDS",
    "register_rubric",
    "rubric_names",
    "reward_names",
    "make_move_rubric",
    "grade_report",
    "SharedRubric",
]

OUTCOME = "outcome"
"""The reward by the game's outcome alone (+1 / -1 / 0 at the end): no rubric."""
ENTRY_POINT_GROUP = "connect4_env.rewards"
GRADE_FIELDS = ("verdict", "rank", "classes_lost")
"""What `grade_report` copies from a rubric's ``grade`` besides the reward, when the grade has it."""


@runtime_checkable
class MoveRubric(Protocol):
    """The reward of a move for the player who makes it: ``rubric(board, column) -> float``."""

    def __call__(self, board: Board, column: int) -> float:
        """The reward of playing ``column`` (0-based, legal) on ``board`` (before the move) for the player to move."""
        ...


# name -> a factory taking the Rules, or "module:attr"; filled from the entry points on first use.
# _RUBRICS looks this global up on each use (a test may swap it for a copy); _registry() is it, loaded.
_REGISTRY: dict[str, str | Callable[[Rules], Any]] = {}
_RUBRICS: EntryPointRegistry[Callable[[Rules], Any]] = EntryPointRegistry(
    ENTRY_POINT_GROUP, "reward", reserved=(OUTCOME,), table=lambda: _REGISTRY
)


def _registry() -> dict[str, str | Callable[[Rules], Any]]:
    return _RUBRICS.entries()


def register_rubric(name: str, factory: str | Callable[[Rules], Any]) -> None:
    """Register a rubric factory under ``name``: a callable taking the `Rules` and returning the rubric, or a
    ``"module:attr"`` string naming one, imported on first use.

    Raises:
        TypeError: ``name`` is not a str, or ``factory`` neither a str nor callable.
        ValueError: an empty name, a name with ``":"``, the name ``"outcome"``, or a string that is not
            ``"module:attr"``.
    """
    _RUBRICS.register(name, factory)


def rubric_names() -> list[str]:
    """The registered rubrics' names (``"solver"`` with `connect4_agents` installed)."""
    return _RUBRICS.names()


def reward_names() -> list[str]:
    """Every reward a name may give: ``"outcome"``, then the registered rubrics."""
    return [OUTCOME, *rubric_names()]


def make_move_rubric(reward: Any, rules: Rules) -> MoveRubric | None:
    """The rubric ``reward`` names for a game on ``rules``: None for ``"outcome"``, the registered factory's
    rubric for another name (built here: a board it cannot grade fails now), or ``reward`` itself when it is a
    callable object.

    Raises:
        TypeError: ``reward`` is neither a str nor callable, is a class, or cannot be called as
            ``rubric(board, column)`` (nor has a ``grade`` method that can).
        ValueError: an unknown name (the message lists the known ones), a registered one whose module or
            attribute is missing, or a rubric that cannot grade ``rules`` (its factory's own error).
    """
    if isinstance(reward, str):
        if reward == OUTCOME:
            return None
        if reward not in _RUBRICS:
            raise ValueError(
                f"unknown reward {reward!r:.80}{did_you_mean(reward, reward_names())}; known rewards: "
                f"{', '.join(reward_names())}, or a rubric(board, column) -> float"
            )
        rubric = _RUBRICS.load(reward)(rules)
        if not callable(rubric):
            raise TypeError(
                f"reward {reward!r}'s factory returned {rubric!r:.80}, not a rubric(board, column)"
            )
        return rubric  # type: ignore[no-any-return]
    if callable(reward):
        _check_rubric_signature(reward)
        return reward  # type: ignore[no-any-return]
    raise TypeError(
        f"reward must be a name, one of {reward_names()}, or a rubric(board, column) -> float; got "
        f"{reward!r:.80} ({type(reward).__name__})"
    )


def _check_rubric_signature(reward: Any) -> None:
    """Refuse, when the env is built, a rubric object that its first step could not call.

    The env calls ``rubric(board, column)``, or ``rubric.grade(board, column)`` where it has that method: a class,
    or a callable that cannot take those two arguments, would fail mid-training.
    """
    if isinstance(reward, type):
        raise TypeError(f"reward must be a rubric object, not the class {reward.__name__}: pass an instance")
    grade = getattr(reward, "grade", None)
    function = grade if callable(grade) else reward
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # a builtin or C callable without a signature: called as it is
        return
    try:
        signature.bind(None, 0)
    except TypeError:
        raise TypeError(
            f"reward {reward!r:.80} must be called as rubric(board, column) -> float; its signature is "
            f"{signature}"
        ) from None


def grade_report(rubric: MoveRubric, board: Board, column: int) -> dict[str, Any]:
    """Grade playing ``column`` on ``board`` with ``rubric``; ``board`` is handed over as a copy.

    Returns:
        ``{"reward": float}``, with ``verdict``, ``rank`` and ``classes_lost`` when the rubric's ``grade``
        gives them (see the module docstring).

    Raises:
        TypeError: the rubric's reward is not a real number.
        ValueError: the rubric's reward is not finite.
        Exception: whatever the rubric raised.
    """
    grade = getattr(rubric, "grade", None)
    report: dict[str, Any] = {}
    if callable(grade):
        graded = grade(board.copy(), column)
        reward = getattr(graded, "reward", graded)
        report.update((name, getattr(graded, name)) for name in GRADE_FIELDS if hasattr(graded, name))
    else:
        reward = rubric(board.copy(), column)
    if isinstance(reward, bool) or not isinstance(reward, numbers.Real):
        raise TypeError(f"the rubric {rubric!r:.80} gave {reward!r:.80}, not a number")
    value = float(reward)
    if not math.isfinite(value):
        raise ValueError(f"the rubric {rubric!r:.80} gave {value}, not a finite reward")
    return {"reward": value, **report}


class SharedRubric:
    """A rubric shared by threads (the OpenEnv server's sessions): it grades one move at a time, so one solver
    and its kept scores serve every session.

    Args:
        rubric: the rubric to share.
        name: how the reward is called (the server's ``state.reward``).
    """

    def __init__(self, rubric: MoveRubric, name: str) -> None:
        self.rubric = rubric
        self.name = name
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SharedRubric({self.rubric!r}, {self.name!r})"

    def grade(self, board: Board, column: int) -> Any:
        """The shared rubric's ``grade`` if it has one, else its reward."""
        with self._lock:
            grade = getattr(self.rubric, "grade", None)
            return grade(board, column) if callable(grade) else self.rubric(board, column)

    def __call__(self, board: Board, column: int) -> float:
        """The shared rubric's reward of playing ``column`` on ``board``."""
        with self._lock:
            return self.rubric(board, column)
