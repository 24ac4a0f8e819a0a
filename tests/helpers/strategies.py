"""Hypothesis strategies shared by the test modules."""

from __future__ import annotations

from hypothesis import strategies as st


@st.composite
def board_sizes(draw: st.DrawFn) -> tuple[int, int, int]:
    """Boards from 1x2 to 7x9 with every win_length 2..6 that fits (a 1x1 board fits none)."""
    rows = draw(st.integers(1, 7))
    columns = draw(st.integers(2 if rows == 1 else 1, 9))
    win_length = draw(st.integers(2, min(6, max(rows, columns))))
    return rows, columns, win_length
