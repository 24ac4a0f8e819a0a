"""An OpenEnv-compatible HTTP server for `Connect4Text-v0` (`connect4 serve-openenv`; the `openenv` extra).

It works with both distributions of OpenEnv's package (`openenv` and `openenv-core`, the same import name).
The app is OpenEnv's (`openenv.core.env_server.create_fastapi_app`) with its session routes served here, so
OpenEnv's clients and TRL's rollout helpers talk to it as to any OpenEnv environment:

- `/ws`: a WebSocket session per connection with its own game (what `EnvClient` / `Connect4TextClient` use):
  messages `reset` / `step` / `state` / `close`; whatever a frame holds, a bad one gets an error frame
  (`{"type": "error"}`) and the session goes on (`connect4_env.integrations.openenv.websocket` has the protocol and the close
  codes).
- `/reset`, `/step`, `/state`, `/health`, `/schema`, `/metadata`: OpenEnv's HTTP routes. OpenEnv makes a new
  environment for each of these requests, so `/step` there has no game: it answers 409 and says where to play.
- `/sessions` (added here): stateful HTTP for clients without WebSockets. `POST /sessions` creates a game and
  answers `{"session_id"}`; `POST /sessions/{id}/reset` (body optional: `{"seed": 0, "dialect": "json"}`, the
  fields of `connect4_env.integrations.openenv.environment.RESET_FIELDS`),
  `POST /sessions/{id}/step` (body `{"action": {"message": "4"}}`), `GET /sessions/{id}/state` and
  `DELETE /sessions/{id}`. An unknown id answers 404.
- `/mcp` (served here instead of OpenEnv's): a stateless MCP endpoint, JSON-RPC 2.0 over `POST`, that answers
  `initialize`, `ping` and `tools/list` (no tools: the game is played over `/ws` or `/sessions`) and an error
  for anything else. It opens no session and builds no game: OpenEnv's own MCP routes opened a session per
  request and escaped the limits below, which is why they are not served. `openenv validate --url` checks it.

Limits, so that no client exhausts the server:

- an answer is at most `max_answer_length` characters (1,000,000 by default and at most): a longer one is a
  rejected answer under the session's dialect rule (retried, or lost), with the reason in `parse_error`;
- at most `max_sessions` games at once, WebSocket and HTTP sessions together (then 503, or an error frame and
  close code 1013), and new ones at most `session_rate` a second on average (429 with `Retry-After`);
- a session unused for `session_timeout` seconds is dropped; an idle WebSocket is closed (code 1001);
- every HTTP body is at most `max_body_bytes` (413, read no further) and every WebSocket message too (an error
  frame; past 4 times that, uvicorn closes the connection with code 1009); JSON nests at most 32 levels. By
  default `max_body_bytes` follows from `max_answer_length`
  ([`body_limit`][connect4_env.integrations.openenv.guards.body_limit]: 12 bytes a character, as JSON may escape
  it, and 4096 around it), so any answer under the cap arrives and is read;
- on a loopback address only requests to a loopback name (`Host`) are answered, and a request from another
  web page (an `Origin` other than the server's own or `allowed_origins`) is refused: 403. So a web page the
  user has open can neither play nor fill the server, not even by rebinding its DNS name to 127.0.0.1.

Errors are JSON: `{"detail": "<what was wrong>"}`.
"""

from __future__ import annotations

import functools
import inspect
import ipaddress
import logging
import math
import socket
from collections.abc import Callable, Collection
from typing import Annotated, Any

import uvicorn
from fastapi import Body, FastAPI, HTTPException, Request, WebSocket
from fastapi.responses import JSONResponse
from openenv.core.env_server import ConcurrencyConfig, create_fastapi_app, serialize_observation
from pydantic import ValidationError
from starlette.routing import WebSocketRoute

