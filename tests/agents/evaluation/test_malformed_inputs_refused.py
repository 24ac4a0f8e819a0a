"""Inputs a fuzz pass found wrongly accepted or reported: each is refused with a TypeError or ValueError that
names it, and a ladder file is read once."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from connect4_agents.evaluation.records import GameLog
from connect4_agents.evaluation.test_sets import DATA_DIR, Position
from connect4_agents.evaluation.test_sets import test_set_path as set_path  # not collected as a test
from connect4_env import Rules

# 4x4, three in a row; X to move, and X wins at once in column 0 with the board's 5th stone:
#   . . . .
#   . . . .
#   X O . .
#   X O . .
MOVES = [0, 1, 0, 1]
POSITION = {"moves": MOVES, "rows": 4, "columns": 4, "win_length": 3, "move_scores": [12, -3, -11, -11]}


def position(**change: Any) -> Position:
    data = {**POSITION, **change}
    best = max(s for s in data["move_scores"] if s is not None)
    return Position.from_dict({"score": best, **data})


def test_the_position_in_the_tests_is_what_it_says() -> None:
    board = position().board()
    assert board.to_ascii(column_numbers=False).split() == list("........XO..XO..")
    assert position().score == 12  # 16 cells + 1 - the 5th stone


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        (17, "more than the board's 16 cells allow"),
        (-16, "a loss by the 1st stone, already on the board"),
        (13, "a win by the 4th stone, which is already on the board"),
        (11, "a win for the mover by the 6th stone, the opponent's"),
        (-12, "a loss by the 5th stone, the mover's own"),
        (-2, "a loss by the 15th stone, the mover's own"),
    ],
)
def test_a_position_refuses_a_score_no_game_can_have(bad: int, why: str) -> None:
    with pytest.raises(ValueError, match=rf"move_scores\[2\] is {bad}, which no game allows .*wins 12, 10"):
        position(move_scores=[12, -3, bad, -11])


def test_a_position_keeps_every_score_a_game_can_have() -> None:
    for win in range(12, 0, -2):
        assert position(move_scores=[12, win, -3, -11]).move_scores[1] == win
    for loss in range(-11, 0, 2):
        assert position(move_scores=[12, loss, -3, -11]).move_scores[1] == loss
    assert position(move_scores=[12, 0, -3, -11]).move_scores[1] == 0


def test_a_position_refuses_bools_as_scores() -> None:
    with pytest.raises(ValueError, match=r"move_scores\[1\] is True"):
        position(move_scores=[12, True, -11, -11])
    with pytest.raises(ValueError, match="score False is not the best"):  # False == 0, the best here
        Position.from_dict({**POSITION, "move_scores": [0, -3, -11, -11], "score": False})


def test_test_set_path_checks_its_arguments(tmp_path: Path) -> None:
    assert set_path("4x5") == DATA_DIR / "4x5.jsonl.gz"
    assert set_path("4x5-heldout", tmp_path) == tmp_path / "4x5-heldout.jsonl.gz"
    assert set_path("4x5", str(tmp_path)) == tmp_path / "4x5.jsonl.gz"
    with pytest.raises(TypeError, match=r"a test set name must be a str, got \['4x5'\] \(list\)"):
        set_path(["4x5"])  # type: ignore[arg-type]
    for name in ("", "../4x5", "sets/4x5", ".hidden", "4x5\n", "-x", "a b"):
        with pytest.raises(ValueError, match=re.escape(f"test set name {name!r} must be letters, digits")):
            set_path(name)
    with pytest.raises(TypeError, match="directory must be a folder path or None, got 5"):
        set_path("4x5", 5)  # type: ignore[arg-type]


def _game(**change: Any) -> dict[str, Any]:
    # X stacks column 0 and wins with the 5th stone (4x4, three in a row)
    data = {"format": "connect4-game", "version": 1, "rows": 4, "columns": 4, "win_length": 3}
    return {**data, "players": ["a", "b"], "seed": 0, "moves": [0, 1, 0, 1, 0], "result": "player0", **change}


def test_a_game_record_refuses_a_version_that_only_equals_1() -> None:
    assert GameLog.from_dict(_game()).moves == (0, 1, 0, 1, 0)
    for version in (True, 1.0, "1"):
        with pytest.raises(ValueError, match=f"version {version!r} \\(expected 'connect4-game', 1\\)"):
            GameLog.from_dict(_game(version=version))


def test_fit_ratings_names_a_player_that_is_not_a_str() -> None:
    from connect4_agents.evaluation.ratings import PairingCounts, fit_ratings

    for a, shown in ((["a"], r"\['a'\] \(list\)"), (3, r"3 \(int\)"), (None, r"None \(NoneType\)")):
        pairings = [PairingCounts(a, "b", 1, 0, 1), PairingCounts("b", "c", 1, 0, 1)]  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=f"a player's name must be a str, got {shown}"):
            fit_ratings(pairings, bootstrap=0)
    with pytest.raises(TypeError, match=r"got \['c'\]"):
        fit_ratings([PairingCounts("a", ["c"], 1, 0, 1)], bootstrap=0)  # type: ignore[arg-type]


def test_evaluate_accuracy_refuses_a_set_named_twice_as_the_command_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from connect4_agents.commands import evaluate
    from connect4_agents.evaluation.accuracy import evaluate_accuracy

    message = r"test sets named more than once: \['4x4-w3'\] \(their positions would count twice\)"
    with pytest.raises(ValueError, match=message):
        evaluate_accuracy("random", ["4x4-w3", "4x4-w3"], workers=1, progress=False)
    assert evaluate.main(["random", "--test-sets", "4x4-w3", "4x4-w3", "--no-progress"]) == 2
    assert "test sets named more than once: ['4x4-w3']" in capsys.readouterr().err
    # one name alone is still read as a set, and other names as before
    with pytest.raises(ValueError, match="unknown test sets \\['nope'\\]"):
        evaluate_accuracy("random", "nope", workers=1, progress=False)


def _ladder(tmp_path: Path) -> Path:
    path = tmp_path / "ladder.json"
    board = {"rows": 4, "columns": 5, "win_length": 3}
    path.write_text(json.dumps({**board, "ratings": {"random": {"elo": 0}, "mcts:5": {"elo": 300}}}))
    return path


def test_a_ladder_file_is_read_once_for_its_board_and_its_ratings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from connect4_agents.evaluation import ratings
    from connect4_agents.evaluation.rated_tournament import gauntlet_ratings

    reads: list[Any] = []
    original = ratings.read_text_limited

    def counted(*args: Any) -> str:
        reads.append(args[0])
        return original(*args)

    monkeypatch.setattr(ratings, "read_text_limited", counted)
    ladder = _ladder(tmp_path)
    assert gauntlet_ratings([], Rules(4, 5, 3), ladder) == (
        ["random", "mcts:5"],
        {"random": 0.0, "mcts:5": 300.0},
    )
    assert reads == [ladder]
    assert ratings.read_ladder(ladder) == ((4, 5, 3), {"random": 0.0, "mcts:5": 300.0})
    # the two readers of one part each are kept, and agree with it
    assert ratings.read_ratings(ladder) == {"random": 0.0, "mcts:5": 300.0}
    assert ratings.read_ratings_board(ladder) == (4, 5, 3)


def test_a_ladder_that_is_a_folder_or_not_json_is_named(tmp_path: Path) -> None:
    from connect4_agents.evaluation.rated_tournament import gauntlet_ratings
    from connect4_agents.evaluation.ratings import read_ratings, read_ratings_board

    for read in (read_ratings, read_ratings_board, lambda path: gauntlet_ratings([], Rules(4, 5, 3), path)):
        with pytest.raises(ValueError, match=f"{tmp_path} is a folder; a ladder is a ratings file"):
            read(tmp_path)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(ValueError, match=f"{broken}: not a ratings file written by tournament.py --json"):
        read_ratings_board(broken)
    with pytest.raises(TypeError, match="a ratings file's path must be a str or a path, got 5"):
        read_ratings(5)  # type: ignore[arg-type]


SMALL_BOARD = ["--rows", "4", "--columns", "5", "--win-length", "3", "--games", "2", "--no-progress"]


def test_the_tournament_command_names_a_ladder_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from connect4_agents.commands import tournament

    assert tournament.main(["--gauntlet", "random", "--ladder", str(tmp_path), *SMALL_BOARD]) == 2
    error = capsys.readouterr().err
    assert f"error: {tmp_path} is a folder; a ladder is a ratings file" in error
    assert "Errno" not in error


def test_the_tournament_command_refuses_anchor_with_gauntlet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from connect4_agents.commands import tournament

    ladder = str(_ladder(tmp_path))
    out = tmp_path / "out" / "g.json"
    command = [
        "--gauntlet",
        "random",
        "--ladder",
        ladder,
        "--anchor",
        "mcts:5",
        "--json",
        str(out),
        *SMALL_BOARD,
    ]
    assert tournament.main(command) == 2
    assert "error: --anchor mcts:5 does not apply to --gauntlet" in capsys.readouterr().err
    assert not out.parent.exists()  # refused before any output folder was made or game played
    # the default stays random when --anchor is left out
    assert tournament.build_parser().parse_args([]).anchor is None
