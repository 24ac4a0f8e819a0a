"""The server's checks that need no server (no OpenEnv, so they run on a core install too): the nesting depth of
JSON that the server reads without parsing (`scan_json`), against the depth of what `json` parses
(hypothesis), and the session table's cap, rate and idle drop on a clock the test moves."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connect4_env.envs.dialects import scan_json
from connect4_env.integrations.openenv.hardening import (
    HostCheck,
    SessionLimitError,
    Sessions,
    UnknownSessionError,
    split_authority,
)

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=30,
)


def json_depth(text: str | bytes, limit: int | None = None) -> int:
    """The nesting the server checks in a body or frame."""
    return scan_json(text, max_depth=limit)[0]


def depth_of(value: Any) -> int:
    """The slow, obvious reference: how deeply lists and dicts nest in a parsed value."""
    if isinstance(value, list):
        return 1 + max((depth_of(item) for item in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth_of(item) for item in value.values()), default=0)
    return 0


@settings(max_examples=300, deadline=None)
@given(JSON, st.booleans())
def test_json_depth_matches_the_depth_of_the_parsed_value(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert json_depth(text) == depth_of(value)
    assert json_depth(text.encode()) == depth_of(value)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='[]{}"\\ ax', max_size=60))
def test_json_depth_reads_any_text_without_error(text: str) -> None:
    assert json_depth(text) >= 0


def test_json_depth_stops_past_its_limit_and_ignores_brackets_in_strings() -> None:
    assert json_depth("[" * 20_000, limit=32) == 33
    assert json_depth('{"a": "[[[[\\"[[", "b": [1]}') == 2
    assert json_depth('"\\\\"[[') == 2  # an escaped backslash ends before the quote


@pytest.mark.parametrize(
    ("authority", "expected"),
    [
        ("127.0.0.1:8000", ("127.0.0.1", "8000")),
        ("[::1]:8000", ("::1", "8000")),
        ("LocalHost.", ("localhost", None)),
        ("evil.example:80", ("evil.example", "80")),
        ("a:b", (None, None)),
        ("[::1", (None, None)),
        ("", (None, None)),
    ],
)
def test_split_authority(authority: str, expected: tuple[str | None, str | None]) -> None:
    assert split_authority(authority) == expected


def test_the_host_check_names_what_is_refused() -> None:
    check = HostCheck(None, ["127.0.0.1", "localhost", "::1"], ["http://127.0.0.1:3000"])
    assert check.refusal("localhost:8000", None) is None
    assert check.refusal("[::1]:8000", "http://[::1]:8000") is None  # the server's own page
    assert check.refusal("127.0.0.1:8000", "http://127.0.0.1:3000") is None
    assert "Host 'evil.example:8000' is not served here" in (check.refusal("evil.example:8000", None) or "")
    assert "no Host header" in (check.refusal(None, None) or "")
    assert "Origin 'http://localhost:8000'" in (
        check.refusal("127.0.0.1:8000", "http://localhost:8000") or ""
    )
    assert HostCheck(None, None).refusal("192.0.2.1:8000", None) is None  # any Host when none is named


class Game:
    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_table_holds_its_cap_for_both_kinds_together() -> None:
    clock = Clock()
    sessions = Sessions(Game, limit=2, timeout=60, rate=1000, clock=clock)
    ws, http = sessions.open("ws"), sessions.open("http")
    with pytest.raises(SessionLimitError, match="at most 2 games at once") as refused:
        sessions.open("http")
    assert refused.value.retry_after is None and len(sessions) == 2
    assert sessions.close(ws.session_id) and ws.game is not None and ws.game.closed
    assert not sessions.close(ws.session_id)
    assert sessions.open("ws").session_id not in (ws.session_id, http.session_id)


def test_the_table_drops_unused_http_sessions_but_never_websocket_ones() -> None:
    clock = Clock()
    sessions = Sessions(Game, limit=2, timeout=10, rate=1000, clock=clock)
    ws, http = sessions.open("ws"), sessions.open("http")
    clock.now = 5.0
    assert sessions.run(http.session_id, lambda game: "used") == "used"  # a use keeps it
    clock.now = 14.0
    assert sessions.run(http.session_id, lambda game: game) is http.game
    clock.now = 30.0
    with pytest.raises(UnknownSessionError):
        sessions.run(http.session_id, lambda game: game)
    assert http.game is not None and http.game.closed and len(sessions) == 1
    with pytest.raises(UnknownSessionError):
        sessions.run(ws.session_id, lambda game: game)  # a WebSocket's game is its connection's alone
    clock.now = 1000.0
    sessions.open(
        "http"
    )  # opening drops unused HTTP sessions; the WebSocket one stays (its connection ends it)
    assert len(sessions) == 2 and ws.game is not None and not ws.game.closed


def test_the_table_limits_the_rate_of_new_sessions() -> None:
    clock = Clock()
    sessions = Sessions(Game, limit=3, timeout=60, rate=0.5, clock=clock)
    for _ in range(3):  # the burst: max(limit, rate)
        sessions.close(sessions.open("http").session_id)
    with pytest.raises(SessionLimitError, match=r"at most 0.5 a second; try again in 2 s") as refused:
        sessions.open("ws")
    assert refused.value.retry_after == pytest.approx(2.0) and len(sessions) == 0
    clock.now = 1.0
    with pytest.raises(SessionLimitError):
        sessions.open("ws")
    clock.now = 2.0
    sessions.open("ws")
    clock.now = 2.5
    with pytest.raises(SessionLimitError, match="try again in 1.5 s"):
        sessions.open("ws")


def test_a_factory_that_fails_gives_its_place_back() -> None:
    def broken() -> Game:
        raise RuntimeError("no game today")

    sessions: Sessions[Game] = Sessions(broken, limit=1, timeout=60, rate=1000)
    for _ in range(2):
        with pytest.raises(RuntimeError, match="no game today"):
            sessions.open("ws")
    assert len(sessions) == 0
