"""Per-move rewards from perfect play: every move graded by the solver's exact scores, for training.

The reward of a move is what it keeps of the best outcome, for the player who made it:

| the move | reward |
|---|---|
| has the best exact score (the quickest win, the slowest loss, or a draw) | `+1.0` |
| keeps the best outcome class (win, draw or loss), not the best score | `+0.5` |
| gives one class up (a win for a draw, a draw for a loss) | `-0.5` |
| gives a win up for a loss | `-1.0` |

An answer the dialect rejects (unreadable, off the board, a full column) has no move to grade: it gets
[`REJECTED_ANSWER_REWARD`][connect4_agents.evaluation.rewards.REJECTED_ANSWER_REWARD] (`-1.0`), the reward of
the worst move, so that no answer is worth less than a legal one.

Beside the reward, [`MoveGrade`][connect4_agents.evaluation.rewards.MoveGrade] has SPIN-Bench's looser measure:
the move's *rank* among the legal columns by exact score, ties sharing a rank (dense ranking: scores
`[3, 3, 1, -2]` rank `1, 1, 2, 3`), and whether it is in the top 3. Where few scores are distinct, the top 3
holds losing moves beside winning ones, which the outcome classes never count as good.

A [`SolverRubric`][connect4_agents.evaluation.rewards.SolverRubric] grades moves on one board size: 6x7 with
four in a row when the opening book is installed (the `book` extra), or a board of at most
[`REWARD_CELLS`][connect4_agents.evaluation.rewards.REWARD_CELLS] cells, where the solver answers any position
exactly in seconds, and whose empty board it solves within
[`REWARD_NODES`][connect4_agents.evaluation.rewards.REWARD_NODES] nodes when the rubric is built (3x10 with four
in a row has 30 cells and does not); it refuses any other board when it is built, before training starts. It keeps the
scores of the positions it has solved (most recently used first), so the completions of one prompt cost one
solve. [`solver_rubric`][connect4_agents.evaluation.rewards.solver_rubric] (the ``"solver"`` reward name) gives
one rubric per board size per process, shared by every env that asks (a vector of text envs solves each
position once, and keeps one solver table); a rubric is safe to share between threads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from connect4_agents.evaluation.test_sets import score_outcome
from connect4_agents.solver.agent import SolverAgent, SolverBudgetExceeded
from connect4_agents.solver.book import BOOK_RULES, book_available
from connect4_env.core import Board
from connect4_env.rules import Rules, check_rules
from connect4_env.validation import check_int

__all__ = [
    "MoveGrade",
    "SolverRubric",
    "solver_rubric",
    "grade_move",
    "score_ranks",
    "reward_supported",
    "unsupported_board",
    "REWARD_SCALE",
    "REJECTED_ANSWER_REWARD",
    "REWARD_CELLS",
    "TOP_RANKS",
]

REWARD_SCALE = {"best": 1.0, "keeps": 0.5, "one_class": -0.5, "two_classes": -1.0}
"""The reward of a move by what it keeps of the best outcome (see the module docstring)."""
REJECTED_ANSWER_REWARD = -1.0
"""The reward of an answer the dialect rejects: that of the worst move."""
REWARD_CELLS = 30
"""The most cells of a board graded without the book."""
REWARD_NODES = 20_000_000
"""The solver nodes the empty board of a board graded without the book may take (a few seconds compiled): the
rubric solves it when it is built, and refuses the board past this (3x10 and 2x15 with four in a row are)."""
TOP_RANKS = 3
"""SPIN-Bench counts a move among the 3 best-ranked as good."""
_CACHE_POSITIONS = 200_000  # positions whose scores a rubric keeps: a few hundred bytes each


@dataclass(frozen=True)
class MoveGrade:
    """One move graded by perfect play, for the player who made it.

    Attributes:
        column: the move, 0-based.
        scores: the exact score of every column before the move (None for a full one), for the mover.
        verdict: ``"best"`` (the best score), ``"keeps"`` (the best outcome class) or ``"mistake"``.
        classes_lost: outcome classes given up: 0, 1 (a win for a draw, a draw for a loss) or 2.
        reward: the move's reward on `REWARD_SCALE`.
        rank: the move's dense rank among the legal columns by score (1 the best; ties share a rank).
    """

    column: int
    scores: tuple[int | None, ...]
    verdict: str
    classes_lost: int
    reward: float
    rank: int

    @property
    def top3(self) -> bool:
        """Whether SPIN-Bench counts the move as good: its rank is at most `TOP_RANKS`."""
        return self.rank <= TOP_RANKS


def score_ranks(scores: Sequence[int | None]) -> list[int | None]:
    """Each column's dense rank by score (1 the best, ties sharing a rank), None for a full column."""
    distinct = sorted({score for score in scores if score is not None}, reverse=True)
    place = {score: index + 1 for index, score in enumerate(distinct)}
    return [None if score is None else place[score] for score in scores]


