"""The limits of `connect4 serve-openenv` below the app, in uvicorn's connections (the `openenv` extra).

uvicorn times out only an idle kept-alive connection: a client that connects and sends nothing, or its request
a byte at a time, held its connection (and a file descriptor) for ever, and enough of them left no file to
accept anyone. [`uvicorn_config`][connect4_env.integrations.openenv.connections.uvicorn_config] gives each
request a deadline and caps the connections below the process's file limit;
[`QuietLog`][connect4_env.integrations.openenv.connections.QuietLog] logs what clients cause in one line, at most
once a minute.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import socket
import time
from collections.abc import Callable
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from connect4_env.integrations.openenv.hardening import (
    LOOPBACK_HOSTS,
    REQUEST_TIMEOUT,
    REQUEST_TIMEOUT_CEILING,
)
from connect4_env.validation import check_int, check_number

try:
    import resource
except ImportError:  # Windows: no limit to read
    resource = None  # type: ignore[assignment]

__all__ = ["uvicorn_config", "GuardedH11Protocol", "connection_limit", "QuietLog", "OncePerInterval"]

logger = logging.getLogger(__name__)

MAX_CONNECTIONS = 256
"""Connections at once by default (or twice ``max_sessions``, if more): each WebSocket session holds one."""
RESERVED_FILES = 64
"""File descriptors kept for the server: the connection cap stays this far below the process's limit."""


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
    """What clients make uvicorn and asyncio log, in one line: a text frame that is not UTF-8, and `accept()`
    out of file descriptors (reported with a traceback every second while it lasts) at most once an interval.
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
            limit = f" (the limit is {self.files})" if self.files else ""
            record.msg = (
                f"connect4 serve-openenv: out of file descriptors{limit}: new connections wait until some "
                "close; lower --max-connections or raise the limit (ulimit -n)"
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
    """`max_connections`, or by default the larger of `MAX_CONNECTIONS` and twice `max_sessions`, lowered to
    fit `files` (the process's limit of open files) less `RESERVED_FILES`.

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
            f"({RESERVED_FILES} kept for the server): at most {max(room, 0)}; raise the limit (ulimit -n) or "
            "ask for fewer"
        )
    return max_connections


