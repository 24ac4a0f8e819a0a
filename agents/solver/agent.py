"""An exact Connect Four solver: negamax with alpha-beta, a transposition table and move ordering.

After Pascal Pons' solver, generalised to any board size and ``win_length``: bitboards, null-window searches
narrowing on the score, centre-first ordering refined by the number of threats a move creates, and pruning of
moves that hand the opponent an immediate win. Compiled by numba when the board fits in 63 bits.

Scores are from the view of the player to move: a win whose winning stone is the board's ``w``-th scores
``cells + 1 - w`` (so quicker wins score higher), a loss the negative of the opponent's win, a draw 0.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from connect4_agents.base import RulesBound, check_search_settings
from connect4_agents.solver import kernels as solver_kernels
from connect4_agents.solver.book import BOOK_PLY, BOOK_RULES, load_book, require_book
from connect4_env.compiled import KernelBuild, kernels_for
from connect4_env.core import Board, check_board
from connect4_env.extras import MissingExtraError
from connect4_env.rules import Rules
from connect4_env.validation import check_bool, check_choice, check_int, seeded_rng

__all__ = [
    "SolverAgent",
    "SolverBudgetExceeded",
    "describe_score",
    "plies_to_end",
    "DEFAULT_NODE_BUDGET",
    "MAX_TABLE_SIZE",
]

# the "auto" node budget per call: about 20-25 s with the compiled kernels here, about 30 s in plain Python
DEFAULT_NODE_BUDGET = {True: 50_000_000, False: 1_000_000}
_MAX_NODE_BUDGET = 1 << 62  # the kernel counts nodes in int64
MAX_TABLE_SIZE = 1 << 27  # transposition-table entries: 16 bytes each, 2 GiB at most


_NO_BOOK_KEYS = np.zeros(0, dtype=np.int32)
_NO_BOOK_SCORES = np.zeros(0, dtype=np.int8)
_BOOK_MISSING = "book=True needs the opening book: pip install -e '.[book]' (the bitbully-databases package)"


class SolverBudgetExceeded(RuntimeError):
    """The position needs more nodes than ``node_budget`` allows (the agent stays usable: nothing it keeps
    was changed by the aborted search). The commands report it in one line (exit code 2), not a traceback.
    """

    reported_in_one_line = True


def _prime_at_least(n: int) -> int:
    def is_prime(k: int) -> bool:
        if k < 2:
            return False
        i = 2
        while i * i <= k:
            if k % i == 0:
                return False
            i += 1
        return True

    while not is_prime(n):
        n += 1
    return n


def plies_to_end(score: int, n_stones: int, cells: int) -> int:
    """Plies left after ``n_stones`` until the game ends under perfect play, for the position's ``score``: up to
    the winning stone, or to a full board for a draw.
    """
    return cells - n_stones if score == 0 else cells + 1 - abs(score) - n_stones


def describe_score(score: int | None, rules: Rules, n_stones: int) -> str:
    """A score in words: ``"win in 5 plies"``, ``"draw"``, ``"loss in 4 plies"``, ``"full"``."""
    if score is None:
        return "full"
    if score == 0:
        return "draw"
    return f"{'win' if score > 0 else 'loss'} in {plies_to_end(score, n_stones, rules.cells)} plies"


class SolverAgent(RulesBound):
    """Plays perfectly: the quickest win, else a draw, else the slowest loss.

    Args:
        rules: the game (observations do not carry ``win_length``). None (default): the bound rules'
            (``bind(rules)``, which every env, the arena and the commands call), else 6x7 with 4 in a row.
        seed: ``act`` then draws uniformly from the equally good columns (None: the most central one). The
            envs reseed their opponent at every ``reset``, so ``opponent="solver"`` varies its play.
        node_budget: the most nodes one call may search of ``score``/``evaluate``/``act``. ``"auto"`` (default): 50 million
            nodes with the compiled kernels (about 20 s here), 1 million in plain Python (about 30 s); None:
            unlimited; or an int. Past it,
            [`SolverBudgetExceeded`][connect4_agents.solver.agent.SolverBudgetExceeded], which names the
            budget.
        table_size: transposition-table entries (rounded up to a prime), at most ``MAX_TABLE_SIZE`` (2**27,
            2 GiB). Default about 4 million (67 MB);
            the table is kept between calls, so later positions of a game are faster.
        book: the 6x7 opening book (`connect4_agents.solver.book`, the ``book`` extra) for positions with up
            to 12 stones. None (default): used when installed; True: required (ValueError without it); False:
            never. Other board sizes never use it.
        compiled: as for [`connect4_agents.MCTSAgent`][connect4_agents.mcts.agent.MCTSAgent].

    With the book, every 6x7 position (the empty board included) is answered in well under a second. Without
    it, the defaults refuse a 6x7 opening at once (see `check_book`); `book=False` or a node budget of your own
    searches it anyway, until the budget runs out.

    Raises:
        TypeError: a setting of the wrong type.
        ValueError: a setting out of range.
    """

    name = "solver"

    def __init__(
        self,
        rules: Rules | None = None,
        *,
        seed: int | None = None,
        node_budget: int | None | Literal["auto"] = "auto",
        table_size: int = 1 << 22,
        book: bool | None = None,
        compiled: bool | None = None,
    ) -> None:
        if isinstance(node_budget, str):
            check_choice("node_budget", node_budget, ("auto",))
        elif node_budget is not None:
            node_budget = check_int("node_budget", node_budget, 1, _MAX_NODE_BUDGET)
        table_size = check_int("table_size", table_size, 1, MAX_TABLE_SIZE)
        check_search_settings(rules, compiled)
        if book is not None:
            check_bool("book", book)
        if book and load_book() is None:
            raise ValueError(_BOOK_MISSING)
        self._fixed_rules = rules
        self.rules: Rules | None = rules
        self.node_budget = node_budget if node_budget in (None, "auto") else int(node_budget)
        self.table_size = int(table_size)
        self.book = book
        self.compiled = compiled
        self.rng = seeded_rng(seed) if seed is not None else None
        self.last_nodes = 0
        self._last_move: tuple[Board, int, dict[str, Any] | None] | None = None
        self._tables: dict[
            tuple[Rules, bool], tuple[KernelBuild, tuple[int, ...], tuple[np.ndarray, ...]]
        ] = {}

    def reset(self, seed: int | None = None) -> None:
        """Reseed the tie-breaking (the transposition table is kept: its entries stay true)."""
        rng = seeded_rng(seed) if seed is not None else self.rng  # a bad seed changes nothing
        self._last_move = None
        self.rng = rng

    def __getstate__(self) -> dict[str, Any]:
        # the tables hold a kernel module (not picklable) and tens of MB: a copy starts with empty ones
        state = self.__dict__.copy()
        state["_tables"] = {}
        return state

    def __repr__(self) -> str:
        return "SolverAgent()"

    def budget_for(self, rules: Rules) -> int | None:
        """The node budget of one call on ``rules`` (None: unlimited), with ``"auto"`` resolved."""
        if self.node_budget == "auto":
            return DEFAULT_NODE_BUDGET[kernels_for(solver_kernels, rules, self.compiled).compiled]
        return self.node_budget

    def _kernel(self, rules: Rules) -> tuple[KernelBuild, tuple[int, ...], tuple[np.ndarray, ...]]:
        """The kernel build for ``rules``, its geometry tuple and the kept arrays (order, table, buffers),
        made on first use: every search calls this, so nothing here is recomputed per call.
        """
        build = kernels_for(solver_kernels, rules, self.compiled)
        key = (rules, build.compiled)
        if key not in self._tables:
            size = _prime_at_least(self.table_size if build.compiled else min(self.table_size, 1 << 16))
            # one row a slot: the key, then the packed entry (0: empty); object dtype (Python ints) when plain
            table = np.zeros((size, 2), dtype=build.bit_dtype)
            centre = rules.columns // 2
            order = np.array(
                sorted(
                    range(rules.columns), key=lambda c: (abs(c - centre), -c if rules.columns % 2 == 0 else c)
                ),
                dtype=np.int64,
            )
            buffers = (
                np.zeros((rules.cells + 1, rules.columns), dtype=np.int64),
                np.zeros((rules.cells + 1, rules.columns), dtype=np.int64),
            )
            self._tables[key] = (build, build.geometry(rules), (order, table, *buffers))
        return self._tables[key]

    def check_book(self, board: Board) -> None:
        """Refuse, before any search, a 6x7 opening that this solver cannot answer without the opening book:
        with the defaults `book=None` and `node_budget="auto"`, see `connect4_agents.solver.book.require_book`
        (fewer than 8 stones with the compiled kernels, 15 in plain Python). Every search calls it first.

        Raises:
            TypeError: `board` is not a `Board`.
            MissingExtraError: the position needs the `book` extra, which is not installed.
        """
        rules = check_board(board).rules
        if self.book is None and self.node_budget == "auto" and rules == BOOK_RULES:
            require_book(board, kernels_for(solver_kernels, rules, self.compiled).compiled)

    def _book_arrays(self, rules: Rules, n_stones: int) -> tuple[np.ndarray, np.ndarray, int]:
        if self.book is not False and rules == BOOK_RULES and n_stones <= BOOK_PLY + 1:
            book = load_book()
            if book is not None:
                return book.keys, book.scores, BOOK_PLY
        return _NO_BOOK_KEYS, _NO_BOOK_SCORES, -1

    # -- solving -------------------------------------------------------------------------------------------
    def score(self, board: Board) -> int:
        """The exact score of ``board`` for the player to move (see the module docstring).

        Raises:
            ValueError: the game is over. SolverBudgetExceeded: more than ``node_budget`` nodes were needed.
            MissingExtraError: an early 6x7 position without the opening book (see `check_book`).
        """
        if check_board(board).is_terminal:
            raise ValueError("the game is over: there is nothing to solve")
        stats = self._stats(board.rules)
        self.check_book(board)
        return self._solve(board, board.stones[board.to_move], board.mask, board.ply, stats)

    def _stats(self, rules: Rules) -> np.ndarray:
        return np.array([0, self.budget_for(rules) or 0, 0], dtype=np.int64)

    def _solve(self, board: Board, current: int, mask: int, n_stones: int, stats: np.ndarray) -> int:
        return int(self._run("solve", board, stats, current, mask, n_stones))

    def _run(
        self,
        kernel: str,
        board: Board,
        stats: np.ndarray,
        current: int,
        mask: int,
        n_stones: int,
        *more: Any,
    ) -> Any:
        """Call the search kernel ``kernel`` (``solve``, ``solve_above``, ``score_moves`` or ``value_at_most``)
        with the kept tables; ``more``: its arguments between the position and the context (a bound, an array to
        fill). The caller has passed ``board`` (the position asked about) through `check_book`, once per public
        call.
        """
        rules = board.rules
        build, geometry, (order, table, moves, scores) = self._kernel(rules)
        context = solver_kernels.make_context(
            geometry,
            rules.board_mask,
            rules.bottom_mask,
            order,
            table,
            stats,
            moves,
            scores,
            *self._book_arrays(rules, n_stones),
        )
        result = getattr(build, kernel)(current, mask, n_stones, *more, context)
        self.last_nodes = int(stats[0])
        if stats[2]:
            book_hint = (
                ", or use the 6x7 opening book (book=None, with pip install -e '.[book]')"
                if rules == BOOK_RULES
                and board.ply < BOOK_PLY
                and (self.book is False or load_book() is None)
                else ""
            )
            raise SolverBudgetExceeded(
                f"the position needs more than node_budget={stats[1]:,} nodes ({board.ply} stones on a "
                f"{rules.rows}x{rules.columns} board, win_length {rules.win_length}); pass a larger "
                f"node_budget, or node_budget=None for no limit{book_hint}"
            )
        return result

    def evaluate_board(self, board: Board) -> list[int | None]:
        """One score per column for the player to move (None for a full column); one node budget for all.

        One kernel call (`connect4_agents.solver.kernels.score_moves`): the position's own score first, which no
        move exceeds, so each move's exact score is searched knowing that bound.

        Raises:
            ValueError: the game is over. SolverBudgetExceeded: more than ``node_budget`` nodes were needed.
            MissingExtraError: an early 6x7 position without the opening book (see `check_book`).
        """
        if check_board(board).is_terminal:
            raise ValueError("the game is over: there is nothing to evaluate")
        legal = board.legal_moves()
        if board.ply + 1 < board.rules.cells and len(board.winning_moves()) < len(legal):
            self.check_book(board)  # some move needs a search
        scores = np.zeros(board.rules.columns, dtype=np.int64)
        stats = self._stats(board.rules)
        self._run("score_moves", board, stats, board.stones[board.to_move], board.mask, board.ply, scores)
        return [int(scores[column]) if column in legal else None for column in range(board.rules.columns)]

    def outcomes_board(self, board: Board) -> list[int | None]:
        """One outcome per column for the player to move: 1 the move wins, 0 draws, -1 loses (under perfect
        play from then on), None for a full column; one node budget for all.

        The sign of [`evaluate_board`][connect4_agents.solver.agent.SolverAgent.evaluate_board]'s scores
        without their distances, found by at most two null-window tests per column (is the opponent's score
        after the move at most 0? at most -1?) instead of an exact score's binary search: several times
        cheaper, and all that a win/draw/loss label needs.

        Raises:
            ValueError: the game is over. SolverBudgetExceeded: more than ``node_budget`` nodes were needed.
            MissingExtraError: an early 6x7 position without the opening book (see `check_book`).
        """
        if check_board(board).is_terminal:
            raise ValueError("the game is over: there is nothing to evaluate")
        rules = board.rules
        current, mask = board.stones[board.to_move], board.mask
        stats = self._stats(rules)
        checked = False  # check_book before the first search only (a move that ends the game needs none)
        result: list[int | None] = []
        for column in range(rules.columns):
            if not board.is_legal(column):
                result.append(None)
                continue
            bit = rules.stone_bit(column, board.heights[column])
            if rules.has_won(current | bit):
                result.append(1)
            elif board.ply + 1 == rules.cells:
                result.append(0)
            else:
                if not checked:
                    self.check_book(board)
                    checked = True
                after = (current ^ mask, mask | bit, board.ply + 1)
                if not self._run("value_at_most", board, stats, *after, 0):
                    result.append(-1)  # the opponent's score after the move is above 0: it wins
                else:
                    result.append(1 if self._run("value_at_most", board, stats, *after, -1) else 0)
        return result

    def evaluate(self, observation: Any, action_mask: Any = None) -> list[int | None]:
        """One score per column from the mover's view: positive win, 0 draw, negative loss, None full.

        Larger is better: ``cells + 1 - w`` for a win completed by the board's ``w``-th stone. The mask is
        optional here (it is checked against the position when given).
        """
        board, _ = self.read_board(observation, action_mask, mask_required=False)
        return self.evaluate_board(board)

    def act(self, observation: Any, action_mask: Any = None) -> int:
        """The best column (see the class docstring).

        Raises:
            ValueError: the mask disagrees with the position or its length is not the board's width.
            SolverBudgetExceeded: the position needs more than ``node_budget`` nodes.
            MissingExtraError: an early 6x7 position without the opening book (see `check_book`).
        """
        board, legal = self.read_board(observation, action_mask)
        if self.rng is None:
            column = self.best_columns(board, every=False)[0]
        else:
            # the first best column in a random order is drawn uniformly from the best ones, and the columns
            # after it need no test (they were all tested before: several times slower against a random player)
            order = [int(c) for c in self.rng.permutation(self._central_order(board))]
            column = self._best_columns(board, order, every=False)[0]
        self._last_move = (board, column, None)
        return column

    def move_info(self) -> dict[str, Any] | None:
        """The last move's numbers as plain JSON: ``kind`` "solver", the ``column`` played and ``scores``, the
        exact score of every column
        ([`evaluate_board`][connect4_agents.solver.agent.SolverAgent.evaluate_board]; None for a full column).
        Computed on the first call after a move (moves are chosen more cheaply), within the node budget; None
        before any move, when the budget runs out, or where the position needs the missing opening book. Game
        records and the play window read this.
        """
        if self._last_move is None:
            return None
        board, column, info = self._last_move
        if info is None:
            try:
                scores = self.evaluate_board(board)
            except (SolverBudgetExceeded, MissingExtraError):
                return None
            info = {"kind": "solver", "column": column, "scores": scores}
            self._last_move = (board, column, info)
        return dict(info)

    def best_columns(self, board: Board, every: bool = True) -> list[int]:
        """The columns with the best score, most central first (``every=False``: the most central only).

        Cheaper than [`evaluate_board`][connect4_agents.solver.agent.SolverAgent.evaluate_board]: the
        position's score (a book lookup at 12 stones on 6x7), then one null-window test per column ("does this
        move keep that score?") instead of an exact score each.

        Raises:
            ValueError: the game is over. SolverBudgetExceeded: more than ``node_budget`` nodes were needed.
            MissingExtraError: an early 6x7 position without the opening book (see `check_book`).
        """
        if check_board(board).is_terminal:
            raise ValueError("the game is over: there is nothing to choose")
        return self._best_columns(board, self._central_order(board), check_bool("every", every))

    @staticmethod
    def _central_order(board: Board) -> list[int]:
        """The legal columns, most central first (the left one of two equally central)."""
        centre = (board.rules.columns - 1) / 2
        return sorted(board.legal_moves(), key=lambda c: (abs(c - centre), c))

    def _best_columns(self, board: Board, legal: list[int], every: bool) -> list[int]:
        """[`best_columns`][connect4_agents.solver.agent.SolverAgent.best_columns] over the ``legal`` columns
        in the order given (the game is not over).
        """
        rules = board.rules
        current, mask = board.stones[board.to_move], board.mask
        winning = set(board.winning_moves())
        wins = [c for c in legal if c in winning]
        if wins:
            return wins if every else wins[:1]
        stats = self._stats(rules)
        self.check_book(board)
        best = self._solve(board, current, mask, board.ply, stats)
        found = []
        for column in legal:
            bit = rules.stone_bit(column, board.heights[column])
            # the move keeps ``best`` iff the opponent's score after it is at most -best (never below it)
            if board.ply + 1 == rules.cells or self._run(
                "value_at_most", board, stats, current ^ mask, mask | bit, board.ply + 1, -best
            ):
                found.append(column)
                if not every:
                    break
        return found
