"""The n-tuple network as a numpy-only Kaggle agent: its values equal the network's to the last bit, its tables
travel exactly and damaged ones are refused, its submission plays the network's moves with numpy alone, another
board gets the one-move rule and a malformed call raises. (Against Kaggle's own agents: tests/interop/
test_kaggle.py, ``-m kaggle``.)"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from connect4_agents.commands import kaggle_submission as command
from connect4_agents.interop.kaggle_ntuple import (
    NTupleKaggleAgent,
    NumpyNTuple,
    decode_network,
    encode_network,
    read_kaggle_call,
)
from connect4_agents.interop.kaggle_submission import write_kaggle_submission
from connect4_agents.ntuple.agent import shipped_model_path
from connect4_agents.ntuple.network import NTupleNetwork
from connect4_env.core import Board
from connect4_env.rules import Rules

CONFIG = {"rows": 6, "columns": 7, "inarow": 4, "actTimeout": 2}


def kaggle_board(ascii_board: str) -> list[int]:
    """Kaggle's flat board (top row first, 1 = X, 2 = O) of an ASCII board."""
    cells = {".": 0, "X": 1, "O": 2}
    return [cells[ch] for line in ascii_board.strip().splitlines() for ch in line.split()]


def random_network(
    rules: Rules, n_tuples: int, length: int, seed: int, compiled: bool | None
) -> NTupleNetwork:
    """A network whose every table entry is a random weight (a trained one is mostly zeros), some of them -0.0."""
    network = NTupleNetwork.create(rules, n_tuples, length, seed=seed, compiled=compiled)
    rng = np.random.default_rng(seed)
    network.weights[:] = rng.normal(0.0, 0.3, network.weights.shape).astype(np.float32)
    network.weights[rng.random(network.weights.shape) < 0.3] = 0.0
    network.weights[0, 0, :64] = -0.0
    return network


def numpy_twin(network: NTupleNetwork) -> NumpyNTuple:
    """The network as its Kaggle submission carries it: encoded, then decoded."""
    rules = network.rules
    return decode_network(
        encode_network(rules.rows, rules.columns, rules.win_length, network.tuples, network.weights)
    )


@pytest.mark.parametrize(
    ("rules", "compiled"),
    [
        # numba compiles the network's kernels for this one: make test-slow (the plain build runs the same code)
        pytest.param(Rules(), None, id="6x7-compiled", marks=pytest.mark.slow),
        pytest.param(Rules(), False, id="6x7"),
        pytest.param(Rules(5, 6, 3), False, id="5x6-three"),
        pytest.param(Rules(4, 5, 4), False, id="4x5"),
    ],
)
def test_the_numpy_values_equal_the_networks_bit_for_bit_on_random_positions(
    rules: Rules, compiled: bool | None
) -> None:
    """Every position of 40 random games, each column's value: an estimate, a win (1), the move that fills the
    board (0) or a full column (NaN), equal to NTupleNetwork.move_values' float for float (the kernel's sums,
    in its order), through the submission's encoding."""
    network = random_network(rules, 12, 5, seed=3, compiled=compiled)
    twin = numpy_twin(network)
    rng = np.random.default_rng(0)
    seen = {"win": 0, "fill": 0, "full": 0}
    for _ in range(40):
        board = Board(rules)
        while not board.is_terminal:
            expected = network.move_values(board)
            np.testing.assert_array_equal(twin.move_values(*board.stones), expected, err_msg=str(board))
            seen["win"] += int((expected == 1.0).sum())
            seen["full"] += int(np.isnan(expected).sum())
            seen["fill"] += int(board.ply == rules.cells - 1)
            board.play(int(rng.choice([c for c in range(rules.columns) if board.is_legal(c)])))
    assert seen["win"] and seen["full"], seen  # the exact values were met, not only the estimates
    if rules.cells <= 20:
        assert seen["fill"], seen


