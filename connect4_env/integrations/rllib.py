"""Connect Four as an RLlib multi-agent env (new API stack), laid out for RLlib's action-masking module.

Needs ``ray[rllib]`` (which pins its own gymnasium: ``make test-rllib`` builds a separate venv); this module is
imported only when used, never by ``import connect4_env``.

    from ray.tune.registry import register_env
    from connect4_env.integrations.rllib import Connect4MultiAgentEnv
    register_env("connect4", lambda config: Connect4MultiAgentEnv(config))

What it changes against PettingZoo's AEC layout, so that RLlib's ``ActionMaskingTorchRLModule`` runs as is:

- observation: ``{"observations": float32 (rows * columns * 2,), "action_mask": float32 (columns,)}``. RLlib's
  module looks for the key ``observations`` (not ``observation``), takes the log of the mask (so it must be a
  float), and builds an MLP encoder for a flat Box (a (6, 7, 2) Box would need CNN settings). The planes are
  those of ``connect4_v0`` (own stones first), flattened row by row.
- turns: ``reset`` and ``step`` return an observation only for the player to move; at the end of a game both
  players get their last observation, their reward (+1 win, -1 loss, 0 draw) and ``terminateds["__all__"]``.

Env config keys (all optional): ``rows``, ``columns``, ``win_length`` (6, 7, 4).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from connect4_env.extras import MissingExtraError

try:
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
except ModuleNotFoundError as error:  # the same message shape as require's; RLlib is no extra of ours
    raise MissingExtraError(
        f'the RLlib env needs ray[rllib] ({error.name} is not installed): pip install "ray[rllib]" '
        "(it pins its own gymnasium: make test-rllib builds a separate venv)"
    ) from error

from connect4_env.envs.pettingzoo_env import raw_env  # noqa: E402

__all__ = ["Connect4MultiAgentEnv", "to_rllib_observation"]

_CONFIG_KEYS = ("rows", "columns", "win_length")


def to_rllib_observation(observation: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``connect4_v0``'s ``{"observation", "action_mask"}`` (int8) as RLlib's masking module reads it."""
    return {
        "observations": np.asarray(observation["observation"], dtype=np.float32).reshape(-1),
        "action_mask": np.asarray(observation["action_mask"], dtype=np.float32),
    }


