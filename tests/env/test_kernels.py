"""The rules kernels (connect4_env.kernels) in both builds against the core and a slow reference.

The compiled build (numba, boards up to 63 bits) and the plain-Python build (any board) must agree with
`connect4_env.rules.Rules`/`connect4_env.core.Board` on every function, on random positions of
many sizes and win lengths; the search kernels' compiled copies must call the compiled rules.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers.extras import importorskip
from helpers.reference import ReferenceGame
from hypothesis import given, settings
from hypothesis import strategies as st

from connect4_env import kernels
from connect4_env.compiled import (
    MAX_COMPILED_BITS,
    KernelBuild,
    compiled_module,
    kernel_geometry,
    kernels_for,
    numba_options,
)
from connect4_env.core import Board
from connect4_env.rules import Rules

BUILDS = [False, None]  # plain Python; numba when installed and the board fits


@st.composite
def random_positions(draw, max_side: int = 8):  # type: ignore[no-untyped-def]
    """A board of random size and win length, after random legal moves, with the reference game beside it."""
    rows = draw(st.integers(1, max_side))
    columns = draw(st.integers(2 if rows == 1 else 1, max_side))
    win_length = draw(st.integers(2, max(rows, columns)))
    board = Board(Rules(rows, columns, win_length))
    reference = ReferenceGame(rows, columns, win_length)
    for _ in range(draw(st.integers(0, board.rules.cells))):
        legal = board.legal_moves()
        if not legal:
            break
        column = draw(st.sampled_from(legal))
        board.play(column)
        reference.play(column)
    return board, reference


def value(build: KernelBuild, bits: int) -> int | np.int64:
    """A bitboard as the build takes it: int64 for numba, a Python int otherwise."""
    return np.int64(bits) if build.compiled else bits


@st.composite
def stones_on_a_board(draw):  # type: ignore[no-untyped-def]
    """Any set of cells (not only reachable positions: several lines, floating stones)."""
    rows = draw(st.integers(1, 8))
    columns = draw(st.integers(2 if rows == 1 else 1, 8))
    rules = Rules(rows, columns, draw(st.integers(2, max(rows, columns))))
    cells = draw(st.lists(st.booleans(), min_size=rules.cells, max_size=rules.cells))
    return rules, sum(rules.cell_bit(i // columns, i % columns) for i, filled in enumerate(cells) if filled)


@pytest.mark.parametrize("compiled", BUILDS)
@settings(max_examples=150, deadline=None)
@given(case=stones_on_a_board())
def test_has_won_matches_the_core_on_any_stones(compiled: bool | None, case: tuple[Rules, int]) -> None:
    rules, stones = case
    build = kernels_for(kernels, rules, compiled)
    assert bool(build.has_won(value(build, stones), build.geometry(rules))) == rules.has_won(stones)
    assert int(build.mirror(value(build, stones), build.geometry(rules))) == rules.mirror(stones)


@pytest.mark.parametrize("compiled", BUILDS)
@settings(max_examples=120, deadline=None)
@given(case=random_positions())
def test_rule_kernels_match_the_core(compiled: bool | None, case: tuple[Board, ReferenceGame]) -> None:
    board, _ = case
    rules = board.rules
    build = kernels_for(kernels, rules, compiled)
    geo = build.geometry(rules)
    mask = board.mask
    for stones in board.stones:
        assert bool(build.has_won(value(build, stones), geo)) == rules.has_won(stones), board
        assert int(build.mirror(value(build, stones), geo)) == rules.mirror(stones), board
        assert int(build.popcount(value(build, stones))) == bin(stones).count("1")
    legal = 0
    for column in range(rules.columns):
        height = board.heights[column]
        expected = rules.stone_bit(column, height) if height < rules.rows else 0
        assert int(build.move_bit(value(build, mask), column, geo)) == expected, (board, column)
        legal |= expected
        column_cells = sum(rules.stone_bit(column, h) for h in range(rules.rows))
        assert int(build.column_bits(column, geo)) == column_cells
    landing = build.legal_bits(
        value(build, mask), value(build, rules.board_mask), value(build, rules.bottom_mask)
    )
    assert int(landing) == legal, board
    current = board.stones[board.to_move]
    assert int(build.position_key(value(build, current), value(build, mask))) == current + mask


@pytest.mark.parametrize("compiled", BUILDS)
@settings(max_examples=80, deadline=None)
@given(case=random_positions(max_side=7))
def test_threat_cells_match_a_cell_by_cell_reference(
    compiled: bool | None, case: tuple[Board, ReferenceGame]
) -> None:
    board, reference = case
    rules = board.rules
    build = kernels_for(kernels, rules, compiled)
    geo = build.geometry(rules)
    for player, stones in enumerate(board.stones):
        if rules.has_won(stones):
            continue  # a line is already there: the reference would count every empty cell
        expected = 0
        for row in range(rules.rows):
            for column in range(rules.columns):
                if reference.grid[row][column] is not None:
                    continue
                # the reference with only this player's stones plus one in the empty cell (gravity ignored)
                alone = ReferenceGame(rules.rows, rules.columns, rules.win_length)
                alone.grid = [[0 if cell == player else None for cell in line] for line in reference.grid]
                alone.grid[row][column] = 0
                if alone.winner() is not None:
                    expected |= rules.cell_bit(row, column)
        found = build.threat_cells(
            value(build, stones), value(build, board.mask), geo, value(build, rules.board_mask)
        )
        assert int(found) == expected, board


def test_threat_cells_are_not_the_cores_winning_cells() -> None:
    # one name, one meaning: the kernel's threats are empty cells, the core's winning cells are stones
    board = Board.from_ascii(
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        X X X . O O .
        """
    )
    rules = board.rules
    threats = kernels.threat_cells(board.stones[0], board.mask, kernel_geometry(rules), rules.board_mask)
    assert threats == rules.cell_bit(5, 3)
    assert rules.winning_cells(board.stones[0]) == 0


