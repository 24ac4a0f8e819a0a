"""Grading a player by perfect play: the verdicts of hand-checked games, counts against a brute-force reference,
a perfect player's clean sheet, a text policy's rejected answers, fallbacks and forfeits, the report's JSON and
picture, the ``connect4 grade`` command end to end, and bad arguments refused by name."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.extras import installed, needs
from helpers.reference import board_move_values

from connect4_agents import RandomAgent, SolverAgent
from connect4_agents.commands import grade as grade_command
from connect4_agents.evaluation.accuracy import evaluate_accuracy
from connect4_agents.evaluation.arena import play_game
from connect4_agents.evaluation.grade_report import GradeReport, read_report
from connect4_agents.evaluation.grades import GameGrade, Rate
from connect4_agents.evaluation.grading import (
    MAX_GAMES,
    default_sets,
    grade_games,
    grade_match,
    grade_test_sets,
)
from connect4_agents.evaluation.records import GameLog, read_games
from connect4_agents.evaluation.test_sets import load_test_set
from connect4_agents.interop.text import TextPolicy
from connect4_env import Board, Rules
from connect4_env.policy import Forfeit

# One row of four cells, two in a row wins: X wins at once from the middle (two threats), draws from a corner.
ROW = Rules(1, 4, 2)
# X 0 gives up the win (1 or 2 wins), O 2 gives up the draw (only 1 holds it), X 3 gives up the win (1 wins
# at once, 3 lets O take 1), O 1 wins. The end:
#     X O O X      (O's 1 and 2 in a row)
ROW_GAME = GameLog(1, 4, 2, ("first", "second"), (0, 2, 3, 1), "player1")
SMALL = Rules(3, 4, 3)


def _text_entry(
    column: int | None, tries: list[tuple[str | None, int | None]], outcome: str
) -> dict[str, Any]:
    """A text policy's move record as the contract writes it: each try ``(answer, parsed column)``, a try
    without a column rejected.
    """
    return {
        "kind": "text",
        "column": column,
        "dialect": "connect4",
        "template": "0123abcd",
        "tries": [
            {
                "prompt": "...",
                "answer": answer,
                "column": parsed,
                "error": None if parsed is not None else "not a column",
                "seconds": 0.01,
                "reasoning": None,
                "prompt_tokens": None,
                "completion_tokens": None,
                "finish_reason": None,
            }
            for answer, parsed in tries
        ],
        "outcome": outcome,
    }


# -- verdicts ------------------------------------------------------------------------------------------------
def test_each_seat_of_a_hand_checked_game_gets_its_own_verdicts() -> None:
    first = grade_games([ROW_GAME], "first")
    assert first.verdicts == (("mistake", "mistake"),)
    assert (first.moves, first.best_class, first.blunders) == (2, Rate(0, 2), Rate(2, 2))
    assert (first.blunders_from_win, first.blunders_from_draw) == (2, 0)  # both moves gave up a win
    assert first.nontrivial_best_class == Rate(0, 2)  # in both positions some move loses the win
    assert (first.wins, first.draws, first.losses, first.games) == (0, 0, 1, 1)

    second = grade_games([ROW_GAME], "second")
    assert second.verdicts == (("mistake", "best"),)
    assert (second.best_class, second.exact, second.blunders) == (Rate(1, 2), Rate(1, 2), Rate(1, 2))
    assert (second.blunders_from_win, second.blunders_from_draw) == (0, 1)  # 2 gave up the draw
    # the last move is forced (one column left): trivial, so only the blunder counts among non-trivial moves
    assert second.nontrivial_best_class == Rate(0, 1)
    assert (second.wins, second.losses, second.score) == (1, 0, Rate(1, 1))
    assert second.unjudged == 0 and second.text_moves == 0 and second.forfeits == Rate(0, 1)


def test_a_slower_win_keeps_the_outcome_but_not_the_best_score() -> None:
    # One row of five, two in a row. X 1, O 0; then X 2 wins at once (1 and 2), while X 3 threatens 2 and 4
    # and wins a move later: it keeps the win without the best score. O 2 and X 4 end it:
    #     O X O X X
    game = GameLog(1, 5, 2, ("x", "o"), (1, 0, 3, 2, 4), "player0")
    graded = grade_games([game], "x")
    assert graded.verdicts == (("best", "keeps", "best"),)
    assert (graded.best_class, graded.exact, graded.blunders) == (Rate(3, 3), Rate(2, 3), Rate(0, 3))
    # every move of O loses (X 1 makes two threats): O's moves are trivial, and each delays the loss most
    assert grade_games([game], "o").verdicts == (("best", "best"),)
    assert grade_games([game], "o").nontrivial_best_class == Rate(0, 0)


class _Scripted:
    """Plays its columns in order (a stand-in for a player whose moves a test fixes)."""

    def __init__(self, columns: list[int]) -> None:
        self.columns = list(columns)
        self.calls = 0

    def act(self, observation: Any, action_mask: Any = None) -> int:
        self.calls += 1
        return self.columns.pop(0)


def _reference_verdicts(game: GameLog) -> list[tuple[str, bool]]:
    """``(verdict, non-trivial)`` of every move, from the reference."""
    board = Board(game.rules)
    found = []
    for column in game.moves:
        values = board_move_values(board)
        best = max(values.values())
        sign = np.sign(best)
        played = values[column]
        verdict = "best" if played == best else "keeps" if np.sign(played) == sign else "mistake"
        found.append((verdict, any(np.sign(v) < sign for v in values.values())))
        board.play(column)
    return found


def test_grades_agree_with_a_brute_force_reference_on_random_games() -> None:
    games = [
        play_game([RandomAgent(seed=2 * k), RandomAgent(seed=2 * k + 1)], SMALL, names=("a", "b"))
        for k in range(12)
    ]
    for player, seat in (("a", 0), ("b", 1)):
        expected = [
            [found for ply, found in enumerate(_reference_verdicts(game)) if ply % 2 == seat]
            for game in games
        ]
        graded = grade_games(games, player)
        assert graded.verdicts == tuple(tuple(verdict for verdict, _ in moves) for moves in expected)
        flat = [move for moves in expected for move in moves]
        kept = sum(verdict != "mistake" for verdict, _ in flat)
        nontrivial = [verdict for verdict, hard in flat if hard]
        assert graded.best_class == Rate(kept, len(flat))
        assert graded.exact == Rate(sum(verdict == "best" for verdict, _ in flat), len(flat))
        assert graded.blunders == Rate(len(flat) - kept, len(flat))
        assert graded.nontrivial_best_class == Rate(
            sum(verdict != "mistake" for verdict in nontrivial), len(nontrivial)
        )
        assert graded.blunders.successes > 0  # random play does blunder here: the test compares real counts


def test_a_game_against_itself_grades_both_seats() -> None:
    game = dataclasses.replace(ROW_GAME, players=("me", "me"))
    graded = grade_games([game], "me")
    assert graded.games == 2 and graded.moves == 4
    assert graded.verdicts == (("mistake", "mistake", "mistake", "best"),)
    assert (graded.wins, graded.losses) == (1, 1)


def test_moves_the_solver_cannot_judge_are_counted_apart() -> None:
    budget_one = SolverAgent(node_budget=1)  # every position needs more than one node
    graded = grade_games(
        [play_game([RandomAgent(seed=0), RandomAgent(seed=1)], SMALL, names=("a", "b"))], "a", budget_one
    )
    assert graded.unjudged == graded.moves > 0
    assert graded.best_class == Rate(0, 0) and graded.best_class.rate is None
    wide = Rules(6, 8, 4)  # 48 cells and no book: the replay's rule judges none, and searches nothing
    game = play_game([RandomAgent(seed=0), RandomAgent(seed=1)], wide, names=("a", "b"))
    graded = grade_games([game], "a")
    assert graded.unjudged == graded.moves > 0 and set(graded.verdicts[0]) == {None}


# -- players ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rules", [SMALL, Rules(4, 4, 3)], ids=["3x4-w3", "4x4-w3"])
def test_a_perfect_player_keeps_every_outcome_and_never_blunders(rules: Rules) -> None:
    report = grade_match("solver", "random", games=4, rules=rules, sets=(), progress=False)
    games = report.games
    assert games.moves > 0 and games.unjudged == 0
    assert games.best_class == Rate(games.moves, games.moves)
    assert games.exact == Rate(games.moves, games.moves)
    assert games.blunders == Rate(0, games.moves) and games.forfeits == Rate(0, 4)
    assert games.nontrivial_best_class.successes == games.nontrivial_best_class.n


def test_a_random_player_blunders() -> None:
    report = grade_match("random", "solver", games=4, rules=SMALL, sets=(), progress=False)
    assert report.games.blunders.successes > 0
    assert report.games.best_class.rate is not None and report.games.best_class.rate < 1


def test_the_same_seed_grades_the_same_games() -> None:
    first, second = (
        grade_match("mcts:5", "random", games=2, rules=SMALL, sets=(), progress=False, seed=3)
        for _ in range(2)
    )
    assert first == second


def test_test_sets_are_graded_per_set() -> None:
    report = grade_match(
        "solver", "random", games=2, rules=Rules(4, 4, 3), sample=20, workers=1, progress=False
    )  # default: the board's own set
    assert list(report.sets) == ["4x4-w3"]
    grade = report.sets["4x4-w3"]
    assert grade.best_class == Rate(20, 20)
    assert grade.nontrivial_best_class.successes == grade.nontrivial_best_class.n > 0


def test_default_sets_are_the_boards_own() -> None:
    assert default_sets(Rules()) == ("6x7",)
    assert default_sets(Rules(4, 5)) == ("4x5",)
    assert default_sets(Rules(4, 4, 3)) == ("4x4-w3",)
    assert default_sets(Rules(3, 3, 3)) == ()


# -- text policies -------------------------------------------------------------------------------------------
def test_rejected_answers_fallbacks_and_forfeits_are_counted_for_the_player_only() -> None:
    # game 0: "model" moves first. Its move 0: one rejected try, then an answer; its move 2: two rejected,
    # then the fallback. The opponent's text records (move 1) are not the model's.
    search = (
        _text_entry(0, [("column 9", None), ("1", 0)], "answered"),
        _text_entry(2, [("zzz", None), ("3", 2)], "answered"),
        _text_entry(3, [("?", None), ("??", None)], "fallback"),
        None,
    )
    played = dataclasses.replace(ROW_GAME, players=("model", "other"), search=search)
    # game 1: "model" moves second and forfeits after X 1 (three rejected tries); the moves stop there.
    forfeited = GameLog(
        1,
        4,
        2,
        ("other", "model"),
        (1,),
        "player0",
        forfeit={
            "player": 1,
            "reason": "no legal answer",
            "info": _text_entry(None, [("a", None)] * 3, "forfeit"),
        },
    )
    # game 2: the opponent forfeits: a win for the model, no forfeit of its own
    theirs = GameLog(
        1,
        4,
        2,
        ("other", "model"),
        (),
        "player1",
        forfeit={"player": 0, "reason": "x", "info": None},
    )
    graded = grade_games([played, forfeited, theirs], "model")
    assert graded.text_moves == 2
    assert graded.illegal_answers == Rate(1 + 2 + 3, 2 + 2 + 3)
    assert graded.fallbacks == Rate(1, 2)
    assert graded.forfeits == Rate(1, 3)
    assert (graded.wins, graded.draws, graded.losses) == (1, 0, 2)
    # the fallback's move (ply 2) is not the model's: in no verdict rate
    assert graded.moves == 2 and graded.verdicts == (("mistake", None), (), ())
    assert graded.blunders == Rate(1, 1) and graded.unjudged == 0


def test_a_forfeit_in_the_records_field_counts() -> None:
    game = GameLog(
        1, 4, 2, ("other", "model"), (1,), "player0", forfeit={"player": 1, "reason": "r", "info": None}
    )
    assert grade_games([game], "model").forfeits == Rate(1, 1)


@pytest.mark.parametrize(
    ("entry", "where"),
    [
        ({"kind": "text", "tries": "many"}, "game 0, move 0"),
        ({"kind": "text", "tries": [{"column": "3", "error": None}]}, "game 0, move 0"),
    ],
)
def test_a_malformed_text_record_is_refused_with_its_place(entry: dict[str, Any], where: str) -> None:
    game = dataclasses.replace(ROW_GAME, search=(entry, None, None, None))
    with pytest.raises(ValueError, match=where):
        grade_games([game], "first")


def test_a_malformed_forfeit_is_refused() -> None:
    game = dataclasses.replace(ROW_GAME, forfeit={"player": 2})
    with pytest.raises(ValueError, match="game 0: forfeit"):
        grade_games([game], "first")


# -- the report ------------------------------------------------------------------------------------------------
def _report() -> GradeReport:
    search = (_text_entry(0, [("x", None), ("1", 0)], "answered"), None, None, None)
    games = grade_games([dataclasses.replace(ROW_GAME, search=search)], "first")
    return GradeReport("first", "second", 1, 4, 2, 7, games, {})


def test_the_report_round_trips_through_json(tmp_path: Path) -> None:
    report = grade_match(
        "mcts:5", "random", games=2, rules=Rules(4, 4, 3), sample=10, workers=1, progress=False
    )
    path = report.write(tmp_path / "report.json")
    assert read_report(path) == report
    data = json.loads(path.read_text())
    assert data["format"] == "connect4-grade" and data["games"]["blunders"]["n"] == report.games.blunders.n
    assert data["games"]["illegal_answers"]["rate"] is None  # nothing to rate is null, not NaN
    assert GameGrade.from_dict(data["games"]) == report.games


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"format": "connect4-game"}, "not a grade report"),
        ({"version": True}, "not a grade report"),
        ({"rows": "4"}, "rows"),
        ({"games": {"player": "p"}}, "games.games"),
        (
            {"sets": {"4x5": {"best_class": {"count": 5, "n": 3}, "forfeits": 0}}},
            r"sets.4x5.best_class: count",
        ),
        ({"sets": {"4x5": {"forfeits": -1}}}, r"sets.4x5.forfeits"),
    ],
)
def test_a_bad_report_file_is_refused(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    data = {**_report().to_dict(), **change}
    path = tmp_path / "report.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=message):
        read_report(path)


def test_the_table_names_every_figure() -> None:
    text = _report().table()
    for words in ("moves keeping the best outcome", "non-trivial", "blunders", "illegal answers", "forfeits"):
        assert words in text
    assert "50.0%" in text  # one rejected try of two


@needs("train", "matplotlib")
def test_the_picture_has_a_bar_per_figure(tmp_path: Path) -> None:
    report = dataclasses.replace(_report(), sets={})
    labels = [label for label, _, _ in report.bars()]
    assert labels[:2] == ["best class\nin games", "best class\nin games,\nnon-trivial"]
    assert labels[-3:] == ["blunders", "illegal\nanswers", "forfeits"]
    path = report.plot(tmp_path / "report.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -- the command -------------------------------------------------------------------------------------------------
def test_the_command_plays_grades_and_writes_its_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "grade"
    argv = ["mcts:5", "--rows", "4", "--columns", "4", "--win-length", "3", "--games", "4", "--sample", "12"]
    argv += ["--workers", "1", "--out", str(out), "--no-progress"]
    if not installed("matplotlib"):
        argv.append("--no-plot")
    assert grade_command.main(argv) == 0
    printed = capsys.readouterr().out
    assert "mcts:5 against mcts:100: 4 games on 4x4" in printed and "4x4-w3" in printed
    games = read_games(out / "games.jsonl")
    assert len(games) == 4 and [g.players[0] for g in games] == ["mcts:5", "mcts:100"] * 2  # paired seats
    assert all(g.search is not None and g.search[0]["kind"] == "mcts" for g in games)
    report = read_report(out / "report.json")
    assert report.games == grade_games(games, "mcts:5")
    assert list(report.sets) == ["4x4-w3"] and report.sets["4x4-w3"].best_class.n == 12
    assert (out / "report.png").exists() == installed("matplotlib")


def test_the_same_spec_on_both_sides_grades_the_players_games_only(tmp_path: Path) -> None:
    """Both seats named "random" made the records unable to tell them apart: the grade counted 8 games of 4."""
    report = grade_match(
        "random",
        "random",
        games=4,
        rules=Rules(4, 5, 4),
        sets=[],
        progress=False,
        games_out=tmp_path / "g.jsonl",
    )
    assert report.opponent == "random (opponent)" and report.games.games == 4
    games = read_games(tmp_path / "g.jsonl")
    assert [g.players for g in games] == [
        ("random", "random (opponent)"),
        ("random (opponent)", "random"),
    ] * 2
    assert report.games == grade_games(games, "random")
    assert report.games.moves == sum((len(g.moves) + (seat == 0)) // 2 for g, seat in zip(games, [0, 1] * 2))


def test_the_command_says_when_no_move_could_be_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 6x8 has more cells than the solver judges without a book, and no shipped test set
    argv = ["random", "--opponent", "random", "--rows", "6", "--columns", "8", "--games", "2", "--no-plot"]
    assert grade_command.main([*argv, "--out", str(tmp_path), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "no move was judged" in printed and "not 6x8" in printed
    report = read_report(tmp_path / "report.json")
    assert report.games.unjudged == report.games.moves > 0 and report.sets == {}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["random", "--games", "3"], "--games 3"),
        (["random", "--games", str(MAX_GAMES + 2)], f"--games {MAX_GAMES + 2}"),
        (["random", "--sets", "4x5", "--no-sets"], "--no-sets"),
        (["random", "--seed", "-1"], "--seed -1"),
        (["random", "--sets", "9x9"], "9x9"),
        (["nobody"], "nobody"),
        (["random", "--rows", "0"], "rows"),
    ],
)
def test_the_command_refuses_bad_arguments_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    out = tmp_path / "grade"
    assert grade_command.main([*argv, "--out", str(out), "--no-progress", "--no-plot"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error:") and message in error
    assert not (out / "games.jsonl").exists()


# -- bad arguments -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: grade_games(ROW_GAME, "first"), TypeError, "list of GameLog"),  # type: ignore[arg-type]
        (lambda: grade_games("games.jsonl", "first"), TypeError, "list of GameLog"),  # type: ignore[arg-type]
        (lambda: grade_games([ROW_GAME.to_dict()], "first"), TypeError, "game 0 is a dict"),  # type: ignore[list-item]
        (lambda: grade_games([ROW_GAME], 0), TypeError, "player must be a str"),  # type: ignore[arg-type]
        (lambda: grade_games([ROW_GAME], "first", solver="solver"), TypeError, "SolverAgent"),  # type: ignore[arg-type]
        (lambda: grade_games([], "first"), ValueError, "no games"),
        (lambda: grade_games([ROW_GAME], "third"), ValueError, "'third'"),
        (lambda: grade_match("random", games=3, progress=False), ValueError, "games=3"),
        (lambda: grade_match("random", games=0, progress=False), ValueError, "games"),
        (lambda: grade_match("random", games="4", progress=False), TypeError, "games"),  # type: ignore[arg-type]
        (lambda: grade_match("random", games=MAX_GAMES + 2, progress=False), ValueError, "games"),
        (lambda: grade_match("random", rules=(4, 5), progress=False), TypeError, "rules"),  # type: ignore[arg-type]
        (lambda: grade_match("random", sets="4x5", progress=False), TypeError, "sets"),
        (lambda: grade_match("random", seed=-1, progress=False), ValueError, "seed"),
        (lambda: grade_match("random", sample=0, progress=False), ValueError, "sample"),
        (lambda: grade_match("mcts:x", progress=False), ValueError, "mcts:x"),
        (lambda: grade_match(42, progress=False), TypeError, "player"),
    ],
)
def test_bad_arguments_are_refused_by_name(call: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_an_unknown_set_is_refused_before_any_game() -> None:
    player = _Scripted([0] * 20)
    with pytest.raises(ValueError, match="9x9"):
        grade_match(player, "random", games=2, rules=SMALL, sets=["9x9"], progress=False)
    assert player.calls == 0


class _GivesUp:
    """Forfeits every position (a text policy whose every answer is rejected, under Game Arena's rule)."""

    def act(self, observation: Any, action_mask: Any = None) -> int:
        raise Forfeit("no answer could be read", {"kind": "text", "tries": [], "outcome": "forfeit"})


def test_a_forfeited_test_set_position_counts_as_lost() -> None:
    positions = load_test_set("4x4-w3")
    report = evaluate_accuracy(_GivesUp(), "4x4-w3", workers=1, progress=False)
    lost = [p for p in positions if p.outcome < 0]
    assert report.forfeits == report.n == len(positions) and report.moves == [None] * len(positions)
    assert report.optimal_class == len(lost) > 0  # a lost position stays lost; every other one is given up
    assert report.nontrivial_optimal_class == 0 < report.nontrivial
    # scored a loss right there, one ply before the quickest loss a move can have (1 - stones left)
    assert report.regret == sum(p.score + (p.rules.cells - p.ply) for p in positions)
    grades = grade_test_sets(_GivesUp(), ["4x4-w3"], workers=1, progress=False)
    assert grades["4x4-w3"].forfeits == len(positions)
    assert grades["4x4-w3"].nontrivial_best_class == Rate(0, report.nontrivial)


class _ScriptedModel:
    """A stand-in language model: answers from a seeded list, some of them no column at all."""

    def __init__(self, answers: list[str], seed: int) -> None:
        self.answers, self.rng = answers, random.Random(seed)

    def __call__(self, prompt: str) -> str:
        return self.rng.choice(self.answers)


@pytest.mark.parametrize(
    ("dialect", "answers"),
    [
        ("connect4", ["1", "2", "3", "4", "column 9", "no idea"]),  # a random move after the retries
        ("game_arena", ["Final Answer: 0", "Final Answer: 2", "Final Answer: 3", "Final Answer: 9", "hmm"]),
        (
            "deepmind_game_arena",
            ["Final Answer: 0", "Final Answer: 2", "Final Answer: 1 is best", "9", "hmm"],
        ),
    ],
)
def test_a_text_policys_counts_agree_with_its_own(dialect: str, answers: list[str], tmp_path: Path) -> None:
    policy = TextPolicy(_ScriptedModel(answers, seed=1), dialect=dialect, seed=0)
    report = grade_match(
        policy, "random", games=6, rules=SMALL, sets=(), progress=False, games_out=tmp_path / "games.jsonl"
    )
    stats, games = policy.stats, report.games
    assert games.text_moves == stats["moves"] - stats["forfeits"] == games.moves
    assert games.illegal_answers == Rate(stats["rejected"], stats["answers"])  # no time-outs here
    assert games.fallbacks == Rate(stats["fallbacks"], games.text_moves)
    assert games.forfeits == Rate(stats["forfeits"], 6)
    assert stats["rejected"] > 0 and (stats["fallbacks"] if dialect == "connect4" else stats["forfeits"]) > 0
    # what the records file keeps grades the same
    assert grade_games(read_games(tmp_path / "games.jsonl"), repr(policy)) == games


def _raises(prompt: str) -> str:
    raise ConnectionError("the model's API is down")


def test_moves_the_fallback_played_are_counted_apart_and_not_rated() -> None:
    """A model that raises on every call scored the random fallback's 55 % as its own before."""
    positions = load_test_set("4x4-w3")
    policy = TextPolicy(_raises, fallback="random", seed=0)
    report = evaluate_accuracy(policy, "4x4-w3", workers=1, progress=False)
    assert report.fallbacks == len(positions) and report.n == report.optimal_class == 0
    assert report.to_dict()["per_set"]["4x4-w3"]["fallbacks"] == len(positions)
    assert f"played {len(positions)} of {len(positions)} positions" in report.table()
    grades = grade_test_sets(policy, ["4x4-w3"], workers=1, progress=False)
    assert grades["4x4-w3"].fallbacks == len(positions) and grades["4x4-w3"].best_class == Rate(0, 0)
    # in games: every move the fallback's, so none is judged, and the table says so
    report = grade_match(policy, "random", games=2, rules=SMALL, sets=["4x4-w3"], sample=10, progress=False)
    assert report.games.fallbacks.rate == 1.0 and report.games.best_class == Rate(0, 0)
    assert report.games.verdicts == tuple((None,) * len(v) for v in report.games.verdicts)
    assert "played by the fallback, not rated" in report.table()
    assert GradeReport.from_dict(json.loads(json.dumps(report.to_dict()))) == report


class _Watching(RandomAgent):
    """A random player that, at each move, counts the lines of the games file written so far."""

    def __init__(self, path: Path) -> None:
        super().__init__(seed=0)
        self.path, self.seen = path, []

    def act(self, observation: Any, action_mask: Any = None) -> int:
        self.seen.append(len(self.path.read_text().splitlines()) if self.path.exists() else -1)
        return super().act(observation, action_mask)


def test_each_game_is_on_disk_as_soon_as_it_ends(tmp_path: Path) -> None:
    """A run killed mid-match (no finally runs on SIGKILL) keeps every game that ended before."""
    path = tmp_path / "games.jsonl"
    path.write_text("an old run's line\n")
    watcher = _Watching(path)
    report = grade_match(watcher, "random", games=4, rules=SMALL, sets=(), progress=False, games_out=path)
    assert watcher.seen[0] == 0 and sorted(set(watcher.seen)) == [0, 1, 2, 3]  # each game there when it ended
    games = read_games(path)
    assert len(games) == 4 and grade_games(games, repr(watcher)) == report.games
