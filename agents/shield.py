"""A one-move shield around any policy: it takes an immediate win, blocks the opponent's, and never hands one over.

``Shield(policy)`` (the spec ``shield:<spec>``: ``shield:random``, ``shield:mcts:50``,
``shield:sb3:runs/a/model.zip``) looks one move ahead on every turn and narrows the columns the inner policy may
choose from (`shield_columns`):

1. a column that wins at once (``"win"``);
2. else the column that stops the opponent's immediate win (``"block"``); when the opponent has two or more,
   no block saves the game, and the inner policy chooses which of them to block;
3. else the columns after which the opponent cannot win at once, not even on top of the stone just played
   (``"safe"``), when at least one such column exists;
4. else every legal column (``"free"`` when all are safe, ``"lost"`` when none is).

One allowed column is played without asking the inner policy. Among several, the inner policy chooses: a policy
with ``restricted_masks = True`` (random, SB3, RLlib) is asked with the narrowed mask; any other (the searches
and table agents check that their mask is exactly the position's legal columns) is asked with the full mask,
and when its column is not allowed the shield takes the allowed column that the inner policy's own search
ranks best (``move_info()``'s MCTS ``visits``, the solver's ``scores``, the network's ``priors``), else one
drawn at random with its own seeded generator.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from connect4_agents.base import RulesBound, check_spec_value, mask_booleans
from connect4_env.core import Board, check_board
from connect4_env.policy import bind_policy, policy_from_spec
from connect4_env.rules import Rules
from connect4_env.validation import seeded_rng

__all__ = ["Shield", "shield_columns", "SHIELD_RULES"]

SHIELD_RULES = ("win", "block", "safe", "free", "lost")
"""The reasons `shield_columns` gives, in the order the shield tries them."""

# the per-column numbers of an inner policy's move_info() that rank its columns, best first (higher is better)
_RANKINGS = ("visits", "scores", "priors")


def shield_columns(board: Board) -> tuple[list[int], str]:
    """The columns the shield allows on ``board``, and the rule that chose them (one of `SHIELD_RULES`).

    Returns:
        ``(columns, rule)``: the winning columns and ``"win"``; else the opponent's winning columns and
        ``"block"`` (one column, or the choice of which to block when there are several); else the columns after
        which the opponent cannot win at once, ``"safe"`` when some legal column is not among them; else every
        legal column, ``"free"`` (all safe) or ``"lost"`` (none safe). Columns are in increasing order.

    Raises:
        TypeError: ``board`` is not a [`Board`][connect4_env.core.Board].
        ValueError: the game is over.
    """
    board = check_board(board)
    legal = board.legal_moves()
    if not legal or board.is_terminal:
        raise ValueError("the game is over: the shield has no column to allow")
    rules, heights = board.rules, board.heights
    has_won, stone_bit = rules.has_won, rules.stone_bit
    own, opponent = board.stones[board.to_move], board.stones[1 - board.to_move]
    wins = [c for c in legal if has_won(own | stone_bit(c, heights[c]))]
    if wins:
        return wins, "win"
    threats = [c for c in legal if has_won(opponent | stone_bit(c, heights[c]))]
    if threats:
        return threats, "block"
    # With no threat on the board, a move can only hand the opponent the cell it opens: the one above it.
    safe = [
        c
        for c in legal
        if heights[c] + 1 >= rules.rows or not has_won(opponent | stone_bit(c, heights[c] + 1))
    ]
    if not safe:
        return legal, "lost"
    return safe, "free" if len(safe) == len(legal) else "safe"


class Shield(RulesBound):
    """Any policy behind a one-move shield (see the module docstring for the rules).

    Args:
        policy: the inner policy, an object with ``act(observation, action_mask)``.
        seed: seed of the shield's own generator (the rare random choice among allowed columns) and, through
            ``reset``, of the inner policy. None: fresh entropy.

    Attributes:
        stats: how many moves each rule of `SHIELD_RULES` decided, and ``"overruled"``: the moves where the
            inner policy's own column was not allowed and the shield chose another.

    Raises:
        TypeError: ``policy`` has no ``act`` method, or ``seed`` is not an integer.
        ValueError: ``seed`` is negative.

    Examples:
        >>> from connect4_agents import RandomAgent
        >>> from connect4_env.core import Board
        >>> from connect4_env.encoding import observation_planes
        >>> board = Board.from_ascii('''
        ...     . . . . . . .
        ...     . . . . . . .
        ...     . . . . . . .
        ...     . . . . . . .
        ...     . . . . . . X
        ...     O O O . . X X
        ... ''')
        >>> Shield(RandomAgent(seed=0)).act(observation_planes(board), board.legal_mask())  # X blocks at 3
        3
    """

    name = "shield"
    uses_observations = True

    def __init__(self, policy: Any, seed: int | None = None) -> None:
        if not callable(getattr(policy, "act", None)):
            raise TypeError(
                f"Shield wraps a policy with act(observation, action_mask), got {policy!r:.80} "
                f"({type(policy).__name__}); build one from a spec with Shield.from_spec('mcts:50')"
            )
        self.policy = policy
        self.rng = seeded_rng(seed)
        self.stats: dict[str, int] = dict.fromkeys((*SHIELD_RULES, "overruled"), 0)
        self._last: tuple[int, str, bool] | None = None  # column, rule, whether it is the inner policy's own

    @classmethod
    def from_spec(cls, value: str, seed: int | None = None) -> Shield:
        """``"shield:<spec>"``: the policy of any spec behind the shield, such as ``shield:random``,
        ``shield:mcts:50`` or ``shield:sb3:runs/a/model.zip``; ``seed`` seeds both.

        Raises:
            ValueError: the inner spec is not a valid spec (its own message says why).
        """
        return cls(policy_from_spec(check_spec_value(value), seed=seed), seed=seed)

    def __repr__(self) -> str:
        return f"Shield({self.policy!r})"

    def bind(self, rules: Rules) -> Shield:
        """Play by ``rules``, the inner policy too; returns the shield.

        Raises:
            TypeError: ``rules`` is not a [`Rules`][connect4_env.rules.Rules].
            ValueError: the inner policy cannot play these rules.
        """
        bind_policy(self.policy, rules)
        super().bind(rules)
        return self

    def reset(self, seed: int | None = None) -> None:
        """Start a new game: the inner policy's ``reset(seed)`` too; a seed reseeds the shield's generator.

        Raises:
            TypeError: ``seed`` is not an integer (nothing changes).
            ValueError: ``seed`` is negative (nothing changes).
        """
        rng = seeded_rng(seed) if seed is not None else self.rng
        reset = getattr(self.policy, "reset", None)
        if callable(reset):
            if seed is not None:
                reset(seed=seed)
            else:
                reset()
        self.rng = rng
        self._last = None

    # -- one game --------------------------------------------------------------------------------------------
    def act(self, observation: Any, action_mask: Any = None) -> int:
        """The shield's column for the position ``observation`` shows (the policy's ``act``).

        Raises:
            TypeError: the mask holds neither numbers nor booleans.
            ValueError: the planes are not a reachable position of the bound rules, or the mask is not the
                position's legal columns; what the inner policy raises passes through.
            NoLegalMoveError: the mask allows no column (a ValueError).
        """
        board, legal = self.read_board(observation, action_mask)
        allowed, rule = shield_columns(board)
        self.stats[rule] += 1
        if len(allowed) == 1:
            self._last = (allowed[0], rule, False)
            return allowed[0]
        planes = observation["observation"] if isinstance(observation, dict) else observation
        planes = np.asarray(planes)
        full = np.zeros(board.rules.columns, dtype=np.int8)
        full[legal] = 1
        if len(allowed) == len(legal) or getattr(self.policy, "restricted_masks", False):
            narrowed = np.zeros_like(full)
            narrowed[allowed] = 1
            column = int(self.policy.act(planes, narrowed))
        else:
            column = int(self.policy.act(planes, full))
        own = column in allowed
        if not own:
            column = self._ranked(allowed)
            self.stats["overruled"] += 1
        self._last = (column, rule, own)
        return column

    def _ranked(self, allowed: list[int]) -> int:
        """The allowed column the inner policy's last ``move_info()`` ranks best, else a random one."""
        info = getattr(self.policy, "move_info", None)
        numbers = info() if callable(info) else None
        if isinstance(numbers, dict):
            for key in _RANKINGS:
                values = numbers.get(key)
                if isinstance(values, list) and len(values) > max(allowed):
                    known = [(values[c], c) for c in allowed if isinstance(values[c], (int, float))]
                    if known:
                        best = max(value for value, _ in known)
                        return int(self.rng.choice([c for value, c in known if value == best]))
        return int(allowed[int(self.rng.integers(len(allowed)))])

    def move_info(self) -> dict[str, Any] | None:
        """The last move as plain JSON: the inner policy's ``move_info()`` with ``"shield"`` (the rule) added
        when its own column was played, else ``{"kind": "shield", "column", "rule"}``; None before a move.
        """
        if self._last is None:
            return None
        column, rule, own = self._last
        info = getattr(self.policy, "move_info", None)
        inner = info() if own and callable(info) else None
        if isinstance(inner, dict):
            return {**inner, "shield": rule}
        return {"kind": "shield", "column": column, "rule": rule}

    # -- many games ------------------------------------------------------------------------------------------
    def act_batch(self, observations: Any, action_masks: Any) -> np.ndarray:
        """One shielded column per game for ``observations`` ``(batch, rows, columns, 2)`` and ``action_masks``
        ``(batch, columns)`` (the batched env calls this). The inner policy's ``act_batch`` answers the games
        with a choice left, all at once, when it has one; else its ``act``, one game at a time.

        Raises:
            TypeError: the masks hold neither numbers nor booleans.
            ValueError: shapes that do not fit, planes that show no reachable position, a mask that is not its
                game's legal columns; what the inner policy raises passes through.
            NoLegalMoveError: a mask allows no column (a ValueError).
        """
        planes = np.asarray(observations)
        masks = mask_booleans(action_masks, "action_masks")
        if planes.ndim != 4 or planes.shape[3] != 2 or masks.shape != (planes.shape[0], planes.shape[2]):
            raise ValueError(
                f"observations {planes.shape} and action_masks {masks.shape} must have shapes "
                f"(batch, rows, columns, 2) and (batch, columns)"
            )
        games = planes.shape[0]
        columns = np.zeros(games, dtype=np.int64)
        narrowed = np.zeros(masks.shape, dtype=np.int8)
        open_games = []
        for game in range(games):
            board, _ = self.read_board(planes[game], masks[game].view(np.int8))
            allowed, rule = shield_columns(board)
            self.stats[rule] += 1
            if len(allowed) == 1:
                columns[game] = allowed[0]
            else:
                narrowed[game, allowed] = 1
                open_games.append(game)
        if not open_games:
            return columns
        chosen = np.asarray(open_games)
        restricted = bool(getattr(self.policy, "restricted_masks", False))
        asked = narrowed[chosen] if restricted else masks[chosen].astype(np.int8)
        act_batch = getattr(self.policy, "act_batch", None)
        if callable(act_batch):
            answers = np.asarray(act_batch(planes[chosen], asked), dtype=np.int64)
        else:
            answers = np.array([int(self.policy.act(planes[g], m)) for g, m in zip(chosen, asked)], np.int64)
        for game, column in zip(chosen, answers):
            allowed = np.flatnonzero(narrowed[game]).tolist()
            if int(column) not in allowed:
                column = allowed[int(self.rng.integers(len(allowed)))]
                self.stats["overruled"] += 1
            columns[game] = column
        self._last = None
        return columns
