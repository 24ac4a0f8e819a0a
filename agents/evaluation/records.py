"""Game records: one JSON object per line, one line per finished game, for replays and analysis.

Written by ``connect4 tournament --games-out``, ``connect4 play --record`` and the match modes of
``connect4 match --games-out``; read back, every field checked, by `read_games`; turned into an
HTML replay by ``connect4 replay``. A line::

    {"format": "connect4-game", "version": 1, "rows": 6, "columns": 7, "win_length": 4,
     "players": ["mcts:1000", "random"], "seed": 0, "moves": [3, 3, 4, ...], "result": "player0",
     "search": [{"kind": "mcts", "column": 3, "visits": [...], "values": [...], ...}, null, ...]}

- ``players``: the agent specs of the first mover (``player0``, X, red) and the second (``player1``).
- ``moves``: 0-based columns in order, the whole game; ``result``: ``"player0"``, ``"player1"`` or ``"draw"``,
  and it must be what the moves give.
- ``seed``: the seed the run was started with (None if none); optional ``seeds``: the two players' own reset
  seeds when the game can be replayed from them (tournaments); optional ``game``: its number in the run.
- ``forfeit`` (optional): ``{"player": 0 | 1, "reason": str, "info": object | null}`` when a player gave up
  (`connect4_env.policy.Forfeit`, such as a text policy out of answers): the moves stop before the end and
  ``result`` is the other player. ``info`` is the player's account of the failed move (a text policy's
  prompts and answers).
- ``search`` (optional): one entry per move, the mover's ``move_info()`` (None for a policy without one):
  MCTS ``{"kind": "mcts", "column", "visits", "values", "proven", "playouts"}`` (values are mean results for
  the mover, win 1 draw 1/2, None where never tried); solver ``{"kind": "solver", "column", "scores"}``
  (exact scores, positive a win, None for a full column); n-tuple ``{"kind": "ntuple", "column", "values"}``
  (afterstate values for the mover, -1 to 1, None for a full column). Entries of another ``kind`` are kept as
  they are.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from connect4_agents._support.files import atomic_write, is_version, read_json_lines
from connect4_env.core import Board
from connect4_env.rules import IllegalMoveError, Rules

__all__ = [
    "GameLog",
    "read_games",
    "write_games",
    "game_log",
    "match_logs",
    "FORMAT",
    "VERSION",
    "RESULTS",
]

FORMAT = "connect4-game"
VERSION = 1
RESULTS = ("player0", "player1", "draw")
MAX_FILE_BYTES = 256 << 20  # a records file larger than this (decompressed) is refused
# the fields a record's own code reads; any other is kept as it is (GameLog.extra)
_KNOWN = {"format", "version", "rows", "columns", "win_length", "players", "seed", "seeds", "game", "moves"}
_KNOWN |= {"result", "search", "forfeit"}


class _BoardAt:
    """What ``GameLog.board`` is: call it for a position, ``log.board(ply)`` (default: the end).

    It is not itself a Board: the arena's former ``board`` attribute was the final position, so
    using ``log.board`` as one raises a TypeError that names ``log.final_board`` instead of meaning
    something else without a word.
    """

    __slots__ = ("_log",)

    def __init__(self, log: GameLog) -> None:
        self._log = log

    def __call__(self, ply: int | None = None) -> Board:
        return self._log._position(ply)

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("__") and hasattr(Board, name):
            raise TypeError(
                f"GameLog.board is a method, board(ply=None); for the final position use "
                f"record.final_board.{name} (or record.board().{name})"
            )
        raise AttributeError(f"GameLog.board (a method) has no attribute {name!r}")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Board):
            raise TypeError("GameLog.board is a method: compare record.final_board (or record.board(ply))")
        return isinstance(other, _BoardAt) and other._log is self._log

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<GameLog.board of a game of {len(self._log.moves)} moves: call board(ply)>"


@dataclass(frozen=True)
class GameLog:
    """One game: what `connect4_agents.evaluation.arena.play_game` returns and a records file holds
    (see the module docstring for the fields); ``extra`` keeps unknown fields.

    ``board(ply)`` is the position after ``ply`` moves and ``final_board`` the end ; ``winner`` is 0
    (first mover), 1 or None (draw).
    """

    rows: int
    columns: int
    win_length: int
    players: tuple[str, str]
    moves: tuple[int, ...]
    result: str
    seed: int | None = None
    seeds: tuple[int | None, int | None] | None = None
    game: int | None = None
    search: tuple[dict[str, Any] | None, ...] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    forfeit: dict[str, Any] | None = None

    @property
    def rules(self) -> Rules:
        """The board the game was played on: ``Rules(rows, columns, win_length)``."""
        return Rules(self.rows, self.columns, self.win_length)

    @property
    def winner(self) -> int | None:
        """0 if the first mover won, 1 if the second did, None for a draw."""
        return None if self.result == "draw" else RESULTS.index(self.result)

    @property
    def board(self) -> _BoardAt:
        """``board(ply=None)``: the position after ``ply`` moves (default: the end), a new Board each call.

        Raises:
            ValueError: ``ply`` outside ``0..len(moves)``.
        """
        return _BoardAt(self)

    @property
    def final_board(self) -> Board:
        """The position at the end of the game (a new Board each time)."""
        return self._position(None)

    def _position(self, ply: int | None) -> Board:
        ply = len(self.moves) if ply is None else ply
        if not 0 <= ply <= len(self.moves):
            raise ValueError(f"ply={ply}: this game has plies 0..{len(self.moves)}")
        return Board(self.rules).play_moves(list(self.moves[:ply]))

    def to_dict(self) -> dict[str, Any]:
        """The game as a records file's line holds it (a JSON-ready dict, what
        [`from_dict`][connect4_agents.evaluation.records.GameLog.from_dict] reads): ``format``, ``version``,
        the board, ``players``, ``seed``, ``moves`` and ``result``, with ``seeds``, ``game`` and ``search``
        where set, and the ``extra`` fields.
        """
        data: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "rows": self.rows,
            "columns": self.columns,
            "win_length": self.win_length,
            "players": list(self.players),
            "seed": self.seed,
        }
        if self.seeds is not None:
            data["seeds"] = list(self.seeds)
        if self.game is not None:
            data["game"] = self.game
        data["moves"] = list(self.moves)
        data["result"] = self.result
        if self.search is not None:
            data["search"] = list(self.search)
        if self.forfeit is not None:
            data["forfeit"] = dict(self.forfeit)
        data.update(self.extra)
        return data

    @classmethod
    def from_dict(cls, data: Any) -> GameLog:
        """Build and check a record from a decoded JSON object.

        Raises:
            ValueError: not an object, another format or version, a field missing or of the wrong kind, an
                illegal move, moves after the end or a game not finished, a result the moves do not give, or
                search numbers of the wrong length.
        """
        if not isinstance(data, dict):
            raise ValueError(f"a game record must be a JSON object, got {type(data).__name__}")
        version = data.get("version")
        if data.get("format") != FORMAT or not is_version(version, VERSION):
            raise ValueError(
                f"not a game record of this version: format {data.get('format')!r}, version "
                f"{version!r} (expected {FORMAT!r}, {VERSION})"
            )
        missing = [
            key for key in ("rows", "columns", "win_length", "players", "moves", "result") if key not in data
        ]
        if missing:
            raise ValueError(f"a game record needs the fields {missing}")
        try:
            rules = Rules(data["rows"], data["columns"], data["win_length"])
        except TypeError as error:
            raise ValueError(str(error)) from None
        players = data["players"]
        if not (isinstance(players, list) and len(players) == 2 and all(isinstance(p, str) for p in players)):
            raise ValueError(f"players must be a list of two agent specs, got {players!r:.80}")
        moves = data["moves"]
        board, forfeit = _replay(rules, moves, data.get("forfeit"))
        result = data["result"]
        if result not in RESULTS:
            raise ValueError(f"result {result!r:.40} is not one of {list(RESULTS)}")
        if forfeit is not None:
            actual = RESULTS[1 - forfeit["player"]]
        else:
            actual = "draw" if board.winner is None else RESULTS[board.winner]
        if result != actual:
            raise ValueError(f"result {result!r} disagrees with the moves, which give {actual!r}")
        seed, seeds, game, search = _optional_fields(data, rules, moves)
        return cls(
            rules.rows,
            rules.columns,
            rules.win_length,
            (players[0], players[1]),
            tuple(moves),
            result,
            seed,
            None if seeds is None else (seeds[0], seeds[1]),
            game,
            None if search is None else tuple(search),
            {key: value for key, value in data.items() if key not in _KNOWN},
            forfeit,
        )


def _replay(rules: Rules, moves: Any, forfeit_entry: Any) -> tuple[Board, dict[str, Any] | None]:
    """The position a record's ``moves`` reach and its checked ``forfeit``: the moves are legal, none comes
    after the end, and the game is finished (or forfeited where they stop).
    """
    if not isinstance(moves, list) or not all(type(m) is int for m in moves):
        raise ValueError(f"moves must be a list of integer columns, got {moves!r:.80}")
    if len(moves) > rules.cells:
        raise ValueError(f"{len(moves)} moves do not fit a board of {rules.cells} cells")
    board = Board(rules)
    for index, column in enumerate(moves):
        if board.is_terminal:
            raise ValueError(f"move {index} ({column}) comes after the end of the game")
        try:
            board.play(column)
        except IllegalMoveError as error:
            raise ValueError(f"move {index}: {error}") from None
    forfeit = _check_forfeit(forfeit_entry, board)
    if forfeit is None and not board.is_terminal:
        raise ValueError(f"the game is not finished after its {len(moves)} moves")
    return board, forfeit


def _optional_fields(data: dict[str, Any], rules: Rules, moves: list[int]) -> tuple[Any, Any, Any, Any]:
    """A record's ``seed``, ``seeds``, ``game`` and ``search``, checked (each may be absent: None)."""
    seed = data.get("seed")
    if seed is not None and type(seed) is not int:
        raise ValueError(f"seed must be an integer or null, got {seed!r:.40}")
    seeds = data.get("seeds")
    if seeds is not None and not (
        isinstance(seeds, list) and len(seeds) == 2 and all(s is None or type(s) is int for s in seeds)
    ):
        raise ValueError(f"seeds must be a list of two integers (or nulls), got {seeds!r:.80}")
    game = data.get("game")
    if game is not None and (type(game) is not int or game < 0):
        raise ValueError(f"game must be an integer >= 0, got {game!r:.40}")
    search = data.get("search")
    if search is not None:
        if not isinstance(search, list) or len(search) != len(moves):
            raise ValueError(f"search must be a list with one entry per move ({len(moves)})")
        for index, entry in enumerate(search):
            if entry is not None:
                _check_search(entry, rules, moves[index], index)
    return seed, seeds, game, search


