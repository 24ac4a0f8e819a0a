"""Kaggle ConnectX agents: any of our policies as an ``agent(observation, configuration)`` function.

Kaggle's ``connectx`` (``kaggle-environments``) calls an agent with two objects, dicts or Kaggle ``Struct`` s
(attribute access), and takes the column it returns:

- ``observation.board``: the ``rows * columns`` cells as one flat list, **top row first**, ``0`` empty,
  ``1`` the first player's stones, ``2`` the second's; ``observation.mark``: whose turn (1 or 2).
- ``configuration.rows`` / ``columns`` / ``inarow`` (our ``win_length``), ``actTimeout`` (seconds a move,
  2 on Kaggle; time past it is taken from a 60 s overage bank, and an empty bank loses).

An invalid column loses at once, as does an exception. :func:`make_kaggle_agent` therefore reads and checks the
position (a malformed one raises, naming the bad value), builds the policy once per board, gives a
time-bounded search the move's time (``actTimeout`` less a margin), lets the solver use part of it and falls
back to a time-bounded MCTS when the solver would need more (an early 6x7 position without the ``book``
extra), lets the exact solver play any other policy's endgames (the positions it proves within a fifth of the
move's time, given that share once at most :data:`ENDGAME_MAX_EMPTY` cells are empty), and never returns an
illegal column. The same module runs inside a submission file
(:mod:`connect4_agents.interop.kaggle_submission`), where only numpy is sure to be installed: it imports
submodules alone, never the packages' roots (which load Gymnasium and PettingZoo).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from connect4_agents.mcts.agent import MCTSAgent
from connect4_agents.solver import kernels as solver_kernels
from connect4_agents.solver.agent import DEFAULT_NODE_BUDGET, SolverAgent, SolverBudgetExceeded
from connect4_env.compiled import kernels_for
from connect4_env.core import Board, Rules
from connect4_env.encoding import action_mask, cell_bit_index, observation_planes
from connect4_env.policy import bind_policy, policy_from_spec
from connect4_env.validation import check_bool, check_int, check_number

__all__ = [
    "KaggleAgent",
    "make_kaggle_agent",
    "read_kaggle_position",
    "endgame_node_budget",
    "KAGGLE_ACT_TIMEOUT",
    "ENDGAME_MAX_EMPTY",
]

KAGGLE_ACT_TIMEOUT = 2.0  # seconds a move: connectx's default actTimeout
DEFAULT_MARGIN = 0.4  # seconds kept back from actTimeout for Kaggle's own overhead and a slow machine
_MIN_SECONDS = 0.05  # the least time any search is given
MAX_MOVE_SECONDS = 3600.0  # the most: a huge actTimeout (1e30) must not become an endless search
_MIN_NODES = 1000  # the least node budget any solver search is given (half a millisecond compiled)
_SOLVER_SHARE = 0.5  # of the move's time, the solver's; the fallback search gets the rest
_ENDGAME_SHARE = 0.2  # of the move's time, the endgame solver's before any other policy moves
# Above this many empty cells the endgame solver gets only its least budget (1,000 nodes: half a millisecond
# compiled), enough for the shallow tactics it can still prove, instead of a fifth of the move. Measured on 6x7
# (compiled solver, no book: the endgame solver never looks one up) over the positions of 40 MCTS self-play games
# (mcts:100 and mcts:1000, 4 random plies first): with a fifth of moves of 0.4 s, 1.6 s (Kaggle's) and 8 s, no
# position of more than 36 empty cells was proved, and each attempt spent its whole share (0.27 s of Kaggle's
# 1.6 s move); from 36 empty cells down, some were (2 in 40 at 1.6 s, all from 29 down).
ENDGAME_MAX_EMPTY = 36
_SIMULATION_SHARE = 0.8  # of the move's time, the part a bare "alphazero" spec sizes its simulations for
_MAX_SIMULATIONS = 10_000
# nodes a second of the solver: DEFAULT_NODE_BUDGET is about 25 s of search, compiled or in plain Python
_SOLVER_RATE = {compiled: budget / 25 for compiled, budget in DEFAULT_NODE_BUDGET.items()}


def _node_budget(seconds: float, compiled: bool, share: float) -> int:
    """The nodes the solver searches in ``share`` of ``seconds`` (at least 1,000)."""
    return max(_MIN_NODES, int(_SOLVER_RATE[compiled] * seconds * share))


def _compiled(solver: SolverAgent, rules: Rules) -> bool:
    """Whether ``solver`` runs the compiled kernels on ``rules``."""
    return kernels_for(solver_kernels, rules, solver.compiled).compiled


def endgame_node_budget(seconds: float, compiled: bool = True) -> int:
    """The nodes the endgame solver may search in a move of ``seconds`` (a fifth of it; at least 1,000)."""
    return _node_budget(seconds, compiled, _ENDGAME_SHARE)


def _field(source: Any, name: str, what: str) -> Any:
    """``source[name]`` for a mapping, else ``source.name``; a missing field is a ValueError naming it."""
    if isinstance(source, Mapping):
        if name in source:
            return source[name]
    elif hasattr(source, name):
        return getattr(source, name)
    elif not hasattr(source, "__dict__"):
        raise TypeError(
            f"a Kaggle {what} must be a dict or an object with attributes, got {type(source).__name__}"
        )
    raise ValueError(f"the Kaggle {what} has no {name!r} field (connectx gives {what}.{name})")


def read_kaggle_rules(configuration: Any) -> Rules:
    """The :class:`Rules` of a Kaggle configuration: ``rows``, ``columns`` and ``inarow`` (``win_length``).

    Raises:
        TypeError: the configuration is not a dict or an object, or a field is not an integer. ValueError: a
            field is missing or out of range.
    """
    rows = check_int("configuration.rows", _field(configuration, "rows", "configuration"), 1)
    columns = check_int("configuration.columns", _field(configuration, "columns", "configuration"), 1)
    inarow = check_int("configuration.inarow", _field(configuration, "inarow", "configuration"), 1)
    return Rules(rows, columns, inarow)


def _read_cells(raw: Any, rules: Rules) -> np.ndarray:
    """``observation.board`` as int64 cells, checked entry by entry before numpy sees it (a ragged or nested
    list would otherwise fail inside numpy, with numpy's words)."""
    flat = "connectx's board is one flat list of rows * columns cells, top row first"
    if isinstance(raw, np.ndarray) and raw.ndim != 1:
        raise ValueError(f"observation.board is an array of shape {raw.shape}; {flat}")
    if isinstance(raw, (str, bytes)) or not isinstance(raw, (Sequence, np.ndarray)):
        raise TypeError(f"observation.board must be a list of integers, got {type(raw).__name__}")
    if len(raw) != rules.cells:
        nested = " (a list of rows?)" if len(raw) and isinstance(raw[0], (Sequence, np.ndarray)) else ""
        raise ValueError(
            f"observation.board has {len(raw)} cells{nested}; {flat}: rows * columns = "
            f"{rules.rows} * {rules.columns} = {rules.cells}"
        )
    for index, value in enumerate(raw):
        row, column = divmod(index, rules.columns)
        where = f"observation.board[{index}] (row {row} from the top, column {column})"
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            listed = isinstance(value, (Sequence, np.ndarray)) and not isinstance(value, (str, bytes))
            nested = f", and {flat}" if listed else ""
            raise TypeError(
                f"{where} is {value!r:.40} ({type(value).__name__}); cells are the integers 0 (empty), 1 and 2 "
                f"(a player's stone){nested}"
            )
        if value not in (0, 1, 2):
            raise ValueError(f"{where} is {value!r}; a cell is 0 (empty), 1 or 2 (a player's stone)")
    return np.array([int(value) for value in raw], dtype=np.int64)


def read_kaggle_position(observation: Any, configuration: Any) -> Board:
    """The position of a Kaggle ConnectX call, checked: the board, its rules and the player to move.

    Returns:
        A :class:`Board` whose player to move is ``observation.mark`` (mark 1 is our player 0, who starts).

    Raises:
        TypeError: an observation or configuration that is neither a dict nor an object, a board that is not a
            list, a cell that is not an integer (a float, a bool, a nested list: the index named), a mark or
            size that is not an integer. ValueError: a missing field, a board whose length is not
            ``rows * columns`` (or an array that is not flat), a cell other than 0/1/2, a mark other than 1/2,
            stone counts that do not give ``mark`` the move, a stone above an empty cell, or a game that is
            already over.
    """
    rules = read_kaggle_rules(configuration)
    mark = check_int("observation.mark", _field(observation, "mark", "observation"), 1, 2)
    grid = _read_cells(_field(observation, "board", "observation"), rules).reshape(rules.rows, rules.columns)
    bits = cell_bit_index(rules.rows, rules.columns)
    first = sum(1 << int(bit) for bit in bits[grid == 1])
    second = sum(1 << int(bit) for bit in bits[grid == 2])
    n_first, n_second = int((grid == 1).sum()), int((grid == 2).sum())
    mover = 1 if n_first == n_second else 2 if n_first == n_second + 1 else None
    if mover != mark:
        raise ValueError(
            f"observation.mark is {mark} but the board holds {n_first} stones of mark 1 and {n_second} of "
            "mark 2: mark 1 moves when the counts are equal, mark 2 when mark 1 has one more"
        )
    board = Board.from_stones(rules, first, second)  # ValueError for a floating stone or two lines
    if board.is_terminal:
        result = "a draw" if board.winner is None else f"won by mark {board.winner + 1}"
        raise ValueError(f"the game on observation.board is over ({result}): there is no move to make")
    return board


class KaggleAgent:
    """A policy as a Kaggle ConnectX agent: ``agent(observation, configuration) -> column``.

    Build it with :func:`make_kaggle_agent`. ``moves`` counts the moves it answered and ``fallbacks`` those a
    time-bounded MCTS answered instead (the solver over its time, a policy that raised or chose an illegal
    column, a policy that cannot play the board) and ``endgame_moves`` those the endgame solver played;
    ``last_seconds`` is the last move's time.
    """

    def __init__(
        self,
        policy: Any,
        *,
        seed: int | None = None,
        move_seconds: float | None = None,
        margin: float,
        endgame: bool = True,
    ) -> None:
        self._spec = policy if isinstance(policy, str) else None
        self._policy = None if isinstance(policy, str) else policy
        self.seed = seed
        self.move_seconds = move_seconds
        self.margin = margin
        self.endgame = endgame
        self._endgames: dict[Rules, SolverAgent] = {}
        self._policies: dict[Rules, Any] = {}
        self._time_limits: dict[Rules, float | None] = {}  # each MCTS policy's own, before any move's cap
        self._object_time_limit = getattr(self._policy, "time_limit", None)
        self._fallbacks: dict[Rules, MCTSAgent] = {}
        self._unplayable: dict[Rules, str] = {}
        self._last_ply: int | None = None
        self.moves = 0
        self.fallbacks = 0
        self.endgame_moves = 0
        self.last_seconds = 0.0

    def __repr__(self) -> str:
        return f"KaggleAgent({self._spec or self._policy!r})"

    def budget(self, configuration: Any) -> float:
        """The seconds one move may search: ``actTimeout`` less the margin, at most ``move_seconds`` and
        :data:`MAX_MOVE_SECONDS` (an hour)."""
        timeout = configuration.get("actTimeout") if isinstance(configuration, Mapping) else None
        if timeout is None and not isinstance(configuration, Mapping):
            timeout = getattr(configuration, "actTimeout", None)
        timeout = (
            KAGGLE_ACT_TIMEOUT if timeout is None else check_number("configuration.actTimeout", timeout, 0.0)
        )
        seconds = min(timeout - self.margin, MAX_MOVE_SECONDS)
        if self.move_seconds is not None:
            seconds = min(seconds, self.move_seconds)
        return max(_MIN_SECONDS, seconds)

    def policy_for(self, rules: Rules) -> Any:
        """The policy bound to ``rules``, built once per board (None: it cannot play them; see ``fallbacks``)."""
        if rules in self._unplayable:
            return None
        if rules not in self._policies:
            try:
                if self._spec is not None:
                    policy = policy_from_spec(self._spec, seed=self.seed, rules=rules)
                else:
                    policy = bind_policy(self._policy, rules)
                    self._policies.clear()  # one object is bound to one board at a time
            except ValueError as error:  # a model of another board size: MCTS plays instead
                self._unplayable[rules] = str(error)
                print(f"connect4 kaggle agent: {error}; MCTS plays this board instead", file=sys.stderr)
                return None
            self._policies[rules] = policy
            own = getattr(policy, "time_limit", None) if self._spec is not None else self._object_time_limit
            self._time_limits[rules] = own
        return self._policies[rules]

    def _fallback(self, rules: Rules, seconds: float) -> MCTSAgent:
        seconds = max(_MIN_SECONDS, seconds)
        if rules not in self._fallbacks:
            self._fallbacks[rules] = MCTSAgent(time_limit=seconds, rules=rules, seed=self.seed)
        agent = self._fallbacks[rules]
        agent.time_limit = seconds
        return agent

    def __call__(self, observation: Any, configuration: Any) -> int:
        """The column to play in Kaggle's position (0-based, always legal).

        Raises:
            TypeError / ValueError: a malformed observation or configuration (see :func:`read_kaggle_position`).
        """
        start = time.perf_counter()
        board = read_kaggle_position(observation, configuration)
        budget = self.budget(configuration)
        rules = board.rules
        policy = self.policy_for(rules)
        if self._last_ply is None or board.ply <= self._last_ply:  # a new game
            for agent in (policy, self._fallbacks.get(rules)):
                reset = getattr(agent, "reset", None)
                if callable(reset):
                    reset()
        self._last_ply = board.ply
        planes, mask = observation_planes(board), action_mask(board)
        column = (
            self._solve_endgame(board, budget)
            if self.endgame and not isinstance(policy, SolverAgent)
            else None
        )
        if column is not None:
            self.endgame_moves += 1
        else:
            asked = time.perf_counter()
            left = budget - (asked - start)
            column = None if policy is None else self._ask(policy, board, planes, mask, left)
            if column is None or not board.is_legal(column):
                left = budget - (time.perf_counter() - start)
                column = int(self._fallback(rules, left).act(planes, mask))
                self.fallbacks += 1
            simulations = getattr(policy, "simulations", 0)
            if isinstance(simulations, int) and simulations > 0:
                self._fit_simulations(policy, left, time.perf_counter() - asked)
        self.moves += 1
        self.last_seconds = time.perf_counter() - start
        return column

    def _solve_endgame(self, board: Board, seconds: float) -> int | None:
        """The solver's column when it proves the position within ``_ENDGAME_SHARE`` of the move's time (the
        quickest win, the slowest loss); None when it would need more, or on a board past the compiled
        solver's 63 bits (there the plain-Python solver's nodes cost more, the more columns, than the rate its
        node budget assumes: 100x100 took 3 s a move). With more than :data:`ENDGAME_MAX_EMPTY` empty cells it
        gets only 1,000 nodes, which prove shallow tactics alone, rather than a share it would spend in vain."""
        if board.rules.columns * board.rules.height > 63:
            return None
        solver = self._endgames.get(board.rules)
        if solver is None:  # searched, never looked up: the same play with or without the book extra
            solver = self._endgames[board.rules] = SolverAgent(board.rules, book=False, table_size=1 << 20)
        if board.rules.cells - board.ply > ENDGAME_MAX_EMPTY:  # too early to prove: only shallow tactics
            solver.node_budget = _MIN_NODES
        else:
            solver.node_budget = endgame_node_budget(seconds, _compiled(solver, board.rules))
        try:
            return int(solver.best_columns(board, every=False)[0])
        except SolverBudgetExceeded:
            return None

    def _fit_simulations(self, policy: Any, budget: float, seconds: float) -> None:
        """After a move of a search counted in simulations (AlphaZero) that took ``seconds`` of its ``budget``:
        a bare spec (``"alphazero"``) gets as many simulations as the move's time allows, measured on this
        machine (``_SIMULATION_SHARE`` of it, the rest for the network's start and the position's reading); any
        search that overran gets half as many."""
        search = getattr(policy, "last_search", None)
        done = getattr(search, "simulations", 0) or policy.simulations  # a proven root stops its search early
        per_simulation = seconds / max(1, done)
        if self._spec is not None and ":" not in self._spec:
            fitted = int(budget * _SIMULATION_SHARE / per_simulation)
            # at most twice as many as the last move's: one quick move does not promise the next
            policy.simulations = max(1, min(_MAX_SIMULATIONS, 2 * policy.simulations, fitted))
        elif seconds > budget + self.margin / 2 and policy.simulations > 1:
            policy.simulations = max(1, policy.simulations // 2)

    def _ask(
        self, policy: Any, board: Board, planes: np.ndarray, mask: np.ndarray, seconds: float
    ) -> int | None:
        """The policy's column, with its search bounded by ``seconds``; None when it failed (MCTS plays)."""
        seconds = max(_MIN_SECONDS, seconds)  # a slow first move (kernels compiled) may leave nothing
        if isinstance(policy, MCTSAgent):
            if self._spec is not None and ":" not in self._spec:
                policy.playouts = None  # a bare "mcts": as many playouts as the move's time allows
            own = self._time_limits.get(board.rules)
            policy.time_limit = seconds if own is None else min(own, seconds)
        elif isinstance(policy, SolverAgent):
            nodes = _node_budget(seconds, _compiled(policy, board.rules), _SOLVER_SHARE)
            configured = policy.budget_for(board.rules)
            policy.node_budget = nodes if configured is None else min(configured, nodes)
        try:
            column = policy.act(planes, mask)
        except SolverBudgetExceeded:
            return None
        except Exception as error:  # a loss on Kaggle: say why in the agent's log, and let MCTS move
            print(
                f"connect4 kaggle agent: {type(error).__name__}: {error}; MCTS plays this move",
                file=sys.stderr,
            )
            return None
        if isinstance(column, (int, np.integer)) and not isinstance(column, bool):
            return int(column)
        print(f"connect4 kaggle agent: the policy returned {column!r}; MCTS plays this move", file=sys.stderr)
        return None


def make_kaggle_agent(
    policy: Any,
    *,
    seed: int | None = None,
    move_seconds: float | None = None,
    margin: float = DEFAULT_MARGIN,
    endgame: bool = True,
) -> KaggleAgent:
    """A Kaggle ConnectX agent, ``agent(observation, configuration) -> column``, playing ``policy``.

    Args:
        policy: an agent spec (``"mcts"``, ``"mcts:0.5s"``, ``"solver"``, ``"alphazero"``, ...; built once
            per board size) or a policy object (bound to each game's rules).
        seed: for the agents built from a spec and the fallback MCTS.
        move_seconds: the most seconds a move may search (None: ``actTimeout`` less ``margin``).
        margin: seconds kept back from ``configuration.actTimeout``.
        endgame: before any policy but the solver moves, the exact solver gets a fifth of the move's time
            (a node budget, the same on any machine; 1,000 nodes while more than :data:`ENDGAME_MAX_EMPTY`
            cells are empty, too early to prove more than shallow tactics) and plays when it proves the
            position: the quickest win, else a draw, else the slowest loss. False: the policy plays every move
            itself.

    Returns:
        A :class:`KaggleAgent`. A time-bounded search (MCTS) is capped at the move's time (a bare ``"mcts"`` spec searches for all of it); the solver gets half
        of it and MCTS the rest when the solver would need more; a bare ``"alphazero"`` sizes its simulations to the
        move's time as measured on its previous move; any other AlphaZero search that overruns halves its
        simulations for the next moves. A policy that raises, returns an illegal column or cannot play the
        board (an AlphaZero model of another size) is replaced for that move or board by a time-bounded MCTS.

    Raises:
        TypeError: ``policy`` is neither a spec nor an object with ``act``, or a setting of the wrong type.
        ValueError: an unknown spec or a setting out of range.
    """
    if isinstance(policy, str):
        policy_from_spec(policy)  # the spec's name and value, checked now rather than at the first move
    elif not callable(getattr(policy, "act", None)):
        raise TypeError(
            f"policy must be an agent spec such as 'mcts' or an object with act(), got {policy!r}"
        )
    if seed is not None:
        seed = check_int("seed", seed, 0)
    if move_seconds is not None:
        move_seconds = check_number("move_seconds", move_seconds, 0.0, above_minimum=True)
    margin = check_number("margin", margin, 0.0)
    endgame = check_bool("endgame", endgame)
    return KaggleAgent(policy, seed=seed, move_seconds=move_seconds, margin=margin, endgame=endgame)
