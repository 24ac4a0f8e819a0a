"""TextPolicy in the harnesses' dialects: their prompts and parsers, their rules for rejected and cut-off answers
(forfeits end the game in the records), every try kept for the game record, and model-vs-model matches."""

from __future__ import annotations

import json
import random

import pytest
from helpers.extras import needs

from connect4_agents.evaluation.arena import play_game, play_match
from connect4_agents.evaluation.records import GameLog, match_logs, read_games, write_games
from connect4_agents.interop.text import TextAnswer, TextPolicy
from connect4_agents.random_agent import RandomAgent
from connect4_env.core import Board
from connect4_env.policy import Forfeit, policy_from_spec
from connect4_env.rules import Rules


def leftmost(prompt: str) -> str:
    """Answers Game Arena's way: reasoning, then the lowest legal column it can see on OpenSpiel's board."""
    board_lines = [line for line in prompt.splitlines() if line and set(line) <= set(".xo")]
    top = board_lines[0]
    return f"The leftmost open column.\nFinal Answer: {top.index('.')}"


def test_a_game_arena_model_plays_whole_games_and_every_move_is_recorded() -> None:
    policy = TextPolicy(leftmost, dialect="game_arena")
    game = play_game([policy, RandomAgent(seed=0)], record_search=True, names=("llm", "random"))
    mine = game.search[0::2]
    assert all(info["kind"] == "text" and info["outcome"] == "answered" for info in mine)
    assert all(info["template"] == policy.template_hash and info["dialect"] == "game_arena" for info in mine)
    for column, info in zip(game.moves[0::2], mine):
        (attempt,) = info["tries"]
        assert attempt["column"] == column == info["column"] and attempt["error"] is None
        assert (
            attempt["answer"].endswith(f"Final Answer: {column}")
            and "Final Answer: <column_index>" in attempt["prompt"]
        )
    again = GameLog.from_dict(json.loads(json.dumps(game.to_dict())))
    assert again == game


def test_a_rejected_answer_gets_the_rethink_prompt_then_the_game_is_forfeited() -> None:
    answers = iter(["I like the edge.\nFinal Answer: 9", "Final Answer: 12"])
    policy = TextPolicy(lambda prompt: next(answers), dialect="game_arena")
    game = play_game([policy, RandomAgent(seed=0)], record_search=True)
    assert game.moves == () and game.result == "player1" and game.winner == 1
    assert game.forfeit["player"] == 0 and "not a legal column" in game.forfeit["reason"]
    first, second = game.forfeit["info"]["tries"]
    assert "Your previous response concluded with:\nI like the edge.\nFinal Answer: 9" in second["prompt"]
    assert first["answer"].endswith("9") and second["error"].startswith("Final Answer 12")
    assert game.forfeit["info"]["outcome"] == "forfeit" and policy.stats["forfeits"] == 1
    # the connect4 dialect keeps its random fallback; "raise" raises
    assert TextPolicy(lambda p: "zzz", seed=0).act(_planes([]), None) in range(7)
    with pytest.raises(ValueError, match="TextPolicy"):
        TextPolicy(lambda p: "zzz", dialect="textarena", fallback="raise").act(_planes([]), None)


def _planes(moves: list[int]) -> dict:
    from connect4_env.encoding import action_mask, observation_planes

    board = Board.from_moves(moves)
    return {"observation": observation_planes(board), "action_mask": action_mask(board)}


