"""The limits of `connect4 serve-openenv` hold whatever clients do, over real sockets on localhost (a server per
test, run by a thread of the test's process; OpenEnv's own clients where they apply): at most `max_sessions`
games at once (an idle WebSocket is closed with a reason, OpenEnv's MCP sessions are not served, HTTP and
WebSocket sessions share the cap), new sessions at most `session_rate` a second, requests to a foreign `Host`
or from another web page refused, every bad frame answered with an error frame while the game goes on, a game
that fails (an opponent that cannot move) answered with an error while the session goes on, and a client that
leaves mid-step costs one log line, and answers up to the server's `max_answer_length` arrive and are read (a
20,000-character reasoning answer in Game Arena's dialect is played; a longer one than the cap is a rejected
answer; the body limits follow the cap). Every wait here is bounded, and no test sleeps."""

from __future__ import annotations

import json
import logging
import threading
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pytest
from helpers.extras import needs
from helpers.openenv_servers import command_server, handshake, http, running_server

from connect4_env.envs.dialects import MAX_ANSWER_LENGTH
from connect4_env.integrations.openenv.hardening import body_limit

pytestmark = needs("openenv")

DEFAULT_BODY_BYTES = body_limit(MAX_ANSWER_LENGTH)  # the server's --max-body-bytes when none is given
ANSWER = (
    32_768  # a server's max_answer_length where a test sends answers around it (the default's 12 MB is slow)
)


def ws_url(url: str) -> str:
    return url.replace("http://", "ws://") + "/ws"


def exchange(ws: Any, frame: str | bytes) -> dict[str, Any]:
    ws.send(frame)
    return json.loads(ws.recv(timeout=30))


def reset_frame(seed: int) -> str:
    return json.dumps({"type": "reset", "data": {"seed": seed}})


def step_frame(message: str) -> str:
    return json.dumps({"type": "step", "data": {"message": message}})


def test_an_idle_websocket_is_closed_with_a_reason_and_its_place_goes_to_a_new_client() -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync import client as sync_client  # OpenEnv's own dependency

    # nothing here waits for a time to pass: each client says nothing and reads what the server does
    with running_server(max_sessions=1, session_timeout=1) as url:
        with sync_client.connect(ws_url(url)) as first:
            with pytest.raises(ConnectionClosed) as closed:
                first.recv(timeout=60)  # idle: the server closes it and says why
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001
            assert closed.value.rcvd.reason == "idle for 1 s: the session is closed"
            with pytest.raises(ConnectionClosed):  # a closed session plays no more
                first.send(step_frame("4"))
        with sync_client.connect(ws_url(url)) as second:  # the one place is free again: no refusal (1013)
            with pytest.raises(ConnectionClosed) as closed:
                second.recv(timeout=60)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001


def test_http_and_websocket_sessions_share_one_cap() -> None:
    from connect4_env.integrations.openenv.client import Connect4TextClient

    with running_server(max_sessions=2) as url, Connect4TextClient(base_url=url).sync() as env:
        env.reset(seed=0)
        code, created, _ = http(f"{url}/sessions", "POST")
        assert code == 201
        code, refused, _ = http(f"{url}/sessions", "POST")
        assert code == 503 and "at most 2 games at once" in refused["detail"]
        # the server refuses the third at once: an error frame, then close code 1013; a client that sends its
        # reset after the close has arrived (openenv-core's, at times) meets the close itself
        from websockets.exceptions import ConnectionClosed

        third = Connect4TextClient(base_url=url).sync()
        with third, pytest.raises((RuntimeError, ConnectionClosed)) as refused_ws:
            third.reset(seed=0)
        if isinstance(refused_ws.value, ConnectionClosed):
            assert refused_ws.value.rcvd is not None and refused_ws.value.rcvd.code == 1013
        else:
            assert "CAPACITY_REACHED" in str(refused_ws.value)
        assert http(f"{url}/sessions/{created['session_id']}", "DELETE")[0] == 200
        assert http(f"{url}/sessions", "POST")[0] == 201  # the freed place


