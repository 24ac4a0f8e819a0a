"""OpenSpiel bots as our policies and back (env side: `connect4_env.integrations.openspiel`).

- [`OpenSpielPolicy`][connect4_agents.interop.openspiel.OpenSpielPolicy]: any ``pyspiel.Bot`` (OpenSpiel's
  ``MCTSBot``, its AlphaZero bot, a bot of yours) plays through our policy protocol,
  ``act(observation, action_mask)``, in the envs, the arena and tournaments; a bot of OpenSpiel's C++
  factories, built for one player, comes with its ``seat`` or as a function of the seat (one bot each).
  [`openspiel_mcts`][connect4_agents.interop.openspiel.openspiel_mcts] builds one around OpenSpiel's
  ``MCTSBot``.
- [`PolicyBot`][connect4_agents.interop.openspiel.PolicyBot]: any policy of ours (or a spec such as
  ``"mcts:200"``) is a ``pyspiel.Bot``, which OpenSpiel's ``evaluate_bots`` and its other tools play on
  ``connect_four``, on Kaggle's ``connect_four_proxy`` (its Game Arena) or on our ``python_connect4_env`` game
  of any size.

The positions cross through
[`connect4_env.integrations.openspiel.convert.board_from_openspiel`][connect4_env.integrations.openspiel.convert.board_from_openspiel] and
[`board_to_openspiel`][connect4_env.integrations.openspiel.convert.board_to_openspiel].
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from connect4_agents.base import NoLegalMoveError
from connect4_env.core import Board
from connect4_env.encoding import action_mask, board_from_observation, observation_planes, split_observation
from connect4_env.extras import require
from connect4_env.integrations.openspiel.convert import (
    board_from_openspiel,
    board_to_openspiel,
    load_openspiel_game,
)
from connect4_env.policy import bind_policy, policy_from_spec
from connect4_env.rules import Rules, check_rules
from connect4_env.validation import check_bool, check_int, check_number

__all__ = ["OpenSpielPolicy", "PolicyBot", "openspiel_mcts"]

pyspiel = require("pyspiel", "openspiel", "connect4_agents.interop.openspiel")
_Bot: Any = pyspiel.Bot


class OpenSpielPolicy:
    """A `pyspiel.Bot` as a policy of ours.

    Each move rebuilds the position as a state of `game`
    ([`board_to_openspiel`][connect4_env.integrations.openspiel.convert.board_to_openspiel]), calls the bot's `restart_at(state)` (so
    a bot that follows the game's history starts from this one) and returns its `step(state)`.

    OpenSpiel's C++ bot factories (`make_uniform_random_bot`, `make_stateful_random_bot`, `make_policy_bot`,
    `load_bot`) build a bot for one player (their `player_id`), and such a bot asked for the other player's
    move crashes the Python process. So a bot of theirs comes with its `seat`, and a policy whose bot has a
    seat never asks it for the other seat's move (it raises `ValueError` instead); to play both seats, as
    every match of ours does, pass a function `player_id -> bot` instead: one bot per seat, each built on first
    use and asked only for its own seat's moves.

    Args:
        bot: the `pyspiel.Bot`, or a function from a player id (0 moves first) to the `pyspiel.Bot` for that
            seat, such as `lambda player: pyspiel.make_uniform_random_bot(player, 0)`. Each must play the game
            of `game` with the board's rules.
        game: `"connect_four"` (OpenSpiel's C++ game, the default and the fastest to search),
            `"python_connect4_env"` (ours), `"connect_four_proxy"` (Kaggle's, when registered) or a loaded
            `pyspiel.Game` of any of them.
        rules: the board, if known; else the bound rules, else the observation's size with 4 in a row.
        seat: the player `bot` was built for (0 or 1), required for a bot made by OpenSpiel's C++ factories
            (a plain `pyspiel.Bot`); None for a bot that plays whoever is to move (a Python bot such as
            OpenSpiel's `MCTSBot`, its C++ `pyspiel.MCTSBot`) or for a function of the seat.

    Raises:
        TypeError: `bot` is neither a `pyspiel.Bot` nor callable, `game` neither a name nor a `pyspiel.Game`,
            or `seat` not an integer.
        ValueError: `game` names another game; `seat` is not 0 or 1, is missing for a bot of OpenSpiel's C++
            factories, or is given with a function of the seat.
    """

    def __init__(
        self,
        bot: Any,
        *,
        game: str | Any = "connect_four",
        rules: Rules | None = None,
        seat: int | None = None,
    ) -> None:
        if isinstance(bot, pyspiel.Bot):
            if seat is not None:
                seat = check_int("seat", seat, 0, 1)
            elif type(bot) is pyspiel.Bot:  # what make_uniform_random_bot, make_policy_bot, load_bot return
                raise ValueError(
                    "a bot of OpenSpiel's C++ factories (make_uniform_random_bot, make_policy_bot, load_bot, "
                    "...) plays only the player_id it was built for and crashes the process when asked for the "
                    "other player's move: pass seat=<its player_id>, or a function player_id -> bot (one bot "
                    "per seat) to play both seats"
                )
        elif callable(bot):
            if seat is not None:
                raise ValueError(
                    "seat is for a single bot; a function player_id -> bot already has one per seat"
                )
        else:
            raise TypeError(
                f"bot must be a pyspiel.Bot or a function player_id -> pyspiel.Bot, got {type(bot).__name__}"
            )
        check_rules(rules, None)
        if isinstance(game, str):
            load_openspiel_game(Rules(), game=game)  # check the name now, not at the first move
        elif not isinstance(game, pyspiel.Game):
            raise TypeError(f"game must be a game name or a pyspiel.Game, got {type(game).__name__}")
        self.bot = bot
        self.seat = seat
        self.game = game
        self.rules = rules
        self._games: dict[Rules, Any] = {}
        self._bots: dict[int, Any] = {}

    def bind(self, rules: Rules) -> None:
        """Play `rules` from now on."""
        self.rules = rules

    def reset(self, seed: int | None = None) -> None:
        """Before a game. `seed` is ignored: seed the bot where it is built (its `random_state` or seed)."""

    def _game_for(self, rules: Rules) -> Any:
        if not isinstance(self.game, str):
            return self.game
        if rules not in self._games:
            self._games[rules] = load_openspiel_game(rules, game=self.game)
        return self._games[rules]

    def state_for(self, board: Board) -> Any:
        """`board` as a state of this policy's game (what the bot is given)."""
        return board_to_openspiel(board, game=self._game_for(board.rules))

    def bot_for(self, player: int) -> Any:
        """The bot that plays `player`'s moves (0 moves first).

        Raises:
            TypeError: ``player`` is not an integer, or the function of the seat returned something that is
                not a `pyspiel.Bot`.
            ValueError: ``player`` is not 0 or 1, or the bot was built for the other seat.
        """
        player = check_int("player", player, 0, 1)
        if isinstance(self.bot, pyspiel.Bot):
            if self.seat is not None and player != self.seat:
                raise ValueError(
                    f"this OpenSpielPolicy's bot was built for player {self.seat} and is asked for player "
                    f"{player}'s move; pass a function player_id -> bot to play both seats"
                )
            return self.bot
        if player not in self._bots:
            made = self.bot(player)
            if not isinstance(made, pyspiel.Bot):
                raise TypeError(
                    f"the bot function returned {type(made).__name__} for player {player}, not a pyspiel.Bot"
                )
            self._bots[player] = made
        return self._bots[player]

    def act(self, observation: Any, action_mask: Any = None) -> int:
        """The bot's column for this position.

        Raises:
            NoLegalMoveError: the game is over.
            ValueError: the mask disagrees with the position, the observation is not the bound board's size,
                no game reaches the position, or the bot was built for the other seat (see
                [`bot_for`][connect4_agents.interop.openspiel.OpenSpielPolicy.bot_for]).
            TypeError: the function of the seat returned something that is not a `pyspiel.Bot`.
            RuntimeError: the bot answered an illegal column.
        """
        planes, mask = split_observation(observation, action_mask)
        rules = self.rules
        if rules is not None and planes.shape[:2] != (rules.rows, rules.columns):
            raise ValueError(f"observation of shape {planes.shape} does not fit the bound rules {rules}")
        board = board_from_observation(planes, 4 if rules is None else rules.win_length)
        legal = board.legal_mask()
        if not any(legal):
            raise NoLegalMoveError("the game is over: no column can be played")
        if [int(v != 0) for v in mask.tolist()] != legal:
            raise ValueError(
                f"action_mask {mask.tolist()} disagrees with the position's legal columns {legal}"
            )
        bot = self.bot_for(board.to_move)  # before the bot sees a state: another seat's would crash it
        state = self.state_for(board)
        bot.restart_at(state)
        column = int(bot.step(state))
        if not board.is_legal(column):
            raise RuntimeError(f"the OpenSpiel bot played column {column}; legal are {board.legal_moves()}")
        return column


def openspiel_mcts(
    simulations: int = 1000,
    *,
    seed: int | None = None,
    rules: Rules | None = None,
    uct_c: float = math.sqrt(2),
    solve: bool = True,
    game: str = "connect_four",
) -> OpenSpielPolicy:
    """OpenSpiel's ``MCTSBot`` (random rollouts, like ours) as a policy.

    Args:
        simulations: its ``max_simulations`` a move.
        seed: seeds its random state (same seed, same moves).
        rules: the board; 6×7 with 4 in a row when None.
        uct_c: its exploration constant.
        solve: its MCTS-Solver (proven results back up the tree), on as in ours.
        game: ``"connect_four"`` (C++, fast) or ``"python_connect4_env"`` (ours).

    Returns:
        An [`OpenSpielPolicy`][connect4_agents.interop.openspiel.OpenSpielPolicy] around the bot.

    Raises:
        TypeError: ``simulations`` or ``seed`` is not an integer, ``uct_c`` not a number, ``solve`` not a
            bool, ``rules`` not a [`Rules`][connect4_env.rules.Rules] or ``game`` not a str (checked here
            rather than at the bot's first move).
        ValueError: ``simulations`` is outside ``1..10**9``, ``seed`` outside ``0..2**32 - 1``, ``uct_c``
            negative, NaN or infinite, or ``game`` names no game that `load_openspiel_game` loads.
        MissingExtraError: OpenSpiel is not installed (the ``openspiel`` extra).
    """
    from open_spiel.python.algorithms import mcts

    simulations = check_int("simulations", simulations, 1, 10**9)
    if seed is not None:
        seed = check_int("seed", seed, 0, 2**32 - 1)  # numpy's RandomState range
    uct_c = check_number("uct_c", uct_c, 0.0)
    check_bool("solve", solve)
    rules = check_rules(rules, None) or Rules()
    spiel_game = load_openspiel_game(rules, game=game)
    rng = np.random.RandomState(seed)
    bot = mcts.MCTSBot(
        spiel_game,
        uct_c=uct_c,
        max_simulations=simulations,
        evaluator=mcts.RandomRolloutEvaluator(1, rng),
        random_state=rng,
        solve=solve,
    )
    return OpenSpielPolicy(bot, game=spiel_game, rules=rules)


class PolicyBot(_Bot):
    """A policy of ours as a `pyspiel.Bot`, for `connect_four`, `connect_four_proxy` (Kaggle's Game Arena) and
    `python_connect4_env` states.

    Args:
        policy: any policy (an object with ``act``), or a spec such as ``"mcts:200"`` or ``"solver"``.
        seed: for a spec, the policy's seed.

    Raises:
        TypeError: ``policy`` has no ``act`` and is not a spec string.
        ValueError: ``policy`` is an unknown spec.
    """

    def __init__(self, policy: Any, *, seed: int | None = None) -> None:
        super().__init__()
        if isinstance(policy, str):
            policy = policy_from_spec(policy, seed=seed)
        if not callable(getattr(policy, "act", None)):
            raise TypeError(f"policy must have act(observation, action_mask), got {type(policy).__name__}")
        self.policy = policy
        self._rules: Rules | None = None

    def restart_at(self, state: Any) -> None:
        """A new game from ``state``: resets the policy."""
        reset = getattr(self.policy, "reset", None)
        if callable(reset):
            reset()

    def inform_action(self, state: Any, player_id: int, action: int) -> None:
        """Nothing to do: each step reads the whole position."""

    def step(self, state: Any) -> int:
        """The policy's column for ``state``.

        Raises:
            TypeError: ``state`` is not a `pyspiel.State`.
            ValueError: ``state`` is the state of another game (as
                [`board_from_openspiel`][connect4_env.integrations.openspiel.convert.board_from_openspiel]
                reads it), or the policy cannot play its board.
            NoLegalMoveError: the game is over (a ValueError).
        """
        board = board_from_openspiel(state)
        if board.rules != self._rules:
            bind_policy(self.policy, board.rules)
            self._rules = board.rules
        return int(self.policy.act(observation_planes(board), action_mask(board)))
