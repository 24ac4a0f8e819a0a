"""The network evaluator, AlphaZeroAgent, training and safe model files (the PUCT search itself: tests/agents/mcts)."""

from __future__ import annotations

import csv
import io
import json
import pickle
import time
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from helpers.extras import importorskip, needs_book

torch = importorskip("torch")

from helpers.networks import net_with_batch_norm_statistics  # noqa: E402
from helpers.reference import random_board  # noqa: E402

from connect4_agents import SolverAgent  # noqa: E402
from connect4_agents.alphazero import AlphaZeroAgent, PolicyValueNet, load_model, save_model  # noqa: E402
from connect4_agents.alphazero.network import NetworkEvaluator  # noqa: E402
from connect4_agents.evaluation.arena import play_game  # noqa: E402
from connect4_agents.evaluation.test_sets import load_test_set  # noqa: E402
from connect4_env import Board, Rules  # noqa: E402
from connect4_env.encoding import action_mask, observation_planes  # noqa: E402

torch.set_num_threads(1)


def test_network_shapes_on_any_board() -> None:
    net = PolicyValueNet(channels=8, blocks=1)
    for rows, columns in ((6, 7), (4, 5), (9, 3), (1, 8)):
        planes = np.zeros((3, rows, columns, 2), dtype=np.int8)
        logits, values = NetworkEvaluator(net).predict(planes)
        assert logits.shape == (3, columns) and values.shape == (3,) and np.all(np.abs(values) <= 1)


def test_raw_policy_is_the_best_legal_prior() -> None:
    net = PolicyValueNet(channels=8, blocks=1)
    agent = AlphaZeroAgent(net, simulations=0, seed=0).bind(Rules())
    for seed in range(20):
        board = random_board(np.random.default_rng(seed), 20)
        if board.is_terminal:
            continue
        priors, _ = NetworkEvaluator(net, symmetric=True).evaluate([board])  # the agent's default
        column = agent.act(observation_planes(board), action_mask(board))
        assert board.is_legal(column) and priors[0, column] == priors[0].max()
        assert agent.move_info() is None


def test_bfloat16_forward_passes_stay_close_to_float32() -> None:
    # self-play's precision="bfloat16": the same network under autocast, within bfloat16's rounding
    from connect4_agents.alphazero.agent import shipped_model_path

    net = (
        load_model(shipped_model_path()).net
        if shipped_model_path()
        else PolicyValueNet(channels=16, blocks=1)
    )
    boards = [random_board(np.random.default_rng(seed), 14) for seed in range(16)]
    boards = [board for board in boards if not board.is_terminal]
    full_priors, full_values = NetworkEvaluator(net).evaluate(boards)
    with warnings.catch_warnings():  # this CPU may emulate bfloat16 (slowly): the outputs are what count here
        warnings.simplefilter("ignore", RuntimeWarning)
        half_priors, half_values = NetworkEvaluator(net, precision="bfloat16").evaluate(boards)
    assert half_priors.dtype == np.float64 and np.allclose(half_priors.sum(axis=1), 1.0)
    assert np.abs(half_priors - full_priors).max() < 0.05
    assert np.abs(half_values - full_values).max() < 0.05
    for board, priors in zip(boards, half_priors):
        assert all(priors[c] == 0 for c in range(board.rules.columns) if not board.is_legal(c))


def test_the_bfloat16_snapshot_keeps_its_trunk_in_bfloat16_and_stays_close_to_float32() -> None:
    import torch

    net = net_with_batch_norm_statistics(5, channels=16, blocks=2)
    planes = np.stack(
        [observation_planes(random_board(np.random.default_rng(seed), 12)) for seed in range(9)]
    )
    x = torch.from_numpy(planes.transpose(0, 3, 1, 2).astype(np.float32).copy())
    with torch.inference_mode():
        full_logits, full_values = net.inference()(x)
        half_logits, half_values = net.inference(torch.bfloat16)(x)
    # the heads answer in float32 whatever the trunk computed in
    assert half_logits.dtype == torch.float32 and half_values.dtype == torch.float32
    scale = float(full_logits.abs().max()) + 1
    assert (
        0 < float((half_logits - full_logits).abs().max()) < 0.05 * scale
    )  # rounded, not recomputed in float32
    assert float((half_values - full_values).abs().max()) < 0.05
    evaluator = NetworkEvaluator(net)
    full, _ = evaluator.predict(planes)
    evaluator.precision = "bfloat16"  # changed after a snapshot was taken: a bfloat16 one from then on
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        half, _ = evaluator.predict(planes)
    assert np.allclose(full, full_logits.numpy(), atol=1e-5) and np.allclose(
        half, half_logits.numpy(), atol=1e-6
    )
    with pytest.raises(ValueError, match="torch.float32 or torch.bfloat16"):
        net.inference(torch.float16)
    with pytest.raises(TypeError, match="torch.dtype"):
        net.inference("bfloat16")  # type: ignore[arg-type]


def test_auto_precision_takes_bfloat16_only_where_the_cpu_computes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from connect4_agents.alphazero import selfplay
    from connect4_agents.alphazero.config import AlphaZeroTrainConfig

    assert AlphaZeroTrainConfig().precision == "auto"
    monkeypatch.setattr(selfplay, "native_bfloat16", lambda: False)
    assert selfplay.forward_precision("auto") in ("float32", "winograd")  # winograd with numba: test_winograd
    assert selfplay.forward_precision("bfloat16") == "bfloat16"  # named: as asked (and it warns there)
    monkeypatch.setattr(selfplay, "native_bfloat16", lambda: True)
    assert selfplay.forward_precision("auto") == "bfloat16"
    assert selfplay.forward_precision("float32") == "float32"