def test_openenv_mcp_sessions_are_not_served_so_plain_requests_cannot_fill_the_server() -> None:
    """OpenEnv's /mcp opened a session per request, past every limit; ours is stateless and opens none."""
    from connect4_env.integrations.openenv.client import Connect4TextClient
    from connect4_env.integrations.openenv.models import Connect4TextAction

    create = json.dumps(
        {"jsonrpc": "2.0", "method": "openenv/session/create", "params": {}, "id": 1}
    ).encode()
    with running_server(max_sessions=2) as url:
        for _ in range(3):  # a text/plain POST, which any web page may send without asking
            code, answer, _ = http(f"{url}/mcp", "POST", create, {"content-type": "text/plain"})
            assert (
                code == 200 and answer["error"]["code"] == -32601 and "session_id" not in json.dumps(answer)
            )
        assert handshake(url, "/mcp")[0] != 101
        with Connect4TextClient(base_url=url).sync() as env:
            env.reset(seed=0)
            assert env.step(Connect4TextAction(message="4")).observation.parsed_column == 3


@pytest.mark.parametrize("path", ["/health", "/schema", "/sessions", "/reset", "/ws"])
def test_a_request_to_a_foreign_host_name_is_refused_on_loopback(path: str) -> None:
    with running_server() as url:
        port = urlsplit(url).port
        for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}"):
            if path == "/ws":
                status, body = handshake(url, headers={"Host": host})
                answer = json.loads(body) if status == 403 else {}
            else:
                method = "GET" if path in ("/health", "/schema") else "POST"
                status, answer, _ = http(url + path, method, b"{}", {"Host": host})
            assert status == 403, (host, status)
            assert f"Host {host!r} is not served here" in answer["detail"]
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST.:{port}"):
            if path == "/ws":
                assert handshake(url, headers={"Host": host})[0] == 101
            elif path in ("/health", "/schema"):
                assert http(url + path, headers={"Host": host})[0] == 200


def test_a_web_page_from_another_origin_can_neither_play_nor_open_sessions() -> None:
    from websockets.sync import client as sync_client

    with running_server() as url:
        evil = {"Origin": "http://evil.example"}
        status, body = handshake(url, headers=evil)
        assert status == 403
        assert "Origin 'http://evil.example' may not use this server" in json.loads(body)["detail"]
        code, answer, _ = http(f"{url}/sessions", "POST", b"", {**evil, "content-type": "text/plain"})
        assert code == 403 and "Origin" in answer["detail"]
        assert handshake(url, headers={"Origin": "null"})[0] == 403
        assert handshake(url, headers={"Origin": "http://127.0.0.1:3000"})[0] == 403  # another local page
        assert handshake(url, headers={"Origin": url})[0] == 101  # the server's own pages (its /docs)
        with sync_client.connect(ws_url(url)) as ws:  # a program sends no Origin: it plays
            assert exchange(ws, reset_frame(0))["type"] == "observation"


def test_the_origins_allowed_by_name_may_use_the_server() -> None:
    with running_server(allowed_origins=["http://127.0.0.1:3000"]) as url:
        assert handshake(url, headers={"Origin": "http://127.0.0.1:3000"})[0] == 101
        assert http(f"{url}/sessions", "POST", b"", {"Origin": "http://127.0.0.1:3000/"})[0] == 201
        assert handshake(url, headers={"Origin": "http://127.0.0.1:3001"})[0] == 403


BAD_FRAMES: list[tuple[str | bytes, str]] = [
    ("5", "INVALID_JSON"),
    ("null", "INVALID_JSON"),
    ("[1, 2]", "INVALID_JSON"),
    ('"step"', "INVALID_JSON"),
    (b"\x00\x01binary", "INVALID_JSON"),
    ("[" * 20_000, "INVALID_JSON"),
    ('{"type": "step", "data": ' * 5_000, "INVALID_JSON"),
    ("{not json", "INVALID_JSON"),
    ("x" * (DEFAULT_BODY_BYTES + 1), "INVALID_JSON"),  # over --max-body-bytes, under the hard limit
    ('{"type": 5}', "UNKNOWN_TYPE"),
    ('{"type": "dance"}', "UNKNOWN_TYPE"),
    ('{"type": "mcp", "data": {"method": "tools/list"}}', "UNKNOWN_TYPE"),
    ('{"type": "step", "data": 5}', "VALIDATION_ERROR"),
    ('{"type": "step", "data": [1]}', "VALIDATION_ERROR"),
    ('{"type": "step", "data": {"message": 4}}', "VALIDATION_ERROR"),
    ('{"type": "step", "data": {"message": "4", "column": 4}}', "VALIDATION_ERROR"),
    ('{"type": "reset", "data": {"seed": "zero"}}', "VALIDATION_ERROR"),
    ('{"type": "reset", "data": {"seed": -1}}', "VALIDATION_ERROR"),
    ('{"type": "reset", "data": {"options": {}}}', "VALIDATION_ERROR"),
]


