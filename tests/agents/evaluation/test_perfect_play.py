"""Strength against perfect play: the perfect player's choices, the games by seat, the records and the command."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from connect4_agents import RandomAgent, SolverAgent
from connect4_agents.commands.perfect import main
from connect4_agents.evaluation.perfect_play import (
    PerfectPlayer,
    perfect_game_length,
    play_against_perfect,
)
from connect4_agents.evaluation.records import read_games
from connect4_agents.solver.book import load_book
from connect4_env import Board, Rules
from connect4_env.encoding import observation_planes

SMALL = Rules(4, 5, 4)  # perfect play draws: 20 plies


def random_positions(rules: Rules, count: int, seed: int) -> list[Board]:
    rng = np.random.default_rng(seed)
    boards: list[Board] = []
    while len(boards) < count:
        board = Board(rules)
        for _ in range(int(rng.integers(0, rules.cells - 2))):
            legal = board.legal_moves()
            board.play(legal[int(rng.integers(len(legal)))])
            if board.is_terminal:
                break
        if not board.is_terminal:
            boards.append(board)
    return boards


def test_the_perfect_player_plays_only_best_score_columns_and_caches_them() -> None:
    judge = SolverAgent()
    perfect = PerfectPlayer(SMALL, seed=0)
    for board in random_positions(SMALL, 20, seed=1):
        scores = judge.evaluate_board(board)
        best = max(s for s in scores if s is not None)
        assert perfect.best_columns(board) == tuple(c for c, s in enumerate(scores) if s == best), board
        column = perfect.act(observation_planes(board), np.array(board.legal_mask(), np.int8))
        assert scores[column] == best
    assert perfect.lookups == 40 and len(perfect.cache) <= 20


def test_ties_are_broken_at_random_and_a_seed_repeats_them() -> None:
    board = Board(Rules(5, 4, 4))
    perfect = PerfectPlayer(Rules(5, 4, 4))
    best = perfect.best_columns(board)
    assert len(best) >= 2, board  # the empty 5x4 board: a mirror pair at least
    picks = []
    for seed in range(40):
        perfect.reset(seed=seed)
        picks.append(perfect.choose(board))
    assert set(picks) == set(best)
    perfect.reset(seed=3)
    again = perfect.choose(board)
    perfect.reset(seed=3)
    assert perfect.choose(board) == again


def test_the_solver_never_loses_and_lasts_as_long_as_perfect_play(tmp_path: Path) -> None:
    out = tmp_path / "games.jsonl"
    report = play_against_perfect("solver", first_games=3, second_games=3, rules=SMALL, seed=5, games_out=out)
    assert report.perfect == (-1, 20)
    assert report.as_first == (0, 3, 0) and report.as_second == (0, 3, 0)
    assert report.plies_survived == 20
    games = read_games(out)
    assert [g.game for g in games] == list(range(6))
    assert [g.players for g in games] == [("solver", "perfect")] * 3 + [("perfect", "solver")] * 3
    data = report.to_dict()
    assert data["as_second"]["plies"] == [20, 20, 20] and data["perfect_plies"] == 20


@pytest.mark.skipif(load_book() is None, reason="6x7 perfect play needs the book extra")
def test_the_solver_wins_as_first_player_on_6x7() -> None:
    report = play_against_perfect(SolverAgent(seed=0), first_games=2, second_games=0, seed=0)
    assert report.as_first == (2, 0, 0)
    assert report.perfect == (0, 41)


def test_games_repeat_from_their_recorded_seeds() -> None:
    report = play_against_perfect(RandomAgent(), first_games=2, second_games=2, rules=SMALL, seed=9)
    for record in report.first + report.second:
        agent_seat = 0 if record.players[0] != "perfect" else 1
        players = [None, None]
        players[agent_seat] = RandomAgent(seed=record.seeds[agent_seat])
        players[1 - agent_seat] = PerfectPlayer(SMALL, seed=record.seeds[1 - agent_seat])
        board = Board(SMALL)
        while not board.is_terminal:
            mover = players[board.to_move]
            board.play(mover.act(observation_planes(board), np.array(board.legal_mask(), np.int8)))
        assert board == record.final_board
    table = report.table()
    assert "as first player:" in table and "plies on average (a perfect player: 20)" in table


def test_bad_settings_are_refused_before_any_game() -> None:
    with pytest.raises(ValueError, match="no game to play"):
        play_against_perfect("random", first_games=0, second_games=0, rules=SMALL)
    with pytest.raises(TypeError, match="PerfectPlayer"):
        play_against_perfect("random", rules=SMALL, perfect=SolverAgent())
    with pytest.raises(ValueError, match="unknown agent"):
        play_against_perfect("nope", rules=SMALL)
    with pytest.raises(TypeError, match="rules must be a connect4_env.Rules"):
        perfect_game_length("6x7")


def test_the_command_writes_the_games_and_the_report(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "run"
    argv = ["shield:random", "--rows", "4", "--columns", "5", "--games", "2", "--second-games", "1"]
    assert main([*argv, "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "shield:random against perfect play on 4x5" in printed and "wrote" in printed
    report = json.loads((out / "report.json").read_text())
    assert report["as_first"]["games"] == 2 and report["as_second"]["games"] == 1
    assert len(read_games(out / "games.jsonl")) == 3
    assert main(["random", "--games", "0", "--second-games", "0", "--out", str(out)]) == 2
    assert "no game to play" in capsys.readouterr().err