from connect4_env.envs.text_env import MAX_ANSWER_LIMIT
from connect4_env.integrations.openenv.connections import (
    REQUEST_TIMEOUT,
    connection_limit,
    file_limit,
    guarded_protocol,
    install_log_filters,
)
from connect4_env.integrations.openenv.environment import (
    RESET_FIELDS,
    BadResetError,
    Connect4TextAction,
    Connect4TextEnvironment,
    Connect4TextObservation,
    Connect4TextState,
    NoGameError,
)
from connect4_env.integrations.openenv.guards import (
    LOOPBACK_HOSTS,
    MAX_ANSWER_LENGTH,
    BodyLimit,
    HostCheck,
    body_limit,
    smallest_body_limit,
    split_authority,
)
from connect4_env.integrations.openenv.mcp_endpoint import add_mcp_route
from connect4_env.integrations.openenv.sessions import SessionLimitError, Sessions, UnknownSessionError
from connect4_env.integrations.openenv.websocket import serve_websocket
from connect4_env.validation import check_int, check_number

__all__ = [
    "create_app",
    "build_server",
    "serve",
    "MAX_BODY_BYTES",
    "MAX_SESSIONS",
    "SESSION_TIMEOUT",
    "SESSION_RATE",
]

logger = logging.getLogger(__name__)

MAX_BODY_BYTES = body_limit(MAX_ANSWER_LENGTH)  # any answer of MAX_ANSWER_LENGTH characters, however escaped
MAX_SESSIONS = 64
SESSION_TIMEOUT = 600.0
# new sessions a second: a client per game, each game many model calls long, needs far fewer
SESSION_RATE = 20.0
# uvicorn closes a WebSocket whose message passes this many times max_body_bytes (code 1009) without reading
# it; a message between the two gets an error frame
WS_HARD_LIMIT_FACTOR = 4


def _openenv_app(factory: Callable[[], Connect4TextEnvironment], max_sessions: int) -> FastAPI:
    """OpenEnv's FastAPI app for our environment, without its WebSocket and MCP routes (served here or not at
    all), from either distribution: `openenv` takes the state model and a name, `openenv-core` does not.
    """
    accepted = inspect.signature(create_fastapi_app).parameters
    optional = {"env_name": "connect4_text", "state_cls": Connect4TextState}
    app = create_fastapi_app(
        factory,
        Connect4TextAction,
        Connect4TextObservation,
        # OpenEnv's own session table stays empty: its routes that fill it are removed below
        concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions, session_timeout=None),
        **{name: value for name, value in optional.items() if name in accepted},
    )
    app.router.routes[:] = [
        route
        for route in app.router.routes
        if not isinstance(route, WebSocketRoute) and getattr(route, "path", None) != "/mcp"
    ]
    return app


def _session_error(error: SessionLimitError) -> HTTPException:
    if error.retry_after is None:
        return HTTPException(503, str(error))
    return HTTPException(429, str(error), headers={"Retry-After": str(max(1, math.ceil(error.retry_after)))})


