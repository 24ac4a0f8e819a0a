"""A damaged model file (a flipped byte, an encrypted or unknown-compression member) is a ValueError naming the
file, from each zip reader: never a zlib, zipfile or NotImplementedError traceback."""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from extras import importorskip

from connect4_agents import QLearningAgent
from connect4_env import Rules


def _patch_headers(data: bytes, flags: int | None = None, method: int | None = None) -> bytes:
    """Every member's local and central headers given ``flags`` and/or compression ``method``."""
    out = bytearray(data)
    for signature, flag_at, method_at in ((b"PK\x03\x04", 6, 8), (b"PK\x01\x02", 8, 10)):
        start = out.find(signature)
        while start != -1:
            if flags is not None:
                out[start + flag_at : start + flag_at + 2] = struct.pack("<H", flags)
            if method is not None:
                out[start + method_at : start + method_at + 2] = struct.pack("<H", method)
            start = out.find(signature, start + 4)
    return bytes(out)


def _flip_middle(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :]


DAMAGES: dict[str, Callable[[bytes], bytes]] = {
    "a flipped byte": _flip_middle,
    "an encrypted member": lambda data: _patch_headers(data, flags=1),
    "an unknown compression method": lambda data: _patch_headers(data, method=99),
}


def _qlearning_file(tmp_path: Path) -> tuple[Path, Callable[[Path], Any]]:
    agent = QLearningAgent(Rules(4, 5, 4), seed=0)
    agent.train("random", 300)
    path = tmp_path / "table.npz"
    agent.save(path)
    return path, QLearningAgent.load


def _alphazero_file(tmp_path: Path) -> tuple[Path, Callable[[Path], Any]]:
    importorskip("torch")
    from connect4_agents.alphazero import PolicyValueNet, load_model, save_model

    path = tmp_path / "model.zip"
    save_model(path, PolicyValueNet(channels=8, blocks=1), Rules(), {})
    return path, load_model


@pytest.mark.parametrize("damage", list(DAMAGES))
@pytest.mark.parametrize("make", [_qlearning_file, _alphazero_file], ids=["qlearning", "alphazero"])
def test_a_damaged_model_file_is_a_value_error(tmp_path: Path, make: Any, damage: str) -> None:
    path, load = make(tmp_path)
    load(path)  # the undamaged file loads
    path.write_bytes(DAMAGES[damage](path.read_bytes()))
    with pytest.raises(ValueError, match=str(path.name)):
        load(path)


def test_weights_of_another_dtype_or_layout_are_refused(tmp_path: Path) -> None:
    torch = importorskip("torch")
    import io
    import zipfile

    from connect4_agents.alphazero import PolicyValueNet, load_model, save_model

    path = tmp_path / "model.zip"
    net = PolicyValueNet(channels=8, blocks=1)
    save_model(path, net, Rules(), {})
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    state = {
        key: value.double() if value.is_floating_point() else value for key, value in net.state_dict().items()
    }
    buffer = io.BytesIO()
    torch.save(state, buffer)
    members["weights.pt"] = buffer.getvalue()
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    with pytest.raises(ValueError, match="torch.float64 tensor; the network's is a dense torch.float32 one"):
        load_model(path)
