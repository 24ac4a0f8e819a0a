"""AlphaZero-style training: self-play with the PUCT search, a replay buffer with mirror images, SGD steps.

Each generation: ``games`` self-play games (``parallel`` of them searched in lockstep, so each network call
evaluates one leaf of every game), each move from ``simulations`` simulations with Dirichlet noise at the root
and, for the first ``temperature_moves`` moves, a move drawn in proportion to the visits (then the most
visited). Every position is stored with the visit distribution and the game's result for the player to move,
and with its mirror image. Then ``steps`` minibatches of ``batch_size`` from the buffer (the last
``buffer_size`` positions): cross-entropy to the visit distribution plus the squared value error, Adam with
weight decay. The model is saved (atomically) after every generation with the state needed to resume.

Options on top (both off by default): ``playout_cap`` below 1 searches only that share of the moves with
``simulations`` (and noise) and keeps only their positions, the others getting ``fast_simulations``
(playout-cap randomisation); ``value_mix`` moves the value targets from the game's result towards the search's
root value.

After each generation the model is measured on ``eval_positions`` solver-scored positions of its board from
the shipped test sets (on 6x7: 10 to 32 stones): the share of moves that keep the best outcome, for the raw
policy and with ``eval_simulations``. Self-play runs on ``workers`` processes.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

from connect4_agents._support.progress import progress_bar
from connect4_agents.alphazero.agent import shipped_model_path
from connect4_agents.alphazero.config import AlphaZeroTrainConfig
from connect4_agents.alphazero.files import ModelFile, load_model, save_model
from connect4_agents.alphazero.monitor import (
    GenerationLog,
    _append_row,
    _tensorboard,
    _write,
    evaluation_positions,
    ladder_elo,
    measure,
    plot_curve,
)
from connect4_agents.alphazero.network import PolicyValueNet, planes_tensor
from connect4_agents.alphazero.selfplay import ReplayBuffer, forward_precision, play_generation
from connect4_agents.alphazero.teacher import teacher_generation
from connect4_agents.alphazero.winograd import require_winograd
from connect4_agents.evaluation.backends import WorkerPool
from connect4_agents.evaluation.test_sets import Position
from connect4_env.rules import Rules

__all__ = [
    "train",
    "training_device",
]


def training_device(name: str) -> torch.device:
    """The torch device that ``AlphaZeroTrainConfig.device`` names (``"auto"``: the first CUDA GPU when torch
    sees one, else the CPU). Raises ValueError for a CUDA device that torch does not see.
    """
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        index = device.index or 0
        if index >= count:
            raise ValueError(
                f"device={name!r}: torch sees {count} CUDA device(s) (a CPU build of torch sees none); "
                "use 'auto' or 'cpu'"
            )
    return device


def _train_steps(
    net: PolicyValueNet,
    optimiser: torch.optim.Optimizer,
    buffer: ReplayBuffer,
    config: AlphaZeroTrainConfig,
    rng: np.random.Generator,
    device: torch.device | None = None,
) -> tuple[float, float]:
    """``config.steps`` Adam steps on minibatches from ``buffer``, on ``device`` (default the CPU); the network
    is back on the CPU, in eval mode, afterwards (self-play and the measurement run there). Returns the mean
    policy and value losses.
    """
    device = device if device is not None else torch.device("cpu")
    net.to(device)  # in place: the optimiser's parameters are the same tensors, its state follows them
    net.train()
    policy_losses, value_losses = [], []
    try:
        for _ in range(config.steps):
            planes, policies, values = buffer.sample(min(config.batch_size, len(buffer)), rng)
            logits, predicted = net(planes_tensor(planes).to(device))
            target = torch.from_numpy(policies).to(device)
            policy_loss = -(target * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
            value_loss = torch.mean((predicted - torch.from_numpy(values).to(device)) ** 2)
            optimiser.zero_grad()
            (policy_loss + value_loss).backward()
            optimiser.step()
            policy_losses.append(policy_loss.detach())  # read once at the end: no device sync per step
            value_losses.append(value_loss.detach())
    finally:
        net.to("cpu")
        net.eval()
    if not policy_losses:
        return float("nan"), float("nan")
    return float(torch.stack(policy_losses).mean()), float(torch.stack(value_losses).mean())


def check_resumable(out: str | os.PathLike[str], resume: bool) -> None:
    """Nothing, unless ``resume`` is asked for and ``out`` holds no ``model.zip`` to go on from (a mistyped
    folder would otherwise start a new run without a word).

    Raises:
        ValueError: that case.
    """
    if resume and not (Path(out) / "model.zip").exists():
        raise ValueError(
            f"resume: {out} holds no model.zip to go on from (leave resume out to start a new run)"
        )


def train(
    config: AlphaZeroTrainConfig,
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
    `play_generation`). ``progress``: a progress bar over the generations. Returns the model's path.
    """
    config.check()
    device = training_device(config.device)
    if forward_precision(config.precision) == "winograd":
        require_winograd()  # a MissingExtraError naming the extra here, before any worker starts
    out = Path(out)
    rules = config.rules
    ladder_path = out / "ladder-model.zip"
    model_path, buffer_path = out / "model.zip", out / "buffer.npz"
    check_resumable(out, resume)
    # the workers of every generation's games, kept from one to the next (started and loaded once)
    pool = WorkerPool(config.workers) if backend == "process" and config.workers > 1 else None
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(config.seed)  # the first weights and every torch draw: the same seed, the same run
    net = PolicyValueNet(config.channels, config.blocks)
    buffer = ReplayBuffer(config.buffer_size, rules)
    start = 0
    rng = np.random.default_rng(config.seed)
    if config.init:
        net.load_state_dict(_initial_model(config, net).net.state_dict())
    optimiser = torch.optim.Adam(net.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    if resume:
        net, optimiser, start, rng = _resume(config, net, buffer, model_path, buffer_path)
    positions = evaluation_positions(rules, config.eval_positions, config.seed)
    board = _tensorboard(out / "tensorboard")
    bar = progress_bar(config.generations, "generations", unit="gen") if progress else None

    try:
        for generation in range(start + 1, start + config.generations + 1):
            log = _generation(
                generation, net, optimiser, buffer, config, rng, positions, backend, address, device, pool
            )
            if rules == Rules() and config.ladder_every and generation % config.ladder_every == 0:
                _rate_on_ladder(log, net, config, generation, ladder_path, backend, address)
            with _interrupt_after():  # a Ctrl-C here waits until the whole checkpoint is written
                _save_generation(out, generation, log, net, buffer, config, board)
            if bar is not None:
                bar.update(1)
            if on_generation is not None:
                on_generation(log)
    except BaseException:
        if pool is not None:
            pool.close(terminate=True)
        raise
    finally:
        if pool is not None:
            pool.close()
        if bar is not None:
            bar.close()
        if board is not None:
            board.close()
    return model_path


def _save_generation(
    out: Path,
    generation: int,
    log: GenerationLog,
    net: PolicyValueNet,
    buffer: ReplayBuffer,
    config: AlphaZeroTrainConfig,
    board: Any,
) -> None:
    """Write a generation's checkpoint in ``out``: the buffer, the model, the state, a line of the log, the
    TensorBoard scalars (``board``, when there is one) and the curve.
    """
    _write(out / "buffer.npz", buffer.to_bytes())
    save_model(out / "model.zip", net, config.rules, {"generation": generation, "config": asdict(config)})
    _write(
        out / "state.json",
        json.dumps({"generation": generation, "config": asdict(config)}, indent=2).encode(),
    )
    _append_row(out / "log.csv", asdict(log))
    if board is not None:
        for key, value in asdict(log).items():
            if key != "generation":
                board.add_scalar(key, value, generation)
        board.flush()
    plot_curve(out / "log.csv", out / "curve.png")


def _resume(
    config: AlphaZeroTrainConfig,
    net: PolicyValueNet,
    buffer: ReplayBuffer,
    model_path: Path,
    buffer_path: Path,
) -> tuple[PolicyValueNet, torch.optim.Adam, int, np.random.Generator]:
    """The network, a fresh optimiser, the last generation and the random generator of a run going on from
    ``model_path`` (and ``buffer_path``, loaded into ``buffer`` when it exists).
    """
    model = load_model(model_path)
    if model.rules != config.rules or model.net.config() != net.config():
        raise ValueError(f"{model_path} is another board or network than the settings given")
    optimiser = torch.optim.Adam(model.net.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    start = int(model.info.get("generation", 0))
    if buffer_path.exists():
        buffer.load(buffer_path)
    torch.manual_seed(config.seed + start)
    return model.net, optimiser, start, np.random.default_rng([config.seed, start])


def _rate_on_ladder(
    log: GenerationLog,
    net: PolicyValueNet,
    config: AlphaZeroTrainConfig,
    generation: int,
    ladder_path: Path,
    backend: str,
    address: str | None,
) -> None:
    """Save the network to ``ladder_path`` and write its Elo on the reference ladder into ``log``."""
    with _interrupt_after():
        save_model(ladder_path, net, config.rules, {"generation": generation})
    log.elo, log.elo_low, log.elo_high = ladder_elo(ladder_path, config, generation, backend, address)


def _initial_model(config: AlphaZeroTrainConfig, net: PolicyValueNet) -> ModelFile:
    """The model ``config.init`` names (``"shipped"``: the package's 6x7 model), checked against the run's board
    and network ``net``.
    """
    path = shipped_model_path() if config.init == "shipped" else Path(config.init)
    if path is None:
        raise ValueError("init='shipped': this version ships no AlphaZero model")
    if not path.is_file():
        raise ValueError(f"init={config.init!r}: no such model file")
    model = load_model(path)
    wanted = net.config()
    if model.rules != config.rules or model.net.config() != wanted:
        raise ValueError(
            f"init={config.init!r} is a {model.rules.rows}x{model.rules.columns} model with network "
            f"{model.net.config()}; the run is {config.rows}x{config.columns} with network {wanted}"
        )
    return model


@contextlib.contextmanager
def _interrupt_after() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back for the block (in the main thread); then act on the first that came, as
    its handler would have.
    """
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
    config: AlphaZeroTrainConfig,
    rng: np.random.Generator,
    positions: list[Position],
    backend: str,
    address: str | None,
    device: torch.device | None = None,
    pool: WorkerPool | None = None,
) -> GenerationLog:
    """Self-play, training steps and the measurement of one generation (the games on ``pool``'s workers when
    given).
    """
    rules = config.rules
    began = time.perf_counter()
    if config.teacher == "solver":
        planes, policies, values, _ = teacher_generation(config, rng, backend, address, pool)
    else:
        planes, policies, values, _ = play_generation(net, config, rng, backend, address, pool)
    played = time.perf_counter() - began
    buffer.add(planes, policies, values)
    began = time.perf_counter()
    threads = torch.get_num_threads()
    torch.set_num_threads(max(threads, config.workers))  # the workers are idle while the network trains
    try:
        policy_loss, value_loss = _train_steps(net, optimiser, buffer, config, rng, device)
    finally:
        torch.set_num_threads(threads)
    trained = time.perf_counter() - began
    raw = search = raw_nontrivial = search_nontrivial = float("nan")
    if positions:
        raw, raw_nontrivial = (round(x, 4) for x in measure(net, rules, positions, 0))
        if config.eval_simulations:
            search, search_nontrivial = (
                round(x, 4) for x in measure(net, rules, positions, config.eval_simulations)
            )
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
        raw_nontrivial=raw_nontrivial,
        search_nontrivial=search_nontrivial,
    )
    return log
