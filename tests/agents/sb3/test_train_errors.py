"""Bad ``train-sb3`` settings are refused before any work: hyperparameter values, threads, SB3's own errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.extras import importorskip

from connect4_agents.sb3.train import MAX_THREADS, SB3TrainConfig

SMALL = {"rows": 4, "columns": 5, "win_length": 3}


@pytest.mark.parametrize(
    ("algo", "hyperparameters", "error", "message"),
    [
        ("maskable_ppo", {"learning_rate": "abc"}, TypeError, r"learning_rate.*must be a number.*'abc'"),
        ("ppo", {"learning_rate": float("nan")}, ValueError, r"learning_rate.*finite number > 0.*nan"),
        ("ppo", {"batch_size": -5}, ValueError, r"batch_size.*1\.\.16777216, got -5"),
        ("ppo", {"n_steps": 10**12}, ValueError, r"n_steps.*got 1000000000000"),
        ("ppo", {"gamma": 1.5}, ValueError, r"gamma.*<= 1"),
        ("ppo", {"normalize_advantage": "yes"}, TypeError, r"normalize_advantage.*True or False"),
        ("ppo", {"batch_size": 1}, ValueError, r"normalize_advantage.*at least 2"),
        ("ppo", {"_init_setup_model": False}, ValueError, r"\['_init_setup_model'\].*allowed: batch_size"),
        ("dqn", {"n_epochs": 3}, ValueError, r"not arguments of dqn"),
        ("dqn", {"buffer_size": 10**9}, ValueError, r"buffer_size.*got 1000000000"),
        ("dqn", {"exploration_fraction": 0}, ValueError, r"exploration_fraction.*> 0"),
        ("dqn", {"train_freq": [2, "episode"]}, ValueError, r"only with n_envs=1"),
        ("dqn", {"train_freq": [2, "hour"]}, ValueError, r"'step' or 'episode'"),
        ("dqn", {"gradient_steps": 0}, ValueError, r"gradient_steps.*-1"),
        ("ppo", {"policy_kwargs": {"net_arch": [200000, 200000]}}, ValueError, r"net_arch\[0\].*1\.\.16384"),
        ("ppo", {"policy_kwargs": {"net_arch": [-5]}}, ValueError, r"net_arch\[0\].*got -5"),
        ("ppo", {"policy_kwargs": {"net_arch": "64"}}, TypeError, r"net_arch must be a list"),
        ("ppo", {"policy_kwargs": {"activation_fn": "relu"}}, ValueError, r"activation_fn.*allowed: "),
        ("ppo", {"policy_kwargs": [1]}, TypeError, r"policy_kwargs.*JSON object"),
        ("ppo", {"learning_rate": object()}, TypeError, r"plain JSON"),
    ],
)
def test_bad_hyperparameter_values_are_refused_by_the_config(
    algo: str, hyperparameters: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        SB3TrainConfig(algo=algo, hyperparameters=hyperparameters, n_envs=2, **SMALL)


def test_buffers_and_networks_too_large_for_the_board_are_refused() -> None:
    with pytest.raises(ValueError, match=r"GiB of buffers; allowed: at most 4 GiB"):
        SB3TrainConfig(
            algo="dqn", rows=100, columns=100, hyperparameters={"policy_kwargs": {"net_arch": [8]}}
        )
    with pytest.raises(ValueError, match=r"parameters on a 1000x1000 board; allowed: at most"):
        SB3TrainConfig(algo="ppo", rows=1000, columns=1000, n_envs=1, hyperparameters={"n_steps": 2})
    with pytest.raises(ValueError, match=r"channels'\] must be an integer in 1\.\.1024"):
        SB3TrainConfig(
            features="cnn",
            hyperparameters={"policy_kwargs": {"features_extractor_kwargs": {"channels": 10**6}}},
        )
    good = SB3TrainConfig(
        algo="dqn", hyperparameters={"buffer_size": 1000, "train_freq": [4, "step"]}, **SMALL
    )
    assert good.hyperparameters["buffer_size"] == 1000


@pytest.mark.parametrize("threads", [0, 100_000, MAX_THREADS + 1])
def test_threads_have_a_maximum(threads: int) -> None:
    with pytest.raises(ValueError, match=rf"threads must be an integer in 1\.\.{MAX_THREADS}, got {threads}"):
        SB3TrainConfig(threads=threads)
    assert SB3TrainConfig(threads=MAX_THREADS).threads == MAX_THREADS


def test_a_config_changed_after_it_was_made_is_checked_again(tmp_path: Path) -> None:
    importorskip("stable_baselines3")
    from connect4_agents.sb3.train import train_baseline

    config = SB3TrainConfig(out=str(tmp_path / "out"), progress=False, **SMALL)
    config.threads = 100_000
    with pytest.raises(ValueError, match="threads"):
        train_baseline(config)
    assert not (tmp_path / "out").exists()


def test_sb3_refusing_the_hyperparameters_writes_nothing(tmp_path: Path) -> None:
    importorskip("stable_baselines3")
    importorskip("sb3_contrib")
    from connect4_agents.sb3.train import train_baseline

    out = tmp_path / "out"
    config = SB3TrainConfig(
        out=str(out),
        progress=False,
        n_envs=2,
        hyperparameters={"policy_kwargs": {"optimizer_kwargs": {"eps": -1}}},
        **SMALL,
    )
    with pytest.raises(
        ValueError, match=r"hyperparameters \{'policy_kwargs'.* do not make a maskable_ppo model"
    ):
        train_baseline(config)
    assert not out.exists()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--hyperparameters", '{"learning_rate": "abc"}'], "learning_rate"),
        (["--hyperparameters", '{"batch_size": -5}'], "batch_size"),
        (["--hyperparameters", '{"n_steps": 1000000000000}'], "n_steps"),
        (["--threads", "100000"], "threads"),
    ],
)
def test_the_command_exits_2_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], message: str
) -> None:
    importorskip("stable_baselines3")
    importorskip("sb3_contrib")
    from connect4_agents.commands.train_sb3 import main

    out = tmp_path / "out"
    assert main([*arguments, "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()