def _module_outputs(net: torch.nn.Module, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from connect4_agents.alphazero.network import planes_tensor

    with torch.no_grad():
        logits, values = net.eval()(planes_tensor(planes))
    return logits.numpy(), values.numpy()


def test_the_inference_snapshot_gives_the_networks_eval_mode_outputs() -> None:
    # batch norm folded into the convolutions: the modules' outputs up to float rounding, on any board
    rng = np.random.default_rng(0)
    for seed, (rows, columns) in enumerate(((6, 7), (4, 5), (7, 9))):
        net = net_with_batch_norm_statistics(seed)
        planes = np.stack(
            [observation_planes(random_board(rng, int(rng.integers(0, 12)), rows, columns)) for _ in range(9)]
        )
        logits, values = NetworkEvaluator(net).predict(planes)
        expected_logits, expected_values = _module_outputs(net, planes)
        assert np.abs(logits - expected_logits).max() < 1e-4
        assert np.abs(values - expected_values).max() < 1e-5


def test_the_snapshot_stores_subnormal_weights_as_zero_with_the_same_outputs() -> None:
    # weight decay drives the weights of channels that never fire below float32's normal range, where a CPU
    # computes many times slower; the snapshot drops them, which changes no output beyond float rounding
    from connect4_agents.alphazero.winograd import without_subnormals

    tiny = torch.finfo(torch.float32).tiny
    values = torch.tensor([[1e-39, -1e-40, tiny, -2.0], [0.0, 1e-45, 3e-38, 5e-39]]).T  # not contiguous
    cleaned = without_subnormals(values)
    assert cleaned.is_contiguous() and cleaned.dtype == torch.float32
    assert cleaned.T.tolist() == [[0.0, 0.0, tiny, -2.0], [0.0, 0.0, values[2, 1].item(), 0.0]]
    net = net_with_batch_norm_statistics(2)
    with torch.no_grad():  # a dead channel: its weights and statistics decayed to subnormals
        net.trunk[0].conv1.weight[5] = 1e-40
        net.trunk[0].bn1.running_mean[5] = 1e-41
        net.value[0].weight[:, :3] = -1e-42
    rng = np.random.default_rng(3)
    planes = np.stack([observation_planes(random_board(rng, int(rng.integers(0, 12)))) for _ in range(9)])
    logits, values_out = NetworkEvaluator(net).predict(planes)
    expected_logits, expected_values = _module_outputs(net, planes)
    assert np.abs(logits - expected_logits).max() < 1e-4
    assert np.abs(values_out - expected_values).max() < 1e-5


def test_the_evaluator_follows_the_networks_weights_as_they_change() -> None:
    # the snapshot is taken again after a load_state_dict, an optimiser step, a train-mode forward pass and a
    # parameter assigned in another's place
    rng = np.random.default_rng(1)
    planes = np.stack([observation_planes(random_board(rng, 10)) for _ in range(6)])
    net = net_with_batch_norm_statistics(0)
    evaluator = NetworkEvaluator(net)
    first, _ = evaluator.predict(planes)
    net.load_state_dict(net_with_batch_norm_statistics(1).state_dict())
    optimiser = torch.optim.SGD(net.parameters(), lr=0.1)
    from connect4_agents.alphazero.network import planes_tensor

    changes = [
        lambda: None,  # the load above
        lambda: (optimiser.zero_grad(), net(planes_tensor(planes))[1].sum().backward(), optimiser.step()),
        lambda: net.train()(planes_tensor(planes)),  # moves the running statistics only
        lambda: setattr(net.policy[2], "bias", torch.nn.Parameter(net.policy[2].bias.detach() + 1.0)),
    ]
    previous = first
    for change in changes:
        change()
        logits, values = evaluator.predict(planes)
        expected_logits, expected_values = _module_outputs(net, planes)
        assert np.abs(logits - expected_logits).max() < 1e-4 and np.abs(values - expected_values).max() < 1e-5
        assert np.abs(logits - previous).max() > 1e-3  # the change reached the evaluator
        previous = logits


def test_an_evaluator_and_an_agent_that_have_moved_survive_pickle_and_deepcopy() -> None:
    import copy
    import pickle

    net = net_with_batch_norm_statistics(2)
    planes = np.stack([observation_planes(random_board(np.random.default_rng(seed), 9)) for seed in range(3)])
    evaluator = NetworkEvaluator(net)
    expected = evaluator.predict(planes)  # holds a snapshot now
    for copied in (pickle.loads(pickle.dumps(evaluator)), copy.deepcopy(evaluator)):
        for got, want in zip(copied.predict(planes), expected):
            assert np.allclose(got, want, atol=1e-6)
    agent = AlphaZeroAgent(net, simulations=8, seed=0).bind(Rules())
    board = random_board(np.random.default_rng(5), 6)
    column = agent.act(observation_planes(board), action_mask(board))
    again = pickle.loads(pickle.dumps(agent))
    again.reset(seed=0)
    agent.reset(seed=0)
    assert again.act(observation_planes(board), action_mask(board)) == agent.act(
        observation_planes(board), action_mask(board)
    )
    assert board.is_legal(column)


def test_each_thread_asks_torch_for_its_threads_before_its_first_forward_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A network built on one thread (a Kaggle agent builds it in the background) spent tenths of a second in
    the first convolution on another thread: the evaluator now asks torch for its thread count first on each
    new thread, which sets them up as torch.set_num_threads last did."""
    import threading

    evaluator = NetworkEvaluator(PolicyValueNet(channels=8, blocks=1))
    asked: list[int] = []
    real = torch.get_num_threads
    monkeypatch.setattr(torch, "get_num_threads", lambda: asked.append(threading.get_ident()) or real())
    board = Board()
    evaluator.evaluate([board])
    evaluator.evaluate([board])
    assert asked == [threading.get_ident()]  # once a thread
    other = threading.Thread(target=evaluator.evaluate, args=([board],))
    other.start()
    other.join()
    assert len(asked) == 2 and asked[1] != asked[0]
    copy = pickle.loads(pickle.dumps(evaluator))  # another process's threads are not this one's
    copy.evaluate([board])
    assert len(asked) == 3


def test_a_network_of_another_class_runs_through_its_own_forward() -> None:
    class Shifted(PolicyValueNet):
        def forward(self, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            logits, values = super().forward(planes)
            return logits + torch.arange(logits.shape[1]), values * 0.5

    net = Shifted(channels=8, blocks=1)
    planes = np.stack([observation_planes(random_board(np.random.default_rng(seed), 8)) for seed in range(4)])
    logits, values = NetworkEvaluator(net).predict(planes)
    expected_logits, expected_values = _module_outputs(net, planes)
    assert np.allclose(logits, expected_logits, atol=1e-6) and np.allclose(values, expected_values, atol=1e-6)


def test_snapshot_false_runs_the_modules_and_follows_the_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    net = net_with_batch_norm_statistics(3)
    planes = np.stack([observation_planes(random_board(np.random.default_rng(seed), 7)) for seed in range(5)])
    taken: list[int] = []
    inference = PolicyValueNet.inference
    monkeypatch.setattr(
        PolicyValueNet,
        "inference",
        lambda self, *dtype, **options: taken.append(1) or inference(self, *dtype, **options),
    )
    evaluator = NetworkEvaluator(net, snapshot=False)
    logits, values = evaluator.predict(planes)
    expected_logits, expected_values = _module_outputs(net, planes)
    # the modules' own outputs (no folding, so equal up to the last bit), and no snapshot was taken
    assert np.allclose(logits, expected_logits, atol=1e-7) and np.allclose(values, expected_values, atol=1e-7)
    assert taken == []
    evaluator.snapshot = True  # switched on later: the snapshot from then on
    snapped, _ = evaluator.predict(planes)
    assert taken == [1] and np.abs(snapped - expected_logits).max() < 1e-4
    for bad in ("no", 0, None):
        with pytest.raises(TypeError, match="snapshot must be True or False"):
            NetworkEvaluator(net, snapshot=bad)  # type: ignore[arg-type]


def test_bfloat16_without_native_support_warns(monkeypatch: pytest.MonkeyPatch) -> None:
    from connect4_agents.alphazero import network

    net = PolicyValueNet(channels=8, blocks=1)
    monkeypatch.setattr(network, "native_bfloat16", lambda: False)
    with pytest.warns(RuntimeWarning, match="without native bfloat16.*precision='float32'"):
        NetworkEvaluator(net, precision="bfloat16")
    monkeypatch.setattr(network, "native_bfloat16", lambda: True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        NetworkEvaluator(net, precision="bfloat16")
        NetworkEvaluator(net)  # float32 never warns
    monkeypatch.undo()
    assert isinstance(network.native_bfloat16(), bool)


def test_precision_is_checked() -> None:
    from connect4_agents.alphazero.config import AlphaZeroTrainConfig

    net = PolicyValueNet(channels=8, blocks=1)
    with pytest.raises(ValueError, match="float16"):
        NetworkEvaluator(net, precision="float16")
    with pytest.raises(ValueError, match="'auto', 'float32', 'winograd', 'bfloat16'"):
        AlphaZeroTrainConfig(precision="half").check()
    with pytest.raises(TypeError, match="precision must be a str"):
        AlphaZeroTrainConfig(precision=16).check()  # type: ignore[arg-type]


def test_the_symmetric_evaluator_averages_a_position_with_its_mirror_image() -> None:
    rng = np.random.default_rng(3)
    for rows, columns in ((6, 7), (4, 5)):
        net = PolicyValueNet(channels=8, blocks=1)
        plain, symmetric = NetworkEvaluator(net), NetworkEvaluator(net, symmetric=True)
        boards, mirrors = [], []
        while len(boards) < 6:
            moves = [int(c) for c in rng.integers(0, columns, size=int(rng.integers(0, 8)))]
            try:
                board = Board.from_moves(moves, Rules(rows=rows, columns=columns))
            except ValueError:  # a full column or a finished game
                continue
            if board.is_terminal:
                continue
            boards.append(board)
            mirrors.append(
                Board.from_moves([columns - 1 - c for c in moves], Rules(rows=rows, columns=columns))
            )
        logits, values = plain.predict(np.stack([observation_planes(b) for b in boards]))
        mirror_logits, mirror_values = plain.predict(np.stack([observation_planes(b) for b in mirrors]))
        priors, averaged = symmetric.evaluate(boards)
        expected = (logits + mirror_logits[:, ::-1]) / 2
        masks = np.stack([action_mask(b).astype(bool) for b in boards])
        expected = np.where(masks, np.exp(expected - expected.max(axis=1, keepdims=True)), 0)
        np.testing.assert_allclose(priors, expected / expected.sum(axis=1, keepdims=True), rtol=1e-5)
        np.testing.assert_allclose(averaged, (values + mirror_values) / 2, rtol=1e-5, atol=1e-7)
        mirrored_priors, mirrored_values = symmetric.evaluate(mirrors)  # a position and its image agree
        np.testing.assert_allclose(mirrored_priors[:, ::-1], priors, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(mirrored_values, averaged, rtol=1e-5, atol=1e-7)
    with pytest.raises(TypeError, match="symmetric"):
        AlphaZeroAgent(PolicyValueNet(channels=8, blocks=1), symmetric="yes")  # type: ignore[arg-type]
    threads = torch.get_num_threads()
    for bad in ({"symmetric": None}, {"simulations": -1}, {"model": 3}):
        with pytest.raises((TypeError, ValueError)):
            AlphaZeroAgent(**{"model": PolicyValueNet(channels=8, blocks=1), "threads": threads + 1, **bad})
        assert torch.get_num_threads() == threads  # a failed constructor leaves torch's threads alone


def test_agent_plays_legal_moves_and_records_its_search() -> None:
    agent = AlphaZeroAgent(PolicyValueNet(channels=8, blocks=1), simulations=20, seed=0)
    for position in load_test_set("6x7-middle-easy")[:30]:
        board = position.board()
        column = agent.act(observation_planes(board), action_mask(board))
        assert board.is_legal(column)
        info = agent.move_info()
        assert info is not None and info["column"] == column and sum(info["visits"]) > 0


class CountingClock:
    """A clock that moves ``step`` seconds each time it is read: a search's time is a count of reads."""

    def __init__(self, step: float) -> None:
        self.step, self.now = step, 0.0

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_a_time_limit_stops_the_search_before_its_simulations() -> None:
    """The search reads its clock before each simulation: with a clock that moves 1 s a read, a 4.5 s limit
    read at 1 s (the deadline 5.5 s) allows the simulations read at 2, 3, 4 and 5 s: 4 of 200."""
    board = Board()
    agent = AlphaZeroAgent(PolicyValueNet(channels=8, blocks=1), simulations=200, seed=0, time_limit=4.5)
    agent.clock = CountingClock(1.0)
    assert board.is_legal(agent.choose(board))
    assert agent.last_search is not None and agent.last_search.simulations == 4
    agent.time_limit = 1.0  # no time left after the start: the raw policy (no simulation) plays
    agent.clock = CountingClock(1.0)
    column = agent.choose(board)
    assert agent.last_search is not None and agent.last_search.simulations == 0
    priors, _ = agent.evaluator.evaluate([board])
    assert priors[0][column] == priors[0].max()
    agent.time_limit = None  # simulations alone, whatever the clock says
    agent.choose(board)
    assert agent.last_search is not None and agent.last_search.simulations == 200
    for bad, error in (("1s", TypeError), (0, ValueError), (float("inf"), ValueError), (-1.0, ValueError)):
        with pytest.raises(error, match="time_limit"):
            AlphaZeroAgent(PolicyValueNet(channels=8, blocks=1), time_limit=bad)
        agent.time_limit = bad  # set after construction: named at the next move
        with pytest.raises(error, match="time_limit"):
            agent.choose(board)


@needs_book  # the solver answers the 6x7 opening from the book only
def test_a_game_against_the_solver_records_the_agents_search() -> None:
    agent = AlphaZeroAgent(PolicyValueNet(channels=8, blocks=1), simulations=20, seed=0)
    record = play_game([agent, SolverAgent()], Rules(), record_search=True)
    assert record.winner in (None, 1) and record.search[0]["kind"] == "mcts"


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    net = PolicyValueNet(channels=8, blocks=2)
    path = save_model(tmp_path / "model.zip", net, Rules(5, 6, 4), {"generation": 3})
    loaded = load_model(path)
    assert loaded.rules == Rules(5, 6, 4) and loaded.info == {"generation": 3}
    planes = np.stack(
        [observation_planes(random_board(np.random.default_rng(s), 8, 5, 6, 4)) for s in range(5)]
    )
    for a, b in zip(NetworkEvaluator(net).predict(planes), NetworkEvaluator(loaded.net).predict(planes)):
        assert np.allclose(a, b, atol=1e-6)
    agent = AlphaZeroAgent(path, simulations=5)
    with pytest.raises(ValueError, match="cannot play 6x7"):
        agent.bind(Rules())
    with pytest.raises(ValueError, match="cannot play 6x7"):
        play_game([agent, SolverAgent()], Rules())
    with pytest.raises(TypeError):
        AlphaZeroAgent(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        AlphaZeroAgent(net, simulations=-1)


class Payload:
    def __reduce__(self):
        return (Path.touch, (Path(MARKER),))


MARKER = ""


def rewrite(path: Path, out: Path, name: str, data: bytes | None) -> Path:
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(out, "w") as target:
        for item in source.infolist():
            if item.filename != name:
                target.writestr(item, source.read(item))
        if data is not None:
            target.writestr(name, data)
    return out


def test_bad_model_files_are_refused_and_nothing_runs(tmp_path: Path) -> None:
    global MARKER
    MARKER = str(tmp_path / "ran")
    good = save_model(tmp_path / "good.zip", PolicyValueNet(channels=8, blocks=1), Rules())
    buffer = io.BytesIO()
    torch.save({"weights": Payload()}, buffer)
    state = PolicyValueNet(channels=8, blocks=1).state_dict()
    nan_state = {k: v.clone() for k, v in state.items()}
    next(v for v in nan_state.values() if v.is_floating_point()).fill_(float("nan"))
    nan_buffer, wrong_buffer = io.BytesIO(), io.BytesIO()
    torch.save(nan_state, nan_buffer)
    torch.save(PolicyValueNet(channels=16, blocks=1).state_dict(), wrong_buffer)
    (tmp_path / "junk.zip").write_bytes(b"not a zip")
    cases = {
        "junk.zip": tmp_path / "junk.zip",
        "pickle": rewrite(good, tmp_path / "pickle.zip", "weights.pt", buffer.getvalue()),
        "no weights": rewrite(good, tmp_path / "noweights.zip", "weights.pt", None),
        "nan": rewrite(good, tmp_path / "nan.zip", "weights.pt", nan_buffer.getvalue()),
        "shapes": rewrite(good, tmp_path / "shapes.zip", "weights.pt", wrong_buffer.getvalue()),
        "metadata": rewrite(good, tmp_path / "meta.zip", "model.json", b'{"format": "connect4-alphazero"}'),
        "rows": rewrite(
            good,
            tmp_path / "rows.zip",
            "model.json",
            b'{"format": "connect4-alphazero", "version": 1, "rows": -1, "columns": 7, "win_length": 4,'
            b' "network": {"channels": 8, "blocks": 1}}',
        ),
    }
    for name, path in cases.items():
        with pytest.raises(ValueError):
            load_model(path)
        assert not Path(MARKER).exists(), name


@pytest.mark.slow
def test_a_tiny_training_run_and_resume(tmp_path: Path) -> None:
    from helpers.commands import run

    args = ["train-alphazero", "--rows", "4", "--columns", "5", "--channels", "8", "--blocks", "1"]
    args += ["--games", "6", "--parallel", "3", "--simulations", "10", "--steps", "5", "--batch-size", "32"]
    args += ["--eval-positions", "20", "--eval-simulations", "5"]
    result = run(*args, "--generations", "2", "--workers", "2", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "generation 2:" in result.stdout and "best outcome kept" in result.stdout
    with open(tmp_path / "log.csv") as stream:
        rows = list(csv.DictReader(stream))
    assert [int(r["generation"]) for r in rows] == [1, 2] and all(int(r["games"]) == 6 for r in rows)
    assert all(0 <= float(r["raw_accuracy"]) <= 1 and 0 <= float(r["search_accuracy"]) <= 1 for r in rows)
    # and on the positions where the choice matters, which are never easier than all of them
    assert all(0 <= float(r["raw_nontrivial"]) <= float(r["raw_accuracy"]) for r in rows)
    assert all(0 <= float(r["search_nontrivial"]) <= float(r["search_accuracy"]) for r in rows)
    assert "non-trivial" in result.stdout
    assert (tmp_path / "curve.png").read_bytes()[:4] == b"\x89PNG"
    assert list((tmp_path / "tensorboard").glob("events.out.tfevents.*"))
    model = load_model(tmp_path / "model.zip")
    assert model.rules == Rules(4, 5, 4) and model.info["generation"] == 2
    again = run(*args, "--generations", "1", "--out", str(tmp_path), "--resume")
    assert again.returncode == 0, again.stderr
    assert "generation 3:" in again.stdout and load_model(tmp_path / "model.zip").info["generation"] == 3
    agent = AlphaZeroAgent(tmp_path / "model.zip", simulations=10)
    record = play_game([agent, SolverAgent()], Rules(4, 5, 4))
    assert len(record.moves) > 0
    other = run(*args[:-2], "--blocks", "2", "--generations", "1", "--out", str(tmp_path), "--resume")
    assert other.returncode == 2 and "another board or network" in other.stderr
    bad = run("train-alphazero", "--simulations", "0", "--out", str(tmp_path / "x"))
    assert bad.returncode == 2 and "simulations" in bad.stderr
    help_text = run("train-alphazero", "--help").stdout
    assert "--simulations" in help_text and "--resume" in help_text


def test_replay_buffer_keeps_mirror_images() -> None:
    from connect4_agents.alphazero.selfplay import ReplayBuffer

    buffer = ReplayBuffer(10, Rules(4, 5, 4))
    board = Board(Rules(4, 5, 4)).play_moves([0, 1])
    planes = observation_planes(board)[None]
    policy = np.array([[0.5, 0.25, 0.25, 0.0, 0.0]], np.float32)
    buffer.add(planes, policy, np.array([1.0], np.float32))
    assert len(buffer) == 2
    assert np.array_equal(buffer.planes[1], planes[0][:, ::-1]) and np.array_equal(
        buffer.policies[1], policy[0][::-1]
    )
    for _ in range(6):
        buffer.add(planes, policy, np.array([0.0], np.float32))
    assert len(buffer) == 10


def test_evaluation_positions_are_unseen_kinds_of_the_goal() -> None:
    from connect4_agents.alphazero.monitor import evaluation_positions

    picked = evaluation_positions(Rules(), 100, seed=0)
    assert len(picked) == 100 and all(10 <= p.ply <= 32 and p.rules == Rules() for p in picked)
    assert evaluation_positions(Rules(), 100, seed=0) == picked != evaluation_positions(Rules(), 100, seed=1)
    assert all(p.rules == Rules(4, 5, 4) for p in evaluation_positions(Rules(4, 5, 4), 10))
    assert evaluation_positions(Rules(7, 9, 4), 10) == []


def test_registry_names_alphazero(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import connect4_agents.alphazero.agent as agent_module
    from connect4_agents import make_policy
    from connect4_env.policy import policy_from_spec

    monkeypatch.setattr(agent_module, "shipped_model_path", lambda: None)  # a version without a model
    with pytest.raises(ValueError, match="ships no trained AlphaZero model"):
        make_policy("alphazero", simulations=10)
    with pytest.raises(ValueError, match="ships no trained AlphaZero model"):
        policy_from_spec("alphazero:50")
    monkeypatch.undo()
    path = save_model(tmp_path / "m.zip", PolicyValueNet(channels=8, blocks=1), Rules(4, 5, 4))
    agent = policy_from_spec(f"alphazero:{path}", seed=0, rules=Rules(4, 5, 4))
    assert isinstance(agent, AlphaZeroAgent) and agent.rules == Rules(4, 5, 4)
    assert agent.simulations == 200
    counted = policy_from_spec(f"alphazero:{path}:7", seed=0, rules=Rules(4, 5, 4))
    assert isinstance(counted, AlphaZeroAgent) and counted.simulations == 7
    odd = save_model(tmp_path / "n.zip:3", PolicyValueNet(channels=8, blocks=1), Rules(4, 5, 4))
    assert policy_from_spec(f"alphazero:{odd}", rules=Rules(4, 5, 4)).simulations == 200  # a file's own name
    with pytest.raises(FileNotFoundError, match="missing.zip"):
        policy_from_spec(f"alphazero:{tmp_path / 'missing.zip'}:7")


@pytest.mark.slow
def test_ctrl_c_keeps_the_last_generation(tmp_path: Path) -> None:
    import signal

    from helpers.commands import signal_after, start

    process = start(
        "train-alphazero",
        *("--rows", "4", "--columns", "5", "--channels", "8", "--blocks", "1", "--games", "4"),
        *("--parallel", "4", "--simulations", "10", "--steps", "3", "--eval-positions", "0"),
        *("--generations", "100000", "--no-progress", "--out", str(tmp_path)),
    )
    err = signal_after(process, "generation 1:", signal.SIGINT)
    assert process.returncode == 130, err
    assert "Traceback" not in err and "--resume goes on from it" in err
    model = load_model(tmp_path / "model.zip")
    with open(tmp_path / "log.csv") as stream:
        rows = list(csv.DictReader(stream))
    assert model.info["generation"] == int(rows[-1]["generation"]) >= 1
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_log_rows_keep_older_columns(tmp_path: Path) -> None:
    from connect4_agents.alphazero.train import _append_row

    path = tmp_path / "log.csv"
    path.write_text("generation,policy_loss\n1,2.0\n")
    _append_row(path, {"generation": 2, "policy_loss": 1.5, "elo": 300.0})
    _append_row(path, {"generation": 3, "policy_loss": 1.4, "elo": 350.0})
    with open(path) as stream:
        rows = list(csv.DictReader(stream))
    assert (
        [r["generation"] for r in rows] == ["1", "2", "3"]
        and rows[0]["elo"] == ""
        and rows[2]["elo"] == "350.0"
    )


def test_the_curve_has_an_elo_panel_only_when_the_ladder_was_played(tmp_path: Path) -> None:
    importorskip("matplotlib")
    from matplotlib.image import imread

    from connect4_agents.alphazero.monitor import plot_curve

    header = "generation,policy_loss,value_loss,raw_accuracy,search_accuracy,elo,elo_low,elo_high\n"
    widths = {}
    for name, elo in (("unrated", ",,"), ("rated", "300,250,350")):
        log = tmp_path / f"{name}.csv"
        log.write_text(header + f"1,2.0,0.9,0.5,0.6,{elo}\n2,1.8,0.8,0.55,0.65,{elo}\n")
        widths[name] = imread(plot_curve(log, tmp_path / f"{name}.png")).shape[1]
    assert widths["unrated"] < 0.75 * widths["rated"]  # two panels instead of three, no empty one


@pytest.mark.slow
@needs_book  # the reference ladder holds the solver, which plays the 6x7 opening from the book only
def test_ladder_elo_of_a_model(tmp_path: Path) -> None:
    from connect4_agents.alphazero.config import AlphaZeroTrainConfig
    from connect4_agents.alphazero.monitor import ladder_elo

    path = save_model(tmp_path / "m.zip", PolicyValueNet(channels=8, blocks=1), Rules())
    elo, low, high = ladder_elo(path, AlphaZeroTrainConfig(ladder_games=2, workers=2), seed=0)
    assert low <= elo <= high and -1000 < elo < 2500


@pytest.mark.slow
def test_sigterm_stops_the_workers_and_keeps_the_last_generation(tmp_path: Path) -> None:
    import signal

    from helpers.commands import signal_after, start, wait_gone

    process = start(
        "train-alphazero",
        *(
            "--rows",
            "4",
            "--columns",
            "5",
            "--channels",
            "8",
            "--blocks",
            "1",
            "--games",
            "8",
            "--workers",
            "2",
        ),
        *("--parallel", "4", "--simulations", "10", "--steps", "3", "--eval-positions", "0"),
        *("--generations", "100000", "--no-progress", "--out", str(tmp_path)),
        new_session=True,
    )
    err = signal_after(process, "generation 1:", signal.SIGTERM)  # as `kill PID`: the main process only
    assert process.returncode == 143, err
    assert "Traceback" not in err and "terminated" in err
    assert wait_gone(process.pid) == []  # no pool worker left behind
    assert load_model(tmp_path / "model.zip").info["generation"] >= 1


@pytest.mark.slow  # a spawned pool's start-up, twice: make test-slow (CI runs it)
def test_sigterm_to_the_whole_process_group_ends_training_without_a_hang(tmp_path: Path) -> None:
    """``timeout``, ``kill -- -PGID`` and batch schedulers signal every process of the group: the pool's
    workers die with the parent. multiprocessing.Pool's terminate() then waited for ever on a queue lock a dead
    worker held (4 of 6 trials hung); the executor-backed WorkerPool notices dead workers."""
    import os
    import signal

    from helpers.commands import start, wait_gone

    for delay in (0.0, 1.0):  # idle between generations, or busy in one
        process = start(
            "train-alphazero",
            *("--rows", "4", "--columns", "5", "--channels", "8", "--blocks", "1", "--games", "8"),
            *("--workers", "2", "--parallel", "4", "--simulations", "10", "--steps", "3"),
            *("--eval-positions", "0", "--generations", "100000", "--no-progress", "--out", str(tmp_path)),
            new_session=True,
        )
        try:
            assert process.stdout is not None
            assert "generation 1:" in process.stdout.readline()
            time.sleep(delay)
            os.killpg(process.pid, signal.SIGTERM)
            _, err = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.communicate()
        assert process.returncode == 143, err
        assert wait_gone(process.pid) == []


def test_the_shipped_model_says_how_it_was_made_with_commands_that_parse() -> None:
    from connect4_agents.alphazero.agent import shipped_model_path
    from connect4_agents.commands.train_alphazero import build_parser

    path = shipped_model_path()
    if path is None:
        pytest.skip("this version ships no AlphaZero model")
    provenance = load_model(path).info["provenance"]
    assert provenance["method"] and provenance["machine"]
    assert len(provenance["stages"]) >= 2 and all(stage["wall_minutes"] > 0 for stage in provenance["stages"])
    teacher = False
    for stage in provenance["stages"]:
        for command in stage["commands"]:
            words = command.split()
            assert words[:2] == ["connect4", "train-alphazero"], command
            args = build_parser().parse_args(words[2:])  # a command a user can run as written
            teacher = teacher or args.teacher == "solver"
    assert teacher


@pytest.mark.slow  # over 6 s on 2 cores: make test-slow (CI runs it)
def test_the_shipped_model_plays_legal_moves_everywhere() -> None:
    from connect4_agents.alphazero.agent import shipped_model_path

    if shipped_model_path() is None:
        pytest.skip("this version ships no AlphaZero model")
    from connect4_agents import make_policy
    from connect4_env.policy import policy_from_spec

    raw = policy_from_spec("alphazero:0", seed=0, rules=Rules())
    searched = make_policy("alphazero", simulations=20, seed=0).bind(Rules())
    assert raw.simulations == 0 and searched.simulations == 20
    for index, position in enumerate(load_test_set("6x7-middle-medium")):
        board = position.board()
        agents = (raw, searched) if index % 10 == 0 else (raw,)
        for agent in agents:
            assert board.is_legal(agent.act(observation_planes(board), action_mask(board)))
    assert shipped_model_path().stat().st_size <= 20 * 10**6  # the strength issue's bound on the model file
    with pytest.raises(ValueError, match="cannot play"):
        make_policy("alphazero").bind(Rules(7, 6, 4))


def test_a_declared_network_larger_than_its_weights_is_refused_before_it_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import connect4_agents.alphazero.files as files

    good = save_model(tmp_path / "good.zip", PolicyValueNet(channels=8, blocks=1), Rules())
    with zipfile.ZipFile(good) as archive:
        meta = json.loads(archive.read("model.json"))
    meta["network"] = {
        "channels": 512,
        "blocks": 40,
    }  # the largest allowed: ~0.8 GB of weights declared, a few KB given
    huge = rewrite(good, tmp_path / "huge.zip", "model.json", json.dumps(meta).encode())

    def no_building(*args: object, **kwargs: object) -> None:
        raise AssertionError("the network was built before the weights were checked")

    monkeypatch.setattr(files, "PolicyValueNet", no_building)
    with pytest.raises(ValueError, match="needs at least"):
        load_model(huge)


def test_deeply_nested_model_json_is_a_value_error(tmp_path: Path) -> None:
    good = save_model(tmp_path / "good.zip", PolicyValueNet(channels=8, blocks=1), Rules())
    deep = rewrite(good, tmp_path / "deep.zip", "model.json", b"[" * 5000 + b"]" * 5000)
    with pytest.raises(ValueError, match="deep"):
        load_model(deep)


def test_the_same_seed_trains_the_same_network(tmp_path: Path) -> None:
    # the network's first weights come from torch's generator, which training seeds from config.seed
    from connect4_agents.alphazero.config import AlphaZeroTrainConfig
    from connect4_agents.alphazero.train import train

    settings = dict(rows=4, columns=5, channels=8, blocks=1, games=4, parallel=2, simulations=8, steps=3)
    settings |= dict(batch_size=16, eval_positions=10, eval_simulations=4, generations=1, workers=1)
    weights = []
    for run_index, seed in enumerate((0, 0, 1)):
        torch.manual_seed(1000 + run_index)  # whatever the caller's torch state was
        path = train(AlphaZeroTrainConfig(**settings, seed=seed), tmp_path / str(run_index))
        weights.append(load_model(path).net.state_dict())
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])
    assert not all(torch.equal(weights[0][k], weights[2][k]) for k in weights[0])


def test_the_training_device_is_checked_and_named() -> None:
    from connect4_agents.alphazero.config import AlphaZeroTrainConfig
    from connect4_agents.alphazero.train import training_device

    with pytest.raises(TypeError, match="device"):
        AlphaZeroTrainConfig(device=0).check()  # type: ignore[arg-type]
    for bad in ("gpu", "cuda:", "cuda:x", " cpu", ""):
        with pytest.raises(ValueError, match="device"):
            AlphaZeroTrainConfig(device=bad).check()
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert training_device("auto").type == expected and training_device("cpu").type == "cpu"
    if not torch.cuda.is_available():  # a CPU build of torch: asking for a GPU says so before any work
        with pytest.raises(ValueError, match="'cuda'.*0 CUDA device"):
            training_device("cuda")
    with pytest.raises(ValueError, match="cuda:99"):
        training_device("cuda:99")


@pytest.mark.parametrize("name", ["cpu", "cuda"])
def test_training_steps_on_a_device_leave_the_network_on_the_cpu(name: str) -> None:
    from connect4_agents.alphazero.config import AlphaZeroTrainConfig
    from connect4_agents.alphazero.selfplay import ReplayBuffer
    from connect4_agents.alphazero.train import _train_steps

    if name == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    rules = Rules(4, 5, 4)
    buffer = ReplayBuffer(100, rules)
    rng = np.random.default_rng(0)
    boards = [Board(Rules(4, 5, 4)).play_moves(list(rng.integers(0, 5, size=3))) for _ in range(20)]
    policies = rng.dirichlet(np.ones(5), size=20).astype(np.float32)
    buffer.add(
        np.stack([observation_planes(b) for b in boards]), policies, rng.uniform(-1, 1, 20).astype(np.float32)
    )
    torch.manual_seed(0)
    net = PolicyValueNet(channels=8, blocks=1)
    before = {k: v.clone() for k, v in net.state_dict().items()}
    optimiser = torch.optim.Adam(net.parameters(), lr=1e-2)
    config = AlphaZeroTrainConfig(rows=4, columns=5, steps=30, batch_size=16)
    losses = [_train_steps(net, optimiser, buffer, config, rng, torch.device(name)) for _ in range(2)]
    assert all(p.device.type == "cpu" for p in net.parameters()) and not net.training
    assert not all(torch.equal(before[k], v) for k, v in net.state_dict().items())
    assert all(np.isfinite(loss).all() for loss in losses)
    assert losses[1][0] < losses[0][0]  # it learns: the second round fits the same 40 positions better


def test_a_bad_seed_is_named_and_keeps_the_agent(tmp_path: Path) -> None:
    path = save_model(tmp_path / "m.zip", PolicyValueNet(channels=8, blocks=1), Rules(4, 5, 4))
    with pytest.raises(TypeError, match="seed must be None or a non-negative integer"):
        AlphaZeroAgent(path, seed="x")  # type: ignore[arg-type]
    agent = AlphaZeroAgent(path, simulations=4, seed=1)
    rng = agent.rng
    with pytest.raises(ValueError, match="seed"):
        agent.reset(seed=-1)
    assert agent.rng is rng


def test_bad_rules_boards_and_network_sizes_are_named() -> None:
    from connect4_agents.alphazero.config import MAX_BLOCKS, MAX_CHANNELS, AlphaZeroTrainConfig

    net = PolicyValueNet(channels=8, blocks=1)
    with pytest.raises(TypeError, match="rules must be a connect4_env.Rules or None"):
        AlphaZeroAgent(net, rules="6x7")  # type: ignore[arg-type]
    agent = AlphaZeroAgent(net, simulations=0, seed=0)
    with pytest.raises(ValueError, match="cannot play 4x5"):
        agent.choose(Board(Rules(4, 5, 4)))  # it used to answer a column for the wrong board
    with pytest.raises(ValueError, match="the game is over"):
        agent.choose(Board.from_moves([0, 1, 0, 1, 0, 1, 0]))
    with pytest.raises(TypeError, match="board must be a connect4_env.Board"):
        agent.choose("3")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="a spec value must be a str"):
        AlphaZeroAgent.from_spec(5)  # type: ignore[arg-type]
    assert agent.choose(Board()) in range(7)
    for channels, blocks, error in (
        (-1, 1, ValueError),
        (10**9, 1, ValueError),
        (2.5, 1, TypeError),
        (8, 41, ValueError),
    ):
        with pytest.raises(error, match="channels must be|blocks must be"):
            PolicyValueNet(channels=channels, blocks=blocks)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=f"channels must be an integer in 1..{MAX_CHANNELS}"):
        AlphaZeroTrainConfig(channels=MAX_CHANNELS + 1).check()
    with pytest.raises(ValueError, match=f"blocks must be an integer in 0..{MAX_BLOCKS}"):
        AlphaZeroTrainConfig(blocks=MAX_BLOCKS + 1).check()


