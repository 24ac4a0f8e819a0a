"""`connect4 serve-grader` over real sockets: scores, ranks and grades against the solver rubric, answers read as
each dialect reads them, and the limits it shares with the OpenEnv server (hosts, origins, bodies, items, busy,
deadlines)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from helpers.extras import heavy_without_numba, importorskip, needs_book
from helpers.openenv_servers import http, stop

from connect4_agents.evaluation.rewards import SolverRubric, score_ranks
from connect4_env.core import Board
from connect4_env.rules import Rules

importorskip("fastapi")
importorskip("uvicorn")

SMALL = {"rows": 4, "columns": 5, "win_length": 4}
SMALL_RULES = Rules(4, 5, 4)


@contextmanager
def grader(**options: Any) -> Iterator[str]:
    """The grader on 127.0.0.1, a free port, run by a thread of this process; its URL."""
    from connect4_agents.interop.grader_service import build_grader_server

    server, sock, url = build_grader_server("127.0.0.1", 0, **options)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def post(url: str, path: str, body: Any, headers: dict[str, str] | None = None) -> tuple[int, Any, Any]:
    return http(url + path, "POST", json.dumps(body).encode(), headers)


def test_scores_and_ranks_are_the_rubrics_and_a_move_is_graded() -> None:
    rubric = SolverRubric(SMALL_RULES)
    positions = [[], [2, 2], [0, 4, 1, 3]]
    with grader() as url:
        status, answer, _ = post(
            url,
            "/scores",
            {
                **SMALL,
                "items": [
                    {"moves": positions[0]},
                    {"moves": positions[1], "column": 0},
                    {"moves": positions[2]},
                ],
            },
        )
    assert status == 200
    for position, result in zip(positions, answer["results"]):
        exact = rubric.scores(Board.from_moves(position, SMALL_RULES))
        assert result["scores"] == list(exact) and result["ranks"] == score_ranks(exact)
    grade = rubric.grade(Board.from_moves([2, 2], SMALL_RULES), 0)
    assert answer["results"][1]["grade"] == {
        "verdict": grade.verdict,
        "reward": grade.reward,
        "rank": grade.rank,
        "top3": grade.top3,
        "classes_lost": grade.classes_lost,
    }


@needs_book
def test_the_standard_board_is_the_default_and_answers_are_read_in_their_dialect() -> None:
    with grader() as url:
        status, answer, _ = post(
            url,
            "/grade",
            {
                "dialect": "connect4",
                "items": [
                    {"moves": [], "answer": "<answer>4</answer>"},
                    {"moves": [], "answer": "1"},
                    {"moves": [], "answer": "pass"},
                ],
            },
        )
        arena = post(
            url, "/grade", {"dialect": "game_arena", "items": [{"moves": [], "answer": "Final Answer: 3"}]}
        )
    assert status == 200 and answer["dialect"] == "connect4"
    centre, edge, unread = answer["results"]
    assert (centre["column"], centre["reward"], centre["grade"]["verdict"]) == (3, 1.0, "best")
    assert edge["column"] == 0 and edge["reward"] == -1.0 and edge["grade"]["classes_lost"] == 2
    assert (
        unread["column"] is None and unread["error"] and unread["reward"] == -1.0 and unread["grade"] is None
    )
    assert arena[0] == 200 and arena[1]["results"][0]["column"] == 3  # 0-based there


def test_health_names_the_scale_the_dialects_and_the_limits() -> None:
    with grader(max_items=5) as url:
        status, answer, _ = http(url + "/health")
    assert status == 200 and answer["reward_scale"]["best"] == 1.0 and "json" in answer["dialects"]
    assert answer["limits"]["max_items"] == 5 and answer["rejected_answer_reward"] == -1.0


@pytest.mark.parametrize(
    ("body", "status", "detail"),
    [
        ({**SMALL, "items": [{"moves": [0, 0, 0, 0, 0]}]}, 422, "items[0].moves[4] = 0: a full column"),
        ({**SMALL, "items": [{"moves": [7]}]}, 422, "items[0].moves[0] = 7: off the board"),
        ({**SMALL, "items": [{"moves": [0, 1, 0, 1, 0, 1, 0]}]}, 422, "the game is over"),
        (
            {**SMALL, "items": [{"moves": [0, 0, 0, 0], "column": 0}]},
            422,
            "items[0].column = 0 is not a legal move",
        ),
        ({"rows": 5, "columns": 7, "items": [{"moves": []}]}, 422, "this 5x7 board has 35 cells"),
        (
            {"rows": 6, "columns": 7, "win_length": 5, "items": [{"moves": []}]},
            422,
            "has 5 in a row, and the",
        ),
        ({**SMALL, "items": [{"moves": ["3"]}]}, 422, "valid integer"),
        ({**SMALL, "items": []}, 422, "at least 1 item"),
        ({**SMALL, "items": [{"moves": []}], "extra": 1}, 422, "Extra inputs"),
        ({**SMALL, "items": [{"moves": []}] * 6}, 413, "6 items: at most 5 a request"),
    ],
)
def test_a_bad_request_is_refused_with_a_reason_and_the_server_goes_on(
    body: Any, status: int, detail: str
) -> None:
    with grader(max_items=5) as url:
        got, answer, _ = post(url, "/scores", body)
        assert got == status and detail in json.dumps(answer), answer
        assert post(url, "/scores", {**SMALL, "items": [{"moves": []}]})[0] == 200


def test_an_unknown_dialect_is_named_with_the_known_ones() -> None:
    with grader() as url:
        status, answer, _ = post(
            url, "/grade", {**SMALL, "dialect": "chess", "items": [{"moves": [], "answer": "1"}]}
        )
    assert status == 422 and "unknown dialect 'chess'; known: connect4, game_arena" in json.dumps(answer)


def test_the_shared_limits_hold_hosts_origins_bodies_and_nesting() -> None:
    with grader(max_items=2, max_answer_length=10) as url:
        assert http(url + "/health", headers={"Host": "evil.example"})[0] == 403
        assert http(url + "/health", headers={"Origin": "http://evil.example"})[0] == 403
        huge = {**SMALL, "items": [{"moves": [], "answer": "x" * 10_000}]}
        assert post(url, "/grade", huge)[0] == 413
        nested: Any = []
        for _ in range(200):
            nested = [nested]
        assert post(url, "/scores", nested)[0] == 400
        long_answer = {**SMALL, "items": [{"moves": [], "answer": "1" + " " * 20}]}
        status, answer, _ = post(url, "/grade", long_answer)
        assert status == 200 and "more than 10 characters" in answer["results"][0]["error"]


def test_past_the_pending_limit_a_request_is_told_to_retry_and_past_the_deadline_it_is_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from connect4_agents.interop import grader_service

    release, entered, given_back = threading.Event(), threading.Event(), threading.Event()
    original, give_back = grader_service._scores_work, grader_service._Gate._release

    def slow(stop: threading.Event, *args: Any) -> Any:
        entered.set()
        release.wait(30)
        return original(stop, *args)

    def released(gate: Any) -> None:
        give_back(gate)
        given_back.set()

    monkeypatch.setattr(grader_service, "_scores_work", slow)
    monkeypatch.setattr(grader_service._Gate, "_release", released)
    try:
        with grader(max_pending=1, grade_timeout=60) as url:
            first: list[Any] = []
            body = {**SMALL, "items": [{"moves": []}]}
            waiting = threading.Thread(target=lambda: first.append(post(url, "/scores", body)))
            waiting.start()
            assert entered.wait(30)  # the first request holds the only place
            status, answer, headers = post(url, "/scores", body)
            assert status == 503 and "busy" in answer["detail"] and headers["Retry-After"] == "1"
            release.set()
            waiting.join(30)
            assert first[0][0] == 200
        release.clear()
        with grader(max_pending=1, grade_timeout=1.0) as url:
            status, answer, _ = post(url, "/scores", body)
            assert status == 503 and "grading took more than 1 s" in answer["detail"]
            # its solve goes on: the place is still taken until the thread ends
            assert post(url, "/scores", body)[0] == 503
            given_back.clear()
            release.set()
            assert given_back.wait(30)  # the held solve ended and gave its place back: a request is graded
            assert post(url, "/scores", body)[0] == 200
    finally:
        release.set()


def test_a_boards_first_rubric_is_built_off_the_event_loop_while_built_boards_are_answered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first request on a board builds its rubric (solves its empty board) in the request's thread: while
    that build is under way (held by an event, under that board's build lock), the server answers `/health`
    and requests on a board it has graded; a board the build refuses is 422 from that thread."""
    from connect4_agents.evaluation import rewards

    entered, release = threading.Event(), threading.Event()
    slow, refused = Rules(2, 5, 3), Rules(3, 3, 3)

    class HeldRubric(rewards.SolverRubric):
        def __init__(self, rules: Rules | None = None) -> None:
            if rules == slow:
                entered.set()
                release.wait(60)
            elif rules == refused:
                raise ValueError("this board is refused by the test")
            super().__init__(rules)

    # a fresh process-wide table of rubrics, so that this test's boards are built (and refused) here only
    monkeypatch.setattr(rewards, "_SHARED", {})
    monkeypatch.setattr(rewards, "_REFUSED", {})
    monkeypatch.setattr(rewards, "SolverRubric", HeldRubric)
    small = {**SMALL, "items": [{"moves": []}]}
    held: list[Any] = []
    with grader() as url:
        assert post(url, "/scores", small)[0] == 200  # SMALL's rubric is built
        waiting = threading.Thread(
            target=lambda: held.append(
                post(url, "/scores", {**small, "rows": 2, "columns": 5, "win_length": 3})
            )
        )
        waiting.start()
        try:
            assert entered.wait(60)  # the slow board's build is under way
            assert http(url + "/health")[0] == 200
            status, answer, _ = post(
                url, "/grade", {**SMALL, "items": [{"moves": [], "answer": "<answer>3</answer>"}]}
            )
            assert status == 200 and answer["results"][0]["grade"] is not None
            assert post(url, "/scores", {**small, "items": [{"moves": [2], "column": 1}]})[0] == 200
            assert not held and waiting.is_alive()  # answered while the build was still held
        finally:
            release.set()
            waiting.join(60)
        assert held[0][0] == 200 and len(held[0][1]["results"][0]["scores"]) == 5
        status, answer, _ = post(url, "/scores", {**small, "rows": 3, "columns": 3, "win_length": 3})
        assert status == 422 and answer["detail"] == "this board is refused by the test"


