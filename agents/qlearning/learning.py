"""The Q-learning loop: training games against any opponent (or itself), with backward or online updates.

Functions over a [`QLearningAgent`][connect4_agents.qlearning.agent.QLearningAgent] (its table, settings and
generator): [`QLearningAgent.train`][connect4_agents.qlearning.agent.QLearningAgent.train] calls
`train_agent`. Kept apart from the agent so each file has one job.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from connect4_agents._support.progress import progress_bar
from connect4_agents.evaluation.curves import LearningCurve
from connect4_env.core import Board
from connect4_env.encoding import TrackedBoard
from connect4_env.opponent import opponent_choice, opponent_column
from connect4_env.policy import resolve_opponent
from connect4_env.validation import check_int

if TYPE_CHECKING:
    from connect4_agents.qlearning.agent import QLearningAgent

__all__ = ["train_agent", "play_training_game", "REWARD_SCHEMES"]


# reward per learner move that does not end the game, and for a win, a loss, a draw
REWARD_SCHEMES: dict[str, dict[str, float]] = {
    "plain": {"move": 0.0, "win": 1.0, "loss": -1.0, "draw": 0.0},
    "shaped": {"move": -1.0, "win": 50.0, "loss": -50.0, "draw": -10.0},  # the original Connect 4 project
}


def train_agent(
    agent: QLearningAgent,
    opponent: Any,
    episodes: int,
    *,
    window: int = 500,
    progress: bool = False,
    on_window: Callable[[LearningCurve], None] | None = None,
    total_episodes: int | None = None,
    curve: LearningCurve | None = None,
) -> LearningCurve:
    """Train ``agent`` as [`QLearningAgent.train`][connect4_agents.qlearning.agent.QLearningAgent.train] says
    (that method's docstring has the details); returns the learning curve.

    Raises:
        TypeError: ``episodes``, ``window`` or ``total_episodes`` is not an integer, or ``opponent`` is
            neither a policy nor a name or spec string.
        ValueError: ``episodes``, ``window`` or ``total_episodes`` is below 1, ``opponent`` is an unknown name
            or spec or cannot play the agent's board, or ``curve`` is not a `LearningCurve` with this
            ``window``.
    """
    episodes = check_int("episodes", episodes, 1)
    window = check_int("window", window, 1)
    if total_episodes is not None:
        total_episodes = check_int("total_episodes", total_episodes, 1)
    self_play = opponent is agent
    if not self_play:
        opponent = resolve_opponent(opponent, rules=agent.rules)  # a name, a spec or a policy, bound
    agent.planned_episodes = (
        agent.episodes_trained + episodes if total_episodes is None else int(total_episodes)
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
            learn_seats = (learner_seat, 1 - learner_seat) if agent.learn_from_opponent else seats
            episode_return, outcome = play_training_game(agent, opponent, seats, learn_seats)
            returns.append(episode_return)
            outcomes.append(outcome)
            agent.episodes_trained += 1
            if bar is not None:
                bar.update(1)
            if len(returns) == window or episode == episodes - 1:
                n = len(returns)
                curve.episodes.append(agent.episodes_trained)
                curve.mean_return.append(float(np.mean(returns)))
                curve.win_rate.append(outcomes.count(1) / n)
                curve.draw_rate.append(outcomes.count(0) / n)
                curve.loss_rate.append(outcomes.count(-1) / n)
                curve.epsilon.append(agent.current_epsilon())
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


def play_training_game(
    agent: QLearningAgent, opponent: Any, seats: tuple[int, ...], learn_seats: tuple[int, ...]
) -> tuple[float, int]:
    """One training game; the table plays ``seats`` (ε-greedy), the opponent the others. Returns the first
    of ``seats``' return and outcome (+1, 0, -1).

    Each of ``learn_seats``' transitions (the opponent's moves too when its seat is listed: Q-learning is
    off-policy) ``(Q row, column, reward, next position's Q row or None)`` are
    recorded and, with ``updates="backward"``, applied last to first when the game ends, so a result
    reaches every earlier move of the game at once; ``updates="online"`` applies each as it happens.
    An opponent that reads only the mask and offers ``choose(legal)`` (see `connect4_env.Policy`; a
    [`RandomAgent`][connect4_agents.random_agent.RandomAgent] does) is asked that, with no observation planes
    kept for it (the same games as through ``act``, faster).
    """
    scheme = REWARD_SCHEMES[agent.rewards]
    move_reward = scheme["move"]
    epsilon = agent.current_epsilon()
    rng = agent.rng
    columns = agent.rules.columns
    online = agent.updates == "online"
    board, play, opponent_column = _game_for(agent, opponent)
    pending: dict[int, tuple[np.ndarray, int]] = {}  # seat -> (Q row, stored column) awaiting its next state
    transitions: list[tuple[np.ndarray, int, float, np.ndarray | None, list[int]]] = []
    episode_return = 0.0
    first_seat = seats[0]
    reset = getattr(opponent, "reset", None)
    if opponent is not agent and callable(reset):
        reset()
    while True:
        mover = board.to_move
        if mover in learn_seats:
            legal = board.legal_moves()
            row, mirrored = agent._row(board)
            if mover in pending:  # the previous move of this seat led here
                previous_row, previous_column = pending.pop(mover)
                stored_legal = [columns - 1 - c for c in legal] if mirrored else legal
                transition = (previous_row, previous_column, move_reward, row, stored_legal)
                if online:
                    td_update(agent, *transition)
                else:
                    transitions.append(transition)
                if mover == first_seat:
                    episode_return += move_reward
            if mover not in seats:
                column = opponent_column(mover)
            elif rng.random() < epsilon:
                column = legal[int(rng.integers(len(legal)))]
            else:
                column = agent._greedy(row[::-1] if mirrored else row, legal)
            pending[mover] = (row, columns - 1 - column if mirrored else column)
        else:
            column = opponent_column(mover)
        play(column)
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
        td_update(agent, *transition)
    return episode_return, outcome


def _game_for(
    agent: QLearningAgent, opponent: Any
) -> tuple[Board, Callable[[int], object], Callable[[int], int]]:
    """A new game's board, the function that plays a column on it and the one that asks the opponent for its
    column (given the seat to move). Observation planes are kept only for an opponent that reads them.
    """
    if opponent is agent:  # self-play: the table plays both seats and never asks an opponent
        board = Board(agent.rules)
        return board, board.play, _no_opponent
    if getattr(opponent, "uses_observations", True) is False and callable(getattr(opponent, "choose", None)):
        board = Board(agent.rules)  # a mask-only policy picks from the legal columns: no planes to keep
        return board, board.play, lambda mover: opponent_choice(opponent, board.legal_moves())
    game = TrackedBoard(agent.rules)
    return (
        game.board,
        game.play,
        lambda mover: opponent_column(opponent, game.observation(mover), game.mask.copy()),
    )


def _no_opponent(mover: int) -> int:
    raise RuntimeError(f"self-play has no opponent to ask for seat {mover}'s move")


def td_update(
    agent: QLearningAgent,
    row: np.ndarray,
    column: int,
    reward: float,
    next_row: np.ndarray | None,
    next_legal: list[int],
) -> None:
    """One Q-learning step on ``row[column]`` towards the reward plus the discounted best next value."""
    if next_row is None:
        target = reward
    else:
        values = next_row.tolist()  # Python floats: cheaper to index than the array
        target = reward + agent.gamma * max([values[c] for c in next_legal])
    row[column] += agent.alpha * (target - row[column])
