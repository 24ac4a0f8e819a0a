"""SB3 model files load without running code stored in them, and give the same moves as SB3's own policy."""

from __future__ import annotations

import base64
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.extras import importorskip

importorskip("stable_baselines3")
import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from stable_baselines3 import DQN, PPO  # noqa: E402

import connect4_env  # noqa: E402
from connect4_agents.sb3.agent import SB3Agent  # noqa: E402
from connect4_agents.sb3.files import load_policy, policy_parameters, sidecar_architecture  # noqa: E402
from connect4_agents.sb3.hyperparameters import cnn_policy_kwargs  # noqa: E402
from connect4_env import Board, Rules  # noqa: E402
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
        board = Board(Rules(**SMALL))
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
    board = Board(Rules(**SMALL))
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
    board = Board(Rules(**SMALL))
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


def members_of(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def rewrite(path: Path, members: dict[str, bytes]) -> Path:
    crafted = path.with_name("crafted.zip")
    with zipfile.ZipFile(crafted, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return crafted


@pytest.mark.parametrize(
    ("cls", "policy_kwargs", "features"),
    [
        (PPO, {"net_arch": [32, 16]}, "mlp"),
        (MaskablePPO, {"net_arch": {"pi": [8], "vf": []}}, "mlp"),
        (DQN, {"net_arch": [16]}, "mlp"),
        (
            PPO,
            {"features_extractor_kwargs": {"channels": 3, "features": 8}, "share_features_extractor": False},
            "cnn",
        ),
        (DQN, {"features_extractor_kwargs": {"channels": 4, "features": 8}, "net_arch": [16]}, "cnn"),
    ],
)
def test_policy_parameters_counts_what_sb3_builds(
    tmp_path: Path, cls: type, policy_kwargs: dict[str, object], features: str
) -> None:
    kwargs = dict(policy_kwargs)
    if features == "cnn":
        kwargs.update(cnn_policy_kwargs(**policy_kwargs["features_extractor_kwargs"]))  # type: ignore[arg-type]
        kwargs["net_arch"] = policy_kwargs.get("net_arch", [64, 64])
    model = saved_model(cls, **kwargs)
    built = sum(p.numel() for p in model.policy.parameters())
    algo = {"PPO": "ppo", "MaskablePPO": "maskable_ppo", "DQN": "dqn"}[cls.__name__]
    plain = {**policy_kwargs, "net_arch": kwargs.get("net_arch")}
    assert policy_parameters(algo, 4, 5, plain, features) == built


def saved_model(cls: type, **kwargs: object) -> Any:
    env = connect4_env.make_sb3_vec_env(2, rows=4, columns=5, win_length=3)
    extra = {"learning_starts": 0} if cls is DQN else {"n_steps": 8, "batch_size": 8}
    return cls("MlpPolicy", env, seed=0, device="cpu", **extra, policy_kwargs=kwargs)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("huge_layers", r"net_arch\[0\] must be an integer in 1\.\.16384, got 200000"),
        ("negative_layer", r"net_arch\[0\] must be an integer in 1\.\.16384, got -5"),
        ("wider_than_the_weights", r"policy\.pth has [\d,]+ bytes; .* needs at least"),
        ("huge_board", r"policy\.pth has [\d,]+ bytes; .* needs at least"),
        ("board_beyond_the_limits", r"not a board this package plays.*at most 1000000 cells"),
        ("sidecar_channels", r"channels'\] must be an integer in 1\.\.1024, got 1000000"),
        ("sidecar_class", r"features_extractor_class"),
        ("nan_weights", r"NaN or infinity"),
    ],
)
def test_crafted_architectures_are_refused_before_anything_is_built(
    tmp_path: Path, damage: str, message: str
) -> None:
    path = saved(tmp_path, PPO, policy_kwargs={"net_arch": [16]})
    members = members_of(path)
    data = json.loads(members["data"])
    sidecar: dict[str, object] | None = None
    if damage == "huge_layers":
        data["policy_kwargs"] = {"net_arch": [200000, 200000]}
    elif damage == "negative_layer":
        data["policy_kwargs"] = {"net_arch": [-5]}
    elif damage == "wider_than_the_weights":
        data["policy_kwargs"] = {"net_arch": [4096, 4096]}  # 140 MB of weights named in a few bytes
    elif damage == "huge_board":
        data["observation_space"]["_shape"] = [1000, 1000, 2]
        data["action_space"]["n"] = 1000
    elif damage == "board_beyond_the_limits":
        data["observation_space"]["_shape"] = [2000, 2000, 2]
        data["action_space"]["n"] = 2000
    elif damage == "sidecar_channels":
        sidecar = {"features": "cnn", "policy_kwargs": {"features_extractor_kwargs": {"channels": 10**6}}}
    elif damage == "sidecar_class":
        sidecar = {"features": "mlp", "policy_kwargs": {"features_extractor_class": "os.system"}}
    elif damage == "nan_weights":
        import io

        state = torch.load(io.BytesIO(members["policy.pth"]), weights_only=True)
        next(iter(state.values())).fill_(float("nan"))
        stream = io.BytesIO()
        torch.save(state, stream)
        members["policy.pth"] = stream.getvalue()
    members["data"] = json.dumps(data).encode()
    crafted = rewrite(path, members)
    if sidecar is not None:
        crafted.with_suffix(".json").write_text(json.dumps(sidecar))
    with pytest.raises(ValueError, match=message) as caught:
        SB3Agent.load(crafted)
    assert str(caught.value).startswith(f"{crafted}: ")
    with pytest.raises(ValueError, match="crafted.zip"):
        load_policy(crafted)  # the loader itself names the file too


def patch_headers(
    raw: bytes, local_offset: tuple[int, int], central_offset: tuple[int, int], patch: Any
) -> bytes:
    """``patch(field_bytes) -> bytes`` applied to a 2- or 4-byte field of every local and central header."""
    data = bytearray(raw)
    for signature, offset in ((b"PK\x03\x04", local_offset), (b"PK\x01\x02", central_offset)):
        start = data.find(signature)
        while start != -1:
            data[start + offset[0] : start + offset[0] + offset[1]] = patch(
                bytes(data[start + offset[0] : start + offset[0] + offset[1]])
            )
            start = data.find(signature, start + 4)
    return bytes(data)


@pytest.mark.parametrize(
    ("damage", "local", "central", "patch"),
    [
        ("bad_crc", (14, 4), (16, 4), lambda field: bytes(b ^ 0xFF for b in field)),
        ("unknown_compression", (8, 2), (10, 2), lambda field: (97).to_bytes(2, "little")),
        (
            "encrypted",
            (6, 2),
            (8, 2),
            lambda field: (int.from_bytes(field, "little") | 1).to_bytes(2, "little"),
        ),
    ],
)
def test_damaged_zip_members_get_a_value_error_naming_the_file(
    tmp_path: Path, damage: str, local: tuple[int, int], central: tuple[int, int], patch: Any
) -> None:
    path = rewrite(saved(tmp_path, PPO, policy_kwargs={"net_arch": [16]}), members_of(tmp_path / "model.zip"))
    path.write_bytes(patch_headers(path.read_bytes(), local, central, patch))
    # the damage is what the standard library chokes on
    with (
        zipfile.ZipFile(path) as archive,
        pytest.raises((zipfile.BadZipFile, NotImplementedError, RuntimeError)),
    ):
        archive.read("policy.pth")
    with pytest.raises(ValueError, match=r"crafted\.zip: .*cannot be read from the zip"):
        SB3Agent.load(path)