def _add_session_routes(app: FastAPI, sessions: Sessions[Connect4TextEnvironment]) -> None:
    def run(session_id: str, work: Callable[[Connect4TextEnvironment], Any]) -> Any:
        try:
            return sessions.run(session_id, work)
        except UnknownSessionError:
            raise HTTPException(
                404, f"unknown session {session_id[:64]!r}: create one with POST /sessions"
            ) from None

    def play(work: Callable[[], Connect4TextObservation]) -> dict[str, Any]:
        try:
            return serialize_observation(work())
        except NoGameError as error:
            raise HTTPException(409, str(error)) from error
        except (TypeError, ValueError) as error:
            raise HTTPException(422, str(error)) from error
        except Exception as error:  # the game failed (an opponent that cannot move): the client hears why
            logger.error(
                "connect4 serve-openenv: a session request failed: %s: %s", type(error).__name__, error
            )
            raise HTTPException(
                500, f"the server could not play this: {type(error).__name__}: {error}"
            ) from None

    @app.post("/sessions", status_code=201, tags=["Sessions"])
    def create_session() -> dict[str, str]:
        try:
            return {"session_id": sessions.open("http").session_id}
        except SessionLimitError as error:
            raise _session_error(error) from None

    @app.post("/sessions/{session_id}/reset", tags=["Sessions"])
    def reset_session(
        session_id: str, request: Annotated[dict[str, Any] | None, Body()] = None
    ) -> dict[str, Any]:
        arguments = request or {}
        unknown = sorted(set(arguments) - set(RESET_FIELDS))
        if unknown:
            shown = ", ".join(repr(name)[:40] for name in unknown[:5])
            raise HTTPException(422, f"reset takes {', '.join(RESET_FIELDS)}; got {shown}")
        return run(session_id, lambda env: play(lambda: env.reset(**arguments)))

    @app.post("/sessions/{session_id}/step", tags=["Sessions"])
    def step_session(session_id: str, request: Annotated[dict[str, Any], Body()]) -> dict[str, Any]:
        try:
            action = Connect4TextAction(**request.get("action", {}))
        except (ValidationError, TypeError) as error:
            raise HTTPException(422, f'expected {{"action": {{"message": "<answer>"}}}}: {error}') from error
        return run(session_id, lambda env: play(lambda: env.step(action)))

    @app.get("/sessions/{session_id}/state", tags=["Sessions"])
    def session_state(session_id: str) -> dict[str, Any]:
        return run(session_id, lambda env: env.state.model_dump())

    @app.delete("/sessions/{session_id}", tags=["Sessions"])
    def delete_session(session_id: str) -> dict[str, str]:
        if not sessions.close(session_id):
            raise HTTPException(404, f"unknown session {session_id[:64]!r}")
        return {"deleted": session_id}


def _answer_limits(max_answer_length: object, max_body_bytes: object) -> tuple[int, int]:
    """`(max_answer_length, max_body_bytes)` checked, the body limit following the answer's when None."""
    answer_length = check_int("max_answer_length", max_answer_length, 1, MAX_ANSWER_LIMIT)
    if max_body_bytes is None:
        return answer_length, body_limit(answer_length)
    body_bytes = check_int("max_body_bytes", max_body_bytes, minimum=1)
    smallest = smallest_body_limit(answer_length)
    if body_bytes < smallest:
        raise ValueError(
            f"max_body_bytes {body_bytes} is too small for answers of up to {answer_length} characters: at least "
            f"{smallest} (the answer and the JSON around it); lower max_answer_length, or leave max_body_bytes out "
            f"(it then follows the answers: {body_limit(answer_length)})"
        )
    return answer_length, body_bytes


def _check_names(name: str, value: object) -> list[str]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Collection):
        raise TypeError(f"{name} must be a list of strings, got {value!r:.80} ({type(value).__name__})")
    for item in value:
        if not isinstance(item, str):
            raise TypeError(
                f"{name} must be a list of strings, got an item {item!r:.80} ({type(item).__name__})"
            )
    return list(value)


