"""Moves and answers graded by perfect play over HTTP, for trainers in other processes (env side:
integrations/openenv/, whose limits it shares).

`connect4 serve-grader` serves this app. Every route is stateless; a position is its moves from the empty
board, 0-based columns, on a board the solver rubric grades (6x7 with the opening book, or at most 30 cells):

| route | body | answer |
|---|---|---|
| `GET /health` | | the boards, the dialects, the reward scale and the limits |
| `POST /scores` | `{"rows", "columns", "win_length", "items": [{"moves": [3, 3], "column": 2}, ...]}` | per item: every column's exact score and dense rank, and the move's grade when `column` is given |
| `POST /grade` | `{"rows", "columns", "win_length", "dialect": "connect4", "items": [{"moves": [...], "answer": "..."}, ...]}` | per item: the column read (or the dialect's error), the reward, and the grade |

`rows`, `columns` and `win_length` default to 6, 7 and 4. A grade is
[`MoveGrade`][connect4_agents.evaluation.rewards.MoveGrade]'s fields: `verdict`, `reward`, `rank`, `top3`,
`classes_lost`. An answer the dialect rejects gets the dialect's `rejected_answer_reward` (-1).

The limits are the OpenEnv server's (`connect4_env.integrations.openenv.hardening`, `.connections`): the Host and
Origin checks, a body bound (room for `max_items` answers of `max_answer_length` characters) and its JSON's
nesting, a deadline for each request to arrive and a cap on connections. Besides them: at most `max_items` items a
request, at most `max_pending` requests graded or waiting at once (one more is answered 503 with `Retry-After`),
and `grade_timeout` seconds of grading a request (past it, 503; the item under way finishes, the rest are not
graded, and the request's place is given back only then). Positions are solved one at a time, by the process's
shared rubric for their board, which the first request on a board builds in its own thread, not the event
loop's (counted in its place and its `grade_timeout`); a request on a board already built does not queue
behind that build. The solver's compiled search runs without Python's lock, so the event loop answers other
requests during a solve. Each solve is bounded by the boards graded (6x7 with the book: at most about a
second, the p99 a fraction of that; any other board's empty position within `REWARD_NODES` nodes, checked,
and refused for good, 422, at the first request on it), not by `grade_timeout`. The server is bound and run as
the OpenEnv server is (`connect4_env.integrations.openenv.connections.bind_server`), without loading OpenEnv.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, field_validator

from connect4_agents.evaluation.rewards import (
    REJECTED_ANSWER_REWARD,
    REWARD_CELLS,
    REWARD_SCALE,
    MoveGrade,
    SolverRubric,
    reward_supported,
    score_ranks,
    solver_rubric,
    unsupported_board,
)
from connect4_agents.interop.grader_limits import (
    ANSWER_LENGTH,
    ANSWER_LENGTH_CEILING,
    GRADE_TIMEOUT,
    GRADE_TIMEOUT_CEILING,
    ITEMS_CEILING,
    MAX_ITEMS,
    MAX_PENDING,
    PENDING_CEILING,
)
from connect4_env.core import Board
from connect4_env.envs.dialects import DIALECTS, get_dialect
from connect4_env.integrations.openenv import hardening
from connect4_env.rules import Rules
from connect4_env.validation import check_int, check_number

__all__ = [
    "create_grader_app",
    "build_grader_server",
    "serve_grader",
]

_MOST_MOVES = 42  # the most moves of a position on any board graded (6x7)


class _Board(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rows: StrictInt = Field(6, ge=1, le=64)
    columns: StrictInt = Field(7, ge=1, le=64)
    win_length: StrictInt = Field(4, ge=1, le=64)


class _ScoreItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    moves: list[StrictInt] = Field(max_length=_MOST_MOVES)
    column: StrictInt | None = None


class _AnswerItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    moves: list[StrictInt] = Field(max_length=_MOST_MOVES)
    answer: StrictStr


class ScoresRequest(_Board):
    """`POST /scores`'s body."""

    items: list[_ScoreItem] = Field(min_length=1)


class GradeRequest(_Board):
    """`POST /grade`'s body."""

    dialect: StrictStr = "connect4"
    items: list[_AnswerItem] = Field(min_length=1)

    @field_validator("dialect")
    @classmethod
    def _known(cls, name: str) -> str:
        if name not in DIALECTS:
            raise ValueError(f"unknown dialect {name[:40]!r}; known: {', '.join(DIALECTS)}")
        return name


class _Refused(Exception):
    """A request the grader answers with an error status and a reason."""

    def __init__(self, status: int, detail: str, retry_after: float | None = None) -> None:
        super().__init__(detail)
        self.status, self.detail, self.retry_after = status, detail, retry_after


def _grade_dict(grade: MoveGrade) -> dict[str, Any]:
    return {
        "verdict": grade.verdict,
        "reward": grade.reward,
        "rank": grade.rank,
        "top3": grade.top3,
        "classes_lost": grade.classes_lost,
    }


