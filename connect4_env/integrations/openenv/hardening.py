"""The limits OpenEnv's server lacks, which `connect4 serve-openenv` adds so that no client exhausts it (the
docs page integrations/text.md lists them). No OpenEnv, FastAPI or uvicorn at import: the command reads its
defaults before they load.

- Sessions: [`Sessions`][connect4_env.integrations.openenv.hardening.Sessions], the games of `/ws` and
  `/sessions` in one table, at most `limit` at once and `rate` new ones a second, idle ones dropped.
- Host and Origin: [`HostCheck`][connect4_env.integrations.openenv.hardening.HostCheck], so that a web page
  the user has open can neither play nor fill a server on localhost, even by rebinding its name to 127.0.0.1.
- Bodies and frames: [`BodyLimit`][connect4_env.integrations.openenv.hardening.BodyLimit] and
  [`read_frame`][connect4_env.integrations.openenv.hardening.read_frame] bound their bytes and their JSON's
  nesting (read by the json dialect's `scan_json` before any parser recurses).

The limits below the app, in uvicorn's connections (a deadline per request, a cap on connections), are in
`connect4_env.integrations.openenv.connections`.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Collection, Mapping
from typing import Any, Generic, TypeVar
from urllib.parse import urlsplit

from connect4_env.envs.dialects import MAX_JSON_DEPTH, scan_json

try:
    import resource
except ImportError:  # Windows: no limit to read
    resource = None  # type: ignore[assignment]

__all__ = [
    "Sessions",
    "HostCheck",
    "BodyLimit",
    "read_frame",
    "body_limit",
    "LOOPBACK_HOSTS",
    "FRAME_BYTES",
    "REQUEST_TIMEOUT",
    "REQUEST_TIMEOUT_CEILING",
]

logger = logging.getLogger(__name__)
GameT = TypeVar("GameT")
Receive = Callable[[], Any]
Send = Callable[[dict[str, Any]], Any]

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
DRAIN_BYTES = 1 << 20
"""A refused body is read and dropped up to this many bytes, so that the client reads the 413."""
BYTES_PER_CHARACTER = 12
"""The most bytes an answer's character takes in JSON: `json.dumps` writes one outside ASCII as `\\uXXXX`, an
emoji as two of them."""
FRAME_BYTES = 4096
"""Room for the JSON around an answer: the frame's type, the action's `metadata`, a reset's fields."""
MESSAGE_TYPES = ("reset", "step", "state", "close")
REQUEST_TIMEOUT = 30.0
"""Seconds a request's headers and body may take to arrive, by default: room for the largest body over a slow
link (`connections.uvicorn_config` enforces it)."""
REQUEST_TIMEOUT_CEILING = 3600.0
"""The most seconds a request may be given to arrive (an hour): past it a connection that sends nothing holds its
file for as long as the server runs."""


def body_limit(max_answer_length: int) -> int:
    """The body limit that lets any answer of `max_answer_length` characters in, however JSON escapes it."""
    return BYTES_PER_CHARACTER * max_answer_length + FRAME_BYTES


def split_authority(authority: str) -> tuple[str | None, str | None]:
    """`(host, port)` of a `Host` header or a URL's authority (`"[::1]:8000"` -> `("::1", "8000")`), the host
    in lower case without a final dot; `(None, None)` for text that names no host.
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
    host) and come from no other web page: its `Origin`, which browsers send, must be the server's own or one
    of `allowed_origins`. Else 403, with the reason.
    """

    def __init__(
        self, app: Any, allowed_hosts: Collection[str] | None, allowed_origins: Collection[str] = ()
    ) -> None:
        self.app, self.allowed_origins = app, {origin.rstrip("/").lower() for origin in allowed_origins}
        self.allowed_hosts = None
        if allowed_hosts is not None:
            self.allowed_hosts = {name.strip().lower().strip("[]").rstrip(".") for name in allowed_hosts}

    def refusal(self, host: str | None, origin: str | None) -> str | None:
        """Why a request with these `Host` and `Origin` headers is refused, or None."""
        if self.allowed_hosts is not None and split_authority(host or "")[0] not in self.allowed_hosts:
            names = ", ".join(sorted(self.allowed_hosts))
            shown = "no Host header" if host is None else f"Host {host[:100]!r}"
            return (
                f"{shown} is not served here: this server listens on a loopback address and answers requests to "
                f"{names} only"
            )
        if origin is None or origin.rstrip("/").lower() in self.allowed_origins:
            return None
        parts = urlsplit(origin.strip())
        default = {"http": "80", "https": "443"}.get(parts.scheme)
        sender, own = split_authority(parts.netloc), split_authority(host or "")
        if default and sender[0] and (sender[0], sender[1] or default) == (own[0], own[1] or default):
            return None  # a page this server served itself (its /docs)
        return (
            f"Origin {origin[:100]!r} may not use this server: requests from other web pages are refused "
            "(allow one with --allow-origin)"
        )

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
        drained = declared is not None and declared.isdigit() and int(declared) <= DRAIN_BYTES
        more = scope["type"] == "http" and (not refused or drained)
        chunks, size = [], 0
        while more and size <= (DRAIN_BYTES if refused else self.limit):  # a refused body is read, not kept
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
        elif scan_json(body, max_depth=MAX_JSON_DEPTH)[0] > MAX_JSON_DEPTH:
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
        FrameError: a binary frame, one over `max_bytes`, not JSON, nested past `MAX_JSON_DEPTH`, not an
            object, of a type other than `reset`, `step`, `state` and `close`, or with a `data` not an object.
    """
    text = message.get("text")
    if text is None:
        raise FrameError("binary frames are not read: send a JSON object as a text frame", "INVALID_JSON")
    if (size := len(text.encode("utf-8", "surrogatepass"))) > max_bytes:
        raise FrameError(f"message too large: {size} bytes, at most {max_bytes}", "INVALID_JSON")
    try:
        if scan_json(text, max_depth=MAX_JSON_DEPTH)[0] > MAX_JSON_DEPTH:
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
    """No new session: `retry_after` seconds until the rate allows one, None when the number of games stands
    in the way.
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
    """The server's games, WebSocket and HTTP ones together (thread-safe): at most `limit` at once and `rate`
    new ones a second on average (in bursts of up to `max(limit, rate)`); an HTTP session unused for `timeout`
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
                f"too many sessions: at most {self.limit} games at once; end one (close its WebSocket, or "
                "DELETE /sessions/<id>) or wait"
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
