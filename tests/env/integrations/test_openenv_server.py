"""`connect4 serve-openenv` against OpenEnv's own clients (typed and generic; the same tests run with both
distributions, `openenv` and `openenv-core`: `make test-openenv-core`): a server started and stopped here
(localhost, a free port), a full game against the solver, hostile requests answered with a clear error while the
server keeps serving, and parallel sessions that share nothing."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.extras import book_installed, needs, needs_book
from helpers.openenv_servers import command_server, handshake

from connect4_env.integrations.openenv.hardening import body_limit

pytestmark = needs("openenv")

ANSWER = 32_768  # the server's --max-answer-length (the default's bodies, 12 MB, make these tests slow)
LIMIT = body_limit(ANSWER)  # the command's --max-body-bytes when none is given


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The command in a child process (opponent: the solver where the opening book is installed, else random;
    one allowed web origin); its URL. Stopped by its own process object."""
    opponent = "solver" if book_installed() else "random"
    options = ["--opponent", opponent, "--max-sessions", "8", "--allow-origin", "http://127.0.0.1:3000"]
    options += ["--max-answer-length", str(ANSWER)]
    with command_server(*options) as (url, _):
        yield url


def http(url: str, method: str = "GET", body: bytes | None = None) -> tuple[int, Any]:
    request = urllib.request.Request(
        url, data=body, method=method, headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def play_game(url: str, seed: int) -> tuple[list[Any], Any]:
    from connect4_env.integrations.openenv.client import Connect4TextClient
    from connect4_env.integrations.openenv.models import Connect4TextAction

    results = []
    with Connect4TextClient(base_url=url).sync() as env:
        result = env.reset(seed=seed)
        while not result.done:
            result = env.step(
                Connect4TextAction(message=f"I play column {result.observation.legal_columns[0]}")
            )
            results.append(result)
        return results, env.state()


@pytest.mark.slow  # about 6 s on 2 cores (over 3 s): make test-slow, CI runs it
@needs_book
def test_a_full_game_against_the_solver_through_openenvs_client(server: str) -> None:
    results, state = play_game(server, seed=0)
    last = results[-1]
    assert last.done and last.reward == -1.0 and last.observation.outcome == "loss"  # the solver wins
    assert "Game over: you lost." in last.observation.text
    assert all(r.observation.parse_error is None for r in results) and state.step_count == len(results)
    assert state.outcome == "loss" and state.board.count("X") == len(results)


def test_unreadable_answers_get_the_reason_and_the_game_goes_on(server: str) -> None:
    from connect4_env.integrations.openenv.client import Connect4TextClient
    from connect4_env.integrations.openenv.models import Connect4TextAction

    with Connect4TextClient(base_url=server).sync() as env:
        env.reset(seed=1)
        result = env.step(Connect4TextAction(message="the middle one, obviously"))
        assert result.reward == 0.0 and not result.done and result.observation.retries_left == 1
        assert "could not read a column" in result.observation.parse_error
        assert env.state().ply == 0
        assert env.step(Connect4TextAction(message="4")).observation.parsed_column == 3


def test_hostile_http_requests_get_json_errors_and_the_server_keeps_serving(server: str) -> None:
    code, session = http(f"{server}/sessions", "POST")
    assert code == 201
    base = f"{server}/sessions/{session['session_id']}"
    assert http(f"{base}/reset", "POST", b'{"seed": 3}')[0] == 200
    code, error = http(f"{base}/step", "POST", b'{"action": {"message": ')  # malformed JSON
    assert code == 422 and error["detail"][0]["type"] == "json_invalid"
    code, error = http(f"{server}/sessions/no-such-session/step", "POST", b'{"action": {"message": "4"}}')
    assert code == 404 and "unknown session 'no-such-session'" in error["detail"]
    code, error = http(f"{base}/step", "POST", b'{"action": {"message": "' + b"4" * (LIMIT + 1) + b'"}}')
    assert code == 413 and f"at most {LIMIT} bytes" in error["detail"]
    code, error = http(f"{base}/step", "POST", b'{"action": ' * 2_000)  # JSON nested past any parser's limit
    assert code == 400 and "nested too deep" in error["detail"]
    code, error = http(f"{base}/step", "POST", b'{"action": {"text": "4"}}')
    assert code == 422 and "message" in error["detail"]
    code, error = http(f"{server}/step", "POST", b'{"action": {"message": "4"}}')  # OpenEnv's stateless /step
    assert code == 409 and "/ws" in error["detail"]
    code, played = http(f"{base}/step", "POST", b'{"action": {"message": "column 4"}}')  # nothing was lost
    assert code == 200 and played["observation"]["parsed_column"] == 3
    assert http(f"{base}/state")[1]["ply"] == 2
    assert http(f"{base}", "DELETE")[0] == 200 and http(f"{base}/state")[0] == 404
    assert http(f"{server}/health") == (200, {"status": "healthy"})


def test_hostile_websocket_messages_get_an_error_frame_or_a_close(server: str) -> None:
    from websockets.sync import client as sync_client  # OpenEnv's own dependency

    ws_url = server.replace("http://", "ws://") + "/ws"
    with sync_client.connect(ws_url) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
        assert json.loads(ws.recv())["type"] == "observation"
        ws.send("{not json")
        error = json.loads(ws.recv())
        assert error["type"] == "error" and error["data"]["message"].startswith("Invalid JSON")
        ws.send(json.dumps({"type": "step", "data": {"message": 4}}))
        assert json.loads(ws.recv())["data"]["code"] == "VALIDATION_ERROR"
        ws.send(json.dumps({"type": "step", "data": {"message": "4"}}))  # the session survived
        assert json.loads(ws.recv())["data"]["observation"]["parsed_column"] == 3
    with sync_client.connect(ws_url + "?session_id=bogus") as ws:
        assert "Unknown session_id: bogus" in json.loads(ws.recv())["data"]["message"]
    with sync_client.connect(ws_url, max_size=None) as ws:
        ws.send("x" * (LIMIT + 1))  # over the limit: an error frame, and the session goes on
        assert f"at most {LIMIT}" in json.loads(ws.recv())["data"]["message"]
        ws.send("x" * (4 * LIMIT + 1))  # over four times the limit: not even read
        with pytest.raises(Exception) as closed:
            ws.recv()
        assert "1009" in str(closed.value)  # message too big
    assert http(f"{server}/health")[0] == 200


def test_two_clients_in_parallel_play_separate_sessions(server: str) -> None:
    outcomes: dict[int, Any] = {}

    def one(seed: int) -> None:
        outcomes[seed] = play_game(server, seed)

    threads = [threading.Thread(target=one, args=(seed,)) for seed in (10, 11)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    (results_a, state_a), (results_b, state_b) = outcomes[10], outcomes[11]
    assert state_a.episode_id != state_b.episode_id
    assert state_a.step_count == len(results_a) and state_b.step_count == len(results_b)


def test_the_session_cap_refuses_more_sessions_with_a_message() -> None:
    from fastapi.testclient import TestClient  # OpenEnv's own dependency

    from connect4_env.integrations.openenv.server import create_app

    with TestClient(create_app(max_sessions=2), base_url="http://127.0.0.1") as client:
        assert [client.post("/sessions").status_code for _ in range(2)] == [201, 201]
        refused = client.post("/sessions")
        assert refused.status_code == 503 and "at most 2" in refused.json()["detail"]


def test_openenvs_generic_client_plays_a_game(server: str) -> None:
    from openenv.core import GenericEnvClient

    with GenericEnvClient(base_url=server).sync() as env:
        result = env.reset(seed=2)
        steps = 0
        while not result.done and steps < 42:
            result = env.step({"message": str(result.observation["legal_columns"][0])})
            steps += 1
        assert result.done and result.observation["outcome"] in ("win", "loss", "draw")
        assert env.state()["step_count"] == steps


def test_the_command_allows_the_web_origins_it_is_given_and_no_other(server: str) -> None:
    assert handshake(server, headers={"Origin": "http://127.0.0.1:3000"})[0] == 101
    assert handshake(server, headers={"Origin": "http://127.0.0.1:3001"})[0] == 403
    assert handshake(server, headers={"Host": "evil.example"})[0] == 403
