"""`connect4 serve-openenv` against clients that hold connections without playing, over real sockets on localhost:
a connection that sends nothing, part of its headers or part of its body is answered 408 (or closed) after the
request timeout; at most `max_connections` are open at once (one more is answered 503), so that the server
never reaches its file-descriptor limit through its clients, and says so in one log line; a WebSocket client that
stops reading loses its session at the session timeout; `openenv validate` passes."""

from __future__ import annotations

import base64
import json
import logging
import os
import socket
import subprocess
import sys
import time
from urllib.parse import urlsplit

import pytest
from helpers.extras import needs
from helpers.openenv_servers import http, running_server, stop

pytestmark = needs("openenv")

WAIT = 30.0  # the most any client here waits for the server to act: far beyond the 1 s timeouts it is given


def _connect(url: str, timeout: float = WAIT) -> socket.socket:
    parts = urlsplit(url)
    return socket.create_connection((parts.hostname, parts.port), timeout=timeout)


def _read_to_close(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (socket.timeout if it never does)."""
    answer = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return answer
        answer += chunk


def _status(answer: bytes) -> int | None:
    return int(answer.split(b" ")[1]) if answer.startswith(b"HTTP/1.1 ") else None


def test_connections_that_send_nothing_or_part_of_a_request_are_closed_at_the_request_timeout() -> None:
    """uvicorn timed out none of these: each held its connection (and its file) for as long as the client
    liked."""
    # 3 s: the clients that send in time do so at once, with room for this process to stall between two lines
    with running_server(request_timeout=3) as url:
        host = urlsplit(url).netloc
        silent = _connect(url)
        partial_headers = _connect(url)
        partial_headers.sendall(f"GET /health HTTP/1.1\r\nHost: {host}\r\nX-Slow: ".encode())
        partial_body = _connect(url)
        partial_body.sendall(
            f"POST /sessions HTTP/1.1\r\nHost: {host}\r\nContent-Length: 100\r\n\r\n{{".encode()
        )
        kept_alive = _connect(url)  # one request answered, then the next one's headers stall
        kept_alive.sendall(f"GET /health HTTP/1.1\r\nHost: {host}\r\n\r\nGET /health HTTP/1.1\r\nHo".encode())
        for sock in (silent, partial_headers, partial_body, kept_alive):
            with sock:
                answer = _read_to_close(sock)
                if sock is kept_alive:
                    assert _status(answer) == 200 and answer.count(b"HTTP/1.1 408 Request Timeout") == 1
                elif sock is partial_body:  # a request under way: closed without an answer of its own
                    assert b"408" not in answer
                else:
                    assert _status(answer) == 408 and b"did not arrive within 3 s" in answer
        assert http(f"{url}/health")[0] == 200  # a client that sends its request in time is served
        slow_but_in_time = _connect(url)
        with slow_but_in_time:
            slow_but_in_time.sendall(
                f"GET /health HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n".encode()
            )
            slow_but_in_time.sendall(b"\r\n")
            assert _status(_read_to_close(slow_but_in_time)) == 200


def test_connections_past_the_cap_are_answered_503_and_a_freed_place_serves_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with (
        caplog.at_level(logging.WARNING, "connect4_env.integrations.openenv.connections"),
        running_server(max_connections=3) as url,
    ):
        idle = [_connect(url) for _ in range(3)]
        assert http(f"{url}/health")[0] == 503  # the places are taken
        for _ in range(5):
            with _connect(url) as refused:
                answer = _read_to_close(refused)
                assert _status(answer) == 503 and b"at most 3 at once" in answer
        for sock in idle:
            sock.close()
        for _ in range(100):  # until the server has seen the closes: bounded by a count, not a time
            code = http(f"{url}/health")[0]
            if code == 200:
                break
        assert code == 200
    reports = [r for r in caplog.records if "at most 3 connections at once" in r.getMessage()]
    assert len(reports) == 1  # one line, not one per refusal


def test_the_connection_cap_fits_the_file_limit_and_an_explicit_one_that_cannot_is_refused() -> None:
    from connect4_env.integrations.openenv.connections import RESERVED_FILES, connection_limit

    assert connection_limit(None, 64, None) == 256
    assert connection_limit(None, 500, None) == 1000
    assert connection_limit(None, 64, 200) == 200 - RESERVED_FILES
    assert connection_limit(10, 64, 200) == 10
    with pytest.raises(ValueError, match="limit of 200 open files"):
        connection_limit(500, 64, 200)
    with pytest.raises(ValueError, match="at least 1"):
        connection_limit(0, 64, None)


@pytest.mark.parametrize(
    ("timeout", "error"),
    [
        (0, ValueError),
        (3600.5, ValueError),
        (float("inf"), ValueError),
        (float("nan"), ValueError),
        ("30", TypeError),
    ],
)
def test_a_request_timeout_past_an_hour_or_not_above_zero_is_refused(timeout: object, error: type) -> None:
    """A connection that sends nothing holds a file for the whole request timeout: it had no ceiling."""
    from connect4_env.integrations.openenv.connections import uvicorn_config

    with pytest.raises(error, match="request_timeout"):
        uvicorn_config(object(), request_timeout=timeout, max_connections=None, max_sessions=8)  # type: ignore[arg-type]
    assert (
        uvicorn_config(object(), request_timeout=3600, max_connections=None, max_sessions=8).http is not None
    )


def test_a_server_out_of_files_says_so_once_a_minute_not_every_second() -> None:
    from connect4_env.integrations.openenv.connections import OncePerInterval, QuietLog

    now = [0.0]
    flood = QuietLog(1024, OncePerInterval(60.0, clock=lambda: now[0]))

    def report() -> logging.LogRecord:
        record = logging.LogRecord(
            "asyncio",
            logging.ERROR,
            __file__,
            1,
            "socket.accept() out of system resource\nsocket: <...>",
            (),
            None,
        )
        record.exc_info = (OSError, OSError(24, "Too many open files"), None)
        return record

    shown = []
    for second in range(130):  # asyncio retries, and reports, every second
        now[0] = float(second)
        record = report()
        if flood.filter(record):
            shown.append(record)
    assert len(shown) == 3  # at 0, 60 and 120 s
    assert all(
        r.exc_info is None and "out of file descriptors (the limit is 1024)" in r.getMessage() for r in shown
    )
    assert "59 such reports left out" in shown[1].getMessage()
    retry = logging.LogRecord(
        "asyncio",
        logging.ERROR,
        __file__,
        1,
        "Exception in callback BaseSelectorEventLoop._start_serving(...)",
        (),
        None,
    )
    retry.exc_info = (ValueError, ValueError("Invalid file descriptor: -1"), None)
    assert not flood.filter(retry)  # asyncio's retry of accept() firing after the server closed its socket
    other = logging.LogRecord("asyncio", logging.ERROR, __file__, 1, "something else", (), None)
    assert flood.filter(other) and other.getMessage() == "something else"


SERVER_OUT_OF_FILES = """
import resource, sys, threading
from connect4_env.integrations.openenv.server import build_server
server, sock, url = build_server("127.0.0.1", 0)
# after the server was built: its cap is far above what is left, as when other files use up the limit
resource.setrlimit(resource.RLIMIT_NOFILE, (48, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
print(url, flush=True)
server.run(sockets=[sock])
"""


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_NOFILE is POSIX")
def test_a_server_at_its_file_limit_logs_one_line_and_serves_again_once_files_free() -> None:
    """At the limit, asyncio logged a traceback a second for as long as it lasted."""
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER_OUT_OF_FILES], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        url = process.stdout.readline().strip() if process.stdout else ""
        assert url.startswith("http://127.0.0.1:"), process.communicate(timeout=30)[1]
        held = []
        for _ in range(60):  # past the limit: the rest wait in the backlog
            held.append(_connect(url))
        waiting = held[-1]
        waiting.sendall(
            f"GET /health HTTP/1.1\r\nHost: {urlsplit(url).netloc}\r\nConnection: close\r\n\r\n".encode()
        )
        time.sleep(3.5)  # asyncio retries accept() every second: three more reports on the old server
        for sock in held[:-1]:  # files free: the waiting client is accepted and served
            sock.close()
        with waiting:
            assert _status(_read_to_close(waiting)) == 200
    finally:
        err = stop(process)
    assert err.count("out of file descriptors") == 1, err
    assert "Traceback" not in err and "socket.accept() out of system resource" not in err


def _ws_frame(text: str) -> bytes:
    payload = text.encode()
    mask = os.urandom(4)
    length = len(payload)
    head = bytes([0x81]) + (
        bytes([0x80 | length]) if length < 126 else bytes([0x80 | 126]) + length.to_bytes(2, "big")
    )
    return head + mask + bytes(byte ^ mask[i % 4] for i, byte in enumerate(payload))


def test_a_websocket_client_that_stops_reading_loses_its_session_at_the_timeout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Its answers filled the buffers and the server waited to send the next one for ever, its game kept."""
    with running_server(max_sessions=1, session_timeout=1) as url:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
        parts = urlsplit(url)
        sock.settimeout(WAIT)
        sock.connect((parts.hostname, parts.port))
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall(
            f"GET /ws HTTP/1.1\r\nHost: {parts.netloc}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            head += sock.recv(1)
        assert _status(head) == 101
        sock.settimeout(2)
        reset = _ws_frame(json.dumps({"type": "reset", "data": {"seed": 0}}))
        try:
            for _ in range(100_000):  # answers it never reads: megabytes, past every buffer
                sock.sendall(reset)
        except TimeoutError:  # the server stopped reading too
            pass
        for _ in range(600):  # the session's place frees once its 1 s timeout has passed (60 s at most here)
            code = http(f"{url}/sessions", "POST")[0]
            if code == 201:
                break
            time.sleep(0.1)
        assert code == 201
        sock.close()


def test_openenv_validate_passes_every_check() -> None:
    """It exited 1: its required `mcp_endpoint` check got 404 once OpenEnv's /mcp (and its sessions) were gone."""
    cli = os.path.join(os.path.dirname(sys.executable), "openenv")
    if not os.path.exists(cli):
        pytest.skip("this OpenEnv distribution has no openenv command")
    with running_server() as url:
        done = subprocess.run(
            [cli, "validate", "--url", url, "--json"], capture_output=True, text=True, timeout=120
        )
    report = json.loads(done.stdout)
    failed = [c["id"] for c in report["criteria"] if not c["passed"]]
    assert done.returncode == 0 and report["passed"] and not failed, (failed, done.stderr[-2000:])
    assert "mcp_endpoint" in {c["id"] for c in report["criteria"]}


def test_the_mcp_endpoint_serves_the_mcp_client_and_opens_no_session() -> None:
    pytest.importorskip("mcp")
    import asyncio

    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client  # mcp 1.x yields 3 streams, 2.x two

    async def talk(url: str) -> tuple[str, list[object]]:
        async with streamable_http_client(url + "/mcp") as streams, ClientSession(*streams[:2]) as session:
            started = await session.initialize()
            tools = (await session.list_tools()).tools
            await session.send_ping()
            return started.serverInfo.name, tools

    with running_server(max_sessions=1) as url:
        assert asyncio.run(talk(url)) == ("connect4_text", [])
        for body, code in [
            (b"{}", -32600),
            (b"not json", -32700),
            (b'[{"jsonrpc": "2.0", "method": "ping", "id": 1}]', -32600),
            (b'{"jsonrpc": "2.0", "method": "tools/call", "id": 2, "params": {"name": "x"}}', -32601),
            (b'{"jsonrpc": "2.0", "method": "ping", "id": {"a": 1}}', -32600),
        ]:
            status, answer, _ = http(f"{url}/mcp", "POST", body)
            assert status == 200 and answer["jsonrpc"] == "2.0" and answer["error"]["code"] == code, body
        assert (
            http(f"{url}/mcp", "POST", b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')[0] == 202
        )
        assert http(f"{url}/sessions", "POST")[0] == 201  # the one place was never taken
        assert http(f"{url}/mcp", "POST", b"{}", {"Origin": "http://evil.example"})[0] == 403
