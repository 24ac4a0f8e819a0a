"""The policy/value network: a small residual CNN over the ``(rows, columns, 2)`` planes, any board size.

Input: the mover's planes (plane 0 its stones, plane 1 the opponent's), as ``(batch, 2, rows, columns)``.
Trunk: a 3x3 convolution to ``channels`` feature maps and ``blocks`` residual blocks (two 3x3 convolutions
with batch norm each). Policy head: for each column, the features of the cell where a stone would land
there, joined with the board's mean features, through two 1x1 layers to one logit per column. Value head: the
board's mean and max features through a small MLP to ``tanh``, the expected result for the player to move.
No layer depends on the board's size, so one network runs on any board (a saved model is still bound to the
size it was trained on).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from connect4_agents.alphazero.config import MAX_BLOCKS, MAX_CHANNELS, PRECISIONS
from connect4_agents.alphazero.winograd import require_winograd, winograd_trunk, without_subnormals
from connect4_env.core import Board
from connect4_env.encoding import observation_planes
from connect4_env.validation import check_bool, check_choice, check_int

__all__ = ["PolicyValueNet", "NetworkEvaluator", "planes_tensor", "count_parameters", "native_bfloat16"]

_Pair = tuple[torch.Tensor, torch.Tensor]  # a convolution's (weight, bias)
# how an evaluator's forward passes compute (see there): the training settings' precisions but "auto"
_PRECISIONS = tuple(precision for precision in PRECISIONS if precision != "auto")


class _Block(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(y)))


class PolicyValueNet(nn.Module):
    """Policy logits (one per column) and a value in [-1, 1] for the player to move."""

    def __init__(self, channels: int = 64, blocks: int = 4) -> None:
        super().__init__()
        self.channels = check_int("channels", channels, 1, MAX_CHANNELS)
        self.blocks = check_int("blocks", blocks, 0, MAX_BLOCKS)
        self.stem = nn.Sequential(
            nn.Conv2d(2, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels), nn.ReLU()
        )
        self.trunk = nn.Sequential(*[_Block(channels) for _ in range(blocks)])
        self.policy = nn.Sequential(
            nn.Conv1d(2 * channels, channels, 1), nn.ReLU(), nn.Conv1d(channels, 1, 1)
        )
        self.value = nn.Sequential(nn.Linear(2 * channels, 64), nn.ReLU(), nn.Linear(64, 1), nn.Tanh())

    def config(self) -> dict[str, int]:
        """The constructor's settings, ``{"channels": ..., "blocks": ...}``: what a model file stores to build
        the same network again.
        """
        return {"channels": self.channels, "blocks": self.blocks}

    def forward(self, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Policy logits ``(batch, columns)`` and values ``(batch,)`` in [-1, 1] for the player to move, from
        ``(batch, 2, rows, columns)`` float planes (plane 0 the mover's stones, row 0 the top row; any board
        size). Not masked: illegal columns get logits too.
        """
        features = self.trunk(self.stem(planes))  # (B, F, R, C)
        return self._heads(planes, features, self.policy, self.value)

    @staticmethod
    def _heads(
        planes: torch.Tensor, features: torch.Tensor, policy: Callable[..., Any], value: Callable[..., Any]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The two heads on the trunk's ``features`` (``policy`` and ``value`` map the joined features)."""
        rows = planes.shape[2]
        heights = planes.sum(dim=(1, 2))  # stones per column, (B, C)
        landing = (rows - 1 - heights).clamp(min=0).long()  # row index (0 = top) where a stone would land
        index = landing[:, None, None, :].expand(-1, features.shape[1], 1, -1)
        local = features.gather(2, index).squeeze(2)  # (B, F, C)
        mean = features.mean(dim=(2, 3))
        joined = torch.cat([local, mean[:, :, None].expand_as(local)], dim=1)
        logits = policy(joined).squeeze(1)  # (B, C)
        pooled = torch.cat([mean, features.amax(dim=(2, 3))], dim=1)
        return logits, value(pooled).squeeze(1)

    def _folded_trunk(self) -> tuple[_Pair, list[tuple[_Pair, _Pair]]]:
        """The stem's and each block's two convolutions as ``(weight, bias)`` pairs with their batch norms folded
        in (eval mode): ``(stem, [(conv1, conv2), ...])``.
        """
        with torch.no_grad():
            stem = _folded(self.stem[0], self.stem[1])
            return stem, [(_folded(b.conv1, b.bn1), _folded(b.conv2, b.bn2)) for b in self.trunk]

    def inference(
        self, dtype: torch.dtype = torch.float32, winograd: bool = False
    ) -> Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]:
        """A snapshot of the network for eval-mode forward passes, each batch norm folded into the convolution
        before it and the layers called as plain functions: the eval-mode outputs up to float rounding (about
        1e-5). It keeps the weights as they are now: take a new one after they change (`NetworkEvaluator`
        does).

        ``dtype=torch.bfloat16``: the trunk's weights are cast to bfloat16 once, here, and its convolutions run
        in bfloat16 on channels-last tensors (the layout oneDNN's AMX kernels take without reordering); the
        heads run in float32 on its output; the outputs differ from float32's by bfloat16's rounding (about
        1e-2).

        Values too small for a normal float (subnormals, below about 1.2e-38) are stored as 0: weight decay
        drives the weights of channels that never fire there, and a CPU computes with subnormals many times
        slower.

        ``winograd=True`` (float32 only; needs numba, the ``fast`` extra): the residual blocks' convolutions run
        as Winograd convolutions (`connect4_agents.alphazero.winograd`); the outputs differ from the direct convolutions' by float32 rounding (about 1e-5 in the shipped
        network's logits).
        """
        if not isinstance(dtype, torch.dtype):
            raise TypeError(f"dtype must be a torch.dtype, got {type(dtype).__name__}")
        if dtype not in (torch.float32, torch.bfloat16):
            raise ValueError(f"dtype must be torch.float32 or torch.bfloat16, got {dtype!r}")
        check_bool("winograd", winograd)
        if winograd and dtype != torch.float32:
            raise ValueError(f"winograd=True computes in float32 only, got dtype={dtype!r}")
        low = dtype == torch.bfloat16
        layout = torch.channels_last if low else torch.contiguous_format

        def cast(pair: _Pair) -> _Pair:
            return pair[0].to(dtype).contiguous(memory_format=layout), pair[1].to(dtype)

        folded_stem, folded_blocks = self._folded_trunk()
        stem = cast(folded_stem)
        blocks = [(cast(first), cast(second)) for first, second in folded_blocks]
        with torch.no_grad():
            p1: Any = self.policy[0]
            p2: Any = self.policy[2]
            v1: Any = self.value[0]
            v2: Any = self.value[2]
            head = [without_subnormals(t) for t in (p1.weight, p1.bias, p2.weight, p2.bias)]
            tail = [without_subnormals(t) for t in (v1.weight, v1.bias, v2.weight, v2.bias)]

        def policy(x: torch.Tensor) -> torch.Tensor:
            return F.conv1d(F.relu(F.conv1d(x, head[0], head[1])), head[2], head[3])

        def value(x: torch.Tensor) -> torch.Tensor:
            return torch.tanh(F.linear(F.relu(F.linear(x, tail[0], tail[1])), tail[2], tail[3]))

        if winograd:
            trunk = winograd_trunk(stem, blocks)

            def fast(planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
                return self._heads(planes, trunk(planes), policy, value)

            return fast

        def forward(planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            x = planes.to(dtype).contiguous(memory_format=layout) if low else planes
            x = F.relu(F.conv2d(x, stem[0], stem[1], padding=1))
            for (w1, b1), (w2, b2) in blocks:
                y = F.relu(F.conv2d(x, w1, b1, padding=1))
                x = F.relu(x + F.conv2d(y, w2, b2, padding=1))
            if low:
                x = x.float().contiguous()
            return self._heads(planes, x, policy, value)

        return forward


def _folded(conv: Any, norm: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """The weight and bias of one convolution doing ``norm(conv(x))`` in eval mode (``conv``: an ``nn.Conv2d``
    without bias; ``norm``: an ``nn.BatchNorm2d``).
    """
    scale = norm.weight / torch.sqrt(norm.running_var + norm.eps)
    weight = conv.weight * scale[:, None, None, None]
    bias = norm.bias - norm.running_mean * scale
    return without_subnormals(weight), without_subnormals(bias)


def planes_tensor(planes: np.ndarray) -> torch.Tensor:
    """``(batch, rows, columns, 2)`` planes as the network's ``(batch, 2, rows, columns)`` float tensor."""
    return torch.from_numpy(np.ascontiguousarray(np.asarray(planes, dtype=np.float32).transpose(0, 3, 1, 2)))


class NetworkEvaluator:
    """The network as an [`connect4_agents.mcts.evaluators.Evaluator`][connect4_agents.mcts.evaluators.Evaluator]:
    softmax priors over the legal columns and values, one forward pass per batch of positions (no gradients,
    eval mode). ``symmetric``: each position is also evaluated mirrored (left to right, in the same forward
    pass) and the two logits and values averaged, the game being symmetric under that reflection.
    ``precision``: ``"float32"`` (default); ``"winograd"``: float32 with the snapshot's residual blocks as
    Winograd convolutions (numba, the ``fast`` extra; within about 1e-5 of float32's logits; see `connect4_agents.alphazero.winograd`; a module other than a `PolicyValueNet`
    runs as it is, in float32); or ``"bfloat16"``: the snapshot's trunk in bfloat16 (see
    `PolicyValueNet.inference`), other modules under
    ``torch.autocast``; the outputs differ from float32's by bfloat16's rounding, about 1e-2 in the logits. On
    a CPU without native bfloat16 (no AMX, no AVX512-BF16) bfloat16 is emulated and many times slower than
    float32: asking for it there warns. Timings: the design notes (``docs/design/notes.md``).

    A `PolicyValueNet` runs through its `PolicyValueNet.inference` snapshot (batch norm folded
    into the convolutions), taken again whenever its parameters or buffers change (a training step,
    ``load_state_dict``, a tensor assigned in their place); any other module runs as it is, in eval mode. A
    layer replaced by a new module after the evaluator's first call is not seen: make a new evaluator.
    ``snapshot=False`` runs a `PolicyValueNet` through its modules too (eval mode; the benchmarks' "before").

    Raises:
        TypeError: ``symmetric`` or ``snapshot`` is not a bool.
        ValueError: an unknown ``precision``.
        MissingExtraError: ``precision="winograd"`` without numba.
    """

    def __init__(
        self, net: PolicyValueNet, symmetric: bool = False, precision: str = "float32", snapshot: bool = True
    ) -> None:
        self.net = net
        self.symmetric = check_bool("symmetric", symmetric)
        self.snapshot = check_bool("snapshot", snapshot)
        self.precision = check_choice("precision", precision, _PRECISIONS)
        if self.precision == "winograd":
            require_winograd()  # numba (the fast extra) is needed: say so now, not at the first forward pass
        if self.precision == "bfloat16" and not native_bfloat16():
            warnings.warn(
                "precision='bfloat16' on a CPU without native bfloat16 (AMX or AVX512-BF16): it is emulated "
                "and many times slower than float32 here; use precision='float32'",
                RuntimeWarning,
                stacklevel=2,
            )
        self._snapshot: tuple[tuple[str, tuple[int, ...], tuple[int, ...]], Callable[..., Any]] | None = None
        self._slots: list[tuple[dict[str, Any], str]] | None = None
        self._threads: set[int] = set()  # the threads that have called predict (see there)

    def __getstate__(self) -> dict[str, Any]:
        # the snapshot is a closure (not picklable) and is cheap to take again: a copy starts without one
        state = self.__dict__.copy()
        state["_snapshot"] = state["_slots"] = None
        state["_threads"] = set()  # thread ids of another process
        return state

    def evaluate(self, boards: Sequence[Board]) -> tuple[np.ndarray, np.ndarray]:
        """``(priors, values)`` for unfinished ``boards``, as the
        [`Evaluator`][connect4_agents.mcts.evaluators.Evaluator] protocol asks: ``(len(boards), columns)``
        softmax priors that are 0 on illegal columns and ``(len(boards),)`` values in [-1, 1] for the player
        to move, from one forward pass.
        """
        planes = np.stack([observation_planes(board) for board in boards])
        if self.symmetric:
            count = len(boards)
            logits, values = self.predict(np.concatenate([planes, planes[:, :, ::-1, :]]))
            logits = (logits[:count] + logits[count:, ::-1]) / 2
            values = (values[:count] + values[count:]) / 2
        else:
            logits, values = self.predict(planes)
        masks = np.array([board.legal_mask() for board in boards], bool)
        logits = np.where(masks, logits, -np.inf)
        logits -= logits.max(axis=1, keepdims=True)
        priors = np.exp(logits)
        return priors / priors.sum(axis=1, keepdims=True), values

    def _forward(self) -> Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]:
        """The network's eval-mode forward pass: a `PolicyValueNet`'s inference snapshot, taken again
        when any of its parameters or buffers was replaced or changed in place since (each tensor's ``_version``
        counts in-place writes) or ``precision`` changed; any other module, or any with ``snapshot=False``, as
        it is.
        """
        net = self.net
        if not self.snapshot or type(net) is not PolicyValueNet:
            net.eval()
            return net
        # where each tensor lives, read afresh at every call (cheaper than .parameters())
        if self._slots is None:
            self._slots = [
                (table, name)
                for module in net.modules()
                for table in (module._parameters, module._buffers)
                for name in table
            ]
        tensors = [table[name] for table, name in self._slots]
        # the precision too: a snapshot is taken in one number format
        stamp = (
            self.precision,
            tuple(map(id, tensors)),
            tuple([-1 if t is None else t._version for t in tensors]),
        )
        if self._snapshot is None or self._snapshot[0] != stamp:
            dtype = torch.bfloat16 if self.precision == "bfloat16" else torch.float32
            self._snapshot = (stamp, net.inference(dtype, winograd=self.precision == "winograd"))
        return self._snapshot[1]

    def predict(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Raw logits and values for ``(batch, rows, columns, 2)`` planes."""
        thread = threading.get_ident()
        if thread not in self._threads:
            # torch sets its thread count up for each OS thread on the first call that asks for it; a thread
            # whose first call was a convolution (a network built on another thread, as a Kaggle agent builds it
            # in the background) spent tenths of a second in it, which asking first avoids
            torch.get_num_threads()
            self._threads.add(thread)
        forward = self._forward()
        with (
            torch.inference_mode(),
            # the snapshot computes in bfloat16 itself; autocast only for a module run as it is
            torch.autocast(
                "cpu", torch.bfloat16, enabled=self.precision == "bfloat16" and forward is self.net
            ),
        ):
            logits, values = forward(planes_tensor(planes))
        return logits.float().numpy().astype(np.float64), values.float().numpy().astype(np.float64)


def native_bfloat16() -> bool:
    """Whether this CPU computes bfloat16 natively (AMX tiles or AVX512-BF16), as torch reports it; True when
    this torch cannot tell.
    """
    checks = [
        getattr(torch.cpu, name, None) for name in ("_is_amx_tile_supported", "_is_avx512_bf16_supported")
    ]
    known = [check for check in checks if callable(check)]
    return not known or any(bool(check()) for check in known)


def count_parameters(net: Any) -> int:
    """The number of scalars in ``net``'s parameters (a torch module; buffers such as batch-norm statistics
    not counted).
    """
    return int(sum(p.numel() for p in net.parameters()))
