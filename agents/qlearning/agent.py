"""Tabular Q-learning for Connect Four, keyed by canonical positions (mirror images share one entry).

The learner sees the game as a single-agent task: from a position where it is to move, it picks a column,
the opponent replies, and the next position where it is to move again (or the end) follows. The update is

    Q(s, a) += alpha * (r + gamma * max_a' Q(s', a') - Q(s, a))      (target r alone when the game ended)

with the max over the legal moves of ``s'``. Exploration is epsilon-greedy over legal moves only, ties broken at
random; ``act`` is greedy (exploration happens only in ``train``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from connect4_agents.base import RulesBound, check_spec_value, unpack
from connect4_agents.evaluation.curves import LearningCurve
from connect4_agents.qlearning.files import DEFAULT_MAX_BYTES, load_qtable, save_qtable
from connect4_agents.qlearning.learning import REWARD_SCHEMES, train_agent
from connect4_env.core import Board, check_board
from connect4_env.rules import Rules, check_rules
from connect4_env.validation import check_bool, check_choice, check_int, check_number, seeded_rng

__all__ = ["QLearningAgent"]


_DEFAULT_RULES = Rules(4, 5, 4)  # a table for 6x7 never fills; 4x5 learns in minutes


def canonical_key(board: Board) -> tuple[int, bool]:
    """``(key, mirrored)``: one key per position and its mirror image; ``mirrored`` says which was taken.

    The key ``mover + mask + bottom`` is unique per position (Pons' encoding, with the bottom row added so the
    empty board is not 0). No sum carries out of its column (a column's part is below ``2**(rows + 1)``), so
    the mirror image's key is the key mirrored.
    """
    rules = board.rules
    key = board.stones[board.to_move] + board.mask + rules.bottom_mask
    mirror_key = rules.mirror(key)
    return (mirror_key, True) if mirror_key < key else (key, False)


class QLearningAgent(RulesBound):
    """A tabular Q-learning policy for one board size.

    Args:
        rules: the board it learns (a table only plays that size); default 4x5 with 4 in a row.
        alpha: the learning rate (the step size of each update).
        gamma: the discount of the next position's value (1.0: a win is worth the same however far away).
        epsilon: exploration rate at the start of training, decayed linearly to ``epsilon_min`` over the
            first ``exploration_fraction`` of the planned training (``train``'s ``total_episodes``, by default
            the episodes trained so far plus this call's), then held there, as SB3's DQN does: every budget
            ends near greedy. ``epsilon_decay`` (None by default) switches to the older schedule: that factor
            after every episode (1.0 = constant epsilon), whatever the budget.
        rewards: ``"plain"`` (+1 win, -1 loss, 0 otherwise) or ``"shaped"`` (the original project's: -1 a
            move, +50 win, -50 loss, -10 draw).
        updates: ``"backward"`` (default): a game's Q-learning updates are applied when it ends, last move
            first, so the result reaches every move of the game at once; ``"online"``: each update as it
            happens (the textbook order). The update rule is the same.
        epsilon_min: the exploration rate the linear schedule ends at.
        exploration_fraction: the share of the planned training over which epsilon falls to ``epsilon_min``.
        epsilon_decay: None (the linear schedule above) or a factor applied to epsilon after every episode.
        learn_from_opponent: also learn from the opponent's moves in training games (both seats learn, so a
            game teaches the table twice); False learns from its own seat only.
        seed: seed for exploration and tie-breaking.

    ``QLearningAgent.original(...)`` gives the original Connect 4 project's settings.
    """

    name = "qlearning"
    rules: Rules  # fixed at construction: the board the table plays

    def __init__(
        self,
        rules: Rules | None = None,
        *,
        alpha: float = 0.2,
        gamma: float = 1.0,
        epsilon: float = 0.5,
        epsilon_min: float = 0.05,
        exploration_fraction: float = 0.5,
        epsilon_decay: float | None = None,
        rewards: str = "plain",
        updates: str = "backward",
        learn_from_opponent: bool = True,
        seed: int | None = None,
    ) -> None:
        self.rules = check_rules(rules, None) or _DEFAULT_RULES
        self.alpha = check_number("alpha", alpha, 0.0, 1.0, above_minimum=True)
        self.gamma = check_number("gamma", gamma, 0.0, 1.0)
        self.epsilon = check_number("epsilon", epsilon, 0.0, 1.0)
        self.epsilon_min = check_number("epsilon_min", epsilon_min, 0.0, 1.0)
        self.exploration_fraction = check_number(
            "exploration_fraction", exploration_fraction, 0.0, 1.0, above_minimum=True
        )
        self.epsilon_decay = (
            None if epsilon_decay is None else check_number("epsilon_decay", epsilon_decay, 0.0, 1.0)
        )
        self.planned_episodes: int | None = None  # the training plan the schedule runs over (set by train)
        check_choice("rewards", rewards, sorted(REWARD_SCHEMES))
        check_choice("updates", updates, ("backward", "online"))
        check_bool("learn_from_opponent", learn_from_opponent)
        self.rewards = rewards
        self.updates = updates
        self.learn_from_opponent = bool(learn_from_opponent)
        self.episodes_trained = 0
        self.q: dict[int, np.ndarray] = {}
        self.rng = seeded_rng(seed)

    @classmethod
    def original(cls, rules: Rules | None = None, *, seed: int | None = None) -> QLearningAgent:
        """The original Connect 4 project's settings: alpha 0.6, gamma 0.8, constant epsilon 0.1, shaped rewards.

        Returns:
            A new agent for ``rules`` (default 4x5 with 4 in a row).
        """
        return cls(
            rules,
            alpha=0.6,
            gamma=0.8,
            epsilon=0.1,
            epsilon_min=0.1,
            epsilon_decay=1.0,
            rewards="shaped",
            updates="online",
            seed=seed,
        )

    @classmethod
    def from_spec(cls, value: str, **kwargs: Any) -> QLearningAgent:
        """``"qlearning:<table.npz>"``: the table saved at that path (see
        [`load`][connect4_agents.qlearning.agent.QLearningAgent.load]).
        """
        value = check_spec_value(value)
        return cls.load(value, **kwargs)

    def _check_rules(self, rules: Rules) -> None:
        # bind(rules) (RulesBound's) accepts only the game the table was trained on
        if rules != self.rules:
            r = self.rules
            raise ValueError(
                f"this Q-table was trained on {r.rows}x{r.columns} with win_length {r.win_length} and cannot "
                f"play {rules.rows}x{rules.columns} with win_length {rules.win_length} (no position would match)"
            )

    def reset(self, seed: int | None = None) -> None:
        """A new game (the table is kept); a seed, if given, reseeds tie-breaking and exploration."""
        if seed is not None:
            self.rng = seeded_rng(seed)

    def __repr__(self) -> str:
        r = self.rules
        return f"QLearningAgent({r.rows}x{r.columns}, win_length={r.win_length}, states={len(self.q)}, episodes={self.episodes_trained})"

    # -- table ---------------------------------------------------------------------------------------------
    def q_values(self, board: Board) -> np.ndarray:
        """The Q-values of ``board``'s columns for the player to move (zeros for an unseen position).

        Raises:
            TypeError: ``board`` is not a [`Board`][connect4_env.core.Board].
            ValueError: ``board`` is not of the table's rules (size or win length).
        """
        if check_board(board).rules != self.rules:
            raise ValueError(f"this Q-table plays {self.rules}, not {board.rules}")
        key, mirrored = canonical_key(board)
        values = self.q.get(key)
        if values is None:
            return np.zeros(self.rules.columns)
        return values[::-1].copy() if mirrored else values.copy()

    def _row(self, board: Board) -> tuple[np.ndarray, bool]:
        key, mirrored = canonical_key(board)
        row = self.q.get(key)
        if row is None:
            row = self.q[key] = np.zeros(self.rules.columns)
        return row, mirrored

    def _greedy(self, values: np.ndarray, legal: list[int]) -> int:
        scores = values.tolist()  # Python floats: cheaper to index than the array
        best = max([scores[c] for c in legal])
        ties = [c for c in legal if scores[c] == best]
        return ties[int(self.rng.integers(len(ties)))] if len(ties) > 1 else ties[0]

    # -- policy --------------------------------------------------------------------------------------------
    def act(self, observation: Any, action_mask: Any = None) -> int:
        """The greedy column (random among equal Q-values) for the player to move."""
        planes, mask = unpack(observation, action_mask)
        planes = np.asarray(planes)
        if planes.ndim != 3 or planes.shape[2] != 2:
            raise ValueError(f"observation must have shape (rows, columns, 2), got {planes.shape}")
        if planes.shape[:2] != (self.rules.rows, self.rules.columns):
            raise ValueError(
                f"this Q-table was trained on a {self.rules.rows}x{self.rules.columns} board and cannot play a "
                f"{planes.shape[0]}x{planes.shape[1]} one (no position would match)"
            )
        board, legal = self.read_board(planes, mask)
        return self._greedy(self.q_values(board), legal)

    # -- training ------------------------------------------------------------------------------------------
    def epsilon_at(self, episode: int, total: int | None = None) -> float:
        """The exploration rate for training episode ``episode`` (counted over the agent's life) of a plan of
        ``total`` episodes (default: the current plan; with none, the start value).

        Raises:
            TypeError: ``episode`` is not an integer, or ``total`` is neither None nor an integer.
            ValueError: ``episode`` or ``total`` is a negative integer.
        """
        episode = check_int("episode", episode, 0)
        if total is not None:
            total = check_int("total", total, 0)
        if self.epsilon_decay is not None:
            return max(self.epsilon_min, self.epsilon * self.epsilon_decay**episode)
        total = self.planned_episodes if total is None else total
        if not total:
            return self.epsilon
        progress = episode / (self.exploration_fraction * total)
        if progress >= 1.0:
            return self.epsilon_min
        return self.epsilon + (self.epsilon_min - self.epsilon) * progress

    def current_epsilon(self) -> float:
        """The exploration rate of the next training episode."""
        return self.epsilon_at(self.episodes_trained)

    def train(
        self,
        opponent: Any,
        episodes: int,
        window: int = 500,
        progress: bool = False,
        on_window: Callable[[LearningCurve], None] | None = None,
        total_episodes: int | None = None,
        curve: LearningCurve | None = None,
    ) -> LearningCurve:
        """Learn from ``episodes`` games against ``opponent`` (a policy, a name such as ``"random"`` or a spec
        such as ``"mcts:40"``; pass ``self`` for self-play).

        The learner moves first in even episodes and second in odd ones. In self-play both seats learn.
        ``total_episodes``: the length of the whole training plan that epsilon decays over, counted like
        ``episodes_trained`` (default: ``episodes_trained + episodes``; pass it when training in several
        calls). The opponent is bound to the table's rules first. Returns the learning curve (per ``window``
        episodes); ``progress`` shows a tqdm bar when installed. ``curve``: a curve to append the windows to,
        so that a caller still holds the finished windows when training is interrupted (Ctrl-C): the table
        then holds every finished episode, and the interrupted one's updates only if ``updates="online"``.

        Raises:
            TypeError: ``episodes``, ``window`` or ``total_episodes`` is not an integer, or ``opponent`` is
                neither a policy nor a name or spec string (nothing is trained then).
            ValueError: ``episodes``, ``window`` or ``total_episodes`` is below 1, ``opponent`` is an unknown
                name or spec or cannot play this board, or ``curve`` is not a `LearningCurve` with this
                ``window`` (nothing is trained then).
        """
        return train_agent(
            self,
            opponent,
            episodes,
            window=window,
            progress=progress,
            on_window=on_window,
            total_episodes=total_episodes,
            curve=curve,
        )

    # -- files ---------------------------------------------------------------------------------------------
    def settings(self) -> dict[str, Any]:
        """The hyper-parameters, as saved with the table (the file's metadata)."""
        return {
            "alpha": self.alpha,
            "gamma": self.gamma,
            "epsilon": self.epsilon,
            "epsilon_min": self.epsilon_min,
            "exploration_fraction": self.exploration_fraction,
            "epsilon_decay": self.epsilon_decay,
            "rewards": self.rewards,
            "updates": self.updates,
            "learn_from_opponent": self.learn_from_opponent,
        }

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the table as ``.npz`` (no pickle), atomically; returns the path written.

        The format is described in `connect4_agents.qlearning.files`.
        """
        settings = {
            **self.settings(),
            "planned_episodes": self.planned_episodes,
            "episodes_trained": self.episodes_trained,
        }
        return save_qtable(path, self.rules, self.q, settings)

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], *, seed: int | None = None, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> QLearningAgent:
        """Read a table written by [`save`][connect4_agents.qlearning.agent.QLearningAgent.save], checking the
        file before reading it (no pickle).

        ``max_bytes`` bounds what loading allocates: the arrays and the table built from them (about 250
        bytes a state on 6x7; see `connect4_agents.qlearning.files.load_qtable`).

        Returns:
            The agent with the table, hyper-parameters and episode counts of the file.

        Raises:
            FileNotFoundError: no file at ``path``.
            TypeError: ``max_bytes`` is not an integer.
            ValueError: the file is not a Q-table file, is corrupt or truncated, holds arrays that do not fit
                the board it names, keys that are not positions of the board, duplicate keys or bad metadata,
                or needs more than ``max_bytes`` to load; or ``max_bytes`` is below 1, or ``seed`` is not a
                seed (checked with the metadata, so reported as invalid metadata).
        """
        content = load_qtable(path, max_bytes=max_bytes)
        meta, rules = content.meta, content.rules
        try:
            agent = cls(
                rules,
                alpha=meta["alpha"],
                gamma=meta["gamma"],
                epsilon=meta["epsilon"],
                epsilon_min=meta["epsilon_min"],
                exploration_fraction=meta.get("exploration_fraction", 0.5),
                epsilon_decay=meta["epsilon_decay"],
                rewards=meta["rewards"],
                updates=meta.get("updates", "backward"),
                learn_from_opponent=meta.get(
                    "learn_from_opponent", True
                ),  # files before it was saved: the default
                seed=seed,
            )
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"{path} has incomplete or invalid metadata: {error}") from None
        agent.q = content.table()
        trained = meta.get("episodes_trained", 0)
        agent.episodes_trained = trained if isinstance(trained, int) and trained >= 0 else 0
        planned = meta.get("planned_episodes")
        agent.planned_episodes = planned if isinstance(planned, int) and planned > 0 else None
        return agent
