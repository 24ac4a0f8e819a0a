"""The `/ws` route of `connect4 serve-openenv`: OpenEnv's WebSocket session protocol, served with limits that
hold (the `openenv` extra).

Each connection is one session with its own game, as OpenEnv's `EnvClient` expects. The client sends JSON
objects `{"type": "reset", "data": {"seed": 0}}` (the fields of
`connect4_env.integrations.openenv.environment.RESET_FIELDS`: `seed`, `episode_id` and the dialect options,
as OpenEnv's `reset(**kwargs)` sends them), `{"type": "step", "data": {"message": "4"}}`, `{"type": "state"}`
or `{"type": "close"}`; the server answers each with `{"type": "observation", "data":
{"observation": ..., "reward": ..., "done": ...}}`, `{"type": "state", "data": ...}` or `{"type": "error",
"data": {"message": ..., "code": ...}}` (OpenEnv's error codes). Whatever a frame holds (no JSON, JSON that is
not an object, a binary frame, JSON nested too deep, an unknown type, a bad action, a step with no game), the
answer is an error frame and the session goes on, its game as it was.

The connection is closed by the server:

| when | close code |
|---|---|
| the client sent `close` | 1000 |
| the client sent nothing for `timeout` seconds (the session's game is dropped) | 1001 |
| an answer could not be sent for `timeout` seconds: the client stopped reading (the game is dropped) | 1001 |
| `session_id` in the URL (this server opens a game per connection; it attaches to none) | 1008 |
| a text frame that is not UTF-8 (by uvicorn, as the WebSocket protocol requires; one line in the log) | 1007 |
| a frame over the server's hard size limit (by uvicorn, before the app reads it) | 1009 |
| no session could be opened: too many games, or too many new ones (after an error frame) | 1013 |
| the game could not be built (after an error frame) | 1011 |

A client that leaves while its request is being answered costs one line in the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Mapping
from typing import Any

from fastapi import WebSocket
from openenv.core.env_server import serialize_observation
from pydantic import ValidationError
from starlette.websockets import WebSocketDisconnect

from connect4_env.integrations.openenv.environment import (
    RESET_FIELDS,
    Connect4TextAction,
    Connect4TextEnvironment,
    NoGameError,
)
from connect4_env.integrations.openenv.guards import MAX_JSON_DEPTH, json_depth
from connect4_env.integrations.openenv.sessions import SessionLimitError, Sessions

__all__ = ["serve_websocket", "read_frame", "FrameError"]

logger = logging.getLogger(__name__)

MESSAGE_TYPES = ("reset", "step", "state", "close")


class FrameError(ValueError):
    """A frame answered with an error frame instead of a reply.

    Attributes:
        code: OpenEnv's error code (`INVALID_JSON`, `UNKNOWN_TYPE`, `VALIDATION_ERROR`).
        errors: for an invalid action, pydantic's errors as `{"loc", "msg", "type"}` objects (at most 5).
    """

    def __init__(self, message: str, code: str, errors: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.errors = errors


def _error(message: str, code: str, errors: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"message": message, "code": code}
    if errors is not None:
        data["errors"] = errors
    return {"type": "error", "data": data}


def read_frame(message: Mapping[str, Any], max_bytes: int) -> tuple[str, dict[str, Any]]:
    """A received WebSocket frame as `(type, data)`, checked in the order that bounds the work.

    Args:
        message: the ASGI `websocket.receive` message.
        max_bytes: the largest text frame read.

    Returns:
        The message type (one of `reset`, `step`, `state`, `close`) and its `data` object (`{}` when absent).

    Raises:
        FrameError: the frame is binary, too long, not JSON, nested deeper than `MAX_JSON_DEPTH`, not an object,
            of no known type, or its `data` is not an object.
    """
    text = message.get("text")
    if text is None:
        raise FrameError("binary frames are not read: send a JSON object as a text frame", "INVALID_JSON")
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise FrameError(f"message too large: {size} bytes, at most {max_bytes}", "INVALID_JSON")
    if json_depth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        raise FrameError(
            f"Invalid JSON: nested deeper than {MAX_JSON_DEPTH} levels of arrays and objects", "INVALID_JSON"
        )
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise FrameError(f"Invalid JSON: {str(error)[:200]}", "INVALID_JSON") from None
    if not isinstance(value, dict):
        raise FrameError(
            f'expected a JSON object such as {{"type": "step", "data": {{"message": "4"}}}}, got '
            f"{type(value).__name__ if value is not None else 'null'}",
            "INVALID_JSON",
        )
    kind = value.get("type")
    if kind not in MESSAGE_TYPES:
        shown = repr(kind)[:80] if isinstance(kind, str) else type(kind).__name__
        raise FrameError(
            f"Unknown message type: {shown}; expected one of {', '.join(MESSAGE_TYPES)}", "UNKNOWN_TYPE"
        )
    data = value.get("data")
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FrameError(f"data must be a JSON object, got {type(data).__name__}", "VALIDATION_ERROR")
    return kind, data


def _reset_arguments(data: dict[str, Any]) -> dict[str, Any]:
    """The reset's arguments: only the fields reset takes (their values are checked by the environment)."""
    unknown = sorted(set(data) - set(RESET_FIELDS))
    if unknown:
        shown = ", ".join(repr(name)[:40] for name in unknown[:5])
        raise FrameError(f"reset takes {', '.join(RESET_FIELDS)}; got {shown}", "VALIDATION_ERROR")
    return {name: data[name] for name in RESET_FIELDS if name in data}


