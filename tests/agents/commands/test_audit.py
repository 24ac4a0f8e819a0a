"""``connect4 audit``: the games the harness decided (forfeits), played in part (fallback moves) or retried
(rejected answers), counted per player and dialect from real text policies' records; clean games; a forfeit
without a text record; bad files refused in one line with exit code 2; the command in a subprocess."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from itertools import count
from pathlib import Path

import pytest

from connect4_agents import RandomAgent, commands
from connect4_agents.evaluation.arena import play_game
from connect4_agents.evaluation.audit import HarnessAudit, PlayerAudit, audit_games
from connect4_agents.evaluation.records import GameLog, game_log, write_games
from connect4_agents.interop.text import TextPolicy
from connect4_env import Rules

RULES = Rules(4, 5)


def _model(pattern: str) -> Callable[[str], str]:
    """A stand-in for a language model: call ``i`` answers the first legal column the prompt lists when
    ``pattern[i % len(pattern)]`` is ``g``, and something no dialect reads when it is ``b``. It answers in the
    shape of both dialects used here (``<answer>N</answer>`` 1-based, ``Final Answer: N`` 0-based).
    """
    calls = count()

    def answer(prompt: str) -> str:
        if pattern[next(calls) % len(pattern)] == "b":
            return "I am not sure"
        listed = re.search(r"Legal columns: (\d+)", prompt)
        if listed:  # the connect4 dialect: 1-based
            return f"<answer>{listed[1]}</answer>"
        zero_based = re.search(r"The legal moves are:\n(\d+)", prompt)
        assert zero_based is not None, prompt[-300:]
        return f"Final Answer: {zero_based[1]}"

    return answer


def _game(player: TextPolicy, name: str, first: bool, seed: int) -> GameLog:
    opponent = RandomAgent(seed=seed)
    seats = [player, opponent] if first else [opponent, player]
    names = (name, "random") if first else ("random", name)
    return game_log(play_game(seats, RULES, record_search=True, names=names), names, RULES, game=seed)


def _policies() -> dict[str, TextPolicy]:
    return {
        # model-a in the connect4 dialect (two retries, then a random column)
        "clean": TextPolicy(_model("g"), dialect="connect4", legal_moves=True, seed=0),
        "retries": TextPolicy(_model("bg"), dialect="connect4", legal_moves=True, seed=0),
        "fallbacks": TextPolicy(_model("b"), dialect="connect4", legal_moves=True, seed=0),
        # model-b in the game_arena dialect (one retry, then the game is lost)
        "forfeit": TextPolicy(_model("b"), dialect="game_arena", legal_moves=True, seed=0),
        "clean_b": TextPolicy(_model("g"), dialect="game_arena", legal_moves=True, seed=0),
    }


@pytest.fixture(scope="module")
def played() -> tuple[list[GameLog], dict[str, TextPolicy]]:
    policies = _policies()
    games = [
        _game(policies["clean"], "model-a", True, 1),
        _game(policies["retries"], "model-a", False, 2),
        _game(policies["fallbacks"], "model-a", True, 3),
        _game(policies["forfeit"], "model-b", False, 4),
        _game(policies["clean_b"], "model-b", True, 5),
    ]
    return games, policies


def _row(audit: HarnessAudit, player: str, dialect: str | None) -> PlayerAudit:
    (row,) = [row for row in audit.players if (row.player, row.dialect) == (player, dialect)]
    return row


def test_forfeits_retries_fallbacks_and_clean_games_per_model_and_dialect(
    played: tuple[list[GameLog], dict[str, TextPolicy]],
) -> None:
    games, policies = played
    audit = audit_games(games)
    assert audit.games == 5
    assert [(row.player, row.dialect) for row in audit.players] == [
        ("model-a", "connect4"),
        ("model-b", "game_arena"),
        ("random", None),
    ]
    a = _row(audit, "model-a", "connect4")
    assert (a.games, a.clean, a.forfeits, a.retry_games, a.fallback_games) == (3, 1, 0, 2, 1)
    a_policies = [policies[name] for name in ("clean", "retries", "fallbacks")]
    assert a.text_moves == a.moves == sum(p.stats["moves"] for p in a_policies)
    assert a.rejected == sum(p.stats["rejected"] for p in a_policies) > 0
    assert (
        a.fallback_moves == policies["fallbacks"].stats["fallbacks"] == policies["fallbacks"].stats["moves"]
    )
    # every fallback move came after three rejected answers; every retried move after one
    assert policies["fallbacks"].stats["rejected"] == 3 * a.fallback_moves
    assert policies["retries"].stats["rejected"] == policies["retries"].stats["moves"]
    assert a.tries == a.rejected + a.moves - a.fallback_moves  # one accepted answer per answered move

    b = _row(audit, "model-b", "game_arena")
    assert (b.games, b.clean, b.forfeits, b.retry_games, b.fallback_games) == (2, 1, 1, 1, 0)
    assert (b.rejected, policies["forfeit"].stats["forfeits"]) == (2, 1)  # two answers, then the game is lost
    assert games[3].forfeit is not None and games[3].result == "player0"

    opponent = _row(audit, "random", None)
    assert (opponent.games, opponent.clean, opponent.text_moves, opponent.tries) == (5, 5, 0, 0)

    flagged = [(game.label, game.player, game.decided_by_harness) for game in audit.flagged]
    assert flagged == [
        ("game 1", "model-a", False),  # retried: the model chose every move in the end
        ("game 2", "model-a", True),  # fallback moves
        ("game 3", "model-b", True),  # forfeit
    ]
    forfeit = audit.flagged[2]
    assert forfeit.forfeit is not None and forfeit.forfeit.startswith("TextPolicy")
    assert (forfeit.seat, forfeit.result, forfeit.rejected) == (1, "player0", 2)


def test_a_forfeit_without_a_text_record_and_a_game_against_itself() -> None:
    # one row of four, two in a row: X 1, then O gives up (no account of the failed move)
    theirs = GameLog(
        1, 4, 2, ("bot", "quitter"), (1,), "player0", forfeit={"player": 1, "reason": "gave up", "info": None}
    )
    itself = GameLog(1, 4, 2, ("same", "same"), (0, 2, 3, 1), "player1")
    audit = audit_games([theirs, itself], ["a.jsonl #0", "a.jsonl #1"])
    quitter = _row(audit, "quitter", None)
    assert (quitter.games, quitter.forfeits, quitter.rejected, quitter.clean, quitter.moves) == (
        1,
        1,
        0,
        0,
        0,
    )
    same = _row(audit, "same", None)
    assert (same.games, same.clean, same.moves) == (2, 2, 4)  # one count per seat
    ((label, reason),) = [(game.label, game.forfeit) for game in audit.flagged]
    assert (label, reason) == ("a.jsonl #0", "gave up")
    assert "1 seats touched by the harness, 1 of them decided by it" in audit.table()


def test_bad_arguments_are_refused_by_name() -> None:
    game = GameLog(1, 4, 2, ("x", "o"), (0, 2, 3, 1), "player1")
    with pytest.raises(TypeError, match="list of GameLog"):
        audit_games("games.jsonl")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="1 names for 2 games"):
        audit_games([game, game], ["one"])
    bad = GameLog(
        1, 4, 2, ("x", "o"), (0, 2, 3, 1), "player1", search=({"kind": "text", "tries": 3},) + (None,) * 3
    )
    with pytest.raises(ValueError, match="game 0, move 0: a text record's tries"):
        audit_games([bad])


# -- the command ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def records(
    played: tuple[list[GameLog], dict[str, TextPolicy]], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    path = tmp_path_factory.mktemp("audit") / "games.jsonl"
    write_games(path, played[0])
    return path


def test_the_command_prints_the_table_and_writes_the_json(
    records: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "audit.json"
    assert commands.main(["audit", str(records), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "5 games" in printed and "model-b" in printed and "game_arena" in printed
    assert f"{records} #3: model-b (seat 1): forfeit (TextPolicy" in printed
    data = json.loads(out.read_text())
    assert data["format"] == "connect4-audit" and data["games"] == 5
    assert [row["forfeits"] for row in data["players"]] == [0, 1, 0]
    assert [game["decided_by_harness"] for game in data["flagged"]] == [False, True, True]
    # two files: the games add up, labelled by file
    assert commands.main(["audit", str(records), str(records), "--listed", "1"]) == 0
    printed = capsys.readouterr().out
    assert "10 games" in printed and "... and 5 more" in printed


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no game records file at"),
        ("not json\n", "line 1"),
        ('{"format": "connect4-game", "version": 1}\n', "line 1: a game record needs the fields"),
        ("\n", "holds no game records"),
    ],
    ids=["missing", "not-json", "not-a-record", "empty"],
)
def test_a_missing_or_corrupt_file_is_refused_in_one_line_with_code_2(
    content: str | None, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "games.jsonl"
    if content is not None:
        path.write_text(content)
    assert commands.main(["audit", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("error: ") and message in line


def test_the_command_runs_as_a_program_with_json_on_standard_output(records: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "connect4_agents.commands", "audit", str(records), "--json", "-"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert {(row["player"], row["dialect"]): row["clean"] for row in data["players"]} == {
        ("model-a", "connect4"): 1,
        ("model-b", "game_arena"): 1,
        ("random", None): 5,
    }


def test_a_folder_is_refused_with_the_records_file_it_holds(
    records: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`connect4 grade --out DIR` writes DIR/games.jsonl: auditing DIR said there was no file at DIR."""
    folder = tmp_path / "grade"
    folder.mkdir()
    assert commands.main(["audit", str(folder)]) == 2
    assert (
        capsys.readouterr().err.strip()
        == f"error: {folder} is a folder, not a game records file (give the records file in it)"
    )
    (folder / "games.jsonl").write_bytes(records.read_bytes())
    assert commands.main(["audit", str(folder)]) == 2
    assert f"did you mean {folder / 'games.jsonl'}?" in capsys.readouterr().err
