"""The app of `connect4 serve-openenv` (the `openenv` extra): OpenEnv's (`create_fastapi_app`) for
[`Connect4TextEnvironment`][connect4_env.integrations.openenv.environment.Connect4TextEnvironment], the routes
that hold a game served here under the limits of `connect4_env.integrations.openenv.hardening`, and uvicorn
around it. Errors are JSON, `{"detail": ...}`; the docs page (integrations/text.md) has the limits.

- OpenEnv's `/reset`, `/step`, `/state`, `/health`, `/schema`, `/metadata`. OpenEnv makes an environment per
  request there, so `/step` has no game: it answers 409 and says where to play.
- `/ws` (OpenEnv's WebSocket protocol, served here): a game per connection; messages `reset` (its `data` the
  fields of `RESET_FIELDS`), `step` (`{"message": "4"}`), `state` and `close`; a bad frame gets an error frame
  (`{"type": "error", "data": {"message", "code"}}`) and the session goes on (close codes: the docs page).
- `/sessions` (served here, for clients without WebSockets): `POST /sessions` answers `{"session_id"}`, then
  `POST /sessions/{id}/reset` (body optional, `{"seed": 0, "dialect": "json"}`), `POST /sessions/{id}/step`
  (`{"action": {"message": "4"}}`), `GET /sessions/{id}/state`, `DELETE /sessions/{id}`; 404 for an unknown id.
- `/mcp` (served here instead of OpenEnv's, which opened a session per request past every limit): stateless
  JSON-RPC 2.0 over `POST` answering `initialize`, `ping` and `tools/list` (no tools), for `openenv validate`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import json
import logging
import math
import socket
from collections.abc import Callable, Collection
from typing import Annotated, Any

import uvicorn
from fastapi import Body, FastAPI, HTTPException, Request, WebSocket
from fastapi.responses import JSONResponse, Response
from openenv.core.env_server import ConcurrencyConfig, create_fastapi_app, serialize_observation
from pydantic import ValidationError
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocketDisconnect

from connect4_env.envs.dialects import MAX_ANSWER_LENGTH
from connect4_env.integrations.openenv import connections, environment, hardening
from connect4_env.integrations.openenv.environment import BadResetError, Connect4TextEnvironment, NoGameError
from connect4_env.integrations.openenv.hardening import FrameError, SessionLimitError, Sessions
from connect4_env.integrations.openenv.models import Connect4TextAction as Action
from connect4_env.integrations.openenv.models import Connect4TextObservation, Connect4TextState
from connect4_env.validation import check_int, check_name_list, check_number

__all__ = ["create_app", "build_server", "serve", "MAX_SESSIONS", "SESSION_TIMEOUT", "SESSION_RATE"]

logger = logging.getLogger(__name__)

MAX_SESSIONS = 64
SESSION_TIMEOUT = 600.0
SESSION_RATE = 20.0
"""New sessions a second: a client per game, each game many model calls long, needs far fewer."""
WS_HARD_LIMIT_FACTOR = 4
"""uvicorn closes a WebSocket whose message passes this many times `max_body_bytes` (1009) unread."""
_STATUS = ((hardening.UnknownSessionError, 404), (NoGameError, 409), (TypeError, 422), (ValueError, 422))
"""The status of each failure of a `/sessions` request; any other is the server's (500)."""
_MCP_HINT = "this server has no MCP tools: play Connect4Text over /ws (OpenEnv's clients) or /sessions"


def _openenv_app(factory: Callable[[], Connect4TextEnvironment], max_sessions: int) -> FastAPI:
    """OpenEnv's app, from either distribution (`openenv-core` takes no state model or name), less `/ws`, `/mcp`."""
    accepted = inspect.signature(create_fastapi_app).parameters
    optional = {"env_name": "connect4_text", "state_cls": Connect4TextState}
    app = create_fastapi_app(
        factory,
        Action,
        Connect4TextObservation,
        # OpenEnv's own session table stays empty: the routes that fill it are removed below
        concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions, session_timeout=None),
        **{name: value for name, value in optional.items() if name in accepted},
    )
    app.router.routes[:] = [
        route
        for route in app.router.routes
        if not isinstance(route, WebSocketRoute) and getattr(route, "path", None) != "/mcp"
    ]

    @app.exception_handler(NoGameError)
    async def no_game(request: Request, error: NoGameError) -> JSONResponse:
        return JSONResponse({"detail": str(error)}, status_code=409)

    @app.exception_handler(BadResetError)  # OpenEnv's stateless /reset with a bad argument
    async def bad_reset(request: Request, error: BadResetError) -> JSONResponse:
        return JSONResponse({"detail": str(error)}, status_code=422)

    return app


