"""connect4_env.rewards: a reward by name (the entry points, names registered at run time) or as a rubric object,
the grade reported beside the reward, and one rubric shared by threads."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from connect4_env import rewards
from connect4_env.core import Board
from connect4_env.rewards import SharedRubric, grade_report, make_move_rubric, register_rubric, reward_names
from connect4_env.rules import Rules

RULES = Rules(4, 5, 4)
ONE_MOVE = Board.from_ascii(
    """
    . . . . .
    . . . . .
    . . . . .
    . . X . .
    """
)


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The registry, loaded from the entry points, restored after the test."""
    table = rewards._registry()
    monkeypatch.setattr(rewards, "_REGISTRY", dict(table))
    return rewards._REGISTRY


def test_outcome_is_no_rubric_and_solver_comes_from_the_entry_points() -> None:
    from connect4_agents.evaluation.rewards import SolverRubric

    assert make_move_rubric("outcome", RULES) is None
    assert reward_names()[:1] == ["outcome"] and "solver" in reward_names()
    solver = make_move_rubric("solver", RULES)
    assert isinstance(solver, SolverRubric) and solver.rules == RULES


def test_a_name_registered_at_run_time_gets_the_rules(registry: dict[str, Any]) -> None:
    built: list[Rules] = []

    def factory(rules: Rules) -> Any:
        built.append(rules)
        return lambda board, column: float(column)

    register_rubric("column", factory)
    rubric = make_move_rubric("column", RULES)
    assert built == [RULES] and rubric is not None and rubric(Board(RULES), 3) == 3.0
    register_rubric("by_path", "connect4_agents.evaluation.rewards:SolverRubric")
    assert type(make_move_rubric("by_path", RULES)).__name__ == "SolverRubric"
    register_rubric("missing", "no_such_module_here:Rubric")
    with pytest.raises(ValueError, match="reward 'missing' is registered as 'no_such_module_here:Rubric'"):
        make_move_rubric("missing", RULES)


@pytest.mark.parametrize(
    ("name", "factory", "error"),
    [
        ("outcome", "a:b", ValueError),
        ("a:b", "a:b", ValueError),
        ("", "a:b", ValueError),
        ("fine", "no_colon", ValueError),
        ("fine", 3, TypeError),
        (3, "a:b", TypeError),
    ],
)
def test_a_bad_registration_is_refused(
    registry: dict[str, Any], name: Any, factory: Any, error: type
) -> None:
    with pytest.raises(error):
        register_rubric(name, factory)
    assert "fine" not in registry


class _Graded:
    def grade(self, board: Board, column: int) -> float:
        return 1.0

    def __call__(self) -> float:  # never called: the env calls grade
        return 0.0


@pytest.mark.parametrize(
    ("reward", "message"),
    [
        (lambda board: 0.0, r"rubric\(board, column\) -> float; its signature is \(board\)"),
        (lambda board, column, extra: 0.0, "its signature is"),
        (str, "not the class str: pass an instance"),
        (_Graded, "not the class _Graded"),
    ],
)
def test_a_rubric_that_cannot_take_a_board_and_a_column_is_refused_when_built(
    reward: Any, message: str
) -> None:
    """It was accepted and failed at the first step, mid-training."""
    with pytest.raises(TypeError, match=message):
        make_move_rubric(reward, RULES)


def test_rubrics_that_can_take_a_board_and_a_column_are_kept() -> None:
    for reward in (
        lambda board, column: 0.0,
        lambda *args: 0.0,
        lambda board, column=0, scale=1: 0.0,
        _Graded(),
    ):
        assert make_move_rubric(reward, RULES) is reward


def test_the_report_has_the_solvers_grade_beside_the_reward() -> None:
    solver = make_move_rubric("solver", RULES)
    assert solver is not None
    report = grade_report(solver, ONE_MOVE, 2)
    grade = solver.grade(ONE_MOVE, 2)  # type: ignore[attr-defined]
    assert report == {
        "reward": grade.reward,
        "verdict": grade.verdict,
        "rank": grade.rank,
        "classes_lost": grade.classes_lost,
    }
    assert grade_report(lambda board, column: 1, ONE_MOVE, 2) == {"reward": 1.0}


def test_the_rubric_gets_a_copy_of_the_board() -> None:
    def spoil(board: Board, column: int) -> float:
        board.play(column)
        return 0.0

    board = ONE_MOVE.copy()
    grade_report(spoil, board, 0)
    assert board == ONE_MOVE


def test_a_shared_rubric_grades_one_move_at_a_time() -> None:
    inside, most = [0], [0]
    guard = threading.Lock()

    def slow(board: Board, column: int) -> float:
        with guard:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        for _ in range(2000):  # work that lets another thread run
            board.copy()
        with guard:
            inside[0] -= 1
        return 0.5

    shared = SharedRubric(slow, "slow")
    threads = [
        threading.Thread(target=lambda: [grade_report(shared, ONE_MOVE, 1) for _ in range(5)])
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most == [1] and shared(ONE_MOVE, 1) == 0.5 and shared.name == "slow"
