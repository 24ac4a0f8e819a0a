"""Per-move rewards from perfect play (connect4_agents.evaluation.rewards), checked against a slow negamax."""

from __future__ import annotations

import pytest
from helpers.extras import heavy_without_numba, needs_book
from helpers.reference import board_move_values
from hypothesis import given
from hypothesis import strategies as st

from connect4_agents.evaluation.rewards import (
    REWARD_CELLS,
    REWARD_SCALE,
    SolverRubric,
    grade_move,
    reward_supported,
    score_ranks,
    solver_rubric,
)
from connect4_env.core import Board
from connect4_env.rules import Rules

SMALL = Rules(3, 4, 3)  # small enough for a negamax over the whole tree, large enough for every kind of move
SMALL_RUBRIC = SolverRubric(SMALL)


def slow_scores(moves: tuple[int, ...], rules: Rules = SMALL) -> tuple[int | None, ...]:
    """Every column's exact score by plain negamax over the whole tree (``board_move_values``), None where the
    column is not a legal move."""
    values = board_move_values(Board.from_moves(moves, rules))
    return tuple(values.get(column) for column in range(rules.columns))


def random_position(data: st.DataObject, rules: Rules) -> tuple[int, ...]:
    board, moves = Board(rules), []
    for _ in range(data.draw(st.integers(0, rules.cells - 1))):
        if board.is_terminal:
            break
        column = data.draw(st.sampled_from(board.legal_moves()))
        board.play(column)
        moves.append(column)
    if board.is_terminal:
        moves.pop()
    return tuple(moves)


@given(st.data())
def test_the_rubrics_scores_are_the_slow_negamaxs_on_any_position(data: st.DataObject) -> None:
    moves = random_position(data, SMALL)
    rubric = SMALL_RUBRIC
    board = Board.from_moves(moves, SMALL)
    expected = slow_scores(moves)
    assert rubric.scores(board) == expected
    column = data.draw(st.sampled_from(board.legal_moves()))
    grade = rubric.grade(board, column)
    best = max(s for s in expected if s is not None)
    assert (grade.reward == 1.0) == (expected[column] == best) == (grade.rank == 1)


@given(st.lists(st.one_of(st.none(), st.integers(-20, 20)), min_size=1, max_size=9), st.data())
def test_a_better_score_never_gets_a_smaller_reward_or_a_worse_rank(
    scores: list[int | None], data: st.DataObject
) -> None:
    legal = [column for column, score in enumerate(scores) if score is not None]
    if not legal:
        return
    first, second = data.draw(st.sampled_from(legal)), data.draw(st.sampled_from(legal))
    a, b = grade_move(scores, first), grade_move(scores, second)
    if scores[first] >= scores[second]:  # type: ignore[operator]
        assert a.reward >= b.reward and a.rank <= b.rank and a.classes_lost <= b.classes_lost
    assert a.reward in REWARD_SCALE.values() and 0 <= a.classes_lost <= 2
    assert a.verdict == {1.0: "best", 0.5: "keeps"}.get(a.reward, "mistake")


def test_each_step_of_the_scale_on_a_board() -> None:
    # X to move (7 stones each... ): column 4 wins at once, 1 draws at best, the others lose
    scores = [0, -3, -3, 9, -3, 2, None]
    assert [grade_move(scores, c).reward for c in (3, 5, 0, 1)] == [1.0, 0.5, -0.5, -1.0]
    assert score_ranks(scores) == [3, 4, 4, 1, 4, 2, None]


@needs_book  # an early 6x7 position
def test_the_top_three_counts_moves_that_throw_a_win_away_where_few_scores_are_distinct() -> None:
    board = Board.from_ascii(
        """
        . . . . . . .
        . . . . . . .
        . . . . . X .
        . . . . . X .
        . . . . O O .
        X . O O X O X
        """
    )
    rubric = SolverRubric()
    assert rubric.scores(board) == (-29, -29, -3, 2, -29, -3, -3)  # X wins only by column 4 (d)
    grades = [rubric.grade(board, column) for column in range(7)]
    assert [grade.verdict for grade in grades].count("mistake") == 6
    assert all(grade.top3 for grade in grades)  # three distinct scores: every move is in the top 3
    assert [grade.reward for grade in grades] == [-1.0, -1.0, -1.0, 1.0, -1.0, -1.0, -1.0]


