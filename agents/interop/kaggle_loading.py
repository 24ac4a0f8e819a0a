"""What a Kaggle agent loads off its move path, in daemon threads (env side: Kaggle's connectx).

On a machine that has never run them, the compiled kernels (numba) compile on first use, and an AlphaZero
policy imports torch and reads its model. Kaggle times all of that as part of the move that needs it (2 s,
plus a 60 s overage bank for the whole game), and a compilation's length depends on the machine and its load.
[`Background`][connect4_agents.interop.kaggle_loading.Background] runs such work in a daemon thread, and
[`kernel_loader`][connect4_agents.interop.kaggle_loading.kernel_loader] starts the compiled kernels loading,
once per process, in two stages ([`KernelLoad`][connect4_agents.interop.kaggle_loading.KernelLoad]): MCTS's
kernels first (about two fifths of the compilation, and what a cold move's search needs), then the solver's, or
the solver's first for an agent whose policy searches with a network (AlphaZero: MCTS only stands in for it).
[`KaggleAgent`][connect4_agents.interop.kaggle.KaggleAgent] searches in plain Python (bounded by its clock and
node budgets) until a stage is ready, and never calls a compiled kernel before.

While any of them loads, Python switches threads every ``LOADING_SWITCH_INTERVAL`` seconds (0.1 ms) instead of
its 5 ms: a loading thread gives up Python's lock at every file it reads (an import) and a search's thread at
every call into torch, and each then waited up to 5 ms to get it back. The last loading thread to end sets the
interval back (to what it was before the first one started, in this copy of the module or another's).
[`build_policy`][connect4_agents.interop.kaggle_loading.build_policy] keeps a network's policy for the process
([`cached_policy`][connect4_agents.interop.kaggle_loading.cached_policy]): kaggle-environments runs a submission's
file again for every game, and the next game's agent takes it at once instead of reading the model again.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import threading
from collections.abc import Callable
from functools import cache
from typing import Any

from connect4_agents.mcts.agent import MCTSAgent
from connect4_agents.solver.agent import SolverAgent, SolverBudgetExceeded
from connect4_env.compiled import fits_compiled, kernel_geometry
from connect4_env.core import Board
from connect4_env.policy import policy_from_spec
from connect4_env.rules import Rules

__all__ = [
    "Background",
    "KernelLoad",
    "build_policy",
    "cached_policy",
    "calls_a_network",
    "compiled_kernels_possible",
    "kernel_loader",
    "load_kernels",
    "load_mcts_kernels",
    "load_solver_kernels",
    "loading_anywhere",
    "KERNEL_THREAD",
    "LOADING_SWITCH_INTERVAL",
    "POLICY_THREAD",
]

KERNEL_THREAD = "connect4-kaggle-kernels"  # the name of the thread loading the compiled kernels
POLICY_THREAD = "connect4-kaggle-policy"  # the name of a thread building a policy
_LOADING = "connect4_kaggle_loading"  # the attribute marking a loading thread, True while it loads
# the attribute on a loading thread holding the switch interval to set back when the last loading thread ends
_SWITCH_BACK = "connect4_kaggle_switch_back"
LOADING_SWITCH_INTERVAL = 1e-4  # seconds: Python's thread switch interval while anything loads
_DEFAULT_SWITCH_INTERVAL = 0.005  # CPython's own
_SWITCH_LOCK = threading.Lock()
# playouts of the loading search: enough that the reply to its first move is a grandchild in its tree, so the
# second search reuses the tree (the kernel that compacts a subtree is loaded too)
_LOADING_PLAYOUTS = 400


class Background:
    """``work()`` run once in a daemon thread (started at once): its ``result``, or the ``error`` it raised.

    Args:
        name: the thread's name.
        work: what to run; its return value becomes ``result``.
    """

    def __init__(self, name: str, work: Callable[[], Any]) -> None:
        self.result: Any = None
        self.error: BaseException | None = None
        self._work = work
        self._done = threading.Event()
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        with _SWITCH_LOCK:
            setattr(self.thread, _SWITCH_BACK, _switch_interval_to_restore())
            # marked on the thread itself, where another submission's copy of this module sees it too
            setattr(self.thread, _LOADING, True)
            sys.setswitchinterval(LOADING_SWITCH_INTERVAL)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.result = self._work()
        except BaseException as error:  # kept for the caller to report; a thread's own traceback is lost
            self.error = error
        finally:
            with _SWITCH_LOCK:
                setattr(self.thread, _LOADING, False)  # before done: a thread ends a moment after its work
                # the last loading thread sets the interval back, unless someone else changed it meanwhile
                if not loading_anywhere() and _switching_for_loading():
                    sys.setswitchinterval(getattr(self.thread, _SWITCH_BACK))
            self._done.set()

    @property
    def done(self) -> bool:
        """Whether the work has finished (returned or raised)."""
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the work has finished, at most ``timeout`` seconds (None: no limit); returns ``done``."""
        return self._done.wait(None if timeout is None else max(0.0, timeout))


