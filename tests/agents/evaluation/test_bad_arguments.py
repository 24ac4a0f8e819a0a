"""The evaluation functions check every argument before any game: a clear TypeError or ValueError naming it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from connect4_agents import RandomAgent
from connect4_agents.evaluation.accuracy import evaluate_agents, playable_sets, position_seed
from connect4_agents.evaluation.arena import MatchResult, play_game, play_match, wilson_interval
from connect4_agents.evaluation.test_sets import select_test_sets
from connect4_agents.evaluation.tournament import MAX_GAMES, game_seeds, plan_pairings, run_tournament
from connect4_env import Rules

SMALL = Rules(4, 4, 3)
R = RandomAgent()


def tournament(**kwargs: Any) -> Any:
    arguments = {"specs": ["random", "mcts:5"], "n_games": 2, "rules": SMALL, "workers": 1, "progress": False}
    return run_tournament(**{**arguments, **kwargs})


CASES: list[tuple[Callable[[], Any], type[Exception], str]] = [
    # a lone string where a list is meant (it used to be split into letters)
    (lambda: select_test_sets("all"), TypeError, r"write \['all'\] for one"),
    (lambda: evaluate_agents(["random"], "all"), TypeError, r"test sets must be a list .*write \['all'\]"),
    (lambda: evaluate_agents("random", ["4x4-w3"]), TypeError, r"agents must be a list .*write \['random'\]"),
    (lambda: playable_sets("random", "4x4-w3"), TypeError, "names must be a list of test set names"),
    (lambda: select_test_sets(["4x4-w3", 5]), TypeError, "got an item 5"),
    # seeds
    (lambda: game_seeds(-1, 0, 0), ValueError, "seed must be an integer >= 0, got -1"),
    (lambda: game_seeds("a", 0, 0), TypeError, "seed must be an integer"),
    (lambda: position_seed(None, 0), TypeError, "seed must be an integer"),  # type: ignore[arg-type]
    (lambda: position_seed(0, -2), ValueError, "index must be an integer >= 0"),
    # play_game / play_match: everything before the first move
    (lambda: play_game([R, R], rules="6x7"), TypeError, "rules must be a connect4_env.Rules or None"),
    (lambda: play_match(R, R, 2, rules="x"), TypeError, "rules must be a connect4_env.Rules or None"),
    (lambda: play_game(["random", "random"]), TypeError, r"players\[0\] must be an agent .*policy_from_spec"),
    (lambda: play_game([R, 5]), TypeError, r"players\[1\] must be an agent"),
    (lambda: play_game("ab"), TypeError, "players must be a pair of agents"),
    (lambda: play_game([R, R], seeds=5), TypeError, "seeds must be None or one seed per player"),
    (lambda: play_game([R, R], record_search="no"), TypeError, "record_search must be True or False"),
    (lambda: play_game([R, R], on_move=5), TypeError, "on_move must be None or callable"),
    (lambda: play_match(R, R, 2, keep_games="no"), TypeError, "keep_games must be True or False"),
    (lambda: play_match(R, "random", 2), TypeError, "player_b must be an agent"),
    (lambda: play_match(R, R, 2, result={}), TypeError, "result must be None or a MatchResult"),
    (lambda: MatchResult().add(2, True), ValueError, r"a_result must be an integer in -1..1, got 2"),
    (lambda: MatchResult().add(1, "x"), TypeError, "a_first must be True or False"),
    (lambda: wilson_interval(5, 2), ValueError, "successes must be a finite number >= 0 and <= 2"),
    (lambda: wilson_interval(1, -1), ValueError, "n must be an integer >= 0"),
    # run_tournament: bounded, and its in-place arguments checked before any game
    (lambda: tournament(n_games=10**12), ValueError, f"n_games must be an integer in 1..{MAX_GAMES}"),
    (
        lambda: tournament(specs=["random", "mcts:5", "mcts:6"], n_games=MAX_GAMES),
        ValueError,
        "one run plays",
    ),
    (lambda: tournament(result={}), TypeError, "result must be None or a TournamentResult"),
    (lambda: tournament(games=()), TypeError, "games must be None or a list"),
    (lambda: tournament(on_pairing=5), TypeError, "on_pairing must be None or callable"),
    (lambda: tournament(rules="6x7"), TypeError, "rules must be a connect4_env.Rules"),
    (lambda: plan_pairings([str(i) for i in range(10**5)]), ValueError, "100,000 agents make more than"),
    (
        lambda: evaluate_agents(["random"], ["4x4-w3"], on_report=5, progress=False, workers=1),
        TypeError,
        "on_report must be None or callable",
    ),
]


@pytest.mark.parametrize(("call", "error", "message"), CASES)
def test_each_bad_argument_is_named(call: Callable[[], Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_a_failed_add_counts_nothing() -> None:
    match = MatchResult()
    match.add(1, True)
    with pytest.raises(TypeError):
        match.add(0, "x")  # type: ignore[arg-type]
    assert (match.wins, match.draws, match.losses, match.by_side["first"]) == (1, 0, 0, [1, 0, 0])


def test_what_the_checks_allow() -> None:
    # tuples of names, numpy-free plain calls, and one report per agent named (twice named: twice reported)
    assert select_test_sets(("6x7",)) == select_test_sets(["6x7"])
    reports = evaluate_agents(["random", "random"], ("4x4-w3",), sample=5, progress=False, workers=1)
    assert len(reports) == 2
    assert (
        wilson_interval(0, 0) == (0.0, 1.0) and wilson_interval(2.5, 5)[0] < 0.5 < wilson_interval(2.5, 5)[1]
    )
    seen: list[int] = []
    record = play_game((R, R), SMALL, on_move=lambda board, player, column: seen.append(column), seeds=(1, 2))
    assert list(record.moves) == seen and len(seen) >= 5


def test_fit_ratings_refuses_what_it_cannot_fit() -> None:
    from connect4_agents.evaluation.ratings import PairingCounts, fit_ratings

    pairings = [PairingCounts("a", "b", 3, 1, 2), PairingCounts("b", "c", 2, 0, 3)]
    with pytest.raises(TypeError, match="fixed must be None or a mapping"):
        fit_ratings(pairings, fixed=["a"], bootstrap=0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="fixed must be None or a mapping"):
        fit_ratings(pairings, fixed="a", bootstrap=0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="nobody is left to fit"):
        fit_ratings(pairings, fixed={"a": 0, "b": 0, "c": 0}, bootstrap=0)
    with pytest.raises(ValueError, match=r"wins of a vs b must be an integer in 0..1000000000000"):
        fit_ratings([PairingCounts("a", "b", 10**20, 0, 1)], bootstrap=0)
    # a perfect record has no finite rating without the prior: refused, not fitted to wherever the solver stopped
    with pytest.raises(ValueError, match="prior_draws must be a finite number > 0"):
        fit_ratings([PairingCounts("a", "b", 5, 0, 0)], bootstrap=0, prior_draws=0)
    assert fit_ratings(pairings, fixed={"a": 100.0}, bootstrap=0) is not None


def test_read_ratings_reads_a_bounded_file_of_numbers(tmp_path: Any) -> None:
    from connect4_agents.evaluation.ratings import read_ratings

    path = tmp_path / "ratings.json"
    for elo in ('"12"', "true", "1" + "0" * 400):
        path.write_text('{"ratings": {"x": {"elo": ' + elo + "}}}")
        with pytest.raises(ValueError, match="not a ratings file"):
            read_ratings(path)
    path.write_text('{"ratings": {"x": {"elo": 1500.5}, "y": {"elo": 3}}}')
    assert read_ratings(path) == {"x": 1500.5, "y": 3.0}
    path.write_bytes(b" " * (16 << 20) + b"{}")
    with pytest.raises(ValueError, match="over 16,777,216 bytes of ratings"):
        read_ratings(path)


def test_test_sets_are_named_once_and_all_stands_alone() -> None:
    with pytest.raises(ValueError, match="named more than once: \\['4x5'\\]"):
        select_test_sets(["4x5", "4x5"])
    with pytest.raises(ValueError, match="'all' and '6x7' stand alone"):
        select_test_sets(["all", "4x5"])
    assert select_test_sets(["4x5", "5x4"]) == ["4x5", "5x4"]


def test_rated_tournament_checks_the_rating_settings_before_any_game() -> None:
    from connect4_agents.evaluation.rated_tournament import run_rated_tournament

    for kwargs, error, message in (
        ({"anchor": "nobody"}, ValueError, "anchor 'nobody' is not one of the players"),
        ({"bootstrap": -1}, ValueError, "bootstrap must be an integer in 0..1000000"),
        ({"anchor": 3}, TypeError, "anchor must be a player's name"),
    ):
        games: list[str] = []
        with pytest.raises(error, match=message):
            run_rated_tournament(
                ["random", "mcts:5"],
                2,
                SMALL,
                workers=1,
                progress=False,
                on_pairing=lambda *a, games=games: games.append("x"),
                **kwargs,
            )
        assert games == []


def test_tournament_output_files_are_distinct_and_never_silently_dropped(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from connect4_agents.commands import tournament as command

    same = str(tmp_path / "same.json")
    common = ["random", "mcts:5", "--games", "2", "--rows", "4", "--columns", "4", "--win-length", "3"]
    assert command.main([*common, "--json", same, "--games-out", same]) == 2
    assert "must name different files" in capsys.readouterr().err
    assert command.main([*common, "--json", ""]) == 2  # it used to be ignored
    assert "is a folder" in capsys.readouterr().err


def test_a_rated_tournament_checks_its_output_paths_before_any_game(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from connect4_agents.evaluation.rated_tournament import run_rated_tournament

    for name in ("json_out", "games_out"):
        with pytest.raises(ValueError, match=f"{name} .* is a folder"):
            run_rated_tournament(["random", "mcts:5"], 2, Rules(4, 5, 3), **{name: tmp_path})
        with pytest.raises(TypeError, match=f"{name} must be a file path"):
            run_rated_tournament(["random", "mcts:5"], 2, Rules(4, 5, 3), **{name: 5})


def test_a_ladder_file_must_be_of_the_gauntlets_board_with_sane_ratings(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A 4x5 ladder was used for a 6x7 gauntlet without a word, and an Elo of 1e308 overflowed the fit."""
    import json

    from connect4_agents.evaluation.rated_tournament import gauntlet_ratings

    def ladder(**fields: Any) -> Any:
        path = tmp_path / "ladder.json"
        board = {"rows": 4, "columns": 5, "win_length": 3}
        path.write_text(
            json.dumps({**board, "ratings": {"random": {"elo": 0}, "mcts:5": {"elo": 300}}, **fields})
        )
        return path

    assert gauntlet_ratings([], Rules(4, 5, 3), ladder()) == (
        ["random", "mcts:5"],
        {"random": 0.0, "mcts:5": 300.0},
    )
    with pytest.raises(ValueError, match="rated on 4x5 with 3 in a row; this gauntlet plays 6x7"):
        gauntlet_ratings([], Rules(), ladder())
    with pytest.raises(ValueError, match="names its board"):
        gauntlet_ratings([], Rules(4, 5, 3), _without(ladder(), "rows"))
    with pytest.raises(ValueError, match="its board is not one"):
        gauntlet_ratings([], Rules(4, 5, 3), ladder(rows=-3))
    with pytest.raises(ValueError, match="not finite numbers within"):
        gauntlet_ratings([], Rules(4, 5, 3), ladder(ratings={"random": {"elo": 1e308}}))


def _without(path: Any, key: str) -> Any:
    import json

    data = json.loads(path.read_text())
    del data[key]
    path.write_text(json.dumps(data))
    return path