def test_a_refused_training_run_leaves_no_folder(tmp_path: Path) -> None:
    from connect4_agents.alphazero.config import AlphaZeroTrainConfig
    from connect4_agents.alphazero.train import train
    from connect4_agents.commands.train_alphazero import main

    missing = tmp_path / "mistyped"
    with pytest.raises(ValueError, match="holds no model.zip to go on from"):
        train(AlphaZeroTrainConfig(rows=4, columns=5), missing, resume=True)  # it used to start a new run
    assert main(["--resume", "--out", str(missing)]) == 2
    assert main(["--workers", "100000", "--out", str(missing)]) == 2
    assert main(["--parallel", "100000000", "--out", str(missing)]) == 2
    assert not missing.exists()
    for bad in ({"parallel": 5000}, {"workers": 5000}, {"evaluation_cache": 10**9}):
        with pytest.raises(ValueError, match="must be an integer in"):
            AlphaZeroTrainConfig(**bad).check()  # type: ignore[arg-type]


def test_a_replay_buffer_file_is_checked_before_and_after_reading(tmp_path: Path) -> None:
    import io as _io

    from connect4_agents.alphazero.selfplay import MAX_BUFFER_POSITIONS, ReplayBuffer

    rules = Rules(4, 5, 4)
    good = ReplayBuffer(100, rules)
    planes = np.zeros((3, 4, 5, 2), np.int8)
    planes[:, 3, 2, 0] = 1
    good.add(planes, np.full((3, 5), 0.2, np.float32), np.array([1, 0, -1], np.float32))
    path = tmp_path / "buffer.npz"

    def write(**arrays: np.ndarray) -> Path:
        stream = _io.BytesIO()
        np.savez_compressed(stream, **arrays)
        path.write_bytes(stream.getvalue())
        return path

    fields = {"planes": good.planes, "policies": good.policies, "values": good.values}
    loaded = ReplayBuffer(100, rules)
    loaded.load(write(**fields))
    assert len(loaded) == 6 and (loaded.planes == good.planes).all()
    header = np.lib.format.header_data_from_array_1_0(good.planes)
    header["shape"] = (MAX_BUFFER_POSITIONS + 1, 4, 5, 2)
    huge = _io.BytesIO()
    np.lib.format.write_array_header_1_0(huge, header)  # a header that asks for more than allowed, no data
    bad_cases = {
        "missing": ({"planes": good.planes, "values": good.values}, "not a replay buffer written"),
        "nan": ({**fields, "values": np.full(6, np.nan, np.float32)}, r"outside \[-1, 1\]"),
        "float64 planes": ({**fields, "planes": good.planes.astype(np.float64)}, "float64"),
        "99 columns": ({**fields, "policies": np.zeros((6, 99), np.float32)}, "this board"),
        "negative policy": ({**fields, "policies": -good.policies}, "negative"),
        "different lengths": ({**fields, "values": good.values[:2]}, "different numbers of positions"),
    }
    for name, (arrays, message) in bad_cases.items():
        target = ReplayBuffer(100, rules)
        with pytest.raises(ValueError, match=message):
            target.load(write(**arrays))
        assert len(target) == 0, name  # nothing changed
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("planes.npy", huge.getvalue())
    with pytest.raises(ValueError, match=f"at most {MAX_BUFFER_POSITIONS:,}"):
        ReplayBuffer(100, rules).load(path)
    path.write_bytes(b"not a zip at all")
    with pytest.raises(ValueError, match="not a replay buffer written"):
        ReplayBuffer(100, rules).load(path)


def test_a_negative_simulation_count_or_a_non_path_is_named(tmp_path: Path) -> None:
    """alphazero:-1 and alphazero:model.zip:-5 are bad counts, not file names (they were 'No such file'
    errors about '-1'); load_model takes paths only (None was an AttributeError)."""
    from connect4_agents import policy_from_spec

    for spec in ("alphazero:-1", f"alphazero:{tmp_path / 'model.zip'}:-5"):
        with pytest.raises(ValueError, match="simulations a move must be an integer >= 0"):
            policy_from_spec(spec)
    for bad in (None, 5, b"model.zip"):
        with pytest.raises(TypeError, match="str or os.PathLike"):
            load_model(bad)  # type: ignore[arg-type]
    odd = tmp_path / "run:-1"  # a file whose name looks like a count is still read as the file
    save_model(odd, PolicyValueNet(channels=8, blocks=1), Rules(4, 5, 3))
    assert policy_from_spec(f"alphazero:{odd}").simulations == 200
