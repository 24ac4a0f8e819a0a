"""AlphaZero model files: a zip of ``model.json`` (plain JSON metadata) and ``weights.pt`` (a state dict).

Nothing is unpickled: the weights are read with ``torch.load(weights_only=True)`` (tensors only), the
metadata as JSON; the state dict must match the network the metadata describes, tensor by tensor. Each
member's declared size is checked before it is decompressed (``weights.pt`` against the bytes the described
network's tensors take, read first from ``model.json``), and no member is read past that size, whatever its
header says. Saved atomically.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from connect4_agents._support.files import (
    atomic_write,
    is_version,
    parse_json,
    read_zip_member,
    require_safe_torch,
)
from connect4_agents.alphazero.config import MAX_BLOCKS, MAX_CHANNELS
from connect4_agents.alphazero.network import PolicyValueNet
from connect4_env.rules import Rules
from connect4_env.validation import check_int

__all__ = ["ModelFile", "save_model", "load_model", "weights_bytes", "FORMAT", "VERSION"]

FORMAT = "connect4-alphazero"
VERSION = 1
_MAX_METADATA = 1 << 20
_MAX_WEIGHTS = 256 << 20
# what torch.save adds to the tensors' bytes: a small record and alignment per tensor, the pickle, the zip
_SAVE_OVERHEAD_PER_TENSOR = 1024
_SAVE_OVERHEAD = 64 << 10


@dataclass
class ModelFile:
    """A network with the rules it plays and free-form training ``info`` (JSON)."""

    net: PolicyValueNet
    rules: Rules
    info: dict[str, Any] = field(default_factory=dict)


def save_model(
    path: str | os.PathLike[str], net: PolicyValueNet, rules: Rules, info: dict[str, Any] | None = None
) -> Path:
    """Write the model atomically; ``info`` must be plain JSON. Returns the path written."""
    metadata = {
        "format": FORMAT,
        "version": VERSION,
        "rows": rules.rows,
        "columns": rules.columns,
        "win_length": rules.win_length,
        "network": net.config(),
        "info": info or {},
    }
    text = json.dumps(metadata, indent=2)
    buffer = io.BytesIO()
    torch.save({key: value.detach().cpu() for key, value in net.state_dict().items()}, buffer)
    weights = buffer.getvalue()

    def write(stream: Any) -> None:
        with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("model.json", text)
            archive.writestr("weights.pt", weights)

    return atomic_write(path, write)


def weights_bytes(channels: int, blocks: int) -> tuple[int, int]:
    """The least and the most bytes a `weights.pt` of a `PolicyValueNet(channels, blocks)` takes: the bytes of
    its state dict's tensors (float32, and an int64 batch count per batch norm), and those plus what
    `torch.save` adds to them. Worked out from the network's layers, without building it.
    """
    batch_norm = 4 * channels  # weight, bias, running mean and variance
    floats = 2 * 9 * channels + batch_norm  # the stem: a 3x3 convolution of the 2 planes, a batch norm
    floats += blocks * 2 * (9 * channels * channels + batch_norm)  # each block: two of them, channels wide
    floats += (2 * channels * channels + channels) + (channels + 1)  # the policy head's 1x1 convolutions
    floats += (2 * channels * 64 + 64) + (64 + 1)  # the value head's linear layers
    counters = 1 + 2 * blocks  # num_batches_tracked of each batch norm
    tensors = 14 + 12 * blocks
    raw = 4 * floats + 8 * counters
    return raw, raw + _SAVE_OVERHEAD_PER_TENSOR * tensors + _SAVE_OVERHEAD


def load_model(path: str | os.PathLike[str]) -> ModelFile:
    """Read a model written by `save_model`.

    Raises:
        TypeError: ``path`` is not a path (a str or os.PathLike).
        ValueError: ``path`` is a folder, or the file is not a model zip, is of another format or version (a
            version that is not an integer, such as ``true``, included), has bad metadata, or holds weights
            that are not a plain state dict of tensors or do not fit the network described.
        OSError: the file cannot be read.
        MissingExtraError: the installed torch is older than 2.6, whose ``weights_only=True`` is not safe.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"a model file path must be a str or os.PathLike, got {type(path).__name__}")
    require_safe_torch(torch, "loading an AlphaZero model")
    if os.path.isdir(path):  # zipfile would say only "[Errno 21] Is a directory"
        raise ValueError(
            f"{path} is a folder; an AlphaZero model is a .zip file (written by save_model or connect4 "
            "train-alphazero)"
        )
    try:
        return _read(path)
    except ValueError as error:  # each reason, named with the file
        raise ValueError(f"{path}: {error}") from None