def test_a_cut_off_answer_is_read_as_game_arena_reads_it_and_the_model_is_told_when_it_fails() -> None:
    calls: list[str] = []

    def model(prompt: str) -> TextAnswer:
        calls.append(prompt)
        if len(calls) == 1:
            return TextAnswer(
                "Let me count the threats in column", finish_reason="length", completion_tokens=512
            )
        return TextAnswer(
            "Final Answer: 2", reasoning="short", prompt_tokens=300, completion_tokens=9, finish_reason="stop"
        )

    policy = TextPolicy(model, dialect="game_arena")
    assert policy.act(_planes([]), None) == 2
    info = policy.move_info()
    assert [t["finish_reason"] for t in info["tries"]] == ["length", "stop"]
    assert info["tries"][0]["error"].startswith("the answer was cut off at the length limit (no legal column")
    assert "cut off at the length limit" in calls[1]
    assert info["tries"][1] | {"prompt": None, "seconds": None} == {
        "prompt": None, "answer": "Final Answer: 2", "column": 2, "error": None, "seconds": None,
        "reasoning": "short", "prompt_tokens": 300, "completion_tokens": 9, "finish_reason": "stop",
    }  # fmt: skip
    # a cut-off answer that still names a legal column is played, as Kaggle's harness plays it
    cut = TextPolicy(lambda p: TextAnswer("Final Answer: 3", finish_reason="length"), dialect="game_arena")
    assert cut.act(_planes([]), None) == 3 and cut.move_info()["tries"][0]["error"] is None


def test_long_reasoning_is_read_and_a_text_that_is_not_a_str_is_rejected() -> None:
    thinking = "Let me think about every column. " * 2000 + "\nFinal Answer: 0"  # 66,000 characters
    assert TextPolicy(lambda p: thinking, dialect="game_arena").act(_planes([]), None) == 0
    short = TextPolicy(
        lambda p: thinking, dialect="game_arena", max_answer_length=4096, fallback="random", seed=0
    )
    short.act(_planes([]), None)
    assert short.move_info()["tries"][0]["error"] == "the answer has more than 4096 characters"
    for text in (None, 3):
        policy = TextPolicy(
            lambda p, text=text: TextAnswer(text), dialect="game_arena", fallback="random", seed=0
        )
        policy.act(_planes([]), None)
        assert "the model's text is" in policy.move_info()["tries"][0]["error"]


def test_bad_rich_answers_are_rejected_not_crashes() -> None:
    for bad in (
        {"txt": "3"},
        {"text": 3},
        TextAnswer("[3]", prompt_tokens=-1),
        TextAnswer("[3]", finish_reason=5),
        3,
    ):
        policy = TextPolicy(lambda prompt, bad=bad: bad, dialect="textarena", fallback="random", seed=0)
        assert policy.act(_planes([]), None) in range(7)
        assert policy.stats["rejected"] == 2 and policy.stats["fallbacks"] == 1


def test_the_policy_follows_both_players_moves_for_the_history() -> None:
    prompts: list[str] = []

    def model(prompt: str) -> str:
        prompts.append(prompt)
        return json.dumps({"column": json.loads(prompt.splitlines()[-1])["legal_actions"][-1]})

    policy = TextPolicy(model, dialect="json", history=True)
    game = play_game([RandomAgent(seed=4), policy], record_search=True)
    for index, prompt in enumerate(prompts):
        state = json.loads(prompt.splitlines()[-1])
        assert state["moves"] == list(game.moves[: 2 * index + 1]) and state["player"] == -1
    policy.reset()  # a new game: no moves carried over
    policy.act(_planes([5]), None)
    assert json.loads(prompts[-1].splitlines()[-1])["moves"] == [5]
    policy.act(_planes([5, 6, 1, 0, 2]), None)  # not the game it played: no history rather than a wrong one
    assert json.loads(prompts[-1].splitlines()[-1])["moves"] == []


