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
from connect4_agents._support.progress import progress_bar
from connect4_agents.base import RulesBound, unpack
from connect4_agents.evaluation.curves import LearningCurve
from connect4_agents.qlearning.files import DEFAULT_MAX_BYTES, FILE_FORMAT, load_qtable, save_qtable

from connect4_env.core import Board, Rules
from connect4_env.encoding import TrackedBoard
from connect4_env.policy import bind_policy
from connect4_env.validation import check_bool, check_choice, check_int, check_number

__all__ = ["QLearningAgent", "LearningCurve", "REWARD_SCHEMES", "FILE_FORMAT"]

# reward per learner move that does not end the game, and for a win, a loss, a draw
REWARD_SCHEMES: dict[str, dict[str, float]] = {
    "plain": {"move": 0.0, "win": 1.0, "loss": -1.0, "draw": 0.0},
    "shaped": {"move": -1.0, "win": 50.0, "loss": -50.0, "draw": -10.0},  # the original Connect 4 project
}


def canonical_key(board: Board) -> tuple[int, bool]:
    """``(key, mirrored)``: one key per position and its mirror image; ``mirrored`` says which was taken.

    The key ``mover + mask + bottom`` is unique per position (Pons' encoding, with the bottom row added so the
    empty board is not 0).
    """
    rules = board.rules
    mover = board.stones[board.to_move]
    mask = board.mask
    key = mover + mask + rules.bottom_mask
    mirror_key = rules.mirror(mover) + rules.mirror(mask) + rules.bottom_mask
    return (mirror_key, True) if mirror_key < key else (key, False)


