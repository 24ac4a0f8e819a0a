"""A ``str -> str`` function as a policy (env side: `connect4_env.envs.text_env`; one job: a move asked of a model).

The function (a local language model, an API call) reads ``Connect4Text-v0``'s text and answers a column,
within a time limit, so it plays in our arena, tournaments and Elo ladder.

Examples:
    >>> from connect4_agents.interop.text import TextPolicy, leftmost_legal_answer
    >>> from connect4_agents.evaluation.arena import play_match
    >>> from connect4_agents.random_agent import RandomAgent
    >>> result = play_match(TextPolicy(leftmost_legal_answer), RandomAgent(seed=0), 2)
    >>> result.wins + result.draws + result.losses
    2

As a spec, ``text:<module>:<function>`` (``connect4 tournament text:mypkg.llm:answer solver``) imports the
function, from the import path or else the current folder (as ``python -m`` finds modules).
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from connect4_agents.base import check_spec_value, legal_columns
from connect4_env.core import Board
from connect4_env.encoding import board_from_observation, split_observation
from connect4_env.envs.dialects import MAX_ANSWER_LENGTH, dialect_and_retries, echo
from connect4_env.policy import Forfeit, import_spec_module
from connect4_env.rules import Rules, check_rules
from connect4_env.validation import check_bool, check_choice, check_int, check_number, seeded_rng

__all__ = [
    "TextPolicy",
    "TextAnswer",
    "leftmost_legal_answer",
    "FALLBACKS",
    "MAX_KEPT_TEXT",
    "MAX_RUNNING_CALLS",
]

FALLBACKS = ("random", "raise", "forfeit")
MAX_TIME_LIMIT = 7 * 24 * 3600.0  # a week: far longer waits overflow the platform's clock in threading
MAX_RUNNING_CALLS = 4
"""The most calls of a `TextPolicy`'s model that may still be running after their move's time limit (Python
cannot stop a thread): while that many are, a move does not call the model and gets no answer, so a model that
hangs holds at most this many threads, however many moves are asked of it."""


def leftmost_legal_answer(prompt: str) -> str:
    """A stand-in model: answers the first column of the prompt's ``Legal columns:`` line (for demos, tests)."""
    match = re.search(r"Legal columns: (\d+)", prompt)
    return f"<answer>{match[1] if match else 1}</answer>"


def _added_column(before: Board, after: Board) -> int | None:
    """The column of the one stone ``after`` has on top of ``before`` (None if it is not exactly one stone of
    the player to move in ``before``).
    """
    changed = [c for c in range(before.rules.columns) if after.heights[c] != before.heights[c]]
    if len(changed) != 1 or after.heights[changed[0]] != before.heights[changed[0]] + 1:
        return None
    probe = before.copy()
    probe.play(changed[0])
    return changed[0] if probe == after else None