def grade_move(scores: Sequence[int | None], column: int) -> MoveGrade:
    """Grade ``column`` given the exact score of every column (`SolverAgent.evaluate_board`'s list).

    Raises:
        ValueError: ``column`` is not a column of ``scores`` with a score (off the board or full).
    """
    if not 0 <= column < len(scores) or scores[column] is None:
        legal = [index for index, score in enumerate(scores) if score is not None]
        raise ValueError(f"column {column} is not a legal move here: legal columns are {legal}")
    played = scores[column]
    assert played is not None
    best = max(score for score in scores if score is not None)
    classes_lost = score_outcome(best) - score_outcome(played)
    if played == best:
        verdict, reward = "best", REWARD_SCALE["best"]
    elif classes_lost == 0:
        verdict, reward = "keeps", REWARD_SCALE["keeps"]
    else:
        verdict = "mistake"
        reward = REWARD_SCALE["one_class" if classes_lost == 1 else "two_classes"]
    rank = score_ranks(scores)[column]
    assert rank is not None
    return MoveGrade(column, tuple(scores), verdict, classes_lost, reward, rank)


def reward_supported(rules: Rules) -> bool:
    """Whether a `SolverRubric` grades moves on ``rules``: 6x7 with four in a row and the opening book
    installed, or at most `REWARD_CELLS` cells.
    """
    return (rules == BOOK_RULES and book_available()) or rules.cells <= REWARD_CELLS


def unsupported_board(rules: Rules) -> str:
    """Why `reward_supported` refuses ``rules``: the boards the rubric grades, then what this one lacks."""
    if rules == BOOK_RULES:
        lacks = "the 6x7 board needs the opening book: pip install -e '.[book]'"
    elif (rules.rows, rules.columns) == (BOOK_RULES.rows, BOOK_RULES.columns):
        lacks = f"this 6x7 board has {rules.win_length} in a row, and the opening book is for four"
    else:
        lacks = f"this {rules.rows}x{rules.columns} board has {rules.cells} cells"
    return (
        f"a board the solver answers exactly in seconds: 6x7 with four in a row and the opening book, or at most "
        f"{REWARD_CELLS} cells; {lacks}"
    )


