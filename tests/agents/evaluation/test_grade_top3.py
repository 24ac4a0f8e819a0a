"""SPIN-Bench's top-3 share beside the outcome class: dense ranks with ties, losing moves in the top 3, a recorded
game's verdicts carrying rank and top3, the grade against a brute-force reference, and the report showing the
share, reading it back, and reading an old report without it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.reference import board_move_values

from connect4_agents import RandomAgent
from connect4_agents.evaluation.arena import play_game
from connect4_agents.evaluation.grade_report import GradeReport, read_report
from connect4_agents.evaluation.grades import GameGrade, Rate
from connect4_agents.evaluation.grading import grade_games
from connect4_agents.evaluation.records import GameLog
from connect4_agents.evaluation.rewards import grade_move, score_ranks
from connect4_agents.evaluation.verdicts import move_verdicts
from connect4_env import Board, Rules

# One row of four cells, two in a row wins. X 0 gives up the win for a draw, O 2 the draw for a loss, X 3 the
# win for a loss (1 wins at once), O 1 wins:
#     X O O X
ROW_GAME = GameLog(1, 4, 2, ("first", "second"), (0, 2, 3, 1), "player1")
WIDE = Rules(3, 5, 3)  # five columns: random moves here leave the top 3 now and then


# -- ranks -------------------------------------------------------------------------------------------------------
def test_ties_share_a_rank_and_the_next_score_takes_the_next_rank() -> None:
    assert score_ranks([3, 3, 1, -2, None]) == [1, 1, 2, 3, None]
    scores = [5, 4, 3, 2, 1, 0, None]  # seven distinct scores: only the three best are in the top 3
    assert [grade_move(scores, column).top3 for column in range(6)] == [True] * 3 + [False] * 3


def test_where_few_scores_are_distinct_every_losing_move_is_in_the_top_3() -> None:
    # one winning column, six losing ones of one score: the losers share rank 2
    scores = (-3, -3, -3, 2, -3, -3, -3)
    assert score_ranks(scores) == [2, 2, 2, 1, 2, 2, 2]
    thrown = grade_move(scores, 0)
    assert (thrown.verdict, thrown.classes_lost, thrown.rank, thrown.top3) == ("mistake", 2, 2, True)


# -- verdicts of a recorded game -----------------------------------------------------------------------------------
def test_a_recorded_games_verdicts_carry_the_rank_and_top3() -> None:
    verdicts = move_verdicts(ROW_GAME)
    assert [v["scores"] for v in verdicts if v is not None] == [
        [0, 2, 2, 0],
        [None, 0, -2, -2],
        [None, 2, None, -1],
        [None, 1, None, None],
    ]
    for column, verdict in zip(ROW_GAME.moves, verdicts):
        assert verdict is not None
        assert verdict["rank"] == score_ranks(verdict["scores"])[column]
        assert verdict["top3"] == (verdict["rank"] <= 3)
    # X 3 throws a win away for a loss, and still ranks 2 of 2 distinct scores: "good" by the top 3
    assert (verdicts[2]["verdict"], verdicts[2]["rank"], verdicts[2]["top3"]) == ("mistake", 2, True)


def test_the_top3_share_counts_mistakes_the_outcome_class_does_not() -> None:
    first = grade_games([ROW_GAME], "first")
    assert first.best_class == Rate(0, 2) and first.top3 == Rate(2, 2)
    second = grade_games([ROW_GAME], "second")
    assert second.best_class == Rate(1, 2) and second.top3 == Rate(2, 2)


def test_the_top3_share_agrees_with_ranks_from_a_brute_force_reference() -> None:
    games = [
        play_game([RandomAgent(seed=2 * k), RandomAgent(seed=2 * k + 1)], WIDE, names=("a", "b"))
        for k in range(8)
    ]
    in_top3 = total = 0
    for game in games:
        board = Board(WIDE)
        for ply, column in enumerate(game.moves):
            if ply % 2 == 0:  # a's moves
                scores = board_move_values(board)
                in_top3 += sorted(set(scores.values()), reverse=True).index(scores[column]) < 3
                total += 1
            board.play(column)
    graded = grade_games(games, "a")
    assert graded.top3 == Rate(in_top3, total)
    assert 0 < in_top3 < total  # random play leaves the top 3 here: the test compares real counts


# -- the report ----------------------------------------------------------------------------------------------------
def _report() -> GradeReport:
    return GradeReport("first", "second", 1, 4, 2, 0, grade_games([ROW_GAME], "first"))


def test_the_report_shows_the_top3_share_beside_the_outcome_class_and_reads_back(tmp_path: Path) -> None:
    report = _report()
    table = report.table()
    lines = table.splitlines()
    kept = next(index for index, line in enumerate(lines) if "moves keeping the best outcome" in line)
    top3 = next(index for index, line in enumerate(lines) if "top-3 moves by score (SPIN-Bench)" in line)
    assert top3 == kept + 2  # after the non-trivial line of the outcome class
    assert lines[top3].endswith(f" 2  {Rate(2, 2)}")  # n, then the share with its interval
    assert report.to_dict()["games"]["top3"] == {
        "count": 2,
        "n": 2,
        "rate": 1.0,
        "ci95": list(Rate(2, 2).ci95),
    }
    assert any(rate == Rate(2, 2) and "SPIN-Bench" in label for label, rate, _ in report.bars())
    path = report.write(tmp_path / "report.json")
    assert read_report(path) == report


def test_an_old_report_without_the_top3_share_reads_as_not_measured(tmp_path: Path) -> None:
    data = _report().to_dict()
    del data["games"]["top3"]  # what a report written before the field holds
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    old = read_report(path)
    assert old.games.top3 is None
    assert "top-3 moves by score (SPIN-Bench)" in old.table() and "not measured" in old.table()
    assert not any("SPIN-Bench" in label for label, _, _ in old.bars())
    assert old.to_dict()["games"]["top3"] is None
    assert GameGrade.from_dict(old.to_dict()["games"]) == old.games  # null reads back as not measured


@pytest.mark.parametrize("bad", [{"count": 3, "n": 2}, "all", {"n": -1, "count": 0}])
def test_a_malformed_top3_share_is_refused_by_name(bad: object) -> None:
    data = _report().to_dict()["games"]
    data["top3"] = bad
    with pytest.raises(ValueError, match="games.top3"):
        GameGrade.from_dict(data)


# -- per test set ---------------------------------------------------------------------------------------------
def test_on_a_test_set_the_top3_share_counts_non_trivial_positions_and_a_forfeit_is_not_in_it() -> None:
    from connect4_agents.evaluation.accuracy_report import SetAccuracy
    from connect4_agents.evaluation.test_sets import Position

    # X to move on 4x5: columns 0 and 4 lose, 1-3 draw (non-trivial); ranks 2, 1, 1, 1, 2
    position = Position((), 4, 5, 4, (-1, 0, 0, 0, -1), 0)
    assert position.nontrivial
    counts = SetAccuracy()
    for column in (0, 2, None):
        counts.add(position, column)
    assert counts.nontrivial == 3 and counts.nontrivial_optimal_class == 1
    assert counts.nontrivial_top3 == 2  # the losing edge ranks 2, in the top 3; the forfeit is not
    many = Position((), 1, 7, 4, (6, 5, 4, 3, 2, 1, 0), 6)  # seven distinct scores
    counts = SetAccuracy()
    counts.add(many, 3)
    assert counts.nontrivial_top3 == 0 and counts.to_dict()["nontrivial_top3_rate"] == 0.0


def test_a_set_grade_carries_the_top3_share_through_json_and_an_old_one_reads_as_not_measured() -> None:
    from connect4_agents.evaluation.grades import SetGrade

    grade = SetGrade(Rate(5, 10), Rate(3, 8), 0, 0, Rate(7, 8))
    assert SetGrade.from_dict(json.loads(json.dumps(grade.to_dict())), "sets.x") == grade
    old = grade.to_dict()
    del old["nontrivial_top3"]
    assert SetGrade.from_dict(old, "sets.x").nontrivial_top3 is None
    with pytest.raises(ValueError, match="sets.x.nontrivial_top3"):
        SetGrade.from_dict({**grade.to_dict(), "nontrivial_top3": {"count": 9, "n": 8}}, "sets.x")
