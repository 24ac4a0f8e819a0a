"""The solver inside a Kaggle move: node budgets and the endgames it proves (env side: Kaggle's connectx).

A node budget is the same on any machine, so a solver search stays bounded however busy the machine is; its size
comes from the solver's node rate (compiled or plain Python) and the share of the move's time it gets.
[`KaggleAgent`][connect4_agents.interop.kaggle.KaggleAgent] gives the solver policy half of its move, and, before
any other policy moves, lets [`EndgameSolver`][connect4_agents.interop.kaggle_endgame.EndgameSolver] play the
positions it proves within a fifth of the move.
"""

from __future__ import annotations

from connect4_agents.solver import kernels as solver_kernels
from connect4_agents.solver.agent import DEFAULT_NODE_BUDGET, SolverAgent, SolverBudgetExceeded
from connect4_env.compiled import MAX_COMPILED_BITS, kernels_for
from connect4_env.core import Board
from connect4_env.rules import Rules

__all__ = ["EndgameSolver", "endgame_node_budget", "node_budget", "solver_compiled", "ENDGAME_MAX_EMPTY"]

MIN_NODES = 1000  # the least node budget any solver search is given (half a millisecond compiled)
ENDGAME_SHARE = 0.2  # of the move's time, the endgame solver's before any other policy moves
ENDGAME_MAX_EMPTY = 36
"""Above this many empty cells the endgame solver gets only its least budget (`MIN_NODES`), enough for the
shallow tactics it can still prove, instead of a fifth of the move that it would spend in vain on 6x7 (see the
design notes)."""
# nodes a second of the solver: DEFAULT_NODE_BUDGET is about 25 s of search, compiled or in plain Python
_SOLVER_RATE = {compiled: budget / 25 for compiled, budget in DEFAULT_NODE_BUDGET.items()}


def node_budget(seconds: float, compiled: bool, share: float) -> int:
    """The nodes the solver searches in ``share`` of ``seconds`` (at least 1,000)."""
    return max(MIN_NODES, int(_SOLVER_RATE[compiled] * seconds * share))


def solver_compiled(solver: SolverAgent, rules: Rules) -> bool:
    """Whether ``solver`` runs the compiled kernels on ``rules``."""
    return kernels_for(solver_kernels, rules, solver.compiled).compiled


def endgame_node_budget(seconds: float, compiled: bool = True) -> int:
    """The nodes the endgame solver may search in a move of ``seconds`` (a fifth of it; at least 1,000)."""
    return node_budget(seconds, compiled, ENDGAME_SHARE)


class EndgameSolver:
    """The exact solver playing the endgames it proves within a fifth of a move, one solver (and its
    transposition table) per board.

    Attributes:
        solvers: the solver of each board it was asked about.
    """

    def __init__(self) -> None:
        self.solvers: dict[Rules, SolverAgent] = {}

    def column(self, board: Board, seconds: float, compiled: bool | None, shared: bool = False) -> int | None:
        """The solver's column when it proves ``board`` within a fifth of a move of ``seconds`` (the quickest
        win, else a draw, else the slowest loss), searching with the ``compiled`` build (None: compiled where
        it can); None when it would need more, or on a board past the compiled solver's 63 bits (there the
        plain-Python solver's nodes cost more, the more columns, than the rate its node budget assumes). With more than [`ENDGAME_MAX_EMPTY`][connect4_agents.interop.kaggle_endgame.ENDGAME_MAX_EMPTY]
        empty cells it gets only 1,000 nodes, which prove shallow tactics alone, rather than a share it would
        spend in vain; so does a plain-Python search while Python is ``shared`` with loading threads, which
        slow its nodes by a factor nobody knows in advance (a compiled search keeps Python to itself).
        """
        rules = board.rules
        if rules.columns * rules.height > MAX_COMPILED_BITS:
            return None
        solver = self.solvers.get(rules)
        if solver is None:  # searched, never looked up: the same play with or without the book extra
            solver = self.solvers[rules] = SolverAgent(rules, book=False, table_size=1 << 20)
        solver.compiled = compiled
        fast = solver_compiled(solver, rules)
        if rules.cells - board.ply > ENDGAME_MAX_EMPTY or (shared and not fast):  # only shallow tactics
            solver.node_budget = MIN_NODES
        else:
            solver.node_budget = endgame_node_budget(seconds, fast)
        try:
            return int(solver.best_columns(board, every=False)[0])
        except SolverBudgetExceeded:
            return None