def test_the_tables_travel_bit_for_bit_and_damaged_ones_are_refused() -> None:
    network = random_network(Rules(4, 5, 4), 6, 4, seed=1, compiled=False)
    twin = numpy_twin(network)
    dense = np.zeros(network.weights.size, np.float32)
    dense[twin.keys[:-1]] = twin.values[:-1]
    assert np.array_equal(dense.view(np.uint32), network.weights.ravel().view(np.uint32))  # -0.0 kept
    assert twin.size == (4, 5, 4) and np.array_equal(twin.cells[:6], network.tuples)

    def archive(**members: np.ndarray) -> str:
        good = np.load(io.BytesIO(base64.b64decode(encode_network(4, 5, 4, network.tuples, network.weights))))
        arrays = {name: good[name] for name in good.files}
        buffer = io.BytesIO()
        np.savez(buffer, **{**arrays, **members})
        return base64.b64encode(buffer.getvalue()).decode()

    gaps = np.load(io.BytesIO(base64.b64decode(archive())))["gaps"]
    bad = {
        "not base64": ("%%%", "not an n-tuple network"),
        "not an archive": (base64.b64encode(b"hello").decode(), "not an n-tuple network"),
        "a pickled member": (archive(values=np.array([{}], dtype=object)), "not an n-tuple network"),
        "a member too many": (archive(extra=np.zeros(1)), "it holds"),
        "a board of 0 rows": (archive(board=np.array([0, 5, 4])), "board"),
        "a cell off the board": (archive(tuples=network.tuples + 100), "off the 4x5 board"),
        "a repeated cell": (archive(tuples=np.repeat(network.tuples[:, :1], 4, axis=1)), "same cell twice"),
        "tuples of 13 cells": (archive(tuples=np.zeros((1, 13), np.int64)), r"1\.\.12"),
        "values short": (archive(values=np.zeros(3, np.float32)), "positions and values"),
        "positions past the tables": (archive(gaps=gaps + np.uint32(1 << 20)), "past the tables"),
        "a NaN weight": (archive(values=np.full(gaps.shape, np.nan, np.float32)), "NaN"),
    }
    for name, (text, message) in bad.items():
        with pytest.raises(ValueError, match=message):
            decode_network(text)
            pytest.fail(name)


BLOCKED_RUN = """
import importlib.abc, json, sys
BLOCKED = {"gymnasium", "pettingzoo", "numba", "scipy", "connect4_env", "connect4_agents"}
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError("not on Kaggle: " + name)
sys.meta_path.insert(0, Block())
namespace = {}
exec(compile(open(sys.argv[1]).read(), sys.argv[1], "exec"), namespace)  # as Kaggle: no __file__, no __name__
agent = [value for value in namespace.values() if callable(value)][-1]
calls = json.loads(sys.stdin.read())
print(json.dumps([agent(observation, configuration) for observation, configuration in calls]))
"""


def play_file(path: Path, calls: list[tuple[dict, dict]]) -> list[int]:
    """The columns the submission at ``path`` answers to ``calls``, run as Kaggle runs it, in a fresh Python
    where neither our packages nor numba can be imported, in an empty ``TMPDIR``."""
    with tempfile.TemporaryDirectory() as temp:
        done = subprocess.run(
            [sys.executable, "-c", BLOCKED_RUN, str(path)],
            input=json.dumps(calls),
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "TMPDIR": temp},
        )
        assert os.listdir(temp) == []  # nothing unpacked, nothing compiled
    assert done.returncode == 0, done.stderr[-3000:]
    columns: list[int] = json.loads(done.stdout.strip().splitlines()[-1])
    return columns


def test_the_submission_plays_the_networks_moves_with_numpy_alone(tmp_path: Path) -> None:
    network = random_network(Rules(), 10, 6, seed=5, compiled=None)
    model = network.save(tmp_path / "model.npz", {"games": 12})
    path = write_kaggle_submission(f"ntuple:{model}", tmp_path / "main.py", seed=0)
    text = path.read_text()
    assert "10 tuples of 6 cells; 12 games of self-play" in text.splitlines()[1]
    rng = np.random.default_rng(1)
    calls, expected = [], []
    for _ in range(6):
        board = Board()
        while not board.is_terminal:
            values = network.move_values(board)
            best = np.flatnonzero(values == np.nanmax(values))
            if best.size == 1:  # random weights: ties are the rare exact wins, skipped
                flat = [0] * 42
                for column, stack in enumerate(board.heights):
                    for row in range(stack):
                        first = (board.stones[0] >> (column * board.rules.height + row)) & 1
                        flat[(5 - row) * 7 + column] = 1 if first else 2
                calls.append(({"board": flat, "mark": board.to_move + 1}, CONFIG))
                expected.append(int(best[0]))
            board.play(int(rng.choice([c for c in range(7) if board.is_legal(c)])))
    assert play_file(path, calls) == expected and len(expected) > 100


