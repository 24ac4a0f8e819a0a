"""The limits OpenEnv's server lacks, which `connect4 serve-openenv` adds so that no client exhausts it (the
docs page integrations/text.md lists them). Standard library only at import: the command reads its defaults
before OpenEnv loads, and `guarded_protocol` imports uvicorn.

- Sessions: [`Sessions`][connect4_env.integrations.openenv.hardening.Sessions], the games of `/ws` and
  `/sessions` in one table, at most `limit` at once and `rate` new ones a second, idle ones dropped.
- Host and Origin: [`HostCheck`][connect4_env.integrations.openenv.hardening.HostCheck], so that a web page the
  user has open can neither play nor fill a server on localhost, even by rebinding its DNS name to 127.0.0.1.
- Bodies and frames: [`BodyLimit`][connect4_env.integrations.openenv.hardening.BodyLimit] and
  [`read_frame`][connect4_env.integrations.openenv.hardening.read_frame] bound their bytes and JSON nesting.
- Connections: [`guarded_protocol`][connect4_env.integrations.openenv.hardening.guarded_protocol] gives each
  request a deadline (uvicorn times out only idle kept-alive connections, so a client that sent nothing, or a
  byte at a time, held its file for ever) and caps connections below the process's file limit;
  [`QuietLog`][connect4_env.integrations.openenv.hardening.QuietLog] logs what clients cause in one line.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
import time
import uuid
from collections.abc import Callable, Collection, Mapping
from typing import Any, Generic, TypeVar
from urllib.parse import urlsplit

try:
    import resource
except ImportError:  # Windows: no limit to read
    resource = None  # type: ignore[assignment]

__all__ = ["Sessions", "HostCheck", "BodyLimit", "read_frame", "guarded_protocol", "QuietLog", "body_limit"]

logger = logging.getLogger(__name__)
GameT = TypeVar("GameT")
Receive = Callable[[], Any]
Send = Callable[[dict[str, Any]], Any]

MAX_JSON_DEPTH = 32
"""The most levels a request's JSON may nest: ours nest 3 (``{"action": {"message": ...}}``)."""
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
DRAIN_BYTES = 1 << 20
"""A refused body is read and dropped up to this many bytes, so that the client reads the 413."""
BYTES_PER_CHARACTER = 12
"""The most bytes an answer's character takes in JSON: `json.dumps` writes one outside ASCII as `\\uXXXX`, an
emoji as two of them."""
FRAME_BYTES = 4096
"""Room for the JSON around an answer: the frame's type, the action's `metadata`, a reset's fields."""
REQUEST_TIMEOUT = 30.0
MAX_CONNECTIONS = 256
"""Connections at once by default (or twice ``max_sessions``, if more): each WebSocket session holds one."""
RESERVED_FILES = 64
"""File descriptors kept for the server itself: the connection cap stays this far below the process's limit."""
MESSAGE_TYPES = ("reset", "step", "state", "close")
_JSON_TOKENS = re.compile(r'["\\\[\]{}]')


def body_limit(max_answer_length: int) -> int:
    """The body limit that lets any answer of `max_answer_length` characters through, however JSON escapes it."""
    return BYTES_PER_CHARACTER * max_answer_length + FRAME_BYTES


def json_depth(text: str | bytes, limit: int | None = None) -> int:
    """How deeply arrays and objects nest in any `text` (JSON or not), read in one pass without parsing; once
    past `limit`, `limit + 1`.
    """
    if isinstance(text, bytes):
        text = text.decode("latin-1")  # byte for byte: a UTF-8 sequence holds no ASCII byte
    depth = deepest = 0
    in_string, escaped_at = False, -1
    for match in _JSON_TOKENS.finditer(text):
        char, at = match.group(), match.start()
        if in_string and at != escaped_at:  # the character after a backslash in a string is skipped
            in_string, escaped_at = char != '"', at + 1 if char == "\\" else escaped_at
        elif not in_string:
            in_string = char == '"'
            depth += (char in "[{") - (char in "]}")
            deepest = max(deepest, depth)
            if limit is not None and deepest > limit:
                break
    return deepest


def split_authority(authority: str) -> tuple[str | None, str | None]:
    """`(host, port)` of a `Host` header or a URL's authority (`"[::1]:8000"` -> `("::1", "8000")`), the host in
    lower case without a final dot; `(None, None)` for text that names no host.
    """
    authority = authority.strip().lower()
    bracketed = authority.startswith("[")
    name, closed, rest = authority[1:].partition("]") if bracketed else authority.partition(":")
    rest = rest if bracketed else closed + rest
    name = name.rstrip(".")
    if not name or (bracketed and not closed) or (rest and not (rest[0] == ":" and rest[1:].isdigit())):
        return None, None
    return name, rest[1:] or None


