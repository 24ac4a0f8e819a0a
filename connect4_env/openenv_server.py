"""An OpenEnv-compatible HTTP server for ``Connect4Text-v0`` (``connect4 serve-openenv``; the ``openenv`` extra).

The app is OpenEnv's own (``openenv.core.env_server.create_fastapi_app``), so OpenEnv's clients and TRL's
rollout helpers talk to it as to any OpenEnv environment:

- ``/ws``: a WebSocket session per connection with its own game (what ``EnvClient`` / ``Connect4TextClient``
  use): messages ``reset`` / ``step`` / ``state`` / ``close``; errors come back as ``{"type": "error"}`` frames
  with a message, and the session goes on. ``/ws?session_id=...`` naming no session is refused with a message.
- ``/reset``, ``/step``, ``/state``, ``/health``, ``/schema``, ``/metadata``: OpenEnv's HTTP routes. OpenEnv
  makes a new environment for each of these requests, so ``/step`` there has no game: it answers 409 and says
  where to play.
- ``/sessions`` (added here): stateful HTTP for clients without WebSockets. ``POST /sessions`` creates a game
  and answers ``{"session_id"}``; ``POST /sessions/{id}/reset`` (body ``{"seed": 0}``, optional),
  ``POST /sessions/{id}/step`` (body ``{"action": {"message": "4"}}``), ``GET /sessions/{id}/state`` and
  ``DELETE /sessions/{id}``. An unknown id answers 404.

Limits, so that no client exhausts the server: every HTTP body is at most ``max_body_bytes`` (413 beyond,
read no further) and every WebSocket message too (the connection is closed with code 1009); at most
``max_sessions`` WebSocket sessions and ``max_sessions`` HTTP sessions at once (then 503, or an error frame),
idle ones dropped after ``session_timeout`` seconds. Errors are JSON: ``{"detail": "<what was wrong>"}``.
"""

from __future__ import annotations

import functools
import json
import socket
import threading
import time
import uuid
from collections.abc import Callable
from typing import Annotated, Any

import uvicorn
from fastapi import Body, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from openenv.core.env_server import ConcurrencyConfig, create_fastapi_app, serialize_observation
from pydantic import ValidationError

from connect4_env.openenv_env import (
    Connect4TextAction,
    Connect4TextEnvironment,
    Connect4TextObservation,
    Connect4TextState,
    NoGameError,
)

__all__ = ["create_app", "serve", "BodyLimit", "MAX_BODY_BYTES", "MAX_SESSIONS", "SESSION_TIMEOUT"]

MAX_BODY_BYTES = 64 * 1024  # an answer is at most 4096 characters; the rest is JSON around it
MAX_SESSIONS = 64
SESSION_TIMEOUT = 600.0


# a refused body is read and dropped up to this size, so that the client can read the 413; a longer one is cut off
DRAIN_BYTES = 1 << 20