def test_every_bad_frame_gets_an_error_frame_and_the_game_goes_on() -> None:
    from websockets.sync import client as sync_client

    with running_server() as url, sync_client.connect(ws_url(url), max_size=None) as ws:
        assert exchange(ws, reset_frame(0))["type"] == "observation"
        assert exchange(ws, step_frame("4"))["data"]["observation"]["parsed_column"] == 3
        before = exchange(ws, '{"type": "state"}')["data"]
        for frame, code in BAD_FRAMES:
            reply = exchange(ws, frame)
            assert reply["type"] == "error" and reply["data"]["code"] == code, (frame[:40], reply)
            assert reply["data"]["message"]
        assert exchange(ws, '{"type": "state"}')["data"] == before  # the game is as it was
        played = exchange(ws, step_frame("column 4"))["data"]
        assert played["observation"]["parsed_column"] == 3
        assert exchange(ws, '{"type": "state"}')["data"]["ply"] == before["ply"] + 2


def test_a_text_frame_that_is_not_utf8_closes_its_connection_with_one_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync import client as sync_client

    with running_server() as url:
        uvicorn_errors = logging.getLogger("uvicorn.error")  # does not propagate to the root: catch it here
        uvicorn_errors.addHandler(caplog.handler)
        try:
            with sync_client.connect(ws_url(url)) as ws:
                ws.send(b"\xff\xfe{", text=True)  # the WebSocket protocol requires the connection to fail
                with pytest.raises(ConnectionClosed) as closed:
                    ws.recv(timeout=30)
                assert closed.value.rcvd is not None and closed.value.rcvd.code == 1007
            with sync_client.connect(ws_url(url)) as ws:  # the server goes on serving
                assert exchange(ws, reset_frame(0))["type"] == "observation"
        finally:
            uvicorn_errors.removeHandler(caplog.handler)
    invalid = [record for record in caplog.records if "Invalid UTF-8" in record.getMessage()]
    assert len(invalid) == 1 and not invalid[0].exc_info and "Traceback" not in caplog.text


def test_new_sessions_are_limited_to_the_rate() -> None:
    from websockets.sync import client as sync_client

    # a burst of --max-sessions (3), then one every 1,000 s: no fourth session within this test
    with running_server(max_sessions=3, session_rate=0.001) as url:
        for _ in range(2):
            code, created, _ = http(f"{url}/sessions", "POST")
            assert code == 201 and http(f"{url}/sessions/{created['session_id']}", "DELETE")[0] == 200
        with sync_client.connect(ws_url(url)) as ws:
            assert exchange(ws, reset_frame(0))["type"] == "observation"
        code, refused, headers = http(f"{url}/sessions", "POST")  # no session open, and still refused
        assert code == 429 and "at most 0.001 a second" in refused["detail"]
        assert int(headers["Retry-After"]) > 100
        with sync_client.connect(ws_url(url)) as ws:
            reply = json.loads(ws.recv(timeout=30))
            assert (
                reply["data"]["code"] == "CAPACITY_REACHED"
                and "too many new sessions" in reply["data"]["message"]
            )


