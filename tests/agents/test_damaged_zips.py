"""A damaged model file (a flipped byte, an encrypted or unknown-compression member) is a ValueError naming the
file, from each zip reader: never a zlib, zipfile or NotImplementedError traceback. A crafted one (a member of
deflated zeros, declared at its size or smaller) is refused having decompressed a bounded number of bytes,
counted."""

from __future__ import annotations

import io
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.extras import importorskip

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


ZEROS = 32 << 20  # bytes of zeros a crafted member holds (a deflate stream of about 32 KB)


class _Counting:
    """A decompressor that adds the bytes it puts out to ``counter``."""

    def __init__(self, inner: Any, counter: list[int]) -> None:
        self.inner = inner
        self.counter = counter

    def decompress(self, data: bytes, max_length: int = 0) -> bytes:
        out = self.inner.decompress(data, max_length)
        self.counter[0] += len(out)
        return out

    def flush(self, *args: Any) -> bytes:
        out = self.inner.flush(*args)
        self.counter[0] += len(out)
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.fixture
def decompressed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The bytes zipfile decompresses while the test runs (every deflated member read goes through this)."""
    counter = [0]
    real = zipfile._get_decompressor  # type: ignore[attr-defined]

    def counting(compress_type: int) -> Any:
        inner = real(compress_type)
        return inner if inner is None else _Counting(inner, counter)

    monkeypatch.setattr(zipfile, "_get_decompressor", counting)
    return counter


def _with_member(source: Path, target: Path, name: str, write: Callable[[Any], None]) -> Path:
    """``source``'s zip with the member ``name`` written anew by ``write(stream)``, deflated."""
    with zipfile.ZipFile(source) as archive:
        members = {other: archive.read(other) for other in archive.namelist() if other != name}
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for other, data in members.items():
            archive.writestr(other, data)
        with archive.open(name, "w", force_zip64=False) as stream:
            write(stream)
    return target