class Connect4MultiAgentEnv(MultiAgentEnv):  # type: ignore[misc]
    """Two players, ``player_0`` (moves first) and ``player_1``, over ``connect4_v0``'s AEC env.

    ## Description

    Two players, `player_0` (moves first) and `player_1`, take turns dropping stones; the first to line up
    `win_length` stones horizontally, vertically or diagonally wins, a full board is a draw. The game is
    `connect4_v0.raw_env` underneath: same rules, same planes.

    ## Action Space

    `Discrete(columns)` for each agent. `step(action_dict)` plays the action of the player to move;
    `action_dict` must hold it (an action for the other player only raises `ValueError`). A full or
    out-of-range column raises `IllegalMoveError` (with the masking module this does not happen).

    ## Observation Space

    For each agent,
    `Dict(observations=Box(0.0, 1.0, (rows * columns * 2,), float32), action_mask=Box(0.0, 1.0, (columns,), float32))`.
    `observations` are `connect4_v0`'s planes from that agent's side (plane 0 its stones, plane 1 the opponent's,
    row 0 the top row), flattened row by row; `action_mask` is 1.0 on the legal columns (all 0.0 once the game is
    over). `connect4_env.integrations.rllib.to_rllib_observation` converts a `connect4_v0` observation dict to this layout.

    ## Rewards

    +1 to the winner and −1 to the loser at the end of the game, 0 to both for a draw; 0 to the mover on every
    other step.

    ## Starting State

    An empty board. `reset(seed=...)` returns an observation for `player_0` only (the player to move) and empty
    infos; the seed seeds the underlying `connect4_v0` env.

    ## Episode End

    `reset` and `step` return an observation only for the player to move. When a game ends (a win or a full
    board), `step` returns both players' last observations and rewards, `terminateds` True for both and for
    `"__all__"`. Never truncated (`truncateds["__all__"]` is False).

    ## Arguments

    The env config (a dict, all keys optional); any other key raises `ValueError`:

    | key | default | meaning |
    |---|---|---|
    | `rows` | 6 | board height, an int >= 1 |
    | `columns` | 7 | board width and number of actions, an int >= 1 |
    | `win_length` | 4 | stones in a line to win, 2 .. max(rows, columns) |

    ## Version History

    - v0: initial release (0.1.0). The env follows `connect4_v0`'s version.

    Raises:
        TypeError: ``config`` is not a dict (or None), or a board size in it is not an integer.
        ValueError: an unknown config key, or a board size out of the rules' range.
    """

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        config = dict(config or {})
        unknown = sorted(set(config) - set(_CONFIG_KEYS))
        if unknown:
            raise ValueError(f"unknown env config keys {unknown}; allowed: {list(_CONFIG_KEYS)}")
        self.game = raw_env(**{k: config[k] for k in _CONFIG_KEYS if k in config})
        rules = self.game.rules
        self.possible_agents = list(self.game.possible_agents)
        self.agents = list(self.possible_agents)
        cells = rules.rows * rules.columns
        space = spaces.Dict(
            {
                "observations": spaces.Box(0.0, 1.0, (cells * 2,), dtype=np.float32),
                "action_mask": spaces.Box(0.0, 1.0, (rules.columns,), dtype=np.float32),
            }
        )
        self.observation_spaces = {agent: space for agent in self.possible_agents}
        self.action_spaces = {agent: spaces.Discrete(rules.columns) for agent in self.possible_agents}

    def _observe(self, agent: Any) -> dict[str, np.ndarray]:
        return to_rllib_observation(self.game.observe(agent))

    # RLlib types agent ids as Hashable; ours are the strings "player_0" and "player_1"
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        """Start a new game (RLlib's ``reset``): returns ``({"player_0": observation}, {})``, the observation
        of the player to move and empty infos; ``seed`` seeds the underlying ``connect4_v0`` env.

        Raises:
            TypeError: ``seed`` is neither None nor an integer.
            ValueError: ``seed`` is a negative integer.
        """
        self.game.reset(seed=seed, options=options)
        self.agents = list(self.possible_agents)
        mover = self.game.agent_selection
        return {mover: self._observe(mover)}, {}

    def step(self, action_dict: Any) -> Any:
        """Play the mover's action from ``action_dict`` (RLlib's ``step``).

        Returns:
            ``(observations, rewards, terminateds, truncateds, infos)`` as multi-agent dicts: during the game,
            the next mover's observation and the mover's reward 0.0; at the end, both players' observations
            and rewards and ``terminateds`` True for both and for ``"__all__"``. ``truncateds["__all__"]`` is
            always False and the infos are empty.

        Raises:
            ValueError: ``action_dict`` holds no action for the player to move, or the game is over.
            IllegalMoveError: the mover's column is full or out of range (a ValueError; the position is
                unchanged).
            TypeError: the mover's action is not an integer.
        """
        mover = self.game.agent_selection
        if mover not in action_dict:
            raise ValueError(f"it is {mover}'s turn, but the actions are for {sorted(action_dict)}")
        self.game.step(action_dict[mover])
        if any(self.game.terminations.values()):
            observations = {agent: self._observe(agent) for agent in self.game.possible_agents}
            rewards = {agent: float(self.game.rewards[agent]) for agent in self.game.possible_agents}
            done = {agent: True for agent in self.game.possible_agents}
            self.agents = []
            return observations, rewards, {**done, "__all__": True}, {"__all__": False}, {}
        following = self.game.agent_selection
        return (
            {following: self._observe(following)},
            {mover: 0.0},
            {"__all__": False},
            {"__all__": False},
            {},
        )
