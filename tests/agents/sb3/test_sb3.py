"""Stable-Baselines3 on our envs: tiny training runs, masks, save/load/play, the training script."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from helpers.commands import CONNECT4, HANG_GUARD, start, wait_for
from helpers.extras import importorskip

import connect4_env
from connect4_agents import RandomAgent, make_policy
from connect4_agents.evaluation.arena import play_match
from connect4_agents.sb3.agent import SB3Agent, algorithm_class
from connect4_agents.sb3.train import SB3TrainConfig, train_baseline
from connect4_env import Board, Rules
from connect4_env.encoding import action_mask, observation_planes

torch = importorskip("torch")
importorskip("stable_baselines3")
importorskip("sb3_contrib")
torch.set_num_threads(1)
ROOT = Path(__file__).resolve().parents[3]
SMALL = {"rows": 4, "columns": 5, "win_length": 3}


@pytest.mark.parametrize(
    "algo",
    # PPO's two: about 4 s each on 2 cores (over 3 s): make test-slow, CI runs them
    [
        pytest.param("ppo", marks=pytest.mark.slow),
        pytest.param("maskable_ppo", marks=pytest.mark.slow),
        "dqn",
    ],
)
def test_tiny_training_through_gym_make_and_the_batched_env(algo: str, tmp_path: Path) -> None:
    from stable_baselines3.common.env_util import make_vec_env

    cls = algorithm_class(algo)
    extra = {"n_steps": 64, "batch_size": 64} if "ppo" in algo else {"learning_starts": 100}
    single = make_vec_env(lambda: gym.make("Connect4-v0", **SMALL), n_envs=2, seed=0)
    model = cls("MlpPolicy", single, seed=0, device="cpu", **extra)
    model.learn(1000)
    batched = connect4_env.make_sb3_vec_env(8, **SMALL)
    model = cls("MlpPolicy", batched, seed=0, device="cpu", **extra)
    model.learn(2000)
    assert model.num_timesteps >= 2000
    model.save(tmp_path / "model.zip")
    agent = SB3Agent.load(tmp_path / "model.zip")
    result = play_match(agent, RandomAgent(seed=0), 10, Rules(**SMALL))
    assert result.n_games == 10


def test_masked_moves_are_never_chosen() -> None:
    from sb3_contrib import MaskablePPO

    venv = connect4_env.make_sb3_vec_env(2)
    for policy in (
        MaskablePPO("MlpPolicy", venv, seed=0, device="cpu").policy,
        algorithm_class("dqn")("MlpPolicy", venv, seed=0, device="cpu").policy,
    ):
        for deterministic in (True, False):
            agent = SB3Agent(policy, deterministic=deterministic, seed=1)
            rng = np.random.default_rng(0)
            observations = rng.integers(0, 2, size=(200, 6, 7, 2)).astype(np.int8)
            masks = rng.random((200, 7)) < 0.3
            masks[np.arange(200), rng.integers(0, 7, 200)] = True
            chosen = agent.act_batch(observations, masks)
            assert masks[np.arange(200), chosen].all()


def test_vec_env_protocol_for_maskable_ppo() -> None:
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    venv = connect4_env.make_sb3_vec_env(4, rows=4, columns=5, win_length=4)
    assert is_masking_supported(venv)
    obs = venv.reset()
    assert obs.shape == (4, 4, 5, 2) and get_action_masks(venv).shape == (4, 5)
    dones = np.zeros(4, bool)
    infos: list = []
    for _ in range(30):
        masks = get_action_masks(venv)
        obs, rewards, dones, infos = venv.step(masks.argmax(1))
        if dones.any():
            break
    assert dones.any()
    i = int(np.flatnonzero(dones)[0])
    assert infos[i]["terminal_observation"].shape == (4, 5, 2) and "episode" in infos[i]


def test_vec_env_infos_name_each_ended_games_outcome_as_connect4_v0_does() -> None:
    # SB3's DummyVecEnv over Connect4-v0 passes on its final info's "outcome"; the batched VecEnv gives the same
    from stable_baselines3.common.vec_env import DummyVecEnv

    rng = np.random.default_rng(0)
    for make in (
        lambda: connect4_env.make_sb3_vec_env(8, opponent="random", **SMALL),
        lambda: DummyVecEnv([lambda: gym.make("Connect4-v0", opponent="random", **SMALL)] * 8),
    ):
        venv = make()
        venv.seed(0)
        venv.reset()
        seen: dict[str, int] = {}
        for _ in range(400):
            masks = np.asarray(venv.env_method("action_masks")) if isinstance(venv, DummyVecEnv) else None
            masks = venv.action_masks() if masks is None else masks
            actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in masks])
            _, rewards, dones, infos = venv.step(actions)
            for i in np.flatnonzero(dones):
                outcome = infos[i]["outcome"]
                assert outcome == {1.0: "win", -1.0: "loss", 0.0: "draw"}[float(rewards[i])]
                seen[outcome] = seen.get(outcome, 0) + 1
            for i in np.flatnonzero(~dones):
                assert "outcome" not in infos[i]
        venv.close()
        assert seen.get("win", 0) > 0 and seen.get("loss", 0) > 0, seen


def test_trained_model_as_an_opponent(tmp_path: Path) -> None:
    from sb3_contrib import MaskablePPO

    model = MaskablePPO(
        "MlpPolicy", connect4_env.make_sb3_vec_env(4), seed=0, device="cpu", n_steps=32, batch_size=64
    )
    model.learn(256)
    model.save(tmp_path / "m.zip")
    for opponent in (f"sb3:{tmp_path / 'm.zip'}", SB3Agent.load(tmp_path / "m.zip")):
        env = gym.make("Connect4-v0", opponent=opponent, agent_first=False)
        obs, info = env.reset(seed=0)
        assert obs.sum() == 1  # the model moved first
    assert isinstance(make_policy("sb3", policy=model), SB3Agent)
    board = Board(Rules(4, 5, 3))
    with pytest.raises(ValueError, match="another board size"):
        SB3Agent(model).act(observation_planes(board), action_mask(board))


def test_load_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        SB3Agent.load(tmp_path / "missing.zip")
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a readable Stable-Baselines3 model"):
        SB3Agent.load(bad)
    with pytest.raises(ValueError, match="algo"):
        SB3TrainConfig(algo="a2c")


def test_train_baseline_self_play(tmp_path: Path) -> None:
    config = SB3TrainConfig(
        opponent="self",
        timesteps=3000,
        n_envs=8,
        eval_freq=1500,
        eval_games=4,
        eval_opponents=("random",),
        snapshot_freq=1000,
        out=str(tmp_path),
        progress=False,
        **SMALL,
    )
    result = train_baseline(config)
    assert not result.interrupted and result.timesteps >= 3000
    assert {p.name for p in tmp_path.iterdir()} >= {
        "model.zip",
        "model.json",
        "checkpoint.zip",
        "eval.csv",
        "curve.png",
    }
    assert json.loads((tmp_path / "model.json").read_text())["algo"] == "maskable_ppo"
    assert len(result.evaluations) >= 2


def run_script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CONNECT4, "train-sb3", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.slow  # over 6 s on 2 cores: make test-slow (CI runs it)
def test_script_help_and_tiny_run(tmp_path: Path) -> None:
    result = run_script("--help")
    assert result.returncode == 0 and "--opponent" in result.stdout and "maskable_ppo" in result.stdout
    result = run_script(
        "--algo",
        "dqn",
        "--timesteps",
        "1000",
        "--n-envs",
        "4",
        "--eval-freq",
        "500",
        "--eval-games",
        "2",
        "--eval-opponents",
        "random",
        "--out",
        str(tmp_path),
        "--quiet",
        "--rows",
        "4",
        "--columns",
        "5",
        "--win-length",
        "3",
    )
    assert result.returncode == 0, result.stderr
    assert "finished" in result.stdout and (tmp_path / "model.zip").exists()
    result = run_script("--algo", "a2c")
    assert result.returncode == 2 and "invalid choice" in result.stderr


@pytest.mark.slow  # over 6 s on 2 cores: make test-slow (CI runs it)
def test_ctrl_c_keeps_the_last_model(tmp_path: Path) -> None:
    process = start(
        "train-sb3",
        "--timesteps",
        "10000000",
        "--eval-freq",
        "2000",
        "--eval-games",
        "2",
        "--eval-opponents",
        "random",
        "--out",
        str(tmp_path),
        "--quiet",
    )
    try:
        # Ctrl-C once the first evaluation (after 2,000 steps) has saved a checkpoint, however long that took
        wait_for((tmp_path / "checkpoint.zip").exists, process, "checkpoint.zip")
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=HANG_GUARD)
    finally:
        if process.poll() is None:  # never leave the training running
            process.kill()
            process.communicate()
    assert process.returncode == 130, err  # the shell's code for SIGINT, after saving
    assert "interrupted" in out and (tmp_path / "model.zip").exists()
    assert SB3Agent.load(tmp_path / "model.zip").act(
        np.zeros((6, 7, 2), np.int8), np.ones(7, np.int8)
    ) in range(7)


def test_cnn_features_train_and_play(tmp_path: Path) -> None:
    config = SB3TrainConfig(
        features="cnn",
        timesteps=1024,
        n_envs=4,
        eval_freq=1024,
        eval_games=2,
        eval_opponents=("random",),
        out=str(tmp_path),
        progress=False,
        **SMALL,
    )
    result = train_baseline(config)
    agent = SB3Agent.load(result.model_path)
    assert "BoardCNN" in repr(agent.policy.features_extractor)
    board = Board(Rules(**SMALL))
    assert agent.act(observation_planes(board), action_mask(board)) in range(5)
    with pytest.raises(ValueError, match="features"):
        SB3TrainConfig(features="transformer")


@pytest.mark.slow
def test_maskable_ppo_learns_to_beat_random(tmp_path: Path) -> None:
    config = SB3TrainConfig(
        timesteps=400_000,
        eval_freq=400_000,
        eval_games=10,
        eval_opponents=("random",),
        out=str(tmp_path),
        progress=False,
    )
    result = train_baseline(config)
    agent = SB3Agent.load(result.model_path)
    match = play_match(agent, RandomAgent(seed=5), 400, Rules())
    assert match.wins / match.n_games >= 0.93


def test_the_two_training_configs_have_distinct_names() -> None:
    from connect4_agents.alphazero import config as alphazero_config
    from connect4_agents.sb3 import train as sb3_train

    assert sb3_train.SB3TrainConfig.__name__ == "SB3TrainConfig"
    assert alphazero_config.AlphaZeroTrainConfig.__name__ == "AlphaZeroTrainConfig"
    # the shared former name TrainConfig was removed before 1.0: one name for each class
    assert not hasattr(sb3_train, "TrainConfig") and not hasattr(alphazero_config, "TrainConfig")
