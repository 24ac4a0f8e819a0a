"""The settings of an AlphaZero training run, apart from torch so that a command line can be built without it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from connect4_agents._support.config_cli import option
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
    """Settings of one AlphaZero training run: each field is also a ``connect4 train-alphazero`` option, its
    docstring the option's help. SB3's settings are
    [`SB3TrainConfig`][connect4_agents.sb3.train.SB3TrainConfig].
    """

    rows: int = 6
    """Board rows."""
    columns: int = 7
    """Board columns."""
    win_length: int = 4
    """Stones in a line to win."""
    channels: int = 64
    """Feature maps of the network."""
    blocks: int = 4
    """Residual blocks of the network."""
    generations: int = 10
    """Generations to run (more with ``--resume``)."""
    games: int = 64
    """Self-play games per generation."""
    parallel: int = 128
    """Games searched in lockstep (one network call per step for all of them; at most the games a worker
    plays)."""
    simulations: int = 100
    """PUCT simulations per self-play move."""
    c_puct: float = 1.5
    """PUCT's exploration weight."""
    dirichlet_alpha: float = 1.0
    """Alpha of the Dirichlet noise at the root."""
    noise: float = 0.25
    """Weight of the root noise."""
    temperature_moves: int = 8
    """Moves drawn in proportion to the visits at the start of a game."""
    buffer_size: int = 100_000
    """Positions kept in the replay buffer (mirror images included)."""
    steps: int = 200
    """Training steps per generation."""
    batch_size: int = 256
    """Positions per training step."""
    lr: float = 1e-3
    """Learning rate of Adam."""
    weight_decay: float = 1e-4
    """Weight decay of Adam."""
    workers: int = 1
    """Self-play processes."""
    eval_positions: int = 200
    """Test-set positions measured after each generation (0: none)."""
    eval_simulations: int = 50
    """Simulations per move in that measurement (0: the raw policy only)."""
    ladder_every: int = 10
    """On 6x7, play the reference ladder every this many generations (0: never)."""
    ladder_games: int = 10
    """Games against each ladder agent (the model at 200 simulations a move)."""
    seed: int = 0
    """Seed of self-play and sampling."""
    precision: str = field(default="auto", metadata=option(choices=PRECISIONS))
    """How self-play's forward passes compute: ``auto`` (``bfloat16`` where the CPU computes it natively, with
    AMX or AVX512-BF16; else ``winograd`` where numba is installed; else ``float32``), ``float32``,
    ``winograd`` (float32 through Winograd convolutions; needs the fast extra) or ``bfloat16`` (emulated,
    with a warning, on CPUs without it)."""
    subtree_reuse: bool = True
    """Keep the searched subtree of the move played as the next move's tree, and search only up to
    ``--simulations`` visits in all."""
    evaluation_cache: int = 200_000
    """Network answers remembered by position within a generation's self-play (0: none)."""
    teacher: str = field(default="none", metadata=option(choices=TEACHERS))
    """Where the targets come from: ``none`` (self-play's search) or ``solver`` (games labelled by the exact
    solver, its outcomes as targets; 6x7 with the book extra, or small boards)."""
    teacher_explore: float = 1.0
    """With ``--teacher solver``: each game plays a random move with a probability drawn between 0 and this,
    else a best one."""
    init: str = ""
    """A model file the first weights are read from (``shipped``: the 6x7 model shipped with the package;
    default: random weights); its board and network must be the run's."""
    device: str = "auto"
    """Where the training steps run: ``auto`` (a CUDA GPU when torch sees one, else the CPU), ``cpu``,
    ``cuda`` or ``cuda:N``; self-play and the measurement stay on the CPU."""
    playout_cap: float = 1.0
    """Share of self-play moves searched with ``--simulations`` (root noise, kept for training); the others
    get ``--fast-simulations``, no noise, and are not kept (playout-cap randomisation; 1: every move)."""
    fast_simulations: int = 20
    """Simulations of the fast searches when ``--playout-cap`` is below 1."""
    value_mix: float = 0.0
    """Weight of the search's root value in the value target, the game's result having the rest (0: the
    result only)."""

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
        """The board these settings train on."""
        return Rules(self.rows, self.columns, self.win_length)
