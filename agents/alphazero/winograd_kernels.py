"""The Winograd convolution's transforms (the network's 3x3 convolutions in float32), in the numba subset.

`connect4_agents.alphazero.winograd` runs them compiled (through `connect4_env.compiled.compiled_module`);
plain Python runs them too, slowly, which the tests use on small inputs.

A 3x3 convolution (padding 1) is computed tile by tile, as Winograd's minimal filtering algorithms do: F(2, 3)
down the rows (2 outputs from 4 inputs) and F(4, 3) along the columns (4 outputs from 6 inputs). A tile of
2 x 4 outputs reads 4 x 6 inputs; each of those 24 transformed inputs is multiplied by the matching transformed
weight (24 matrix products over the channels, done by torch), and the output transform adds the products back
into the 2 x 4 outputs. That is 24 multiplications a tile against 72 for the direct convolution: on 6x7 (six
tiles, 48 outputs of which 42 are kept) 144 a channel pair against 378.

Activations are stored position-major, ``(rows, columns, batch, channels)``, with one ring of zeros around the
board and more zeros below and to the right up to whole tiles (``2 * tiles_down + 2`` rows and
``4 * tiles_across + 2`` columns): a tile's inputs are then plain slices, and the innermost loops run over
``batch * channels`` contiguous floats.

The transforms (points 0, 1, -1 and infinity for F(2, 3); 0, 1, -1, 2, -2 and infinity for F(4, 3)):

- inputs, rows: ``d0 - d2, d1 + d2, d2 - d1, d1 - d3``;
- inputs, columns: ``4 d0 - 5 d2 + d4, -4 d1 - 4 d2 + d3 + d4, 4 d1 - 4 d2 - d3 + d4, -2 d1 - d2 + 2 d3 + d4,
  2 d1 - d2 - 2 d3 + d4, 4 d1 - 5 d3 + d5``;
- outputs, columns: ``m0 + m1 + m2 + m3 + m4, m1 - m2 + 2 (m3 - m4), m1 + m2 + 4 (m3 + m4),
  m1 - m2 + 8 (m3 - m4) + m5``; rows: ``m0 + m1 + m2, m1 - m2 - m3``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["transform_input", "transform_output", "TINY"]

# the smallest normal float32: a smaller output is stored as 0, as relu does a negative one (a CPU computes with
# subnormal floats many times slower, and the next convolution would multiply them by every weight)
TINY = 2.0**-126


def transform_input(padded, transformed):
    """The 24 transformed inputs of every tile: ``padded`` ``(2 * tiles_down + 2, 4 * tiles_across + 2, n)``
    (activations and their zero border, ``n = batch * channels``) into ``transformed``
    ``(4, 6, tiles_down, tiles_across, n)``.
    """
    n = padded.shape[2]
    for ty in range(transformed.shape[2]):
        r = 2 * ty
        for tx in range(transformed.shape[3]):
            c = 4 * tx
            for j in range(6):  # down the rows, column by column of the tile
                for i in range(n):
                    x0 = padded[r, c + j, i]
                    x1 = padded[r + 1, c + j, i]
                    x2 = padded[r + 2, c + j, i]
                    x3 = padded[r + 3, c + j, i]
                    transformed[0, j, ty, tx, i] = x0 - x2
                    transformed[1, j, ty, tx, i] = x1 + x2
                    transformed[2, j, ty, tx, i] = x2 - x1
                    transformed[3, j, ty, tx, i] = x1 - x3
            for a in range(4):  # then along the columns, in place
                for i in range(n):
                    d0 = transformed[a, 0, ty, tx, i]
                    d1 = transformed[a, 1, ty, tx, i]
                    d2 = transformed[a, 2, ty, tx, i]
                    d3 = transformed[a, 3, ty, tx, i]
                    d4 = transformed[a, 4, ty, tx, i]
                    d5 = transformed[a, 5, ty, tx, i]
                    transformed[a, 0, ty, tx, i] = 4 * d0 - 5 * d2 + d4
                    transformed[a, 1, ty, tx, i] = d3 + d4 - 4 * (d1 + d2)
                    transformed[a, 2, ty, tx, i] = 4 * (d1 - d2) - d3 + d4
                    transformed[a, 3, ty, tx, i] = 2 * (d3 - d1) - d2 + d4
                    transformed[a, 4, ty, tx, i] = 2 * (d1 - d3) - d2 + d4
                    transformed[a, 5, ty, tx, i] = 4 * d1 - 5 * d3 + d5


def transform_output(products, bias, residual, add_residual, rows, columns, out):
    """``relu(convolution + bias)`` (``relu(convolution + bias + residual)`` when ``add_residual``) into the
    board's cells of ``out``, from the tiles' 24 ``products`` ``(4, 6, tiles_down, tiles_across, batch,
    channels)`` (float32); ``residual`` and ``out`` are padded as `transform_input`'s input (they may be one
    array: each cell is read before it is written). Outputs past ``rows`` x ``columns`` are dropped, so the
    border stays 0.
    """
    batch = products.shape[4]
    channels = products.shape[5]
    folded = np.empty(
        (4, 4, channels), np.float32
    )  # one tile's column outputs: (row input a, column s, channel)
    for ty in range(products.shape[2]):
        for tx in range(products.shape[3]):
            for b in range(batch):
                for a in range(4):
                    for k in range(channels):
                        m0 = products[a, 0, ty, tx, b, k]
                        m1 = products[a, 1, ty, tx, b, k]
                        m2 = products[a, 2, ty, tx, b, k]
                        m3 = products[a, 3, ty, tx, b, k]
                        m4 = products[a, 4, ty, tx, b, k]
                        m5 = products[a, 5, ty, tx, b, k]
                        p = m1 + m2
                        q = m1 - m2
                        u = m3 + m4
                        v = m3 - m4
                        folded[a, 0, k] = m0 + p + u
                        folded[a, 1, k] = q + 2 * v
                        folded[a, 2, k] = p + 4 * u
                        folded[a, 3, k] = q + 8 * v + m5
                for s in range(4):
                    column = 4 * tx + s
                    if column >= columns:
                        continue
                    for r in range(2):
                        row = 2 * ty + r
                        if row >= rows:
                            continue
                        for k in range(channels):
                            if r == 0:
                                y = folded[0, s, k] + folded[1, s, k] + folded[2, s, k] + bias[k]
                            else:
                                y = folded[1, s, k] - folded[2, s, k] - folded[3, s, k] + bias[k]
                            if add_residual:
                                y += residual[row + 1, column + 1, b, k]
                            out[row + 1, column + 1, b, k] = y if y >= TINY else 0.0