def _check_forfeit(entry: Any, board: Board) -> dict[str, Any] | None:
    """A record's ``forfeit`` field, checked against the position where the moves stop."""
    if entry is None:
        return None
    if not isinstance(entry, dict) or set(entry) - {"player", "reason", "info"}:
        raise ValueError(f"forfeit must be an object with player, reason and info, got {entry!r:.80}")
    player, reason = entry.get("player"), entry.get("reason")
    if type(player) is not int or player not in (0, 1) or not isinstance(reason, str):
        raise ValueError(f"forfeit needs a player 0 or 1 and a reason string, got {entry!r:.80}")
    if board.is_terminal:
        raise ValueError("forfeit after the end of the game: the moves already finish it")
    if board.to_move != player:
        raise ValueError(f"forfeit by player {player}, but player {board.to_move} is to move after the moves")
    return {"player": player, "reason": reason, "info": entry.get("info")}


def _per_column(entry: dict[str, Any], key: str, rules: Rules, index: int, ok: Any) -> None:
    values = entry.get(key)
    if not isinstance(values, list) or len(values) != rules.columns or not all(ok(v) for v in values):
        raise ValueError(
            f"search[{index}]: {key} must be a list of {rules.columns} entries of the right kind, "
            f"got {values!r:.80}"
        )