def test_geometry_carries_the_rules_shifts() -> None:
    for win_length in (2, 3, 4, 5, 7):
        rules = Rules(7, 8, win_length)
        geometry = kernel_geometry(rules)
        assert geometry[:5] == (7, 8, 8, win_length, 56)
        runs = rules.win_shifts[0]
        assert geometry[5 : 5 + len(runs)] == runs and not any(geometry[5 + len(runs) :])
    # a line far longer than the compiled boards allow: more shifts than the padded length, Python build
    rules = Rules(1, 1000, 600)
    geometry = kernel_geometry(rules)
    assert len(geometry) == 5 + max(kernels.STEPS, len(rules.win_shifts[0]))
    line = (1 << 600) - 1
    for stones, expected in ((line << (2 * 3), True), ((line >> 1) << 2, False)):
        bits = sum(1 << (c * rules.height) for c in range(1000) if stones >> c & 1)
        assert kernels.has_won(bits, geometry) == expected == rules.has_won(bits)


def test_the_build_follows_numba_and_the_board_size() -> None:
    assert kernels_for(kernels, Rules(), compiled=False).module is kernels
    big = Rules(9, 9, 4)  # 90 bits
    assert big.columns * big.height > MAX_COMPILED_BITS
    assert not kernels_for(kernels, big).compiled
    with pytest.raises(ValueError, match="63 bits"):
        kernels_for(kernels, big, compiled=True)
    importorskip("numba")
    build = kernels_for("connect4_env.kernels", Rules())
    assert build.compiled and build.bit_dtype is np.int64
    assert build is kernels_for(kernels, Rules(5, 4, 3))  # one compiled copy per module


def test_search_kernels_call_the_compiled_rules() -> None:
    importorskip("numba")
    rules_copy = compiled_module("connect4_env.kernels")
    for name in ("connect4_agents.mcts.kernels", "connect4_agents.solver.kernels"):
        search = compiled_module(name)
        assert search is not None and rules_copy is not None
        for attribute in (
            "has_won",
            "threat_cells",
            "move_bit",
            "mirror",
            "xorshift32",
            "column_bits",
            "popcount",
        ):
            if hasattr(search, attribute):
                assert getattr(search, attribute) is getattr(rules_copy, attribute), (name, attribute)
    # the plain module still holds the plain functions
    assert kernels.has_won.__module__ == "connect4_env.kernels" and callable(kernels.has_won)


def test_a_module_asks_for_numba_options_and_unknown_ones_are_left_out() -> None:
    importorskip("numba")
    import types

    asking = types.ModuleType("asking")
    asking.NUMBA_OPTIONS = {"nogil": True, "_nrt": False, "an_option_numba_never_had": 1}  # type: ignore[attr-defined]
    assert numba_options(asking) == {"cache": True, "nogil": True, "_nrt": False}
    assert numba_options(kernels) == {"cache": True}  # the rules ask for nothing


def test_a_build_survives_pickling() -> None:
    import pickle

    for compiled in BUILDS:
        build = kernels_for(kernels, Rules(), compiled)
        assert pickle.loads(pickle.dumps(build)) is build


def test_importing_the_env_does_not_load_numba() -> None:
    code = (
        "import sys, connect4_env, connect4_env.batched, connect4_env.envs.vector_env, connect4_env.compiled\n"
        "assert 'numba' not in sys.modules, 'numba loaded at import'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


@pytest.mark.slow  # about 5 s on 2 cores (over 3 s): make test-slow, CI runs it
def test_a_changed_rules_file_is_compiled_afresh_in_its_users(tmp_path: Path) -> None:
    """numba stamps a cached function with its own file only; a kernel module that imports rules from another
    file must not keep the old rules from its cache after that file changed."""
    importorskip("numba")
    (tmp_path / "toy_rules.py").write_text("def answer():\n    return 1\n")
    (tmp_path / "toy_search.py").write_text(
        "from toy_rules import answer\n\n\ndef ask():\n    return answer() + 10\n"
    )
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from connect4_env.compiled import compiled_module\n"
        "print(compiled_module('toy_search').ask())\n"
    )

    def run() -> str:
        command = [sys.executable, "-c", code, str(tmp_path)]
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()

    assert run() == "11"
    assert list((tmp_path / "__pycache__").glob("toy_search.*.nbi"))  # cached
    assert run() == "11"
    (tmp_path / "toy_rules.py").write_text("def answer():\n    return 2\n")
    assert run() == "12"
