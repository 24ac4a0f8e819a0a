"""AlphaZero-style training: self-play with the PUCT search, a replay buffer with mirror images, SGD steps.

Each generation: ``games`` self-play games (``parallel`` of them searched in lockstep, so each network call
evaluates one leaf of every game), each move from ``simulations`` simulations with Dirichlet noise at the root
and, for the first ``temperature_moves`` moves, a move drawn in proportion to the visits (then the most
visited). Every position is stored with the visit distribution and the game's result for the player to move,
and with its mirror image. Then ``steps`` minibatches of ``batch_size`` from the buffer (the last
``buffer_size`` positions): cross-entropy to the visit distribution plus the squared value error, Adam with
weight decay. The model is saved (atomically) after every generation with the state needed to resume.

After each generation the model is measured on ``eval_positions`` solver-scored positions of its board from
the shipped test sets (on 6x7: 10 to 32 stones): the share of moves that keep the best outcome, for the raw
policy and with ``eval_simulations``. Self-play runs on ``workers`` processes.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from connect4_agents._support.files import atomic_write
from connect4_agents._support.progress import progress_bar
from connect4_agents.alphazero.files import load_model, save_model
from connect4_agents.alphazero.network import NetworkEvaluator, PolicyValueNet, planes_tensor
from connect4_agents.evaluation.accuracy import evaluate_accuracy
from connect4_agents.evaluation.backends import run_batches
from connect4_agents.evaluation.test_sets import TEST_SET_SPECS, Position, select_positions, test_set_names
from connect4_agents.mcts.puct import PUCTSearch

from connect4_env.core import Board, Rules
from connect4_env.encoding import observation_planes
from connect4_env.validation import check_int, check_number

__all__ = ["TrainConfig", "self_play", "ReplayBuffer", "train", "GenerationLog"]


@dataclass
class TrainConfig:
    rows: int = 6
    columns: int = 7
    win_length: int = 4
    channels: int = 64
    blocks: int = 4
    generations: int = 10
    games: int = 64
    parallel: int = 32
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

    def check(self) -> TrainConfig:
        """Raise TypeError / ValueError naming a bad setting; returns self."""
        Rules(self.rows, self.columns, self.win_length)
        for name, low in (
            ("channels", 1),
            ("blocks", 0),
            ("generations", 1),
            ("games", 1),
            ("parallel", 1),
            ("simulations", 1),
            ("temperature_moves", 0),
            ("buffer_size", 1),
            ("steps", 0),
            ("batch_size", 1),
            ("workers", 1),
            ("eval_positions", 0),
            ("eval_simulations", 0),
            ("ladder_every", 0),
            ("ladder_games", 1),
            ("seed", 0),
        ):
            check_int(name, getattr(self, name), low)
        check_number("c_puct", self.c_puct, 0.0)
        check_number("dirichlet_alpha", self.dirichlet_alpha, 0.0, above_minimum=True)
        check_number("noise", self.noise, 0.0, 1.0)
        check_number("lr", self.lr, 0.0, above_minimum=True)
        check_number("weight_decay", self.weight_decay, 0.0)
        return self

    @property
    def rules(self) -> Rules:
        return Rules(self.rows, self.columns, self.win_length)


def self_play(
    net: PolicyValueNet, config: TrainConfig, n_games: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Play ``n_games`` games (``config.parallel`` at a time in lockstep).

    Returns:
        ``(planes, policies, values, plies)``: every position from the mover's view ``(n, rows, columns, 2)``
        int8, the visit distributions ``(n, columns)``, the results for the mover ``(n,)`` (1, 0, -1), and the
        plies played.
    """
    rules = config.rules
    evaluator = NetworkEvaluator(net)
    planes: list[np.ndarray] = []
    policies: list[np.ndarray] = []
    values: list[float] = []
    plies = 0
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
        history: list[list[tuple[np.ndarray, np.ndarray, int]]] = [[] for _ in range(batch)]
        while True:
            active = [i for i, board in enumerate(boards) if not board.is_terminal]
            if not active:
                break
            roots = search.roots([boards[i] for i in active])
            search.run(roots, config.simulations)
            for i, root in zip(active, roots):
                board = boards[i]
                result = PUCTSearch.result(root)
                target = result.policy(1.0)
                temperature = 1.0 if board.ply < config.temperature_moves else 0.0
                choice = result.policy(temperature)
                column = int(rng.choice(len(choice), p=choice))
                history[i].append((observation_planes(board), target, board.to_move))
                board.play(column)
                plies += 1
        for board, moves in zip(boards, history):
            for board_planes, target, mover in moves:
                planes.append(board_planes)
                policies.append(target)
                values.append(0.0 if board.winner is None else (1.0 if board.winner == mover else -1.0))
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
    config = TrainConfig(**settings)
    net = PolicyValueNet(config.channels, config.blocks)
    net.load_state_dict(torch.load(io.BytesIO(weights), weights_only=True))
    net.eval()
    return self_play(net, config, n_games, np.random.default_rng(seed))