class QLearningAgent(RulesBound):
    """A tabular Q-learning policy for one board size.

    Args:
        rows, columns, win_length: the board it learns (a table only plays that size).
        alpha: learning rate. gamma: discount.
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
        seed: seed for exploration and tie-breaking.

    ``QLearningAgent.original(...)`` gives the original Connect 4 project's settings.
    """

    name = "qlearning"
    rules: Rules  # fixed at construction: the board the table plays

    def __init__(
        self,
        rows: int = 4,
        columns: int = 5,
        win_length: int = 4,
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
        self.rules = Rules(rows, columns, win_length)
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
        self.rng = np.random.default_rng(seed)

    @classmethod
    def original(
        cls, rows: int = 4, columns: int = 5, win_length: int = 4, seed: int | None = None
    ) -> QLearningAgent:
        """The original Connect 4 project's settings: alpha 0.6, gamma 0.8, constant epsilon 0.1, shaped rewards."""
        return cls(
            rows,
            columns,
            win_length,
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
        """``"qlearning:<table.npz>"``: the table saved at that path (see :meth:`load`)."""
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
            self.rng = np.random.default_rng(seed)

    def __repr__(self) -> str:
        r = self.rules
        return f"QLearningAgent({r.rows}x{r.columns}, win_length={r.win_length}, states={len(self.q)}, episodes={self.episodes_trained})"

    # -- table ---------------------------------------------------------------------------------------------
    def q_values(self, board: Board) -> np.ndarray:
        """The Q-values of ``board``'s columns for the player to move (zeros for an unseen position)."""
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
        best = max(values[c] for c in legal)
        ties = [c for c in legal if values[c] == best]
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
        ``total`` episodes (default: the current plan; with none, the start value)."""
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
        """Learn from ``episodes`` games against ``opponent`` (any policy; pass ``self`` for self-play).

        The learner moves first in even episodes and second in odd ones. In self-play both seats learn.
        ``total_episodes``: the length of the whole training plan that epsilon decays over, counted like
        ``episodes_trained`` (default: ``episodes_trained + episodes``; pass it when training in several
        calls). The opponent is bound to the table's rules first. Returns the learning curve (per ``window``
        episodes); ``progress`` shows a tqdm bar when installed. ``curve``: a curve to append the windows to,
        so that a caller still holds the finished windows when training is interrupted (Ctrl-C): the table
        then holds every finished episode, and the interrupted one's updates only if ``updates="online"``.

        Raises:
            TypeError / ValueError: bad counts, or an opponent that cannot play this board.
        """
        episodes = check_int("episodes", episodes, 1)
        window = check_int("window", window, 1)
        if total_episodes is not None:
            total_episodes = check_int("total_episodes", total_episodes, 1)
        self_play = opponent is self
        if not self_play:
            bind_policy(opponent, self.rules)
        self.planned_episodes = (
            self.episodes_trained + episodes if total_episodes is None else int(total_episodes)
        )
        if curve is None:
            curve = LearningCurve(window=window)
        elif not isinstance(curve, LearningCurve) or curve.window != window:
            raise ValueError(f"curve must be a LearningCurve with window={window}, got {curve!r}")
        returns: list[float] = []
        outcomes: list[int] = []  # +1 win, 0 draw, -1 loss (the first learning seat's view)
        bar = progress_bar(episodes, "episodes", unit="ep") if progress else None
        try:
            for episode in range(episodes):
                learner_seat = episode % 2
                seats = (0, 1) if self_play else (learner_seat,)
                learn_seats = (learner_seat, 1 - learner_seat) if self.learn_from_opponent else seats
                episode_return, outcome = self._play_training_game(opponent, seats, learn_seats)
                returns.append(episode_return)
                outcomes.append(outcome)
                self.episodes_trained += 1
                if bar is not None:
                    bar.update(1)
                if len(returns) == window or episode == episodes - 1:
                    n = len(returns)
                    curve.episodes.append(self.episodes_trained)
                    curve.mean_return.append(float(np.mean(returns)))
                    curve.win_rate.append(outcomes.count(1) / n)
                    curve.draw_rate.append(outcomes.count(0) / n)
                    curve.loss_rate.append(outcomes.count(-1) / n)
                    curve.epsilon.append(self.current_epsilon())
                    if bar is not None:
                        bar.set_postfix(win=f"{curve.win_rate[-1]:.2f}", eps=f"{curve.epsilon[-1]:.3f}")
                    if on_window is not None:
                        on_window(curve)
                    returns.clear()
                    outcomes.clear()
        finally:
            if bar is not None:
                bar.close()
        return curve

    def _play_training_game(
        self, opponent: Any, seats: tuple[int, ...], learn_seats: tuple[int, ...]
    ) -> tuple[float, int]:
        """One training game; the table plays ``seats`` (ε-greedy), the opponent the others. Returns the first
        of ``seats``' return and outcome (+1, 0, -1).

        Each of ``learn_seats``' transitions (the opponent's moves too when its seat is listed: Q-learning is
        off-policy) ``(Q row, column, reward, next position's Q row or None)`` are
        recorded and, with ``updates="backward"``, applied last to first when the game ends, so a result
        reaches every earlier move of the game at once; ``updates="online"`` applies each as it happens.
        """
        scheme = REWARD_SCHEMES[self.rewards]
        epsilon = self.current_epsilon()
        game = TrackedBoard(self.rules)
        board = game.board
        online = self.updates == "online"
        pending: dict[
            int, tuple[np.ndarray, int]
        ] = {}  # seat -> (Q row, stored column) awaiting its next state
        transitions: list[tuple[np.ndarray, int, float, np.ndarray | None, list[int]]] = []
        episode_return = 0.0
        first_seat = seats[0]
        reset = getattr(opponent, "reset", None)
        if opponent is not self and callable(reset):
            reset()
        while True:
            mover = board.to_move
            if mover in learn_seats:
                legal = board.legal_moves()
                row, mirrored = self._row(board)
                if mover in pending:  # the previous move of this seat led here
                    previous_row, previous_column = pending.pop(mover)
                    stored_legal = [self.rules.columns - 1 - c for c in legal] if mirrored else legal
                    transition = (previous_row, previous_column, scheme["move"], row, stored_legal)
                    if online:
                        self._update(*transition)
                    else:
                        transitions.append(transition)
                    if mover == first_seat:
                        episode_return += scheme["move"]
                values = row[::-1] if mirrored else row
                if mover not in seats:
                    column = int(opponent.act(game.observation(mover), game.mask.copy()))
                elif self.rng.random() < epsilon:
                    column = legal[int(self.rng.integers(len(legal)))]
                else:
                    column = self._greedy(values, legal)
                pending[mover] = (row, self.rules.columns - 1 - column if mirrored else column)
            else:
                column = int(opponent.act(game.observation(mover), game.mask.copy()))
            game.play(column)
            if board.is_terminal:
                break
        outcome = 0 if board.winner is None else (1 if board.winner == first_seat else -1)
        for seat, (row, stored) in pending.items():
            if board.winner is None:
                reward = scheme["draw"]
            else:
                reward = scheme["win"] if board.winner == seat else scheme["loss"]
            transitions.append((row, stored, reward, None, []))
            if seat == first_seat:
                episode_return += reward
        for transition in reversed(transitions):
            self._update(*transition)
        return episode_return, outcome

    def _update(
        self, row: np.ndarray, column: int, reward: float, next_row: np.ndarray | None, next_legal: list[int]
    ) -> None:
        target = reward if next_row is None else reward + self.gamma * max(next_row[c] for c in next_legal)
        row[column] += self.alpha * (target - row[column])

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
        }

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the table as ``.npz`` (no pickle), atomically; returns the path written.

        The format is described in :mod:`connect4_agents.qlearning.files`.
        """
        return save_qtable(self, path)

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], seed: int | None = None, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> QLearningAgent:
        """Read a table written by :meth:`save`, checking the file before reading it (no pickle).

        Raises:
            FileNotFoundError: no such file. ValueError: not a Q-table file, corrupt or truncated, arrays that
                do not fit the board it names, more than ``max_bytes`` decompressed, or duplicate keys.
        """
        return load_qtable(path, seed=seed, max_bytes=max_bytes)
