"""The exact solver against plain minimax, both kernel builds, budgets, and its policy."""

from __future__ import annotations

import contextlib
import subprocess
import sys

import numpy as np
import pytest
from helpers.commands import HANG_GUARD
from helpers.extras import absent, installed, needs, needs_book
from helpers.reference import ReferenceGame, random_board, reference_scores
from hypothesis import given, settings
from hypothesis import strategies as st

from connect4_agents import make_policy
from connect4_agents.solver.agent import SolverAgent, SolverBudgetExceeded, describe_score
from connect4_agents.solver.book import BOOKLESS_FROM_PLY
from connect4_env import Board, Rules
from connect4_env.encoding import action_mask, observation_planes
from connect4_env.extras import MissingExtraError

SMALL = [(3, 4, 3), (4, 3, 3), (3, 5, 3), (4, 4, 3), (4, 4, 4), (2, 5, 2), (3, 3, 2)]

# compiled=True raises without numba (the fast extra); the Python build is always there
BUILDS = st.booleans() if installed("numba") else st.just(False)

# minimax's scores of the positions below those already asked for, one memo a board size: later examples of a
# size reuse them instead of searching the same positions again
_MINIMAX_MEMOS: dict[tuple[int, int, int], dict] = {}


def minimax_scores(size: tuple[int, int, int], reference: ReferenceGame) -> list[int | None]:
    return reference_scores(reference, _MINIMAX_MEMOS.setdefault(size, {}))


def random_position(
    size: tuple[int, int, int], data: st.DataObject, min_moves: int
) -> tuple[Board, ReferenceGame]:
    board = Board(Rules(*size))
    reference = ReferenceGame(*size)
    for _ in range(data.draw(st.integers(min_moves, board.rules.cells))):
        legal = board.legal_moves()
        if not legal:
            break
        column = data.draw(st.sampled_from(legal))
        board.play(column)
        reference.play(column)
    return board, reference


@settings(max_examples=60, deadline=None)
@given(size=st.sampled_from(SMALL), data=st.data(), compiled=BUILDS)
def test_scores_match_minimax(size: tuple[int, int, int], data: st.DataObject, compiled: bool) -> None:
    board, reference = random_position(size, data, min_moves=2 if size[0] * size[1] > 12 else 0)
    if board.is_terminal:
        return
    solver = SolverAgent(compiled=compiled, table_size=10007)
    assert solver.evaluate_board(board) == minimax_scores(size, reference)


@pytest.mark.parametrize(
    ("size", "expected"), [((4, 4, 4), 0), ((4, 5, 4), 0), ((5, 4, 4), 0), ((3, 5, 3), 7)]
)
def test_small_boards_from_empty(size: tuple[int, int, int], expected: int) -> None:
    # 4x4, 4x5 and 5x4 with four in a row are draws; on 3x5 with three in a row the first player wins with
    # the 9th stone (checked by plain minimax in test_three_by_five_matches_minimax).
    assert SolverAgent().score(Board(Rules(*size))) == expected


@pytest.mark.slow  # over 6 s on 2 cores: make test-slow (CI runs it)
def test_three_by_five_matches_minimax() -> None:
    reference = reference_scores(ReferenceGame(3, 5, 3))
    assert SolverAgent().evaluate_board(Board(Rules(3, 5, 3))) == reference
    assert max(s for s in reference if s is not None) == 7


@needs_book  # early 6x7 positions
def test_policy_wins_fast_blocks_and_loses_slowly() -> None:
    solver = SolverAgent()
    win_now = Board.from_ascii(
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        X O O O . . .
        X X X O X . .
        """
    )
    assert win_now.to_move == 1  # O to move: column 4 completes the row
    scores = solver.evaluate_board(win_now)
    assert scores[4] == win_now.rules.cells - win_now.ply
    assert solver.act(observation_planes(win_now), action_mask(win_now)) == 4

    block = Board.from_moves([3, 0, 3, 0, 3])  # X threatens the vertical four in column 3
    assert solver.act(observation_planes(block), action_mask(block)) == 3

    lost = Board.from_ascii(
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . O O O . . .
        . X X X . . X
        """
    )  # O to move, X threatens both ends of its row: every move loses
    scores = solver.evaluate_board(lost)
    assert all(s is not None and s < 0 for s in scores)
    choice = solver.act(observation_planes(lost), action_mask(lost))
    assert scores[choice] == max(scores)  # the slowest loss
    assert describe_score(scores[choice], lost.rules, lost.ply).startswith("loss in ")


