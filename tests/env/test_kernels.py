"""The search kernels read their geometry and win shifts from Rules: has_won agrees with the core everywhere."""

from __future__ import annotations

import numpy as np
import pytest
from connect4_agents._compiled import PYTHON, kernel_geometry, kernels_for
from hypothesis import given, settings
from hypothesis import strategies as st

from connect4_env.core import Rules


@st.composite
def stones_on_a_board(draw):  # type: ignore[no-untyped-def]
    rows = draw(st.integers(1, 8))
    columns = draw(st.integers(2 if rows == 1 else 1, 8))
    win_length = draw(st.integers(2, max(rows, columns)))
    rules = Rules(rows, columns, win_length)
    cells = draw(st.lists(st.booleans(), min_size=rules.cells, max_size=rules.cells))
    stones = 0
    for index, filled in enumerate(cells):
        if filled:
            stones |= rules.cell_bit(index // columns, index % columns)
    return rules, stones


@pytest.mark.parametrize("compiled", [False, None])
@settings(max_examples=150, deadline=None)
@given(case=stones_on_a_board())
def test_kernel_has_won_matches_the_core(compiled: bool | None, case: tuple[Rules, int]) -> None:
    rules, stones = case
    build = kernels_for(rules, compiled=compiled)
    value = np.int64(stones) if build.compiled else stones
    assert bool(build.has_won(value, build.geometry(rules))) == rules.has_won(stones)


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
    assert len(geometry) == 5 + max(8, len(rules.win_shifts[0]))
    line = (1 << 600) - 1
    for stones, expected in ((line << (2 * 3), True), ((line >> 1) << 2, False)):
        bits = sum(1 << (c * rules.height) for c in range(1000) if stones >> c & 1)
        assert PYTHON.has_won(bits, geometry) == expected == rules.has_won(bits)
