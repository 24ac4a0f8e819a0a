"""Winograd convolutions (self-play's ``precision="winograd"``) against the direct convolutions they replace."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from helpers.extras import importorskip, needs

torch = importorskip("torch")

from helpers.networks import net_with_batch_norm_statistics  # noqa: E402
from helpers.reference import random_board  # noqa: E402

from connect4_agents.alphazero import PolicyValueNet  # noqa: E402
from connect4_agents.alphazero.network import NetworkEvaluator  # noqa: E402
from connect4_agents.alphazero.winograd import transformed_weight, winograd_trunk  # noqa: E402
from connect4_agents.alphazero.winograd_kernels import TINY  # noqa: E402
from connect4_env import Rules  # noqa: E402
from connect4_env.encoding import observation_planes  # noqa: E402
from connect4_env.extras import MissingExtraError  # noqa: E402

torch.set_num_threads(1)


def _planes(rules: Rules, count: int, seed: int) -> torch.Tensor:
    rng = np.random.default_rng(seed)
    boards = [
        random_board(rng, int(rng.integers(0, rules.cells // 2)), rules.rows, rules.columns, rules.win_length)
        for _ in range(count)
    ]
    planes = np.stack([observation_planes(board) for board in boards]).transpose(0, 3, 1, 2)
    return torch.from_numpy(planes.astype(np.float32).copy())


def _direct_trunk(net: PolicyValueNet, planes: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return net.trunk(net.stem(planes))


@pytest.mark.parametrize(
    ("rows", "columns"), [(6, 7), (4, 4), (5, 4), (4, 5), (7, 9), (1, 4), (4, 1), (2, 3), (3, 8)]
)
def test_the_plain_python_transforms_compute_the_direct_convolutions(rows: int, columns: int) -> None:
    # any board size: tiles of 2 x 4 outputs, the last ones cut at the board's edge (odd rows, columns not
    # a multiple of 4), the residual added in place and relu applied as in the direct trunk
    win = min(4, max(rows, columns))
    rules = Rules(rows=rows, columns=columns, win_length=win)
    net = net_with_batch_norm_statistics(rows * 10 + columns, channels=3, blocks=2)
    planes = _planes(rules, 3, seed=rows + columns)
    stem, blocks = net._folded_trunk()
    got = winograd_trunk(stem, blocks, compiled=False)(planes)  # type: ignore[arg-type]
    expected = _direct_trunk(net, planes)
    assert got.shape == expected.shape
    assert torch.allclose(got, expected, rtol=1e-4, atol=1e-5)


@needs("fast")
@pytest.mark.parametrize(("rows", "columns"), [(6, 7), (7, 6), (5, 4), (8, 9)])
@pytest.mark.parametrize("batch", [1, 5, 33])
def test_the_compiled_snapshot_answers_as_the_direct_one(rows: int, columns: int, batch: int) -> None:
    rules = Rules(rows=rows, columns=columns)
    net = net_with_batch_norm_statistics(batch + rows, channels=16, blocks=3)
    planes = _planes(rules, batch, seed=batch)
    with torch.inference_mode():
        logits, values = net.inference()(planes)
        fast_logits, fast_values = net.inference(winograd=True)(planes)
        module_logits, module_values = net(planes)
    scale = float(logits.abs().max()) + 1
    assert float((fast_logits - logits).abs().max()) < 1e-4 * scale
    assert float((fast_values - values).abs().max()) < 1e-4
    assert float((fast_logits - module_logits).abs().max()) < 1e-4 * scale
    assert float((fast_values - module_values).abs().max()) < 1e-4


@needs("fast")
def test_the_winograd_evaluator_takes_a_new_snapshot_after_a_training_step() -> None:
    net = net_with_batch_norm_statistics(1, channels=8, blocks=2)
    planes = _planes(Rules(), 6, seed=1).numpy().transpose(0, 2, 3, 1)
    evaluator = NetworkEvaluator(net, precision="winograd")
    before, _ = evaluator.predict(planes)
    with torch.no_grad():
        net.trunk[0].conv1.weight.mul_(-2.0)  # an in-place change, as an optimiser makes
    after, _ = evaluator.predict(planes)
    expected, _ = NetworkEvaluator(net).predict(planes)
    assert np.abs(after - expected).max() < 1e-4 and np.abs(after - before).max() > 1e-3
    assert evaluator._snapshot is not None and evaluator._snapshot[0][0] == "winograd"


def test_transformed_weights_hold_no_subnormal_floats_and_check_their_shape() -> None:
    weight = torch.full((2, 2, 3, 3), 3e-38)  # normal, but a transform coefficient of 1/24 makes it subnormal
    matrices = transformed_weight(weight)
    assert matrices.shape == (24, 2, 2) and matrices.dtype == torch.float32
    tiny = torch.finfo(torch.float32).tiny
    assert not bool(((matrices.abs() < tiny) & (matrices != 0)).any())
    assert tiny == TINY
    with pytest.raises(ValueError, match=r"\(out, in, 3, 3\).*\(2, 2, 5, 5\)"):
        transformed_weight(torch.zeros(2, 2, 5, 5))


def test_winograd_settings_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    net = PolicyValueNet(channels=4, blocks=1)
    with pytest.raises(ValueError, match="float32 only"):
        net.inference(torch.bfloat16, winograd=True)
    with pytest.raises(TypeError, match="winograd must be True or False"):
        net.inference(winograd="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="precision"):
        NetworkEvaluator(net, precision="float16")
    monkeypatch.setitem(sys.modules, "numba", None)  # numba not installed: the extra is named at once
    with pytest.raises(MissingExtraError, match="fast"):
        NetworkEvaluator(net, precision="winograd")
    NetworkEvaluator(net)  # float32 needs nothing more


def test_auto_precision_takes_winograd_where_numba_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    from connect4_agents.alphazero import selfplay

    monkeypatch.setattr(selfplay, "native_bfloat16", lambda: False)
    monkeypatch.setattr(selfplay.importlib.util, "find_spec", lambda name: object())
    assert selfplay.forward_precision("auto") == "winograd"
    monkeypatch.setattr(selfplay.importlib.util, "find_spec", lambda name: None)
    assert selfplay.forward_precision("auto") == "float32"
    assert selfplay.forward_precision("winograd") == "winograd"  # named: as asked
    monkeypatch.setattr(selfplay, "native_bfloat16", lambda: True)
    assert selfplay.forward_precision("auto") == "bfloat16"


def test_outputs_too_small_for_a_normal_float_are_stored_as_zero() -> None:
    from connect4_agents.alphazero import winograd_kernels

    products = np.zeros((4, 6, 1, 1, 1, 2), np.float32)  # one tile, one position, two channels
    residual = np.zeros((4, 6, 1, 2), np.float32)
    residual[1, 1] = [1e-39, 0.5]  # a subnormal and a normal value at the board's first cell
    out = np.full_like(residual, -7.0)
    winograd_kernels.transform_output(products, np.zeros(2, np.float32), residual, True, 2, 4, out)
    assert out[1, 1, 0].tolist() == [0.0, 0.5]
    assert (out[1:3, 1:5] >= 0).all() and (out[0] == -7.0).all()  # the border is never written


def test_training_with_winograd_and_no_numba_names_the_extra_before_any_work(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    from pathlib import Path

    from connect4_agents.alphazero.config import AlphaZeroTrainConfig
    from connect4_agents.alphazero.train import train

    monkeypatch.setitem(sys.modules, "numba", None)
    out = Path(str(tmp_path)) / "run"
    config = AlphaZeroTrainConfig(precision="winograd", games=2, simulations=2, generations=1, workers=2)
    with pytest.raises(MissingExtraError, match="fast"):
        train(config, out)
    assert not out.exists()  # nothing written, no worker started


def test_a_batch_past_the_buffer_budget_is_computed_in_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    from connect4_agents.alphazero import winograd

    net = net_with_batch_norm_statistics(4, channels=3, blocks=1)
    planes = _planes(Rules(), 7, seed=4)
    stem, blocks = net._folded_trunk()
    whole = winograd_trunk(stem, blocks, compiled=False)(planes)  # type: ignore[arg-type]
    calls: list[int] = []
    kernels = winograd.winograd_kernels(compiled=False)
    monkeypatch.setattr(
        winograd,
        "winograd_kernels",
        lambda compiled=True: type(
            "Counted",
            (),
            {
                "transform_input": staticmethod(
                    lambda p, t: calls.append(t.shape[-1]) or kernels.transform_input(p, t)
                ),
                "transform_output": staticmethod(kernels.transform_output),
            },
        ),
    )
    # 6x7 at 3 channels: (2 * 24 * 6 + 2 * 8 * 10) floats, 5,376 bytes a position, so a budget of 12,000 bytes
    # takes 2 positions at a time
    monkeypatch.setattr(winograd, "MAX_BUFFER_BYTES", 12_000)
    parts = winograd_trunk(stem, blocks, compiled=False)(planes)  # type: ignore[arg-type]
    assert calls and max(calls) == 2 * 3  # 2 positions x 3 channels a transform, never the whole batch
    assert torch.allclose(parts, whole, atol=1e-6) and parts.shape == whole.shape