def test_chat_mode_sends_messages_and_specs_name_the_dialect(tmp_path, monkeypatch) -> None:
    seen: list = []

    def model(messages: list) -> str:
        seen.append(messages)
        return "[col 3]"

    assert TextPolicy(model, dialect="textarena", chat=True).act(_planes([]), None) == 3
    assert [m["role"] for m in seen[0]] == ["system", "user"] and "Player 0" in seen[0][0]["content"]
    (tmp_path / "c4_model_for_tests.py").write_text("def answer(prompt):\n    return '{\"column\": 1}'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    policy = policy_from_spec("text:c4_model_for_tests:answer:json")
    assert policy.dialect.name == "json" and policy.act(_planes([]), None) == 1
    with pytest.raises(ValueError, match="dialect"):
        policy_from_spec("text:c4_model_for_tests:answer:chess")
    with pytest.raises(ValueError, match="module:function"):
        policy_from_spec("text:c4_model_for_tests:answer:json:extra")


def test_two_models_play_paired_seats_and_the_records_read_back(tmp_path) -> None:
    rng = random.Random(1)

    def sloppy(prompt: str) -> str:  # TextArena's format, with a share of unreadable answers
        return f"[col {rng.randrange(7)}]" if rng.random() < 0.85 else "let me think"

    a, b = TextPolicy(leftmost, dialect="game_arena"), TextPolicy(sloppy, dialect="textarena")
    result = play_match(a, b, 6, keep_games=True, record_search=True, names=("arena", "textarena"))
    assert sum(result.by_side["first"]) == sum(result.by_side["second"]) == 3  # paired seats
    logs = match_logs(result, ("arena", "textarena"), Rules())
    path = write_games(tmp_path / "games.jsonl", logs)
    back = read_games(path)
    assert back == logs
    for game in back:
        if game.forfeit is not None:
            assert game.result == ("player1" if game.forfeit["player"] == 0 else "player0")
            assert not game.final_board.is_terminal


def test_records_refuse_forfeits_that_do_not_fit_the_moves() -> None:
    good = {"format": "connect4-game", "version": 1, "rows": 6, "columns": 7, "win_length": 4,
            "players": ["a", "b"], "seed": None, "moves": [3], "result": "player0",
            "forfeit": {"player": 1, "reason": "no legal answer", "info": None}}  # fmt: skip
    assert GameLog.from_dict(good).forfeit["player"] == 1
    for change, message in (
        ({"result": "player1"}, "disagrees"),
        ({"forfeit": {"player": 0, "reason": "x", "info": None}}, "player 1 is to move"),
        ({"forfeit": {"player": 1, "reason": 5, "info": None}}, "reason string"),
        ({"forfeit": {"player": 1, "reason": "x", "extra": 1}}, "player, reason and info"),
        ({"moves": [0, 1, 0, 1, 0, 1, 0], "forfeit": {"player": 1, "reason": "x"}}, "after the end"),
    ):
        with pytest.raises(ValueError, match=message):
            GameLog.from_dict({**good, **change})


def test_forfeit_is_a_value_error_with_its_reason() -> None:
    error = Forfeit("out of answers", {"kind": "text"})
    assert (
        isinstance(error, ValueError) and error.reason == "out of answers" and error.info == {"kind": "text"}
    )


MODEL_MODULE = """
import json


def arena_leftmost(prompt):
    rows = [line for line in prompt.splitlines() if line and set(line) <= set(".xo")]
    return "Final Answer: " + str(rows[0].index("."))


def quits_late(prompt):
    state = json.loads(prompt.splitlines()[-1])
    if len(state["moves"]) >= 4:
        return "I resign."
    return json.dumps({"column": state["legal_actions"][0]})
"""


def test_tournaments_and_the_ladder_take_text_specs_and_count_forfeits(tmp_path, monkeypatch) -> None:
    from connect4_agents.evaluation.rated_tournament import run_rated_tournament

    (tmp_path / "c4_models_for_tournaments.py").write_text(MODEL_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    arena = "text:c4_models_for_tournaments:arena_leftmost:game_arena"
    quitter = "text:c4_models_for_tournaments:quits_late:json"
    ratings = run_rated_tournament(
        [arena, quitter, "random"],
        4,
        Rules(),
        workers=1,
        progress=False,
        bootstrap=0,
        json_out=tmp_path / "ladder.json",
        games_out=tmp_path / "games.jsonl",
    )
    assert set(ratings.elo) == {arena, quitter, "random"}
    games = read_games(tmp_path / "games.jsonl")
    assert len(games) == 12
    quits = [g for g in games if quitter in g.players]
    assert quits and all(g.forfeit is not None and g.players[g.forfeit["player"]] == quitter for g in quits)
    assert all(g.result == ("player1" if g.forfeit["player"] == 0 else "player0") for g in quits)
    for game in games:
        for seat, info in zip(range(len(game.moves)), game.search):
            if game.players[seat % 2] == arena:
                assert (
                    info["kind"] == "text"
                    and info["dialect"] == "game_arena"
                    and info["outcome"] == "answered"
                )


@needs("openenv", "uvicorn")
def test_the_env_the_server_and_text_policy_read_answers_of_the_same_default_length() -> None:
    import inspect

    import gymnasium as gym

    from connect4_agents.commands.serve_openenv import ServeOpenEnvConfig
    from connect4_env.envs.dialects import DIALECTS, MAX_ANSWER_LENGTH
    from connect4_env.envs.two_seats import TwoSeatTextGame
    from connect4_env.integrations.openenv import server

    assert MAX_ANSWER_LENGTH == 1_000_000
    assert ServeOpenEnvConfig().max_answer_length == MAX_ANSWER_LENGTH
    for build in (server.create_app, server.build_server, TwoSeatTextGame):
        assert inspect.signature(build).parameters["max_answer_length"].default == MAX_ANSWER_LENGTH
    assert TextPolicy(leftmost).max_answer_length == MAX_ANSWER_LENGTH
    # a reasoning answer longer than the former 32,768 (env, server) is read in every dialect, as the harnesses
    # read it
    finals = {
        "connect4": "<answer>4</answer>",
        "game_arena": "Final Answer: 3",
        "deepmind_game_arena": "Final Answer: 3",
        "textarena": "[col 3]",
    }
    for dialect in DIALECTS:
        env = gym.make("Connect4Text-v0", dialect=dialect, agent_first=True)
        assert env.unwrapped.max_answer_length == MAX_ANSWER_LENGTH
        env.reset(seed=0)
        answer = "Thinking about the centre. " * 2_000 + finals.get(dialect, '{"column": 3}')
        _, _, _, _, info = env.step(answer)
        assert len(answer) > 50_000 and info["parsed_column"] == 3, (dialect, info["parse_error"])


def test_a_tool_call_nested_a_thousand_deep_is_a_rejected_answer_not_a_crash() -> None:
    nested = json.dumps({"name": "drop_disc", "arguments": "[" * 1000 + "]" * 1000})
    policy = TextPolicy(lambda prompt: nested, dialect="json", fallback="random", seed=0)
    assert policy.act(*_empty_position()) in range(7)
    assert policy.move_info()["outcome"] == "fallback"
    assert policy.move_info()["tries"][0]["error"] == 'no column could be read: answer {"column": N}'


def _empty_position() -> tuple:
    from connect4_env.encoding import action_mask, observation_planes

    board = Board()
    return observation_planes(board), action_mask(board)


def test_a_registered_dialect_plays_through_text_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    from connect4_env.envs.dialects import DIALECTS, GameArenaDialect

    class NoRethink(GameArenaDialect):  # Game Arena's prompt and reader, without its second chance
        name = "game_arena_no_rethink"
        max_retries = 0

    monkeypatch.setitem(DIALECTS, NoRethink.name, NoRethink)
    policy = TextPolicy(lambda prompt: "no idea", dialect="game_arena_no_rethink")
    assert (policy.dialect.max_retries, policy.max_retries, policy.fallback) == (0, 0, "forfeit")
    with pytest.raises(Forfeit):
        policy.act(*_empty_position())
    info = policy.move_info()
    assert info["dialect"] == "game_arena_no_rethink" and len(info["tries"]) == 1
    assert "Final Answer: <column_index>" in info["tries"][0]["prompt"]
