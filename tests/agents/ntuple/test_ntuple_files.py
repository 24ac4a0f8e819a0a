"""n-tuple network files: they round-trip, and hostile or damaged files are refused before they cost memory."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from connect4_agents.ntuple import NTupleAgent, NTupleNetwork, NTupleTrainer
from connect4_agents.ntuple.files import load_network
from connect4_env.core import Board
from connect4_env.rules import Rules


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    network = NTupleNetwork.create(Rules(4, 5, 4), n_tuples=6, length=4, seed=1)
    trainer = NTupleTrainer(network, games=300, seed=2)
    trainer.train(300)
    return trainer.save(tmp_path_factory.mktemp("ntuple") / "model.npz")


def members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def write(path: Path, parts: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return path


def npy(array: np.ndarray) -> bytes:
    stream = io.BytesIO()
    np.save(stream, array, allow_pickle=False)
    return stream.getvalue()


def meta_of(path: Path) -> dict:
    with np.load(path, allow_pickle=False) as data:
        return json.loads(str(data["meta"]))


def test_a_network_round_trips_with_its_training_state(saved: Path) -> None:
    trainer = NTupleTrainer.resume(saved)
    network, meta = NTupleNetwork.load(saved)
    np.testing.assert_array_equal(network.weights, trainer.network.weights)
    assert meta["games"] == 300 and meta["format"] == "connect4_env.ntuple"
    board = Board(Rules(4, 5, 4)).play_moves([2, 2, 1])
    np.testing.assert_array_equal(network.move_values(board), trainer.network.move_values(board))
    agent = NTupleAgent.load(saved)
    assert "games=300" in repr(agent)


def test_missing_files_and_folders_are_named(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no n-tuple network file"):
        load_network(tmp_path / "absent.npz")
    with pytest.raises(FileNotFoundError, match="a folder"):
        load_network(tmp_path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p: {**p, "extra.npy": b""}, "not an n-tuple network file"),
        (lambda p: {k: v for k, v in p.items() if k != "weights.npy"}, "not an n-tuple network file"),
        (lambda p: {**p, "weights.npy": p["weights.npy"][:200]}, "damaged or truncated"),
        (lambda p: {**p, "weights.npy": npy(np.zeros((2, 6, 16), np.float32))}, "expected float32"),
        (lambda p: {**p, "tuples.npy": npy(np.zeros((6, 4), np.int32))}, "expected int64"),
        (lambda p: {**p, "meta.npy": npy(np.array("not json"))}, "corrupt or truncated|JSON"),
        (lambda p: {**p, "meta.npy": npy(np.arange(3))}, "not a JSON string"),
        (lambda p: {**p, "weights.npy": b"\x93NUMPY\x01\x00\xff\xff" + b"x" * 64}, "damaged"),
    ],
)
def test_damaged_files_are_refused_with_the_reason(saved: Path, tmp_path: Path, change, message: str) -> None:
    bad = write(tmp_path / "bad.npz", change(members(saved)))
    with pytest.raises(ValueError, match=message) as error:
        load_network(bad)
    assert str(bad) in str(error.value)


def rewrite_meta(saved: Path, tmp_path: Path, **fields) -> Path:
    parts = members(saved)
    meta = {**meta_of(saved), **fields}
    parts["meta.npy"] = npy(np.array(json.dumps(meta)))
    return write(tmp_path / "bad.npz", parts)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"format": "connect4_env.qtable"}, "not an n-tuple network file"),
        ({"version": 2}, "version"),
        ({"version": True}, "version"),
        ({"length": 13}, "length"),
        ({"n_tuples": 0}, "n_tuples"),
        ({"rows": 0}, "rows"),
        ({"columns": "seven"}, "columns"),
        ({"n_tuples": 7}, "expected"),  # the arrays no longer fit what the metadata declares
    ],
)
def test_metadata_that_lies_is_refused(saved: Path, tmp_path: Path, fields: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_network(rewrite_meta(saved, tmp_path, **fields))


def test_a_file_declaring_huge_tables_is_refused_before_reading(saved: Path, tmp_path: Path) -> None:
    path = rewrite_meta(saved, tmp_path, n_tuples=10_000, length=12)
    with pytest.raises(ValueError, match="max_bytes"):
        load_network(path)
    with pytest.raises(ValueError, match="max_bytes"):
        load_network(saved, max_bytes=1000)


def test_tuples_off_the_board_or_repeating_a_cell_and_nan_weights_are_refused(
    saved: Path, tmp_path: Path
) -> None:
    parts = members(saved)
    with np.load(saved, allow_pickle=False) as data:
        tuples, weights = data["tuples"].copy(), data["weights"].copy()
    off = tuples.copy()
    off[0, 0] = 4  # row 4 of a 4-row board: the sentinel bit
    with pytest.raises(ValueError, match="off the"):
        load_network(write(tmp_path / "off.npz", {**parts, "tuples.npy": npy(off)}))
    twice = tuples.copy()
    twice[0, 1] = twice[0, 0]
    with pytest.raises(ValueError, match="same cell twice"):
        load_network(write(tmp_path / "twice.npz", {**parts, "tuples.npy": npy(twice)}))
    weights[1, 2, 3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        load_network(write(tmp_path / "nan.npz", {**parts, "weights.npy": npy(weights)}))


def test_not_a_zip_and_a_pickle_are_refused(tmp_path: Path) -> None:
    text = tmp_path / "model.npz"
    text.write_text("hello")
    with pytest.raises(ValueError, match="corrupt or truncated"):
        load_network(text)
    pickled = tmp_path / "pickled.npz"
    np.savez(pickled, meta=np.array([{"format": "connect4_env.ntuple"}], dtype=object))
    with pytest.raises(ValueError):
        load_network(pickled)


def test_a_model_without_training_state_does_not_resume(saved: Path, tmp_path: Path) -> None:
    network, _ = NTupleNetwork.load(saved)
    path = network.save(tmp_path / "bare.npz", {})
    with pytest.raises(ValueError, match="no resumable training state"):
        NTupleTrainer.resume(path)
