"""Positions as prompts and completions graded by perfect play, for TRL (connect4_agents.interop.trl_rewards), and
the GRPO recipe run end to end on the CPU with a tiny model built in the test."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.extras import importorskip

from connect4_agents.evaluation.rewards import SolverRubric
from connect4_agents.interop.trl_rewards import (
    completion_text,
    draw_positions,
    position_dataset,
    solver_reward,
)
from connect4_env.core import Board
from connect4_env.rules import Rules

SMALL = Rules(4, 5, 4)
ROOT = Path(__file__).resolve().parents[2]

# X to move on 4x5: column 2 (0-based; "3" in the connect4 dialect) completes the bottom row
WIN_NOW = Board.from_ascii(
    """
    . . . . .
    . . . . .
    . O . O .
    O X . X X
    """
)


def columns_of(moves: list[int], rules: Rules = SMALL, dialect: str = "connect4") -> dict[str, list[Any]]:
    return {
        "moves": [moves],
        "rows": [rules.rows],
        "columns": [rules.columns],
        "win_length": [rules.win_length],
        "dialect": [dialect],
    }


def moves_of(board: Board) -> list[int]:
    """A move list reaching ``board`` (its stones replayed column by column, X and O alternating)."""
    rules = board.rules
    moves: list[int] = []
    pending: dict[int, list[int]] = {0: [], 1: []}
    for row in range(rules.rows):
        for column in range(rules.columns):
            owner = board.cell(row, column)
            if owner is not None:
                pending[owner].append(column)
    while pending[0] or pending[1]:
        for player in (0, 1):
            if pending[player]:
                moves.append(pending[player].pop(0))
    assert Board.from_moves(moves, rules) == board
    return moves


def test_the_draw_is_seeded_and_every_position_is_legal_open_distinct_and_non_trivial() -> None:
    first = draw_positions(SMALL, n=40, seed=3, max_plies=10)
    assert first == draw_positions(SMALL, n=40, seed=3, max_plies=10) != draw_positions(SMALL, n=40, seed=4)
    assert len(set(first)) == 40
    rubric = SolverRubric(SMALL)
    for moves in first:
        board = Board.from_moves(moves, SMALL)
        assert not board.is_terminal and len(moves) <= 10
        outcomes = {(s > 0) - (s < 0) for s in rubric.scores(board) if s is not None}
        assert len(outcomes) > 1  # some move gives up the best outcome class


def test_asking_for_more_positions_than_the_board_has_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"found \d+ distinct non-trivial positions of the 50 asked for"):
        draw_positions(Rules(3, 4, 3), n=50, seed=0, max_plies=1)
    with pytest.raises(ValueError, match="solver rewards need a board"):
        draw_positions(Rules(5, 7, 4), n=1)
    with pytest.raises(ValueError, match="max_plies"):
        draw_positions(SMALL, n=1, max_plies=20)


def test_the_best_move_gets_one_a_weaker_one_less_and_an_unreadable_answer_minus_one() -> None:
    moves = moves_of(WIN_NOW)
    scores = SolverRubric(SMALL).scores(WIN_NOW)
    assert scores[2] == max(s for s in scores if s is not None)  # X completes the bottom row
    answers = ["<answer>3</answer>", "3", "c", "1", "no idea", "9"]
    rewards = solver_reward([""] * 6, answers, **{k: v * 6 for k, v in columns_of(moves).items()})
    expected_first = SolverRubric(SMALL).grade(WIN_NOW, 0).reward
    assert rewards == [1.0, 1.0, 1.0, expected_first, -1.0, -1.0] and expected_first < 1.0


def test_each_dialect_reads_its_own_answers_and_precomputed_scores_are_used() -> None:
    moves = moves_of(WIN_NOW)
    for dialect, answer in (
        ("connect4", "Move: 3"),
        ("game_arena", "I think... Final Answer: 2"),
        ("deepmind_game_arena", "Final Answer: 2"),
        ("textarena", "[2]"),
        ("json", '{"column": 2}'),
    ):
        assert solver_reward([""], [answer], **columns_of(moves, dialect=dialect)) == [1.0], dialect
    fake = [5, 4, 3, 2, 1]  # scores given with the row are trusted: no solve
    assert solver_reward([""], ["2"], **columns_of(moves, dialect="textarena"), scores=[fake]) == [
        0.5
    ]  # keeps the win


def test_a_batch_that_does_not_line_up_is_refused_by_name() -> None:
    """A programmer's mistake, not a model's output: one completion graded out of three, an IndexError, or a
    string graded character by character were what these calls gave."""
    three = {k: v * 3 for k, v in columns_of(moves_of(WIN_NOW)).items()}
    with pytest.raises(ValueError, match="moves has 3 entries for 1 completions"):
        solver_reward([""] * 3, ["3"], **three)
    with pytest.raises(ValueError, match="moves has 1 entries for 3 completions"):
        solver_reward([""] * 3, ["3"] * 3, **{**three, "moves": three["moves"][:1]})
    with pytest.raises(ValueError, match="scores has 2 entries"):
        solver_reward([""] * 3, ["3"] * 3, **three, scores=[[0] * 4] * 2)
    with pytest.raises(TypeError, match="completions must be a list"):
        solver_reward([""] * 2, "33", **three)
    with pytest.raises(KeyError, match="dialect missing"):
        solver_reward([""] * 3, ["3"] * 3, **{k: v for k, v in three.items() if k != "dialect"})
    assert solver_reward([""] * 3, ["3"] * 3, **three, trainer_state=object()) == [1.0] * 3  # TRL's extras
    assert solver_reward([], ["3"] * 3, **three) == [1.0] * 3  # the prompts are not read


def test_conversational_completions_are_read_from_their_last_message() -> None:
    assert completion_text([{"role": "assistant", "content": "3"}]) == "3"
    assert completion_text([]) == "" and completion_text(None) == ""
    moves = moves_of(WIN_NOW)
    reward = solver_reward(
        [[]], [[{"role": "assistant", "content": "<answer>3</answer>"}]], **columns_of(moves)
    )
    assert reward == [1.0]


@pytest.mark.llm
def test_the_dataset_holds_prompts_in_the_dialect_and_the_solvers_scores() -> None:
    importorskip("datasets")
    dataset = position_dataset(SMALL, n=12, dialect="textarena", seed=1, max_plies=8)
    assert dataset.column_names == ["prompt", "moves", "rows", "columns", "win_length", "dialect", "scores"]
    rubric = SolverRubric(SMALL)
    for row, moves in zip(dataset, draw_positions(SMALL, n=12, seed=1, max_plies=8)):
        board = Board.from_moves(moves, SMALL)
        assert row["moves"] == list(moves) and row["dialect"] == "textarena"
        assert tuple(row["scores"]) == rubric.scores(board)
        assert isinstance(row["prompt"], str) and "[" in row["prompt"]
    chat = position_dataset(SMALL, n=3, seed=1, max_plies=8, chat=True)
    assert [message["role"] for message in chat[0]["prompt"]] == ["system", "user"]
    with pytest.raises(ValueError, match="dialect"):
        position_dataset(SMALL, n=1, dialect="chess")


@pytest.mark.llm
def test_the_grpo_recipe_trains_a_tiny_model_on_the_cpu_and_logs_the_reward(tmp_path: Path) -> None:
    importorskip("trl")
    out = tmp_path / "run"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "recipes" / "grpo_connect4.py"),
            "--tiny",
            "--dialect",
            "game_arena",
            "--steps",
            "3",
            "--positions",
            "16",
            "--batch-size",
            "4",
            "--num-generations",
            "4",
            "--logging-steps",
            "1",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads((out / "args.json").read_text())["tiny"] is True
    with (out / "rewards.csv").open() as stream:
        rows = list(csv.DictReader(stream))
    assert [int(row["step"]) for row in rows] == [1, 2, 3]
    assert all(-1.0 <= float(row["reward"]) <= 1.0 for row in rows)
