"""Game records: what the arena, the scripts and the window write reads back, and bad lines are refused."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from helpers.commands import run
from helpers.extras import heavy_without_numba, needs

from connect4_agents import MCTSAgent, RandomAgent, SolverAgent
from connect4_agents.evaluation.arena import play_game
from connect4_agents.evaluation.backends import worker_policy
from connect4_agents.evaluation.records import GameLog, game_log, read_games, write_games
from connect4_env import Board, Rules


def played(rules: Rules, players: list, names: tuple[str, str], seed: int = 0) -> GameLog:
    return game_log(play_game(players, rules, record_search=True), names, rules, seed=seed)


@needs("fast")  # the solver on 5x5 from the first moves: over the Python build's budget
def test_search_numbers_are_the_agents_own() -> None:
    rules = Rules(5, 5, 4)
    mcts, solver = MCTSAgent(playouts=200, seed=1), SolverAgent(seed=2)
    seen: list[tuple[Board, int, dict | None]] = []

    def keep(board: Board, player: int, column: int) -> None:
        before = Board(rules).play_moves(list(record_moves))
        record_moves.append(column)
        search = mcts.last_search.to_dict() if player == 0 and mcts.last_search else None
        seen.append((before, column, search))

    record_moves: list[int] = []

    record = play_game([mcts, solver], rules, on_move=keep, record_search=True)
    log = game_log(record, ("mcts:200", "solver"), rules)
    assert log.search is not None and len(log.search) == len(log.moves) == len(record.moves)
    for index, ((before, column, search), info) in enumerate(zip(seen, log.search)):
        assert info is not None and info["column"] == column
        if index % 2 == 0:  # MCTS: the numbers of the search that chose the move
            assert info == search and info["kind"] == "mcts" and len(info["visits"]) == rules.columns
            assert sum(info["visits"]) > 0
        else:  # the solver's scores are the exact scores of the position it moved from
            assert info["kind"] == "solver"
            assert info["scores"] == SolverAgent().bind(rules).evaluate_board(before)
            assert info["scores"][column] == max(s for s in info["scores"] if s is not None)


def test_round_trip_and_append(tmp_path: Path) -> None:
    rules = Rules(4, 5, 3)
    first = played(rules, [MCTSAgent(playouts=50, seed=0), RandomAgent(seed=1)], ("mcts:50", "random"))
    second = played(rules, [RandomAgent(seed=3), RandomAgent(seed=4)], ("random", "random"))
    path = tmp_path / "games.jsonl"
    write_games(path, [first])
    write_games(path, [second], append=True)
    games = read_games(path)
    assert games == [first, second]
    assert games[1].search == tuple([None] * len(second.moves))  # random has no move_info
    assert games[0].board().winner == games[0].winner
    assert [p.name for p in tmp_path.iterdir()] == ["games.jsonl"]  # no temporary left
    write_games(path, [second])  # without append: replaced
    assert read_games(path) == [second]


def valid_line() -> dict:
    rules = Rules(4, 4, 3)
    return played(rules, [MCTSAgent(playouts=30, seed=0), SolverAgent()], ("mcts:30", "solver")).to_dict()


def mutate(data: dict, change: str) -> dict | list | str:
    data = copy.deepcopy(data)
    if change == "not an object":
        return [1, 2]
    if change == "format":
        data["format"] = "chess"
    elif change == "version":
        data["version"] = 2
    elif change == "no moves":
        del data["moves"]
    elif change == "illegal move":
        data["moves"][0] = 9
    elif change == "move after the end":
        data["moves"].append(0)
        data["search"].append(None)
    elif change == "unfinished":
        data["moves"] = data["moves"][:1]
        data["search"] = data["search"][:1]
    elif change == "wrong result":
        data["result"] = "draw" if data["result"] != "draw" else "player0"
    elif change == "bad result":
        data["result"] = "X"
    elif change == "one player":
        data["players"] = ["random"]
    elif change == "float size":
        data["rows"] = 4.0
    elif change == "bool seed":
        data["seed"] = True
    elif change == "short search":
        data["search"] = data["search"][:-1]
    elif change == "visits of the wrong length":
        data["search"][0]["visits"] = [1, 2]
    elif change == "value above 1":
        data["search"][0]["values"][0] = 1.5
    elif change == "search names another column":
        data["search"][1]["column"] = (data["moves"][1] + 1) % 4
    elif change == "string score":
        data["search"][1]["scores"][0] = "win"
    return data


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ("not an object", "JSON object"),
        ("format", "format"),
        ("version", "version"),
        ("no moves", "moves"),
        ("illegal move", "move 0"),
        ("move after the end", "after the end"),
        ("unfinished", "not finished"),
        ("wrong result", "disagrees"),
        ("bad result", "result"),
        ("one player", "players"),
        ("float size", "rows"),
        ("bool seed", "seed"),
        ("short search", "one entry per move"),
        ("visits of the wrong length", "visits"),
        ("value above 1", "values"),
        ("search names another column", "column"),
        ("string score", "scores"),
    ],
)
def test_bad_lines_name_the_line(tmp_path: Path, change: str, fragment: str) -> None:
    good = valid_line()
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps(good) + "\n\n" + json.dumps(mutate(good, change)) + "\n")
    with pytest.raises(ValueError, match="line 3") as caught:
        read_games(path)
    assert fragment in str(caught.value)


@pytest.mark.parametrize("content", [b"{not json\n", b'{"format": NaN}\n', b"\xff\xfe\n"])
def test_lines_that_are_not_json(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "games.jsonl"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="line 1"):
        read_games(path)


def test_unknown_fields_are_kept(tmp_path: Path) -> None:
    data = valid_line() | {"date": "2026-11-22"}
    path = tmp_path / "g.jsonl"
    path.write_text(json.dumps(data) + "\n")
    (game,) = read_games(path)
    assert game.extra == {"date": "2026-11-22"} and game.to_dict() == data


def test_write_games_checks_types(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="GameLog"):
        write_games(tmp_path / "g.jsonl", [{"moves": []}])  # type: ignore[list-item]
    assert not (tmp_path / "g.jsonl").exists()


@pytest.mark.slow  # about 3 s on 2 cores (over 3 s): make test-slow, CI runs it
@heavy_without_numba
def test_tournament_records_replay_from_their_seeds(tmp_path: Path) -> None:
    records, summary = tmp_path / "games.jsonl", tmp_path / "t.json"
    result = run(
        "tournament",
        "random",
        "mcts:30",
        "solver",
        "--games",
        "2",
        "--rows",
        "4",
        "--columns",
        "5",
        "--workers",
        "2",
        "--bootstrap",
        "20",
        "--no-progress",
        "--json",
        str(summary),
        "--games-out",
        str(records),
    )
    assert result.returncode == 0, result.stderr
    games = read_games(records)
    listed = json.loads(summary.read_text())["games"]
    assert [list(g.moves) for g in games] == [g["moves"] for g in listed]
    assert [list(g.players) for g in games] == [[g["first"], g["second"]] for g in listed]
    rules = Rules(4, 5, 4)
    for game in games:
        assert game.seeds is not None and (game.rows, game.columns) == (4, 5)
        again = play_game([worker_policy(spec, rules) for spec in game.players], rules, seeds=game.seeds)
        assert tuple(again.moves) == game.moves  # the seeds reproduce the game
        kinds = {entry["kind"] for entry in game.search or () if entry is not None}
        assert kinds <= {"mcts", "solver"} and (kinds or "random" in game.players[0])


def test_match_modes_write_records(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    result = run(
        "match",
        "mcts-vs-mcts",
        "--games",
        "3",
        "--playouts0",
        "30",
        "--playouts1",
        "30",
        "--games-out",
        str(path),
    )
    assert result.returncode == 0, result.stderr
    games = read_games(path)
    assert len(games) == 3 and [g.game for g in games] == [0, 1, 2]
    assert games[0].players[::-1] == games[1].players  # sides alternate
    assert all(entry["kind"] == "mcts" for g in games for entry in g.search or ())
    bad = run("match", "mcts-vs-mcts", "--games-out", str(tmp_path))
    assert bad.returncode == 2 and "folder" in bad.stderr


def test_terminal_play_appends_records(tmp_path: Path) -> None:
    path = tmp_path / "played.jsonl"
    args = ["play", "--player0", "random", "--player1", "solver", "--rows", "4", "--columns", "4"]
    for seed in ("1", "2"):
        result = run(*args, "--win-length", "3", "--ui", "terminal", "--seed", seed, "--record", str(path))
        assert result.returncode == 0, result.stderr
    games = read_games(path)
    assert len(games) == 2 and [g.seed for g in games] == [1, 2]
    assert all(g.players == ("random", "solver") for g in games)
    assert all(g.search is not None and g.search[1]["kind"] == "solver" for g in games)
