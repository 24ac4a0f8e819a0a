"""The network's residual trunk in float32 through Winograd convolutions: the same function as its direct
convolutions, with about 2.6x fewer multiplications on 6x7 (see `connect4_agents.alphazero.winograd_kernels`).

The input and output transforms run in numba (the ``fast`` extra), the 24 matrix products a convolution
needs in torch (``torch.bmm``). The outputs differ from the direct convolutions' by float32 rounding (about
1e-5 in the shipped network's logits). Self-play uses it (``precision="winograd"``); the agent at play time
keeps the direct convolutions. Timings and the variants not kept: the design notes
(``docs/design/notes.md``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from types import ModuleType

import torch
import torch.nn.functional as F

from connect4_env.compiled import compiled_module
from connect4_env.extras import require

__all__ = [
    "transformed_weight",
    "winograd_trunk",
    "winograd_kernels",
    "require_winograd",
    "without_subnormals",
    "MAX_BUFFER_BYTES",
]

_KERNELS = "connect4_agents.alphazero.winograd_kernels"
# the most bytes of buffers one pass of the trunk holds (about 1,100 positions of 6x7 at 128 channels): a larger
# batch is computed in parts
MAX_BUFFER_BYTES = 256 << 20

# the weight transforms: F(2, 3) down the rows, F(4, 3) along the columns (points as in the kernels' module)
_ROWS = torch.tensor([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]], dtype=torch.float64)
_COLUMNS = torch.tensor(
    [
        [1 / 4, 0, 0],
        [-1 / 6, -1 / 6, -1 / 6],
        [-1 / 6, 1 / 6, -1 / 6],
        [1 / 24, 1 / 12, 1 / 6],
        [1 / 24, -1 / 12, 1 / 6],
        [0, 0, 1],
    ],
    dtype=torch.float64,
)


def without_subnormals(tensor: torch.Tensor) -> torch.Tensor:
    """A contiguous copy of ``tensor`` with its subnormal values (``0 < |x| < finfo.tiny``) set to 0: a CPU
    computes with them many times slower. The inference snapshot's weights and the transformed ones go
    through it.
    """
    tensor = tensor.detach()
    return torch.where(tensor.abs() < torch.finfo(tensor.dtype).tiny, 0.0, tensor).contiguous()


def require_winograd() -> None:
    """Raise `connect4_env.extras.MissingExtraError`, naming the ``fast`` extra, when numba (which the
    compiled transforms need) is not installed; a check only, without loading the kernels.
    """
    require("numba", "fast", "precision='winograd' (self-play's Winograd convolutions)")


def winograd_kernels(compiled: bool = True) -> ModuleType:
    """The transforms' module: numba-compiled (raises `connect4_env.extras.MissingExtraError`, naming
    the ``fast`` extra, without numba), or plain Python (``compiled=False``: slow, for tests on small inputs).
    """
    if not compiled:
        return importlib.import_module(_KERNELS)
    require_winograd()
    module = compiled_module(_KERNELS)
    if module is None:  # pragma: no cover - numba was importable a moment ago
        raise ImportError("numba could not be loaded")
    return module


def transformed_weight(weight: torch.Tensor) -> torch.Tensor:
    """A 3x3 convolution's ``(out, in, 3, 3)`` weight as the ``(24, in, out)`` float32 matrices the tiles'
    transformed inputs are multiplied by (computed in float64; values too small for a normal float are 0).
    """
    if weight.dim() != 4 or tuple(weight.shape[2:]) != (3, 3):
        raise ValueError(f"weight must have the shape (out, in, 3, 3), got {tuple(weight.shape)}")
    product = torch.einsum("ai,kcij,bj->abck", _ROWS, weight.detach().to(torch.float64), _COLUMNS)
    # a tiny weight times a small transform coefficient can be subnormal, and a CPU multiplies subnormals
    # many times slower (docs/design/notes.md)
    return without_subnormals(product.reshape(24, weight.shape[1], weight.shape[0]).to(torch.float32))


def winograd_trunk(
    stem: tuple[torch.Tensor, torch.Tensor],
    blocks: Sequence[tuple[tuple[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]],
    compiled: bool = True,
) -> Callable[[torch.Tensor], torch.Tensor]:
    """The trunk ``relu(conv(stem))`` then residual blocks ``relu(x + conv2(relu(conv1(x))))`` as a function of
    ``(batch, 2, rows, columns)`` float32 planes to ``(batch, channels, rows, columns)`` features, from the
    folded ``(weight, bias)`` pairs (batch norm already in them). The stem (two input planes) stays a direct
    convolution; every block's convolutions go through the Winograd transforms.
    """
    kernels = winograd_kernels(compiled)
    prepared = [
        (
            (transformed_weight(w1), b1.detach().float().numpy()),
            (transformed_weight(w2), b2.detach().float().numpy()),
        )
        for (w1, b1), (w2, b2) in blocks
    ]

    def convolve(
        source: torch.Tensor,
        weight: torch.Tensor,
        bias: object,
        residual: torch.Tensor | None,
        target: torch.Tensor,
        scratch: tuple[torch.Tensor, torch.Tensor],
        board: tuple[int, int],
    ) -> None:
        """``relu(conv(source) + bias (+ residual))`` into the ``board``'s cells of ``target`` (all padded,
        position-major).
        """
        height, width, batch, channels = source.shape
        tiles = ((height - 2) // 2, (width - 2) // 4)
        transformed, products = scratch
        kernels.transform_input(
            source.numpy().reshape(height, width, batch * channels),
            transformed.numpy().reshape(4, 6, *tiles, batch * channels),
        )
        torch.bmm(transformed, weight, out=products)
        kernels.transform_output(
            products.numpy().reshape(4, 6, *tiles, batch, weight.shape[2]),
            bias,
            (target if residual is None else residual).numpy(),
            residual is not None,
            board[0],
            board[1],
            target.numpy(),
        )

    def forward(planes: torch.Tensor) -> torch.Tensor:
        batch, _, rows, columns = planes.shape
        tiles = ((rows + 1) // 2, (columns + 3) // 4)
        channels = stem[0].shape[0]
        # the buffers a position needs: its transformed inputs and products, and two padded activations
        floats = 2 * 24 * tiles[0] * tiles[1] + 2 * (2 * tiles[0] + 2) * (4 * tiles[1] + 2)
        chunk = max(1, MAX_BUFFER_BYTES // (4 * channels * floats))
        if batch > chunk:  # a large batch in parts: the memory stays bounded whatever the batch
            return torch.cat([forward(planes[i : i + chunk]) for i in range(0, batch, chunk)])
        x = F.relu(F.conv2d(planes, stem[0], stem[1], padding=1))
        if not prepared or batch == 0:
            return x
        shape = (2 * tiles[0] + 2, 4 * tiles[1] + 2, batch, channels)
        features = torch.zeros(shape)
        features[1 : rows + 1, 1 : columns + 1] = x.permute(2, 3, 0, 1)
        inner = torch.zeros(shape)
        scratch = (
            torch.empty(24, tiles[0] * tiles[1] * batch, channels),
            torch.empty(24, tiles[0] * tiles[1] * batch, channels),
        )
        for (w1, b1), (w2, b2) in prepared:
            convolve(features, w1, b1, None, inner, scratch, (rows, columns))
            convolve(inner, w2, b2, features, features, scratch, (rows, columns))
        return features[1 : rows + 1, 1 : columns + 1].permute(2, 3, 0, 1).contiguous()

    return forward