def test_full_columns_are_none_and_dict_observations_work() -> None:
    board = Board.from_moves([0] * 4, Rules(4, 5))
    obs = {"observation": observation_planes(board), "action_mask": action_mask(board)}
    scores = SolverAgent().evaluate(obs)
    assert scores[0] is None and all(s is not None for s in scores[1:])


def test_budget_raises_a_clear_error() -> None:
    with pytest.raises(SolverBudgetExceeded, match="node_budget=100"):
        SolverAgent(node_budget=100).score(Board())
    with pytest.raises(ValueError, match="node_budget"):
        SolverAgent(node_budget=0)


def test_same_seed_same_tie_breaks_and_registry() -> None:
    board = Board(Rules(4, 4, 4))
    planes, mask = observation_planes(board), action_mask(board)
    first = [SolverAgent(seed=3).act(planes, mask) for _ in range(3)]
    assert len(set(first)) == 1
    assert isinstance(make_policy("solver"), SolverAgent)


@settings(max_examples=25, deadline=None)
@given(size=st.sampled_from(SMALL), data=st.data())
def test_a_seeded_agent_draws_uniformly_from_the_best_columns(
    size: tuple[int, int, int], data: st.DataObject
) -> None:
    board, _ = random_position(size, data, min_moves=0)
    if board.is_terminal:
        return
    scores = SolverAgent(table_size=10007).evaluate_board(board)
    ties = [c for c, s in enumerate(scores) if s == max(x for x in scores if x is not None)]
    planes, mask = observation_planes(board), action_mask(board)
    agent = SolverAgent(board.rules, seed=data.draw(st.integers(0, 2**32)), table_size=10007)
    counts = np.bincount(
        [agent.act(planes, mask) for _ in range(60 * len(ties))], minlength=board.rules.columns
    )
    assert set(np.flatnonzero(counts)) == set(ties)  # never a worse column, and every best one
    # each tie 60 times expected: below 25 or above 105 is a binomial tail under 1e-7 for up to 7 ties
    assert all(25 <= counts[c] <= 105 for c in ties) or len(ties) == 1


@needs("fast")  # 6x7 from 24 stones: minutes in the Python build
def test_six_by_seven_midgame_position_is_solved() -> None:
    rng = np.random.default_rng(4)
    board = random_board(rng, 24)
    while board.ply < 24 or board.is_terminal:
        board = random_board(rng, 24)
    solver = SolverAgent(node_budget=20_000_000)
    scores = solver.evaluate_board(board)
    best = max(s for s in scores if s is not None)
    # playing the best column and solving from the opponent's side gives the same value, negated
    column = scores.index(best)
    child = board.copy()
    child.play(column)
    if not child.is_terminal:
        assert -solver.score(child) == best


@needs("fast")  # 6x7 from 14-21 stones: over the Python build's budget
def test_an_aborted_search_leaves_the_kept_table_true() -> None:
    # a budget exceeded mid-search must not leave wrong entries behind for the same agent's later calls
    rng = np.random.default_rng(8)
    boards = []
    while len(boards) < 40:
        board = random_board(rng, int(rng.integers(14, 22)))
        if not board.is_terminal:
            boards.append(board)
    reused = SolverAgent(node_budget=2_000)
    for board in boards:
        with contextlib.suppress(SolverBudgetExceeded):
            reused.score(board)
    reused.node_budget = None
    for board in boards:
        assert reused.score(board) == SolverAgent().score(board), board


