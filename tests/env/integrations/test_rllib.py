"""The RLlib integration, run in its own venv by ``make test-rllib`` (ray[rllib] pins its own gymnasium)."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.rllib
pytest.importorskip(
    "ray.rllib", reason="RLlib runs in its own venv: make test-rllib (ray[rllib] pins its own gymnasium)"
)

from helpers.commands import session_processes, start, wait_gone  # noqa: E402

from connect4_env import Board, Rules  # noqa: E402
from connect4_env.integrations.rllib import Connect4MultiAgentEnv  # noqa: E402


def test_rllib_checker_accepts_the_env():
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    check_multiagent_environments(Connect4MultiAgentEnv({}))
    check_multiagent_environments(Connect4MultiAgentEnv({"rows": 4, "columns": 5}))


@pytest.mark.parametrize("size", [(6, 7, 4), (4, 5, 4), (5, 5, 3)])
def test_random_games_follow_the_rules(size):
    rows, columns, win_length = size
    env = Connect4MultiAgentEnv({"rows": rows, "columns": columns, "win_length": win_length})
    rng = np.random.default_rng(0)
    for episode in range(30):
        observations, _ = env.reset(seed=episode)
        board = Board(Rules(rows, columns, win_length))
        while True:
            (agent,) = observations  # only the player to move is asked
            assert agent == f"player_{board.to_move}"
            obs = observations[agent]
            assert obs["observations"].dtype == np.float32 and obs["observations"].shape == (
                rows * columns * 2,
            )
            assert obs["action_mask"].dtype == np.float32
            assert obs["action_mask"].tolist() == board.legal_mask()
            assert env.observation_spaces[agent].contains(obs)
            column = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            board.play(column)
            observations, rewards, terminated, truncated, _ = env.step({agent: column})
            assert truncated["__all__"] is False
            if board.is_terminal:
                assert terminated["__all__"] is True and set(observations) == {"player_0", "player_1"}
                expected = (
                    {0: 0.0, 1: 0.0} if board.winner is None else {board.winner: 1.0, 1 - board.winner: -1.0}
                )
                assert rewards == {f"player_{k}": v for k, v in expected.items()}
                break
            assert terminated["__all__"] is False and rewards == {agent: 0.0}


def test_bad_config_and_turn():
    with pytest.raises(ValueError, match="unknown env config keys"):
        Connect4MultiAgentEnv({"rowz": 4})
    with pytest.raises(ValueError, match="rows"):
        Connect4MultiAgentEnv({"rows": 0})
    env = Connect4MultiAgentEnv({})
    env.reset()
    with pytest.raises(ValueError, match="player_0's turn"):
        env.step({"player_1": 3})


def test_two_iterations_of_self_play_and_nothing_left(tmp_path):
    process = start(
        "train-rllib", "--iterations", "2", "--rows", "4", "--columns", "5", "--batch-size", "400",
        "--minibatch-size", "100", "--epochs", "1", "--hidden", "32", "--num-cpus", "2", "--out", str(tmp_path),
        "--eval-games", "4", "--eval-opponents", "random", "mcts:5", new_session=True)  # fmt: skip
    stdout, stderr = process.communicate(timeout=400)
    assert process.returncode == 0, stderr[-3000:]
    lines = [line for line in stdout.splitlines() if line.startswith("iteration")]
    assert len(lines) == 2
    for line in lines:  # the env runners really played
        assert int(line.split(":")[1].split()[0]) > 0
    assert (tmp_path / "checkpoint_0002").is_dir()
    assert "rllib vs random" in stdout and "rllib vs mcts:5" in stdout
    assert wait_gone(process.pid, 60) == [], session_processes(process.pid)
