"""The 6x7 opening book: its reader, its values against our own search, and perfect play from the empty board."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.extras import needs_book
from helpers.reference import random_board

from connect4_agents.solver.agent import SolverAgent
from connect4_agents.solver.book import BOOK_PLY, OpeningBook, load_book
from connect4_env import Board
from connect4_env.encoding import action_mask, observation_planes

book = load_book()  # None without the book extra: the tests that read it are marked needs_book


def book_positions(n: int, seed: int) -> list[Board]:
    """Random 12-stone positions the book answers (not finished, no win in one for the player to move)."""
    rng = np.random.default_rng(seed)
    found: list[Board] = []
    while len(found) < n:
        board = random_board(rng, BOOK_PLY)
        if board.ply == BOOK_PLY and not board.is_terminal and book.score(board) is not None:
            found.append(board)
    return found


@needs_book
def test_book_values_match_our_own_search() -> None:
    searcher = SolverAgent(book=False)
    for board in book_positions(6, seed=1):
        assert book.score(board) == searcher.score(board), board


@pytest.mark.slow
@needs_book
def test_book_values_match_our_own_search_on_more_positions() -> None:
    searcher = SolverAgent(book=False)
    for board in book_positions(40, seed=2):
        assert book.score(board) == searcher.score(board), board


@needs_book
def test_known_values_and_mirror_images() -> None:
    # the book package's documented examples: 71 = the first player wins 29 plies later (the 41st stone)
    example = Board.from_ascii(
        """
        . . . . . . .
        . . . X . . .
        . X . O . . .
        . O . X . O .
        . X . O . X .
        . O . X . O .
        """
    )
    assert book.score(example) == example.rules.cells + 1 - 41
    mirrored = Board.from_ascii("\n".join(line[::-1] for line in example.to_ascii(False).splitlines()))
    assert book.score(mirrored) == book.score(example)
    with pytest.raises(ValueError, match="12-stone"):
        book.score(Board())


@needs_book
def test_empty_board_and_openings_are_answered_exactly() -> None:
    # Allis / Tromp: the centre wins with the 41st stone, the neighbours draw, the rest lose
    solver = SolverAgent()
    assert solver.evaluate_board(Board()) == [-3, -1, 0, 2, 0, -1, -3]
    assert solver.evaluate_board(Board.from_moves([3])) == [-8, -4, -4, -2, -4, -4, -8]


@needs_book
def test_perfect_play_from_the_empty_board_wins_with_the_41st_stone() -> None:
    first, second = SolverAgent(), SolverAgent()
    board = Board()
    while not board.is_terminal:
        player = first if board.to_move == 0 else second
        board.play(player.act(observation_planes(board), action_mask(board)))
    assert board.winner == 0 and board.ply == 41


@needs_book
def test_a_damaged_book_file_is_refused(tmp_path) -> None:
    source = np.fromfile(book.source, dtype=np.uint8, count=5 * 1000)
    cut = tmp_path / "cut.dat"
    source[:4999].tofile(cut)
    with pytest.raises(ValueError, match="5-byte records"):
        OpeningBook.from_file(cut)
    shuffled = tmp_path / "unsorted.dat"
    source.reshape(-1, 5)[::-1].tofile(shuffled)
    with pytest.raises(ValueError, match="not sorted"):
        OpeningBook.from_file(shuffled)
    empty = tmp_path / "empty.dat"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="not an opening book"):
        OpeningBook.from_file(empty)


def test_without_the_book_the_solver_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import connect4_agents.solver.agent
    import connect4_agents.solver.book

    for module in (connect4_agents.solver.agent, connect4_agents.solver.book):
        monkeypatch.setattr(module, "load_book", lambda: None)
    with pytest.raises(ValueError, match=r"pip install -e .\.\[book\]"):
        SolverAgent(book=True)
    with pytest.raises(
        connect4_agents.solver.agent.SolverBudgetExceeded, match=r"pip install -e .\.\[book\]"
    ):
        SolverAgent(node_budget=10_000).score(Board.from_moves([3, 3]))
    # with the default budget the opening is refused before any search
    with pytest.raises(ImportError, match=r"the 'book' extra .*pip install -e .\.\[book\]"):
        SolverAgent().score(Board.from_moves([3, 3]))
