"""Serve moves and answers graded by perfect play over HTTP: scores, ranks and rewards for trainers in other
processes (the openenv extra's web stack).

    connect4 serve-grader                           # http://127.0.0.1:8010
    connect4 serve-grader --port 0                  # a free port, printed once listening
    curl -s localhost:8010/scores -d '{"items": [{"moves": [3, 3], "column": 2}]}' -H 'content-type: application/json'

POST /scores gives every column's exact score and rank for positions (moves from the empty board, 0-based), and
a move's grade; POST /grade reads model answers in a dialect and grades them; GET /health lists the boards,
dialects, the reward scale and the limits (connect4_agents.interop.grader_service). The server listens on
localhost unless --host says otherwise, and there answers only requests to a local name from no other web page
(--allow-origin names a page that may use it). A request holds at most --max-items items; at most --max-pending
requests are graded or waiting at once (one more is answered 503); grading a request takes at most
--grade-timeout seconds; connections are limited to --max-connections at once, and each request must arrive
within --request-timeout seconds. Ctrl-C or SIGTERM stops it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from connect4_agents._support.cli import check_positive_flag, listen_host, port_number, positive_int
from connect4_agents._support.config_cli import config_parser, option, run_config
from connect4_agents.interop import grader_limits as limits
from connect4_env.extras import require
from connect4_env.integrations.openenv.hardening import REQUEST_TIMEOUT, REQUEST_TIMEOUT_CEILING

__all__ = ["ServeGraderConfig", "build_parser", "run", "main"]


@dataclass
class ServeGraderConfig:
    """The options of ``connect4 serve-grader``."""

    host: str = field(default="127.0.0.1", metadata=option(type=listen_host))
    """The address to listen on (``127.0.0.1``: this machine only; ``0.0.0.0``: every interface)."""
    port: int = field(default=8010, metadata=option(type=port_number))
    """The port, 0..65535 (0 picks a free one, printed once listening)."""
    max_items: int = field(default=limits.MAX_ITEMS, metadata=option(type=positive_int))
    """Items (positions or answers) a request may hold, up to 10,000."""
    max_answer_length: int = field(default=limits.ANSWER_LENGTH, metadata=option(type=positive_int))
    """The longest answer read, in characters, up to 1,000,000; a longer one is a rejected answer."""
    max_pending: int = field(default=limits.MAX_PENDING, metadata=option(type=positive_int))
    """Requests graded or waiting at once, up to 10,000; one more is answered 503 with Retry-After."""
    grade_timeout: float = limits.GRADE_TIMEOUT
    """Seconds of grading a request may take, up to 86,400 (a day); past them it is answered 503 (the rest of its
    items ungraded)."""
    request_timeout: float = REQUEST_TIMEOUT
    """Seconds a request's headers and body may take to arrive, up to 3,600; a connection that sends
    nothing, or too slowly, is closed (408)."""
    max_connections: int | None = field(
        default=None,
        metadata=option(type=positive_int, shown_default="the larger of 256 and 2 x --max-pending"),
    )
    """Connections at once (one more is answered 503 and closed), within the process's limit of open files."""
    allow_origin: tuple[str, ...] = field(default=(), metadata=option(append=True, metavar="ORIGIN"))
    """A web origin (``http://host:port``) whose pages may use the grader; repeat for more."""

    def __post_init__(self) -> None:
        """Check the times and the counts' ceilings.

        Raises:
            ValueError: a time that is not a finite number above 0, or a count past its ceiling.
        """
        check_positive_flag("--grade-timeout", self.grade_timeout, "seconds", limits.GRADE_TIMEOUT_CEILING)
        check_positive_flag("--request-timeout", self.request_timeout, "seconds", REQUEST_TIMEOUT_CEILING)
        for flag, value, ceiling in (
            ("--max-items", self.max_items, limits.ITEMS_CEILING),
            ("--max-pending", self.max_pending, limits.PENDING_CEILING),
            ("--max-answer-length", self.max_answer_length, limits.ANSWER_LENGTH_CEILING),
        ):
            if value > ceiling:
                raise ValueError(f"{flag} must be at most {ceiling:,}, got {value:,}")


CONFIG = ServeGraderConfig  # the options (see connect4_agents.commands)


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The options of `ServeGraderConfig`, added to ``parser`` (a subcommand's) or to a new parser; returns it."""
    return config_parser(ServeGraderConfig, __doc__, parser)


def run(config: ServeGraderConfig) -> int:
    """Serve until interrupted.

    Raises:
        MissingExtraError: the openenv extra (FastAPI, uvicorn) is not installed.
        OSError: the address cannot be bound.
    """
    require("fastapi", "openenv", "connect4 serve-grader")
    require("uvicorn", "openenv", "connect4 serve-grader")
    from connect4_agents.interop.grader_service import serve_grader  # FastAPI and uvicorn load only here

    serve_grader(
        config.host,
        config.port,
        request_timeout=config.request_timeout,
        max_connections=config.max_connections,
        on_ready=lambda url: print(f"grading moves by perfect play at {url}", flush=True),
        max_items=config.max_items,
        max_answer_length=config.max_answer_length,
        max_pending=config.max_pending,
        grade_timeout=config.grade_timeout,
        allowed_origins=config.allow_origin,
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line) and run; returns the exit code."""
    return run_config(run, ServeGraderConfig, build_parser().parse_args(argv))