async def _refuse(scope: Mapping[str, Any], receive: Receive, send: Send, status: int, detail: str) -> None:
    """Answer `{"detail": detail}` with `status`, over HTTP or as a refused WebSocket handshake."""
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if scope["type"] == "http":
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [*headers, (b"connection", b"close")],
            }
        )
        await send({"type": "http.response.body", "body": body})
    elif (await receive())["type"] == "websocket.connect":
        await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": body})


class HostCheck:
    """ASGI middleware: a request or WebSocket handshake must name one of `allowed_hosts` (any port; None: any
    host) and come from no other web page: its `Origin`, which browsers send, must be the server's own or one of
    `allowed_origins`. Else 403, with the reason.
    """

    def __init__(
        self, app: Any, allowed_hosts: Collection[str] | None, allowed_origins: Collection[str] = ()
    ) -> None:
        self.app, self.allowed_origins = app, {origin.rstrip("/").lower() for origin in allowed_origins}
        hosts = (
            None
            if allowed_hosts is None
            else {h.strip().lower().strip("[]").rstrip(".") for h in allowed_hosts}
        )
        self.allowed_hosts = hosts

    def refusal(self, host: str | None, origin: str | None) -> str | None:
        """Why a request with these `Host` and `Origin` headers is refused, or None."""
        if self.allowed_hosts is not None and split_authority(host or "")[0] not in self.allowed_hosts:
            return (
                f"{'no Host header' if host is None else f'Host {host[:100]!r}'} is not served here: this server "
                f"listens on a loopback address and answers requests to {', '.join(sorted(self.allowed_hosts))} only"
            )
        if origin is None or origin.rstrip("/").lower() in self.allowed_origins:
            return None
        parts = urlsplit(origin.strip())
        default = {"http": "80", "https": "443"}.get(parts.scheme)
        (origin_host, origin_port), (host_name, host_port) = (
            split_authority(parts.netloc),
            split_authority(host or ""),
        )
        if (
            default
            and origin_host
            and (origin_host, origin_port or default) == (host_name, host_port or default)
        ):
            return None  # a page this server served itself (its /docs)
        return f"Origin {origin[:100]!r} may not use this server: requests from other web pages are refused (allow one with --allow-origin)"

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        """Refuse what `refusal` refuses; pass the rest to the app."""
        headers = {name: value.decode("latin-1") for name, value in scope.get("headers") or []}
        guarded = scope["type"] in ("http", "websocket")
        reason = self.refusal(headers.get(b"host"), headers.get(b"origin")) if guarded else None
        await (
            self.app(scope, receive, send) if reason is None else _refuse(scope, receive, send, 403, reason)
        )