def test_the_default_budget_is_build_aware_and_named() -> None:
    solver = SolverAgent()
    assert solver.node_budget == "auto"
    # the default build is the compiled one when numba (the fast extra) is installed
    assert solver.budget_for(Board().rules) == (50_000_000 if installed("numba") else 1_000_000)
    assert SolverAgent(compiled=False).budget_for(Board().rules) == 1_000_000
    assert SolverAgent(node_budget=None).budget_for(Board().rules) is None
    with pytest.raises(SolverBudgetExceeded, match=r"node_budget=1,000 nodes.*node_budget=None"):
        SolverAgent(node_budget=1_000, book=False).score(Board(Rules(6, 5, 4)))
    for bad in (2**70, -5, "lots"):
        with pytest.raises(ValueError, match="node_budget"):
            SolverAgent(node_budget=bad)
    for wrong_type in (1.5, True, [1]):
        with pytest.raises(TypeError, match="node_budget"):
            SolverAgent(node_budget=wrong_type)
    with pytest.raises(TypeError, match="compiled"):
        SolverAgent(compiled="yes")


@pytest.mark.slow
def test_the_default_budget_stops_an_unbookable_search() -> None:
    with pytest.raises(SolverBudgetExceeded, match="50,000,000"):
        SolverAgent(book=False).score(Board())  # hours without the book: stopped after ~20 s


def test_masks_that_contradict_the_board_raise() -> None:
    board = Board.from_moves([3] * 6)  # column 3 is full
    planes = observation_planes(board)
    only_full = np.zeros(7, dtype=np.int8)
    only_full[3] = 1
    solver = SolverAgent()
    with pytest.raises(ValueError, match=r"does not match the position's legal columns \[0, 1, 2, 4, 5, 6\]"):
        solver.act(planes, only_full)
    for width in (6, 8):
        with pytest.raises(ValueError, match="7 columns"):
            solver.act(planes, np.ones(width, dtype=np.int8))


def test_pickles_and_deep_copies_after_a_call() -> None:
    import copy
    import pickle

    solver = SolverAgent(table_size=10007)
    board = Board(Rules(4, 5, 4))
    first = solver.evaluate_board(board)
    for clone in (pickle.loads(pickle.dumps(solver)), copy.deepcopy(solver)):
        assert clone.evaluate_board(board) == first


@pytest.mark.slow  # over 6 s on 2 cores: make test-slow (CI runs it)
@settings(max_examples=30, deadline=None)
@given(size=st.sampled_from(SMALL), data=st.data(), compiled=BUILDS)
def test_outcomes_are_the_signs_of_minimax_scores(
    size: tuple[int, int, int], data: st.DataObject, compiled: bool
) -> None:
    board, reference = random_position(size, data, min_moves=0)
    if board.is_terminal:
        with pytest.raises(ValueError, match="over"):
            SolverAgent(compiled=compiled, table_size=10007).outcomes_board(board)
        return
    expected = [None if s is None else (s > 0) - (s < 0) for s in minimax_scores(size, reference)]
    assert SolverAgent(compiled=compiled, table_size=10007).outcomes_board(board) == expected


@needs("fast")
@needs_book  # 6x7 from 4 stones: the null-window tests reach the book's 12-stone positions
def test_outcomes_on_six_by_seven_agree_with_exact_scores() -> None:
    rng = np.random.default_rng(21)
    solver = SolverAgent()
    for plies in (4, 9, 11, 12, 13, 17, 25):
        board = random_board(rng, plies)
        if board.is_terminal:
            continue
        scores = solver.evaluate_board(board)
        signs = [None if s is None else (s > 0) - (s < 0) for s in scores]
        assert SolverAgent().outcomes_board(board) == signs, board


@settings(max_examples=60, deadline=None)
@given(size=st.sampled_from(SMALL), data=st.data(), every=st.booleans())
def test_best_columns_are_the_columns_with_the_best_score(
    size: tuple[int, int, int], data: st.DataObject, every: bool
) -> None:
    board, _ = random_position(size, data, min_moves=0)
    if board.is_terminal:
        return
    scores = SolverAgent(table_size=10007).evaluate_board(board)
    best = max(s for s in scores if s is not None)
    centre = (board.rules.columns - 1) / 2
    ties = sorted((c for c, s in enumerate(scores) if s == best), key=lambda c: (abs(c - centre), c))
    assert SolverAgent(table_size=10007).best_columns(board, every) == (ties if every else ties[:1])


