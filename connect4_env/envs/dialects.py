r"""Dialects (one job: each harness's prompt, answer reader and retry rule side by side, one class a dialect).

How a position is shown to a language model and how its answer is read, in the conventions of the harnesses
that evaluate models on games. Pure functions on [`Board`][connect4_env.core.Board]; no env here.

| dialect | board shown | columns | answer | a rejected answer |
|---|---|---|---|---|
| `"connect4"` (this package's own) | grid with numbers above, letters below, `X` = the model | 1-based (or a letter) | `4`, `d`, `column 4`, `Move: 4`, `...<answer>4</answer>` | told why, 2 retries a move, then a loss |
| `"game_arena"` (Kaggle's Game Arena harness in kaggle-environments: lenient) | OpenSpiel's text: top row first, `x` first mover, `o`, `.` | 0-based | reasoning, then `Final Answer: 3`; else the last legal number | one rethink quoting the answer, then a forfeit |
| `"deepmind_game_arena"` (DeepMind's `game_arena` package: strict) | OpenSpiel's text spaced out (`. x o`), the moves so far (`x3 o3`) | 0-based | reasoning, then `Final Answer: 3`: what follows the last `:` or `is` | three rethinks, then a forfeit |
| `"textarena"` (TextArena `ConnectFour`) | header `0 1 2 ...`, dashes, rows top first, `X` Player 0, `O` | 0-based | `[col 3]`, `[3]`, a bare `3` | one free invalid answer a move, the second loses |
| `"json"` (OpenEnv `connect4_env` / tool calls) | a JSON object: `board` rows top first, `1` first mover, `-1`, `0` | 0-based | `{"column": 3}`, a `drop_disc` tool call | a loss at once |

Each dialect takes three options, each None for the dialect's own default: ``legal_moves`` (list the legal
columns), ``history`` (both players' moves so far) and ``blind`` (no board: the moves only, so ``history``
is then always on). A dialect is identified in records by ``template_hash``, a short hash of its prompt
text and options: two runs with the same hash showed the model the same prompts.

The Game Arena and TextArena readings follow those harnesses' parsers (kaggle-environments'
``open_spiel_env`` connect_four harness; DeepMind's ``game_arena.harness.parsers``, a
``RuleBasedMoveParser`` then a ``SoftMoveParser("connect_four")``; TextArena's ``ActionFormattingWrapper``
and ``ConnectFour`` env). `DIALECT_HARNESSES` names the harness each dialect matches.

- ``game_arena`` (Kaggle's, lenient): the last ``Final Answer: N`` (any case, any white space around the
  colon) if ``N`` is a legal column; otherwise the last number anywhere in the answer that is a legal column
  (their fallback, so ``"I considered column 2. Final Answer: 7"`` plays 2); otherwise rejected. ``N`` is
  read as written: ``03`` is no column, and a run of digits in any script (``3٣``) is one number, no
  column. A reply cut off at the length limit (``finish_reason="length"``, known to `TextPolicy`) is read the
  same way; when it gives no legal column, the retry text asks for a shorter answer.
- ``deepmind_game_arena`` (DeepMind's, strict): the text after the last ``:`` or ``is`` (case as written,
  inside words too: ``this``), with spaces and dots trimmed from its ends, then ``$``, ``\boxed{``,
  ``\text{``, ``}``, ``*``, spaces, backticks, line breaks and ``<...>`` tags taken out, must be a legal
  column exactly as written: ``Final Answer: **3**`` plays 3, ``Final Answer: 3 is best``,
  ``Final Answer: column 3`` and ``Final Answer: 3.5`` are rejected, and no number elsewhere is a fallback.
- ``textarena``: an answer without ``[`` or ``]`` is read as ``[answer]``; the first line where a
  ``[N]`` or ``[col N]`` starts (any case; any white space after ``col``, a no-break space or a line break
  included; ``N`` in any script's decimal digits, ``[٣]`` is 3) gives the last such bracket starting on it;
  ``[column 3]`` is rejected.
- ``json``: the last JSON object in the answer (of its last `JSON_TRIES` candidates) with a ``"column"``
  integer (``{"column": 3}``), or a tool call ``{"name": "drop_disc", "arguments": {"column": 3}}``
  (``arguments`` may be a JSON string), or ``drop_disc(3)`` / ``drop_disc(column=3)`` written as text. An
  object (or ``arguments`` string) nested deeper than `MAX_JSON_DEPTH` or holding more than
  `MAX_JSON_TOKENS` brackets, commas and quotes is not read, so a hostile answer is rejected like any
  unreadable one.

Every reader works in one pass over the answer and keeps only its last match, so reading takes memory of
about the answer's size whatever it holds, and a rejection quotes at most a few dozen of its characters.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from connect4_env.core import Board, check_board
from connect4_env.envs.text_protocol import (
    ECHO_LENGTH,
    MAX_ANSWER_LENGTH,
    SYSTEM_PROMPT,
    ParseResult,
    describe_position,
    echo,
    parse_column,
    rejection_note,
)
from connect4_env.rules import Rules, check_rules
from connect4_env.validation import check_bool, check_choice, check_int

__all__ = [
    "MAX_ANSWER_LENGTH",
    "DIALECTS",
    "Dialect",
    "DIALECT_HARNESSES",
    "get_dialect",
    "dialect_and_retries",
    "RETHINK_QUOTE_LENGTH",
    "JSON_TRIES",
    "MAX_JSON_DEPTH",
    "MAX_JSON_TOKENS",
]

DIALECTS = ("connect4", "game_arena", "deepmind_game_arena", "textarena", "json")
DIALECT_HARNESSES = {
    "connect4": "this package's own prompt and reader (1-based columns, letters too)",
    "game_arena": "Kaggle's Game Arena harness in kaggle-environments (open_spiel_env's connect_four, lenient: "
    "the last 'Final Answer: N', else the last legal number)",
    "deepmind_game_arena": "DeepMind's game_arena package (0.1.0: RuleBasedMoveParser then "
    "SoftMoveParser('connect_four'), strict: only what follows the last ':' or 'is')",
    "textarena": "TextArena's ConnectFour env ('[col N]')",
    "json": 'OpenEnv\'s connect4_env action ({"column": N}) and drop_disc tool calls',
}
"""The harness whose prompt, reader and retry rule each of `DIALECTS` follows."""
RETHINK_QUOTE_LENGTH = 1000
"""The most characters of a rejected answer that a Game Arena rethink prompt quotes (its end, where the
final answer is)."""

_SAFE = re.compile(r"[^\x20-\x7e\n]")


def _printable(text: str, limit: int) -> str:
    """The last ``limit`` characters of ``text`` as printable ASCII and newlines (anything else becomes
    ``?``), so a quoted answer keeps an observation short and in the text env's charset.
    """
    tail = text[-limit:] if len(text) > limit else text
    return ("..." if len(text) > limit else "") + _SAFE.sub("?", tail)


def _moves_checked(moves: Sequence[int], board: Board) -> tuple[int, ...]:
    if isinstance(moves, (str, bytes)) or not isinstance(moves, Sequence):
        raise TypeError(f"moves must be a sequence of 0-based columns, got {type(moves).__name__}")
    columns = board.rules.columns
    checked = tuple(check_int(f"moves[{index}]", move, 0, columns - 1) for index, move in enumerate(moves))
    if len(checked) > board.rules.cells:
        raise ValueError(f"{len(checked)} moves do not fit a board of {board.rules.cells} cells")
    return checked


@dataclass(frozen=True)
class Dialect:
    """One harness's way of showing a position and reading an answer; build one with `get_dialect`.

    Attributes:
        name: one of `DIALECTS`.
        legal_moves: the legal columns are listed.
        history: both players' moves so far are shown.
        blind: no board is shown (the moves are).
    """

    name: str
    legal_moves: bool
    history: bool
    blind: bool

    @property
    def base(self) -> int:
        """How columns are numbered in text: 0 (the harnesses) or 1 (this package's own)."""
        return 1 if self.name == "connect4" else 0

    @property
    def max_retries(self) -> int:
        """Rejected answers forgiven a move by the harness's rule (then the game is lost)."""
        return {"connect4": 2, "game_arena": 1, "deepmind_game_arena": 3, "textarena": 1, "json": 0}[
            self.name
        ]

    # -- the prompt ---------------------------------------------------------------------------------

    def system_prompt(self, rules: Rules | None = None, player: int = 0) -> str:
        """The instructions that come before the position ("" for the Game Arena dialects, whose prompt is one
        message).

        Raises:
            TypeError: ``rules`` is not a [`Rules`][connect4_env.rules.Rules] (or None), ``player`` not an int.
            ValueError: ``player`` is not 0 or 1.
        """
        rules = check_rules(rules, None) or Rules()
        player = check_int("player", player, 0, 1)
        if self.name == "connect4":
            return SYSTEM_PROMPT
        if self.name in ("game_arena", "deepmind_game_arena"):
            return ""
        if self.name == "textarena":
            return (
                f"You are Player {player} in Connect Four.\n"
                f"Your disc symbol: {'XO'[player]}.\n"
                f"The game board has {rules.rows} rows and {rules.columns} columns.\n"
                f"Players take turns dropping their disc into one of the columns (0 to {rules.columns - 1}).\n"
                f"The first to connect {rules.win_length} of their own discs vertically, horizontally, or "
                "diagonally wins.\n"
                "On your turn, enter the column number in squared brackets to make your move.\n"
                "For example: '[col 4]' or '[col 1]'."
            )
        return (
            "You are playing Connect Four. Each turn you get the game state as a JSON object: `board` lists the "
            "rows from the top, with 1 for the first player's discs, -1 for the second player's and 0 for an "
            f"empty cell; `player` is your number (1 or -1). Line up {rules.win_length} of your discs in a row, "
            "column or diagonal to win. Columns are numbered from 0 at the left. Answer with a JSON object "
            'naming the column, {"column": N}, or call the tool drop_disc with {"column": N}.'
        )

    def observation(
        self,
        board: Board,
        player: int,
        moves: Sequence[int] = (),
        note: str | None = None,
        status: str | None = None,
    ) -> str:
        """The position as the user's message for ``player`` (0 = first mover).

        Args:
            board: the position.
            player: who the model is (0 or 1).
            moves: the game's moves so far (0-based columns, first move first), for the history option and
                the opponent's last move; they are not checked against ``board``.
            note: a line added at the end (such as why the last answer was rejected), or None.
            status: replaces the line on whose move it is (a game lost by a rejected answer), or None.

        Raises:
            TypeError: ``board`` is not a [`Board`][connect4_env.core.Board], ``player`` or a move is not an
                int, or ``note`` / ``status`` is not a str or None.
            ValueError: ``player`` is not 0 or 1, a move is off the board, or there are more moves than cells.
        """
        board = check_board(board)
        player = check_int("player", player, 0, 1)
        moves = _moves_checked(moves, board)
        for name, text in (("note", note), ("status", status)):
            if text is not None and not isinstance(text, str):
                raise TypeError(f"{name} must be a str or None, got {type(text).__name__}")
        if status is None and self.name != "connect4" and board.is_terminal:
            status = _game_over(board, player)  # the own dialect's text words its own ending
        render = {
            "connect4": self._own,
            "game_arena": self._game_arena,
            "deepmind_game_arena": self._deepmind_game_arena,
            "textarena": self._textarena,
            "json": self._json,
        }[self.name]
        return render(board, player, moves, note, status)

    def prompt(self, board: Board, player: int, moves: Sequence[int] = (), note: str | None = None) -> str:
        """The whole prompt as one string: the system prompt, a blank line and the observation.

        Raises:
            TypeError: as `observation`.
            ValueError: as `observation`.
        """
        text = self.observation(board, player, moves, note)
        system = self.system_prompt(board.rules, player)
        return f"{system}\n\n{text}" if system else text

    def messages(
        self, board: Board, player: int, moves: Sequence[int] = (), note: str | None = None
    ) -> list[dict[str, str]]:
        """The prompt as chat messages (``[{"role", "content"}, ...]``, the shape of
        ``tokenizer.apply_chat_template`` and TRL's conversational datasets): a system message when the
        dialect has one, then the observation as the user's message.

        Raises:
            TypeError: as `observation`.
            ValueError: as `observation`.
        """
        text = self.observation(board, player, moves, note)
        system = self.system_prompt(board.rules, player)
        chat = [{"role": "system", "content": system}] if system else []
        return [*chat, {"role": "user", "content": text}]

    @cached_property
    def template_hash(self) -> str:
        """8 hex characters identifying the prompt template and options: a hash of the dialect's system
        prompt and of a fixed position's observation with a note, on the standard board.
        """
        board = Board(Rules()).play_moves([3, 3, 2])
        parts = [
            self.name,
            repr((self.legal_moves, self.history, self.blind, self.max_retries)),
            self.system_prompt(Rules(), 1),
            self.observation(board, 1, (3, 3, 2), note=self.rejection_note("4", "why", 0)),
        ]
        return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:8]

    def column_text(self, column: int) -> str:
        """How env column ``column`` (0-based) is written in this dialect's text."""
        return str(column + self.base)

    def max_observation_length(self, rules: Rules, *, note_length: int = 0, status_length: int = 0) -> int:
        """An upper bound on the characters of `observation` on ``rules``' board with a note of at most
        ``note_length`` characters and a status of at most ``status_length``, whatever the position.

        Raises:
            TypeError: ``rules`` is not a [`Rules`][connect4_env.rules.Rules], or a length not an int.
            ValueError: a length below 0.
        """
        rules = check_rules(rules)
        note_length = check_int("note_length", note_length, 0)
        status_length = check_int("status_length", status_length, 0)
        digits = len(str(rules.columns)) + 2  # a column's number, with a sign or comma and a space
        grid = (rules.rows + 3) * (rules.columns * (digits + 1) + 8)  # rows, header, letters, separator
        listing = rules.columns * (digits + 1) + 80  # the legal columns and their line
        history = rules.cells * (digits + 50) + 80  # one move: up to a sentence each (TextArena's)
        fixed = 2000  # the fixed sentences (the Game Arena prompt is the longest)
        return grid + listing + history + fixed + note_length + status_length + RETHINK_QUOTE_LENGTH + 8

    # -- reading an answer --------------------------------------------------------------------------

    def parse(self, text: str, board: Board, max_length: int = MAX_ANSWER_LENGTH) -> ParseResult:
        """Read a column from ``text`` by this dialect's rule (see the module docstring), for ``board``.

        Returns:
            A `ParseResult`: the 0-based column, or an error for the model. A full column or a number off the
            board is an error here (the harnesses reject both the same way). Never raises for a str.

        Raises:
            TypeError: ``text`` is not a str, ``board`` not a Board or ``max_length`` not an int.
            ValueError: ``max_length`` below 1.
        """
        if not isinstance(text, str):
            raise TypeError(f"an answer must be a str, got {type(text).__name__}")
        board = check_board(board)
        max_length = check_int("max_length", max_length, 1)
        if len(text) > max_length:
            return ParseResult(None, f"the answer has more than {max_length} characters")
        if self.name == "connect4":
            parsed = parse_column(text, board.rules.columns, max_length)
            if parsed.column is not None and not board.is_legal(parsed.column):
                return ParseResult(
                    None, f"column {parsed.column + 1} is full: answer one of the legal columns"
                )
            return parsed
        reader = {
            "game_arena": _read_game_arena,
            "deepmind_game_arena": _read_deepmind_game_arena,
            "textarena": _read_textarena,
            "json": _read_json,
        }[self.name]
        return reader(text, board)

    def rejection_note(self, answer: str, error: str, tries_left: int, cut_off: bool = False) -> str:
        """What the next prompt adds after a rejected answer: the harness's retry text.

        Args:
            answer: the rejected answer (the Game Arena dialects quote its end).
            error: why it was rejected.
            tries_left: answers left for this move.
            cut_off: the reply was cut off at the length limit (Game Arena then asks for a shorter one).

        Raises:
            TypeError: ``answer`` or ``error`` is not a str, ``tries_left`` not an int.
            ValueError: ``tries_left`` below 0.
        """
        for name, value in (("answer", answer), ("error", error)):
            if not isinstance(value, str):
                raise TypeError(f"{name} must be a str, got {type(value).__name__}")
        tries_left = check_int("tries_left", tries_left, 0)
        cut_off = check_bool("cut_off", cut_off)
        if self.name == "game_arena":
            if cut_off:
                return (
                    "Your last answer was cut off at the length limit before it gave a move, so no move was "
                    "recorded. Reason more briefly this time and end with the final answer line."
                )
            return (
                "No legal column could be read from your previous response. Think again and answer a legal, "
                "strong column. End with the final answer on its own last line, exactly in the format:\n"
                "Final Answer: <column_index>\n\n"
                f"Your previous response concluded with:\n{_printable(answer, RETHINK_QUOTE_LENGTH)}"
            )
        if (
            self.name == "deepmind_game_arena"
        ):  # its RETHINK_WITH_ENV rule (cut-off answers are not told apart)
            move = _deepmind_move(answer)
            if move is None:
                return (
                    "Your previously suggested move could not be parsed. Think carefully and give a new, legal "
                    f"move. Your previous response was:\n{_printable(answer, RETHINK_QUOTE_LENGTH)}"
                )
            return (
                f"Your previously suggested move was {echo(move, quote=False)}, which is an illegal move. "
                "Think carefully and give a new, legal move."
            )
        if self.name == "textarena":
            return (
                f"You attempted an invalid move. Reason: {error}. Please resubmit a valid move and remember to "
                "follow the game rules to avoid penalties."
            )
        if self.name == "json":
            return f"Your answer was rejected: {error}."
        return rejection_note(error, tries_left)

    # -- the renderings ------------------------------------------------------------------------

    def _history_line(self, moves: tuple[int, ...], symbols: str) -> str:
        if not moves:
            return "None"
        return " ".join(f"{symbols[index % 2]}{self.column_text(move)}" for index, move in enumerate(moves))

    def _own(
        self, board: Board, player: int, moves: tuple[int, ...], note: str | None, status: str | None
    ) -> str:
        last = moves[-1] if moves and len(moves) % 2 == player else None
        text = describe_position(
            board,
            player,
            last_opponent_column=last,
            note=None,
            status=status,
            legal=self.legal_moves,
            grid=not self.blind,
        )
        if self.history:
            spoken = " ".join(
                f"{'X' if index % 2 == player else 'O'}{move + 1}" for index, move in enumerate(moves)
            )
            text += f"Moves so far, first move first: {spoken or 'none'}.\n"
        if note:
            text += note + "\n"
        return text

    def _game_arena(
        self, board: Board, player: int, moves: tuple[int, ...], note: str | None, status: str | None
    ) -> str:
        rules = board.rules
        name = "xo"[player]
        lines = [
            "You are a strong Connect X player. Analyze the game state below and choose the best move.",
            "",
            "I. Game rules and configuration",
            "",
            "A. Game: Connect X (generalized Connect Four).",
            f"B. Board size: {rules.rows} rows and {rules.columns} columns.",
            "C. Gravity: a disc falls to the lowest empty cell of its column.",
            f"D. Win condition: the first player to get {rules.win_length} of their discs in a row "
            "(horizontally, vertically or diagonally) wins.",
            "E. Legal moves: you cannot play a column whose top row (row 0) is occupied.",
            f"F. Column indices: columns are 0-indexed from left to right (0 to {rules.columns - 1}).",
            f"G. You are playing as player {name}.",
            "",
            "II. Input data",
            "",
        ]
        if not self.blind:
            lines += ["Current board state:", "", _openspiel_board(board)]
        if self.history:
            lines += ["The moves played so far are:", self._history_line(moves, "xo"), ""]
        if self.legal_moves and status is None:
            lines += ["The legal moves are:", " ".join(str(c) for c in board.legal_moves()), ""]
        lines += [
            "III. Required final answer format",
            "",
            "Start with your reasoning and end with the final answer, on a single, final, new line, in the "
            "exact format:",
            "",
            "Final Answer: <column_index>",
            "",
            "where <column_index> is a single integer, the zero-based column index.",
        ]
        lines.append(
            status if status is not None else f"It is your move (player {name}). Choose the best column."
        )
        if note:
            lines.append(note)
        return "\n".join(lines) + "\n"

    def _deepmind_game_arena(
        self, board: Board, player: int, moves: tuple[int, ...], note: str | None, status: str | None
    ) -> str:
        # DeepMind's PROMPT_TEMPLATE_NO_LEGAL_ACTIONS for connect_four: OpenSpiel's rows spaced out, the moves
        # as OpenSpiel's action strings, one message
        name = "xo"[player]
        lines = ["Let's play connect_four."]
        if not self.blind:
            spaced = (" ".join(row) for row in _openspiel_board(board).splitlines())
            lines += ["The current game state in ASCII notation is:", *spaced]
        if self.history:
            lines += ["The moves played so far are:", self._history_line(moves, "xo")]
        if self.legal_moves and status is None:
            lines += ["The legal moves are:", " ".join(str(c) for c in board.legal_moves())]
        lines.append(f"You are playing as player {name}.")
        lines.append(
            status
            if status is not None
            else "It is now your turn. Play your strongest move; it must be legal. Reason step by step to come "
            'up with your move, then give your final answer in the format "Final Answer: X", where X is your '
            "move as a zero-based column number."
        )
        if note:
            lines.append(note)
        return "\n".join(lines) + "\n"

    def _textarena(
        self, board: Board, player: int, moves: tuple[int, ...], note: str | None, status: str | None
    ) -> str:
        rules = board.rules
        lines = []
        if self.history:
            for index, move in enumerate(moves):
                mover = index % 2
                lines.append(f"[GAME] Player {mover} dropped their disk ({'XO'[mover]}) into column {move}.")
        if self.blind:
            lines.append("[GAME] The game board is not visible to players.")
        else:
            width = len(str(rules.columns - 1))
            header = " ".join(str(c).rjust(width) for c in range(rules.columns))
            lines += ["[GAME] Board state:", header, "-" * len(header)]
            for row in range(rules.rows):
                cells = ("." if (s := board.cell(row, c)) is None else "XO"[s] for c in range(rules.columns))
                lines.append(" ".join(cell.rjust(width) for cell in cells))
        if self.legal_moves and status is None:
            lines.append("[GAME] Legal columns: " + ", ".join(f"[{c}]" for c in board.legal_moves()))
        if status is not None:
            lines.append(f"[GAME] {status}")
        if note:
            lines.append(f"[GAME] {note}")
        return "\n".join(lines) + "\n"

    def _json(
        self, board: Board, player: int, moves: tuple[int, ...], note: str | None, status: str | None
    ) -> str:
        rules = board.rules
        state: dict[str, object] = {}
        if not self.blind:
            state["board"] = [
                [
                    0 if (stone := board.cell(row, c)) is None else (1 if stone == 0 else -1)
                    for c in range(rules.columns)
                ]
                for row in range(rules.rows)
            ]
        state["player"] = 1 if player == 0 else -1
        if self.legal_moves:
            state["legal_actions"] = [] if status is not None else board.legal_moves()
        if self.history:
            state["moves"] = list(moves)
        if status is not None:
            state["status"] = status
        if note:
            state["note"] = note
        return json.dumps(state, separators=(", ", ": ")) + "\n"