def _switch_interval_to_restore() -> float:
    """The switch interval that was set before any loading thread, ours or another copy's, changed it."""
    for thread in threading.enumerate():
        if getattr(thread, _LOADING, False):
            return float(getattr(thread, _SWITCH_BACK, _DEFAULT_SWITCH_INTERVAL))
    current = sys.getswitchinterval()
    # ours, with no loading thread left to say what it replaced (one ending as this one starts): CPython's own
    return _DEFAULT_SWITCH_INTERVAL if _switching_for_loading() else current


def _switching_for_loading() -> bool:
    """Whether Python's switch interval is the loading one (Python keeps it in whole microseconds)."""
    return abs(sys.getswitchinterval() - LOADING_SWITCH_INTERVAL) < 1e-7


def calls_a_network(policy: Any) -> bool:
    """Whether ``policy`` evaluates positions with a network (AlphaZero): many short calls into torch."""
    return callable(getattr(getattr(policy, "evaluator", None), "evaluate", None))


# the network policies built in this process, by (spec, seed, rules)
_POLICIES: dict[tuple[str, int | None, Rules], Any] = {}


def cached_policy(spec: str, seed: int | None, rules: Rules) -> Any:
    """The network policy [`build_policy`][connect4_agents.interop.kaggle_loading.build_policy] built for these
    arguments in this process, or None (none built yet, or not a network's).
    """
    return _POLICIES.get((spec, seed, rules))


def build_policy(spec: str, seed: int | None, rules: Rules) -> Any:
    """The policy of ``spec`` bound to ``rules``, as [`policy_from_spec`][connect4_env.policy.policy_from_spec]
    builds it; a policy with a network evaluator has evaluated a position once, so that the set-up of a
    first evaluation (torch's) is paid here rather than on a move, and is kept for the process (see
    [`cached_policy`][connect4_agents.interop.kaggle_loading.cached_policy]; a network search keeps nothing
    from one move to the next but its settings, so the agents of later games can share it).

    Raises:
        ValueError: the spec's policy cannot play ``rules`` (a model of another board size), or its own
            errors (a missing or unreadable file).
    """
    key = (spec, seed, rules)
    cached = _POLICIES.get(key)
    if cached is not None:
        return cached
    policy = policy_from_spec(spec, seed=seed, rules=rules)
    if calls_a_network(policy):
        policy.evaluator.evaluate([Board(rules)])
        _POLICIES[key] = policy
    return policy


def load_kernels(rules: Rules) -> None:
    """Compile (or load from numba's disk cache) every compiled kernel that a Kaggle move calls on ``rules``:
    [`load_mcts_kernels`][connect4_agents.interop.kaggle_loading.load_mcts_kernels], then
    [`load_solver_kernels`][connect4_agents.interop.kaggle_loading.load_solver_kernels]. numba compiles a
    kernel once per signature, and the signature depends only on the length of the rules' geometry tuple, so
    this loads the kernels for every board of that length.

    Raises:
        ValueError: the compiled kernels cannot play ``rules`` (numba is not installed, or the board needs
            more than 63 bits).
    """
    load_mcts_kernels(rules)
    load_solver_kernels(rules)


def load_mcts_kernels(rules: Rules) -> None:
    """Compile (or load) the kernels of a Kaggle move's MCTS on ``rules`` (and the rules' kernels they call):
    two searches with the compiled build and a small budget, the second reusing the first one's tree (which
    compacts a subtree).

    Raises:
        ValueError: the compiled kernels cannot play ``rules``.
    """
    board = Board(rules)
    mcts = MCTSAgent(playouts=_LOADING_PLAYOUTS, rules=rules, compiled=True, seed=0)
    column = mcts.search(board).column
    for _ in range(2):  # the reply to the chosen move is in the tree: the next search starts from it
        if not board.is_terminal and board.is_legal(column):
            board.play(column)
    if not board.is_terminal:
        mcts.search(board)


