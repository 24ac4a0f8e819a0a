"""What a network client may send to `connect4 serve-openenv`, checked before the app sees it: two ASGI
middlewares (the `openenv` extra's server; this module itself needs only the standard library).

- [`BodyLimit`][connect4_env.integrations.openenv.guards.BodyLimit]: an HTTP body is at most `limit` bytes (413) and its
  JSON nests at most [`MAX_JSON_DEPTH`][connect4_env.integrations.openenv.guards.MAX_JSON_DEPTH] levels (400).
- [`body_limit`][connect4_env.integrations.openenv.guards.body_limit]: the size that `limit` follows by default,
  so that any answer of the server's `max_answer_length` characters gets through, however its JSON escapes it.
- [`HostCheck`][connect4_env.integrations.openenv.guards.HostCheck]: every request, HTTP or WebSocket, names an allowed
  `Host` (when the server listens on a loopback address: a page that rebinds its own DNS name to 127.0.0.1
  reaches the server under that name, and is refused), and comes from no other web page: a request with an
  `Origin` header (which browsers add to cross-site requests, WebSocket handshakes included) is refused unless
  that origin is the server's own or one allowed by name (403).

Refusals are JSON, `{"detail": "<what was wrong>"}`; a refused WebSocket handshake gets the same answer as an
HTTP response where the server supports it (uvicorn does), else the handshake is closed (code 1008).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from typing import Any
from urllib.parse import urlsplit

from connect4_env.envs.dialects import MAX_ANSWER_LENGTH as MAX_ANSWER_LENGTH  # the servers' default

__all__ = [
    "BodyLimit",
    "HostCheck",
    "json_depth",
    "split_authority",
    "MAX_JSON_DEPTH",
    "LOOPBACK_HOSTS",
    "DRAIN_BYTES",
    "BYTES_PER_CHARACTER",
    "FRAME_BYTES",
    "body_limit",
    "smallest_body_limit",
]

MAX_JSON_DEPTH = 32
"""The most levels a request's JSON may nest: our messages nest 3 (``{"action": {"message": ...}}``), OpenEnv's
action metadata may add a few."""
# The names a browser uses for a server on a loopback address.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
DRAIN_BYTES = 1 << 20
"""A refused body is read and dropped up to this many bytes, so that the client can read the 413; a longer one
is cut off."""

# MAX_ANSWER_LENGTH (imported above) is the server's default `max_answer_length`, in characters: the text env's
# and TextPolicy's too (see connect4_env.envs.text_protocol); longer answers are rejected under the dialect's rule.
BYTES_PER_CHARACTER = 12
"""The most bytes one answer character takes in a JSON message: Python's `json.dumps` (what OpenEnv's client
sends) writes a character outside ASCII as `\\uXXXX`, and one outside the Basic Multilingual Plane (an emoji)
as two of them."""
FRAME_BYTES = 4096
"""Room for the JSON around an answer: the frame's type, the action's `metadata`, a reset's fields."""

_JSON_TOKENS = re.compile(r'["\\\[\]{}]')


def json_depth(text: str | bytes, limit: int | None = None) -> int:
    """How deeply arrays and objects nest in `text` (0 for a scalar), in one pass and without parsing.

    Brackets inside strings do not count. Any text gives a number (never an error), so a nesting limit can be
    checked before a parser that recurses once per level is given the text.

    Args:
        text: JSON, as `str` or as UTF-8 `bytes`.
        limit: stop reading once the depth passes this (the answer is then `limit + 1`).

    Returns:
        The deepest nesting found.
    """
    if isinstance(text, bytes):
        text = text.decode("latin-1")  # byte for byte: a UTF-8 sequence holds no ASCII byte
    depth = deepest = 0
    in_string = False
    escaped_at = -1
    for match in _JSON_TOKENS.finditer(text):
        at = match.start()
        if at == escaped_at:  # the character after a backslash inside a string
            continue
        char = match.group()
        if in_string:
            if char == "\\":
                escaped_at = at + 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if limit is not None and deepest > limit:
                    return deepest
        elif char in "]}":
            depth -= 1
    return deepest


def body_limit(max_answer_length: int) -> int:
    """The `max_body_bytes` that follows from `max_answer_length`: room for any answer of that many characters,
    however JSON escapes it (`BYTES_PER_CHARACTER` each), and `FRAME_BYTES` around it.

    Raises:
        TypeError: `max_answer_length` is not an integer.
        ValueError: `max_answer_length` below 1.
    """
    max_answer_length = _positive("max_answer_length", max_answer_length)
    return BYTES_PER_CHARACTER * max_answer_length + FRAME_BYTES


def smallest_body_limit(max_answer_length: int) -> int:
    """The least `max_body_bytes` a server takes for `max_answer_length`: room for an answer of that many ASCII
    characters and `FRAME_BYTES` around it. Between this and
    [`body_limit`][connect4_env.integrations.openenv.guards.body_limit], an answer under the length cap whose
    JSON escapes many characters can be refused for its size (413, or an error frame) before it is read.

    Raises:
        TypeError: `max_answer_length` is not an integer.
        ValueError: `max_answer_length` below 1.
    """
    max_answer_length = _positive("max_answer_length", max_answer_length)
    return max_answer_length + FRAME_BYTES


def _positive(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an integer >= 1, got {value!r:.80} ({type(value).__name__})")
    if value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value}")
    return value


def split_authority(authority: str) -> tuple[str | None, str | None]:
    """The host and port of a `Host` header or a URL's authority (`"[::1]:8000"` -> `("::1", "8000")`), the
    host in lower case without a final dot.

    Returns:
        `(host, port)`: the port None when absent; both None for text that names no host and port.
    """
    authority = authority.strip().lower()
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            return None, None
        name, rest = authority[1:end], authority[end + 1 :]
    else:
        name, colon, port = authority.partition(":")
        rest = colon + port
    if rest and not (rest.startswith(":") and rest[1:].isdigit()):
        return None, None
    name = name.rstrip(".")
    return (name or None), (rest[1:] or None) if name else None