class SolverRubric:
    """Per-move rewards by perfect play on one board size (see the module docstring for the scale).

    Calling it, ``rubric(board, column)``, gives the reward of playing ``column`` on ``board`` for the player
    to move: the shape of `connect4_env.rewards`' move rubrics, so ``Connect4Text-v0(reward="solver")`` and
    OpenEnv's ``--reward solver`` use it.

    Args:
        rules: the board it grades (default: 6x7, four in a row).

    Raises:
        TypeError: ``rules`` is not a `Rules`.
        ValueError: the solver cannot grade this board within its bound (see `reward_supported`); the message
            says which boards it can.
    """

    def __init__(self, rules: Rules | None = None) -> None:
        rules = check_rules(rules if rules is not None else Rules())
        if not reward_supported(rules):
            raise ValueError(f"solver rewards need {unsupported_board(rules)}")
        self.rules = rules
        self._solver = SolverAgent(node_budget=None if rules == BOOK_RULES else REWARD_NODES)
        self._solver.bind(rules)
        self._cache: OrderedDict[tuple[int, int], tuple[int | None, ...]] = OrderedDict()
        self._lock = threading.Lock()  # one search at a time: the solver's tables are not shared safely
        if rules != BOOK_RULES:  # the empty board, the hardest to solve, within the bound; then no bound
            try:
                self.scores(Board(rules))
            except SolverBudgetExceeded:
                raise ValueError(
                    f"solver rewards need a board the solver answers exactly in seconds: the empty "
                    f"{rules.rows}x{rules.columns} board with win_length {rules.win_length} needs more than "
                    f"{REWARD_NODES:,} solver nodes (6x7 with four in a row and the opening book, 4x7, 5x6 or 6x5 "
                    "with four in a row, and smaller boards, are within it)"
                ) from None
            self._solver.node_budget = None

    def __repr__(self) -> str:
        return f"SolverRubric({self.rules!r})"

    def scores(self, board: Board) -> tuple[int | None, ...]:
        """The exact score of every column of ``board`` for the player to move (None: a full column).

        Raises:
            ValueError: ``board`` is another board size than the rubric's, or the game is over.
        """
        if board.rules != self.rules:
            raise ValueError(f"this rubric grades {self.rules!r}, got a board of {board.rules!r}")
        key = (board.stones[0], board.stones[1])
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached
            scores = tuple(self._solver.evaluate_board(board))
            self._cache[key] = scores
            if len(self._cache) > _CACHE_POSITIONS:
                self._cache.popitem(last=False)
            return scores

    def grade(self, board: Board, column: int) -> MoveGrade:
        """Grade playing ``column`` on ``board`` (see `grade_move`).

        Raises:
            ValueError: as `scores`, or ``column`` is not legal on ``board``.
        """
        return grade_move(self.scores(board), check_int("column", column, 0, self.rules.columns - 1))

    def __call__(self, board: Board, column: int) -> float:
        """The reward of playing ``column`` on ``board`` for the player to move (see `grade`)."""
        return self.grade(board, column).reward


_SHARED: dict[Rules, SolverRubric] = {}
_REFUSED: dict[Rules, str] = {}  # boards refused, with why: asked again, refused at once
_SHARED_LOCK = threading.Lock()  # guards the tables above and _BUILDING, never held during a build
_BUILDING: dict[Rules, threading.Lock] = {}  # one build at a time per board; other boards do not wait for it


def _known_rubric(rules: Rules) -> SolverRubric | None:
    """The rubric already built for ``rules``, or None; a board refused before raises its ValueError again."""
    with _SHARED_LOCK:
        if rules in _REFUSED:
            raise ValueError(_REFUSED[rules])
        return _SHARED.get(rules)


def solver_rubric(rules: Rules | None = None) -> SolverRubric:
    """This process's `SolverRubric` for ``rules`` (default 6x7), made on first use and shared after: the
    ``"solver"`` reward of ``Connect4Text-v0``, the OpenEnv server and the grading service. A board's first
    use builds it (solving its empty board, seconds at most); meanwhile a caller on another board is not held.

    Raises:
        TypeError: ``rules`` is not a `Rules`.
        ValueError: as `SolverRubric` (a board it cannot grade).
    """
    rules = check_rules(rules if rules is not None else Rules())
    if (rubric := _known_rubric(rules)) is not None:
        return rubric
    with _SHARED_LOCK:
        building = _BUILDING.setdefault(rules, threading.Lock())
    with building:
        if (rubric := _known_rubric(rules)) is not None:  # built while this call waited
            return rubric
        try:
            rubric = SolverRubric(rules)
        except ValueError as error:
            with _SHARED_LOCK:
                _REFUSED[rules] = str(error)
            raise
        with _SHARED_LOCK:
            _SHARED[rules] = rubric
        return rubric
