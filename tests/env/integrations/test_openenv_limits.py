"""The limits of `connect4 serve-openenv` hold whatever clients do, over real sockets on localhost (a server per
test, run by a thread of the test's process; OpenEnv's own clients where they apply): at most `max_sessions`
games at once (an idle WebSocket is closed with a reason, OpenEnv's MCP sessions are not served, HTTP and
WebSocket sessions share the cap), new sessions at most `session_rate` a second, requests to a foreign `Host`
or from another web page refused, every bad frame answered with an error frame while the game goes on, a game
that fails (an opponent that cannot move) answered with an error while the session goes on, and a client that
leaves mid-step costs one log line. Every wait here is bounded, and no test sleeps."""

from __future__ import annotations

import json
import logging
import threading
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pytest
from extras import needs
from openenv_servers import handshake, http, running_server

pytestmark = needs("openenv")


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
    from connect4_env.integrations.openenv.environment import Connect4TextClient

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


def test_openenv_mcp_routes_are_not_served_so_plain_requests_cannot_fill_the_server() -> None:
    from connect4_env.integrations.openenv.environment import Connect4TextAction, Connect4TextClient

    create = json.dumps(
        {"jsonrpc": "2.0", "method": "openenv/session/create", "params": {}, "id": 1}
    ).encode()
    with running_server(max_sessions=2) as url:
        for _ in range(3):  # a text/plain POST, which any web page may send without asking
            code, answer, _ = http(f"{url}/mcp", "POST", create, {"content-type": "text/plain"})
            assert code in (404, 405) and "session_id" not in json.dumps(answer)
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
    ("x" * 100_000, "INVALID_JSON"),  # over --max-body-bytes, under the hard limit
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
