"""Helpers for the OpenEnv server tests: the server in a thread of the test's process or `connect4 serve-openenv`
in a child process (localhost, a free port, real sockets either way), plain HTTP requests with any headers, and
a raw WebSocket handshake whose headers the test chooses."""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit


@contextmanager
def command_server(*options: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`connect4 serve-openenv --port 0 OPTIONS` in a child process: its URL and the process (whose stderr a
    test reads once the server is stopped, with `stop`). Stopped through its own process object."""
    process = subprocess.Popen(
        [sys.executable, "-m", "connect4_agents.commands", "serve-openenv", "--port", "0", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline() if process.stdout else ""
        if "serving Connect4Text-v0 over OpenEnv at http://127.0.0.1:" not in line:
            process.kill()
            raise AssertionError(f"the server did not start: {line!r} {process.communicate(timeout=30)[1]}")
        yield line.split(" at ")[1].strip(), process
    finally:
        stop(process)


@contextmanager
def running_server(**options: Any) -> Iterator[str]:
    """The server of `connect4_env.integrations.openenv.server.build_server` (`options`) on 127.0.0.1, a free port, run by a
    thread of this process; its URL. Stopped as uvicorn is, by `should_exit`."""
    from connect4_env.integrations.openenv.server import build_server

    server, sock, url = build_server("127.0.0.1", 0, **options)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()  # the socket listens already: a client that connects first waits in the backlog
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def stop(process: subprocess.Popen[str]) -> str:
    """Stop the server (SIGTERM, then SIGKILL after 20 s) and return what it wrote to stderr."""
    if process.poll() is None:
        process.terminate()
    try:
        _, err = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
    except ValueError:  # read already
        err = ""
    return err or ""


def http(
    url: str, method: str = "GET", body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, Any, Any]:
    """`(status, JSON body, headers)` of one request (any status)."""
    request = urllib.request.Request(
        url, data=body, method=method, headers={"content-type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null"), response.headers
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null"), error.headers


def handshake(url: str, path: str = "/ws", headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    """A WebSocket opening handshake sent by hand, with `headers` (`Host` replaced if given): the HTTP status
    of the answer (101: accepted) and the body of a refusal. The connection is closed afterwards."""
    parts = urlsplit(url)
    fields = {
        "Host": parts.netloc,
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode(),
        "Sec-WebSocket-Version": "13",
        **(headers or {}),
    }
    request = f"GET {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields.items()) + "\r\n"
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(request.encode("latin-1"))
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        status = int(head.split(b" ")[1])
        length = next(
            (
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            ),
            0,
        )
        while status != 101 and len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
        return status, body