def load_solver_kernels(rules: Rules) -> None:
    """Compile (or load) the kernels of a Kaggle move's solver on ``rules``: its two searches (an exact score
    and a null-window test), each stopped after its first node.

    Raises:
        ValueError: the compiled kernels cannot play ``rules``.
    """
    solver = SolverAgent(rules, book=False, node_budget=1, table_size=1 << 10, compiled=True)
    empty = Board(rules)
    for search in (solver.score, solver.outcomes_board):
        # one node is the budget: the search stops at once, but its kernel ran, so it is loaded
        with contextlib.suppress(SolverBudgetExceeded):
            search(empty)


class KernelLoad(Background):
    """The compiled kernels of ``rules``' signature loading in a daemon thread (started at once): MCTS's
    first, then the solver's (``solver_first``: the other way round); ``mcts_ready`` and ``solver_ready`` are
    set when each stage is loaded, ``done`` when all are (or one stage raised: ``error``, and the later stage
    is not loaded).

    Args:
        rules: a board of the signature to load (its searches reach every kernel).
        solver_first: load the solver's kernels first.
    """

    def __init__(self, rules: Rules, solver_first: bool = False) -> None:
        self.mcts_ready = threading.Event()
        self.solver_ready = threading.Event()
        self.solver_first = solver_first
        stages = [(load_mcts_kernels, self.mcts_ready), (load_solver_kernels, self.solver_ready)]
        if solver_first:
            stages.reverse()

        def work() -> None:
            for load, ready in stages:
                load(rules)
                ready.set()

        super().__init__(KERNEL_THREAD, work)


def loading_anywhere() -> bool:
    """Whether any Kaggle agent of ours is loading something in this process: this one, or another
    submission (its own copy of this module marks its threads the same way).
    """
    return any(getattr(thread, _LOADING, False) for thread in threading.enumerate())


@cache
def _numba_installed() -> bool:
    """Whether numba can be imported, asked without importing it (that takes seconds, for the loader)."""
    try:
        return importlib.util.find_spec("numba") is not None
    except (ImportError, ValueError):  # a finder that refuses it, or a loaded module without a spec
        return False


# the process's loaders, by the length of the geometry tuple (the kernels' signature)
_LOADERS: dict[int, KernelLoad] = {}
_LOADERS_LOCK = threading.Lock()


def compiled_kernels_possible(rules: Rules) -> bool:
    """Whether compiled kernels can play ``rules``: numba is installed and the board fits in 63 bits."""
    return fits_compiled(rules) and _numba_installed()


def kernel_loader(
    rules: Rules, *, start: bool = True, solver_first: bool = False
) -> tuple[KernelLoad | None, bool]:
    """The background load of the compiled kernels for ``rules``, started on the first call in the process
    that asks to ``start`` it (with its stages in the order ``solver_first`` asks; a later call takes the
    load as it was started).

    Returns:
        ``(loader, started)``: the [`KernelLoad`][connect4_agents.interop.kaggle_loading.KernelLoad] loading
        them (its ``error`` set when they failed to load), or None where no compiled kernel can play
        ``rules`` (numba is not installed, or the board needs more than 63 bits; see
        [`compiled_kernels_possible`][connect4_agents.interop.kaggle_loading.compiled_kernels_possible]) or,
        without ``start``, none was started; ``started`` is True when this call started it.
    """
    if not fits_compiled(rules):
        return None, False
    key = len(kernel_geometry(rules))
    loader = _LOADERS.get(key)
    if loader is not None or not start:  # every move asks: the answer, once it is known
        return loader, False
    if not _numba_installed():
        return None, False
    with _LOADERS_LOCK:
        loader = _LOADERS.get(key)
        if loader is not None:
            return loader, False
        # a standard board of the same signature when there is one: its searches reach every kernel
        standard = Rules()
        sample = standard if len(kernel_geometry(standard)) == key else rules
        loader = _LOADERS[key] = KernelLoad(sample, solver_first)
        return loader, True