def _raw_response(status: int, reason: str, detail: str) -> bytes:
    body = json.dumps({"detail": detail}).encode()
    head = f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\nconnection: close\r\n"
    return f"{head}content-length: {len(body)}\r\n\r\n".encode("latin-1") + body


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline per request and a cap on connections (see `uvicorn_config`); its
    settings are class attributes, set by `guarded_protocol`.
    """

    request_timeout: float = REQUEST_TIMEOUT
    max_connections: int = MAX_CONNECTIONS
    refusals: OncePerInterval
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # noqa: D102
        super().connection_made(transport)
        if len(self.connections) <= self.max_connections:
            self._arm()
            return
        if (held := self.refusals()) is not None:
            more = f"; {held} more refused since the last report" if held else ""
            limit = self.max_connections
            logger.warning(
                "connect4 serve-openenv: at most %d connections at once: a new one is refused (503)%s",
                limit,
                more,
            )
        detail = f"too many connections: at most {self.max_connections} at once; try again later"
        transport.write(_raw_response(503, "Service Unavailable", detail))
        transport.close()

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.request_timeout, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self.conn.their_state is h11.IDLE and (self.cycle is None or self.cycle.response_complete):
            detail = f"the request did not arrive within {self.request_timeout:g} s: the connection is closed"
            self.transport.write(_raw_response(408, "Request Timeout", detail))  # no request was under way
        self.transport.close()

    def _check_request(self) -> None:
        if self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
            self._disarm()  # the whole request arrived: the app's time is not the client's

    def data_received(self, data: bytes) -> None:  # noqa: D102
        super().data_received(data)
        self._check_request()

    def handle_websocket_upgrade(self, event: h11.Request) -> None:  # noqa: D102
        self._disarm()  # the WebSocket's session has its own timeout
        super().handle_websocket_upgrade(event)

    def on_response_complete(self) -> None:  # noqa: D102
        if not self.transport.is_closing():
            self._arm()  # the next request's clock starts now
        super().on_response_complete()
        if self.transport.is_closing():
            self._disarm()
        else:
            self._check_request()  # a pipelined request may have arrived whole already

    def connection_lost(self, exc: Exception | None) -> None:  # noqa: D102
        self._disarm()
        super().connection_lost(exc)


def guarded_protocol(request_timeout: float, max_connections: int) -> type[GuardedH11Protocol]:
    """`GuardedH11Protocol` with these settings, for `uvicorn.Config(http=...)`."""
    settings = {
        "request_timeout": request_timeout,
        "max_connections": max_connections,
        "refusals": OncePerInterval(),
    }
    return type("GuardedH11Protocol", (GuardedH11Protocol,), settings)


def uvicorn_config(
    app: Any, *, request_timeout: float, max_connections: int | None, max_sessions: int, **options: Any
) -> uvicorn.Config:
    """Uvicorn's config for `app` (`options` are uvicorn's) with these limits, and `QuietLog` installed: a
    request's headers and body must arrive within `request_timeout` seconds of the connection's start or the
    previous response (else 408, when none was under way, and the connection is closed; the app's time and an
    open WebSocket do not count), and a connection past `max_connections` at once, HTTP and WebSocket together,
    is answered 503 and closed, with a log line at most once a minute (see `connection_limit` for the default).

    Raises:
        TypeError: `request_timeout` or `max_connections` of the wrong type.
        ValueError: a `request_timeout` that is not a number above 0 and at most `REQUEST_TIMEOUT_CEILING` (an
            hour), or a `max_connections` that does not fit (see `connection_limit`).
    """
    timeout = check_number("request_timeout", request_timeout, 0, REQUEST_TIMEOUT_CEILING, above_minimum=True)
    if max_connections is not None:
        check_int("max_connections", max_connections)
    files = file_limit()
    protocol = guarded_protocol(timeout, connection_limit(max_connections, max_sessions, files))
    install_log_filters(files)
    return uvicorn.Config(app, http=protocol, lifespan="on", **options)


def bind_server(
    host: str, port: int, config: Callable[[tuple[str, ...] | None], uvicorn.Config]
) -> tuple[uvicorn.Server, socket.socket, str]:
    """A uvicorn server, its socket bound and listening (connections wait in the backlog until it runs): the
    servers of `connect4 serve-openenv` and `connect4 serve-grader`, without loading OpenEnv. ``config(hosts)``
    builds the server's config (its app and `uvicorn_config`'s limits) once the socket is bound: bound to a
    loopback address, ``hosts`` are the names the app may answer to (a loopback name, `host` or that address);
    otherwise None (any `Host`). `port=0` picks a free port.

    Returns:
        `(server, sock, url)`: run it with `run_server`, or `server.run(sockets=[sock])` (stop it with
        `server.should_exit = True`) and then close `sock`; `url` is `http://host:port` with the port bound.

    Raises:
        OSError: the address cannot be bound (a host name that does not resolve is named).
        TypeError: `host` is not a str; what ``config`` raises.
        ValueError: what ``config`` raises (bad app arguments or limits, see `uvicorn_config`).
    """
    if not isinstance(host, str):
        raise TypeError(f"host must be a str such as '127.0.0.1', got {host!r:.80} ({type(host).__name__})")
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
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
        built = config((*LOOPBACK_HOSTS, host, address) if loopback else None)
        sock.listen(128)  # connections made from now on wait in the backlog until uvicorn accepts them
    except BaseException:
        sock.close()
        raise
    shown = f"[{host}]" if ":" in host else host
    return uvicorn.Server(built), sock, f"http://{shown}:{bound_port}"


def run_server(
    server: uvicorn.Server, sock: socket.socket, url: str, on_ready: Callable[[str], None] | None = None
) -> None:
    """Run `bind_server`'s server until interrupted (Ctrl-C or SIGTERM stop it cleanly), calling
    ``on_ready(url)`` first; the socket is closed at the end, whatever happens.
    """
    try:
        if on_ready is not None:
            on_ready(url)
        server.run(sockets=[sock])
    finally:
        sock.close()
