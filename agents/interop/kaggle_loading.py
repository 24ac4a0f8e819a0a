"""What a Kaggle agent loads off its move path, in daemon threads (env side: Kaggle's connectx).

On a machine that has never run them, the compiled kernels (numba) compile on first use, and an AlphaZero
policy imports torch and reads its model. Kaggle times all of that as part of the move that needs it (2 s,
plus a 60 s overage bank for the whole game), and a compilation's length depends on the machine and its load.
[`Background`][connect4_agents.interop.kaggle_loading.Background] runs such work in a daemon thread, and
[`kernel_loader`][connect4_agents.interop.kaggle_loading.kernel_loader] starts the compiled kernels loading,
once per process, in two stages ([`KernelLoad`][connect4_agents.interop.kaggle_loading.KernelLoad]): MCTS's
kernels first (about two fifths of the compilation, and what a cold move's search needs), then the solver's.
[`KaggleAgent`][connect4_agents.interop.kaggle.KaggleAgent] searches in plain Python (bounded by its clock and
node budgets) until a stage is ready, and never calls a compiled kernel before.
"""

from __future__ import annotations

import contextlib
import importlib.util
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
    "kernel_loader",
    "load_kernels",
    "load_mcts_kernels",
    "load_solver_kernels",
    "loading_anywhere",
    "KERNEL_THREAD",
    "POLICY_THREAD",
]

KERNEL_THREAD = "connect4-kaggle-kernels"  # the name of the thread loading the compiled kernels
POLICY_THREAD = "connect4-kaggle-policy"  # the name of a thread building a policy
_LOADING = "connect4_kaggle_loading"  # the attribute marking a loading thread, True while it loads
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
        # marked on the thread itself, where another submission's copy of this module sees it too
        setattr(self.thread, _LOADING, True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.result = self._work()
        except BaseException as error:  # kept for the caller to report; a thread's own traceback is lost
            self.error = error
        finally:
            setattr(self.thread, _LOADING, False)  # before done: a thread ends a moment after its work
            self._done.set()

    @property
    def done(self) -> bool:
        """Whether the work has finished (returned or raised)."""
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the work has finished, at most ``timeout`` seconds (None: no limit); returns ``done``."""
        return self._done.wait(None if timeout is None else max(0.0, timeout))


def build_policy(spec: str, seed: int | None, rules: Rules) -> Any:
    """The policy of ``spec`` bound to ``rules``, as [`policy_from_spec`][connect4_env.policy.policy_from_spec]
    builds it; a policy with a network evaluator has evaluated a position once, so that the set-up of a
    first evaluation (torch's) is paid here rather than on a move.

    Raises:
        ValueError: the spec's policy cannot play ``rules`` (a model of another board size), or its own
            errors (a missing or unreadable file).
    """
    policy = policy_from_spec(spec, seed=seed, rules=rules)
    evaluate = getattr(getattr(policy, "evaluator", None), "evaluate", None)
    if callable(evaluate):
        evaluate([Board(rules)])
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
    first, then the solver's; ``mcts_ready`` is set when MCTS's are loaded, ``done`` when all are (or one
    stage raised: ``error``).

    Args:
        rules: a board of the signature to load (its searches reach every kernel).
    """

    def __init__(self, rules: Rules) -> None:
        self.mcts_ready = threading.Event()

        def work() -> None:
            load_mcts_kernels(rules)
            self.mcts_ready.set()
            load_solver_kernels(rules)

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


def kernel_loader(rules: Rules) -> tuple[KernelLoad | None, bool]:
    """The background load of the compiled kernels for ``rules``, started on the first call in the process.

    Returns:
        ``(loader, started)``: the [`KernelLoad`][connect4_agents.interop.kaggle_loading.KernelLoad] loading
        them (its ``error`` set when they failed to load), or None where no compiled kernel can play
        ``rules`` (numba is not installed, or the board needs more than 63 bits); ``started`` is True when
        this call started it.
    """
    if not fits_compiled(rules):
        return None, False
    key = len(kernel_geometry(rules))
    loader = _LOADERS.get(key)
    if loader is not None:  # every move asks: the answer, once it is known
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
        loader = _LOADERS[key] = KernelLoad(sample)
        return loader, True
