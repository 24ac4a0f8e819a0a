"""Q-table files: hostile or damaged files are refused before they cost memory or time; saves are atomic."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from connect4_agents import QLearningAgent, RandomAgent
from connect4_agents.qlearning.files import key_bytes
from connect4_env.rules import Rules


@pytest.fixture(scope="module")
def trained() -> QLearningAgent:
    agent = QLearningAgent(Rules(3, 4, 3), seed=0)
    agent.train(RandomAgent(seed=1), 60, window=60)
    return agent


def parts(agent: QLearningAgent, path: Path) -> tuple[np.ndarray, np.ndarray, dict]:
    agent.save(path)
    with np.load(path, allow_pickle=False) as data:
        return data["keys"], data["q"], json.loads(str(data["meta"]))


def write(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def npy(array: np.ndarray) -> bytes:
    stream = io.BytesIO()
    np.save(stream, array, allow_pickle=False)
    return stream.getvalue()


def test_metadata_naming_a_huge_board_is_refused_at_once(tmp_path: Path, trained: QLearningAgent) -> None:
    keys, q, meta = parts(trained, tmp_path / "good.npz")
    meta.update(rows=3000, columns=3000)
    bad = write(
        tmp_path / "huge.npz",
        {"keys.npy": npy(keys), "q.npy": npy(q), "meta.npy": npy(np.array(json.dumps(meta)))},
    )
    with pytest.raises(ValueError, match="cells"):
        QLearningAgent.load(bad)


def test_a_zip_bomb_is_refused_from_its_declared_size(tmp_path: Path, trained: QLearningAgent) -> None:
    keys, q, meta = parts(trained, tmp_path / "good.npz")
    # q.npy declares its true shape but the member holds 200 MB of zeros after it
    bomb = npy(q) + bytes(200 << 20)
    bad = write(
        tmp_path / "bomb.npz",
        {"keys.npy": npy(keys), "q.npy": bomb, "meta.npy": npy(np.array(json.dumps(meta)))},
    )
    assert bad.stat().st_size < 1 << 20
    with pytest.raises(ValueError, match="claims"):
        QLearningAgent.load(bad)


def test_a_header_declaring_a_giant_array_is_refused(tmp_path: Path, trained: QLearningAgent) -> None:
    keys, q, meta = parts(trained, tmp_path / "good.npz")
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (10**11, 5)}
    )
    bad = write(
        tmp_path / "giant.npz",
        {"keys.npy": npy(keys), "q.npy": header.getvalue(), "meta.npy": npy(np.array(json.dumps(meta)))},
    )
    with pytest.raises(ValueError, match="expected"):
        QLearningAgent.load(bad)
    meta["states"] = 10**11
    bad = write(
        tmp_path / "giant2.npz",
        {"keys.npy": npy(keys), "q.npy": header.getvalue(), "meta.npy": npy(np.array(json.dumps(meta)))},
    )
    with pytest.raises(ValueError, match="max_bytes"):
        QLearningAgent.load(bad)


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ("wide_keys", "keys.npy claims|expected uint8"),
        ("duplicate_keys", "duplicate"),
        ("string_q", "q.npy claims|expected float64"),
        ("fortran_q", "Fortran"),
        ("extra_member", "not a Q-table file"),
        ("states_mismatch", "expected"),
        ("bad_hyperparameter", "invalid metadata"),
        ("meta_not_string", "not a JSON string"),
    ],
)
def test_malformed_tables_get_a_value_error(
    tmp_path: Path, trained: QLearningAgent, change: str, fragment: str
) -> None:
    keys, q, meta = parts(trained, tmp_path / "good.npz")
    members = {"keys.npy": npy(keys), "q.npy": npy(q), "meta.npy": npy(np.array(json.dumps(meta)))}
    if change == "wide_keys":
        members["keys.npy"] = npy(np.zeros((keys.shape[0], 4000), np.uint8))
    elif change == "duplicate_keys":
        doubled = keys.copy()
        doubled[1] = doubled[0]
        members["keys.npy"] = npy(doubled)
    elif change == "string_q":
        members["q.npy"] = npy(q.astype(str))
    elif change == "fortran_q":
        members["q.npy"] = npy(np.asfortranarray(q))
    elif change == "extra_member":
        members["payload.npy"] = npy(np.zeros(3))
    elif change == "states_mismatch":
        meta["states"] = keys.shape[0] + 1
        members["meta.npy"] = npy(np.array(json.dumps(meta)))
    elif change == "bad_hyperparameter":
        meta["alpha"] = "fast"
        members["meta.npy"] = npy(np.array(json.dumps(meta)))
    elif change == "meta_not_string":
        members["meta.npy"] = npy(np.zeros(3))
    bad = write(tmp_path / "bad.npz", members)
    with pytest.raises(ValueError, match=fragment):
        QLearningAgent.load(bad)


def test_round_trip_and_key_width(tmp_path: Path, trained: QLearningAgent) -> None:
    loaded = QLearningAgent.load(trained.save(tmp_path / "t.npz"))
    assert loaded.q.keys() == trained.q.keys()
    assert all(np.array_equal(loaded.q[k], trained.q[k]) for k in trained.q)
    assert key_bytes(Rules(3, 4, 3)) == (4 * 4 + 8) // 8 + 1


def test_save_through_a_symlink_writes_the_target(tmp_path: Path, trained: QLearningAgent) -> None:
    target = tmp_path / "tables" / "real.npz"
    target.parent.mkdir()
    target.write_bytes(b"old")
    link = tmp_path / "link.npz"
    link.symlink_to(target)
    trained.save(link)
    assert link.is_symlink()
    assert QLearningAgent.load(target).q.keys() == trained.q.keys()


def test_a_killed_save_leaves_a_temporary_that_the_next_save_removes(
    tmp_path: Path, trained: QLearningAgent
) -> None:
    path = tmp_path / "q.npz"
    # a child that starts writing and is killed mid-write (SIGKILL: no cleanup runs)
    code = (
        "import os, sys, time\n"
        "from connect4_agents._support.files import atomic_write\n"
        "def write(stream):\n"
        "    stream.write(b'partial'); stream.flush(); print('writing', flush=True); time.sleep(60)\n"
        f"atomic_write({str(path)!r}, write)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "writing"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    leftovers = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert len(leftovers) == 1 and not path.exists()
    trained.save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["q.npz"]


def test_max_bytes_bounds_the_table_built_not_only_the_arrays(
    tmp_path: Path, trained: QLearningAgent
) -> None:
    # the dict of Python ints and row arrays costs ~250 bytes a state, ~10x the arrays: 20 M states took 5.6 GB
    path = trained.save(tmp_path / "table.npz")
    states, rules = len(trained.q), trained.rules
    arrays = states * (key_bytes(rules) + 8 * rules.columns)
    with pytest.raises(ValueError, match="max_bytes"):
        QLearningAgent.load(path, max_bytes=2 * arrays)
    assert len(QLearningAgent.load(path, max_bytes=states * 400).q) == states


@pytest.mark.parametrize(
    "key",
    [
        0,  # no column marker at all
        1 << (4 * 4 + 3),  # a bit above the board's last column
        0b1111 | (1 << 4) | (1 << 8) | (1 << 12),  # column 0 full of the mover's stones: 3 against 0
    ],
)
def test_keys_that_are_not_positions_of_the_board_are_refused(
    tmp_path: Path, trained: QLearningAgent, key: int
) -> None:
    keys, q, meta = parts(trained, tmp_path / "good.npz")
    keys = keys.copy()
    keys[0] = np.frombuffer(key.to_bytes(keys.shape[1], "little"), dtype=np.uint8)
    bad = write(
        tmp_path / "bad.npz",
        {"keys.npy": npy(keys), "q.npy": npy(q), "meta.npy": npy(np.array(json.dumps(meta)))},
    )
    with pytest.raises(ValueError, match="not a position of a 3x4 board"):
        QLearningAgent.load(bad)


def test_every_saved_key_is_a_position(tmp_path: Path, trained: QLearningAgent) -> None:
    loaded = QLearningAgent.load(trained.save(tmp_path / "t.npz"))  # the check accepts every real position
    assert loaded.q.keys() == trained.q.keys()


def test_deeply_nested_metadata_is_a_value_error(tmp_path: Path, trained: QLearningAgent) -> None:
    keys, q, _ = parts(trained, tmp_path / "good.npz")
    bad = write(
        tmp_path / "deep.npz",
        {"keys.npy": npy(keys), "q.npy": npy(q), "meta.npy": npy(np.array("[" * 5000 + "]" * 5000))},
    )
    with pytest.raises(ValueError, match="deep"):
        QLearningAgent.load(bad)


def test_the_file_format_does_not_import_the_agent() -> None:
    import ast

    import connect4_agents.qlearning.files as files

    tree = ast.parse(Path(files.__file__).read_text())
    imported = [
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    ] + [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    assert not [name for name in imported if "qlearning" in name]
