r"""DeepMind's ``game_arena`` package (0.1.0: a ``RuleBasedMoveParser`` then a ``SoftMoveParser("connect_four")``,
the chain its rethink sampler applies): OpenSpiel's board spaced out and the moves so far, 0-based columns, read
strictly; three rethinks, then a forfeit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from connect4_env.core import Board
from connect4_env.envs.dialects.base import RETHINK_QUOTE_LENGTH, Dialect, ParseResult, echo, printable_tail
from connect4_env.envs.dialects.game_arena import history_line, openspiel_board

__all__ = ["DeepMindGameArenaDialect"]

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


@dataclass(frozen=True)
class DeepMindGameArenaDialect(Dialect):
    r"""DeepMind's ``game_arena`` package, strict: the text after the last ``:`` or ``is`` (case as written,
    inside words too: ``this``), with spaces and dots trimmed from its ends, then ``$``, ``\boxed{``,
    ``\text{``, ``}``, ``*``, spaces, backticks, line breaks and ``<...>`` tags taken out, must be a legal
    column exactly as written: ``Final Answer: **3**`` plays 3, ``Final Answer: 3 is best``,
    ``Final Answer: column 3`` and ``Final Answer: 3.5`` are rejected, and no number elsewhere is a fallback.
    The moves so far are shown by default (its prompt without legal actions).
    """

    history: bool = True

    name: ClassVar[str] = "deepmind_game_arena"
    max_retries: ClassVar[int] = 3

    def render(
        self, board: Board, player: int, moves: Sequence[int], note: str | None, status: str | None
    ) -> str:
        """DeepMind's ``PROMPT_TEMPLATE_NO_LEGAL_ACTIONS`` for connect_four: OpenSpiel's rows spaced out, the
        moves as OpenSpiel's action strings, one message.
        """
        name = "xo"[player]
        lines = ["Let's play connect_four."]
        if not self.blind:
            spaced = (" ".join(row) for row in openspiel_board(board).splitlines())
            lines += ["The current game state in ASCII notation is:", *spaced]
        if self.history:
            lines += ["The moves played so far are:", history_line(moves)]
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
        return "\n".join(lines + ([note] if note else [])) + "\n"

    def read(self, text: str, board: Board) -> ParseResult:
        """The move after the last ``:`` or ``is``, cleaned, if it is one of the legal columns as written."""
        move = _deepmind_move(text)
        if move is None:
            return ParseResult(None, "no move could be read (end with 'Final Answer: <column_index>')")
        # SoftMoveParser: the player's letter and the move must be one of OpenSpiel's legal action strings
        legal = [str(column) for column in board.legal_moves()]
        if move not in legal:
            return ParseResult(
                None, f"move {echo(move, quote=False)} is not a legal column ({', '.join(legal)})"
            )
        return ParseResult(int(move), None)

    def rejection_note(self, answer: str, error: str, tries_left: int, cut_off: bool = False) -> str:
        """Its RETHINK_WITH_ENV rule: the move quoted if one was read, else the answer's end (cut-off answers are
        not told apart).
        """
        move = _deepmind_move(answer)
        if move is None:
            return (
                "Your previously suggested move could not be parsed. Think carefully and give a new, legal "
                f"move. Your previous response was:\n{printable_tail(answer, RETHINK_QUOTE_LENGTH)}"
            )
        return (
            f"Your previously suggested move was {echo(move, quote=False)}, which is an illegal move. "
            "Think carefully and give a new, legal move."
        )