def play_generation(
    net: PolicyValueNet,
    config: TrainConfig,
    rng: np.random.Generator,
    backend: str = "process",
    address: str | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``config.games`` self-play games, split over ``config.workers`` processes (in this one for 1) or Ray
    tasks (``backend="ray"``, ``address`` to join a cluster)."""
    if config.workers == 1 and backend == "process":
        return self_play(net, config, config.games, rng)
    buffer = io.BytesIO()
    torch.save(net.state_dict(), buffer)
    shares = [len(part) for part in np.array_split(np.arange(config.games), config.workers) if len(part)]
    tasks = [(buffer.getvalue(), asdict(config), n, int(rng.integers(2**63))) for n in shares]
    parts = run_batches(_self_play_task, tasks, backend=backend, workers=config.workers, address=address)
    return (
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts]),
        np.concatenate([p[2] for p in parts]),
        sum(p[3] for p in parts),
    )


def evaluation_positions(rules: Rules, n: int, seed: int = 0) -> list[Position]:
    """``n`` solver-scored positions for ``rules`` from the shipped test sets (on 6x7 those with 10 to 32
    stones, the goal's range), drawn with ``seed``; empty when no set has this board."""
    names = [
        name
        for name in test_set_names()
        if (TEST_SET_SPECS[name].rows, TEST_SET_SPECS[name].columns, TEST_SET_SPECS[name].win_length)
        == (rules.rows, rules.columns, rules.win_length)
    ]
    if not names or n == 0:
        return []
    return select_positions(names, (10, 32) if rules == Rules() else None, n, seed)


def measure(net: PolicyValueNet, rules: Rules, positions: list[Position], simulations: int) -> float:
    """The share of ``positions`` where the agent's move keeps the best outcome (the optimal class)."""
    from connect4_agents.alphazero.agent import AlphaZeroAgent
    from connect4_agents.alphazero.files import ModelFile

    agent = AlphaZeroAgent(ModelFile(net, rules), simulations=simulations, seed=0, threads=None)
    report = evaluate_accuracy(agent, positions, workers=1, progress=False)
    return float(report.optimal_class_rate)


def ladder_elo(
    model_path: Path, config: TrainConfig, seed: int, backend: str = "process", address: str | None = None
) -> tuple[float, float, float]:
    """The model at ``model_path`` (``alphazero:<path>``, 200 simulations a move) against the reference 6x7
    ladder, ``config.ladder_games`` games per ladder agent: its Elo and 95 % interval, the ladder fixed."""
    from connect4_agents.evaluation.ratings import REFERENCE_LADDER, fit_ratings, read_ratings
    from connect4_agents.evaluation.tournament import pairing_counts, run_tournament

    ladder = read_ratings(REFERENCE_LADDER)
    spec = f"alphazero:{model_path}"
    result, _ = run_tournament(
        list(ladder),
        config.ladder_games,
        config.rules,
        seed=seed,
        gauntlet=spec,
        backend=backend,
        workers=config.workers,
        address=address,
        progress=False,
    )
    ratings = fit_ratings(pairing_counts(result), anchor=None, fixed=ladder, bootstrap=200, seed=seed)
    low, high = ratings.ci95[spec]
    return round(ratings.elo[spec], 1), round(low, 1), round(high, 1)


def _append_row(path: Path, row: dict[str, Any]) -> None:
    """Add ``row`` to the CSV log; a log written with other columns (an older version) is rewritten with
    these, its missing values left empty."""
    fields = list(row)
    old: list[dict[str, Any]] = []
    if path.exists():
        with open(path, newline="") as stream:
            reader = csv.DictReader(stream)
            same = reader.fieldnames == fields
            old = [] if same else [dict(r) for r in reader]
        if same:
            with open(path, "a", newline="") as stream:
                csv.DictWriter(stream, fieldnames=fields).writerow(row)
            return
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=fields, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(old + [row])
    _write(path, text.getvalue().encode())


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
        planes = np.concatenate([planes, planes[:, :, ::-1]])
        policies = np.concatenate([policies, policies[:, ::-1]])
        values = np.concatenate([values, values])
        self.planes = np.concatenate([self.planes, planes])[-self.capacity :]
        self.policies = np.concatenate([self.policies, policies])[-self.capacity :]
        self.values = np.concatenate([self.values, values])[-self.capacity :]

    def sample(self, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        index = rng.integers(len(self), size=size)
        return self.planes[index], self.policies[index], self.values[index]

    def to_bytes(self) -> bytes:
        stream = io.BytesIO()
        np.savez_compressed(stream, planes=self.planes, policies=self.policies, values=self.values)
        return stream.getvalue()

    def load(self, path: Path) -> None:
        with np.load(path, allow_pickle=False) as data:
            planes, policies, values = data["planes"], data["policies"], data["values"]
        if (
            planes.shape[1:] != self.planes.shape[1:]
            or len(planes) != len(values)
            or len(policies) != len(values)
        ):
            raise ValueError(f"{path}: a replay buffer of another board size or shape")
        self.planes, self.policies, self.values = (
            planes[-self.capacity :],
            policies[-self.capacity :],
            values[-self.capacity :],
        )


def _train_steps(
    net: PolicyValueNet,
    optimiser: torch.optim.Optimizer,
    buffer: ReplayBuffer,
    config: TrainConfig,
    rng: np.random.Generator,
) -> tuple[float, float]:
    net.train()
    policy_losses, value_losses = [], []
    for _ in range(config.steps):
        planes, policies, values = buffer.sample(min(config.batch_size, len(buffer)), rng)
        logits, predicted = net(planes_tensor(planes))
        target = torch.from_numpy(policies)
        policy_loss = -(target * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
        value_loss = torch.mean((predicted - torch.from_numpy(values)) ** 2)
        optimiser.zero_grad()
        (policy_loss + value_loss).backward()
        optimiser.step()
        policy_losses.append(policy_loss.item())
        value_losses.append(value_loss.item())
    net.eval()
    if not policy_losses:
        return float("nan"), float("nan")
    return float(np.mean(policy_losses)), float(np.mean(value_losses))


def _write(path: Path, data: bytes) -> None:
    atomic_write(path, lambda stream: stream.write(data))


@dataclass
class GenerationLog:
    generation: int
    games: int
    positions: int
    self_play_seconds: float
    games_per_hour: float
    train_seconds: float
    policy_loss: float
    value_loss: float
    buffer: int
    raw_accuracy: float
    search_accuracy: float
    elo: float = float("nan")
    elo_low: float = float("nan")
    elo_high: float = float("nan")


def plot_curve(log_path: Path, path: Path) -> Path:
    """The learning curve from ``log.csv``: losses and the measured accuracies per generation."""
    from connect4_agents._support.figures import pyplot, save_figure

    with open(log_path, newline="") as stream:
        rows = list(csv.DictReader(stream))
    generations = [int(r["generation"]) for r in rows]
    plt = pyplot()
    figure, (losses, accuracy, elo) = plt.subplots(1, 3, figsize=(14, 3.6))
    losses.plot(generations, [float(r["policy_loss"]) for r in rows], label="policy (cross-entropy)")
    losses.plot(generations, [float(r["value_loss"]) for r in rows], label="value (squared error)")
    losses.set_xlabel("generation")
    losses.set_title("training losses")
    losses.legend()
    for key, label in (("raw_accuracy", "raw policy"), ("search_accuracy", "with search")):
        values = [float(r.get(key) or "nan") for r in rows]
        accuracy.plot(generations, [100 * v for v in values], marker=".", label=label)
    accuracy.set_xlabel("generation")
    accuracy.set_ylabel("% of moves keeping the best outcome")
    accuracy.set_title("against perfect play (solver-scored positions)")
    accuracy.legend()
    rated = [(g, r) for g, r in zip(generations, rows) if (r.get("elo") or "nan") != "nan"]
    if rated:
        points = [float(r["elo"]) for _, r in rated]
        lows = [points[i] - float(r["elo_low"]) for i, (_, r) in enumerate(rated)]
        highs = [float(r["elo_high"]) - points[i] for i, (_, r) in enumerate(rated)]
        elo.errorbar([g for g, _ in rated], points, yerr=[lows, highs], marker="o", capsize=3)
    elo.set_xlabel("generation")
    elo.set_title("Elo against the reference ladder (200 simulations)")
    figure.tight_layout()
    return save_figure(figure, path)


def _tensorboard(folder: Path) -> Any:
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # tensorboard (the train extra) missing: the CSV log remains
        return None
    return SummaryWriter(str(folder))


def train(
    config: TrainConfig,
    out: str | os.PathLike[str],
    resume: bool = False,
    on_generation: Callable[[GenerationLog], None] | None = None,
    *,
    backend: str = "process",
    address: str | None = None,
    progress: bool = False,
) -> Path:
    """Run ``config.generations`` generations, saving after each ``out/model.zip``, ``out/buffer.npz``,
    ``out/state.json``, a line of ``out/log.csv``, TensorBoard scalars under ``out/tensorboard`` and the curve
    ``out/curve.png``. ``resume`` continues from them. ``backend``/``address``: where self-play runs (see
    :func:`play_generation`). ``progress``: a progress bar over the generations. Returns the model's path."""
    config.check()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rules = config.rules
    ladder_path = out / "ladder-model.zip"
    model_path, buffer_path, state_path, log_path = (
        out / n for n in ("model.zip", "buffer.npz", "state.json", "log.csv")
    )
    net = PolicyValueNet(config.channels, config.blocks)
    buffer = ReplayBuffer(config.buffer_size, rules)
    start = 0
    rng = np.random.default_rng(config.seed)
    optimiser = torch.optim.Adam(net.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    if resume and model_path.exists():
        model = load_model(model_path)
        if model.rules != rules or model.net.config() != net.config():
            raise ValueError(f"{model_path} is another board or network than the settings given")
        net = model.net
        optimiser = torch.optim.Adam(net.parameters(), lr=config.lr, weight_decay=config.weight_decay)
        start = int(model.info.get("generation", 0))
        if buffer_path.exists():
            buffer.load(buffer_path)
        rng = np.random.default_rng([config.seed, start])
    positions = evaluation_positions(rules, config.eval_positions, config.seed)
    board = _tensorboard(out / "tensorboard")
    bar = progress_bar(config.generations, "generations", unit="gen") if progress else None

    def save(generation: int, log: GenerationLog) -> None:
        _write(buffer_path, buffer.to_bytes())
        save_model(model_path, net, rules, {"generation": generation, "config": asdict(config)})
        _write(
            state_path, json.dumps({"generation": generation, "config": asdict(config)}, indent=2).encode()
        )
        _append_row(log_path, asdict(log))
        if board is not None:
            for key, value in asdict(log).items():
                if key != "generation":
                    board.add_scalar(key, value, generation)
            board.flush()
        plot_curve(log_path, out / "curve.png")

    try:
        for generation in range(start + 1, start + config.generations + 1):
            log = _generation(generation, net, optimiser, buffer, config, rng, positions, backend, address)
            if rules == Rules() and config.ladder_every and generation % config.ladder_every == 0:
                with _interrupt_after():
                    save_model(ladder_path, net, rules, {"generation": generation})
                log.elo, log.elo_low, log.elo_high = ladder_elo(
                    ladder_path, config, generation, backend, address
                )
            with _interrupt_after():  # a Ctrl-C here waits until the whole checkpoint is written
                save(generation, log)
            if bar is not None:
                bar.update(1)
            if on_generation is not None:
                on_generation(log)
    finally:
        if bar is not None:
            bar.close()
        if board is not None:
            board.close()
    return model_path


@contextlib.contextmanager
def _interrupt_after() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back for the block (in the main thread); then act on the first that came, as
    its handler would have."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {
        number: signal.signal(number, lambda n, _: caught.append(n))
        for number in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    if caught:
        number = signal.Signals(caught[0])
        handler = previous[number]
        if callable(handler):
            handler(number, None)
        elif handler == signal.SIG_DFL:
            signal.raise_signal(number)


def _generation(
    generation: int,
    net: PolicyValueNet,
    optimiser: torch.optim.Optimizer,
    buffer: ReplayBuffer,
    config: TrainConfig,
    rng: np.random.Generator,
    positions: list[Position],
    backend: str,
    address: str | None,
) -> GenerationLog:
    """Self-play, training steps and the measurement of one generation."""
    rules = config.rules
    began = time.perf_counter()
    planes, policies, values, _ = play_generation(net, config, rng, backend, address)
    played = time.perf_counter() - began
    buffer.add(planes, policies, values)
    began = time.perf_counter()
    policy_loss, value_loss = _train_steps(net, optimiser, buffer, config, rng)
    trained = time.perf_counter() - began
    raw = search = float("nan")
    if positions:
        raw = round(measure(net, rules, positions, 0), 4)
        if config.eval_simulations:
            search = round(measure(net, rules, positions, config.eval_simulations), 4)
    log = GenerationLog(
        generation,
        config.games,
        len(values),
        round(played, 2),
        round(3600 * config.games / played, 1) if played > 0 else float("inf"),
        round(trained, 2),
        round(policy_loss, 4),
        round(value_loss, 4),
        len(buffer),
        raw,
        search,
    )
    return log