def _rules_of(request: _Board) -> Rules:
    """The request's board, refused (422) unless the solver rubric grades it: cheap, on the event loop."""
    try:
        rules = Rules(request.rows, request.columns, request.win_length)
    except ValueError as error:
        raise _Refused(422, str(error)) from None
    if not reward_supported(rules):
        raise _Refused(422, f"the grader answers {unsupported_board(rules)}")
    return rules


def _rubric(rules: Rules) -> SolverRubric:
    """The shared rubric of ``rules``, in a request's thread: the first request on a board builds it (its empty
    board solved within REWARD_NODES); a board refused is 422.
    """
    try:
        return solver_rubric(rules)
    except ValueError as error:
        raise _Refused(422, str(error)) from None


def _board(rules: Rules, moves: list[int], item: int) -> Board:
    board = Board(rules)
    for ply, column in enumerate(moves):
        if not 0 <= column < rules.columns or not board.is_legal(column):
            why = "off the board" if not 0 <= column < rules.columns else "a full column, or the game is over"
            raise _Refused(
                422, f"items[{item}].moves[{ply}] = {column}: {why} (columns are 0..{rules.columns - 1})"
            )
        board.play(column)
    if board.is_terminal:
        raise _Refused(422, f"items[{item}].moves: the game is over after them: there is no move to grade")
    return board


class _Gate:
    """At most ``limit`` requests graded or waiting at once, each for at most ``timeout`` seconds."""

    def __init__(self, limit: int, timeout: float) -> None:
        self.limit, self.timeout, self.pending = limit, timeout, 0
        self._lock = threading.Lock()

    async def run(self, work: Any, *args: Any) -> Any:
        """``work(stop, *args)`` in a thread; ``stop`` is set when the deadline passes (the item under way ends).

        Raises:
            _Refused: 503 when ``limit`` requests are under way, or when the deadline passed.
        """
        with self._lock:
            if self.pending >= self.limit:
                raise _Refused(
                    503, f"busy: {self.limit} requests are being graded; try again", retry_after=1.0
                )
            self.pending += 1
        stop = threading.Event()
        # the place is given back when the thread ends, not at the deadline: a solve under way is not interrupted
        future = asyncio.ensure_future(asyncio.to_thread(work, stop, *args))
        future.add_done_callback(lambda _: self._release())
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.timeout)
        except asyncio.TimeoutError:
            stop.set()
            raise _Refused(
                503,
                f"grading took more than {self.timeout:g} s: send fewer items (a board's first request also "
                "solves its empty board)",
            ) from None

    def _release(self) -> None:
        with self._lock:
            self.pending -= 1


def _scores_work(
    stop: threading.Event,
    rules: Rules,
    boards: list[Board],
    columns: list[int | None],
) -> list[dict[str, Any]]:
    rubric, results = _rubric(rules), []
    for board, column in zip(boards, columns):
        if stop.is_set():
            break
        exact = rubric.scores(board)
        result: dict[str, Any] = {"scores": list(exact), "ranks": score_ranks(exact)}
        if column is not None:
            result["grade"] = _grade_dict(rubric.grade(board, column))
        results.append(result)
    return results


def _grade_work(
    stop: threading.Event,
    rules: Rules,
    boards: list[Board],
    answers: list[str],
    dialect: Any,
    max_length: int,
) -> list[dict[str, Any]]:
    rubric, results = _rubric(rules), []
    rejected = float(getattr(dialect, "rejected_answer_reward", REJECTED_ANSWER_REWARD))
    for board, answer in zip(boards, answers):
        if stop.is_set():
            break
        parsed = dialect.parse(answer, board, max_length)
        if parsed.column is None or parsed.error is not None:
            results.append({"column": None, "error": parsed.error, "reward": rejected, "grade": None})
            continue
        move = rubric.grade(board, parsed.column)
        results.append(
            {"column": parsed.column, "error": None, "reward": move.reward, "grade": _grade_dict(move)}
        )
    return results