class BodyLimit:
    """ASGI middleware: an HTTP body over `limit` bytes is answered 413 unkept (up to `DRAIN_BYTES` of it read
    first, so that the client reads the answer), one whose JSON nests past `MAX_JSON_DEPTH` levels 400.
    """

    def __init__(self, app: Any, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        """Check an HTTP request's body; pass other connections unchanged."""
        declared = dict(scope.get("headers") or []).get(b"content-length")
        refused = declared is not None and (not declared.isdigit() or int(declared) > self.limit)
        more = scope["type"] == "http" and (
            not refused or bool(declared.isdigit() and int(declared) <= DRAIN_BYTES)
        )
        chunks, size = [], 0
        while more and size <= (
            DRAIN_BYTES if refused else self.limit
        ):  # a refused body is drained, not kept
            message = await receive()
            if message["type"] != "http.request":
                return
            size, more = size + len(message.get("body", b"")), message.get("more_body", False)
            refused = refused or size > self.limit
            chunks += [] if refused else [message.get("body", b"")]
        body = b"".join(chunks)
        if scope["type"] != "http":
            await self.app(scope, receive, send)
        elif refused:
            await _refuse(scope, receive, send, 413, f"request body too large: at most {self.limit} bytes")
        elif json_depth(body, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
            detail = (
                f"request body nested too deep: JSON of at most {MAX_JSON_DEPTH} levels of arrays and objects"
            )
            await _refuse(scope, receive, send, 400, detail)
        else:
            replay = [{"type": "http.request", "body": body, "more_body": False}]
            await self.app(scope, lambda: _next(replay, receive), send)


async def _next(replay: list[dict[str, Any]], receive: Receive) -> dict[str, Any]:
    return replay.pop() if replay else await receive()  # type: ignore[no-any-return]


class FrameError(ValueError):
    """A WebSocket frame answered with an error frame: `code` is OpenEnv's error code, `errors` pydantic's."""

    def __init__(self, message: str, code: str, errors: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.code, self.errors = code, errors


def read_frame(message: Mapping[str, Any], max_bytes: int) -> tuple[str, dict[str, Any]]:
    """An ASGI WebSocket message as `(type, data)`, checked in the order that bounds the work.

    Raises:
        FrameError: a binary frame, one over `max_bytes`, not JSON, nested past `MAX_JSON_DEPTH`, not an object,
            of a type other than `reset`, `step`, `state` and `close`, or with a `data` that is not an object.
    """
    text = message.get("text")
    if text is None:
        raise FrameError("binary frames are not read: send a JSON object as a text frame", "INVALID_JSON")
    if (size := len(text.encode("utf-8", "surrogatepass"))) > max_bytes:
        raise FrameError(f"message too large: {size} bytes, at most {max_bytes}", "INVALID_JSON")
    try:
        if json_depth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
            raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels of arrays and objects")
        value = json.loads(text)
    except ValueError as error:
        raise FrameError(f"Invalid JSON: {str(error)[:200]}", "INVALID_JSON") from None
    if not isinstance(value, dict):
        shown = "null" if value is None else type(value).__name__
        raise FrameError(
            f'expected a JSON object such as {{"type": "step", "data": {{"message": "4"}}}}, got {shown}',
            "INVALID_JSON",
        )
    kind, data = value.get("type"), {} if value.get("data") is None else value["data"]
    if kind not in MESSAGE_TYPES:
        shown = repr(kind)[:80] if isinstance(kind, str) else type(kind).__name__
        raise FrameError(
            f"Unknown message type: {shown}; expected one of {', '.join(MESSAGE_TYPES)}", "UNKNOWN_TYPE"
        )
    if not isinstance(data, dict):
        raise FrameError(f"data must be a JSON object, got {type(data).__name__}", "VALIDATION_ERROR")
    return kind, data


class SessionLimitError(RuntimeError):
    """No new session: `retry_after` seconds until the rate allows one, None when the number of games stands in
    the way.
    """

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class UnknownSessionError(KeyError):
    """No such HTTP session: never made, deleted, or dropped unused."""


class Session(Generic[GameT]):
    """One game: its id, its kind (`"ws"` or `"http"`), the game, when it was last used, and its lock."""

    def __init__(self, kind: str, now: float) -> None:
        self.session_id, self.kind, self.last_used, self.lock = uuid.uuid4().hex, kind, now, threading.Lock()
        self.game: GameT | None = None


class Sessions(Generic[GameT]):
    """The server's games, WebSocket and HTTP ones together (thread-safe): at most `limit` at once and `rate` new
    ones a second on average (in bursts of up to `max(limit, rate)`); an HTTP session unused for `timeout`
    seconds is dropped (a WebSocket's connection closes once idle that long).

    Args:
        factory: builds a game, outside the table's lock, the session's place held meanwhile.
        close: ends a game that is dropped or closed (`game.close()` by default).
        clock: seconds, for the idle time and the rate.
    """

    def __init__(
        self,
        factory: Callable[[], GameT],
        limit: int,
        timeout: float,
        rate: float,
        close: Callable[[GameT], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.factory, self.limit, self.timeout, self.rate, self._clock = factory, limit, timeout, rate, clock
        self._close = close or (lambda game: game.close())  # type: ignore[attr-defined]
        self._lock, self._sessions = threading.Lock(), dict[str, Session[GameT]]()
        self._tokens = self.burst = max(float(limit), rate)
        self._refilled = clock()

    def __len__(self) -> int:
        return len(self._sessions)

    def open(self, kind: str) -> Session[GameT]:
        """A new session of `kind` (`"ws"` or `"http"`), its game built.

        Raises:
            SessionLimitError: `limit` games are playing (after unused HTTP sessions are dropped), or new ones
                came faster than `rate`.
        """
        with self._lock:
            now = self._clock()
            dropped = [s for s in self._sessions.values() if self._unused(s, now) and s.lock.acquire(False)]
            for old in dropped:  # not in use: its lock is held here
                del self._sessions[old.session_id]
                old.lock.release()
            refusal = self._refusal(now)
            session: Session[GameT] = Session(kind, now)
            if refusal is None:
                self._sessions[session.session_id] = session
        for old in dropped:
            self._close(old.game)  # type: ignore[arg-type]
        if refusal is not None:
            raise refusal
        try:
            session.game = self.factory()
        except BaseException:
            self._sessions.pop(session.session_id, None)
            raise
        return session

    def close(self, session_id: str) -> bool:
        """End a session and its game, after any call still running on it; whether there was one."""
        with self._lock:
            session = self._sessions.pop(session_id, None)
        if session is not None and session.game is not None:
            with session.lock:
                self._close(session.game)
        return session is not None

    def run(self, session_id: str, work: Callable[[GameT], Any]) -> Any:
        """`work(game)` for an HTTP session, one call at a time per session; it counts as a use.

        Raises:
            UnknownSessionError: no such HTTP session (whatever `work` raises passes through).
        """
        session = self._sessions.get(session_id)
        if session is None or session.kind != "http" or session.game is None:
            raise UnknownSessionError(session_id)
        with session.lock:
            with self._lock:
                gone = self._sessions.get(session_id) is not session or self._unused(session, self._clock())
                expired = self._sessions.pop(session_id, None) if gone else None  # unused too long: dropped
            if expired is not None:
                self._close(session.game)
            if gone:
                raise UnknownSessionError(session_id)
            session.last_used = self._clock()
            try:
                return work(session.game)
            finally:
                session.last_used = self._clock()

    def _unused(self, session: Session[GameT], now: float) -> bool:
        return session.kind == "http" and session.game is not None and now - session.last_used > self.timeout

    def _refusal(self, now: float) -> SessionLimitError | None:
        """Why no session can be opened now, or None (a token of the rate is then spent)."""
        if len(self._sessions) >= self.limit:
            return SessionLimitError(
                f"too many sessions: at most {self.limit} games at once; end one (close its WebSocket, or DELETE "
                "/sessions/<id>) or wait"
            )
        self._tokens = min(self.burst, self._tokens + (now - self._refilled) * self.rate)
        self._refilled = now
        if self._tokens < 1.0:
            wait = (1.0 - self._tokens) / self.rate
            return SessionLimitError(
                f"too many new sessions: at most {self.rate:g} a second; try again in {wait:.2g} s", wait
            )
        self._tokens -= 1.0
        return None


class OncePerInterval:
    """Let one event through each `interval` seconds; a call is None for an event held back, else the count of
    those held back since the last one let through.
    """

    def __init__(self, interval: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval, self._clock, self._last, self._held = interval, clock, -float("inf"), 0

    def __call__(self) -> int | None:  # noqa: D102
        if (now := self._clock()) - self._last < self.interval:
            self._held += 1
            return None
        self._last, held, self._held = now, self._held, 0
        return held


class QuietLog(logging.Filter):
    """What clients make uvicorn and asyncio log, in one line: a text frame that is not UTF-8, and `accept()` out
    of file descriptors (reported with a traceback every second while it lasts) at most once an interval.
    """

    def __init__(self, files: int | None, once: OncePerInterval | None = None) -> None:
        super().__init__()
        self.files, self.once = files, once or OncePerInterval()

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite or drop those records; pass the rest."""
        message, error = str(record.msg), record.exc_info[1] if record.exc_info else None
        if message.startswith("Exception in callback BaseSelectorEventLoop._start_serving"):
            return not isinstance(error, ValueError)  # accept() retried after the server closed its socket
        if message.startswith("Invalid UTF-8") and error is not None:
            record.msg = f"{message} (its connection is closed, code 1007)"
        elif message.startswith("socket.accept() out of system resource"):
            if (held := self.once()) is None:
                return False
            record.msg = (
                f"connect4 serve-openenv: out of file descriptors{f' (the limit is {self.files})' if self.files else ''}"
                ": new connections wait until some close; lower --max-connections or raise the limit (ulimit -n)"
                + (f"; {held} such reports left out since the last" if held else "")
            )
            record.args = ()
        else:
            return True
        record.exc_info = record.exc_text = None
        return True


def install_log_filters(files: int | None) -> None:
    """Put one `QuietLog` on the `asyncio` and `uvicorn.error` loggers (once per process)."""
    for target in (logging.getLogger("asyncio"), logging.getLogger("uvicorn.error")):
        if not any(isinstance(existing, QuietLog) for existing in target.filters):
            target.addFilter(QuietLog(files))


def file_limit() -> int | None:
    """This process's soft limit of open files, or None where there is none."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0] if resource is not None else None
    return None if soft is None or soft == resource.RLIM_INFINITY else int(soft)


def connection_limit(max_connections: int | None, max_sessions: int, files: int | None) -> int:
    """`max_connections`, or by default the larger of `MAX_CONNECTIONS` and twice `max_sessions`, lowered to fit
    `files` (the process's limit of open files) less `RESERVED_FILES`.

    Raises:
        ValueError: `max_connections` below 1, or above what `files` leaves.
    """
    room = None if files is None else files - RESERVED_FILES
    if max_connections is None:
        wanted = max(MAX_CONNECTIONS, 2 * max_sessions)
        return wanted if room is None else max(1, min(wanted, room))
    if max_connections < 1:
        raise ValueError(f"max_connections must be at least 1, got {max_connections}")
    if room is not None and max_connections > room:
        raise ValueError(
            f"max_connections {max_connections} does not fit this process's limit of {files} open files "
            f"({RESERVED_FILES} kept for the server): at most {max(room, 0)}; raise the limit (ulimit -n) or ask for fewer"
        )
    return max_connections


def _raw_response(status: int, reason: str, detail: str) -> bytes:
    body = json.dumps({"detail": detail}).encode()
    head = f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {len(body)}"
    return f"{head}\r\n\r\n".encode("latin-1") + body


class _Guarded:
    """The deadline and the cap of `guarded_protocol`, mixed into uvicorn's `H11Protocol` there."""

    request_timeout: float
    max_connections: int
    refusals: OncePerInterval
    under_way: tuple[Any, ...]  # h11's states of a client whose request has not arrived whole
    idle: Any
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        if len(self.connections) <= self.max_connections:  # type: ignore[attr-defined]
            self._arm()
            return
        if (held := self.refusals()) is not None:
            more = f"; {held} more refused since the last report" if held else ""
            logger.warning(
                "connect4 serve-openenv: at most %d connections at once: a new one is refused (503)%s",
                self.max_connections,
                more,
            )
        detail = f"too many connections: at most {self.max_connections} at once; try again later"
        transport.write(_raw_response(503, "Service Unavailable", detail))
        transport.close()

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.request_timeout, self._expire)  # type: ignore[attr-defined]

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        transport, cycle = self.transport, self.cycle  # type: ignore[attr-defined]
        if not transport.is_closing():
            if self.conn.their_state is self.idle and (cycle is None or cycle.response_complete):  # type: ignore[attr-defined]
                detail = (
                    f"the request did not arrive within {self.request_timeout:g} s: the connection is closed"
                )
                transport.write(_raw_response(408, "Request Timeout", detail))
            transport.close()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)  # type: ignore[misc]
        if self.conn.their_state not in self.under_way:  # type: ignore[attr-defined]
            self._disarm()  # the whole request arrived: the app's time is not the client's

    def handle_websocket_upgrade(self, event: Any) -> None:
        self._disarm()  # the WebSocket's session has its own timeout
        super().handle_websocket_upgrade(event)  # type: ignore[misc]

    def on_response_complete(self) -> None:
        closing = self.transport.is_closing  # type: ignore[attr-defined]
        if not closing():
            self._arm()  # the next request's clock starts now
        super().on_response_complete()  # type: ignore[misc]
        if closing() or self.conn.their_state not in self.under_way:  # type: ignore[attr-defined]
            self._disarm()  # closed, or a pipelined request has arrived whole already

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)  # type: ignore[misc]


def guarded_protocol(request_timeout: float, max_connections: int) -> type[asyncio.Protocol]:
    """Uvicorn's HTTP protocol (`uvicorn.Config(http=...)`) with a deadline per request and a cap on connections.

    A request's headers and body must arrive within `request_timeout` seconds of the connection's start or the
    previous response (else 408, when none was under way, and the connection is closed; the app's time and an
    open WebSocket do not count). A connection past `max_connections` at once, HTTP and WebSocket together, is
    answered 503 and closed, with a log line at most once a minute.
    """
    from uvicorn.protocols.http.h11_impl import H11Protocol, h11

    settings = {
        "request_timeout": request_timeout,
        "max_connections": max_connections,
        "refusals": OncePerInterval(),
    }
    states = {"under_way": (h11.IDLE, h11.SEND_BODY), "idle": h11.IDLE}
    return type("GuardedH11Protocol", (_Guarded, H11Protocol), {**settings, **states})
