"""Which recorded games the harness decided rather than play: forfeits, rejected answers, fallback moves.

A text policy (`connect4_agents.interop.text.TextPolicy`) records each move as a ``search`` entry of kind
``"text"``: its ``dialect``, its ``tries`` (each answer asked for, with the ``error`` that rejected it, if one
did) and its ``outcome``: ``"answered"`` (the model's column), ``"fallback"`` (a random legal column the policy
played for it) or ``"forfeit"`` (no column: the game ends there and the other side wins; the record's
``forfeit`` field holds the failed move's entry as ``info``). From these, per game and seat:

- a **forfeit**: the harness ended the game, the model lost it without a move on the board;
- **fallback moves**: moves the model did not choose (a random column played in its name);
- **rejected answers** (retries): the model's move came only after answers the dialect refused (unreadable, off
  the board, a full column, or no answer in time).

A game with none of these, for a player, is *clean*: its moves are the model's own first answers. The model is
the player's name in the records (its agent spec, ``text:mypkg.llm:answer``); the dialect is the one its text
entries name (None for a player without text entries, such as a search agent, whose games are clean unless it
forfeited). A player holding both seats of a game is counted once per seat, as the grades count it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from connect4_agents.evaluation.records import GameLog

__all__ = [
    "HarnessAudit",
    "PlayerAudit",
    "FlaggedGame",
    "audit_games",
    "is_text_record",
    "text_tries",
    "game_forfeit",
]


def is_text_record(entry: Any) -> TypeGuard[dict[str, Any]]:
    """Whether a ``search`` entry (or a forfeit's ``info``) is a text policy's move record."""
    return isinstance(entry, dict) and entry.get("kind") == "text"


def text_tries(entry: dict[str, Any], where: str) -> tuple[int, int]:
    """``(tries, rejected)`` of a text policy's move record; ``where`` names it in messages.

    Raises:
        ValueError: ``tries`` is not a list of objects, each with a column (an integer or null) and an error
            (a str or null).
    """
    tries = entry.get("tries")
    if not isinstance(tries, list) or not all(isinstance(attempt, dict) for attempt in tries):
        raise ValueError(f"{where}: a text record's tries must be a list of objects, got {tries!r:.80}")
    rejected = 0
    for attempt in tries:
        column, error = attempt.get("column"), attempt.get("error")
        if not (column is None or type(column) is int) or not (error is None or isinstance(error, str)):
            raise ValueError(
                f"{where}: a try's column must be an integer or null and its error a str or null"
            )
        rejected += column is None or error is not None
    return len(tries), rejected


def game_forfeit(game: GameLog, where: str) -> dict[str, Any] | None:
    """The game's ``forfeit`` field, checked (a record built by hand is not); None when nobody forfeited.

    Raises:
        ValueError: the field is not an object with player 0 or 1.
    """
    forfeit = game.forfeit
    if forfeit is None:
        return None
    if (
        not isinstance(forfeit, dict)
        or forfeit.get("player") not in (0, 1)
        or type(forfeit["player"]) is not int
    ):
        raise ValueError(f"{where}: forfeit must be an object with player 0 or 1, got {forfeit!r:.80}")
    return forfeit


def _dialect(entry: dict[str, Any]) -> str | None:
    dialect = entry.get("dialect")
    return dialect if isinstance(dialect, str) else None


@dataclass
class PlayerAudit:
    """One player's seats, with one dialect, as the harness touched them.

    Attributes:
        player: the name in the records (the agent spec: for a text policy, its model).
        dialect: the dialect its text entries name (None: no text entries).
        games: seats held (one per game, two for a game against itself).
        clean: seats without a forfeit, a fallback move or a rejected answer.
        forfeits: games it forfeited (lost by the harness's rule, not on the board).
        fallback_games: games with at least one fallback move.
        retry_games: games with at least one rejected answer (a forfeited move's included).
        moves: moves it made on the board.
        text_moves: moves with a text record.
        fallback_moves: moves the fallback played.
        tries: answers asked for (a forfeited move's included).
        rejected: answers rejected.
    """

    player: str
    dialect: str | None
    games: int = 0
    clean: int = 0
    forfeits: int = 0
    fallback_games: int = 0
    retry_games: int = 0
    moves: int = 0
    text_moves: int = 0
    fallback_moves: int = 0
    tries: int = 0
    rejected: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The counts as a JSON-ready dict, the fields' names as keys."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class FlaggedGame:
    """A game the harness touched, for one of its seats.

    Attributes:
        label: where the game is (``games.jsonl #3``: the file and the game's place in it, from 0).
        game: the game's own number in its run (None if the record has none).
        player: the seat's player.
        seat: 0 (moved first) or 1.
        dialect: the seat's dialect (None: no text entries).
        result: the record's result (``"player0"``, ``"player1"``, ``"draw"``).
        forfeit: the forfeit's reason when this seat forfeited, else None.
        fallback_moves: moves the fallback played for this seat.
        rejected: answers of this seat rejected.
    """

    label: str
    game: int | None
    player: str
    seat: int
    dialect: str | None
    result: str
    forfeit: str | None
    fallback_moves: int
    rejected: int

    @property
    def decided_by_harness(self) -> bool:
        """True when the game's course is not the model's own: a forfeit or a fallback move."""
        return self.forfeit is not None or self.fallback_moves > 0

    def to_dict(self) -> dict[str, Any]:
        """The fields as a JSON-ready dict, with ``decided_by_harness``."""
        return {**self.__dict__, "decided_by_harness": self.decided_by_harness}


@dataclass
class HarnessAudit:
    """The audit of some games: per player and dialect, and the games the harness touched.

    Attributes:
        games: games read.
        players: one entry per player and dialect, sorted by name.
        flagged: the seats with a forfeit, a fallback move or a rejected answer, in the games' order.
    """

    games: int
    players: list[PlayerAudit] = field(default_factory=list)
    flagged: list[FlaggedGame] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """``{"format": "connect4-audit", "version": 1, "games", "players": [...], "flagged": [...]}``."""
        return {
            "format": "connect4-audit",
            "version": 1,
            "games": self.games,
            "players": [player.to_dict() for player in self.players],
            "flagged": [game.to_dict() for game in self.flagged],
        }

    def table(self, listed: int = 20) -> str:
        """The audit as text: a row per player and dialect, then the first ``listed`` flagged seats."""
        width = max([len("player"), *(len(row.player) for row in self.players)])
        lines = [
            f"{self.games} games, per player (the model) and dialect:",
            f"  {'player':{width}} {'dialect':10} {'games':>5} {'clean':>5} {'forfeit':>7} {'fallback':>8} "
            f"{'retried':>7}  {'rejected/tries':>14} {'fallback/text moves':>19}",
        ]
        for row in self.players:
            lines.append(
                f"  {row.player:{width}} {row.dialect or '-':10} {row.games:>5} {row.clean:>5} "
                f"{row.forfeits:>7} {row.fallback_games:>8} {row.retry_games:>7}  "
                f"{f'{row.rejected}/{row.tries}':>14} {f'{row.fallback_moves}/{row.text_moves}':>19}"
            )
        decided = sum(game.decided_by_harness for game in self.flagged)
        lines.append(
            f"{len(self.flagged)} seats touched by the harness, {decided} of them decided by it "
            "(a forfeit or a fallback move)" + (":" if self.flagged else "")
        )
        for game in self.flagged[:listed]:
            what = []
            if game.forfeit is not None:
                what.append(f"forfeit ({game.forfeit})")
            if game.fallback_moves:
                what.append(_counted(game.fallback_moves, "fallback move"))
            if game.rejected:
                what.append(_counted(game.rejected, "rejected answer"))
            lines.append(f"  {game.label}: {game.player} (seat {game.seat}): {', '.join(what)}")
        if len(self.flagged) > listed:
            lines.append(f"  ... and {len(self.flagged) - listed} more (the JSON lists them all)")
        return "\n".join(lines)


def _counted(number: int, thing: str) -> str:
    return f"{number} {thing}" + ("" if number == 1 else "s")


def audit_games(games: Sequence[GameLog], labels: Sequence[str] | None = None) -> HarnessAudit:
    """Count, per player and dialect, the games the harness decided or touched (see the module docstring).

    Args:
        games: game records (`connect4_agents.evaluation.records.GameLog`).
        labels: a name per game for the flagged list (default: ``game 0``, ``game 1``, ...).

    Returns:
        The audit.

    Raises:
        TypeError: ``games`` is not a list of `GameLog`, or ``labels`` not a list of str.
        ValueError: ``labels`` of another length than ``games``, or a malformed text record or forfeit.
    """
    if isinstance(games, (str, bytes)) or not isinstance(games, Sequence):
        raise TypeError(f"games must be a list of GameLog records, got {type(games).__name__}")
    if labels is None:
        labels = [f"game {index}" for index in range(len(games))]
    if isinstance(labels, (str, bytes)) or not isinstance(labels, Sequence):
        raise TypeError(f"labels must be a list of str, got {type(labels).__name__}")
    if len(labels) != len(games):
        raise ValueError(f"labels has {len(labels)} names for {len(games)} games")
    rows: dict[tuple[str, str | None], PlayerAudit] = {}
    flagged: list[FlaggedGame] = []
    for index, (game, label) in enumerate(zip(games, labels)):
        if not isinstance(game, GameLog):
            raise TypeError(f"game {index} is a {type(game).__name__}, not a GameLog")
        forfeit = game_forfeit(game, str(label))
        for seat in (0, 1):
            seen = _seat(game, seat, forfeit, str(label))
            key = (game.players[seat], seen["dialect"])
            row = rows.setdefault(key, PlayerAudit(*key))
            row.games += 1
            row.moves += seen["moves"]
            row.text_moves += seen["text_moves"]
            row.fallback_moves += seen["fallback_moves"]
            row.tries += seen["tries"]
            row.rejected += seen["rejected"]
            row.forfeits += seen["forfeit"] is not None
            row.fallback_games += seen["fallback_moves"] > 0
            row.retry_games += seen["rejected"] > 0
            if seen["forfeit"] is None and not seen["fallback_moves"] and not seen["rejected"]:
                row.clean += 1
                continue
            flagged.append(
                FlaggedGame(
                    str(label),
                    game.game,
                    game.players[seat],
                    seat,
                    seen["dialect"],
                    game.result,
                    seen["forfeit"],
                    seen["fallback_moves"],
                    seen["rejected"],
                )
            )
    ordered = sorted(rows.values(), key=lambda row: (row.player, row.dialect or ""))
    return HarnessAudit(len(games), ordered, flagged)


def _seat(game: GameLog, seat: int, forfeit: dict[str, Any] | None, label: str) -> dict[str, Any]:
    """What the harness did for one seat of one game: its counts, its dialect and its forfeit's reason."""
    seen: dict[str, Any] = dict.fromkeys(("moves", "text_moves", "fallback_moves", "tries", "rejected"), 0)
    seen["dialect"] = seen["forfeit"] = None
    entries: list[tuple[str, dict[str, Any]]] = []
    for ply in range(seat, len(game.moves), 2):
        seen["moves"] += 1
        entry = game.search[ply] if game.search is not None else None
        if is_text_record(entry):
            seen["text_moves"] += 1
            seen["fallback_moves"] += entry.get("outcome") == "fallback"
            entries.append((f"{label}, move {ply}", entry))
    if forfeit is not None and forfeit["player"] == seat:
        reason = forfeit.get("reason")
        seen["forfeit"] = reason if isinstance(reason, str) else "forfeited"
        if is_text_record(forfeit.get("info")):
            entries.append((f"{label}, forfeit", forfeit["info"]))
    for where, entry in entries:
        made, refused = text_tries(entry, where)
        seen["tries"] += made
        seen["rejected"] += refused
        if seen["dialect"] is None:
            seen["dialect"] = _dialect(entry)
    return seen