@needs("fast")
@needs_book  # 6x7 from 8 stones
def test_act_on_six_by_seven_keeps_the_best_score() -> None:
    rng = np.random.default_rng(12)
    for _ in range(8):
        board = random_board(rng, int(rng.integers(8, 20)))
        if board.is_terminal:
            continue
        scores = SolverAgent().evaluate_board(board)
        column = SolverAgent().act(observation_planes(board), action_mask(board))
        assert scores[column] == max(s for s in scores if s is not None), board


@needs("fast")
@needs_book  # one stone past the book: its parents' scores bound the search, and the first test is at the bound
def test_positions_one_stone_past_the_book_score_as_without_it() -> None:
    rng = np.random.default_rng(5)
    with_book, searched = SolverAgent(), SolverAgent(book=False, node_budget=None)
    for game in range(6):
        board = random_board(rng, 12)
        if board.is_terminal:
            continue
        # a best move (the book's bound is then the score) in half the games, any move in the others
        best = with_book.best_columns(board)
        column = best[0] if game % 2 else int(rng.choice(board.legal_moves()))
        board.play(column)
        if board.is_terminal:
            continue
        assert with_book.score(board) == searched.score(board), board


# -- without the opening book ---------------------------------------------------------------------------------
@pytest.fixture
def no_book(monkeypatch: pytest.MonkeyPatch) -> None:
    """An install without the ``book`` extra, whatever this one has."""
    from connect4_agents.solver import agent as solver_agent
    from connect4_agents.solver import book as solver_book

    absent(monkeypatch, "bitbully_databases")
    for module in (solver_agent, solver_book):  # load_book keeps the book once read: its answer is replaced
        monkeypatch.setattr(module, "load_book", lambda: None)


OPENING = Board.from_ascii(
    """
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . O . . .
    . . X X . . .
    """
)  # 3 stones: no search without the book fits the default budget


def test_an_opening_without_the_book_is_refused_before_any_search(no_book: None) -> None:
    """The README's solver example on a core install searched 45 s, then raised SolverBudgetExceeded about
    node_budget: now one MissingExtraError naming the extra and its pip command, before a node is searched."""
    planes, mask = observation_planes(OPENING), action_mask(OPENING)
    calls = [
        lambda s: s.score(OPENING),
        lambda s: s.act(planes, mask),
        lambda s: s.evaluate_board(OPENING),
        lambda s: s.outcomes_board(OPENING),
        lambda s: s.best_columns(OPENING),
        lambda s: s.check_book(Board()),
    ]
    for call in calls:
        solver = SolverAgent()
        with pytest.raises(MissingExtraError) as refused:
            call(solver)
        message = str(refused.value)
        assert "the 'book' extra" in message and 'pip install -e ".[book]"' in message, message
        assert "book=False" in message and solver.last_nodes == 0
    assert isinstance(refused.value, ImportError)  # an `except ImportError` still catches it


def test_only_the_defaults_on_an_early_six_by_seven_position_need_the_book(no_book: None) -> None:
    first = BOOKLESS_FROM_PLY[installed("numba")]
    assert BOOKLESS_FROM_PLY == {True: 8, False: 15}
    rng = np.random.default_rng(3)

    def position(stones: int) -> Board:
        board = random_board(rng, stones)
        while board.ply != stones or board.is_terminal:
            board = random_board(rng, stones)
        return board

    SolverAgent().check_book(
        position(first)
    )  # from BOOKLESS_FROM_PLY stones on, the default budget is enough
    early = position(first - 1)
    with pytest.raises(MissingExtraError, match=f"with {first - 1} stones \\(fewer than {first}"):
        SolverAgent().check_book(early)
    # a choice of one's own searches anyway, until its budget runs out
    for solver in (SolverAgent(book=False), SolverAgent(node_budget=1_000), SolverAgent(node_budget=None)):
        solver.check_book(OPENING)
    with pytest.raises(SolverBudgetExceeded, match="node_budget=1,000"):
        SolverAgent(node_budget=1_000).score(OPENING)
    SolverAgent().check_book(Board(Rules(6, 7, 3)))  # the book is for 6x7 with four in a row only
    SolverAgent().check_book(Board(Rules(5, 6, 4)))
    with pytest.raises(TypeError, match="Board"):
        SolverAgent().check_book("3343")  # type: ignore[arg-type]