def create_app(
    max_sessions: int = MAX_SESSIONS,
    session_timeout: float = SESSION_TIMEOUT,
    max_body_bytes: int | None = None,
    *,
    max_answer_length: int = MAX_ANSWER_LENGTH,
    session_rate: float = SESSION_RATE,
    allowed_hosts: Collection[str] | None = LOOPBACK_HOSTS,
    allowed_origins: Collection[str] = (),
    **env_kwargs: Any,
) -> Any:
    """The ASGI app: OpenEnv's FastAPI app for
    [`Connect4TextEnvironment`][connect4_env.integrations.openenv.environment.Connect4TextEnvironment], the `/ws` and `/sessions`
    routes, and the limits of the module docstring.

    Args:
        max_sessions: the most games at once, WebSocket and HTTP sessions together.
        session_timeout: seconds a session may go unused before it is dropped (an idle WebSocket is closed).
        max_body_bytes: the largest HTTP body and WebSocket message; None (the default) follows
            `max_answer_length` ([`body_limit`][connect4_env.integrations.openenv.guards.body_limit]), so that
            any answer under it arrives. One given must leave room for an answer of `max_answer_length` ASCII
            characters ([`smallest_body_limit`][connect4_env.integrations.openenv.guards.smallest_body_limit]).
        max_answer_length: the longest answer read, in characters, 1..1,000,000 (passed to each session's
            game); a longer one is a rejected answer under the dialect's rule.
        session_rate: new sessions a second, on average (in bursts of up to `max_sessions` or `session_rate`,
            whichever is more).
        allowed_hosts: the host names the server answers to (the `Host` header; the loopback names by
            default), or None for any (a server on a public address; [`serve`][connect4_env.integrations.openenv.server.serve]
            chooses).
        allowed_origins: web origins such as `"http://127.0.0.1:3000"` whose pages may use the server, besides
            the server's own pages.
        **env_kwargs: for each session's
            [`Connect4TextEnvironment`][connect4_env.integrations.openenv.environment.Connect4TextEnvironment]:
            the game's (`opponent`, `"none"` for one client in both seats; `dialect`, `legal_moves`, `history`,
            `blind`; `invalid_answer`, `max_retries`, `agent_first`, the board size), the reward's (`reward`,
            `gamma`) and `session_dialects`.

    Returns:
        The app: [`HostCheck`][connect4_env.integrations.openenv.guards.HostCheck] around
        [`BodyLimit`][connect4_env.integrations.openenv.guards.BodyLimit] around the FastAPI app, for `uvicorn`.

    Raises:
        TypeError: an argument of the wrong type, or bad `env_kwargs` (an environment is built here once to
            check them).
        ValueError: an argument out of range (`max_body_bytes` too small for `max_answer_length`), or bad
            `env_kwargs`.
    """
    max_answer_length, max_body_bytes = _answer_limits(max_answer_length, max_body_bytes)
    env_kwargs["max_answer_length"] = max_answer_length
    max_sessions = check_int("max_sessions", max_sessions, minimum=1)
    session_timeout = check_number("session_timeout", session_timeout, 0, above_minimum=True)
    session_rate = check_number("session_rate", session_rate, 0, above_minimum=True)
    hosts = None if allowed_hosts is None else _check_names("allowed_hosts", allowed_hosts)
    origins = _check_names("allowed_origins", allowed_origins)
    for origin in origins:
        scheme, _, authority = origin.partition("://")
        if scheme not in ("http", "https") or split_authority(authority.rstrip("/"))[0] is None:
            raise ValueError(
                f"an allowed origin is scheme://host[:port] (http or https), got {origin!r:.100}"
            )
    Connect4TextEnvironment(**env_kwargs).close()  # bad arguments fail now, not in every session
    factory = functools.partial(Connect4TextEnvironment, **env_kwargs)
    app = _openenv_app(factory, max_sessions)

    @app.exception_handler(NoGameError)
    async def no_game(request: Request, error: NoGameError) -> JSONResponse:
        return JSONResponse({"detail": str(error)}, status_code=409)

    @app.exception_handler(
        BadResetError
    )  # OpenEnv's stateless /reset with a bad argument: the client's fault
    async def bad_reset(request: Request, error: BadResetError) -> JSONResponse:
        return JSONResponse({"detail": str(error)}, status_code=422)

    sessions = Sessions(factory, max_sessions, session_timeout, session_rate)

    @app.websocket("/ws")
    async def play_over_websocket(websocket: WebSocket) -> None:
        await serve_websocket(websocket, sessions, max_body_bytes)

    _add_session_routes(app, sessions)
    add_mcp_route(app)
    return HostCheck(BodyLimit(app, max_body_bytes), hosts, origins)