def _check_search(entry: Any, rules: Rules, column: int, index: int) -> None:
    if not isinstance(entry, dict) or not isinstance(entry.get("kind"), str):
        raise ValueError(f"search[{index}] must be null or an object with a 'kind', got {entry!r:.80}")
    if "column" in entry and entry["column"] != column:
        raise ValueError(f"search[{index}] says column {entry['column']!r}, but move {index} is {column}")
    if entry["kind"] == "mcts":
        _per_column(entry, "visits", rules, index, lambda v: type(v) is int and v >= 0)
        _per_column(
            entry,
            "values",
            rules,
            index,
            lambda v: v is None or (type(v) in (int, float) and math.isfinite(v) and 0 <= v <= 1),
        )
        if "proven" in entry:
            _per_column(entry, "proven", rules, index, lambda v: v in (None, "win", "draw", "loss"))
    elif entry["kind"] == "solver":
        _per_column(entry, "scores", rules, index, lambda v: v is None or type(v) is int)
    elif entry["kind"] == "ntuple":
        _per_column(
            entry,
            "values",
            rules,
            index,
            lambda v: v is None or (type(v) in (int, float) and math.isfinite(v) and -1 <= v <= 1),
        )


class _KeptGames(Protocol):
    """What `match_logs` reads: a match result with its games kept (``play_match(keep_games=True)``)."""

    @property
    def games(self) -> Sequence[GameLog]: ...


