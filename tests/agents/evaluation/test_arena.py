"""The arena: one game-record type from play_game to the records file, and one tournament runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from connect4_agents import MCTSAgent, RandomAgent, SolverAgent
from connect4_agents.evaluation import arena, tournament
from connect4_agents.evaluation.arena import play_game, play_match
from connect4_agents.evaluation.records import GameLog, game_log, match_logs, read_games, write_games
from connect4_env import Board, Rules

SMALL = Rules(4, 5, 4)


def test_play_game_returns_the_record_that_is_written_and_read(tmp_path: Path) -> None:
    players = [MCTSAgent(playouts=40, seed=0), SolverAgent()]
    record = play_game(players, SMALL, seeds=(5, 6), record_search=True, names=("mcts:40", "solver"))
    assert type(record) is GameLog
    assert record.players == ("mcts:40", "solver") and record.seeds == (5, 6)
    assert record.search is not None and len(record.search) == len(record.moves)
    path = tmp_path / "games.jsonl"
    write_games(path, [record])  # as play_game returned it: no conversion
    (back,) = read_games(path)
    assert back == record
    assert (
        back.final_board
        == record.final_board
        == record.board()
        == Board(SMALL).play_moves(list(record.moves))
    )
    assert back.final_board.winner == record.winner


def test_search_is_none_unless_recorded_and_labels_default_to_the_agents() -> None:
    record = play_game([RandomAgent(seed=1), RandomAgent(seed=2)], SMALL)
    assert record.search is None and record.seeds is None
    assert record.players == ("RandomAgent()", "RandomAgent()")
    with pytest.raises(TypeError, match="names"):
        play_game([RandomAgent(seed=1), RandomAgent(seed=2)], SMALL, names="ab")


def test_board_spellings_do_not_change_meaning_silently() -> None:
    record = play_game([RandomAgent(seed=3), RandomAgent(seed=4)], SMALL)
    end = record.final_board  # the arena's former board attribute
    assert isinstance(end, Board) and end.ply == len(record.moves) and end.is_terminal
    assert record.board(0) == Board(SMALL) and record.board(2).ply == 2
    with pytest.raises(TypeError, match="final_board"):
        _ = record.board.winner  # the old attribute used as a Board says where the board went
    with pytest.raises(TypeError, match="final_board"):
        _ = record.board == end
    with pytest.raises(ValueError, match="plies 0.."):
        record.board(len(record.moves) + 1)
    middle = record.board(2)
    middle.play(0)  # a new Board each call: changing one leaves the record alone
    assert record.board(2).ply == 2 and record.final_board is not end


def test_match_games_carry_names_and_numbers() -> None:
    result = play_match(
        MCTSAgent(playouts=20, seed=0), RandomAgent(seed=1), 3, SMALL, keep_games=True, names=("a", "b")
    )
    assert [(g.players, g.game) for g in result.games] == [(("a", "b"), 0), (("b", "a"), 1), (("a", "b"), 2)]
    logs = match_logs(result, ("mcts:20", "random"), SMALL, seed=7)
    assert [(g.players, g.game, g.seed) for g in logs] == [
        (("mcts:20", "random"), 0, 7),
        (("random", "mcts:20"), 1, 7),
        (("mcts:20", "random"), 2, 7),
    ]
    assert [g.moves for g in logs] == [g.moves for g in result.games]
    with pytest.raises(ValueError, match="not the game's"):
        game_log(result.games[0], ("a", "b"), Rules())


def test_write_games_refuses_a_record_that_would_not_read_back(tmp_path: Path) -> None:
    path = tmp_path / "games.jsonl"
    good = play_game([RandomAgent(seed=1), RandomAgent(seed=2)], SMALL, names=("random", "random"))
    write_games(path, [good])
    before = path.read_bytes()
    wrong = GameLog(**{**good.__dict__, "result": "draw" if good.winner is not None else "player0"})
    with pytest.raises(ValueError, match="game 1 is not a valid record"):
        write_games(path, [good, wrong], append=True)
    assert path.read_bytes() == before  # nothing written
    assert json.loads(before)["moves"] == list(good.moves)


def test_one_tournament_runner() -> None:
    assert not hasattr(arena, "round_robin") and not hasattr(arena, "TournamentResult")
    result, games = tournament.run_tournament(
        ["random", "mcts:10"], 2, SMALL, progress=False, workers=1, backend="process"
    )
    assert isinstance(result, tournament.TournamentResult) and len(games) == 2
    assert tournament.pairing_line("random", "mcts:10", result.pairings[0][2]).startswith("random vs mcts:10")


def test_a_match_result_prints_as_a_sentence() -> None:
    """README block 4 printed ``MatchResult(wins=..., by_side={...}, games=[])``: now who played whom and the
    counts in words, as ``print(play_match(...))`` shows them."""
    named = play_match(MCTSAgent(30, seed=0), RandomAgent(seed=1), 6, SMALL, names=["mcts:30", "random"])
    assert str(named) == (
        f"mcts:30 vs random: {named.wins} win{'s' * (named.wins != 1)}, {named.draws} "
        f"draw{'s' * (named.draws != 1)}, {named.losses} loss{'es' * (named.losses != 1)} in 6 games "
        f"(score {named.score:.2f})"
    )
    unnamed = play_match(RandomAgent(seed=2), RandomAgent(seed=3), 1, SMALL)
    assert str(unnamed).startswith("RandomAgent() vs RandomAgent(): ") and " in 1 game (score " in str(
        unnamed
    )
    counted = arena.MatchResult(wins=180, draws=5, losses=15)
    assert str(counted) == "180 wins, 5 draws, 15 losses in 200 games (score 0.91)"
    assert (
        str(arena.MatchResult(wins=1, draws=1, losses=1)) == "1 win, 1 draw, 1 loss in 3 games (score 0.50)"
    )
    # the names change neither the repr nor equality
    assert repr(named).startswith("MatchResult(wins=") and "names" not in repr(named)
    assert arena.MatchResult(wins=1, names=("a", "b")) == arena.MatchResult(wins=1)
