"""PettingZoo AEC environment over the rules core (``connect4_v0``).

A drop-in for PettingZoo's ``classic/connect_four_v3`` (same agents, observation dict, rewards and wrappers)
that also plays any board size and ``win_length``, raises clear errors on bad actions, renders to ``ansi``,
``rgb_array`` and ``human``, honours ``reset(seed=...)`` and keeps its position through ``pickle``/``deepcopy``.
What it shares with the Parallel env (`connect4_env.envs.parallel_env`) lives here too, in `PettingZooBase`.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv

from connect4_env.core import Board
from connect4_env.encoding import TrackedBoard
from connect4_env.envs.wrappers import ResetNeededError, wrap_classic
from connect4_env.render import RENDER_MODES, BoardRenderer
from connect4_env.rules import IllegalMoveError, Rules, as_column, short_repr
from connect4_env.validation import check_seed

__all__ = ["raw_env", "env", "PettingZooBase", "UnknownAgentError"]

AGENTS = ("player_0", "player_1")


class UnknownAgentError(ValueError, KeyError):
    """An agent name the env does not have: a ValueError, and the KeyError a lookup of it in the env's dicts
    (``rewards``, ``terminations``, ...) raises.
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class AgentTypeError(TypeError, KeyError):
    """An agent given as something other than a string: a TypeError, and a KeyError as for an unknown name."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def _unknown_agent(agent: object) -> KeyError:
    allowed = ", ".join(repr(a) for a in AGENTS)
    if not isinstance(agent, str):
        return AgentTypeError(
            f"agent must be one of {allowed}, got {short_repr(agent)} ({type(agent).__name__})"
        )
    return UnknownAgentError(f"agent must be one of {allowed}, got {short_repr(agent)}")


def env(**kwargs: Any) -> AECEnv:
    """``raw_env(**kwargs)`` inside PettingZoo's standard classic-game wrappers.

    An illegal move (full column) ends the game with reward -1 for the mover (``TerminateIllegalWrapper``);
    an action outside ``Discrete(columns)`` fails ``AssertOutOfBoundsWrapper`` (an ``AssertionError`` as
    PettingZoo's, that is also a TypeError for a non-integer and a ValueError for an integer out of range, and
    names the allowed actions: `connect4_env.envs.wrappers.ActionTypeError`,
    `connect4_env.envs.wrappers.ActionOutOfBoundsError`); calls out of order are caught
    by ``OrderEnforcingWrapper``. Exactly as ``pettingzoo.classic.connect_four_v3.env()`` (the wrappers are
    PettingZoo's, subclassed in `connect4_env.envs.wrappers` only to make attribute reads direct).
    """
    return wrap_classic(raw_env(**kwargs), illegal_reward=-1)


@lru_cache(maxsize=16)
def _space_templates(rows: int, columns: int, actions: int) -> tuple[spaces.Dict, spaces.Box]:
    """An agent's observation space (an action mask of length ``actions``) and the state space of a board
    size: templates that are only ever copied (never sampled or seeded), their bounds made read-only.
    """
    planes = spaces.Box(0, 1, (rows, columns, 2), dtype=np.int8)
    mask = spaces.Box(0, 1, (actions,), dtype=np.int8)
    for box in (planes, mask):
        box.low.setflags(write=False)
        box.high.setflags(write=False)
    return spaces.Dict({"observation": planes, "action_mask": mask}), planes


def _copy_space(space: Any) -> Any:
    """A copy with its own RNG and, for a Dict, its own sub-spaces (the bounds arrays are shared, read-only)."""
    new = copy.copy(space)
    if isinstance(space, spaces.Dict):
        new.spaces = {key: copy.copy(sub) for key, sub in space.spaces.items()}
    return new


class PettingZooBase:
    """What `connect4_v0`'s two PettingZoo envs, the AEC [`raw_env`][connect4_env.envs.pettingzoo_env.raw_env]
    and the Parallel [`Connect4ParallelEnv`][connect4_env.envs.parallel_env.Connect4ParallelEnv], share: the
    agents ``player_0`` and ``player_1`` and their spaces, seeding, the position and its views (``state``,
    ``render``, ``close``). A mixin listed before PettingZoo's base class, whose placeholders it fills; each
    env's class documents the spaces, the seeding and the game.
    """

    metadata: dict[str, Any] = {"render_modes": list(RENDER_MODES), "name": "connect4_v0", "render_fps": 2}
    """What the envs' ``metadata`` share; each adds ``is_parallelizable``."""
    agents: list[str]

    def _set_up(
        self, rows: int, columns: int, win_length: int, render_mode: str | None, tile: int, *, with_wait: bool
    ) -> None:
        """Check the arguments and build the rules, the renderer, the agents, their spaces (an agent's actions
        are the columns, then one wait action if ``with_wait``) and an unstarted game.
        """
        self.rules = Rules(rows, columns, win_length)
        self._renderer = BoardRenderer(
            render_mode, tile, fps=int(self.metadata["render_fps"]), rules=self.rules
        )
        self.render_mode = render_mode
        rows, columns = self.rules.rows, self.rules.columns
        actions = columns + 1 if with_wait else columns
        self.possible_agents = list(AGENTS)
        self._agent_index = {agent: i for i, agent in enumerate(AGENTS)}
        # Copies of cached spaces: building a Box costs ~20 us, a copy ~3 us (env() is built often, e.g. one
        # per worker or per evaluation game). Each env still owns its spaces and their RNGs.
        observation, state = _space_templates(rows, columns, actions)
        self.action_spaces: dict[str, spaces.Space] = {agent: spaces.Discrete(actions) for agent in AGENTS}
        self.observation_spaces: dict[str, spaces.Space] = {
            agent: _copy_space(observation) for agent in AGENTS
        }
        self.state_space = _copy_space(state)
        self._np_random: np.random.Generator | None = None
        self._game = TrackedBoard(self.rules)
        self._started = False  # reset() starts the first game

    # -- agents and spaces -------------------------------------------------------------------------------
    def _index_of(self, agent: Any) -> int:
        """``agent``'s number (0 for ``player_0``); raises `_unknown_agent`'s error for any other ``agent``."""
        try:
            return self._agent_index[agent]
        except (KeyError, TypeError):
            raise _unknown_agent(agent) from None

    def observation_space(self, agent: str) -> spaces.Space:
        """``agent``'s observation space (PettingZoo's ``observation_space``): the ``Dict`` of ``observation``
        planes and ``action_mask`` that the env's class describes. Each agent has its own, the same object at
        every call, seeded by ``reset(seed=...)``.

        Raises:
            AgentTypeError: ``agent`` is not a str (a TypeError and a KeyError).
            UnknownAgentError: ``agent`` is a str other than ``player_0`` and ``player_1`` (a ValueError, a KeyError).
        """
        return self.observation_spaces[AGENTS[self._index_of(agent)]]

    def action_space(self, agent: str) -> spaces.Space:
        """``agent``'s action space (PettingZoo's ``action_space``): the ``Discrete`` that the env's class
        describes. Each agent has its own, the same object at every call, seeded by ``reset(seed=...)``.

        Raises:
            AgentTypeError: ``agent`` is not a str (a TypeError and a KeyError).
            UnknownAgentError: ``agent`` is a str other than ``player_0`` and ``player_1`` (a ValueError, a KeyError).
        """
        return self.action_spaces[AGENTS[self._index_of(agent)]]

    @property
    def np_random(self) -> np.random.Generator:
        """The env's random generator, seeded by ``reset(seed=...)`` (unseeded until then); the game draws
        nothing from it.
        """
        if self._np_random is None:
            self._np_random, _ = seeding.np_random()
        return self._np_random

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        self._np_random = value

    # -- episode -----------------------------------------------------------------------------------------
    def _require_reset(self, call: str) -> None:
        if not self._started:
            raise ResetNeededError(f"call reset() before {call}: no game has started")

    def _new_game(self, seed: int | None) -> None:
        """Start an empty board with both agents in ``agents``; a ``seed`` (None keeps the RNGs) seeds
        ``np_random`` and the spaces, ``player_0``'s with ``seed`` and ``player_1``'s with ``seed + 1``.

        Raises:
            TypeError: ``seed`` is neither None nor an integer (a bool, a float, a string).
            ValueError: ``seed`` is a negative integer.
        """
        seed = check_seed(seed)
        if seed is not None:
            self._np_random, _ = seeding.np_random(seed)
            for i, agent in enumerate(AGENTS):
                self.action_spaces[agent].seed(seed + i)
                self.observation_spaces[agent].seed(seed + i)
        self._game = TrackedBoard(self.rules)
        self.agents = list(AGENTS)
        self._started = True

    @property
    def board(self) -> Board:
        """The current position (a [`connect4_env.core.Board`][connect4_env.core.Board]; treat it as
        read-only).
        """
        return self._game.board

    # -- views -------------------------------------------------------------------------------------------
    def state(self) -> np.ndarray:
        """The global state (PettingZoo's ``state``): a new ``(rows, columns, 2)`` int8 array, plane 0
        ``player_0``'s stones and plane 1 ``player_1``'s, row 0 at the top.
        """
        return self._game.views[0].copy()

    def render(self) -> str | np.ndarray | None:
        """Render the board for ``render_mode`` (PettingZoo's ``render``): text for ``"ansi"``, an
        ``(rows * tile, columns * tile, 3)`` uint8 image for ``"rgb_array"``, None for ``"human"`` (drawn in
        a pygame window) and for no mode (with a warning).

        Raises:
            MissingExtraError: ``"human"`` without pygame (the ``render`` extra).
        """
        return self._renderer.render(self.board)

    def close(self) -> None:
        """Close the pygame window if one is open (PettingZoo's ``close``); the env can still be used."""
        self._renderer.close()


class raw_env(PettingZooBase, AECEnv):
    """Connect Four for two agents, ``player_0`` (moves first) and ``player_1``.

    ## Description
    Players take turns dropping a stone into a column; it falls to the lowest empty cell. The first to line
    up ``win_length`` stones horizontally, vertically or diagonally wins; a full board is a draw.

    ## Arguments
    | argument | default | meaning |
    |---|---|---|
    | `rows` | 6 | board height, an int >= 1 |
    | `columns` | 7 | board width and number of actions, an int >= 1 |
    | `win_length` | 4 | stones in a line to win, 2 .. max(rows, columns) |
    | `render_mode` | None | `"ansi"` (text), `"rgb_array"` (H x W x 3 uint8) or `"human"` (pygame window) |
    | `tile` | 48 | pixels per cell for `rgb_array` / `human` |

    ## Action Space
    `Discrete(columns)`: the column to drop a stone into. Python and numpy integers (and 0-d integer arrays)
    are accepted. `raw_env.step` raises `IllegalMoveError` (a `ValueError`) for a full or out-of-range column
    and `TypeError` for a non-integer, leaving the position and turn unchanged. Wrapped by `env()`, a full
    column ends the game instead (mover -1).

    ## Observation Space
    `Dict(observation=Box(0, 1, (rows, columns, 2), int8), action_mask=Box(0, 1, (columns,), int8))`.
    Plane 0 holds the observing agent's stones, plane 1 the opponent's; row 0 is the top row. The mask marks
    the legal columns for the agent to move and is all zeros for the other agent and once the game is over.

    `state()` returns `Box(0, 1, (rows, columns, 2), int8)`: plane 0 `player_0`'s stones, plane 1 `player_1`'s.

    ## Rewards
    +1 to the winner and -1 to the loser when the game ends; 0 to both on a draw and on every other step.

    ## Starting State
    An empty board with `player_0` to move. `reset(seed=s)` also seeds the action and observation spaces
    (`player_0` with `s`, `player_1` with `s + 1`) so `action_space(agent).sample(mask)` is reproducible.

    ## Episode End
    Termination on a win or a full board. There is no truncation.

    ## Version History
    * v0: initial release.
    """

    metadata: dict[str, Any] = {**PettingZooBase.metadata, "is_parallelizable": False}

    def __init__(
        self,
        rows: int = 6,
        columns: int = 7,
        win_length: int = 4,
        render_mode: str | None = None,
        tile: int = 48,
    ) -> None:
        super().__init__()
        self._set_up(rows, columns, win_length, render_mode, tile, with_wait=False)
        self._no_moves = np.zeros(self.rules.columns, dtype=np.int8)

    # -- episode -----------------------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new game (PettingZoo's ``reset``): an empty board, both agents back, ``player_0`` to move,
        rewards 0. ``seed`` (None keeps the current RNGs) seeds the env's ``np_random`` and each agent's
        spaces as described above; ``options`` is accepted and ignored. In ``human`` mode the board is drawn.

        Raises:
            TypeError: ``seed`` is neither None nor an integer (a bool, a float, a string).
            ValueError: ``seed`` is a negative integer.
        """
        self._new_game(seed)
        self.rewards = {agent: 0 for agent in AGENTS}
        self._cumulative_rewards = {agent: 0 for agent in AGENTS}
        self.terminations = {agent: False for agent in AGENTS}
        self.truncations = {agent: False for agent in AGENTS}
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in AGENTS}
        self.agent_selection = AGENTS[0]
        if self.render_mode == "human":
            self.render()

    def step(self, action: Any) -> None:
        """Play ``action`` (a column) for the agent in ``agent_selection`` (PettingZoo's ``step``), then hand
        the turn to the other agent; a win or a full board terminates both agents and sets the rewards. For an
        agent whose game is over, ``action`` must be None and the agent leaves ``agents`` (PettingZoo's dead
        step).

        Raises:
            ResetNeededError: ``reset()`` has not been called.
            IllegalMoveError: the column is full or out of range (a ValueError; the position and the turn are
                unchanged).
            TypeError: ``action`` is not an integer (a float, a string, a bool, an array; nothing changes).
            ValueError: an action other than None for an agent whose game is over (PettingZoo's dead step).
            KeyError: both agents have already left the finished game (call ``reset()``).
        """
        if not self._started:
            self._require_reset("step()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        column = action if type(action) is int else as_column(action)
        board = self._game.board
        player = board.ply & 1
        try:
            won = self._game.play(column)
        except IllegalMoveError:
            raise IllegalMoveError(
                f"{agent} cannot play column {short_repr(action)}: legal columns are {board.legal_moves()} "
                f"(actions are 0..{self.rules.columns - 1})"
            ) from None
        self._cumulative_rewards[agent] = 0
        other = AGENTS[1 - player]
        self.agent_selection = other
        if won or board.ply == self.rules.cells:
            # Rewards are zero on every other step, so they only need accumulating here.
            if won:
                self.rewards[agent] = 1
                self.rewards[other] = -1
            self.terminations = {a: True for a in AGENTS}
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    # -- views -------------------------------------------------------------------------------------------
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s observation (PettingZoo's ``observe``): a new ``{"observation", "action_mask"}`` dict
        of int8 arrays, planes from ``agent``'s side, the mask all zeros unless ``agent`` is to move in a live
        game.

        Raises:
            ResetNeededError: ``reset()`` has not been called.
            AgentTypeError: ``agent`` is not a str (a TypeError and a KeyError).
            UnknownAgentError: ``agent`` is a str other than ``player_0`` and ``player_1`` (a ValueError and a
                KeyError).
        """
        if not self._started:
            self._require_reset("observe()")
        index = self._index_of(agent)
        observation = self._game.views[index].copy()
        if (
            agent == self.agent_selection
            and not self.terminations.get(agent, True)
            and not self.truncations.get(agent, True)
        ):
            mask = self._game.mask.copy()
        else:
            mask = self._no_moves.copy()
        return {"observation": observation, "action_mask": mask}

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """PettingZoo's ``last``: ``(observation, cumulative reward, termination, truncation, info)`` of the
        agent in ``agent_selection``; the observation is None when ``observe`` is false.

        Raises:
            ResetNeededError: ``reset()`` has not been called, or the game is over and both agents have taken
                their dead steps.
        """
        self._require_reset("last()")
        agent = self.agent_selection
        if agent not in self.terminations:  # both agents took their dead steps and left
            raise ResetNeededError("the game is over and every agent has left: call reset() to play again")
        return (
            self.observe(agent) if observe else None,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )
