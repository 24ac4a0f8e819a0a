"""SB3 model files load without running code stored in them, and give the same moves as SB3's own policy."""

from __future__ import annotations

import base64
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from extras import importorskip

importorskip("stable_baselines3")
import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from stable_baselines3 import DQN, PPO  # noqa: E402

import connect4_env  # noqa: E402
from connect4_agents.sb3.agent import SB3Agent  # noqa: E402
from connect4_agents.sb3.files import sidecar_architecture  # noqa: E402
from connect4_agents.sb3.train import cnn_policy_kwargs  # noqa: E402
from connect4_env import Board  # noqa: E402
from connect4_env.encoding import action_mask, observation_planes  # noqa: E402

torch.set_num_threads(1)
SMALL = {"rows": 4, "columns": 5, "win_length": 3}


class Payload:
    """Unpickling this runs ``open(marker, "w")``: the proof that a loader executed stored code."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (open, (self.marker, "w"))


def saved(tmp_path: Path, cls: type, **kwargs: object) -> Path:
    env = connect4_env.make_sb3_vec_env(2, **SMALL)
    extra = {"learning_starts": 0} if cls is DQN else {"n_steps": 8, "batch_size": 8}
    model = cls("MlpPolicy", env, seed=0, device="cpu", **extra, **kwargs)
    path = tmp_path / "model.zip"
    model.save(path)
    return path


def positions() -> list[Board]:
    rng = np.random.default_rng(0)
    boards = []
    for _ in range(20):
        board = Board.empty(**SMALL)
        for _ in range(int(rng.integers(0, 8))):
            if board.is_terminal:
                break
            board.play(int(rng.choice(board.legal_moves())))
        if not board.is_terminal:
            boards.append(board)
    return boards


@pytest.mark.parametrize("cls", [PPO, MaskablePPO, DQN])
def test_safe_load_plays_as_the_sb3_model(tmp_path: Path, cls: type) -> None:
    path = saved(tmp_path, cls, policy_kwargs={"net_arch": [32]})
    ours = SB3Agent.load(path)
    theirs = SB3Agent(cls.load(path, device="cpu").policy)
    for board in positions():
        planes, mask = observation_planes(board), action_mask(board)
        np.testing.assert_allclose(ours._scores(planes[None]), theirs._scores(planes[None]), rtol=1e-6)
        assert ours.act(planes, mask) == theirs.act(planes, mask)


def test_a_crafted_pickle_in_data_is_never_run(tmp_path: Path) -> None:
    path = saved(tmp_path, MaskablePPO, policy_kwargs={"net_arch": [16]})
    marker = tmp_path / "pwned"
    import cloudpickle

    payload = base64.b64encode(cloudpickle.dumps(Payload(str(marker)))).decode()
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    data = json.loads(members["data"])
    for entry in data.values():
        if isinstance(entry, dict) and ":serialized:" in entry:
            entry[":serialized:"] = payload
    members["data"] = json.dumps(data).encode()
    crafted = tmp_path / "crafted.zip"
    with zipfile.ZipFile(crafted, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    agent = SB3Agent.load(crafted)  # loads: every pickled entry is ignored
    board = Board.empty(**SMALL)
    assert agent.act(observation_planes(board), action_mask(board)) in range(5)
    env = connect4_env.make_sb3_vec_env(2, opponent=f"sb3:{crafted}", **SMALL)
    env.reset()
    assert not marker.exists()


def test_pickled_policy_kwargs_need_the_sidecar(tmp_path: Path) -> None:
    path = saved(tmp_path, PPO, policy_kwargs=cnn_policy_kwargs(4, 8))
    with pytest.raises(ValueError, match="pickled objects"):
        SB3Agent.load(path)
    model = PPO.load(path, device="cpu")
    path.with_suffix(".json").write_text(json.dumps(sidecar_architecture(model, "cnn")))
    agent = SB3Agent.load(path)
    board = Board.empty(**SMALL)
    planes = observation_planes(board)
    np.testing.assert_allclose(
        agent._scores(planes[None]), SB3Agent(model.policy)._scores(planes[None]), rtol=1e-6
    )


@pytest.mark.parametrize(
    "damage", ["truncated_weights", "wrong_shapes", "no_weights", "pickled_weights", "other_policy"]
)
def test_damaged_models_get_a_value_error(tmp_path: Path, damage: str) -> None:
    path = saved(tmp_path, MaskablePPO, policy_kwargs={"net_arch": [16]})
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    if damage == "truncated_weights":
        members["policy.pth"] = members["policy.pth"][: len(members["policy.pth"]) // 2]
    elif damage == "wrong_shapes":
        data = json.loads(members["data"])
        data["policy_kwargs"] = {"net_arch": [64]}
        members["data"] = json.dumps(data).encode()
    elif damage == "no_weights":
        del members["policy.pth"]
    elif damage == "pickled_weights":
        import io
        import pickle

        stream = io.BytesIO()
        torch.save({"x": Payload(str(tmp_path / "pwned"))}, stream, pickle_module=pickle)
        members["policy.pth"] = stream.getvalue()
    elif damage == "other_policy":
        data = json.loads(members["data"])
        data["policy_class"]["__init__"] = "<function SomethingElse.__init__ at 0x0>"
        members["data"] = json.dumps(data).encode()
    broken = tmp_path / "broken.zip"
    with zipfile.ZipFile(broken, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    with pytest.raises(ValueError, match="broken.zip"):
        SB3Agent.load(broken)
    assert not (tmp_path / "pwned").exists()