def _game_over(board: Board, player: int) -> str:
    """The closing line of a finished game for ``player``."""
    if board.winner is None:
        return "Game over: a draw (the board is full)."
    return "Game over: you won." if board.winner == player else "Game over: you lost."


def _openspiel_board(board: Board) -> str:
    """OpenSpiel's ``connect_four`` state string: the top row first, ``x`` the first mover, ``o``, ``.``."""
    rules = board.rules
    rows = []
    for row in range(rules.rows):
        rows.append(
            "".join("." if (s := board.cell(row, c)) is None else "xo"[s] for c in range(rules.columns))
        )
    return "\n".join(rows) + "\n"


def _legal_digits(token: str, board: Board) -> int | None:
    """The column a number written as ``token`` names, if legal (read as written: ``"03"`` and ``"٣"``
    name none).
    """
    if len(token) > 6 or not token.isascii() or str(int(token)) != token:
        return None
    column = int(token)
    return column if column < board.rules.columns and board.is_legal(column) else None


def _last_match(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The last match of ``pattern`` in ``text``, in one pass that keeps no other match."""
    last = deque(pattern.finditer(text), maxlen=1)
    return last[0] if last else None


# Kaggle's patterns are Unicode: ``\s`` takes a no-break space, and ``\d+`` a run of any script's digits, which
# names a column only when it is all ASCII (``3\u0663`` is one number, no column)
_FINAL_ANSWER = re.compile(r"final\s+answer\s*:\s*(\d+)", re.IGNORECASE)
_NUMBER = re.compile(r"\d+")


def _read_game_arena(text: str, board: Board) -> ParseResult:
    # one pass each, keeping only the last match: a list of every number would cost ~64 bytes a character
    final = _last_match(_FINAL_ANSWER, text)
    if final is not None and (column := _legal_digits(final[1], board)) is not None:
        return ParseResult(column, None)
    column = None
    for match in _NUMBER.finditer(text):
        legal = _legal_digits(match[0], board)
        if legal is not None:
            column = legal
    if column is not None:
        return ParseResult(column, None)
    if final is not None:
        return ParseResult(None, f"Final Answer {echo(final[1], quote=False)} is not a legal column")
    return ParseResult(None, "no legal column index could be read (end with 'Final Answer: <column_index>')")


# What DeepMind's RuleBasedMoveParser takes out of the text after the split, in its order (each replaced in
# turn: "\\box}ed{" loses only its "}"); the two with an escape character (a backspace, a tab) are its own
# typos, kept since a model could write them
_DEEPMIND_REMOVED = ("$", "\\boxed{", "\\text{", "\boxed{", "\text{", "}", "*", " ", "`", "\n")


def _without_tags(text: str) -> str:
    """``text`` less each ``<...>`` tag (from a ``<`` to the first ``>`` after it), as ``re.sub("<.*?>", "",
    text)`` on text without line breaks, in one pass (the lazy regex rescans to the end from each ``<``).
    """
    kept = []
    position = 0
    while (opening := text.find("<", position)) >= 0 and (closing := text.find(">", opening + 1)) >= 0:
        kept.append(text[position:opening])
        position = closing + 1
    kept.append(text[position:])
    return "".join(kept)


def _deepmind_move(text: str) -> str | None:
    """The move DeepMind's ``RuleBasedMoveParser`` extracts from ``text``, or None (no ``:`` or ``is``, or
    nothing left). Its ``"Final Answer: "`` tag always ends before its own colon, so the last ``:`` or ``is``
    decides.
    """
    colon, word = text.rfind(":"), text.rfind("is")
    if colon < 0 and word < 0:
        return None
    move = text[colon + 1 :] if colon > word else text[word + 2 :]
    move = move.strip(" .")
    for removed in _DEEPMIND_REMOVED:
        move = move.replace(removed, "")
    return _without_tags(move) or None


def _read_deepmind_game_arena(text: str, board: Board) -> ParseResult:
    move = _deepmind_move(text)
    if move is None:
        return ParseResult(None, "no move could be read (end with 'Final Answer: <column_index>')")
    # SoftMoveParser: the player's letter and the move must be one of OpenSpiel's legal action strings
    legal = [str(column) for column in board.legal_moves()]
    if move not in legal:
        return ParseResult(None, f"move {echo(move, quote=False)} is not a legal column ({', '.join(legal)})")
    return ParseResult(int(move), None)


# TextArena's own pattern, Unicode as its regex is: any decimal digit (``[٣]``), any white space after ``col``
# (a no-break space, a line break)
_BRACKET = re.compile(r"\[(?:col\s*)?(\d+)\]", re.IGNORECASE)


def _read_textarena(text: str, board: Board) -> ParseResult:
    if "[" not in text and "]" not in text:
        text = f"[{text}]"
    first = _BRACKET.search(text)
    if first is None:
        return ParseResult(None, "Invalid action format. Expected format: '[col x]'")
    # TextArena's greedy ``.*`` takes the last bracket that starts on the first line where one starts
    line_end = text.find("\n", first.start())
    line_end = len(text) if line_end < 0 else line_end
    last = first
    for match in _BRACKET.finditer(text, first.end()):
        if match.start() >= line_end:
            break
        last = match
    token = last[1]
    column = int(token) if len(token) <= 6 else board.rules.columns
    if column >= board.rules.columns:
        return ParseResult(None, f"Column {echo(token, quote=False)} is out of bounds")
    if not board.is_legal(column):
        return ParseResult(None, f"Column {column} is full")
    return ParseResult(column, None)


_TOOL_TEXT = re.compile(r"drop_disc\s*\(\s*(?:column\s*=\s*)?(-?\d+)\s*\)", re.IGNORECASE | re.ASCII)


_OBJECT_START = re.compile(r'\{\s*["}]')
JSON_TRIES = 32
"""The most places a ``json`` answer is decoded from (its last candidate objects)."""
MAX_JSON_DEPTH = 32
"""The deepest nesting of arrays and objects a ``json`` answer's object (or a tool call's ``arguments``
string) may have to be decoded: a deeper one is not read (Python's decoder recurses once a level)."""
MAX_JSON_TOKENS = 4096
"""The most brackets, commas, quotes and backslashes an object may hold to be decoded: a tool call holds
tens, and the decoded value (and the work to find where it ends) stays small whatever the answer."""

_JSON_TOKEN = re.compile(r'[\[\]{},"\\]')


def _json_end(text: str, start: int) -> int | None:
    """Where the array or object opening at ``text[start]`` ends (one past its closing bracket), or None when
    it is not closed within `MAX_JSON_DEPTH` levels and `MAX_JSON_TOKENS` tokens. One pass over its
    structure, without decoding: brackets inside strings do not count.
    """
    depth = tokens = 0
    in_string = False
    escaped_at = -1
    for match in _JSON_TOKEN.finditer(text, start):
        tokens += 1
        if tokens > MAX_JSON_TOKENS:
            return None
        at = match.start()
        if at == escaped_at:  # the character after a backslash inside a string
            continue
        char = match.group()
        if in_string:
            if char == "\\":
                escaped_at = at + 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return None
        elif char in "]}":
            depth -= 1
            if depth <= 0:
                return at + 1 if depth == 0 else None
    return None


def _decode_json(text: str, start: int = 0) -> tuple[object, int] | None:
    """``(value, end)`` of the JSON value at ``text[start]`` (after white space), or None when there is none or
    it is an array or object past `MAX_JSON_DEPTH` / `MAX_JSON_TOKENS` (so decoding neither recurses deeply
    nor builds a large value).
    """
    while start < len(text) and text[start] in " \t\n\r":
        start += 1
    if start < len(text) and text[start] in "[{" and _json_end(text, start) is None:
        return None
    try:
        return json.JSONDecoder().raw_decode(text, start)
    except ValueError:  # not JSON there (a number of more than 4,300 digits included)
        return None


def _last_named_column(text: str) -> object:
    """The ``column`` named by the last outermost JSON object in ``text`` that names one (see `_column_of`):
    at most `JSON_TRIES` decodes, from the last places where a ``{`` can open an object. An object inside
    another (a tool call's arguments) is read only through the outer one.
    """
    starts: deque[int] = deque(maxlen=JSON_TRIES)  # the last ones only: a list of all is 36 bytes each
    for match in _OBJECT_START.finditer(text):
        starts.append(match.start())
    objects = []
    for start in starts:
        decoded = _decode_json(text, start)
        if decoded is not None:
            objects.append((start, decoded[1], decoded[0]))
    outermost = [
        (start, value)
        for start, end, value in objects
        if not any(other < start and end <= other_end for other, other_end, _ in objects)
    ]
    for _, value in reversed(outermost):
        column = _column_of(value)
        if column is not None:
            return column
    return None


def _column_of(value: object, message: bool = True) -> object:
    """The ``column`` a decoded object names: ``{"column": N}`` or a tool call's arguments."""
    if not isinstance(value, dict):
        return None
    if "column" in value:
        return value["column"]
    calls = value.get("tool_calls") if message else None  # an OpenAI chat message: its last call naming one
    if isinstance(calls, list):
        for call in reversed(calls[:64]):
            column = _column_of(call, message=False)
            if column is not None:
                return column
        return None
    call = value.get("function", value)  # OpenAI's {"type": "function", "function": {...}} or the bare call
    if isinstance(call, dict) and call.get("name") == "drop_disc":
        arguments = call.get("arguments", call.get("parameters"))
        if isinstance(arguments, str):  # a JSON string, bounded as the answer is
            decoded = _decode_json(arguments)
            if decoded is None or arguments[decoded[1] :].strip():
                return None
            arguments = decoded[0]
        if isinstance(arguments, dict):
            return arguments.get("column")
    return None


def _shown(value: object) -> str:
    """A decoded ``column`` value as a rejection quotes it: at most `ECHO_LENGTH` characters."""
    if isinstance(value, int):
        text = str(value) if abs(value) < 10**40 else ("-" if value < 0 else "") + "1" + "0" * 40
        return echo(text, quote=False)
    if isinstance(value, str):
        return echo(json.dumps(value[: ECHO_LENGTH + 1]))
    return echo(json.dumps(value)[: ECHO_LENGTH + 1])


def _read_json(text: str, board: Board) -> ParseResult:
    named = _last_named_column(text)
    if named is None:
        call = _last_match(_TOOL_TEXT, text)
        if call is not None:
            named = int(call[1]) if len(call[1]) <= 7 else board.rules.columns
    if named is None:
        return ParseResult(None, 'no column could be read: answer {"column": N}')
    if isinstance(named, float) and named.is_integer() and abs(named) < 1e9:
        named = int(named)  # {"column": 3.0}, which OpenEnv's pydantic model also takes
    elif isinstance(named, str) and named.isascii() and named.isdigit() and len(named) <= 7:
        named = int(named)  # {"column": "3"}, likewise
    if type(named) is not int:
        return ParseResult(None, f"column must be an integer, got {_shown(named)}")
    if not 0 <= named < board.rules.columns:
        return ParseResult(
            None, f"column {_shown(named)} is not on the board (0 to {board.rules.columns - 1})"
        )
    if not board.is_legal(named):
        return ParseResult(None, f"column {named} is full")
    return ParseResult(named, None)


def get_dialect(
    name: str | Dialect = "connect4",
    *,
    legal_moves: bool | None = None,
    history: bool | None = None,
    blind: bool | None = None,
) -> Dialect:
    """The dialect ``name`` with its options; None takes the dialect's default.

    Defaults: ``connect4`` lists the legal columns, no history; ``game_arena`` neither (as its harness);
    ``deepmind_game_arena`` shows the moves and no list (its prompt without legal actions);
    ``textarena`` shows the moves (TextArena's message log) and no list; ``json`` lists them
    (``legal_actions``, as OpenEnv), no history. ``blind=True`` turns ``history`` on.

    Raises:
        TypeError: ``name`` is not a str or `Dialect`, or an option not a bool or None.
        ValueError: ``name`` is not one of `DIALECTS`, or ``blind=True`` with ``history=False``.
    """
    if isinstance(name, Dialect):
        base = name
        name = base.name
        defaults = (base.legal_moves, base.history, base.blind)
    else:
        if not isinstance(name, str):
            raise TypeError(f"dialect must be a str or a Dialect, got {type(name).__name__}")
        check_choice("dialect", name, DIALECTS)
        defaults = {
            "connect4": (True, False, False),
            "game_arena": (False, False, False),
            "deepmind_game_arena": (False, True, False),
            "textarena": (False, True, False),
            "json": (True, False, False),
        }[name]
    options = []
    for option, value, default in zip(
        ("legal_moves", "history", "blind"), (legal_moves, history, blind), defaults
    ):
        options.append(default if value is None else check_bool(option, value))
    legal, shown, hidden = options
    if hidden and history is False:
        raise ValueError("blind=True needs history: a blind prompt shows the moves instead of the board")
    return Dialect(name, legal, shown or hidden, hidden)


def dialect_and_retries(
    dialect: str,
    max_retries: int | None,
    limit: int,
    *,
    legal_moves: bool | None = None,
    history: bool | None = None,
    blind: bool | None = None,
) -> tuple[Dialect, int]:
    """A player's dialect (by name, with its options) and its rejected answers forgiven a move: ``max_retries``,
    or the dialect's rule when None; what the text env, the two-seat game and `TextPolicy` take.

    Raises:
        TypeError: ``dialect`` is not a str, an option not a bool or None, or ``max_retries`` not an int.
        ValueError: an unknown dialect, ``blind=True`` with ``history=False``, or ``max_retries`` outside
            ``0..limit``.
    """
    if not isinstance(dialect, str):
        raise TypeError(f"dialect must be a str, one of {list(DIALECTS)}, got {type(dialect).__name__}")
    chosen = get_dialect(dialect, legal_moves=legal_moves, history=history, blind=blind)
    retries = chosen.max_retries if max_retries is None else max_retries
    return chosen, check_int("max_retries", retries, 0, limit)