def _action(data: dict[str, Any]) -> Connect4TextAction:
    try:
        return Connect4TextAction.model_validate(data)
    except ValidationError as error:
        problems = [
            {"loc": [str(part) for part in problem["loc"]], "msg": problem["msg"], "type": problem["type"]}
            for problem in error.errors()[:5]
        ]
        shown = "; ".join(f"{'.'.join(p['loc']) or 'action'}: {p['msg']}" for p in problems)
        message = f'Invalid action: {shown} (expected {{"message": "<answer>"}})'
        raise FrameError(message, "VALIDATION_ERROR", problems) from None


async def _answer(env: Connect4TextEnvironment, kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """The reply to one checked message (not `close`)."""
    try:
        if kind == "reset":
            arguments = _reset_arguments(data)
            observation = await asyncio.to_thread(env.reset, **arguments)
            return {"type": "observation", "data": serialize_observation(observation)}
        if kind == "step":
            action = _action(data)
            observation = await asyncio.to_thread(env.step, action)
            return {"type": "observation", "data": serialize_observation(observation)}
        return {"type": "state", "data": env.state.model_dump()}
    except FrameError as bad:
        return _error(str(bad), bad.code, bad.errors)
    except (NoGameError, TypeError, ValueError) as error:
        code = "VALIDATION_ERROR" if kind == "reset" else "EXECUTION_ERROR"
        return _error(str(error), code)
    except Exception as error:  # the game failed (an opponent that cannot move): the client hears why
        logger.error("connect4 serve-openenv: a %s failed: %s: %s", kind, type(error).__name__, error)
        return _error(
            f"the server could not play this {kind}: {type(error).__name__}: {error}", "EXECUTION_ERROR"
        )


class _SendTimeout(Exception):
    """A frame not sent within the session's timeout: the client stopped reading."""


async def _send(websocket: WebSocket, payload: dict[str, Any], timeout: float) -> bool:
    """Send a JSON frame within `timeout` seconds; False when the client has gone.

    Raises:
        _SendTimeout: the frame was not sent in time (a client that stopped reading fills the buffers, and the
            send would wait for it for ever).
    """
    try:
        await asyncio.wait_for(websocket.send_text(json.dumps(payload)), timeout)
        return True
    except asyncio.TimeoutError:
        raise _SendTimeout from None
    except (WebSocketDisconnect, OSError, RuntimeError):
        return False


async def _refuse(
    websocket: WebSocket, timeout: float, frame: dict[str, Any], code: int, reason: str
) -> None:
    """Send the error `frame`, then close with `code` (unless the client has gone or does not read)."""
    try:
        sent = await _send(websocket, frame, timeout)
    except _SendTimeout:
        sent = False
    await _close(websocket, code, reason if sent else "the client stopped reading")


async def _close(websocket: WebSocket, code: int, reason: str) -> None:
    with contextlib.suppress(WebSocketDisconnect, OSError, RuntimeError):  # the client may have gone already
        await websocket.close(code=code, reason=reason)


async def serve_websocket(
    websocket: WebSocket, sessions: Sessions[Connect4TextEnvironment], max_bytes: int
) -> None:
    """Play one connection's session until the client closes it, leaves, or stays idle for
    `sessions.timeout` seconds (see the module docstring for the protocol and the close codes).

    Args:
        websocket: the connection, not yet accepted.
        sessions: the server's games (the connection's counts among them while it lasts).
        max_bytes: the largest text frame read (a longer one gets an error frame).
    """
    await websocket.accept()
    requested = websocket.query_params.get("session_id")
    if requested is not None:
        refusal = (
            f"Unknown session_id: {requested[:64]}: this server opens a new game for each connection; "
            "connect to /ws without session_id"
        )
        await _refuse(
            websocket, sessions.timeout, _error(refusal, "SESSION_ERROR"), 1008, "unknown session_id"
        )
        return
    try:
        session = await asyncio.to_thread(sessions.open, "ws")
    except SessionLimitError as refused:
        frame = _error(str(refused), "CAPACITY_REACHED")
        await _refuse(websocket, sessions.timeout, frame, 1013, "too many sessions: try again later")
        return
    except Exception as error:  # the game could not be built
        logger.error("connect4 serve-openenv: a new game failed: %s: %s", type(error).__name__, error)
        frame = _error(f"the server could not start a game: {error}", "FACTORY_ERROR")
        await _refuse(websocket, sessions.timeout, frame, 1011, "the server could not start a game")
        return
    env = session.game
    assert env is not None  # open() returns the session with its game built
    try:
        while True:
            try:
                message = await asyncio.wait_for(websocket.receive(), sessions.timeout)
            except asyncio.TimeoutError:
                await _close(websocket, 1001, f"idle for {sessions.timeout:g} s: the session is closed")
                return
            except (WebSocketDisconnect, OSError, RuntimeError):
                return
            if message["type"] == "websocket.disconnect":
                return
            try:
                kind, data = read_frame(message, max_bytes)
            except FrameError as bad:
                reply = _error(str(bad), bad.code)
            else:
                if kind == "close":
                    await _close(websocket, 1000, "closed by the client")
                    return
                reply = await _answer(env, kind, data)
            try:
                sent = await _send(websocket, reply, sessions.timeout)
            except _SendTimeout:
                logger.warning(
                    "connect4 serve-openenv: a client read no answer for %g s; its session is closed",
                    sessions.timeout,
                )
                sessions.close(session.session_id)  # now: closing the connection may wait a while longer
                await _close(websocket, 1001, "the client stopped reading: the session is closed")
                return
            if not sent:
                logger.warning(
                    "connect4 serve-openenv: a client left before the answer to its message was sent; "
                    "its session is closed"
                )
                return
    finally:
        sessions.close(session.session_id)
