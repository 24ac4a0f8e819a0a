"""The n-tuple agent as users meet it: specs, envs, the command, resuming a run."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import connect4_env  # noqa: F401  (registers the envs)
from connect4_agents.commands.train_ntuple import main as train_main
from connect4_agents.ntuple import NTupleAgent, NTupleNetwork, NTupleTrainer
from connect4_env.core import Board
from connect4_env.encoding import action_mask, observation_planes
from connect4_env.policy import policy_from_spec
from connect4_env.rules import Rules


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    network = NTupleNetwork.create(Rules(), n_tuples=10, length=6, seed=0)
    trainer = NTupleTrainer(network, games=2000, seed=0)
    trainer.train(2000)
    return trainer.save(tmp_path_factory.mktemp("ntuple") / "model.npz")


def test_the_spec_loads_a_file_and_plays_legal_moves_in_the_gym_env(model: Path) -> None:
    agent = policy_from_spec(f"ntuple:{model}", seed=1, rules=Rules())
    assert isinstance(agent, NTupleAgent)
    env = gym.make("Connect4-v0", opponent=f"ntuple:{model}")
    observation, info = env.reset(seed=0)
    done = False
    while not done:
        action = agent.act(observation, info["action_mask"])
        assert info["action_mask"][action] == 1
        observation, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    env.close()


def test_an_immediate_win_is_always_taken(model: Path) -> None:
    agent = NTupleAgent.load(model, seed=0)
    board = Board.from_ascii(
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . O O . . . .
        . X X X . . O
        """
    )
    assert agent.act(observation_planes(board), action_mask(board)) in (0, 4)


def test_a_network_plays_only_its_own_board(model: Path) -> None:
    agent = NTupleAgent.load(model)
    with pytest.raises(ValueError, match="6x7"):
        agent.bind(Rules(4, 5, 4))
    with pytest.raises(ValueError, match="6x7"):
        policy_from_spec(f"ntuple:{model}", rules=Rules(5, 6, 4))
    with pytest.raises(TypeError, match="NTupleNetwork"):
        NTupleAgent("model.npz")  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError, match="no n-tuple network file"):
        policy_from_spec("ntuple:missing.npz")


def test_equal_values_are_broken_at_random_by_the_seed() -> None:
    network = NTupleNetwork.create(Rules(), n_tuples=4, length=4, seed=0)  # all weights zero: every move ties
    board = Board()
    chosen = {
        NTupleAgent(network, seed=s).act(observation_planes(board), action_mask(board)) for s in range(40)
    }
    assert len(chosen) > 3
    first = [
        NTupleAgent(network, seed=3).act(observation_planes(board), action_mask(board)) for _ in range(3)
    ]
    assert len(set(first)) == 1


def read_curve(out: Path) -> list[dict[str, str]]:
    with open(out / "curve.csv", newline="") as stream:
        return list(csv.DictReader(stream))


def test_the_command_writes_every_file_and_a_second_run_resumes(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    args = ["--rows", "4", "--columns", "5", "--tuples", "8", "--length", "5", "--out", str(out), "--quiet"]
    assert train_main([*args, "--games", "3000", "--curve-points", "3"]) == 0
    printed = capsys.readouterr().out
    for name in ("model.npz", "checkpoint.npz", "curve.csv", "config.json"):
        assert (out / name).exists(), name
        assert name in printed
    assert f"ntuple:{out / 'model.npz'}" in printed
    rows = read_curve(out)
    assert [int(r["games"]) for r in rows][-1] == 3000
    assert json.loads((out / "config.json").read_text())["games"] == 3000
    NTupleAgent.load(out / "model.npz").bind(Rules(4, 5, 4))

    assert train_main([*args, "--games", "4000", "--curve-points", "4"]) == 0
    printed = capsys.readouterr().out
    assert "resuming from" in printed and "3,000 games" in printed
    rows = read_curve(out)
    assert int(rows[-1]["games"]) == 4000 and int(rows[0]["games"]) < 4000  # the earlier rows kept

    assert train_main([*args, "--games", "500", "--curve-points", "1", "--fresh"]) == 0
    assert "resuming" not in capsys.readouterr().out
    assert [int(r["games"]) for r in read_curve(out)] == [500]


def test_a_6x7_run_measures_the_test_sets(tmp_path: Path) -> None:
    out = tmp_path / "run"
    common = ["--tuples", "6", "--length", "4", "--out", str(out), "--quiet", "--curve-games", "0"]
    assert train_main([*common, "--games", "300", "--curve-points", "1", "--final-games", "0"]) == 0
    row = read_curve(out)[-1]
    assert 0 < float(row["errors_pct"]) < 100
    assert 0 < float(row["6x7-begin-hard"]) < 100


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--alpha", "0"], "alpha"),
        (["--trace-decay", "1.5"], "trace_decay"),
        (["--epsilon", "-0.1"], "epsilon"),
        (["--cpu-minutes", "0"], "cpu_minutes"),
        (["--length", "13"], "length"),
        (["--length", "12", "--rows", "3", "--columns", "3", "--win-length", "3"], "does not fit"),
        (["--tuples", "100", "--length", "12"], "bytes of tables"),
        (["--rows", "0"], "rows"),
    ],
)
def test_bad_settings_are_refused_before_anything_is_written(
    tmp_path: Path, option: list[str], message: str, capsys
) -> None:
    out = tmp_path / "never"
    assert train_main([*option, "--games", "10", "--out", str(out), "--quiet"]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_values_of_a_trained_network_prefer_the_centre_at_the_start(model: Path) -> None:
    values = NTupleAgent.load(model).move_values(Board())
    assert np.argmax(values) in (2, 3, 4)


def test_a_narrowed_mask_is_obeyed_and_a_full_column_refused(model: Path) -> None:
    agent = NTupleAgent.load(model, seed=0)
    board = Board.from_moves([3, 3, 3, 3, 3, 3])
    planes = observation_planes(board)
    for allowed in ([0], [6], [1, 5]):
        mask = np.zeros(7, np.int8)
        mask[allowed] = 1
        assert agent.act(planes, mask) in allowed
    info = agent.move_info()
    assert info is not None and info["kind"] == "ntuple" and info["values"][3] is None
    with pytest.raises(ValueError, match="column 3, which is full"):
        agent.act(planes, np.ones(7, np.int8))
    with pytest.raises(ValueError, match="7 columns"):
        agent.act(planes, np.ones(5, np.int8))
    assert agent.act({"observation": planes, "action_mask": action_mask(board)}) != 3
    assert agent.act(planes) != 3  # no mask: the position's legal columns


def test_the_shield_wraps_the_network(model: Path) -> None:
    shielded = policy_from_spec(f"shield:ntuple:{model}", seed=0, rules=Rules())
    board = Board.from_ascii(
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        X X X . . O O
        """
    )
    assert shielded.act(observation_planes(board), action_mask(board)) == 3  # blocks the three in a row


def test_a_game_record_keeps_the_networks_values_and_reads_back(model: Path, tmp_path: Path) -> None:
    from connect4_agents.evaluation.arena import play_game
    from connect4_agents.evaluation.records import game_log, read_games, write_games

    agent = NTupleAgent.load(model, seed=0)
    record = play_game((agent, policy_from_spec("random", seed=1)), Rules(), record_search=True)
    assert record.search[0]["kind"] == "ntuple" and len(record.search[0]["values"]) == 7
    path = tmp_path / "games.jsonl"
    write_games(path, [game_log(record, ["ntuple", "random"], Rules())])
    again = read_games(path)[0]
    assert again.search[0] == record.search[0]