def test_the_command_serves_and_stops() -> None:
    with command_grader("grading moves by perfect play at http://127.0.0.1:") as url:
        status, answer, _ = post(url, "/scores", {**SMALL, "items": [{"moves": [2]}]})
    assert status == 200 and len(answer["results"][0]["scores"]) == 5


@contextmanager
def command_grader(ready: str) -> Iterator[str]:
    """`connect4 serve-grader --port 0` in a child process, stopped through its process object."""
    import subprocess
    import sys

    process = subprocess.Popen(
        [sys.executable, "-m", "connect4_agents.commands", "serve-grader", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline() if process.stdout else ""
        assert ready in line, (line, process.communicate(timeout=30)[1] if process.poll() is not None else "")
        yield line.split(" at ")[1].strip()
    finally:
        stop(process)


@heavy_without_numba  # the refusal solves 3x10's empty board up to REWARD_NODES nodes
def test_a_board_within_30_cells_whose_empty_board_is_too_hard_is_refused_and_the_server_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from connect4_agents.evaluation import rewards

    # a count bounds the refusal, not the grade timeout: 20 million nodes took seconds, near the 30 s under load
    monkeypatch.setattr(rewards, "REWARD_NODES", 200_000)
    with grader() as url:
        status, answer, _ = post(
            url, "/scores", {"rows": 3, "columns": 10, "win_length": 4, "items": [{"moves": []}]}
        )
        assert status == 422 and "needs more than 200,000 solver nodes" in answer["detail"]
        assert post(url, "/scores", {**SMALL, "items": [{"moves": []}]})[0] == 200


def test_the_grading_server_starts_without_loading_openenv() -> None:
    # it shares the OpenEnv server's socket and connection limits, not OpenEnv itself (seconds of imports)
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from connect4_agents.interop.grader_service import build_grader_server\n"
        "server, sock, url = build_grader_server('127.0.0.1', 0)\n"
        "sock.close()\n"
        "print(url.startswith('http://127.0.0.1:'), sorted(m for m in ('openenv', 'gradio') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "[]"], done.stdout


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--grade-timeout", "100000"],
            "--grade-timeout must be at most 86,400 seconds, got 100,000",
        ),
        (["--request-timeout", "3601"], "--request-timeout must be at most 3,600 seconds, got 3,601"),
        (["--grade-timeout", "0"], "--grade-timeout must be a finite number of seconds > 0"),
        (["--max-items", "10001"], "--max-items must be at most 10,000"),
    ],
)
def test_the_command_names_the_flag_a_bad_value_came_in(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A grade timeout past the service's day was refused by its Python name, grade_timeout."""
    from connect4_agents.commands import serve_grader

    assert serve_grader.main(argv) == 2
    assert message in capsys.readouterr().err
