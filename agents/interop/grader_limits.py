"""The grading service's limits, their defaults and their ceilings, without FastAPI (env side:
integrations/openenv/hardening.py, the request timeout's). `connect4 serve-grader` checks its flags against them
before the web stack loads, and
[`create_grader_app`][connect4_agents.interop.grader_service.create_grader_app] checks its arguments against the
same values.
"""

from __future__ import annotations

from connect4_env.envs.dialects import MAX_ANSWER_LENGTH

__all__ = [
    "MAX_ITEMS",
    "ANSWER_LENGTH",
    "MAX_PENDING",
    "GRADE_TIMEOUT",
    "ITEMS_CEILING",
    "ANSWER_LENGTH_CEILING",
    "PENDING_CEILING",
    "GRADE_TIMEOUT_CEILING",
]

MAX_ITEMS = 64
"""Items a request may hold, by default."""
ANSWER_LENGTH = 4096
"""The longest answer read, by default (a longer one is rejected unread, as the text env rejects it)."""
MAX_PENDING = 8
"""Requests graded or waiting at once, by default."""
GRADE_TIMEOUT = 30.0
"""Seconds of grading a request may take, by default."""

ITEMS_CEILING = 10_000
"""The most items a request may be allowed to hold."""
ANSWER_LENGTH_CEILING = MAX_ANSWER_LENGTH
"""The longest answer the service may be allowed to read (the text env's bound, 1,000,000 characters)."""
PENDING_CEILING = 10_000
"""The most requests that may be allowed to be graded or waiting at once."""
GRADE_TIMEOUT_CEILING = 86_400.0
"""The most seconds of grading a request may be allowed (a day)."""
