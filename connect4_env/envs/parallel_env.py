"""PettingZoo Parallel environment over the rules core (``connect4_v0.parallel_env()``): both players act at
every step, the one not to move with a "wait" action, for trainers that speak only the Parallel API.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
from pettingzoo import ParallelEnv

from connect4_env.envs.pettingzoo_env import AGENTS, PettingZooBase
from connect4_env.envs.settings import check_illegal_action
from connect4_env.envs.wrappers import ResetNeededError
from connect4_env.rules import IllegalMoveError, as_column, short_repr

__all__ = ["Connect4ParallelEnv", "parallel_env", "IllegalActionWarning", "ILLEGAL_ACTION_WARNING"]


class IllegalActionWarning(UserWarning):
    """Warned once by a [`Connect4ParallelEnv`][connect4_env.envs.parallel_env.Connect4ParallelEnv] built
    without ``illegal_action``, at its first illegal action: the game ended on it, most likely because actions
    were sampled without the action mask.
    """


ILLEGAL_ACTION_WARNING = (
    "connect4_v0.parallel_env: an agent sent an action its action mask forbids, which ends the game with -1 to "
    "it (infos[agent]['illegal_reason'] says why). Sample with the mask, "
    "env.action_space(agent).sample(observations[agent]['action_mask']): the agent to move picks a legal column "
    "and the other must send the wait action, the last one (env.wait_action). To keep this rule without the "
    "warning, pass illegal_action='lose'; to raise IllegalMoveError instead, illegal_action='raise'."
)
"""The text of the `IllegalActionWarning`: the same for every env, so Python's default warning filter shows it
once per place in the code that steps the envs, however many envs there are."""


def parallel_env(**kwargs: Any) -> Connect4ParallelEnv:
    """A [`Connect4ParallelEnv`][connect4_env.envs.parallel_env.Connect4ParallelEnv] built with ``kwargs``
    (PettingZoo's ``parallel_env()`` of a game module; no wrappers: the env checks its actions itself).

    Raises:
        TypeError: an argument of the wrong type (see the class's arguments).
        ValueError: an argument out of range or an unknown ``render_mode`` or ``illegal_action``.
    """
    return Connect4ParallelEnv(**kwargs)


class Connect4ParallelEnv(PettingZooBase, ParallelEnv):
    """Connect Four for two agents acting at once, ``player_0`` (moves first) and ``player_1``.

    ## Description
    The game of [`connect4_v0`][connect4_env.envs.pettingzoo_env.raw_env] in PettingZoo's Parallel API. Both
    agents send an action at every step: the agent to move a column, the other the **wait** action, the last
    one (`columns`). Each agent's action mask makes this the only choice it has, so a masked policy needs no
    knowledge of turns:

    - the agent to move has 1 on its legal columns and 0 on wait;
    - the agent not to move has 1 on wait only: its masked distribution is a point mass (log-probability 0,
      no gradient), never an all-zero mask;
    - once the game is over both masks are wait only too, so no mask the env returns is ever all zeros.

    `infos[agent]["to_move"]` says which agent is to move.

    ## Arguments
    | argument | default | meaning |
    |---|---|---|
    | `rows` | 6 | board height, an int >= 1 |
    | `columns` | 7 | board width; the actions are `0 .. columns` |
    | `win_length` | 4 | stones in a line to win, 2 .. max(rows, columns) |
    | `render_mode` | None | `"ansi"` (text), `"rgb_array"` (H x W x 3 uint8) or `"human"` (pygame window) |
    | `tile` | 48 | pixels per cell for `rgb_array` / `human` |
    | `illegal_action` | None | what an action the mask forbids does: `"lose"` or `"raise"` (below); None is `"lose"` that warns once |

    ## Action Space
    `Discrete(columns + 1)`: a column `0 .. columns - 1`, or `columns` to wait. `step` takes a dict with an
    action for every agent in `agents`; Python and numpy integers (and 0-d integer arrays) are accepted.

    An action the agent's mask forbids (a full column or wait from the agent to move, a column from the
    other) is an illegal action. With the default, `illegal_action=None`, it ends the game: -1 to each agent
    that made one, 0 to the other, nothing played, `infos[agent]["illegal_action"]` True and
    `infos[agent]["illegal_reason"]` saying why (a str, at that step only, for each agent that made one); the
    env's first illegal action also warns, once (`IllegalActionWarning`, naming the action mask): PettingZoo's
    Parallel loop, which samples actions without the mask, would otherwise end nearly every game at its first
    step without a word. `"lose"` (as `connect4_v0.env()`) is the same rule, chosen knowingly: no warning, and
    no `"illegal_reason"`, so the infos keep the same numeric keys at every step (TorchRL's
    `PettingZooWrapper` makes a tensor of every info value, with the keys the first reset gave). With
    `"raise"` (as `connect4_v0.raw_env()`) `step` raises `IllegalMoveError` (a `ValueError`) and nothing
    changes. Either way a malformed call changes nothing and raises: `TypeError` for actions that are
    not a dict or an action that is not an integer, `ValueError` for an integer outside `0 .. columns`, a
    missing agent or an unknown one (`UnknownAgentError`).

    ## Observation Space
    `Dict(observation=Box(0, 1, (rows, columns, 2), int8), action_mask=Box(0, 1, (columns + 1,), int8))`.
    The planes are `connect4_v0`'s: plane 0 the observing agent's stones, plane 1 the opponent's, row 0 the
    top row. The mask is as described above, and only there (as in `connect_four_v3`): `infos[agent]` holds
    `"to_move"` (bool) and `"illegal_action"` (bool), and under the default `illegal_action=None`
    `"illegal_reason"` (str) after an illegal action of that agent. A second copy in the infos broke TorchRL's
    `PettingZooWrapper`, which reads a mask from the observation or else the infos, and drops the infos' copy
    from its spec but not from the data.

    `state()` returns `Box(0, 1, (rows, columns, 2), int8)` (`state_space`): plane 0 `player_0`'s stones,
    plane 1 `player_1`'s.

    ## Rewards
    +1 to the winner and -1 to the loser when the game ends; 0 to both on a draw and on every other step
    (an illegal action under `"lose"`: see above).

    ## Starting State
    An empty board with `player_0` to move. `reset(seed=s)` also seeds the action and observation spaces
    (`player_0` with `s`, `player_1` with `s + 1`) so `action_space(agent).sample(mask)` is reproducible.

    ## Episode End
    Termination of both agents on a win, a full board or an illegal action (unless `"raise"`); `agents` is then
    empty and `step` raises `ResetNeededError` until `reset()`. There is no truncation.

    ## Version History
    * v0: initial release.
    """

    metadata: dict[str, Any] = {**PettingZooBase.metadata, "is_parallelizable": True}

    def __init__(
        self,
        rows: int = 6,
        columns: int = 7,
        win_length: int = 4,
        render_mode: str | None = None,
        tile: int = 48,
        illegal_action: str | None = None,
    ) -> None:
        self._set_up(rows, columns, win_length, render_mode, tile, with_wait=True)
        self.illegal_action = "lose" if illegal_action is None else check_illegal_action(illegal_action)
        """``"lose"`` or ``"raise"``: what an illegal action does (None was given as ``"lose"``)."""
        # None: say why in the infos and warn at the first illegal action. An explicit "lose" keeps the infos'
        # keys fixed and numeric, as TorchRL's PettingZooWrapper needs (it makes a tensor of every info value, with
        # the keys of the first reset's infos).
        self._explain_illegal = illegal_action is None
        self._warn_on_illegal = illegal_action is None  # until the first illegal action warns
        columns = self.rules.columns
        self.wait_action = columns
        """The action of the agent not to move: the last one, ``columns``."""
        self.agents: list[str] = []
        self._wait_only = np.zeros(columns + 1, dtype=np.int8)
        self._wait_only[columns] = 1

    # -- episode -----------------------------------------------------------------------------------------
    def reset(
        self, seed: int | None = None, options: dict | None = None
    ) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, dict[str, Any]]]:
        """Start a new game (PettingZoo's ``reset``): an empty board, both agents in ``agents``, ``player_0``
        to move. ``seed`` (None keeps the current RNGs) seeds ``np_random`` and each agent's spaces as
        described above; ``options`` is accepted and ignored. In ``human`` mode the board is drawn.

        Returns:
            ``(observations, infos)``, each a dict with an entry for both agents.

        Raises:
            TypeError: ``seed`` is neither None nor an integer (a bool, a float, a string).
            ValueError: ``seed`` is a negative integer.
        """
        self._new_game(seed)
        observations, infos = self._views(over=False, illegal={})
        if self.render_mode == "human":
            self.render()
        return observations, infos

    def step(
        self, actions: Mapping[str, Any]
    ) -> tuple[
        dict[str, dict[str, np.ndarray]],
        dict[str, int],
        dict[str, bool],
        dict[str, bool],
        dict[str, dict[str, Any]],
    ]:
        """Play one move (PettingZoo's Parallel ``step``): the column of the agent to move; the other agent's
        action must be ``wait_action``. A win or a full board terminates both agents and sets the rewards;
        an illegal action is handled by ``illegal_action`` (see the class).

        Args:
            actions: an action for each agent in ``agents`` (both, while the game is live).

        Returns:
            ``(observations, rewards, terminations, truncations, infos)``, each a dict with an entry for both
            agents.

        Raises:
            ResetNeededError: ``reset()`` has not been called, or the game is over (``agents`` is empty).
            TypeError: ``actions`` is not a mapping, an action is not an integer, or a key is not a str
                (`AgentTypeError`); nothing changes.
            UnknownAgentError: a key other than ``player_0`` and ``player_1`` (a ValueError; nothing changes).
            ValueError: an agent in ``agents`` has no action, or an action is outside ``0 .. columns``;
                nothing changes.
            IllegalMoveError: under ``illegal_action="raise"``, an action the agent's mask forbids (a
                ValueError; nothing changes).
        """
        self._require_reset("step()")
        if not self.agents:
            raise ResetNeededError("the game is over and every agent has left: call reset() to play again")
        chosen = self._check_actions(actions)
        board = self._game.board
        mover = AGENTS[board.ply & 1]
        waiter = AGENTS[1 - (board.ply & 1)]
        column = chosen[mover]
        illegal: list[str] = []
        if column == self.wait_action or not self._game.mask[column]:
            illegal.append(mover)
        if chosen[waiter] != self.wait_action:
            illegal.append(waiter)
        rewards = {agent: 0 for agent in AGENTS}
        reasons = {agent: self._illegal_message(agent, chosen[agent]) for agent in illegal}
        if illegal:
            if self.illegal_action == "raise":
                raise IllegalMoveError(reasons[illegal[0]])
            if self._warn_on_illegal:
                self._warn_on_illegal = False
                warnings.warn(ILLEGAL_ACTION_WARNING, IllegalActionWarning, stacklevel=2)
            for agent in illegal:
                rewards[agent] = -1
            over = True
        else:
            won = self._game.play(column)
            over = won or board.ply == self.rules.cells
            if won:
                rewards[mover] = 1
                rewards[waiter] = -1
        observations, infos = self._views(over=over, illegal=reasons)
        terminations = {agent: over for agent in AGENTS}
        truncations = {agent: False for agent in AGENTS}
        if over:
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return observations, rewards, terminations, truncations, infos

    def _check_actions(self, actions: Mapping[str, Any]) -> dict[str, int]:
        """Every live agent's action as an int in ``0 .. columns``, or the error of the first bad one."""
        if not isinstance(actions, Mapping):
            raise TypeError(
                f"actions must be a dict of agent -> action, got {short_repr(actions)} ({type(actions).__name__})"
            )
        for agent in actions:
            self._index_of(agent)
        missing = [agent for agent in self.agents if agent not in actions]
        if missing:
            raise ValueError(
                f"actions has no action for {', '.join(missing)}: every agent acts at every step, the one not "
                f"to move with the wait action {self.wait_action} (got the keys {short_repr(list(actions))})"
            )
        chosen = {}
        for agent in self.agents:
            action = actions[agent]
            if type(action) is not int:
                try:
                    action = as_column(action)
                except TypeError as error:
                    raise TypeError(f"{agent}: {error}") from None
            if not 0 <= action <= self.wait_action:
                raise ValueError(
                    f"{agent}'s action {short_repr(action)} is outside Discrete({self.wait_action + 1}): the "
                    f"actions are the columns 0..{self.wait_action - 1} and {self.wait_action} to wait"
                )
            chosen[agent] = action
        return chosen

    def _illegal_message(self, agent: str, action: int) -> str:
        if self._is_to_move(agent):
            legal = self._game.board.legal_moves()
            what = "wait" if action == self.wait_action else f"play column {action}"
            return f"{agent} is to move and cannot {what}: legal columns are {legal}"
        return (
            f"{agent} is not to move: its action must be {self.wait_action} (wait), got {action} "
            f"(the mask of the agent not to move has only the wait action)"
        )

    def _is_to_move(self, agent: str) -> bool:
        return AGENTS[self._game.board.ply & 1] == agent

    def _views(
        self, over: bool, illegal: Mapping[str, str]
    ) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, dict[str, Any]]]:
        """Both agents' observations and infos, after the game goes on (``over`` false) or ends; ``illegal``
        maps each agent that made an illegal action to why it was one.
        """
        game = self._game
        mover = -1 if over else game.board.ply & 1
        observations = {}
        infos = {}
        for index, agent in enumerate(AGENTS):
            if index == mover:
                mask = np.zeros(self.wait_action + 1, dtype=np.int8)
                mask[: self.wait_action] = game.mask
            else:
                mask = self._wait_only.copy()
            observations[agent] = {"observation": game.views[index].copy(), "action_mask": mask}
            info: dict[str, Any] = {"to_move": index == mover, "illegal_action": agent in illegal}
            if agent in illegal and self._explain_illegal:
                info["illegal_reason"] = illegal[agent]
            infos[agent] = info
        return observations, infos
