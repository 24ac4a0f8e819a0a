"""Positions as prompts for TRL, completions graded by perfect play (env side: envs/text_env.py, reward="solver").

Training a language model on exact per-move rewards with TRL's `GRPOTrainer`:

- [`draw_positions`][connect4_agents.interop.trl_rewards.draw_positions]: random openings, seeded: a number of
  plies drawn uniformly from ``0..max_plies``, each a uniformly random legal column; a position is kept when
  the game is not over, it was not drawn before, and its choice matters (some legal move gives up the best
  outcome class: the *non-trivial* positions of the test sets).
- [`position_dataset`][connect4_agents.interop.trl_rewards.position_dataset]: those positions as a
  `datasets.Dataset` in any dialect, for TRL's `GRPOTrainer`: a ``prompt`` (the dialect's system prompt and
  observation: one string, or chat messages with ``chat=True``) and the columns the reward reads: ``moves``,
  ``rows``, ``columns``, ``win_length``, ``dialect`` and ``scores``, every column's exact score, solved once
  when the dataset is built, so that grading a completion is a lookup.
- [`solver_reward`][connect4_agents.interop.trl_rewards.solver_reward]: a reward function with TRL's signature
  (``prompts, completions, **columns``): each completion read as its row's dialect reads an answer, and graded
  on [`REWARD_SCALE`][connect4_agents.evaluation.rewards.REWARD_SCALE] (+1 the best score, +0.5 the best outcome
  class kept, -0.5 a class given up, -1 a win given up for a loss); an answer the dialect rejects gets the
  dialect's ``rejected_answer_reward`` (-1).

`datasets` is imported by `position_dataset` only: `draw_positions` and `solver_reward` need neither it nor TRL.
The recipe ``recipes/grpo_connect4.py`` runs `GRPOTrainer` on them end to end.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import cache
from typing import Any

from connect4_agents.evaluation.rewards import REJECTED_ANSWER_REWARD, grade_move, solver_rubric
from connect4_agents.evaluation.test_sets import score_outcome
from connect4_env.core import Board
from connect4_env.envs.dialects import DIALECTS, Dialect, get_dialect
from connect4_env.extras import require
from connect4_env.rules import Rules, check_rules
from connect4_env.validation import check_bool, check_choice, check_int, check_seed

__all__ = ["draw_positions", "position_dataset", "solver_reward", "completion_text", "MAX_POSITIONS"]

MAX_POSITIONS = 1_000_000  # positions a dataset may ask for: each is solved once when it is built
_ATTEMPTS_PER_POSITION = 100  # random openings tried per position asked for, before giving up


def draw_positions(
    rules: Rules | None = None, n: int = 256, seed: int | None = 0, max_plies: int | None = None
) -> list[tuple[int, ...]]:
    """``n`` distinct non-trivial positions as move lists (0-based columns), drawn as random openings.

    Args:
        rules: the board (default 6x7, four in a row): one the solver rubric grades
            ([`reward_supported`][connect4_agents.evaluation.rewards.reward_supported]).
        n: positions, 1 to `MAX_POSITIONS`.
        seed: the seed of the draw: the same seed gives the same positions (None: a fresh draw each call).
        max_plies: the most stones on a drawn board (None: half the cells, rounded down).

    Raises:
        TypeError: an argument of the wrong type.
        ValueError: an argument out of range, a board the rubric cannot grade, or fewer than ``n`` distinct
            non-trivial positions found in ``100 * n`` openings (a small board or a small ``max_plies``).
    """
    rules = check_rules(rules if rules is not None else Rules())
    n = check_int("n", n, 1, MAX_POSITIONS)
    rng = random.Random(check_seed(seed))
    max_plies = check_int(
        "max_plies", max_plies if max_plies is not None else rules.cells // 2, 0, rules.cells - 1
    )
    rubric = solver_rubric(rules)
    found: dict[tuple[int, ...], None] = {}
    for _ in range(_ATTEMPTS_PER_POSITION * n):
        board, moves = Board(rules), []
        for _ in range(rng.randint(0, max_plies)):
            column = rng.choice(board.legal_moves())
            board.play(column)
            moves.append(column)
            if board.is_terminal:
                break
        key = tuple(moves)
        if board.is_terminal or key in found:
            continue
        scores = rubric.scores(board)
        outcomes = {score_outcome(score) for score in scores if score is not None}
        if len(outcomes) > 1:  # some legal move gives up the best outcome class
            found[key] = None
            if len(found) == n:
                return list(found)
    raise ValueError(
        f"found {len(found)} distinct non-trivial positions of the {n} asked for in {_ATTEMPTS_PER_POSITION * n} "
        f"random openings of at most {max_plies} plies on {rules.rows}x{rules.columns}: ask for fewer, or "
        "allow more plies"
    )


def position_dataset(
    rules: Rules | None = None,
    n: int = 256,
    dialect: str = "connect4",
    seed: int | None = 0,
    max_plies: int | None = None,
    chat: bool = False,
) -> Any:
    """`draw_positions`'s positions as a `datasets.Dataset` for TRL's `GRPOTrainer`, one row a position.

    Args:
        rules: the board, as `draw_positions`.
        n: positions, as `draw_positions`.
        dialect: how the position is shown and the answer read, a name of
            [`DIALECTS`][connect4_env.envs.dialects.DIALECTS] (its default options).
        seed: the seed of the draw, as `draw_positions`.
        max_plies: the most stones on a drawn board, as `draw_positions`.
        chat: ``prompt`` as chat messages (``[{"role": "system", ...}, {"role": "user", ...}]``, TRL's
            conversational form, for a model with a chat template) instead of one string.

    Returns:
        A `datasets.Dataset` with columns ``prompt``, ``moves``, ``rows``, ``columns``, ``win_length``,
        ``dialect`` and ``scores`` (the mover's exact score of every column, null for a full one).

    Raises:
        TypeError: an argument of the wrong type.
        ValueError: as `draw_positions`, or an unknown dialect (the message lists the known ones).
        MissingExtraError: `datasets` is not installed (the ``trl`` extra).
    """
    dialect = check_choice("dialect", dialect, tuple(DIALECTS))
    chat = check_bool("chat", chat)
    positions = draw_positions(rules, n, seed, max_plies)
    datasets = require("datasets", "trl", "a dataset of positions for TRL")
    rules = rules if rules is not None else Rules()
    shown = _dialect(dialect)
    rubric = solver_rubric(rules)
    rows: dict[str, list[Any]] = {
        name: [] for name in ("prompt", "moves", "rows", "columns", "win_length", "dialect", "scores")
    }
    for moves in positions:
        board = Board.from_moves(moves, rules)
        player = board.to_move
        rows["prompt"].append(
            shown.messages(board, player, moves) if chat else shown.prompt(board, player, moves)
        )
        rows["moves"].append(list(moves))
        rows["rows"].append(rules.rows)
        rows["columns"].append(rules.columns)
        rows["win_length"].append(rules.win_length)
        rows["dialect"].append(dialect)
        rows["scores"].append(list(rubric.scores(board)))
    return datasets.Dataset.from_dict(rows)


@cache
def _dialect(name: str) -> Dialect:
    return get_dialect(name)


def completion_text(completion: Any) -> str:
    """A completion's text: the string itself, or the last message's ``content`` of a conversational one."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion and isinstance(completion[-1], dict):
        content = completion[-1].get("content")
        return content if isinstance(content, str) else ""
    return ""


_NEEDED_COLUMNS = ("moves", "rows", "columns", "win_length", "dialect")


def _check_batch(completions: Any, columns: dict[str, Any]) -> None:
    """A trainer's batch lines up: one entry of every column read per completion (the prompts are not read)."""
    if isinstance(completions, (str, bytes)) or not isinstance(completions, Sequence):
        raise TypeError(f"completions must be a list, one per row, got {type(completions).__name__}")
    missing = [name for name in _NEEDED_COLUMNS if name not in columns]
    if missing:
        raise KeyError(
            f"solver_reward needs the dataset columns {', '.join(_NEEDED_COLUMNS)} (position_dataset's): "
            f"{', '.join(missing)} missing"
        )
    for name in (*_NEEDED_COLUMNS, "scores"):
        value = columns.get(name, completions)
        if not isinstance(value, Sequence) or len(value) != len(completions):
            length = len(value) if isinstance(value, Sequence) else type(value).__name__
            raise ValueError(f"{name} has {length} entries for {len(completions)} completions: one each")


def solver_reward(prompts: Sequence[Any], completions: Sequence[Any], **columns: Any) -> list[float]:
    """TRL's reward function: each completion's reward for the move it names, by perfect play.

    Reads, per completion, its row's ``moves``, ``rows``, ``columns``, ``win_length``, ``dialect`` and
    ``scores`` (from `position_dataset`; without ``scores`` the position is solved, once per position in this
    process). A completion the dialect cannot read as a legal column gets the dialect's
    ``rejected_answer_reward``.

    Raises:
        TypeError: ``completions`` is a string, or not a sequence.
        KeyError: a column the reward needs is missing (the dataset is not `position_dataset`'s).
        ValueError: a column the reward reads has another length than ``completions`` (``prompts`` is not
            read: TRL passes it, a caller may pass ``[]``).
    """
    _check_batch(completions, columns)
    scores_column = columns.get("scores")
    rewards = []
    for index, completion in enumerate(completions):
        rules = Rules(columns["rows"][index], columns["columns"][index], columns["win_length"][index])
        dialect = _dialect(columns["dialect"][index])
        board = Board.from_moves(columns["moves"][index], rules)
        parsed = dialect.parse(completion_text(completion), board)
        if parsed.column is None or parsed.error is not None:
            rewards.append(float(getattr(dialect, "rejected_answer_reward", REJECTED_ANSWER_REWARD)))
            continue
        scores = scores_column[index] if scores_column is not None else solver_rubric(rules).scores(board)
        rewards.append(grade_move(scores, parsed.column).reward)
    return rewards