def test_a_move_won_at_once_needs_no_book_and_its_view_is_none(no_book: None) -> None:
    board = Board.from_ascii(
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . O O . . .
        . . X X X . O
        """
    )  # X to move wins in column 1 or 5: no search is needed
    solver = SolverAgent()
    assert solver.act(observation_planes(board), action_mask(board)) in (1, 5)
    assert solver.move_info() is None  # every column's score would need the book: no view, no error


def test_play_refuses_a_bookless_solver_before_the_first_move(
    no_book: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """``connect4 play --player0 solver --player1 human --ui terminal`` on a core install sat silent for 103 s,
    then spoke of node_budget; now it stops at once, naming the book extra, whichever seat the solver has."""
    from connect4_agents.commands import main

    expected = (
        "error: the solver on a 6x7 position with 0 stones (fewer than {first}: the opening) needs the opening "
        "book, the 'book' extra (bitbully_databases is not installed): pip install -e \".[book]\""
    )
    # the README's command as a user runs it, in a process without the book
    hide_book = "import sys; sys.modules['bitbully_databases'] = None; "
    dispatch = "from connect4_agents.commands import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", hide_book + dispatch]
        + ["play", "--player0", "solver", "--player1", "human", "--ui", "terminal"],
        input="4\n",
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == "", (done.stdout, done.stderr)
    assert done.stderr.startswith(expected.format(first=BOOKLESS_FROM_PLY[installed("numba")])), done.stderr
    assert len(done.stderr.splitlines()) == 1
    # the solver second, in this process: refused before the person is asked for a move
    assert main(["play", "--player0", "human", "--player1", "solver", "--ui", "terminal"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(expected.format(first=BOOKLESS_FROM_PLY[installed("numba")])), err


# -- the search's pieces --------------------------------------------------------------------------------------
def possible_scores(cells: int, n_stones: int) -> list[int]:
    """Every score a position of ``n_stones`` can have, by the definition: the mover wins with one of its own
    stones (the board's n_stones + 1, + 3, ...), the opponent with one of theirs, or a draw.
    """
    mover = [cells + 1 - w for w in range(n_stones + 1, cells + 1, 2)]
    opponent = [-(cells + 1 - w) for w in range(n_stones + 2, cells + 1, 2)]
    return sorted({0, *mover, *opponent})


@settings(max_examples=300, deadline=None)
@given(cells=st.integers(4, 64), data=st.data())
def test_the_binary_search_steps_over_impossible_scores(cells: int, data: st.DataObject) -> None:
    from connect4_agents.solver import kernels

    n_stones = data.draw(st.integers(0, cells - 2))
    scores = possible_scores(cells, n_stones)
    value = data.draw(st.integers(scores[0], scores[-1]))
    parity = (cells - n_stones) % 2
    assert kernels.score_at_most(value, parity) == max(s for s in scores if s <= value)
    assert kernels.score_at_least(value, parity) == min(s for s in scores if s >= value)


@needs("fast")
def test_the_compiled_search_lets_other_threads_run() -> None:
    # a search of seconds must not stop a server's event loop: the compiled solver releases Python's lock
    from connect4_agents.solver import kernels
    from connect4_env.compiled import kernels_for

    build = kernels_for(kernels, Rules(), compiled=True)
    assert build.compiled
    for name in ("solve", "solve_above", "value_at_most", "negamax"):
        assert getattr(build, name).targetoptions.get("nogil") is True, name
        assert getattr(build, name).targetoptions.get("_nrt") is False, (
            name
        )  # nothing allocated, nothing counted