def test_the_shipped_ntuple_spec_is_a_file_of_a_few_megabytes_that_plays_the_network(tmp_path: Path) -> None:
    path = write_kaggle_submission("ntuple", tmp_path / "main.py")
    text = path.read_text()
    assert path.stat().st_size < 8_000_000  # Kaggle's AlphaZero submission, 6 MB, plays
    assert text.startswith("# Kaggle ConnectX agent: the n-tuple network 'ntuple'")
    network, _ = NTupleNetwork.load(shipped_model_path())
    payload = re.search(r'NETWORK = """(.*?)"""', text, re.DOTALL)
    assert payload is not None
    twin = decode_network(payload.group(1))
    board = Board.from_ascii("""
. . . . . . .
. . . . . . .
. . . . . . .
. . . X . . .
. . O X . . .
. O O X . . .
""")
    np.testing.assert_array_equal(twin.move_values(*board.stones), network.move_values(board))
    assert twin.move_values(*board.stones)[3] == 1.0  # X completes column 3
    (column,) = play_file(path, [({"board": [0] * 42, "mark": 1}, CONFIG)])
    values = network.move_values(Board())
    assert values[column] == values.max()


def test_the_command_writes_an_ntuple_submission_and_refuses_a_move_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = random_network(Rules(), 4, 3, seed=0, compiled=False).save(tmp_path / "model.npz", {})
    assert command.main([f"ntuple:{model}", "-o", str(tmp_path / "main.py")]) == 0
    assert "main.py" in capsys.readouterr().out
    assert command.main([f"ntuple:{model}", "--move-seconds", "0.5", "-o", str(tmp_path / "slow.py")]) == 2
    assert "move_seconds does not apply" in capsys.readouterr().err and not (tmp_path / "slow.py").exists()
    assert command.main(["ntuple:nowhere.npz", "-o", str(tmp_path / "none.py")]) == 2
    assert "nowhere.npz" in capsys.readouterr().err


def test_another_board_gets_the_one_move_rule_and_a_malformed_call_raises(
    capsys: pytest.CaptureFixture[str],
) -> None:
    agent = NTupleKaggleAgent(numpy_twin(random_network(Rules(), 4, 3, seed=0, compiled=False)), seed=0)
    small = {"rows": 5, "columns": 6, "inarow": 3}
    win = kaggle_board("""
. . . . . .
. . . . . .
. . . . . .
. . . . . .
O O . X X .
""")  # X (mark 1) to move: wins in column 2 or 5, by the centre first
    block = kaggle_board("""
. . . . . .
. . . . . .
. . . . . .
X . . O . .
O . . X . X
""")  # O (mark 2) to move: no win of its own, blocks X in column 4
    assert agent({"board": win, "mark": 1}, small) == 2
    assert agent({"board": block, "mark": 2}, small) == 4
    assert agent({"board": [0] * 30, "mark": 1}, small) == 2  # nearest the centre
    assert agent.fallbacks == 3 and agent.moves == 3
    log = capsys.readouterr().err
    assert log.count("plays 6x7 with 4 in a row, not 5x6 with 3") == 1  # said once
    assert agent({"board": [0] * 42, "mark": 1}, CONFIG) in range(7) and agent.fallbacks == 3
    floating = [0] * 42
    floating[3] = 1
    bad = [
        ({"board": [0] * 41, "mark": 1}, CONFIG, ValueError, "41 cells"),
        ({"board": [0] * 41 + [3], "mark": 1}, CONFIG, ValueError, r"board\[41\] is 3"),
        ({"board": [0] * 41 + [1.0], "mark": 1}, CONFIG, TypeError, "must be an integer"),
        ({"board": "0" * 42, "mark": 1}, CONFIG, TypeError, "must be a list"),
        ({"board": [0] * 42, "mark": 2}, CONFIG, ValueError, "observation.mark is 2"),
        ({"board": floating, "mark": 2}, CONFIG, ValueError, "column 3 has a stone above an empty cell"),
        ({"mark": 1}, CONFIG, ValueError, "no 'board' field"),
        ({"board": [1, 2] * 21, "mark": 1}, CONFIG, ValueError, "full"),
        ({"board": [0] * 42, "mark": 1}, {**CONFIG, "rows": "6"}, TypeError, "configuration.rows"),
    ]
    for observation, configuration, error, message in bad:
        with pytest.raises(error, match=message):
            agent(observation, configuration)
    assert read_kaggle_call({"board": win, "mark": 1}, small)[0] == (5, 6, 3)