def _call_with_deadline(
    generate: Callable[[Any], Any], prompt: Any, seconds: float, running: list[threading.Thread]
) -> tuple[Any, str | None]:
    """``(answer, None)`` (whatever ``generate`` returned), or ``(None, why)`` when it raised or timed out (``why``
    quotes the model's exception through ``echo``, so a huge or non-ASCII message stays out of the next prompt).
    The call runs in a daemon thread: one that overruns is abandoned (Python cannot stop it), added to
    ``running``, and its answer dropped whenever it comes.
    """
    box: dict[str, Any] = {}

    def call() -> None:
        try:
            box["answer"] = generate(prompt)
        except BaseException as error:  # SystemExit too: a thread ends on it silently
            box["error"] = f"{echo(type(error).__name__, quote=False)}: {echo(str(error))}"

    thread = threading.Thread(target=call, name="TextPolicy.generate", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        running.append(thread)
        return None, f"no answer within {seconds:g} s"
    if "error" in box:
        return None, f"the model raised {box['error']}"
    return box.get("answer"), None


@dataclass(frozen=True)
class TextAnswer:
    """What a model returned for one prompt, with what its caller knows about the call.

    ``generate`` may return a plain ``str`` (the text) or one of these (or a dict with these keys); the
    extra fields are kept in the game record. A reply cut off at the token limit (``finish_reason="length"``)
    is read like any other, as Game Arena reads it; when it gives no legal column, the rejection says so.

    Attributes:
        text: the answer the move is read from.
        reasoning: the model's separate reasoning text, if the API returns one.
        prompt_tokens: tokens in the prompt, if known.
        completion_tokens: tokens generated, if known.
        finish_reason: why generation stopped (``"stop"``, ``"length"``, ...), if known.
    """

    text: str
    reasoning: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None


MAX_KEPT_TEXT = 20_000
"""The most characters of an answer or reasoning text kept in a move's record (its start; the rest is cut)."""
_REPORTED = ("prompt_tokens", "completion_tokens", "finish_reason")  # what a model reports, kept as it is
_TRY_FIELDS = ("prompt", "answer", "column", "error", "seconds", "reasoning", *_REPORTED)


def _as_answer(value: Any) -> tuple[TextAnswer | None, str | None]:
    """``(answer, None)`` for a str, `TextAnswer` or dict with a str ``text``; else ``(None, why)``."""
    if isinstance(value, str):
        return TextAnswer(value), None
    if isinstance(value, dict):
        unknown = set(value) - {"text", "reasoning", "prompt_tokens", "completion_tokens", "finish_reason"}
        if not isinstance(value.get("text"), str) or unknown:
            return None, "the model answered a dict without a str 'text' (or with unknown keys)"
        value = TextAnswer(**value)
    if not isinstance(value, TextAnswer):
        return None, f"the model answered {echo(type(value).__name__, quote=False)}, not str"
    if not isinstance(value.text, str):
        return None, f"the model's text is {echo(type(value.text).__name__, quote=False)}, not str"
    for name in ("prompt_tokens", "completion_tokens", "reasoning", "finish_reason"):
        field, count = getattr(value, name), name.endswith("_tokens")
        if field is not None and not (
            (type(field) is int and field >= 0) if count else isinstance(field, str)
        ):
            return None, f"the model's {name} is not {'a count' if count else 'a str'}"
    return value, None


class TextPolicy:
    """A ``generate(prompt) -> answer`` function as a `connect4_env.policy.Policy`, in any dialect.

    Each move, the prompt is the dialect's ([`get_dialect`][connect4_env.envs.dialects.get_dialect]): its
    system prompt (where it has one), a blank line and the position as its harness shows it (``Connect4Text-v0``'s
    text for the default ``"connect4"``), and the answer is read back by its rule. With ``chat=True``, ``generate`` gets the chat messages (``[{"role", "content"}, ...]``) instead of one
    string. ``generate`` returns the answer as a ``str`` or a `TextAnswer` (or a dict of its
    fields), which adds reasoning, token counts and a finish reason to the record.

    A rejected answer is asked again with the dialect's retry text, up to ``max_retries`` times a move. If no
    legal column comes within ``time_limit`` seconds for the whole move (or the retries run out),
    ``fallback`` decides: ``"random"`` plays a random legal column, ``"raise"`` raises, ``"forfeit"`` gives
    the game up ([`Forfeit`][connect4_env.policy.Forfeit]: the game runners score it as a loss, as Game Arena
    and TextArena do). The moves of both players are followed from the positions the policy is shown (for the
    history option); a policy that joins a game midway shows no moves before it.

    Each call of ``generate`` runs in a thread of its own; one still running at the move's time limit is
    abandoned (Python cannot stop it), and a model that hangs holds at most `MAX_RUNNING_CALLS` threads (a move
    then asks nothing, and ``fallback`` decides as after a timeout).

    After each move, `move_info` gives the record of the move (every prompt, raw answer, parsed column,
    rejection, time, and what the model reported); counts are kept in `stats`.

    Args:
        generate: the model: a prompt in, an answer out.
        dialect: a dialect's name, a key of [`DIALECTS`][connect4_env.envs.dialects.DIALECTS].
        time_limit: seconds per move, all tries together (more than 0, at most a week).
        max_retries: rejected answers asked again per move (0 to 1,000); None: the dialect's rule (2, 1, 3, 1, 0).
        fallback: ``"random"``, ``"raise"`` or ``"forfeit"``; None: the dialect's
            ([`Dialect.fallback`][connect4_env.envs.dialects.base.Dialect]: ``"random"`` for ``"connect4"``,
            ``"forfeit"`` for the harnesses' dialects, their rule).
        system_prompt: replaces the dialect's instructions (None keeps them).
        seed: for the random fallback.
        legal_moves: list the legal columns (None: the dialect's default).
        history: show both players' moves so far (None: the dialect's default).
        blind: show no board (None: the dialect's default).
        chat: call ``generate`` with chat messages instead of one string.
        max_answer_length: longer answers are rejected unread (1 to 1,000,000 characters); None: the dialect's
            default ([`MAX_ANSWER_LENGTH`][connect4_env.envs.dialects.base.MAX_ANSWER_LENGTH] for every built-in
            dialect, as ``Connect4Text-v0``'s and ``serve-openenv``'s).
    """

    def __init__(
        self,
        generate: Callable[[Any], Any],
        *,
        dialect: str = "connect4",
        time_limit: float = 30.0,
        max_retries: int | None = None,
        fallback: str | None = None,
        system_prompt: str | None = None,
        seed: int | None = None,
        legal_moves: bool | None = None,
        history: bool | None = None,
        blind: bool | None = None,
        chat: bool = False,
        max_answer_length: int | None = None,
    ) -> None:
        if not callable(generate):
            raise TypeError(f"generate must be a callable str -> str, got {generate!r}")
        self.dialect, self.max_retries = dialect_and_retries(
            dialect, max_retries, 1000, legal_moves=legal_moves, history=history, blind=blind
        )
        self.generate = generate
        self.time_limit = check_number("time_limit", time_limit, 0.0, MAX_TIME_LIMIT, above_minimum=True)
        chosen = self.dialect.fallback if fallback is None else fallback
        self.fallback = check_choice("fallback", chosen, FALLBACKS)
        if system_prompt is not None and not isinstance(system_prompt, str):
            raise TypeError(f"system_prompt must be a str or None, got {type(system_prompt).__name__}")
        self.system_prompt = system_prompt
        self.chat = check_bool("chat", chat)
        length = self.dialect.answer_length if max_answer_length is None else max_answer_length
        self.max_answer_length = check_int("max_answer_length", length, 1, MAX_ANSWER_LENGTH)
        self.win_length = 4
        self.stats = {"moves": 0, "answers": 0, "rejected": 0, "timeouts": 0, "fallbacks": 0, "forfeits": 0}
        self.transcript: list[tuple[str, str | None]] = []
        self._info: dict[str, Any] | None = None
        self._rng = seeded_rng(seed)
        self._moves: list[int] = []
        self._after: Board | None = None  # the position after this policy's last move
        self._running: list[threading.Thread] = []  # calls abandoned at their time limit, maybe still running

    def __getstate__(self) -> dict[str, Any]:
        """The policy without its abandoned calls' threads (which cannot be pickled), for worker processes."""
        return {**self.__dict__, "_running": []}

    @property
    def template_hash(self) -> str:
        """The prompt template's short hash (the dialect's, or of the replaced system prompt too)."""
        if self.system_prompt is None:
            return self.dialect.template_hash
        text = f"{self.dialect.template_hash}\x00{self.system_prompt}"
        return hashlib.sha256(text.encode()).hexdigest()[:8]

    @classmethod
    def from_spec(cls, value: str, seed: int | None = None) -> TextPolicy:
        """``text:<module>:<function>`` or ``text:<module>:<function>:<dialect>``: the function imported by name.

        The module is looked for on the import path, then in the current folder, as ``python -m`` finds it
        (see [`import_spec_module`][connect4_env.policy.import_spec_module]): ``text:mybot:answer`` plays
        ``answer`` of the ``mybot.py`` in the folder the command runs from, without ``PYTHONPATH``.

        Raises:
            ValueError: ``value`` is not ``module:function[:dialect]``, names a module found neither on the
                import path nor in the current folder (the message says where it looked), nothing callable, or
                an unknown dialect.
        """
        value = check_spec_value(value)
        parts = value.split(":")
        if len(parts) not in (2, 3) or not all(parts):
            raise ValueError(
                f"text spec value {value!r} must be 'module:function' or 'module:function:dialect', "
                "e.g. 'mypkg.llm:answer:game_arena'"
            )
        module_name, name = parts[0], parts[1]
        dialect = parts[2] if len(parts) == 3 else "connect4"
        try:
            generate = getattr(import_spec_module(module_name), name)
        except (ImportError, AttributeError, ValueError) as error:
            raise ValueError(
                f"text spec {value!r}: cannot import {name!r} from {module_name!r}: {error}"
            ) from error
        if not callable(generate):
            raise ValueError(f"text spec {value!r}: {name!r} is not callable")
        return cls(generate, dialect=dialect, seed=seed)

    def bind(self, rules: Rules) -> None:
        """Take ``rules``' line length (the observation planes do not carry it).

        Raises:
            TypeError: ``rules`` is not a [`Rules`][connect4_env.rules.Rules].
        """
        self.win_length = check_rules(rules).win_length

    def reset(self, seed: int | None = None) -> None:
        """Start a new game's move list; reseed the random fallback (when ``seed`` is given)."""
        if seed is not None:
            self._rng = seeded_rng(seed)
        self._moves = []
        self._after = None

    def _follow(self, board: Board) -> list[int]:
        """The game's moves so far, followed from the position after this policy's last move."""
        after = self._after
        if board.ply <= 1:
            first = _added_column(Board(board.rules), board) if board.ply == 1 else None
            self._moves = [] if first is None else [first]
        elif after is not None and after.rules == board.rules and board.ply == after.ply + 1:
            column = _added_column(after, board)
            self._moves = self._moves + [column] if column is not None else []
        else:
            self._moves = []  # joined midway, or another game: no history before this position
        return self._moves

    def prompt(self, observation: Any, action_mask: Any = None, note: str | None = None) -> str:
        """The prompt for a position given as planes (+ mask), as one string.

        Raises:
            TypeError: ``note`` is not a str or None, or the planes are not an array.
            ValueError: the planes are not a reachable position.
        """
        if note is not None and not isinstance(note, str):
            raise TypeError(f"note must be None or a str, got {type(note).__name__}")
        planes, _ = split_observation(observation, action_mask)
        board = board_from_observation(planes, self.win_length)
        return self._render(board, self._moves if len(self._moves) == board.ply else [], note, chat=False)

    def _render(self, board: Board, moves: list[int], note: str | None, chat: bool) -> Any:
        messages = self.dialect.messages(board, board.to_move, moves, note)
        if self.system_prompt is not None:
            messages = [{"role": "system", "content": self.system_prompt}, messages[-1]]
        return messages if chat else "\n\n".join(message["content"] for message in messages)

    def move_info(self) -> dict[str, Any] | None:
        """The last move's record for game records (`play_game(record_search=True)` keeps it): ``kind`` "text",
        ``column``, ``dialect``, ``template`` (`template_hash`), ``outcome`` (``"answered"``,
        ``"fallback"`` or ``"forfeit"``) and ``tries``, one per answer asked for: ``prompt``, ``answer``,
        ``column`` (0-based, as read, or None), ``error`` (why it was rejected, or None), ``seconds`` and
        the model's ``reasoning``, ``prompt_tokens``, ``completion_tokens`` and ``finish_reason`` (None where
        not reported). Texts are cut to `MAX_KEPT_TEXT` characters. None before the first move.
        """
        return None if self._info is None else dict(self._info)

    def act(self, observation: Any, action_mask: Any = None) -> int:
        """Ask the model for a column; returns a legal column (0-based).

        Raises:
            TimeoutError: under ``fallback="raise"``, the model gave no answer within the move's time limit.
            ValueError: under ``fallback="raise"``, every answer was rejected; or the planes are not a
                reachable position, or the mask does not have one 0/1 entry per column.
            Forfeit: under ``fallback="forfeit"``, no legal column came (a ValueError; the game runners end
                the game there).
            NoLegalMoveError: the mask allows no column (a ValueError).
        """
        planes, mask = split_observation(observation, action_mask)
        legal = legal_columns(mask)
        board = board_from_observation(planes, self.win_length)
        moves = self._follow(board)
        deadline = time.monotonic() + self.time_limit
        self.stats["moves"] += 1
        self.transcript = []
        tries: list[dict[str, Any]] = []
        note, why, column = None, "no answer", None
        for attempt in range(self.max_retries + 1):
            remaining = deadline - time.monotonic()
            self._running = [thread for thread in self._running if thread.is_alive()]
            if remaining <= 0:
                why = f"no answer within {self.time_limit:g} s"
                break
            if len(self._running) >= MAX_RUNNING_CALLS:
                why = (
                    f"no answer within {self.time_limit:g} s: the model was not asked, as {len(self._running)} "
                    "earlier calls that ran past their time limit are still running"
                )
                self.stats["timeouts"] += 1
                break
            entry, column, note = self._try(
                board, moves, note, remaining, legal, self.max_retries - attempt - 1
            )
            tries.append(entry)
            if column is not None:
                break
            why = entry["error"]
            if note is None:  # the model gave no answer in time
                self.stats["timeouts"] += 1
                break
            self.stats["rejected"] += 1
        info = {"kind": "text", "dialect": self.dialect.name, "template": self.template_hash, "tries": tries}
        outcome = "answered"
        if column is None:
            outcome = self.fallback if self.fallback != "random" else "fallback"
            self._info = {**info, "outcome": outcome}
            if self.fallback == "raise":
                raise (TimeoutError if why.startswith("no answer within") else ValueError)(
                    f"TextPolicy: {why}"
                )
            if self.fallback == "forfeit":
                self.stats["forfeits"] += 1
                raise Forfeit(f"TextPolicy: {why}", dict(self._info))
            self.stats["fallbacks"] += 1
            column = int(self._rng.choice(legal))
        self._info = {**info, "column": column, "outcome": outcome}
        after = board.copy()
        after.play(column)
        self._after = after
        self._moves = [*moves, column]
        return column

    def _try(
        self,
        board: Board,
        moves: list[int],
        note: str | None,
        seconds: float,
        legal: np.ndarray,
        tries_left: int,
    ) -> tuple[dict[str, Any], int | None, str | None]:
        """Ask the model once: the try's record, the legal column it gave (or None) and, when it gave none, the
        rejection note for the next try (None when it gave no answer in time: the move ends).
        """
        prompt = self._render(board, moves, note, self.chat)
        started = time.monotonic()
        raw, why = _call_with_deadline(self.generate, prompt, seconds, self._running)
        answer, why = (None, why) if why is not None else _as_answer(raw)
        shown = prompt if isinstance(prompt, str) else "\n\n".join(m["content"] for m in prompt)
        entry = dict.fromkeys(_TRY_FIELDS) | {
            "prompt": shown,
            "seconds": round(time.monotonic() - started, 3),
        }
        self.transcript.append((shown, None if answer is None else answer.text))
        cut_off = False
        if answer is None:
            assert why is not None
            if why.startswith("no answer within"):
                entry["error"] = (
                    f"no answer within {self.time_limit:g} s"  # the move's limit, not what was left
                )
                return entry, None, None
        else:
            self.stats["answers"] += 1
            entry.update(
                answer=answer.text[:MAX_KEPT_TEXT],
                reasoning=answer.reasoning and answer.reasoning[:MAX_KEPT_TEXT],
            )
            entry.update({name: getattr(answer, name) for name in _REPORTED})
            cut_off = answer.finish_reason == "length"
            parsed = self.dialect.parse(answer.text, board, self.max_answer_length)
            entry["column"] = parsed.column
            if parsed.column is not None and parsed.column in legal:
                return entry, int(parsed.column), None
            why = parsed.error or f"column {self.dialect.column_text(parsed.column or 0)} is full"
            if cut_off:
                why = f"the answer was cut off at the length limit ({why})"
        entry["error"] = why
        text = "" if answer is None else answer.text
        return entry, None, self.dialect.rejection_note(text, why, max(tries_left, 0), cut_off=cut_off)

    def __repr__(self) -> str:
        name = getattr(self.generate, "__qualname__", type(self.generate).__name__)
        return f"TextPolicy({name})"