class BodyLimit:
    """ASGI middleware: an HTTP body longer than ``limit`` bytes is answered 413 without being kept (up to
    ``DRAIN_BYTES`` of it is read and dropped first, so the client gets the answer)."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(
        self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]
    ) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            if declared.isdigit() and int(declared) <= DRAIN_BYTES:
                await self._drain(receive)
            await self._refuse(send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:  # read the body here (at most limit bytes), then hand it on as one message
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            size += len(message.get("body", b""))
            if size > self.limit:
                if message.get("more_body", False):
                    await self._drain(receive, size)
                await self._refuse(send)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    @staticmethod
    async def _drain(receive: Callable[..., Any], size: int = 0) -> None:
        """Read and drop the rest of a refused body, up to ``DRAIN_BYTES`` in all: a server that closes the
        connection with a body still unread resets it, and the client never reads the 413."""
        while size <= DRAIN_BYTES:
            message = await receive()
            if message["type"] != "http.request":
                return
            size += len(message.get("body", b""))
            if not message.get("more_body", False):
                return

    async def _refuse(self, send: Callable[..., Any]) -> None:
        detail = f"request body too large: at most {self.limit} bytes"
        payload = json.dumps({"detail": detail}).encode()
        headers = [(b"content-type", b"application/json"), (b"connection", b"close")]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": payload})


class _Sessions:
    """The HTTP sessions: id -> (environment, lock, last use), at most ``limit``, idle ones dropped."""

    def __init__(self, factory: Callable[[], Connect4TextEnvironment], limit: int, timeout: float) -> None:
        self.factory = factory
        self.limit = limit
        self.timeout = timeout
        self.lock = threading.Lock()
        self.games: dict[str, tuple[Connect4TextEnvironment, threading.Lock, list[float]]] = {}

    def create(self) -> str:
        with self.lock:
            now = time.monotonic()
            for key in [k for k, (_, _, used) in self.games.items() if now - used[0] > self.timeout]:
                self.games.pop(key)[0].close()
            if len(self.games) >= self.limit:
                raise HTTPException(503, f"too many sessions: at most {self.limit}; DELETE one or wait")
            session_id = uuid.uuid4().hex
            self.games[session_id] = (self.factory(), threading.Lock(), [now])
        return session_id

    def run(self, session_id: str, work: Callable[[Connect4TextEnvironment], Any]) -> Any:
        with self.lock:
            entry = self.games.get(session_id)
        if entry is None:
            raise HTTPException(404, f"unknown session {session_id[:64]!r}: create one with POST /sessions")
        env, lock, used = entry
        with lock:
            used[0] = time.monotonic()
            return work(env)

    def delete(self, session_id: str) -> None:
        with self.lock:
            entry = self.games.pop(session_id, None)
        if entry is None:
            raise HTTPException(404, f"unknown session {session_id[:64]!r}")
        entry[0].close()


def _add_session_routes(app: FastAPI, sessions: _Sessions) -> None:
    def play(env: Connect4TextEnvironment, work: Callable[[], Connect4TextObservation]) -> dict[str, Any]:
        try:
            return serialize_observation(work())
        except (NoGameError, RuntimeError) as error:
            raise HTTPException(409, str(error)) from error
        except (TypeError, ValueError) as error:
            raise HTTPException(422, str(error)) from error

    @app.post("/sessions", status_code=201, tags=["Sessions"])
    def create_session() -> dict[str, str]:
        return {"session_id": sessions.create()}

    @app.post("/sessions/{session_id}/reset", tags=["Sessions"])
    def reset_session(
        session_id: str, request: Annotated[dict[str, Any] | None, Body()] = None
    ) -> dict[str, Any]:
        seed = (request or {}).get("seed")
        if seed is not None and (type(seed) is not int or seed < 0):
            raise HTTPException(422, f"seed must be a non-negative integer or null, got {seed!r}")
        return sessions.run(session_id, lambda env: play(env, lambda: env.reset(seed=seed)))

    @app.post("/sessions/{session_id}/step", tags=["Sessions"])
    def step_session(session_id: str, request: Annotated[dict[str, Any], Body()]) -> dict[str, Any]:
        try:
            action = Connect4TextAction(**request.get("action", {}))
        except (ValidationError, TypeError) as error:
            raise HTTPException(422, f'expected {{"action": {{"message": "<answer>"}}}}: {error}') from error
        return sessions.run(session_id, lambda env: play(env, lambda: env.step(action)))

    @app.get("/sessions/{session_id}/state", tags=["Sessions"])
    def session_state(session_id: str) -> dict[str, Any]:
        return sessions.run(session_id, lambda env: env.state.model_dump())

    @app.delete("/sessions/{session_id}", tags=["Sessions"])
    def delete_session(session_id: str) -> dict[str, str]:
        sessions.delete(session_id)
        return {"deleted": session_id}


def create_app(
    max_sessions: int = MAX_SESSIONS,
    session_timeout: float = SESSION_TIMEOUT,
    max_body_bytes: int = MAX_BODY_BYTES,
    **env_kwargs: Any,
) -> Any:
    """The ASGI app: OpenEnv's FastAPI app for :class:`Connect4TextEnvironment`, the ``/sessions`` routes and
    the body limit (see the module docstring). ``env_kwargs`` go to ``Connect4Text-v0`` (``opponent``,
    ``invalid_answer``, ``max_retries``, ``agent_first``, the board size).

    Returns:
        The app wrapped in :class:`BodyLimit`, for ``uvicorn.run`` (its FastAPI app is ``.app``).

    Raises:
        TypeError, ValueError: bad ``env_kwargs`` (an environment is built here once to check them).
    """
    Connect4TextEnvironment(**env_kwargs).close()  # bad arguments fail now, not in every session
    factory = functools.partial(Connect4TextEnvironment, **env_kwargs)
    app = create_fastapi_app(
        factory,
        Connect4TextAction,
        Connect4TextObservation,
        concurrency_config=ConcurrencyConfig(
            max_concurrent_envs=max_sessions, session_timeout=session_timeout
        ),
        env_name="connect4_text",
        state_cls=Connect4TextState,
    )

    @app.exception_handler(NoGameError)
    async def no_game(request: Request, error: NoGameError) -> JSONResponse:
        return JSONResponse({"detail": str(error)}, status_code=409)

    _add_session_routes(app, _Sessions(factory, max_sessions, session_timeout))
    return BodyLimit(app, max_body_bytes)


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    max_body_bytes: int = MAX_BODY_BYTES,
    on_ready: Callable[[str], None] | None = None,
    log_level: str = "warning",
    **app_kwargs: Any,
) -> None:
    """Serve :func:`create_app` with uvicorn until interrupted (Ctrl-C or SIGTERM stop it cleanly).

    ``port=0`` picks a free port; ``on_ready(url)`` is called with the address once the socket is bound.

    Raises:
        OSError: the address cannot be bound (a host name that does not resolve is named). TypeError: ``host``
            is not a str; bad app arguments. ValueError: bad app arguments.
    """
    if not isinstance(host, str):
        raise TypeError(f"host must be a str such as '127.0.0.1', got {host!r:.80} ({type(host).__name__})")
    app = create_app(max_body_bytes=max_body_bytes, **app_kwargs)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        try:
            sock.bind((host, port))
        except socket.gaierror as error:  # a name the resolver does not know: say which
            raise OSError(
                f"cannot listen on host {host!r}: {error.strerror} (name a local address such as 127.0.0.1, or "
                "0.0.0.0 for every interface)"
            ) from None
        sock.listen(128)  # connections made from now on wait in the backlog until uvicorn accepts them
        bound_port = sock.getsockname()[1]
        config = uvicorn.Config(app, log_level=log_level, ws_max_size=max_body_bytes, lifespan="on")
        server = uvicorn.Server(config)
        shown = f"[{host}]" if ":" in host else host
        if on_ready is not None:
            on_ready(f"http://{shown}:{bound_port}")
        server.run(sockets=[sock])
    finally:
        sock.close()
