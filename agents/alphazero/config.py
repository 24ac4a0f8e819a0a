"""The settings of an AlphaZero training run, apart from torch so that a command line can be built without it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from connect4_env.rules import Rules
from connect4_env.validation import check_bool, check_choice, check_int, check_number

# the network's size: 512 channels and 40 residual blocks make 189 million weights (0.8 GB), beyond any board here
MAX_CHANNELS, MAX_BLOCKS = 512, 40

__all__ = ["AlphaZeroTrainConfig", "PRECISIONS", "TEACHERS"]

# how self-play's forward passes compute (training itself stays in float32); "auto": bfloat16 where the CPU
# computes it natively (AMX, AVX512-BF16), else float32 through Winograd convolutions where numba is installed,
# else plain float32
PRECISIONS = ("auto", "float32", "winograd", "bfloat16")
# where the training targets come from: self-play's search ("none") or the exact solver (teacher.py)
TEACHERS = ("none", "solver")
# where the training steps run: "auto" (a CUDA GPU when torch sees one, else the CPU), "cpu", "cuda" or "cuda:N"
_DEVICE = re.compile(r"auto|cpu|cuda(:[0-9]+)?")


@dataclass
class AlphaZeroTrainConfig:
    """Settings of one AlphaZero training run (each field is also a ``scripts/train_alphazero.py`` option;
    the module docstring says what they do). SB3's settings are [`connect4_agents.sb3.train.SB3TrainConfig`][connect4_agents.sb3.train.SB3TrainConfig]).
    """

    rows: int = 6
    columns: int = 7
    win_length: int = 4
    channels: int = 64
    blocks: int = 4
    generations: int = 10
    games: int = 64
    parallel: int = 128
    simulations: int = 100
    c_puct: float = 1.5
    dirichlet_alpha: float = 1.0
    noise: float = 0.25
    temperature_moves: int = 8
    buffer_size: int = 100_000
    steps: int = 200
    batch_size: int = 256
    lr: float = 1e-3
    weight_decay: float = 1e-4
    workers: int = 1
    eval_positions: int = 200
    eval_simulations: int = 50
    ladder_every: int = 10
    ladder_games: int = 10
    seed: int = 0
    precision: str = "auto"
    subtree_reuse: bool = True
    evaluation_cache: int = 200_000
    teacher: str = "none"
    teacher_explore: float = 1.0
    init: str = ""
    device: str = "auto"
    playout_cap: float = 1.0
    fast_simulations: int = 20
    value_mix: float = 0.0

    def check(self) -> AlphaZeroTrainConfig:
        """Raise TypeError / ValueError naming a bad setting; returns self."""
        Rules(self.rows, self.columns, self.win_length)
        check_int("channels", self.channels, 1, MAX_CHANNELS)
        check_int("blocks", self.blocks, 0, MAX_BLOCKS)
        check_int("parallel", self.parallel, 1, 4096)  # games searched in lockstep: their trees share memory
        check_int("workers", self.workers, 1, 4096)
        check_int("evaluation_cache", self.evaluation_cache, 0, 10_000_000)  # about 1 KB an entry
        # upper bounds keep a typed number from running for ever or overflowing a counter (torch and numpy
        # take seeds below 2**32 alike)
        for name, low, high in (
            ("generations", 1, 10**9),
            ("games", 1, 10**9),
            ("simulations", 1, 10**9),
            ("temperature_moves", 0, 10**9),
            ("buffer_size", 1, 10**10),
            ("steps", 0, 10**12),
            ("batch_size", 1, 10**7),
            ("eval_positions", 0, 10**9),
            ("eval_simulations", 0, 10**9),
            ("ladder_every", 0, 10**9),
            ("ladder_games", 1, 10**9),
            ("seed", 0, 2**32 - 1),
        ):
            check_int(name, getattr(self, name), low, high)
        check_number("c_puct", self.c_puct, 0.0)
        check_number("dirichlet_alpha", self.dirichlet_alpha, 0.0, above_minimum=True)
        check_number("noise", self.noise, 0.0, 1.0)
        check_number("lr", self.lr, 0.0, above_minimum=True)
        check_number("weight_decay", self.weight_decay, 0.0)
        check_bool("subtree_reuse", self.subtree_reuse)
        check_number("playout_cap", self.playout_cap, 0.0, 1.0, above_minimum=True)
        check_int("fast_simulations", self.fast_simulations, 1)
        if self.playout_cap < 1 and self.fast_simulations > self.simulations:
            raise ValueError(
                f"fast_simulations={self.fast_simulations} is more than simulations={self.simulations}: "
                "playout-cap randomisation's fast searches are the smaller ones"
            )
        check_number("value_mix", self.value_mix, 0.0, 1.0)
        if not isinstance(self.teacher, str):
            raise TypeError(f"teacher must be a str, got {type(self.teacher).__name__}")
        check_choice("teacher", self.teacher, TEACHERS)
        check_number("teacher_explore", self.teacher_explore, 0.0, 1.0)
        if not isinstance(self.init, str):
            raise TypeError(
                f"init must be a str (a model file, 'shipped' or ''), got {type(self.init).__name__}"
            )
        if not isinstance(self.precision, str):
            raise TypeError(f"precision must be a str, got {type(self.precision).__name__}")
        check_choice("precision", self.precision, PRECISIONS)
        if not isinstance(self.device, str):
            raise TypeError(f"device must be a str, got {type(self.device).__name__}")
        if not _DEVICE.fullmatch(self.device):
            raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {self.device!r}")
        return self

    @property
    def rules(self) -> Rules:
        return Rules(self.rows, self.columns, self.win_length)