def game_log(
    record: GameLog,
    players: Sequence[str],
    rules: Rules,
    seed: int | None = None,
    seeds: tuple[int | None, int | None] | None = None,
    game: int | None = None,
) -> GameLog:
    """``record`` (a game `connect4_agents.evaluation.arena.play_game` returned) labelled for a
    records file, checked as `read_games` would read it back.

    Args:
        record: the game; its search numbers are kept (present when played with ``record_search=True``).
        players: the first mover's spec, then the second's (they replace the arena's labels).
        rules: the board the game was played on (must be the record's).
        seed: the run's seed (None keeps the record's own).
        seeds: the players' reset seeds (None keeps the record's own, which ``play_game(seeds=...)`` fills).
        game: the game's number in the run (None keeps the record's own).

    Returns:
        A new `GameLog` (``record`` is unchanged).

    Raises:
        TypeError: ``record`` is not a `GameLog`, or a field (such as its search numbers) is not JSON data.
        ValueError: ``rules`` are not the record's, ``players`` is not two names, or a field would not read
            back (see `GameLog.from_dict`).
    """
    if not isinstance(record, GameLog):
        raise TypeError(f"game_log labels a GameLog (what play_game returns), got {type(record).__name__}")
    if rules != record.rules:
        raise ValueError(f"rules {rules} are not the game's, {record.rules}")
    if isinstance(players, str) or len(players) != 2:
        raise ValueError(f"players must be two agent specs (first mover first), got {players!r:.80}")
    log = dataclasses.replace(
        record,
        players=(str(players[0]), str(players[1])),
        seed=record.seed if seed is None else seed,
        seeds=record.seeds if seeds is None else seeds,
        game=record.game if game is None else game,
    )
    return GameLog.from_dict(json.loads(json.dumps(log.to_dict())))  # what is written is what reads back


def match_logs(
    result: _KeptGames, names: Sequence[str], rules: Rules, seed: int | None = None
) -> list[GameLog]:
    """The games of a `connect4_agents.evaluation.arena.play_match` run with ``keep_games=True`` as
    records: ``names`` are A's and B's specs, A moving first in the even-numbered games (as ``play_match``
    plays them); each game's number is its index.

    Returns:
        One checked `GameLog` per kept game, in order.

    Raises:
        ValueError: as `game_log`.
    """
    pair = tuple(names)
    return [
        game_log(record, pair if index % 2 == 0 else pair[::-1], rules, seed=seed, game=index)
        for index, record in enumerate(result.games)
    ]


def read_games(path: str | os.PathLike[str]) -> list[GameLog]:
    """Every game of a records file (JSON lines, ``.gz`` decompressed), each line checked.

    Raises:
        ValueError: a line that is not JSON or not a valid record (the message names the file and the line),
            or a file over 256 MB decompressed.
        OSError: the file cannot be read.
    """
    return read_json_lines(path, MAX_FILE_BYTES, "game records", GameLog.from_dict)


def write_games(path: str | os.PathLike[str], games: Iterable[GameLog], append: bool = False) -> Path:
    """Write ``games`` one per line, atomically (a crash leaves the old file whole). ``append`` keeps the
    file's lines before them (the file need not exist).

    Returns:
        The path written.

    Raises:
        TypeError: an item is not a `GameLog`, or its search numbers are not JSON data.
        ValueError: a game that would not read back (see `GameLog.from_dict`); the file is untouched.
        OSError: the file cannot be written.
    """
    games = list(games)
    for game in games:
        if not isinstance(game, GameLog):
            raise TypeError(f"write_games writes GameLog objects, got {type(game).__name__}")
    lines = [json.dumps(game.to_dict(), separators=(",", ":")) + "\n" for game in games]
    for index, line in enumerate(lines):
        # a line that would not read back is refused before the file is touched
        try:
            GameLog.from_dict(json.loads(line))
        except ValueError as error:
            raise ValueError(f"game {index} is not a valid record: {error}") from None
    head = b""
    if append:
        try:
            head = Path(path).read_bytes()
        except FileNotFoundError:
            head = b""
        if head and not head.endswith(b"\n"):
            head += b"\n"
    body = head + "".join(lines).encode()
    return atomic_write(path, lambda stream: stream.write(body))
