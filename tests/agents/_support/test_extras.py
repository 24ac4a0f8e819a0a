"""A missing optional dependency gets one clear error naming its extra, from the API and from the commands."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import gymnasium
import pytest
from helpers.extras import absent

import connect4_agents
import connect4_env
from connect4_agents import SB3Agent, make_policy
from connect4_agents._support.cli import EXIT_USAGE, run_cli
from connect4_agents.evaluation.backends import run_batches
from connect4_agents.evaluation.curves import LearningCurve
from connect4_agents.evaluation.ratings import PairingCounts, fit_ratings
from connect4_env.extras import MissingExtraError, require
from connect4_env.extras import MissingExtraError as EnvMissingExtraError


def test_require_names_the_extra_and_the_pip_command() -> None:
    assert require("json", "train", "reading").loads("[1]") == [1]
    with pytest.raises(MissingExtraError) as raised:
        require("no_such_module_for_connect4", "train", "loading an SB3 model")
    message = str(raised.value)
    assert "loading an SB3 model needs the 'train' extra" in message
    assert "no_such_module_for_connect4 is not installed" in message
    assert 'pip install -e ".[train]"' in message
    assert isinstance(raised.value, ImportError)  # ``except ImportError`` still catches it


def test_require_without_an_extra_says_how_to_install_instead() -> None:
    with pytest.raises(MissingExtraError) as raised:
        require(
            "no_such_module_for_connect4", "ray[rllib]", "training with RLlib", install="in a venv of its own"
        )
    message = str(raised.value)
    assert message.startswith(
        "training with RLlib needs ray[rllib] (no_such_module_for_connect4 is not installed)"
    )
    assert message.endswith("in a venv of its own")
    assert "pip install" not in message


def test_training_with_rllib_names_its_own_venv(monkeypatch: pytest.MonkeyPatch) -> None:
    from connect4_agents.rllib.train import require_rllib

    absent(monkeypatch, "ray")
    with pytest.raises(MissingExtraError) as raised:
        require_rllib()
    assert re.search(r"needs ray\[rllib\] \(ray(\.rllib)? is not installed\)", str(raised.value))
    assert "make test-rllib builds .venv-rllib" in str(raised.value)


def test_commands_print_it_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    def work() -> None:
        require("no_such_module_for_connect4", "render", "the play window")

    assert run_cli(work) == EXIT_USAGE
    assert capsys.readouterr().err.startswith("error: the play window needs the 'render' extra")


def _says_extra(raised: pytest.ExceptionInfo[MissingExtraError], extra: str) -> None:
    assert f"needs the {extra!r} extra" in str(raised.value)
    assert f'pip install -e ".[{extra}]"' in str(raised.value)


def test_the_env_layer_and_the_agents_raise_one_class() -> None:
    assert MissingExtraError is EnvMissingExtraError


def test_alphazero_by_name_or_attribute_names_the_train_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    absent(monkeypatch, "torch")
    with pytest.raises(MissingExtraError) as raised:
        make_policy("alphazero")
    _says_extra(raised, "train")
    with pytest.raises(MissingExtraError):
        connect4_agents.AlphaZeroAgent  # noqa: B018
    from connect4_agents.alphazero import AlphaZeroTrainConfig  # the config needs no torch

    assert AlphaZeroTrainConfig().generations >= 1


def test_sb3_load_and_vec_env_name_the_train_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    absent(monkeypatch, "stable_baselines3", "torch")
    monkeypatch.delitem(sys.modules, "connect4_env.integrations.sb3", raising=False)
    with pytest.raises(MissingExtraError) as raised:
        SB3Agent.load("no_such_model.zip")  # the extra is checked before the file
    _says_extra(raised, "train")
    with pytest.raises(MissingExtraError) as raised:
        connect4_env.make_sb3_vec_env(2)
    _says_extra(raised, "train")


def test_plots_and_the_rating_fit_name_the_train_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    absent(monkeypatch, "matplotlib", "scipy")
    curve = LearningCurve(
        window=10, episodes=[10], mean_return=[0.0], win_rate=[0.5], draw_rate=[0.0], loss_rate=[0.5]
    )
    with pytest.raises(MissingExtraError) as raised:
        curve.plot(tmp_path / "curve.png")
    _says_extra(raised, "train")
    assert not (tmp_path / "curve.png").exists()
    with pytest.raises(MissingExtraError) as raised:
        fit_ratings([PairingCounts("random", "mcts:10", 1, 0, 3)], bootstrap=0)
    _says_extra(raised, "train")


def test_the_ray_backend_names_the_distributed_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    absent(monkeypatch, "ray")
    with pytest.raises(MissingExtraError) as raised:
        run_batches(abs, [-1], backend="ray", workers=1)
    _says_extra(raised, "distributed")


def test_the_human_render_mode_names_the_render_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    absent(monkeypatch, "pygame")
    env = gymnasium.make("Connect4-v0", render_mode="human")
    with pytest.raises(MissingExtraError) as raised:
        env.reset(seed=0)
        env.render()
    _says_extra(raised, "render")
    assert 'or use render_mode="rgb_array"' in str(raised.value)
    env.close()


def test_the_rllib_env_names_ray_rllib(monkeypatch: pytest.MonkeyPatch) -> None:
    absent(monkeypatch, "ray")
    monkeypatch.delitem(sys.modules, "connect4_env.integrations.rllib", raising=False)
    with pytest.raises(MissingExtraError, match=r'pip install "ray\[rllib\]"'):
        importlib.import_module("connect4_env.integrations.rllib")