def _zeros(stream: Any, size: int = ZEROS) -> None:
    chunk = bytes(1 << 20)
    for _ in range(size // len(chunk)):
        stream.write(chunk)


def _declare(path: Path, name: str, size: int) -> None:
    """Rewrite the uncompressed size that the zip's headers give for ``name`` (a header that lies)."""
    data = bytearray(path.read_bytes())
    encoded = name.encode()
    for signature, name_at, size_at in ((b"PK\x03\x04", 30, 22), (b"PK\x01\x02", 46, 24)):
        start = data.find(signature)
        while start != -1:
            if data[start + name_at : start + name_at + len(encoded)] == encoded:
                data[start + size_at : start + size_at + 4] = struct.pack("<I", size)
            start = data.find(signature, start + 4)
    path.write_bytes(bytes(data))


def test_an_alphazero_member_of_zeros_is_refused_by_its_declared_size(
    tmp_path: Path, decompressed: list[int]
) -> None:
    """216 KiB of deflated zeros declared as 223 MB of weights cost 2.7 s and 650 MB before being refused: the
    size model.json's network takes is known before weights.pt is opened."""
    path, load = _alphazero_file(tmp_path)
    bomb = _with_member(path, tmp_path / "bomb.zip", "weights.pt", _zeros)
    assert bomb.stat().st_size < ZEROS // 500
    decompressed[0] = 0
    with pytest.raises(
        ValueError, match=r"weights.pt is declared as 33,554,432 bytes; the network in model.json"
    ):
        load(bomb)
    assert decompressed[0] < 64 << 10  # model.json only


def test_an_alphazero_member_that_lies_about_its_size_is_read_no_further(
    tmp_path: Path, decompressed: list[int]
) -> None:
    path, load = _alphazero_file(tmp_path)  # skips without torch
    from connect4_agents.alphazero.files import weights_bytes

    bomb = _with_member(path, tmp_path / "bomb.zip", "weights.pt", _zeros)
    least, most = weights_bytes(8, 1)
    _declare(bomb, "weights.pt", least)  # as small as the network's weights: the header lies
    decompressed[0] = 0
    with pytest.raises(ValueError, match="bomb.zip"):
        load(bomb)
    assert decompressed[0] < 2 * most


def test_an_sb3_policy_of_zeros_is_refused_by_its_declared_size(
    tmp_path: Path, decompressed: list[int]
) -> None:
    importorskip("stable_baselines3")
    from stable_baselines3 import PPO

    import connect4_env
    from connect4_agents.sb3.files import load_policy

    env = connect4_env.make_sb3_vec_env(2, rows=4, columns=5, win_length=3)
    path = tmp_path / "model.zip"
    PPO("MlpPolicy", env, n_steps=8, batch_size=8, seed=0, device="cpu").save(path)
    load_policy(path)  # the undamaged file loads
    bomb = _with_member(path, tmp_path / "bomb.zip", "policy.pth", _zeros)
    decompressed[0] = 0
    with pytest.raises(ValueError, match=r"policy.pth is declared as 33,554,432 bytes; the network its"):
        load_policy(bomb)
    data_bytes = zipfile.ZipFile(path).getinfo("data").file_size
    assert decompressed[0] < data_bytes + (64 << 10)  # its data, read first to learn the network's size
    _declare(bomb, "policy.pth", zipfile.ZipFile(path).getinfo("policy.pth").file_size)
    decompressed[0] = 0
    with pytest.raises(ValueError, match="bomb.zip"):
        load_policy(bomb)
    assert decompressed[0] < data_bytes + (4 << 20)


def test_qlearning_metadata_declared_wider_than_its_member_is_refused_unread(
    tmp_path: Path, decompressed: list[int]
) -> None:
    """meta.npy's header declares a 40 MB string; its member, 40 MB of zeros, says it is 60,000 bytes."""
    path, load = _qlearning_file(tmp_path)

    def huge_string(stream: Any) -> None:
        header = {"descr": "<U10000000", "fortran_order": False, "shape": ()}
        buffer = io.BytesIO()
        np.lib.format.write_array_header_1_0(buffer, header)
        stream.write(buffer.getvalue())  # the magic string and the header
        _zeros(stream, 40 << 20)

    bomb = _with_member(path, tmp_path / "bomb.npz", "meta.npy", huge_string)
    _declare(bomb, "meta.npy", 60_000)  # within the metadata limit, past what the header read takes
    decompressed[0] = 0
    with pytest.raises(ValueError, match="its metadata is a string of 40,000,000 bytes"):
        load(bomb)
    assert decompressed[0] < 1 << 20


def test_a_zip_member_is_never_read_past_its_limit(tmp_path: Path, decompressed: list[int]) -> None:
    from connect4_agents._support.files import read_zip_member

    path = _with_member(_qlearning_file(tmp_path)[0], tmp_path / "zeros.zip", "zeros", _zeros)
    decompressed[0] = 0
    with zipfile.ZipFile(path) as archive, pytest.raises(ValueError, match="allowed: at most 1,000"):
        read_zip_member(archive, "zeros", 1000)
    assert decompressed[0] == 0
    _declare(path, "zeros", 1000)
    with zipfile.ZipFile(path) as archive, pytest.raises(ValueError, match="zeros"):
        read_zip_member(archive, "zeros", 5000)
    assert decompressed[0] < 64 << 10


def test_the_weights_size_is_the_networks_state_dict() -> None:
    torch = importorskip("torch")
    from connect4_agents.alphazero import PolicyValueNet
    from connect4_agents.alphazero.files import weights_bytes

    for channels, blocks in [(1, 0), (8, 1), (3, 7), (32, 2), (64, 4)]:
        state = PolicyValueNet(channels, blocks).state_dict()
        raw = sum(tensor.numel() * tensor.element_size() for tensor in state.values())
        buffer = io.BytesIO()
        torch.save(state, buffer)
        least, most = weights_bytes(channels, blocks)
        assert least == raw <= len(buffer.getvalue()) <= most