def create_grader_app(
    *,
    max_items: int = MAX_ITEMS,
    max_answer_length: int = ANSWER_LENGTH,
    max_pending: int = MAX_PENDING,
    grade_timeout: float = GRADE_TIMEOUT,
    allowed_hosts: tuple[str, ...] | None = hardening.LOOPBACK_HOSTS,
    allowed_origins: tuple[str, ...] = (),
) -> Any:
    """The grader's ASGI app (see the module docstring): `HostCheck` around `BodyLimit` around FastAPI.

    Args:
        max_items: items a request may hold, 1..10,000.
        max_answer_length: the longest answer read, 1..1,000,000 characters; a longer one is a rejected answer.
        max_pending: requests graded or waiting at once, 1..10,000.
        grade_timeout: seconds of grading a request may take (a number above 0, at most a day).
        allowed_hosts: the host names answered (the `Host` header), or None for any.
        allowed_origins: web origins whose pages may use the grader.

    Raises:
        TypeError: an argument of the wrong type.
        ValueError: an argument out of range.
    """
    max_items = check_int("max_items", max_items, 1, ITEMS_CEILING)
    max_answer_length = check_int("max_answer_length", max_answer_length, 1, ANSWER_LENGTH_CEILING)
    max_pending = check_int("max_pending", max_pending, 1, PENDING_CEILING)
    grade_timeout = check_number("grade_timeout", grade_timeout, 0, GRADE_TIMEOUT_CEILING, above_minimum=True)
    body_bytes = max_items * (hardening.BYTES_PER_CHARACTER * max_answer_length + 64 + 4 * _MOST_MOVES) + 4096
    app = FastAPI(title="connect4 grader", description="Moves and answers graded by perfect play.")
    gate = _Gate(max_pending, grade_timeout)

    def counted(count: int) -> None:
        if count > max_items:
            raise _Refused(413, f"{count} items: at most {max_items} a request")

    @app.exception_handler(_Refused)
    async def refused(_: Any, error: _Refused) -> JSONResponse:
        headers = {"Retry-After": f"{error.retry_after:g}"} if error.retry_after is not None else None
        return JSONResponse({"detail": error.detail}, status_code=error.status, headers=headers)

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {
            "status": "ok",
            "boards": f"6x7 with four in a row (opening book installed), or at most {REWARD_CELLS} cells",
            "dialects": list(DIALECTS),
            "reward_scale": REWARD_SCALE,
            "rejected_answer_reward": REJECTED_ANSWER_REWARD,
            "limits": {
                "max_items": max_items,
                "max_answer_length": max_answer_length,
                "max_pending": max_pending,
                "grade_timeout": grade_timeout,
                "max_body_bytes": body_bytes,
            },
        }

    @app.post("/scores")
    async def scores(request: ScoresRequest) -> dict[str, Any]:
        counted(len(request.items))
        rules = _rules_of(request)
        boards = [_board(rules, item.moves, index) for index, item in enumerate(request.items)]
        columns = [item.column for item in request.items]
        for index, (board, column) in enumerate(zip(boards, columns)):
            if column is not None and not board.is_legal(column):
                raise _Refused(422, f"items[{index}].column = {column} is not a legal move there")
        return {"results": await gate.run(_scores_work, rules, boards, columns)}

    @app.post("/grade")
    async def grade(request: GradeRequest) -> dict[str, Any]:
        counted(len(request.items))
        rules = _rules_of(request)
        boards = [_board(rules, item.moves, index) for index, item in enumerate(request.items)]
        answers = [item.answer for item in request.items]
        dialect = get_dialect(request.dialect)
        results = await gate.run(_grade_work, rules, boards, answers, dialect, max_answer_length)
        return {"dialect": request.dialect, "results": results}

    return hardening.HostCheck(hardening.BodyLimit(app, body_bytes), allowed_hosts, allowed_origins)


def build_grader_server(
    host: str = "127.0.0.1",
    port: int = 8010,
    *,
    request_timeout: float = hardening.REQUEST_TIMEOUT,
    max_connections: int | None = None,
    **app_kwargs: Any,
) -> tuple[Any, Any, str]:
    """The uvicorn server of `create_grader_app` (``app_kwargs``), its socket bound and listening, by
    `connect4_env.integrations.openenv.connections.bind_server` (as the OpenEnv server is), with the OpenEnv
    server's connection limits: each request must arrive within ``request_timeout`` seconds, at most
    ``max_connections`` at once (by default the larger of 256 and twice ``max_pending``). Bound to a
    loopback address, it answers only requests to a loopback name; ``port=0`` picks a free port.

    Returns:
        ``(server, sock, url)``: run it with ``server.run(sockets=[sock])``, then close ``sock``.

    Raises:
        OSError: the address cannot be bound.
        TypeError: an argument of the wrong type.
        ValueError: an argument out of range.
    """
    # uvicorn loads only here
    from connect4_env.integrations.openenv.connections import bind_server, uvicorn_config

    def config(allowed_hosts: tuple[str, ...] | None) -> Any:
        return uvicorn_config(
            create_grader_app(allowed_hosts=allowed_hosts, **app_kwargs),
            request_timeout=request_timeout,
            max_connections=max_connections,
            max_sessions=app_kwargs.get("max_pending", MAX_PENDING),
            log_level="warning",
        )

    return bind_server(host, port, config)


def serve_grader(host: str = "127.0.0.1", port: int = 8010, *, on_ready: Any = None, **kwargs: Any) -> None:
    """Serve `build_grader_server`'s server (``kwargs``) until interrupted (Ctrl-C or SIGTERM stop it cleanly);
    ``on_ready(url)`` is called once the socket listens.

    Raises:
        OSError: the address cannot be bound.
        TypeError: an argument of the wrong type.
        ValueError: an argument out of range.
    """
    from connect4_env.integrations.openenv.connections import run_server

    run_server(*build_grader_server(host, port, **kwargs), on_ready=on_ready)
