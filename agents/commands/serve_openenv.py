"""Serve Connect4Text-v0 to language models over HTTP: an OpenEnv environment server (the openenv extra: openenv,
or openenv-core installed in its place).

    connect4 serve-openenv                          # http://127.0.0.1:8000, opponent random
    connect4 serve-openenv --opponent solver --port 8001 --invalid-answer lose
    connect4 serve-openenv --opponent none --dialect game_arena --reward trajectory   # both seats
    connect4 serve-openenv --opponent mcts:200 --reward solver  # every move graded by perfect play
    connect4 serve-openenv --port 0                 # a free port, printed once listening

OpenEnv's clients play it over /ws (one game per connection, e.g. connect4_env.integrations.openenv.environment.Connect4TextClient);
clients without WebSockets use POST /sessions, then /sessions/<id>/reset, /step, /state. With --opponent none
the client plays both seats. A session may choose its dialect at reset (client.reset(dialect="json")) among
--session-dialects. The server listens on
localhost unless --host says otherwise, and there answers only requests to a local name from no other web page
(--allow-origin names a page that may use it). An answer longer than --max-answer-length characters is a rejected
answer under the dialect's rule; bodies and WebSocket messages are limited to --max-body-bytes (by default room for
any such answer), games to --max-sessions at once (WebSocket and HTTP together; idle ones dropped after --session-timeout
seconds) and new ones to --session-rate a second, connections to --max-connections at once, and each request must
arrive within --request-timeout seconds. Ctrl-C or SIGTERM stops it.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import re
import sys
from dataclasses import dataclass, field
from typing import Literal

from connect4_agents._support.cli import check_positive_flag, listen_host, port_number, positive_int
from connect4_agents._support.config_cli import config_parser, option, run_config
from connect4_env.envs.dialects import DIALECTS, MAX_ANSWER_LENGTH
from connect4_env.extras import MissingExtraError, require

# the standard library's only: no OpenEnv loaded here
from connect4_env.integrations.openenv.hardening import (
    BYTES_PER_CHARACTER,
    FRAME_BYTES,
    REQUEST_TIMEOUT,
    REQUEST_TIMEOUT_CEILING,
)
from connect4_env.rewards import OUTCOME, rubric_names

__all__ = ["ServeOpenEnvConfig", "build_parser", "run", "main", "check_openenv", "OPENENV_DISTRIBUTIONS"]

REWARD_CHOICES = (OUTCOME, "trajectory", *rubric_names())
"""``--reward``'s: the outcome, OpenEnv's trajectory rubric, and the per-move rubrics installed (``solver``)."""


# OpenEnv's two distributions of the one `openenv` package, and the oldest release of each that works here
OPENENV_DISTRIBUTIONS = {"openenv": (0, 10), "openenv-core": (0, 3)}


def _release(version: str) -> tuple[int, int]:
    """`(major, minor)` of a version string (`"0.10.0"` -> `(0, 10)`); `(0, 0)` when it has none."""
    match = re.match(r"(\d+)\.(\d+)", version)
    return (int(match[1]), int(match[2])) if match else (0, 0)


def check_openenv(installed: dict[str, str] | None = None) -> str | None:
    """Check the installed OpenEnv distributions before anything is imported (from their metadata alone).

    Args:
        installed: distribution -> version; by default read from the environment's metadata.

    Returns:
        A warning when both distributions are installed (they write the same files, so the one installed last
        is the one used), or None.

    Raises:
        MissingExtraError: the installed one is older than this command supports (the message names it and
            what to install).
    """
    if installed is None:
        installed = {}
        for name in OPENENV_DISTRIBUTIONS:
            with contextlib.suppress(importlib.metadata.PackageNotFoundError):
                installed[name] = importlib.metadata.version(name)
    wanted = ", or ".join(
        f"{name} {'.'.join(map(str, oldest))} or later" for name, oldest in OPENENV_DISTRIBUTIONS.items()
    )
    usable = [name for name, version in installed.items() if _release(version) >= OPENENV_DISTRIBUTIONS[name]]
    if installed and not usable:
        found = " and ".join(f"{name} {version}" for name, version in installed.items())
        name = next(iter(installed))
        raise MissingExtraError(
            f"connect4 serve-openenv needs {wanted}; found {found}: pip install --upgrade {name}"
        )
    if len(installed) > 1:
        found = " and ".join(f"{name} {version}" for name, version in installed.items())
        keep = (
            f"keep {usable[0]} (pip uninstall {next(name for name in installed if name != usable[0])})"
            if len(usable) == 1
            else "keep one (pip uninstall openenv-core, or pip uninstall openenv)"
        )
        return (
            f"warning: {found} are both installed; both write the same openenv package, so the files of the one "
            f"installed last are used: {keep}"
        )
    return None


@dataclass
class ServeOpenEnvConfig:
    """The options of ``connect4 serve-openenv``."""

    host: str = field(default="127.0.0.1", metadata=option(type=listen_host))
    """The address to listen on (``127.0.0.1``: this machine only; ``0.0.0.0``: every interface)."""
    port: int = field(default=8000, metadata=option(type=port_number))
    """The port, 0..65535 (0 picks a free one, printed once listening)."""
    opponent: str = "random"
    """The opponent's agent spec, or ``none``: the client plays both seats (each step is the move of the player
    to move)."""
    agent_first: Literal["yes", "no", "random"] = "yes"
    """Whether the model (the client) moves first: ``yes``, ``no`` or ``random`` (drawn each game)."""
    dialect: str = field(default="connect4", metadata=option(choices=DIALECTS))
    """How positions are shown and answers read (``connect4``: this package's own, 1-based; ``game_arena``:
    Kaggle's Game Arena harness, ``deepmind_game_arena``: DeepMind's ``game_arena`` package, ``textarena``,
    ``json``: those harnesses', 0-based)."""
    legal_moves: Literal["yes", "no"] | None = None
    """List the legal columns in the text: ``yes`` or ``no`` (default: the dialect's)."""
    history: Literal["yes", "no"] | None = None
    """Show both players' moves so far: ``yes`` or ``no`` (default: the dialect's)."""
    blind: Literal["yes", "no"] | None = None
    """Show no board, only the moves: ``yes`` or ``no`` (default: ``no``)."""
    session_dialects: tuple[str, ...] = field(
        default=(), metadata=option(choices=DIALECTS, metavar="DIALECT", shown_default="all")
    )
    """The dialects a session may choose at reset (OpenEnv's ``client.reset(dialect="json")``), with the
    options above; ``--dialect`` is always one of them."""
    reward: str = field(default="outcome", metadata=option(choices=REWARD_CHOICES))
    """``outcome``: +1 win, -1 loss, 0 draw and every other step; ``trajectory``: OpenEnv's discounted
    trajectory rubric (0 until the end, then 1 win, 0.5 draw, 0 loss, and every step's discounted credit);
    ``solver``: every move graded by perfect play for the seat that made it (+1 best, +0.5 keeps the outcome, -0.5
    gives a class up, -1 a win for a loss; -1 a rejected answer; nothing at the end), on 6x7 with the opening book
    (the ``book`` extra) or boards of at most 30 cells whose empty board it solves within 20,000,000 nodes."""
    gamma: float = 0.99
    """The trajectory reward's discount, 0..1 (``--reward trajectory``)."""
    invalid_answer: Literal["retry", "lose"] = "retry"
    """What a rejected answer does: ``retry`` (the model answers again) or ``lose`` (the game is lost)."""
    max_retries: int | None = None
    """Rejected answers forgiven per move (with ``--invalid-answer retry``); by default the dialect's rule: 2
    for ``connect4``, 1 for ``game_arena`` and ``textarena``, 3 for ``deepmind_game_arena``, 0 for ``json``."""
    rows: int = 6
    """Board rows."""
    columns: int = 7
    """Board columns."""
    win_length: int = 4
    """Stones in a line to win."""
    max_sessions: int = field(default=64, metadata=option(type=positive_int))
    """Games at once, WebSocket and HTTP sessions together."""
    session_timeout: float = 600.0
    """Idle seconds before a session is dropped."""
    session_rate: float = 20.0
    """New sessions a second, on average."""
    request_timeout: float = REQUEST_TIMEOUT
    """Seconds a request's headers and body may take to arrive (from the connection's start or the previous
    answer), up to 3,600; a connection that sends nothing, or too slowly, is closed (408)."""
    max_connections: int | None = field(
        default=None,
        metadata=option(type=positive_int, shown_default="the larger of 256 and 2 x --max-sessions"),
    )
    """Connections at once, HTTP and WebSocket together (one more is answered 503 and closed); it must fit the
    process's limit of open files (``ulimit -n``) less 64, which a default is lowered to fit."""
    max_answer_length: int = field(default=MAX_ANSWER_LENGTH, metadata=option(type=positive_int))
    """The longest answer read, in characters, up to 1,000,000 (the default, as the text env's and
    ``TextPolicy``'s); a longer one is a rejected answer under the dialect's rule."""
    max_body_bytes: int | None = field(
        default=None,
        metadata=option(
            type=positive_int,
            shown_default=f"{BYTES_PER_CHARACTER} x --max-answer-length + {FRAME_BYTES}",
        ),
    )
    """The largest request body or WebSocket message, in bytes (past 4 times this, a WebSocket is closed with
    code 1009). By default room for any answer of ``--max-answer-length`` characters, however JSON escapes it;
    one given must leave room for an answer of that many ASCII characters and 4096 bytes around it."""
    allow_origin: tuple[str, ...] = field(default=(), metadata=option(append=True, metavar="ORIGIN"))
    """A web origin (``http://host:port``) whose pages may use the server; repeat for more."""

    def __post_init__(self) -> None:
        """Check the times and the rate (the rest is read by its option's type, or checked by the server).

        Raises:
            ValueError: a time or rate that is not a finite number above 0, or a request timeout past its ceiling.
        """
        check_positive_flag("--session-timeout", self.session_timeout, "seconds")
        check_positive_flag("--request-timeout", self.request_timeout, "seconds", REQUEST_TIMEOUT_CEILING)
        check_positive_flag("--session-rate", self.session_rate, "sessions a second")


CONFIG = ServeOpenEnvConfig  # the options (see connect4_agents.commands)


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The options of `ServeOpenEnvConfig`, added to ``parser`` (a subcommand's) or to a new parser; returns it."""
    return config_parser(ServeOpenEnvConfig, __doc__, parser, agent_specs=True)


def run(config: ServeOpenEnvConfig) -> int:
    """Serve until interrupted.

    Raises:
        MissingExtraError: the openenv extra is not installed, or too old a release of OpenEnv is.
        ValueError: a bad opponent spec or dialect setting.
        TypeError: an opponent spec of the wrong type.
        OSError: the address cannot be bound.
    """
    warning = check_openenv()
    if warning is not None:
        print(warning, file=sys.stderr)
    require("openenv", "openenv", "connect4 serve-openenv")
    from connect4_env.integrations.openenv.server import serve  # FastAPI, uvicorn and OpenEnv load only here

    agent_first = {"yes": True, "no": False, "random": None}[config.agent_first]
    switch = {"yes": True, "no": False, None: None}
    serve(
        config.host,
        config.port,
        max_body_bytes=config.max_body_bytes,
        max_answer_length=config.max_answer_length,
        on_ready=lambda url: print(f"serving Connect4Text-v0 over OpenEnv at {url}", flush=True),
        max_sessions=config.max_sessions,
        session_timeout=config.session_timeout,
        session_rate=config.session_rate,
        request_timeout=config.request_timeout,
        max_connections=config.max_connections,
        allowed_origins=config.allow_origin,
        opponent=config.opponent,
        agent_first=agent_first,
        dialect=config.dialect,
        legal_moves=switch[config.legal_moves],
        history=switch[config.history],
        blind=switch[config.blind],
        session_dialects=config.session_dialects or None,
        reward=config.reward,
        gamma=config.gamma,
        invalid_answer=config.invalid_answer,
        max_retries=config.max_retries,
        rows=config.rows,
        columns=config.columns,
        win_length=config.win_length,
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line) and run; returns the exit code."""
    return run_config(run, ServeOpenEnvConfig, build_parser().parse_args(argv))