class GatedOpponent:
    """An opponent that holds its move until the test lets it go (at most 60 s), then plays the leftmost legal
    column: the test knows when the server is inside a step, and decides when the step ends."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def act(self, observation: Any, action_mask: Any = None) -> int:
        self.entered.set()
        self.release.wait(timeout=60)
        return int(np.flatnonzero(action_mask)[0])


def test_a_client_that_leaves_mid_step_costs_one_log_line_and_no_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from websockets.sync import client as sync_client

    gate = GatedOpponent()
    with running_server(opponent=gate) as url:
        # uvicorn's own loggers do not propagate to the root: catch what they log too
        uvicorn_errors = logging.getLogger("uvicorn.error")
        uvicorn_errors.addHandler(caplog.handler)
        try:
            with caplog.at_level(logging.INFO):
                with sync_client.connect(ws_url(url)) as ws:
                    assert exchange(ws, reset_frame(0))["type"] == "observation"
                    ws.send(step_frame("4"))  # the opponent's reply waits at the gate
                    assert gate.entered.wait(timeout=60)
                # the client has left while the server is inside the step
                gate.release.set()
                for seed in range(2):  # the server goes on serving
                    with sync_client.connect(ws_url(url)) as again:
                        assert exchange(again, reset_frame(seed))["type"] == "observation"
        finally:
            uvicorn_errors.removeHandler(caplog.handler)
    # the server has stopped: every task ended, its log is complete
    assert not [record for record in caplog.records if record.exc_info], caplog.text
    left = [record for record in caplog.records if "client left" in record.getMessage()]
    assert len(left) == 1 and "\n" not in left[0].getMessage(), caplog.text


class BrokenOpponent:
    """An opponent that cannot move, as the solver without its opening book: every reply raises."""

    def act(self, observation: Any, action_mask: Any = None) -> int:
        from connect4_env.extras import MissingExtraError

        raise MissingExtraError("the opponent is broken: it needs the 'book' extra")


def test_a_failing_game_is_an_error_frame_and_the_session_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    from websockets.sync import client as sync_client

    with running_server(opponent=BrokenOpponent()) as url, sync_client.connect(ws_url(url)) as ws:
        assert exchange(ws, reset_frame(0))["type"] == "observation"
        for _ in range(2):
            reply = exchange(ws, step_frame("4"))
            assert reply["type"] == "error" and "the opponent is broken" in reply["data"]["message"]
        assert exchange(ws, '{"type": "state"}')["data"]["ply"] == 0  # the game as it was
        session = f"{url}/sessions/{http(f'{url}/sessions', 'POST')[1]['session_id']}"
        assert http(f"{session}/reset", "POST", b'{"seed": 0}')[0] == 200
        code, answer, _ = http(f"{session}/step", "POST", b'{"action": {"message": "4"}}')
        assert code == 500 and "the opponent is broken" in answer["detail"]
    failures = [record for record in caplog.records if "the opponent is broken" in record.getMessage()]
    assert len(failures) == 3 and not any(record.exc_info for record in failures)


def reasoning(length: int, final: str = "Final Answer: 3") -> str:
    """A Game Arena answer of exactly `length` characters: reasoning that names other columns, then `final`."""
    line = "Column 5 lets them stack three; column 1 is far from the centre, so not 6 either. "
    body = (line * (length // len(line) + 1))[: length - len(final) - 1]
    return f"{body}\n{final}"


def step_message(message: str) -> Any:
    from connect4_env.integrations.openenv.models import Connect4TextAction

    return Connect4TextAction(message=message)


def test_a_long_reasoning_answer_is_played_and_one_over_the_cap_is_a_rejected_answer() -> None:
    from connect4_env.integrations.openenv.client import Connect4TextClient

    assert MAX_ANSWER_LENGTH == 1_000_000  # the default: the text env's and TextPolicy's too
    with (
        running_server(dialect="game_arena", max_answer_length=ANSWER) as url,
        Connect4TextClient(base_url=url).sync() as env,
    ):
        env.reset(seed=0)
        result = env.step(step_message(reasoning(20_000)))  # OpenEnv's client sends it; the dialect reads it
        assert result.observation.parse_error is None and result.observation.parsed_column == 3
        assert env.state().moves[0] == 3 and env.state().ply == 2
        # every character escaped twice by json.dumps (12 bytes each), the answer at the cap: it arrives
        emoji = "\U0001f642" * (ANSWER - 16) + "\nFinal Answer: 4"
        assert len(emoji) == ANSWER and len(json.dumps(emoji)) > 11 * ANSWER
        result = env.step(step_message(emoji))
        assert result.observation.parse_error is None and result.observation.parsed_column == 4
        ply = env.state().ply
        result = env.step(step_message(reasoning(ANSWER + 1)))  # the dialect's rule: one rethink
        assert result.observation.parse_error == f"the answer has more than {ANSWER} characters"
        assert not result.done and result.observation.retries_left == 0 and env.state().ply == ply
        assert result.observation.text.endswith("\nFinal Answer: 3\n")  # Game Arena's rethink quotes its end
        result = env.step(step_message(reasoning(ANSWER, "Final Answer: 2")))  # at the cap: read
        assert result.observation.parsed_column == 2 and env.state().ply == ply + 2
        result = env.step(step_message("x" * (ANSWER + 1)))
        assert result.observation.retries_left == 0 and not result.done
        result = env.step(step_message("x" * 200_000))  # retries spent: Game Arena's forfeit
        assert result.done and result.reward == -1.0 and result.observation.outcome == "loss"
        assert "more than 32768 characters" in result.observation.parse_error
        assert env.reset(seed=1).observation.legal_columns == list(range(7))  # the session goes on


def test_a_message_over_the_body_limit_is_an_error_and_the_session_goes_on() -> None:
    from connect4_env.integrations.openenv.client import Connect4TextClient

    with (
        running_server(dialect="game_arena", max_answer_length=ANSWER) as url,
        Connect4TextClient(base_url=url).sync() as env,
    ):
        env.reset(seed=0)
        with pytest.raises(RuntimeError, match=f"message too large: .* bytes, at most {body_limit(ANSWER)}"):
            env.step(step_message("\u00e9" * 100_000))  # 600,000 bytes once escaped
        assert env.state().ply == 0
        assert env.step(step_message(reasoning(20_000))).observation.parsed_column == 3


def test_the_body_limits_follow_the_answer_length_and_an_explicit_limit_wins() -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync import client as sync_client

    with running_server(max_answer_length=1000, dialect="game_arena") as url:
        limit = body_limit(1000)
        assert limit == 12 * 1000 + 4096
        session = f"{url}/sessions/{http(f'{url}/sessions', 'POST')[1]['session_id']}"
        assert http(f"{session}/reset", "POST", b'{"seed": 0}')[0] == 200
        body = json.dumps({"action": {"message": reasoning(1001)}}).encode()
        code, answer, _ = http(f"{session}/step", "POST", body)  # over the cap, under the body limit: read
        assert (
            code == 200 and answer["observation"]["parse_error"] == "the answer has more than 1000 characters"
        )
        code, answer, _ = http(f"{session}/step", "POST", b'{"action": {"message": "' + b"4" * limit + b'"}}')
        assert code == 413 and f"at most {limit} bytes" in answer["detail"]
        code, answer, _ = http(
            f"{session}/step", "POST", json.dumps({"action": {"message": reasoning(1000)}}).encode()
        )
        assert code == 200 and answer["observation"]["parsed_column"] == 3
        with sync_client.connect(ws_url(url), max_size=None) as ws:
            assert exchange(ws, reset_frame(0))["type"] == "observation"
            reply = exchange(ws, "x" * (limit + 1))
            assert reply["type"] == "error" and f"at most {limit}" in reply["data"]["message"]
            ws.send("x" * (4 * limit + 1))  # past the hard limit, 4 times the body's: not even read
            with pytest.raises(ConnectionClosed) as closed:
                ws.recv(timeout=30)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    with running_server(max_answer_length=1000, max_body_bytes=6000) as url:
        session = f"{url}/sessions/{http(f'{url}/sessions', 'POST')[1]['session_id']}"
        code, answer, _ = http(
            f"{session}/reset", "POST", b'{"seed": 0, "episode_id": "' + b"e" * 6000 + b'"}'
        )
        assert code == 413 and "at most 6000 bytes" in answer["detail"]


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"max_body_bytes": 5095, "max_answer_length": 1000}, ValueError, "at least 5096"),
        ({"max_body_bytes": 1000}, ValueError, "too small for answers of up to 1000000 characters"),
        ({"max_answer_length": 1_000_001}, ValueError, "max_answer_length must be an integer in 1..1000000"),
        ({"max_answer_length": 0}, ValueError, "max_answer_length must be an integer in 1..1000000"),
        ({"max_answer_length": 40.5}, TypeError, "max_answer_length must be an integer"),
        ({"max_answer_length": "long"}, TypeError, "max_answer_length must be an integer"),
        ({"max_body_bytes": "big"}, TypeError, "max_body_bytes must be an integer"),
    ],
)
def test_the_server_refuses_limits_that_cannot_hold_its_answers(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    from connect4_env.integrations.openenv.server import build_server, create_app

    with pytest.raises(error, match=message):
        create_app(**options)
    with pytest.raises(error, match=message):
        build_server("127.0.0.1", 0, **options)


def test_the_command_reads_answers_up_to_its_max_answer_length() -> None:
    from connect4_env.integrations.openenv.client import Connect4TextClient

    with (
        command_server("--max-answer-length", "1000", "--dialect", "game_arena") as (url, _),
        Connect4TextClient(base_url=url).sync() as env,
    ):
        env.reset(seed=0)
        rejected = env.step(step_message(reasoning(1001)))
        assert rejected.observation.parse_error == "the answer has more than 1000 characters"
        assert env.step(step_message(reasoning(1000))).observation.parsed_column == 3
        with pytest.raises(RuntimeError, match=f"at most {body_limit(1000)}"):
            env.step(step_message("x" * body_limit(1000)))