async def _refuse(
    scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any], status: int, detail: str
) -> None:
    """Answer `status` with `{"detail": detail}`: an HTTP response, or a refused WebSocket handshake."""
    payload = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    if scope["type"] == "http":
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [*headers, (b"connection", b"close")],
            }
        )
        await send({"type": "http.response.body", "body": payload})
        return
    message = await receive()  # the handshake's websocket.connect
    if message["type"] != "websocket.connect":
        return
    if "websocket.http.response" in scope.get("extensions", {}):
        await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": payload})
    else:
        await send({"type": "websocket.close", "code": 1008, "reason": detail[:120]})


class BodyLimit:
    """ASGI middleware: an HTTP body longer than `limit` bytes is answered 413 without being kept (up to
    [`DRAIN_BYTES`][connect4_env.integrations.openenv.guards.DRAIN_BYTES] of it is read and dropped first, so the client
    gets the answer), and one whose JSON nests deeper than `max_depth` levels is answered 400.
    """

    def __init__(self, app: Any, limit: int, max_depth: int = MAX_JSON_DEPTH) -> None:
        self.app = app
        self.limit = limit
        self.max_depth = max_depth

    async def __call__(
        self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]
    ) -> None:
        """Handle one ASGI connection: an HTTP request whose body is longer than ``limit`` bytes (declared
        or read) is answered 413 and one whose JSON nests deeper than ``max_depth`` is answered 400, neither
        reaching the app; an accepted body is handed to the app whole, and other connections pass unchanged.
        """
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            if declared.isdigit() and int(declared) <= DRAIN_BYTES:
                await self._drain(receive)
            await self._refuse_size(send)
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
                await self._refuse_size(send)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if json_depth(body, self.max_depth) > self.max_depth:
            detail = (
                f"request body nested too deep: JSON of at most {self.max_depth} levels of arrays and objects"
            )
            await _refuse(scope, receive, send, 400, detail)
            return
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
        """Read and drop the rest of a refused body, up to `DRAIN_BYTES` in all: a server that closes the
        connection with a body still unread resets it, and the client never reads the 413.
        """
        while size <= DRAIN_BYTES:
            message = await receive()
            if message["type"] != "http.request":
                return
            size += len(message.get("body", b""))
            if not message.get("more_body", False):
                return

    async def _refuse_size(self, send: Callable[..., Any]) -> None:
        await _refuse(
            {"type": "http"}, _nothing, send, 413, f"request body too large: at most {self.limit} bytes"
        )


async def _nothing() -> dict[str, Any]:
    return {"type": "http.disconnect"}


class HostCheck:
    """ASGI middleware: HTTP requests and WebSocket handshakes must name an allowed `Host` and come from no
    other web page (403 otherwise).

    Args:
        app: the ASGI app behind it.
        allowed_hosts: the host names and addresses the server answers to (`Host` header, any port), or None
            to answer any (a server on every interface cannot know its names).
        allowed_origins: web origins (`"http://127.0.0.1:3000"`) whose pages may use the server besides its
            own (a request whose `Origin` names the host and port it was sent to).
    """

    def __init__(
        self, app: Any, allowed_hosts: Collection[str] | None, allowed_origins: Collection[str] = ()
    ) -> None:
        self.app = app
        self.allowed_hosts = (
            None
            if allowed_hosts is None
            else {h.strip().lower().strip("[]").rstrip(".") for h in allowed_hosts}
        )
        self.allowed_origins = {origin.rstrip("/").lower() for origin in allowed_origins}

    def refusal(self, host: str | None, origin: str | None) -> str | None:
        """Why a request with these `Host` and `Origin` headers is refused, or None when it is not.

        Returns:
            The reason, naming the header and what is allowed; None for an allowed request.
        """
        if self.allowed_hosts is not None:
            name = split_authority(host)[0] if host is not None else None
            if name is None or name not in self.allowed_hosts:
                shown = "no Host header" if host is None else f"Host {host[:100]!r}"
                return (
                    f"{shown} is not served here: this server listens on a loopback address and answers requests "
                    f"to {', '.join(sorted(self.allowed_hosts))} only"
                )
        if origin is None or origin.rstrip("/").lower() in self.allowed_origins:
            return None
        parts = urlsplit(origin.strip())
        if host is not None and parts.scheme in ("http", "https"):
            default = "443" if parts.scheme == "https" else "80"
            origin_host, origin_port = split_authority(parts.netloc)
            request_host, request_port = split_authority(host)
            if origin_host is not None and (origin_host, origin_port or default) == (
                request_host,
                request_port or default,
            ):
                return None  # a page this server served itself (its /docs)
        return (
            f"Origin {origin[:100]!r} may not use this server: requests from other web pages are refused "
            "(allow one with --allow-origin)"
        )

    async def __call__(
        self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]
    ) -> None:
        """Handle one ASGI connection: an HTTP request or WebSocket handshake that
        [`refusal`][connect4_env.integrations.openenv.guards.HostCheck.refusal] refuses is answered 403 with
        the reason and never reaches the app; everything else passes unchanged.
        """
        if scope["type"] in ("http", "websocket"):
            headers = {name: value.decode("latin-1") for name, value in scope.get("headers") or []}
            reason = self.refusal(headers.get(b"host"), headers.get(b"origin"))
            if reason is not None:
                await _refuse(scope, receive, send, 403, reason)
                return
        await self.app(scope, receive, send)
