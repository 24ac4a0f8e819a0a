"""The `/mcp` route of `connect4 serve-openenv` (the `openenv` extra): one job, a stateless MCP endpoint.

`openenv validate --url` requires `POST /mcp` to answer JSON-RPC 2.0. OpenEnv's own `/mcp` opened a session per
request, past the server's limits; this one holds nothing between requests: it answers `initialize`, `ping` and
`tools/list` (no tools: the game is played over `/ws` or `/sessions`) and an error for anything else. It sits
behind the same guards as every route (`Host` and `Origin` checked, the body's size and nesting bounded).
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

__all__ = ["add_mcp_route", "mcp_answer", "MCP_PROTOCOL_VERSION"]

MCP_PROTOCOL_VERSION = "2025-06-18"
"""The MCP revision `/mcp` answers `initialize` with."""
_MCP_HINT = "this server has no MCP tools: play Connect4Text over /ws (OpenEnv's clients) or /sessions"


def _rpc_error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def mcp_answer(message: Any) -> dict[str, Any] | None:
    """The JSON-RPC answer of the stateless `/mcp` to one decoded message.

    Returns:
        `initialize`'s, `ping`'s or `tools/list`'s result (no tools), a JSON-RPC error for any other method
        (-32601) or a message that is not one JSON-RPC 2.0 request (-32600; batches included), or None for a
        notification (no `id`).
    """
    if not isinstance(message, dict):
        kind = "a batch" if isinstance(message, list) else type(message).__name__
        return _rpc_error(None, -32600, f"Invalid Request: expected one JSON-RPC 2.0 object, got {kind}")
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int, type(None))):
        return _rpc_error(None, -32600, "Invalid Request: id must be a string or an integer")
    method = message.get("method")
    if message.get("jsonrpc") != "2.0" or not isinstance(method, str):
        return _rpc_error(
            request_id, -32600, 'Invalid Request: expected {"jsonrpc": "2.0", "method": "...", "id": ...}'
        )
    if "id" not in message:  # a notification (notifications/initialized): nothing to answer
        return None
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": MCP_PROTOCOL_VERSION,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "connect4_text", "version": "1"},
            "instructions": _MCP_HINT,
        }
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = {"tools": []}
    else:
        return _rpc_error(request_id, -32601, f"Method not found: {method[:60]!r}; {_MCP_HINT}")
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def add_mcp_route(app: FastAPI) -> None:
    """Serve `POST /mcp` on `app`: each message answered by
    [`mcp_answer`][connect4_env.integrations.openenv.mcp_endpoint.mcp_answer] (a body that is not JSON: a parse
    error), a notification with 202 and no body.
    """

    @app.post("/mcp", tags=["MCP"])
    async def mcp(request: Request) -> Response:
        body = await request.body()  # BodyLimit has bounded its size and its nesting
        try:
            message = json.loads(body)
        except (ValueError, RecursionError):
            return JSONResponse(_rpc_error(None, -32700, "Parse error: the body is not JSON"))
        answer = mcp_answer(message)
        return Response(status_code=202) if answer is None else JSONResponse(answer)