def _read(path: str | os.PathLike[str]) -> ModelFile:
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise ValueError("not an AlphaZero model file (not a zip archive)") from None
    with archive:
        rules, channels, blocks, info = _metadata(_member(archive, "model.json", _MAX_METADATA))
        # the declared network's tensors take exactly `least` bytes, and torch.save stores them raw: a
        # weights.pt declared smaller cannot hold them (1024 channels and 64 blocks declared in a 913-byte
        # file took 5 GB and 20 s to build before being refused), and one declared larger than `most` is not
        # theirs (216 KiB of deflated zeros declared as 223 MB took 2.7 s and 650 MB before being refused)
        least, most = weights_bytes(channels, blocks)
        declared = archive.getinfo("weights.pt").file_size if "weights.pt" in archive.namelist() else least
        network = f"the network in model.json ({channels} channels, {blocks} blocks)"
        if not least <= declared <= most:
            bound = f"needs at least {least:,}" if declared < least else f"takes at most {most:,}"
            raise ValueError(f"weights.pt is declared as {declared:,} bytes; {network} {bound}")
        weights = _member(archive, "weights.pt", min(most, _MAX_WEIGHTS))
    try:
        state = torch.load(io.BytesIO(weights), map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises many kinds for a bad or unsafe file
        raise ValueError(f"weights.pt is not a plain state dict of tensors ({error})") from None
    net = PolicyValueNet(channels, blocks)
    _check_state(state, net.state_dict())
    net.load_state_dict(state)
    net.eval()
    return ModelFile(net, rules, info)


def _member(archive: zipfile.ZipFile, name: str, limit: int) -> bytes:
    try:
        return read_zip_member(archive, name, limit)
    except KeyError:
        raise ValueError(f"not an AlphaZero model file (no {name})") from None


def _metadata(text: bytes) -> tuple[Rules, int, int, dict[str, Any]]:
    """model.json's rules, network size and info."""
    try:
        metadata = parse_json(text, "model.json")
    except ValueError as error:
        raise ValueError(f"model.json is not JSON ({error})") from None
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
        raise ValueError(f"not an AlphaZero model of format {FORMAT!r} version {VERSION}")
    version = metadata.get("version")
    if not is_version(version, VERSION):
        raise ValueError(
            f"an AlphaZero model of version {version!r}; this version reads version {VERSION} (an integer)"
        )
    network, info = metadata.get("network"), metadata.get("info", {})
    missing = [key for key in ("rows", "columns", "win_length") if key not in metadata]
    try:
        if missing or not isinstance(network, dict) or not isinstance(info, dict):
            raise ValueError(f"no {missing}" if missing else "network settings missing or info not an object")
        rules = Rules(metadata["rows"], metadata["columns"], metadata["win_length"])
        channels = check_int("channels", network.get("channels"), 1, MAX_CHANNELS)
        blocks = check_int("blocks", network.get("blocks"), 0, MAX_BLOCKS)
    except (TypeError, ValueError) as error:
        raise ValueError(f"bad metadata: {error}") from None
    return rules, channels, blocks, info


def _check_state(state: object, expected: dict[str, Any]) -> None:
    """Refuse weights other than the described network's: the same keys, shapes and dtypes, finite values."""
    if not isinstance(state, dict) or set(state) != set(expected):
        raise ValueError("weights.pt does not hold the weights of the network in model.json")
    for key, tensor in state.items():
        if not isinstance(tensor, torch.Tensor) or tensor.shape != expected[key].shape:
            raise ValueError(f"weights.pt: {key} has the wrong shape or type")
        if tensor.dtype != expected[key].dtype or tensor.layout != torch.strided:
            raise ValueError(
                f"weights.pt: {key} is a {tensor.layout} {tensor.dtype} tensor; the network's is a dense "
                f"{expected[key].dtype} one"
            )
        if tensor.is_floating_point() and not torch.isfinite(tensor).all():
            raise ValueError(f"weights.pt: {key} holds NaN or infinity")
