"""The connections of `connect4 serve-openenv`: limits below the app, in uvicorn's HTTP protocol (the `openenv`
extra's server).

uvicorn times out only an idle kept-alive connection, and only until its next byte: a client that connects and
sends nothing, or a request's headers (or body) a byte at a time, holds its connection for ever, and enough of
them fill the process's file descriptors, after which no client is accepted at all. So:

- **A deadline per request.** A request's headers and body must have arrived `request_timeout` seconds after the
  connection opened or the previous response ended; otherwise the connection is answered 408 (when no request
  was under way) and closed. The time the app takes to answer does not count, nor does a WebSocket once it is
  open (its session has its own timeout, see `connect4_env.integrations.openenv.websocket`).
- **A cap on connections.** At most `max_connections` at once, HTTP and WebSocket together; one more is
  answered 503 and closed as soon as it is accepted, so the server never reaches the file-descriptor limit
  through its clients (the cap is kept `RESERVED_FILES` below that limit).
- **One log line, not a flood.** Refusals at the cap, and asyncio's report that `accept()` ran out of file
  descriptors (repeated every second, each with a traceback, for as long as it lasts), are logged at most once a
  minute, with the count of those left out.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time

try:
    import resource
except ImportError:  # Windows: no limit to read
    resource = None  # type: ignore[assignment]
from collections.abc import Callable

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = [
    "guarded_protocol",
    "connection_limit",
    "OncePerInterval",
    "OutOfFilesFilter",
    "install_log_filters",
    "file_limit",
    "REQUEST_TIMEOUT",
    "MAX_CONNECTIONS",
    "RESERVED_FILES",
    "LOG_INTERVAL",
]

logger = logging.getLogger(__name__)

REQUEST_TIMEOUT = 30.0
"""Seconds a request's headers and body may take to arrive: room for the largest body (12 MB at the highest
answer length) over a slow link, and a bound on what a silent client holds."""
MAX_CONNECTIONS = 256
"""Connections at once by default (or twice ``max_sessions``, if more): each WebSocket session holds one."""
RESERVED_FILES = 64
"""File descriptors kept for the server itself (its socket, logs, the event loop, the games' threads): the
connection cap stays this far below the process's limit."""
LOG_INTERVAL = 60.0
"""Seconds between two log lines about the same trouble (refusals at the cap, files run out)."""


class OncePerInterval:
    """Let one event through each `interval` seconds and count the ones held back (thread-safe enough for a
    log: at worst one line more).

    Args:
        interval: seconds between two events let through.
        clock: seconds (`time.monotonic`).
    """

    def __init__(self, interval: float = LOG_INTERVAL, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self._clock = clock
        self._last: float | None = None
        self._held = 0

    def __call__(self) -> int | None:
        """One event: None when it is held back, else how many were held back since the last one let through."""
        now = self._clock()
        if self._last is not None and now - self._last < self.interval:
            self._held += 1
            return None
        self._last, held, self._held = now, self._held, 0
        return held


class OutOfFilesFilter(logging.Filter):
    """asyncio's report that `accept()` ran out of file descriptors, as one line at most once a `LOG_INTERVAL`.

    asyncio logs it, with a traceback, every second for as long as the process is at its limit (and retries
    the accept each time): a full disk's worth of log for a server that cannot serve anyone.
    """

    def __init__(self, limit: int | None, once: OncePerInterval | None = None) -> None:
        super().__init__()
        self.limit = limit
        self.once = once or OncePerInterval()

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite or drop a record of the `asyncio` logger about `accept()` out of resources; pass the rest."""
        message = str(record.msg)
        if message.startswith("Exception in callback BaseSelectorEventLoop._start_serving") and (
            record.exc_info and isinstance(record.exc_info[1], ValueError)
        ):
            return False  # asyncio's accept retry, still pending when the server closed its socket: no news
        if not message.startswith("socket.accept() out of system resource"):
            return True
        held = self.once()
        if held is None:
            return False
        limit = f" (the limit is {self.limit})" if self.limit is not None else ""
        record.msg = (
            f"connect4 serve-openenv: out of file descriptors{limit}: new connections wait until some close; "
            "lower --max-connections or raise the limit (ulimit -n)"
            + (f"; {held} such reports left out since the last" if held else "")
        )
        record.args = ()
        record.exc_info = None
        record.exc_text = None
        return True


def connection_limit(max_connections: int | None, max_sessions: int, file_limit: int | None) -> int:
    """The connection cap: `max_connections`, or by default the larger of `MAX_CONNECTIONS` and twice
    `max_sessions`, lowered to fit `file_limit` less `RESERVED_FILES`.

    Args:
        max_connections: the cap asked for, or None for the default.
        max_sessions: the server's games at once (each WebSocket session holds a connection).
        file_limit: the process's file-descriptor limit (`RLIMIT_NOFILE`), or None where there is none.

    Returns:
        The cap.

    Raises:
        ValueError: `max_connections` below 1, or above what `file_limit` leaves (the message says how much).
    """
    room = None if file_limit is None else file_limit - RESERVED_FILES
    if max_connections is None:
        wanted = max(MAX_CONNECTIONS, 2 * max_sessions)
        return wanted if room is None else max(1, min(wanted, room))
    if max_connections < 1:
        raise ValueError(f"max_connections must be at least 1, got {max_connections}")
    if room is not None and max_connections > room:
        raise ValueError(
            f"max_connections {max_connections} does not fit this process's limit of {file_limit} open files "
            f"({RESERVED_FILES} kept for the server): at most {max(room, 0)}; raise the limit (ulimit -n) or "
            "ask for fewer"
        )
    return max_connections


def _raw_response(status: int, reason: str, detail: str) -> bytes:
    body = json.dumps({"detail": detail}).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\nconnection: close\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    )
    return head.encode("latin-1") + body


def guarded_protocol(request_timeout: float, max_connections: int) -> type[asyncio.Protocol]:
    """The h11 HTTP protocol of uvicorn with a deadline for each request and a cap on connections (see the module
    docstring); pass it as `uvicorn.Config(http=...)`.

    Args:
        request_timeout: seconds a request's headers and body may take to arrive.
        max_connections: connections at once, HTTP and WebSocket together.

    Returns:
        The protocol class.
    """
    refusals = OncePerInterval()

    class GuardedH11Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > max_connections:
                held = refusals()
                if held is not None:
                    logger.warning(
                        "connect4 serve-openenv: at most %d connections at once: a new one is refused (503)%s",
                        max_connections,
                        f"; {held} more refused since the last report" if held else "",
                    )
                transport.write(
                    _raw_response(
                        503,
                        "Service Unavailable",
                        f"too many connections: at most {max_connections} at once; try again later",
                    )
                )
                transport.close()
                return
            self._arm()

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(request_timeout, self._expire)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _check_request(self) -> None:
            """Stop the clock once the whole request has arrived (the app's time is not the client's)."""
            if self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
                self._disarm()

        def _expire(self) -> None:
            self._deadline = None
            if self.transport.is_closing():
                return
            idle = self.conn.their_state is h11.IDLE and (self.cycle is None or self.cycle.response_complete)
            if idle:  # no request under way: the client hears why
                self.transport.write(
                    _raw_response(
                        408,
                        "Request Timeout",
                        f"the request did not arrive within {request_timeout:g} s: the connection is closed",
                    )
                )
            self.transport.close()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._check_request()

        def handle_websocket_upgrade(self, event: h11.Request) -> None:
            self._disarm()  # the WebSocket's session has its own timeout
            super().handle_websocket_upgrade(event)

        def on_response_complete(self) -> None:
            if not self.transport.is_closing():
                self._arm()  # the next request's clock starts now (uvicorn's keep-alive timer runs as well)
            super().on_response_complete()
            if self.transport.is_closing():
                self._disarm()
            else:
                self._check_request()  # a pipelined request may have arrived whole already

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return GuardedH11Protocol


def install_log_filters(file_limit: int | None) -> None:
    """Put one `OutOfFilesFilter` on the `asyncio` logger (once per process)."""
    asyncio_logger = logging.getLogger("asyncio")
    if not any(isinstance(existing, OutOfFilesFilter) for existing in asyncio_logger.filters):
        asyncio_logger.addFilter(OutOfFilesFilter(file_limit))


def file_limit() -> int | None:
    """This process's soft limit of open files, or None where there is none (or no `resource` module)."""
    if resource is None:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else int(soft)
