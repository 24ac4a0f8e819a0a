"""Self-play: games of the network's PUCT search against itself, many in lockstep, over worker processes or Ray,
and the replay buffer (with mirror images) they fill.
"""

from __future__ import annotations

import importlib.util
import io
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

from connect4_agents.alphazero.config import AlphaZeroTrainConfig
from connect4_agents.alphazero.network import NetworkEvaluator, PolicyValueNet, native_bfloat16
from connect4_agents.evaluation.backends import WorkerPool, run_batches
from connect4_agents.mcts.puct import Node, PUCTSearch
from connect4_env.core import Board
from connect4_env.encoding import observation_planes
from connect4_env.rules import Rules

__all__ = [
    "self_play",
    "play_generation",
    "join_parts",
    "ReplayBuffer",
    "CachedEvaluator",
    "forward_precision",
]


def forward_precision(precision: str) -> str:
    """How self-play's forward passes compute for a configured ``precision``: ``"auto"`` is bfloat16 on a CPU
    that computes it natively (AMX or AVX512-BF16), else float32 through Winograd convolutions where numba (the
    ``fast`` extra) is installed, else plain float32; the others as named.
    """
    if precision == "auto":
        if native_bfloat16():
            return "bfloat16"
        return "winograd" if importlib.util.find_spec("numba") is not None else "float32"
    return precision


