"""Any policy as a Kaggle ConnectX agent (env side: Kaggle's connectx; one job: a legal move in time).

Kaggle's ``connectx`` (``kaggle-environments``) calls an agent with the position
([`read_kaggle_position`][connect4_agents.interop.kaggle_position.read_kaggle_position] reads it) and a
``configuration`` whose ``actTimeout`` is a move's seconds (2; time past it is taken from a 60 s overage bank,
and an empty bank loses). An invalid column loses at once, as does an exception.
[`make_kaggle_agent`][connect4_agents.interop.kaggle.make_kaggle_agent] therefore checks the position (a
malformed one raises, naming the bad value), builds the policy once per board, bounds every search by the
move's time (``actTimeout`` less a margin) or a node budget, falls back to a time-bounded MCTS when the solver
would need more (an early 6x7 position without the ``book`` extra), lets the exact solver play any other
policy's endgames ([`kaggle_endgame`][connect4_agents.interop.kaggle_endgame]), and never returns an illegal
column. No move waits for a compilation or an import: a policy built from a spec (AlphaZero imports torch and
reads its model) and then the compiled kernels (MCTS's first, then the solver's; the solver's first for a
network) load in background threads ([`kaggle_loading`][connect4_agents.interop.kaggle_loading]). Until the
policy is ready, and for a policy other than a network until MCTS's kernels are too, a move is cold: it first
waits for them, holding no lock, for up to 30 % of its time (the loading threads then have Python to
themselves; what loads in time makes the move warm), then plain-Python MCTS plays it. A network plays as soon as
it is built, its search bounded by the move's time. While anything loads, a move ends by half its time.

The same module runs inside a submission file ([`kaggle_submission`][connect4_agents.interop.kaggle_submission]),
where only numpy is sure to be installed: it imports submodules alone, never the packages' roots (which load
Gymnasium and PettingZoo).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from connect4_agents.interop.kaggle_endgame import (
    EndgameSolver,
    node_budget,
    solver_compiled,
)
from connect4_agents.interop.kaggle_loading import (
    POLICY_THREAD,
    Background,
    build_policy,
    cached_policy,
    calls_a_network,
    compiled_kernels_possible,
    kernel_loader,
    load_kernels,
    loading_anywhere,
)
from connect4_agents.interop.kaggle_position import (
    read_act_timeout,
    read_kaggle_position,
    read_kaggle_rules,
)
from connect4_agents.mcts.agent import MCTSAgent
from connect4_agents.solver.agent import SolverAgent, SolverBudgetExceeded
from connect4_env.core import Board
from connect4_env.encoding import action_mask, observation_planes
from connect4_env.policy import bind_policy, policy_from_spec
from connect4_env.rules import Rules
from connect4_env.validation import check_bool, check_int, check_number

__all__ = [
    "KaggleAgent",
    "make_kaggle_agent",
]

DEFAULT_MARGIN = 0.4  # seconds kept back from actTimeout for Kaggle's own overhead and a slow machine
_MIN_SECONDS = 0.05  # the least time any search is given
MAX_MOVE_SECONDS = 3600.0  # the most: a huge actTimeout (1e30) must not become an endless search
_SIMULATION_SHARE = 0.8  # of the move's time, the part a bare "alphazero" spec sizes its simulations for
_MAX_SIMULATIONS = 10_000
_SOLVER_SHARE = 0.5  # of the move's time, the solver's; the fallback search gets the rest
# Of the move's time, a cold move's search (something still loading in the background), the other half the
# reserve for a loading thread holding Python's lock (torch's import holds it for long stretches; docs/design/notes.md)
_COLD_SHARE = 0.5
# Of the move's time, the most a cold move waits for what is loading before it searches. A wait holds no lock: the
# loading threads have Python to themselves, where a search in plain Python would take half of it from them
# (issue 49: searching the whole cold share, a fresh process stayed cold for three games)
_LOADING_WAIT_SHARE = 0.3


def _say(message: str) -> None:
    """A line in the agent's log (Kaggle keeps each move's stderr)."""
    print(f"connect4 kaggle agent: {message}", file=sys.stderr)


class KaggleAgent:
    """A policy as a Kaggle ConnectX agent: ``agent(observation, configuration) -> column``.

    Build it with [`make_kaggle_agent`][connect4_agents.interop.kaggle.make_kaggle_agent], which checks the
    spec and the settings (a submission builds it directly, from settings checked when it was written, so that
    its loading imports nothing slow). ``moves`` counts the moves it answered, ``fallbacks`` those a MCTS
    answered instead (the solver over its time, a policy that raised, chose an illegal column or cannot play
    the board), ``endgame_moves`` those the endgame solver played, ``cold_moves`` those MCTS played in plain
    Python or in place of the policy while they loaded in the background (the policy; for a policy other than
    a network, MCTS's compiled kernels too; for a network without a ``time_limit`` to bound its search, anything
    of any submission); ``last_seconds`` is the last move's time.

    Attributes:
        load_seconds: seconds spent before the first call that Kaggle times as part of the first move (a
            submission's file is run inside its first call); the first move's time counts them.
        clock: the clock moves are timed with (``time.perf_counter``); the searches' own time limits use the
            real clock.
    """

    def __init__(
        self,
        policy: Any,
        *,
        seed: int | None = None,
        move_seconds: float | None = None,
        margin: float = DEFAULT_MARGIN,
        endgame: bool = True,
        background: bool = True,
        built: Any = None,
    ) -> None:
        self._spec = policy if isinstance(policy, str) else None
        self._policy = None if isinstance(policy, str) else policy
        self._built = built  # the spec's policy, built by make_kaggle_agent's check: bound to the first board
        self.seed = seed
        self.move_seconds = move_seconds
        self.margin = margin
        self.endgame = endgame
        self.background = background
        self.load_seconds = 0.0
        self.clock: Callable[[], float] = time.perf_counter
        self._endgame = EndgameSolver()
        self._policies: dict[Rules, Any] = {}
        self._builds: dict[Rules, Background] = {}
        self._time_limits: dict[Rules, float | None] = {}  # each MCTS policy's own, before any move's cap
        self._object_time_limit = getattr(self._policy, "time_limit", None)
        # a policy leaving its build to us (compiled=None) searches in plain Python if the kernels failed to load
        self._object_auto = getattr(self._policy, "compiled", False) is None
        self._auto: dict[Rules, bool] = {}
        self._fallbacks: dict[Rules, MCTSAgent] = {}
        self._unplayable: dict[Rules, str] = {}
        self._last_ply: int | None = None
        self._said: set[str] = set()
        self.moves = 0
        self.fallbacks = 0
        self.endgame_moves = 0
        self.cold_moves = 0
        self.last_seconds = 0.0

    def __repr__(self) -> str:
        return f"KaggleAgent({self._spec or self._policy!r})"

    def budget(self, configuration: Any) -> float:
        """The seconds one move may search: ``actTimeout`` less the margin, at most ``move_seconds`` and
        [`MAX_MOVE_SECONDS`][connect4_agents.interop.kaggle.MAX_MOVE_SECONDS] (an hour).

        Raises:
            ValueError: an ``actTimeout`` that is negative, not finite or past a float's range.
        """
        seconds = min(read_act_timeout(configuration) - self.margin, MAX_MOVE_SECONDS)
        if self.move_seconds is not None:
            seconds = min(seconds, self.move_seconds)
        return max(_MIN_SECONDS, seconds)

    def policy_for(self, rules: Rules) -> Any:
        """The policy bound to ``rules``, built once per board, waiting for a build under way in the
        background (None: it cannot play them; MCTS plays them, counted in ``fallbacks``).
        """
        if rules in self._unplayable:
            return None
        if rules not in self._policies:
            build = self._builds.pop(rules, None)
            try:
                if build is not None:
                    build.wait()
                    if build.error is not None:
                        raise build.error
                    policy = build.result
                elif self._spec is not None:
                    built, self._built = self._built, None
                    policy = (
                        policy_from_spec(self._spec, seed=self.seed, rules=rules)
                        if built is None
                        else bind_policy(built, rules)
                    )
                else:
                    policy = bind_policy(self._policy, rules)
                    self._policies.clear()  # one object is bound to one board at a time
            except Exception as error:  # a model of another board size, a missing library: MCTS plays instead
                self._unplayable[rules] = str(error)
                _say(f"{type(error).__name__}: {error}; MCTS plays this board instead")
                return None
            self._keep(rules, policy)
        return self._policies[rules]

    def _keep(self, rules: Rules, policy: Any) -> None:
        """Keep ``policy`` as the one for ``rules``, with its own time limit and build."""
        self._policies[rules] = policy
        if self._spec is not None:
            # a spec names no time for a network, and a network shared by the process's agents
            # (cached_policy) carries the time its last move was given
            own = None if calls_a_network(policy) else getattr(policy, "time_limit", None)
            self._time_limits[rules] = own
            self._auto[rules] = getattr(policy, "compiled", False) is None
        else:
            self._time_limits[rules] = self._object_time_limit
            self._auto[rules] = self._object_auto

    def _builds_in_background(self, rules: Rules) -> bool:
        """Whether the policy for ``rules`` is a spec's still to be built in the background."""
        return not (
            rules in self._policies
            or rules in self._unplayable
            or not self.background
            or self._spec is None
            or self._built is not None
        )

    def _policy_now(self, rules: Rules, wait: float | None) -> tuple[Any, bool]:
        """The policy for ``rules`` and whether it is still to be built: a spec not yet built is taken from
        the process's network policies ([`cached_policy`][connect4_agents.interop.kaggle_loading.cached_policy]),
        or its build in the background (see ``_start_build``) is waited for at most ``wait`` seconds (None:
        until it is built).
        """
        if not self._builds_in_background(rules):
            return self.policy_for(rules), False
        build = self._builds.get(rules)
        if build is None:
            cached = cached_policy(str(self._spec), self.seed, rules)
            if cached is not None:  # an earlier game's agent in this process built it
                self._keep(rules, cached)
                return cached, False
            return None, True
        if not build.wait(wait):
            return None, True
        return self.policy_for(rules), False

    def _start_build(self, rules: Rules) -> None:
        """Start building the spec's policy for ``rules`` in the background, unless it is built or building,
        and the compiled kernels loading once it is built (the solver's first for a network; MCTS's first
        when the build fails and MCTS plays the board). A move starts it as it ends: torch's import holds
        Python's lock for tenths of a second at a time (its native library's set-up), which then falls
        between this agent's moves rather than in one.
        """
        if not self._builds_in_background(rules) or rules in self._builds:
            return
        spec, seed = str(self._spec), self.seed

        def work() -> Any:
            try:
                policy = build_policy(spec, seed, rules)
            except Exception:
                kernel_loader(rules)
                raise
            kernel_loader(rules, solver_first=calls_a_network(policy))
            return policy

        self._builds[rules] = Background(POLICY_THREAD, work)

    def _kernels(
        self, rules: Rules, start: bool, network: bool
    ) -> tuple[bool | None, bool | None, bool, bool]:
        """The builds the move's MCTS and solver search with (None: compiled where they can, False: plain
        Python), whether MCTS's compiled kernels are still to load, and whether any are. The kernels start
        loading (the solver's first for a ``network``) when ``start`` asks (once the policy is built, so that
        torch's import has Python to itself); a move that starts them plays plain Python.
        """
        if not self.background:
            return None, None, False, False
        loader, started = kernel_loader(rules, start=start, solver_first=network)
        if loader is None:  # none can play the board, or (without start) none is loading yet
            pending = not start and compiled_kernels_possible(rules)
            return False, False, pending, pending
        done = loader.done and loader.error is None

        def build(stage: str) -> bool | None:
            ready = getattr(loader, stage, None)  # None: a loader of one stage
            return None if (done if ready is None else ready.is_set()) else False

        mcts, solver = build("mcts_ready"), build("solver_ready")
        if started or not loader.done:
            return mcts, solver, mcts is False, True
        if loader.error is not None:
            self._say_once(
                "kernels", f"the compiled kernels failed to load ({loader.error}); plain Python plays"
            )
            return mcts, solver, False, False
        return None, None, False, False

    def _wait_for_loading(self, rules: Rules, seconds: float) -> None:
        """Wait at most ``seconds`` for what keeps a move cold: the policy's build, then (unless the policy
        is a network, which plays without them) MCTS's compiled kernels, started loading once the policy is
        built. Waiting holds no lock, so the loading threads have Python to themselves meanwhile.
        """
        end = time.monotonic() + seconds
        build = self._builds.get(rules)
        if build is not None and not build.wait(end - time.monotonic()):
            return
        policy, building = self._policy_now(rules, 0.0)
        if building or calls_a_network(policy):  # a build not started yet: nothing loads before it
            return
        loader, _ = kernel_loader(rules)
        if loader is not None:
            ready = getattr(loader, "mcts_ready", None)
            if ready is None:
                loader.wait(end - time.monotonic())
            else:
                ready.wait(max(0.0, end - time.monotonic()))

    def _say_once(self, key: str, message: str) -> None:
        if key not in self._said:
            self._said.add(key)
            _say(message)

    def _tell_cold(self, kernels: bool, policy: bool, cold: bool, network: bool) -> None:
        """Say in the log when the agent starts cold and when it is no longer."""
        if cold:
            names = {f"the policy {self._spec!r}": policy, "the compiled kernels": kernels}
            loading = ", then ".join(name for name, on in names.items() if on) or "another agent"
            mcts = "plain-Python MCTS" if kernels else "MCTS"
            self._say_once(
                "cold", f"cold start: loading {loading} in the background; {mcts} plays until then"
            )
        elif "cold" in self._said:
            playing = (
                "; the network plays, the compiled kernels loading meanwhile" if network and kernels else ""
            )
            self._say_once("warm", f"warm after {self.cold_moves} cold moves{playing}")

    def warm_up(self, configuration: Any = None, timeout: float | None = None) -> bool:
        """Load what moves on a board need, the policy and the compiled kernels, before the first move.

        With ``background`` (the default), both load in background threads as at a first move (the policy,
        then the kernels), and this waits for them at most ``timeout`` seconds; without it, they load here (the
        kernels compile on first use).

        Args:
            configuration: a Kaggle configuration naming the board (``rows``, ``columns``, ``inarow``); None:
                Kaggle's 6x7 board with four in a row.
            timeout: the most seconds to wait (None: until both are loaded).

        Returns:
            Whether both are loaded (a policy that cannot play the board, or kernels that cannot, count as
            loaded: nothing more will load).

        Raises:
            TypeError: a configuration that is not a dict or an object, or a field that is not an integer.
            ValueError: a field that is missing or out of range, or a negative ``timeout``.
        """
        rules = Rules() if configuration is None else read_kaggle_rules(configuration)
        if timeout is not None:
            timeout = check_number("timeout", timeout, 0.0)
        self._start_build(rules)
        if not self.background:
            self.policy_for(rules)
            with contextlib.suppress(ValueError):  # no compiled kernels here (no numba, or past 63 bits)
                load_kernels(rules)
            return True
        end = None if timeout is None else time.monotonic() + timeout
        policy, building = self._policy_now(rules, None if end is None else end - time.monotonic())
        if building:
            return False
        loader, _ = kernel_loader(rules, solver_first=calls_a_network(policy))
        return loader is None or loader.wait(None if end is None else end - time.monotonic())

    def _fallback(self, rules: Rules, seconds: float, compiled: bool | None) -> MCTSAgent:
        seconds = max(_MIN_SECONDS, seconds)
        if rules not in self._fallbacks:
            self._fallbacks[rules] = MCTSAgent(time_limit=seconds, rules=rules, seed=self.seed)
        agent = self._fallbacks[rules]
        agent.time_limit = seconds
        agent.compiled = compiled
        return agent

    def __call__(self, observation: Any, configuration: Any) -> int:
        """The column to play in Kaggle's position (0-based, always legal).

        Raises:
            TypeError: a malformed observation or configuration: a wrong type (see
                [`read_kaggle_position`][connect4_agents.interop.kaggle_position.read_kaggle_position]).
            ValueError: a malformed observation or configuration: a wrong value.
        """
        called = self.clock()
        board = read_kaggle_position(observation, configuration)
        budget = self.budget(configuration)
        start = called - self.load_seconds  # what Kaggle timed before this call belongs to this move
        self.load_seconds = 0.0
        rules = board.rules
        # the policy first (its build starts as a move ends), then the kernels once it is built
        policy, policy_loading = self._policy_now(rules, 0.0)
        network = calls_a_network(policy)
        kernels = self._kernels(rules, not policy_loading, network)
        mcts_build, solver_build, searches_loading, kernels_loading = kernels
        if self.background and (policy_loading or (searches_loading and not network)):
            self._wait_for_loading(rules, _LOADING_WAIT_SHARE * budget - (self.clock() - start))
            policy, policy_loading = self._policy_now(rules, 0.0)
            network = calls_a_network(policy)
            kernels = self._kernels(rules, not policy_loading, network)
            mcts_build, solver_build, searches_loading, kernels_loading = kernels
        # any loading thread in the process, ours or another submission's: a network's many short calls each give
        # Python's lock up to it, so a network's search is bounded by the move's time (time_limit), and one that
        # cannot be bounded waits until none is left
        elsewhere = loading_anywhere()
        unbounded = network and not hasattr(policy, "time_limit")
        cold = policy_loading or (searches_loading and not network) or (elsewhere and unbounded)
        self._tell_cold(searches_loading, policy_loading, cold, network)
        loading = kernels_loading or policy_loading or elsewhere
        if loading:  # the other half: a loading thread's reserve
            budget = max(_MIN_SECONDS, budget * _COLD_SHARE)
        if cold:
            self.cold_moves += 1
        if policy is not None and self._auto.get(rules):
            policy.compiled = solver_build if isinstance(policy, SolverAgent) else mcts_build
        if self._last_ply is None or board.ply <= self._last_ply:  # a new game
            for agent in (policy, self._fallbacks.get(rules)):
                reset = getattr(agent, "reset", None)
                if callable(reset):
                    reset()
        self._last_ply = board.ply
        player = None if cold else policy
        planes, mask = observation_planes(board), action_mask(board)
        column = (
            self._endgame.column(board, budget, solver_build, shared=loading)
            if self.endgame and not isinstance(player, SolverAgent)
            else None
        )
        if column is not None:
            self.endgame_moves += 1
        else:
            asked = self.clock()
            left = budget - (asked - start)
            column = None if player is None else self._ask(player, board, planes, mask, left)
            if column is None or not board.is_legal(column):
                left = budget - (self.clock() - start)
                column = int(self._fallback(rules, left, mcts_build).act(planes, mask))
                if not cold:  # a cold move is MCTS's by design, not for a failure
                    self.fallbacks += 1
            simulations = getattr(player, "simulations", 0)
            if isinstance(simulations, int) and simulations > 0:
                self._fit_simulations(player, left, self.clock() - asked)
        if policy_loading and self.background:  # what loads next starts as the move ends
            self._start_build(rules)
        self.moves += 1
        self.last_seconds = self.clock() - start
        return column

    def _fit_simulations(self, policy: Any, budget: float, seconds: float) -> None:
        """After a move of a search counted in simulations (AlphaZero) that took ``seconds`` of its ``budget``:
        a bare spec (``"alphazero"``) gets as many simulations as the move's time allows, measured on this
        machine (``_SIMULATION_SHARE`` of it, the rest for the network's start and the position's reading); any
        search that overran gets half as many.
        """
        search = getattr(policy, "last_search", None)
        done = getattr(search, "simulations", 0) or policy.simulations  # a proven root stops its search early
        per_simulation = seconds / max(1, done)
        if self._spec is not None and ":" not in self._spec:
            fitted = int(budget * _SIMULATION_SHARE / max(per_simulation, 1e-9))
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
        elif calls_a_network(policy) and hasattr(policy, "time_limit"):  # AlphaZero's: up to its simulations
            own = self._time_limits.get(board.rules)
            policy.time_limit = seconds if own is None else min(own, seconds)
        elif isinstance(policy, SolverAgent):
            nodes = node_budget(seconds, solver_compiled(policy, board.rules), _SOLVER_SHARE)
            configured = policy.budget_for(board.rules)
            policy.node_budget = nodes if configured is None else min(configured, nodes)
        try:
            column = policy.act(planes, mask)
        except SolverBudgetExceeded:
            return None
        except Exception as error:  # a loss on Kaggle: say why in the agent's log, and let MCTS move
            _say(f"{type(error).__name__}: {error}; MCTS plays this move")
            return None
        if isinstance(column, (int, np.integer)) and not isinstance(column, bool):
            return int(column)
        _say(f"the policy returned {column!r}; MCTS plays this move")
        return None


def make_kaggle_agent(
    policy: Any,
    *,
    seed: int | None = None,
    move_seconds: float | None = None,
    margin: float = DEFAULT_MARGIN,
    endgame: bool = True,
    background: bool = True,
) -> KaggleAgent:
    """A Kaggle ConnectX agent, ``agent(observation, configuration) -> column``, playing ``policy``.

    Args:
        policy: an agent spec (``"mcts"``, ``"mcts:0.5s"``, ``"solver"``, ``"alphazero"``, ...; built once
            per board size) or a policy object (bound to each game's rules).
        seed: for the agents built from a spec and the fallback MCTS.
        move_seconds: the most seconds a move may search (None: ``actTimeout`` less ``margin``).
        margin: seconds kept back from ``configuration.actTimeout``.
        endgame: before any policy but the solver moves, the exact solver gets a fifth of the move's time
            (a node budget, the same on any machine; 1,000 nodes while more than
            [`ENDGAME_MAX_EMPTY`][connect4_agents.interop.kaggle_endgame.ENDGAME_MAX_EMPTY] cells are empty, too early
            to prove more than shallow tactics, and while it searches in plain Python beside a loading thread)
            and plays when it proves the position: the quickest win, else a draw, else the slowest loss. False:
            the policy plays every move itself.
        background: load the compiled kernels (and the spec's policy for a board after the first) in background
            threads, MCTS's kernels first (the solver's for a network); until the policy is ready, and for a
            policy other than a network MCTS's kernels too, each move waits for them for up to 30 % of its
            time, then searches in plain Python (MCTS in place of a policy not yet built) until half its time,
            and while anything loads a move takes half its time, so that no move waits for a compilation.
            False: they load on the move that first needs them (a first move then compiles the kernels:
            seconds).

    Returns:
        A [`KaggleAgent`][connect4_agents.interop.kaggle.KaggleAgent]. A time-bounded search (MCTS) is capped at
        the move's time (a bare ``"mcts"`` spec searches for all of it), and so is an AlphaZero search (its
        ``time_limit``); the solver gets half of it and MCTS the rest when the solver would need more; a bare
        ``"alphazero"`` sizes its simulations to the move's time as measured on its previous move; any other
        AlphaZero search that overruns halves its simulations for the next moves. A policy that raises, returns
        an illegal column or cannot play the board (an AlphaZero model of another size) is replaced for that
        move or board by a time-bounded MCTS.

    Raises:
        TypeError: ``policy`` is neither a spec nor an object with ``act``, or a setting of the wrong type.
        ValueError: an unknown spec or a setting out of range.
    """
    if not isinstance(policy, str) and not callable(getattr(policy, "act", None)):
        raise TypeError(
            f"policy must be an agent spec such as 'mcts' or an object with act(), got {policy!r}"
        )
    if seed is not None:
        seed = check_int("seed", seed, 0)
    if move_seconds is not None:
        move_seconds = check_number("move_seconds", move_seconds, 0.0, above_minimum=True)
    margin = check_number("margin", margin, 0.0)
    endgame = check_bool("endgame", endgame)
    background = check_bool("background", background)
    # a spec is checked now rather than at the first move, and the policy built is kept for the first board
    built = policy_from_spec(policy, seed=seed) if isinstance(policy, str) else None
    return KaggleAgent(
        policy,
        seed=seed,
        move_seconds=move_seconds,
        margin=margin,
        endgame=endgame,
        background=background,
        built=built,
    )
