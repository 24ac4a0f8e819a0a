"""The one "let the opponent move" step of the single-agent envs: ask a policy for its column and check it.

`opponent_column` serves ``Connect4-v0`` (one board), `opponent_columns` the batched env. Both
return only columns that are legal where they will be played, or raise before anything is played, so the env
that calls them can undo its own changes and stay exactly as it was (see the envs' ``step``/``reset``).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from connect4_env.rules import IllegalMoveError, short_repr

__all__ = ["opponent_column", "opponent_choice", "opponent_columns"]


def opponent_column(opponent: Any, observation: np.ndarray, mask: np.ndarray) -> int:
    """The opponent's column for one board: ``opponent.act(observation, mask)`` checked against ``mask``.

    Raises:
        IllegalMoveError: the answer is not an integer, out of range, or a full column (the message names the
            opponent and its answer). Whatever ``act`` itself raises passes through unchanged.
    """
    answer = opponent.act(observation, mask)
    if type(answer) is not int:
        answer = _as_int(opponent, answer)
    if not 0 <= answer < mask.shape[0] or not mask[answer]:
        raise IllegalMoveError(
            f"the opponent {opponent!r} chose column {short_repr(answer)}; legal columns are "
            f"{np.flatnonzero(mask).tolist()}"
        )
    return answer


def opponent_choice(opponent: Any, legal: list[int]) -> int:
    """The column a mask-only policy picks from the ``legal`` columns: ``opponent.choose(legal)``, checked
    (see `connect4_env.policy.Policy`).

    Raises:
        IllegalMoveError: the answer is not an integer or not one of ``legal`` (the message names the opponent
            and its answer). Whatever ``choose`` itself raises passes through unchanged.
    """
    answer = opponent.choose(legal)
    if type(answer) is not int:
        answer = _as_int(opponent, answer)
    if answer not in legal:
        raise IllegalMoveError(
            f"the opponent {opponent!r} chose column {short_repr(answer)}; legal columns are {list(legal)}"
        )
    return answer


def opponent_columns(
    opponent: Any,
    observations: Callable[[], np.ndarray],
    masks: np.ndarray,
    games: np.ndarray,
) -> np.ndarray:
    """The opponent's columns for the games ``games`` (their legal ``masks``, bool ``(k, columns)``).

    ``observations()`` builds the ``(k, rows, columns, 2)`` planes, called only when the opponent looks at them
    (a policy with ``uses_observations = False`` gets None). ``act_batch`` answers all at once when the
    policy has it, else ``act`` one game at a time.

    Raises:
        IllegalMoveError: an answer that is not one integer per game, out of range, or a full column (naming
            the opponent, the answer and the game). Whatever the policy raises passes through unchanged.
    """
    int_masks = masks.view(np.int8)
    act_batch = getattr(opponent, "act_batch", None)
    if callable(act_batch):
        planes = observations() if getattr(opponent, "uses_observations", True) else None
        answer = act_batch(planes, int_masks)
        columns = np.asarray(answer)
        if columns.shape != (games.size,) or not (
            np.issubdtype(columns.dtype, np.integer) and columns.dtype != np.bool_
        ):
            raise IllegalMoveError(
                f"the opponent {opponent!r} answered {_short(answer)} (shape {columns.shape}, dtype "
                f"{columns.dtype}); act_batch must return {games.size} integer columns"
            )
    else:
        planes = observations()
        # each answer is range-checked as a Python int first: 10**30 does not fit the int64 array
        columns = np.fromiter(
            (
                _in_range(opponent, opponent.act(planes[k], int_masks[k]), masks[k], int(games[k]))
                for k in range(games.size)
            ),
            dtype=np.int64,
            count=games.size,
        )
    out_of_range = (columns < 0) | (columns >= masks.shape[1])
    bad = out_of_range
    if not out_of_range.any():
        bad = ~masks[np.arange(games.size), columns]
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise IllegalMoveError(
            f"the opponent {opponent!r} chose column {columns[k]} in game {int(games[k])}; legal columns are "
            f"{np.flatnonzero(masks[k]).tolist()}"
        )
    return columns


def _in_range(opponent: Any, answer: Any, mask: np.ndarray, game: int) -> int:
    """One game's answer as a plain int in ``0..columns-1`` (its legality is checked with the batch)."""
    column = _as_int(opponent, answer)
    if not 0 <= column < mask.shape[0]:
        raise IllegalMoveError(
            f"the opponent {opponent!r} chose column {short_repr(column)} in game {game}; legal columns are "
            f"{np.flatnonzero(mask).tolist()}"
        )
    return column


def _as_int(opponent: Any, answer: Any) -> int:
    """An integer answer as a plain int; anything else (float, str, bool, array) is an illegal move."""
    if not isinstance(answer, (bool, np.bool_)) and getattr(answer, "ndim", 0) == 0:
        try:
            return operator.index(answer)
        except TypeError:
            pass
    raise IllegalMoveError(
        f"the opponent {opponent!r} answered {_short(answer)}, which is not an integer column"
    )


def _short(value: Any) -> str:
    return short_repr(value)