class CachedEvaluator:
    """An evaluator that remembers its last ``capacity`` answers by position, so that a position met again (the
    same opening in many games, a transposition in a tree) costs no network call. The answers are the wrapped
    evaluator's own; the oldest half is dropped when it is full.
    """

    def __init__(self, evaluator: Any, capacity: int) -> None:
        self.evaluator = evaluator
        self.capacity = int(capacity)
        self.answers: dict[tuple[int, int], tuple[np.ndarray, float]] = {}
        self.hits = 0

    def evaluate(self, boards: Sequence[Board]) -> tuple[np.ndarray, np.ndarray]:
        """``(priors, values)`` for ``boards`` as the wrapped evaluator gives them
        ([`Evaluator`][connect4_agents.mcts.evaluators.Evaluator]'s shapes), asking it only for the positions
        not remembered (each once, in one call); ``hits`` counts the boards answered from memory.
        """
        keys = [(board.stones[0], board.stones[1]) for board in boards]
        known = {key: self.answers[key] for key in keys if key in self.answers}
        first = {key: board for key, board in zip(keys, boards) if key not in known}
        if first:
            priors, values = self.evaluator.evaluate(list(first.values()))
            fresh = {key: (p, float(v)) for key, p, v in zip(first, priors, values)}
            known.update(fresh)
            if (
                len(self.answers) + len(fresh) > self.capacity
            ):  # drop the oldest half (dicts keep their order)
                for old in list(self.answers)[
                    : max(len(self.answers) // 2, len(self.answers) + len(fresh) - self.capacity)
                ]:
                    del self.answers[old]
            self.answers.update(list(fresh.items())[: self.capacity])
        self.hits += len(keys) - len(first)
        found = [known[key] for key in keys]
        return np.stack([p for p, _ in found]), np.array([v for _, v in found])


def self_play(
    net: PolicyValueNet, config: AlphaZeroTrainConfig, n_games: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Play ``n_games`` games (``config.parallel`` at a time in lockstep).

    Each move is a full search (``config.simulations``, root noise) with probability ``config.playout_cap``,
    else a fast one (``config.fast_simulations``, no noise); only full searches' positions are recorded
    (playout-cap randomisation, after KataGo). A recorded position's value target is the game's result mixed
    with the search's root value by ``config.value_mix``.

    Returns:
        ``(planes, policies, values, plies)``: every recorded position from the mover's view ``(n, rows,
        columns, 2)`` int8, the visit distributions ``(n, columns)``, the value targets for the mover ``(n,)``
        (the results 1, 0, -1 when ``value_mix`` is 0), and the plies played.
    """
    rules = config.rules
    evaluator: Any = NetworkEvaluator(net, precision=forward_precision(config.precision))
    if config.evaluation_cache > 0:
        evaluator = CachedEvaluator(evaluator, config.evaluation_cache)
    planes: list[np.ndarray] = []
    policies: list[np.ndarray] = []
    values: list[float] = []
    plies = 0
    capped = config.playout_cap >= 1.0  # every move a full search (playout-cap randomisation off)
    left = n_games
    while left > 0:
        batch = min(config.parallel, left)
        left -= batch
        search = PUCTSearch(
            evaluator,
            c_puct=config.c_puct,
            dirichlet_alpha=config.dirichlet_alpha,
            noise=config.noise,
            seed=int(rng.integers(2**63)),
        )
        boards = [Board(rules) for _ in range(batch)]
        # each recorded position: its planes, the visit distribution, the mover and the search's value
        history: list[list[tuple[np.ndarray, np.ndarray, int, float]]] = [[] for _ in range(batch)]
        kept: list[Node | None] = [None] * batch  # each game's subtree below the move just played
        while True:
            active = [i for i, board in enumerate(boards) if not board.is_terminal]
            if not active:
                break
            # playout-cap randomisation: a full search (noise, recorded) or a fast one, move by move
            full = {i: capped or rng.random() < config.playout_cap for i in active}
            fresh = [i for i in active if kept[i] is None]
            new_roots = iter(
                search.roots([boards[i] for i in fresh], noise=[full[i] for i in fresh]) if fresh else []
            )
            roots = [
                next(new_roots) if kept[i] is None else search.reroot(kept[i], noise=full[i])  # type: ignore[arg-type]
                for i in active
            ]
            search.run_to(roots, [config.simulations if full[i] else config.fast_simulations for i in active])
            for i, root in zip(active, roots):
                board = boards[i]
                result = PUCTSearch.result(root)
                target = result.policy(1.0)
                temperature = 1.0 if board.ply < config.temperature_moves else 0.0
                choice = result.policy(temperature)
                column = int(rng.choice(len(choice), p=choice))
                child = root.children[column]
                reusable = (
                    config.subtree_reuse
                    and child is not None
                    and not child.board.is_terminal
                    and child.total_visits > 0
                )
                kept[i] = child if reusable else None
                if full[i]:
                    searched = result.root_value if result.root_proven is None else float(result.root_proven)
                    history[i].append((observation_planes(board), target, board.to_move, searched))
                board.play(column)
                plies += 1
        for board, moves in zip(boards, history):
            for board_planes, target, mover, searched in moves:
                planes.append(board_planes)
                policies.append(target)
                outcome = 0.0 if board.winner is None else (1.0 if board.winner == mover else -1.0)
                values.append((1 - config.value_mix) * outcome + config.value_mix * searched)
    if not planes:  # every move a fast search: nothing recorded
        return (
            np.zeros((0, rules.rows, rules.columns, 2), np.int8),
            np.zeros((0, rules.columns), np.float32),
            np.zeros(0, np.float32),
            plies,
        )
    return (
        np.stack(planes).astype(np.int8),
        np.stack(policies).astype(np.float32),
        np.asarray(values, dtype=np.float32),
        plies,
    )


def _self_play_task(
    task: tuple[bytes, dict[str, Any], int, int],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """One worker's share of a generation's games (the network travels as its state dict's bytes)."""
    weights, settings, n_games, seed = task
    torch.set_num_threads(1)
    config = AlphaZeroTrainConfig(**settings)
    net = PolicyValueNet(config.channels, config.blocks)
    net.load_state_dict(torch.load(io.BytesIO(weights), weights_only=True))
    net.eval()
    return self_play(net, config, n_games, np.random.default_rng(seed))


def play_generation(
    net: PolicyValueNet,
    config: AlphaZeroTrainConfig,
    rng: np.random.Generator,
    backend: str = "process",
    address: str | None = None,
    pool: WorkerPool | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``config.games`` self-play games, split over ``config.workers`` processes (in this one for 1; on
    ``pool``'s kept processes when given) or Ray tasks (``backend="ray"``, ``address`` to join a cluster).
    """
    if config.workers == 1 and backend == "process":
        return self_play(net, config, config.games, rng)
    buffer = io.BytesIO()
    torch.save(net.state_dict(), buffer)
    shares = [len(part) for part in np.array_split(np.arange(config.games), config.workers) if len(part)]
    tasks = [(buffer.getvalue(), asdict(config), n, int(rng.integers(2**63))) for n in shares]
    parts = run_batches(
        _self_play_task, tasks, backend=backend, workers=config.workers, address=address, pool=pool
    )
    return join_parts(parts)


def join_parts(
    parts: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray, int]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The workers' ``(planes, policies, values, plies)`` as one: the arrays joined, the plies summed."""
    return (
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts]),
        np.concatenate([p[2] for p in parts]),
        sum(p[3] for p in parts),
    )


MAX_BUFFER_POSITIONS = 20_000_000  # positions a buffer file may hold: 1.7 GB of 6x7 planes


class ReplayBuffer:
    """The last ``capacity`` positions, each stored with its mirror image."""

    def __init__(self, capacity: int, rules: Rules) -> None:
        self.capacity = capacity
        self.planes = np.zeros((0, rules.rows, rules.columns, 2), np.int8)
        self.policies = np.zeros((0, rules.columns), np.float32)
        self.values = np.zeros(0, np.float32)

    def __len__(self) -> int:
        return len(self.values)

    def add(self, planes: np.ndarray, policies: np.ndarray, values: np.ndarray) -> None:
        """Append ``n`` positions and their mirror images (columns reversed), then keep the last ``capacity``.

        Args:
            planes: ``(n, rows, columns, 2)`` int8 planes from the mover's side.
            policies: ``(n, columns)`` search policies (visit shares).
            values: ``(n,)`` game results for the mover, in [-1, 1].
        """
        planes = np.concatenate([planes, planes[:, :, ::-1]])
        policies = np.concatenate([policies, policies[:, ::-1]])
        values = np.concatenate([values, values])
        self.planes = np.concatenate([self.planes, planes])[-self.capacity :]
        self.policies = np.concatenate([self.policies, policies])[-self.capacity :]
        self.values = np.concatenate([self.values, values])[-self.capacity :]

    def sample(self, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``size`` positions drawn uniformly with replacement with ``rng``: ``(planes, policies, values)``,
        shaped as [`add`][connect4_agents.alphazero.selfplay.ReplayBuffer.add] takes them.
        """
        index = rng.integers(len(self), size=size)
        return self.planes[index], self.policies[index], self.values[index]

    def to_bytes(self) -> bytes:
        """The buffer as a compressed ``.npz`` archive of ``planes``, ``policies`` and ``values``, the file
        [`load`][connect4_agents.alphazero.selfplay.ReplayBuffer.load] reads.
        """
        stream = io.BytesIO()
        np.savez_compressed(stream, planes=self.planes, policies=self.policies, values=self.values)
        return stream.getvalue()

    def load(self, path: Path) -> None:
        """Replace the contents with a buffer written by `to_bytes` (its last ``capacity`` positions).

        Each array's header is read and checked (type, shape, at most `MAX_BUFFER_POSITIONS`
        positions) before its data, so a small file cannot ask for gigabytes; then the values must lie in
        [-1, 1] and the policies be finite and non-negative. Nothing changes when it fails.

        Raises:
            ValueError: the file is not such a buffer (another board, a damaged or foreign file).
            OSError: the file cannot be read.
        """
        expected = {
            "planes": (np.dtype(np.int8), self.planes.shape[1:]),
            "policies": (np.dtype(np.float32), self.policies.shape[1:]),
            "values": (np.dtype(np.float32), ()),
        }
        arrays: dict[str, np.ndarray] = {}
        try:
            with zipfile.ZipFile(path) as archive:
                for name, (dtype, tail) in expected.items():
                    with archive.open(f"{name}.npy") as stream:
                        version = np.lib.format.read_magic(stream)
                        read_header = (
                            np.lib.format.read_array_header_1_0
                            if version == (1, 0)
                            else np.lib.format.read_array_header_2_0
                        )
                        shape, fortran, found = read_header(stream)
                        if found != dtype or tuple(shape[1:]) != tail or fortran:
                            raise ValueError(
                                f"{name} is {found} {shape}; a buffer of this board holds {dtype} (n, {tail})"
                            )
                        if not shape or shape[0] > MAX_BUFFER_POSITIONS:
                            raise ValueError(
                                f"{name} holds {shape[0] if shape else 0:,} positions; at most {MAX_BUFFER_POSITIONS:,}"
                            )
                        arrays[name] = _read_data(stream, shape, dtype)  # the header checked: now the data
        except (
            KeyError,
            zipfile.BadZipFile,
            zlib.error,
            EOFError,
            RuntimeError,
            NotImplementedError,
        ) as error:
            raise ValueError(f"{path}: not a replay buffer written by train-alphazero ({error})") from None
        except ValueError as error:
            raise ValueError(f"{path}: not a replay buffer of this board ({error})") from None
        planes, policies, values = arrays["planes"], arrays["policies"], arrays["values"]
        if len(planes) != len(values) or len(policies) != len(values):
            raise ValueError(f"{path}: its arrays hold different numbers of positions")
        if not (np.isin(planes, (0, 1)).all() and np.isfinite(policies).all() and (policies >= 0).all()):
            raise ValueError(f"{path}: planes other than 0/1, or policies that are negative, NaN or infinite")
        if not (np.abs(values) <= 1).all():  # NaN fails this too
            raise ValueError(f"{path}: values outside [-1, 1] (or NaN)")
        self.planes, self.policies, self.values = (
            planes[-self.capacity :],
            policies[-self.capacity :],
            values[-self.capacity :],
        )


def _read_data(stream: Any, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """The C-ordered array of ``shape`` and ``dtype`` that follows an ``.npy`` header in ``stream``.

    Raises:
        ValueError: the stream ends before the array does.
    """
    array = np.empty(shape, dtype)
    view = memoryview(array.reshape(-1).view(np.uint8).data)
    got = 0
    while got < len(view):
        count = stream.readinto(view[got:])
        if not count:
            raise ValueError(f"the data ends after {got:,} of {len(view):,} bytes")
        got += count
    return array