def _error(message: str, code: str, errors: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    data = {"message": message, "code": code}
    return {"type": "error", "data": {**data, "errors": errors} if errors else data}


def _action(data: dict[str, Any]) -> Action:
    try:
        return Action.model_validate(data)
    except ValidationError as error:
        problems = [
            {"loc": [str(part) for part in p["loc"]], "msg": p["msg"], "type": p["type"]}
            for p in error.errors()[:5]
        ]
        shown = "; ".join(f"{'.'.join(p['loc']) or 'action'}: {p['msg']}" for p in problems)
        message = f'Invalid action: {shown} (expected {{"message": "<answer>"}})'
        raise FrameError(message, "VALIDATION_ERROR", problems) from None


async def _answer(env: Connect4TextEnvironment, kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """The reply to one read frame other than `close`; a failure is an error frame, the game as it was."""
    try:
        if kind == "state":
            return {"type": "state", "data": env.state.model_dump()}
        if kind == "reset":
            observation = await asyncio.to_thread(env.reset, **data)
        else:
            observation = await asyncio.to_thread(env.step, _action(data))
        return {"type": "observation", "data": serialize_observation(observation)}
    except FrameError as bad:
        return _error(str(bad), bad.code, bad.errors)
    except (NoGameError, TypeError, ValueError) as error:
        return _error(str(error), "VALIDATION_ERROR" if kind == "reset" else "EXECUTION_ERROR")
    except Exception as error:  # the game failed (an opponent that cannot move): the client hears why
        logger.error("connect4 serve-openenv: a %s failed: %s: %s", kind, type(error).__name__, error)
        return _error(
            f"the server could not play this {kind}: {type(error).__name__}: {error}", "EXECUTION_ERROR"
        )


async def _send(websocket: WebSocket, payload: dict[str, Any], timeout: float) -> bool:
    """Send a frame within `timeout` seconds (else `asyncio.TimeoutError`); False when the client has gone."""
    try:
        await asyncio.wait_for(websocket.send_text(json.dumps(payload)), timeout)
    except (WebSocketDisconnect, OSError, RuntimeError):
        return False
    return True


async def _close(websocket: WebSocket, code: int, reason: str, frame: dict[str, Any] | None = None) -> None:
    """Close with `code` (after the error `frame`), unless the client has gone."""
    if frame is not None:
        with contextlib.suppress(asyncio.TimeoutError):
            if not await _send(websocket, frame, 10.0):
                return
    with contextlib.suppress(WebSocketDisconnect, OSError, RuntimeError):
        await websocket.close(code=code, reason=reason)


async def _serve_websocket(
    websocket: WebSocket, sessions: Sessions[Connect4TextEnvironment], max_bytes: int
) -> None:
    """Play one connection's session until the client closes it, leaves, or is idle for `sessions.timeout`."""
    await websocket.accept()
    timeout, requested = sessions.timeout, websocket.query_params.get("session_id")
    if requested is not None:
        refusal = f"Unknown session_id: {requested[:64]}: this server opens a new game for each connection; "
        frame = _error(refusal + "connect to /ws without session_id", "SESSION_ERROR")
        return await _close(websocket, 1008, "unknown session_id", frame)
    try:
        session = await asyncio.to_thread(sessions.open, "ws")
    except SessionLimitError as refused:
        frame = _error(str(refused), "CAPACITY_REACHED")
        return await _close(websocket, 1013, "too many sessions: try again later", frame)
    except Exception as error:  # the game could not be built
        logger.error("connect4 serve-openenv: a new game failed: %s: %s", type(error).__name__, error)
        frame = _error(f"the server could not start a game: {error}", "FACTORY_ERROR")
        return await _close(websocket, 1011, "the server could not start a game", frame)
    try:
        while True:
            try:
                message = await asyncio.wait_for(websocket.receive(), timeout)
            except asyncio.TimeoutError:
                return await _close(websocket, 1001, f"idle for {timeout:g} s: the session is closed")
            except (WebSocketDisconnect, OSError, RuntimeError):
                return
            if message["type"] == "websocket.disconnect":
                return
            try:
                kind, data = hardening.read_frame(message, max_bytes)
                if kind == "close":
                    return await _close(websocket, 1000, "closed by the client")
                reply = await _answer(session.game, kind, data)  # type: ignore[arg-type]
            except FrameError as bad:
                reply = _error(str(bad), bad.code)
            try:
                sent = await _send(websocket, reply, timeout)
            except asyncio.TimeoutError:
                logger.warning(
                    "connect4 serve-openenv: a client read no answer for %g s; its session is closed", timeout
                )
                sessions.close(session.session_id)  # now: closing the connection may wait a while longer
                return await _close(websocket, 1001, "the client stopped reading: the session is closed")
            if not sent:
                logger.warning(
                    "connect4 serve-openenv: a client left before its answer was sent; its session is closed"
                )
                return
    finally:
        sessions.close(session.session_id)


def _add_session_routes(app: FastAPI, sessions: Sessions[Connect4TextEnvironment]) -> None:
    def play(session_id: str, work: Callable[[Connect4TextEnvironment], Any]) -> Any:
        try:
            return sessions.run(session_id, work)
        except Exception as error:  # each failure as its status; a game that failed (500) is logged
            status = next((code for kind, code in _STATUS if isinstance(error, kind)), 500)
            detail = (
                f"unknown session {session_id[:64]!r}: create one with POST /sessions"
                if status == 404
                else str(error)
            )
            if status == 500:  # the game failed (an opponent that cannot move): the client hears why
                logger.error(
                    "connect4 serve-openenv: a session request failed: %s: %s", type(error).__name__, error
                )
                detail = f"the server could not play this: {type(error).__name__}: {error}"
            raise HTTPException(status, detail) from None

    @app.post("/sessions", status_code=201, tags=["Sessions"])
    def create_session() -> dict[str, str]:
        try:
            return {"session_id": sessions.open("http").session_id}
        except SessionLimitError as error:
            wait = (
                {}
                if error.retry_after is None
                else {"Retry-After": str(max(1, math.ceil(error.retry_after)))}
            )
            raise HTTPException(503 if error.retry_after is None else 429, str(error), headers=wait) from None

    @app.post("/sessions/{session_id}/reset", tags=["Sessions"])
    def reset_session(
        session_id: str, request: Annotated[dict[str, Any] | None, Body()] = None
    ) -> dict[str, Any]:
        return play(session_id, lambda env: serialize_observation(env.reset(**(request or {}))))

    @app.post("/sessions/{session_id}/step", tags=["Sessions"])
    def step_session(session_id: str, request: Annotated[dict[str, Any], Body()]) -> dict[str, Any]:
        try:
            action = Action.model_validate(request.get("action"))
        except ValidationError as error:
            raise HTTPException(422, f'expected {{"action": {{"message": "<answer>"}}}}: {error}') from None
        return play(session_id, lambda env: serialize_observation(env.step(action)))

    @app.get("/sessions/{session_id}/state", tags=["Sessions"])
    def session_state(session_id: str) -> dict[str, Any]:
        return play(session_id, lambda env: env.state.model_dump())

    @app.delete("/sessions/{session_id}", tags=["Sessions"])
    def delete_session(session_id: str) -> dict[str, str]:
        if not sessions.close(session_id):
            raise HTTPException(404, f"unknown session {session_id[:64]!r}")
        return {"deleted": session_id}


def _mcp_answer(message: Any) -> dict[str, Any] | None:
    """The stateless `/mcp`'s JSON-RPC answer to one message: None for a notification (no `id`)."""
    request_id = message.get("id") if isinstance(message, dict) else None
    results = {
        "initialize": {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "connect4_text", "version": "1"},
            "instructions": _MCP_HINT,
        },
        "ping": {},
        "tools/list": {"tools": []},
    }
    if not isinstance(message, dict):
        kind = "a batch" if isinstance(message, list) else type(message).__name__
        code, error = -32600, f"Invalid Request: expected one JSON-RPC 2.0 object, got {kind}"
    elif isinstance(request_id, bool) or not isinstance(request_id, (str, int, type(None))):
        code, error, request_id = -32600, "Invalid Request: id must be a string or an integer", None
    elif message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        code, error = -32600, 'Invalid Request: expected {"jsonrpc": "2.0", "method": "...", "id": ...}'
    elif "id" not in message:
        return None
    elif message["method"] in results:
        return {"jsonrpc": "2.0", "id": request_id, "result": results[message["method"]]}
    else:
        code, error = -32601, f"Method not found: {message['method'][:60]!r}; {_MCP_HINT}"
    return _rpc_error(request_id, code, error)


def _rpc_error(request_id: object, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def create_app(
    max_sessions: int = MAX_SESSIONS,
    session_timeout: float = SESSION_TIMEOUT,
    max_body_bytes: int | None = None,
    *,
    max_answer_length: int = MAX_ANSWER_LENGTH,
    session_rate: float = SESSION_RATE,
    allowed_hosts: Collection[str] | None = hardening.LOOPBACK_HOSTS,
    allowed_origins: Collection[str] = (),
    **env_kwargs: Any,
) -> Any:
    """The ASGI app of the module docstring: `HostCheck` around `BodyLimit` around the FastAPI app.

    Args:
        max_sessions: the most games at once, WebSocket and HTTP sessions together.
        session_timeout: seconds a session may go unused before it is dropped (an idle WebSocket is closed).
        max_body_bytes: the largest HTTP body and WebSocket message; None follows `max_answer_length`
            ([`body_limit`][connect4_env.integrations.openenv.hardening.body_limit]); one given must leave room
            for an answer of `max_answer_length` ASCII characters and 4096 bytes around it.
        max_answer_length: the longest answer read, 1..1,000,000 characters; a longer one is a rejected answer.
        session_rate: new sessions a second, on average (in bursts of up to `max_sessions` or `session_rate`).
        allowed_hosts: the host names answered (the `Host` header), or None for any.
        allowed_origins: web origins (`"http://127.0.0.1:3000"`) whose pages may use the server besides its own.
        **env_kwargs: each session's `Connect4TextEnvironment`'s (see `environment.session_kwargs`: one rubric for all).

    Raises:
        TypeError: an argument of the wrong type, or bad `env_kwargs` (an environment is built here to check).
        ValueError: an argument out of range (`max_body_bytes` too small for `max_answer_length`), or bad
            `env_kwargs`.
    """
    answer_length = check_int("max_answer_length", max_answer_length, 1, MAX_ANSWER_LENGTH)
    smallest, default = answer_length + hardening.FRAME_BYTES, hardening.body_limit(answer_length)
    if max_body_bytes is not None and check_int("max_body_bytes", max_body_bytes, minimum=1) < smallest:
        raise ValueError(
            f"max_body_bytes {max_body_bytes} is too small for answers of up to {answer_length} characters: at least "
            f"{smallest} (the answer and the JSON around it); lower max_answer_length, or leave max_body_bytes out "
            f"(it then follows the answers: {default})"
        )
    max_body_bytes = max_body_bytes or default
    limit = check_int("max_sessions", max_sessions, minimum=1)
    timeout = check_number("session_timeout", session_timeout, 0, above_minimum=True)
    rate = check_number("session_rate", session_rate, 0, above_minimum=True)
    hosts = None if allowed_hosts is None else check_name_list("allowed_hosts", allowed_hosts, "host names")
    origins = check_name_list("allowed_origins", allowed_origins, "web origins")
    for origin in origins:
        scheme, _, authority = origin.partition("://")
        if scheme not in ("http", "https") or hardening.split_authority(authority.rstrip("/"))[0] is None:
            raise ValueError(
                f"an allowed origin is scheme://host[:port] (http or https), got {origin!r:.100}"
            )
    env_kwargs["max_answer_length"] = answer_length
    env_kwargs = environment.session_kwargs(env_kwargs)  # bad arguments fail now, not in every session
    factory = functools.partial(Connect4TextEnvironment, **env_kwargs)
    app = _openenv_app(factory, limit)
    sessions = Sessions(factory, limit, timeout, rate)

    @app.websocket("/ws")
    async def play_over_websocket(websocket: WebSocket) -> None:
        await _serve_websocket(websocket, sessions, max_body_bytes)

    @app.post("/mcp", tags=["MCP"])
    async def mcp(request: Request) -> Response:
        try:
            answer = _mcp_answer(json.loads(await request.body()))  # BodyLimit bounded its size and nesting
        except ValueError:
            answer = _rpc_error(None, -32700, "Parse error: the body is not JSON")
        return Response(status_code=202) if answer is None else JSONResponse(answer)

    _add_session_routes(app, sessions)
    return hardening.HostCheck(hardening.BodyLimit(app, max_body_bytes), hosts, origins)


def build_server(
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    max_body_bytes: int | None = None,
    max_answer_length: int = MAX_ANSWER_LENGTH,
    request_timeout: float = hardening.REQUEST_TIMEOUT,
    max_connections: int | None = None,
    log_level: str = "warning",
    **app_kwargs: Any,
) -> tuple[uvicorn.Server, socket.socket, str]:
    """The uvicorn server for [`create_app`][connect4_env.integrations.openenv.server.create_app]
    (`app_kwargs`), its socket bound and listening (connections wait in the backlog until it runs), by
    [`bind_server`][connect4_env.integrations.openenv.connections.bind_server].

    Bound to a loopback address, the app answers only requests to a loopback name, `host` or that address;
    otherwise any `Host`. `port=0` picks a free port. Each request's headers and body must arrive within
    `request_timeout` seconds, and at most `max_connections` connections are open at once (by default the
    larger of 256 and twice `max_sessions`, within the process's limit of open files; see
    [`uvicorn_config`][connect4_env.integrations.openenv.connections.uvicorn_config]).

    Returns:
        `(server, sock, url)`: run it with `server.run(sockets=[sock])` (stop it with `server.should_exit =
        True`), then close `sock`; `url` is `http://host:port` with the port bound.

    Raises:
        OSError: the address cannot be bound (a host name that does not resolve is named).
        TypeError: `host` is not a str; bad app or connection arguments.
        ValueError: bad app or connection arguments (`max_connections` beyond the limit of open files).
    """

    def config(allowed_hosts: tuple[str, ...] | None) -> uvicorn.Config:
        app = create_app(
            max_body_bytes=max_body_bytes,
            max_answer_length=max_answer_length,
            allowed_hosts=allowed_hosts,
            **app_kwargs,
        )
        body_bytes = max_body_bytes or hardening.body_limit(max_answer_length)  # as create_app checked them
        return connections.uvicorn_config(
            app,
            request_timeout=request_timeout,
            max_connections=max_connections,
            max_sessions=app_kwargs.get("max_sessions", MAX_SESSIONS),
            log_level=log_level,
            ws_max_size=WS_HARD_LIMIT_FACTOR * body_bytes,
        )

    return connections.bind_server(host, port, config)


def serve(
    host: str = "127.0.0.1", port: int = 8000, *, on_ready: Callable[[str], None] | None = None, **kwargs: Any
) -> None:
    """Serve [`create_app`][connect4_env.integrations.openenv.server.create_app] until interrupted (Ctrl-C or
    SIGTERM stop it cleanly), with [`build_server`][connect4_env.integrations.openenv.server.build_server]'s
    arguments; `on_ready(url)` is called once the socket is bound.

    Raises:
        OSError: the address cannot be bound.
        TypeError: `host` is not a str; bad app arguments.
        ValueError: bad app arguments.
    """
    connections.run_server(*build_server(host, port, **kwargs), on_ready=on_ready)