class _ClientFaultInOneLine(logging.Filter):
    """uvicorn's report of a text frame that is not UTF-8 in one line: its traceback says nothing about the
    server, and any client could fill the log with it.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and str(record.msg).startswith("Invalid UTF-8"):
            record.msg = f"{record.msg} (its connection is closed, code 1007)"
            record.exc_info = None
            record.exc_text = None
        return True


def build_server(
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    max_body_bytes: int | None = None,
    max_answer_length: int = MAX_ANSWER_LENGTH,
    request_timeout: float = REQUEST_TIMEOUT,
    max_connections: int | None = None,
    log_level: str = "warning",
    **app_kwargs: Any,
) -> tuple[uvicorn.Server, socket.socket, str]:
    """The uvicorn server for [`create_app`][connect4_env.integrations.openenv.server.create_app], its socket bound and
    listening (connections wait in the backlog until the server runs).

    Bound to a loopback address, the app answers only requests to a loopback name, `host` or that address;
    otherwise it answers any `Host`. `port=0` picks a free port. `max_body_bytes` and `max_answer_length` are
    `create_app`'s; uvicorn closes a WebSocket whose message passes 4 times `max_body_bytes` (code 1009).

    Each request's headers and body must arrive within `request_timeout` seconds (else 408 and the connection is
    closed), and at most `max_connections` connections are open at once, HTTP and WebSocket together (one more
    is answered 503 and closed); by default the larger of 256 and twice `max_sessions`, within the process's
    limit of open files (see `connect4_env.integrations.openenv.connections`).

    Returns:
        `(server, sock, url)`: run it with `server.run(sockets=[sock])` (stop it with `server.should_exit =
        True`), then close `sock`; `url` is `http://host:port` with the port bound.

    Raises:
        OSError: the address cannot be bound (a host name that does not resolve is named).
        TypeError: `host` is not a str; bad app or connection arguments.
        ValueError: bad app or connection arguments (`max_connections` beyond the process's limit of open
            files).
    """
    if not isinstance(host, str):
        raise TypeError(f"host must be a str such as '127.0.0.1', got {host!r:.80} ({type(host).__name__})")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except socket.gaierror as error:  # a name the resolver does not know: say which
            raise OSError(
                f"cannot listen on host {host!r}: {error.strerror} (name a local address such as 127.0.0.1, or "
                "0.0.0.0 for every interface)"
            ) from None
        address, bound_port = sock.getsockname()[:2]
        loopback = ipaddress.ip_address(address.split("%")[0]).is_loopback
        hosts = (*LOOPBACK_HOSTS, host, address) if loopback else None
        max_answer_length, max_body_bytes = _answer_limits(max_answer_length, max_body_bytes)
        request_timeout = check_number("request_timeout", request_timeout, 0, above_minimum=True)
        if max_connections is not None:
            max_connections = check_int("max_connections", max_connections, minimum=1)
        files = file_limit()
        connections = connection_limit(max_connections, app_kwargs.get("max_sessions", MAX_SESSIONS), files)
        app = create_app(
            max_body_bytes=max_body_bytes,
            max_answer_length=max_answer_length,
            allowed_hosts=hosts,
            **app_kwargs,
        )
        sock.listen(128)  # connections made from now on wait in the backlog until uvicorn accepts them
    except BaseException:
        sock.close()
        raise
    config = uvicorn.Config(
        app,
        http=guarded_protocol(request_timeout, connections),
        log_level=log_level,
        ws_max_size=WS_HARD_LIMIT_FACTOR * max_body_bytes,
        lifespan="on",
    )
    install_log_filters(files)
    uvicorn_errors = logging.getLogger("uvicorn.error")
    if not any(isinstance(existing, _ClientFaultInOneLine) for existing in uvicorn_errors.filters):
        uvicorn_errors.addFilter(_ClientFaultInOneLine())
    shown = f"[{host}]" if ":" in host else host
    return uvicorn.Server(config), sock, f"http://{shown}:{bound_port}"


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    on_ready: Callable[[str], None] | None = None,
    **server_kwargs: Any,
) -> None:
    """Serve [`create_app`][connect4_env.integrations.openenv.server.create_app] with uvicorn until interrupted (Ctrl-C or
    SIGTERM stop it cleanly); the arguments are [`build_server`][connect4_env.integrations.openenv.server.build_server]'s.

    `on_ready(url)` is called with the address once the socket is bound.

    Raises:
        OSError: the address cannot be bound (a host name that does not resolve is named).
        TypeError: `host` is not a str; bad app arguments.
        ValueError: bad app arguments.
    """
    server, sock, url = build_server(host, port, **server_kwargs)
    try:
        if on_ready is not None:
            on_ready(url)
        server.run(sockets=[sock])
    finally:
        sock.close()