def test_a_board_the_solver_cannot_answer_in_seconds_is_refused_when_the_rubric_is_built() -> None:
    assert reward_supported(Rules(5, 6, 4)) and not reward_supported(Rules(5, 7, 4))
    with pytest.raises(ValueError, match=f"at most {REWARD_CELLS} cells; this 5x7 board has 35 cells"):
        SolverRubric(Rules(5, 7, 4))
    with pytest.raises(ValueError, match="this 6x7 board has 5 in a row, and the opening book is for four"):
        SolverRubric(Rules(6, 7, 5))  # the reason is the win length, not the 42 cells
    with pytest.raises(TypeError):
        SolverRubric("6x7")  # type: ignore[arg-type]


def test_a_move_the_board_does_not_allow_is_a_value_error_naming_the_legal_columns() -> None:
    rubric = SolverRubric(Rules(4, 5, 4))
    board = Board.from_moves([0, 0, 0, 0], Rules(4, 5, 4))
    with pytest.raises(
        ValueError, match=r"column 0 is not a legal move here: legal columns are \[1, 2, 3, 4\]"
    ):
        rubric.grade(board, 0)
    with pytest.raises(ValueError, match="grades"):
        rubric.scores(Board(Rules(4, 4, 3)))


def test_the_completions_of_one_prompt_cost_one_solve() -> None:
    rubric = SolverRubric(Rules(4, 5, 4))
    board = Board.from_moves([2, 2], Rules(4, 5, 4))
    rubric.scores(board)
    solved = rubric._solver.last_nodes
    rubric._solver.last_nodes = -1
    assert [rubric(board, column) for column in range(5)] and rubric._solver.last_nodes == -1
    assert solved > 0


def test_the_solver_reward_is_one_rubric_per_board_in_a_process_shared_by_every_env() -> None:
    from connect4_env.rewards import make_move_rubric

    rules = Rules(4, 5, 4)
    shared = make_move_rubric("solver", rules)
    assert shared is make_move_rubric("solver", rules) is solver_rubric(rules)
    assert make_move_rubric("solver", SMALL) is not shared and solver_rubric(SMALL).rules == SMALL


def test_threads_grading_with_one_rubric_get_what_one_thread_gets() -> None:
    import threading

    rules = Rules(4, 5, 4)
    boards = [
        Board.from_moves(moves, rules) for moves in ([], [2], [2, 2], [0, 4, 1], [1, 3, 2, 2], [4, 4, 4])
    ]
    expected = [SolverRubric(rules).scores(board) for board in boards]
    shared, results, errors = SolverRubric(rules), {}, []

    def grade(index: int) -> None:
        try:
            results[index] = [shared.scores(board) for board in boards[index % 2 :: 2]]
        except Exception as error:  # reported below: a thread's exception is otherwise lost
            errors.append(error)

    threads = [threading.Thread(target=grade, args=(index,)) for index in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert all(results[index] == expected[index % 2 :: 2] for index in range(4))


@heavy_without_numba  # 20,000,000 nodes of the empty 3x10 board: seconds compiled
def test_a_board_whose_empty_position_is_past_the_node_bound_is_refused_once_and_then_at_once() -> None:
    from connect4_agents.evaluation import rewards

    wide = Rules(3, 10, 4)  # 30 cells, but four in a row along ten columns keeps the search wide open
    assert reward_supported(wide)
    with pytest.raises(ValueError, match="needs more than 20,000,000 solver nodes"):
        solver_rubric(wide)
    assert wide in rewards._REFUSED
    with pytest.raises(ValueError, match="needs more than 20,000,000 solver nodes"):
        solver_rubric(wide)  # from the refusals kept: no second search
