"""A ``str -> str`` function as a policy (env side: `connect4_env.envs.text_env`, ``Connect4Text-v0``).

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
function.
"""

from __future__ import annotations

import importlib
import re
import threading
import time
from collections.abc import Callable
from typing import Any

from connect4_agents.base import check_spec_value, legal_columns
from connect4_env.encoding import board_from_observation, split_observation
from connect4_env.envs.text_protocol import (
    SYSTEM_PROMPT,
    describe_position,
    echo,
    parse_column,
    rejection_note,
)
from connect4_env.rules import Rules, check_rules
from connect4_env.validation import check_choice, check_int, check_number, seeded_rng

__all__ = ["TextPolicy", "leftmost_legal_answer", "FALLBACKS"]

FALLBACKS = ("random", "raise")
MAX_TIME_LIMIT = 7 * 24 * 3600.0  # a week: far longer waits overflow the platform's clock in threading


def leftmost_legal_answer(prompt: str) -> str:
    """A stand-in model: answers the first column of the prompt's ``Legal columns:`` line (for demos, tests)."""
    match = re.search(r"Legal columns: (\d+)", prompt)
    return f"<answer>{match[1] if match else 1}</answer>"


def _call_with_deadline(
    generate: Callable[[str], str], prompt: str, seconds: float
) -> tuple[str | None, str | None]:
    """``(answer, None)``, or ``(None, why)`` when ``generate`` raised, timed out or answered a non-str (``why``
    quotes the model's exception through ``echo``, so a huge or non-ASCII message stays out of the next prompt).

    The call runs in a daemon thread: one that overruns is abandoned (Python cannot stop it), and its answer
    is dropped whenever it comes.
    """
    box: dict[str, Any] = {}

    def call() -> None:
        try:
            box["answer"] = generate(prompt)
        except Exception as error:  # a model's failure is a rejected answer, not a crash of the game
            box["error"] = f"{echo(type(error).__name__, quote=False)}: {echo(str(error))}"

    thread = threading.Thread(target=call, name="TextPolicy.generate", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        return None, f"no answer within {seconds:g} s"
    if "error" in box:
        return None, f"the model raised {box['error']}"
    answer = box.get("answer")
    if not isinstance(answer, str):
        return None, f"the model answered {echo(type(answer).__name__, quote=False)}, not str"
    return answer, None


class TextPolicy:
    """A ``generate(prompt) -> answer`` function as a `connect4_env.policy.Policy`.

    Each move, the prompt is ``system_prompt``, a blank line and the position as ``Connect4Text-v0`` shows
    it (``X`` the mover's stones, columns 1-based, the legal columns listed). The answer is read by the same
    grammar (``"4"``, ``"column 4"``, ``"I play d"``, ``"...<answer>4</answer>"``); a rejected answer is
    asked again with the reason appended, up to ``max_retries`` times. If no legal column comes within
    ``time_limit`` seconds for the whole move (or the retries run out), ``fallback="random"`` plays a random
    legal column, ``"raise"`` raises. Counts are kept in `stats`; the last move's exchange in
    `transcript`.

    Args:
        generate: the model: a prompt in, an answer out.
        time_limit: seconds per move, all tries together (more than 0, at most a week).
        max_retries: rejected answers asked again per move (0 to 1,000).
        fallback: ``"random"`` or ``"raise"`` (see above).
        system_prompt: the instructions before each position.
        seed: for the random fallback.
    """

    def __init__(
        self,
        generate: Callable[[str], str],
        *,
        time_limit: float = 30.0,
        max_retries: int = 2,
        fallback: str = "random",
        system_prompt: str = SYSTEM_PROMPT,
        seed: int | None = None,
    ) -> None:
        if not callable(generate):
            raise TypeError(f"generate must be a callable str -> str, got {generate!r}")
        self.generate = generate
        self.time_limit = check_number("time_limit", time_limit, 0.0, MAX_TIME_LIMIT, above_minimum=True)
        self.max_retries = check_int("max_retries", max_retries, 0, 1000)
        self.fallback = check_choice("fallback", fallback, FALLBACKS)
        if not isinstance(system_prompt, str):
            raise TypeError(f"system_prompt must be a str, got {type(system_prompt).__name__}")
        self.system_prompt = system_prompt
        self.win_length = 4
        self.stats = {"moves": 0, "answers": 0, "rejected": 0, "timeouts": 0, "fallbacks": 0}
        self.transcript: list[tuple[str, str | None]] = []
        self._rng = seeded_rng(seed)

    @classmethod
    def from_spec(cls, value: str, seed: int | None = None) -> TextPolicy:
        """``text:<module>:<function>``: the function imported by name.

        Raises:
            ValueError: ``value`` is not ``module:function`` or names nothing callable.
        """
        value = check_spec_value(value)
        module_name, _, name = value.partition(":")
        if not module_name or not name:
            raise ValueError(f"text spec value {value!r} must be 'module:function', e.g. 'mypkg.llm:answer'")
        try:
            generate = getattr(importlib.import_module(module_name), name)
        except (ImportError, AttributeError) as error:
            raise ValueError(
                f"text spec {value!r}: cannot import {name!r} from {module_name!r}: {error}"
            ) from error
        if not callable(generate):
            raise ValueError(f"text spec {value!r}: {name!r} is not callable")
        return cls(generate, seed=seed)

    def bind(self, rules: Rules) -> None:
        """Take ``rules``' line length (the observation planes do not carry it).

        Raises:
            TypeError: ``rules`` is not a [`Rules`][connect4_env.rules.Rules].
        """
        self.win_length = check_rules(rules).win_length

    def reset(self, seed: int | None = None) -> None:
        """Reseed the random fallback (when ``seed`` is given)."""
        if seed is not None:
            self._rng = seeded_rng(seed)

    def prompt(self, observation: Any, action_mask: Any = None, note: str | None = None) -> str:
        """The prompt for a position given as planes (+ mask): the system prompt and the position's text."""
        if note is not None and not isinstance(note, str):
            raise TypeError(f"note must be None or a str, got {type(note).__name__}")
        planes, _ = split_observation(observation, action_mask)
        board = board_from_observation(planes, self.win_length)
        return f"{self.system_prompt}\n\n{describe_position(board, board.to_move, note=note)}"

    def act(self, observation: Any, action_mask: Any = None) -> int:
        """Ask the model for a column; returns a legal column (0-based).

        Raises:
            TimeoutError: under ``fallback="raise"``, the model gave no answer within the move's time limit.
            ValueError: under ``fallback="raise"``, every answer was rejected; or the planes are not a
                reachable position, or the mask does not have one 0/1 entry per column.
            NoLegalMoveError: the mask allows no column (a ValueError).
        """
        planes, mask = split_observation(observation, action_mask)
        legal = legal_columns(mask)
        deadline = time.monotonic() + self.time_limit
        self.stats["moves"] += 1
        self.transcript = []
        note = None
        why = "no answer"
        for attempt in range(self.max_retries + 1):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                why = f"no answer within {self.time_limit:g} s"
                break
            prompt = self.prompt(planes, mask, note)
            answer, why_not = _call_with_deadline(self.generate, prompt, remaining)
            self.transcript.append((prompt, answer))
            if answer is None:
                why = why_not or "no answer"
                if why.startswith("no answer within"):
                    why = (
                        f"no answer within {self.time_limit:g} s"  # the move's limit, not what was left of it
                    )
                    self.stats["timeouts"] += 1
                    break
            else:
                self.stats["answers"] += 1
                parsed = parse_column(answer, planes.shape[1])
                if parsed.column is not None and parsed.column in legal:
                    return int(parsed.column)
                why = (
                    parsed.error
                    or f"column {parsed.column + 1 if parsed.column is not None else '?'} is full"
                )
            self.stats["rejected"] += 1
            tries_left = self.max_retries - attempt - 1
            note = rejection_note(why, tries_left)
        if self.fallback == "raise":
            raise (TimeoutError if why.startswith("no answer within") else ValueError)(f"TextPolicy: {why}")
        self.stats["fallbacks"] += 1
        return int(self._rng.choice(legal))

    def __repr__(self) -> str:
        name = getattr(self.generate, "__qualname__", type(self.generate).__name__)
        return f"TextPolicy({name})"
