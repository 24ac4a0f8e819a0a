"""The games of `connect4 serve-openenv`: one table for the WebSocket sessions (one per connection) and the HTTP
sessions (`/sessions`), with the limits that hold whatever the clients do (the `openenv` extra's server; this
module itself needs only the standard library).

- At most `limit` games at once, of both kinds together.
- New games at most `rate` a second on average, in bursts of up to `limit` or `rate`, whichever is more: a
  client that opens and drops sessions in a loop gets refused instead of keeping the server busy building
  games.
- An HTTP session unused for `timeout` seconds is dropped (it has no connection to close); a WebSocket
  session's connection closes itself once idle that long (see `connect4_env.integrations.openenv.websocket`).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

__all__ = ["Sessions", "Session", "SessionLimitError", "UnknownSessionError"]

GameT = TypeVar("GameT")


class SessionLimitError(RuntimeError):
    """A new session refused: the server has its most games, or new ones come faster than its rate.

    Attributes:
        retry_after: seconds until a new session may be accepted at the rate, or None when the number of
            games is what stands in the way (one must end first).
    """

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class UnknownSessionError(KeyError):
    """No such HTTP session: never made, deleted, or dropped after `timeout` seconds unused."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown session"


@dataclass
class Session(Generic[GameT]):
    """One game: its id, its kind (`"ws"` or `"http"`), the game, and when it was last used."""

    session_id: str
    kind: str
    game: GameT | None = None
    last_used: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)


class Sessions(Generic[GameT]):
    """The server's games, at most `limit` at once and at most `rate` new ones a second (thread-safe).

    Args:
        factory: builds a game; called outside the table's lock, its slot held meanwhile.
        limit: the most games at once.
        timeout: seconds an HTTP session may go unused before it is dropped.
        rate: new games a second, on average (bursts of up to `max(limit, rate)`).
        close: ends a game that is dropped or closed (`game.close()` by default).
        clock: seconds, for the idle time and the rate (`time.monotonic`).
    """

    def __init__(
        self,
        factory: Callable[[], GameT],
        limit: int,
        timeout: float,
        rate: float,
        close: Callable[[GameT], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.factory = factory
        self.limit = limit
        self.timeout = timeout
        self.rate = rate
        self._close_game = close or (lambda game: game.close())  # type: ignore[attr-defined]
        self._clock = clock
        self._lock = threading.Lock()
        self._sessions: dict[str, Session[GameT]] = {}
        self.burst = max(float(limit), rate)
        self._tokens = self.burst
        self._refilled = clock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def open(self, kind: str) -> Session[GameT]:
        """A new session of `kind` (`"ws"` or `"http"`) with a new game.

        Returns:
            The session, its game built.

        Raises:
            SessionLimitError: `limit` games are playing (after dropping unused HTTP sessions), or new ones
                came faster than `rate` (`retry_after` says when to try again).
            ValueError: an unknown kind.
        """
        if kind not in ("ws", "http"):
            raise ValueError(f"kind must be 'ws' or 'http', got {kind!r}")
        with self._lock:
            now = self._clock()
            dropped = self._drop_unused(now)
            refusal = self._refusal(now)
            if refusal is None:
                session: Session[GameT] = Session(uuid.uuid4().hex, kind, None, now)
                self._sessions[session.session_id] = session
        self._close_all(dropped)
        if refusal is not None:
            raise refusal
        try:
            game = self.factory()
        except BaseException:
            with self._lock:
                self._sessions.pop(session.session_id, None)
            raise
        with self._lock:
            session.game = game
        return session

    def close(self, session_id: str) -> bool:
        """End a session and its game.

        Returns:
            Whether there was such a session.
        """
        with self._lock:
            session = self._sessions.pop(session_id, None)
        if session is None:
            return False
        if session.game is not None:
            with session.lock:  # after any call still running on the game
                self._close_game(session.game)
        return True

    def run(self, session_id: str, work: Callable[[GameT], Any]) -> Any:
        """`work(game)` for an HTTP session, one call at a time per session; it counts as a use.

        Returns:
            What `work` returns.

        Raises:
            UnknownSessionError: no such HTTP session (never made, deleted, or dropped unused); whatever `work`
                raises passes through.
        """
        with self._lock:
            session = self._sessions.get(session_id)
        if session is None or session.kind != "http" or session.game is None:
            raise UnknownSessionError(session_id)
        with session.lock:
            with self._lock:
                if self._sessions.get(session_id) is not session:
                    raise UnknownSessionError(session_id)
                now = self._clock()
                if now - session.last_used > self.timeout:  # unused too long: as good as dropped
                    del self._sessions[session_id]
                    expired = True
                else:
                    session.last_used = now
                    expired = False
            if expired:
                self._close_game(session.game)
                raise UnknownSessionError(session_id)
            try:
                return work(session.game)
            finally:
                session.last_used = self._clock()

    def _refusal(self, now: float) -> SessionLimitError | None:
        """Why no session can be opened now, or None (a token of the rate is then spent)."""
        if len(self._sessions) >= self.limit:
            return SessionLimitError(
                f"too many sessions: at most {self.limit} games at once; end one (close its WebSocket, or "
                "DELETE /sessions/<id>) or wait"
            )
        self._tokens = min(self.burst, self._tokens + (now - self._refilled) * self.rate)
        self._refilled = now
        if self._tokens < 1.0:
            wait = (1.0 - self._tokens) / self.rate
            return SessionLimitError(
                f"too many new sessions: at most {self.rate:g} a second; try again in {wait:.2g} s", wait
            )
        self._tokens -= 1.0
        return None

    def _drop_unused(self, now: float) -> list[Session[GameT]]:
        """Take the HTTP sessions unused for `timeout` seconds out of the table (their games are closed by
        the caller, outside the lock); one in use is left alone.
        """
        dropped: list[Session[GameT]] = []
        for session_id, session in list(self._sessions.items()):
            if (
                session.kind == "http"
                and now - session.last_used > self.timeout
                and session.lock.acquire(False)
            ):
                try:
                    del self._sessions[session_id]
                    dropped.append(session)
                finally:
                    session.lock.release()
        return dropped

    def _close_all(self, sessions: list[Session[GameT]]) -> None:
        for session in sessions:
            if session.game is not None:
                self._close_game(session.game)
