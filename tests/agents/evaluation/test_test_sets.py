"""The shipped test sets: checksums, the promised properties, exact scores re-solved, byte-for-byte regeneration."""

from __future__ import annotations

import gzip
import hashlib
import json

import numpy as np
import pytest
from helpers.commands import run
from helpers.extras import heavy_without_numba, needs, skip_without_book
from helpers.reference import ReferenceGame, reference_scores

# aliases: pytest would collect functions named test_* as tests
from connect4_agents.evaluation import Position, load_test_set, read_positions
from connect4_agents.evaluation import test_set_names as set_names
from connect4_agents.evaluation.test_sets import DATA_DIR, TEST_SET_SPECS, manifest
from connect4_agents.evaluation.test_sets import test_set_path as set_path
from connect4_agents.solver.agent import SolverAgent
from connect4_agents.solver.book import BOOK_PLY, BOOK_RULES
from connect4_env import Board


def canonical(board: Board) -> tuple[int, int]:
    rules = board.rules
    mover, mask = board.stones[board.to_move], board.mask
    return min((mover, mask), (rules.mirror(mover), rules.mirror(mask)))


def test_names_and_sizes():
    names = set_names()
    six_by_seven = [n for n in names if n.startswith("6x7")]
    assert len(six_by_seven) == 6
    assert {"4x5", "5x4", "5x5", "6x5", "5x6", "4x4-w3", "5x5-w3"} <= set(names)
    for name in names:
        positions = load_test_set(name)
        assert len(positions) >= (1000 if name.startswith("6x7") else 300)
        spec = TEST_SET_SPECS[name]
        assert {(p.rows, p.columns, p.win_length) for p in positions} == {
            (spec.rows, spec.columns, spec.win_length)
        }


def test_checksums_match_the_manifest():
    entries = manifest()
    assert set(entries) == set(set_names())
    for name, entry in entries.items():
        data = set_path(name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"], name
        assert len(gzip.decompress(data).splitlines()) == entry["positions"]


@pytest.mark.parametrize("name", set_names())
def test_set_properties(name):
    """Not over, no win at once for the mover, no duplicates up to mirror image, the set's ply and depth bands."""
    spec = TEST_SET_SPECS[name]
    seen = set()
    for position in load_test_set(name):
        board = position.board()
        assert not board.is_terminal
        rules = board.rules
        mover = board.stones[board.to_move]
        for column in board.legal_moves():
            assert not rules.has_won(mover | rules.stone_bit(column, board.heights[column])), position.moves
        key = canonical(board)
        assert key not in seen, position.moves
        seen.add(key)
        assert spec.plies[0] <= position.ply <= spec.plies[1]
        assert spec.remaining[0] <= position.remaining <= spec.remaining[1]
        legal = board.legal_mask()
        assert [s is not None for s in position.move_scores] == [bool(x) for x in legal]
        assert position.score == max(s for s in position.move_scores if s is not None)


def test_six_by_seven_bands_follow_pons():
    bands = {name: TEST_SET_SPECS[name] for name in set_names() if name.startswith("6x7")}
    assert bands["6x7-begin-hard"].plies == (0, 14) and bands["6x7-begin-hard"].remaining[0] == 28
    assert bands["6x7-middle-medium"].plies == (15, 28) and bands["6x7-middle-medium"].remaining == (14, 27)
    assert bands["6x7-end-easy"].plies[0] == 29 and bands["6x7-end-easy"].remaining[1] == 13


@pytest.mark.parametrize(
    "name",
    [
        # the 5x6 and 6x7 sets take minutes to re-solve without the compiled solver
        pytest.param(name, marks=needs("fast")) if TEST_SET_SPECS[name].rules.cells > 25 else name
        for name in set_names()
    ],
)
def test_a_sample_re_solved(name):
    """Every move of five positions per set scored again by a fresh solver (no book, another table); 6x7
    positions before the book's depth by a solver with the book, which only the ``book`` extra brings (without
    it they take many minutes each: the test skipped only them, after the others)."""
    positions = load_test_set(name)
    rng = np.random.default_rng(sum(name.encode()))
    sample = [positions[int(index)] for index in rng.choice(len(positions), size=5, replace=False)]
    needs_the_book = [p.ply <= BOOK_PLY and p.rules == BOOK_RULES for p in sample]
    early = [p for p, book in zip(sample, needs_the_book) if book]
    searched = SolverAgent(book=False, node_budget=None, table_size=1 << 20)
    for position in (p for p, book in zip(sample, needs_the_book) if not book):
        assert tuple(searched.evaluate_board(position.board())) == position.move_scores, position.moves
    if early:
        skip_without_book()
        with_book = SolverAgent(node_budget=None)
        for position in early:
            assert tuple(with_book.evaluate_board(position.board())) == position.move_scores, position.moves


@pytest.mark.parametrize("name", ["4x4-w3", "4x5", "5x4", "5x5-w3"])
def test_late_positions_match_plain_minimax(name):
    """The scores' scale and signs from an independent, obviously-correct minimax (tests/helpers/reference.py)."""
    checked = 0
    for position in load_test_set(name):
        if position.rows * position.columns - position.ply > 11:
            continue
        game = ReferenceGame(position.rows, position.columns, position.win_length)
        for move in position.moves:
            game.play(move)
        assert reference_scores(game) == list(position.move_scores), position.moves
        checked += 1
        if checked == 6:
            break
    assert checked >= 2


@heavy_without_numba
def test_regenerated_byte_for_byte(tmp_path):
    result = run("make-test-sets", "--seed", "0", "--sets", "4x5", "5x5-w3", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    for name in ("4x5", "5x5-w3"):
        assert (tmp_path / f"{name}.jsonl.gz").read_bytes() == set_path(name).read_bytes()
    written = json.loads((tmp_path / "manifest.json").read_text())
    assert written["4x5"] == manifest()["4x5"]


def test_another_seed_gives_other_positions(tmp_path):
    result = run("make-test-sets", "--seed", "1", "--sets", "4x4-w3", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "4x4-w3.jsonl.gz").read_bytes() != set_path("4x4-w3").read_bytes()


def test_position_fields():
    position = load_test_set("6x7-begin-easy")[0]
    assert isinstance(position, Position)
    assert all(isinstance(m, int) for m in position.moves)
    assert len(position.move_scores) == 7
    assert position.board().ply == len(position.moves)
    assert position.outcome in (-1, 0, 1)
    assert DATA_DIR.is_dir()


def test_bad_names():
    with pytest.raises(ValueError, match="unknown test set 'nope'.*6x7-begin-easy"):
        load_test_set("nope")
    with pytest.raises(TypeError, match="str"):
        load_test_set(3)  # type: ignore[arg-type]


GOOD = {
    "moves": [3],
    "rows": 6,
    "columns": 7,
    "win_length": 4,
    "move_scores": [-4, -4, 0, 0, 0, 0, -6],
    "score": 0,
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"moves": [9]}, "not a legal move"),
        ({"moves": "33"}, "list of integer columns"),
        ({"moves": [True]}, "list of integer columns"),
        ({"move_scores": [0] * 6}, "7 entries"),
        ({"move_scores": [None, -4, 0, 0, 0, 0, -6]}, r"move_scores\[0\]"),
        ({"score": 1}, "not the best"),
        ({"rows": -1}, "rows"),
        ({"rows": "6"}, "rows"),
        ({"moves": [0, 1, 0, 1, 0, 1, 0]}, "end the game"),
    ],
)
def test_bad_lines_name_the_line(tmp_path, change, message):
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps({**GOOD, **change}) + "\n")
    with pytest.raises(ValueError, match=f"line 2: .*{message}"):
        read_positions(path)


def test_bad_files(tmp_path):
    (tmp_path / "a.jsonl").write_text("{not json\n")
    with pytest.raises(ValueError, match="line 1"):
        read_positions(tmp_path / "a.jsonl")
    (tmp_path / "b.jsonl.gz").write_bytes(gzip.compress(b'{"moves": []}\n')[:20])
    with pytest.raises(ValueError, match="gzip"):
        read_positions(tmp_path / "b.jsonl.gz")
    (tmp_path / "c.jsonl").write_text("[1, 2]\n")
    with pytest.raises(ValueError, match="JSON object"):
        read_positions(tmp_path / "c.jsonl")
    good = tmp_path / "d.jsonl"
    good.write_text(json.dumps(GOOD) + "\n\n")
    assert read_positions(good)[0].moves == (3,)


def test_select_positions_by_plies_and_sample() -> None:
    from connect4_agents.evaluation.test_sets import select_positions

    names = [n for n in set_names() if n.startswith("6x7")]
    inside = select_positions(names, (10, 32))
    assert inside and all(10 <= p.ply <= 32 for p in inside)
    assert len(inside) == sum(10 <= p.ply <= 32 for n in names for p in load_test_set(n))
    sample = select_positions(names, (10, 32), 50, seed=3)
    assert len(sample) == 50 and set(sample) <= set(inside)
    assert (
        select_positions(names, (10, 32), 50, seed=3)
        == sample
        != select_positions(names, (10, 32), 50, seed=4)
    )
    assert select_positions(names, (10, 32), 10**6) == inside
    with pytest.raises(ValueError):
        select_positions(names, (12, 10))
    with pytest.raises(TypeError):
        select_positions(names, (1.5, 10))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"names": "6x7-begin-easy"}, TypeError, r"names must be a list .*write \['6x7-begin-easy'\]"),
        ({"names": 7}, TypeError, "names must be a list of test set names"),
        ({"plies": 12}, TypeError, r"plies must be None or a pair \(low, high\)"),
        ({"plies": (12,)}, ValueError, "plies must be a pair .* got 1 values"),
        ({"sample": 3, "seed": "x"}, TypeError, "seed must be an integer >= 0, got 'x'"),
        ({"sample": 3, "seed": -1}, ValueError, "seed must be an integer >= 0, got -1"),
        ({"seed": 1.5}, TypeError, "seed must be an integer"),  # checked even when nothing is drawn
    ],
)
def test_select_positions_names_each_bad_argument(
    arguments: dict[str, object], error: type[Exception], message: str
) -> None:
    from connect4_agents.evaluation.test_sets import select_labelled_positions, select_positions

    call = {"names": ["6x7-begin-easy"], **arguments}
    for select in (select_positions, select_labelled_positions):
        with pytest.raises(error, match=message):
            select(**call)  # type: ignore[arg-type]
    # what is allowed: numpy integers, a tuple of names, plies as a list
    picked = select_labelled_positions(("6x7-begin-easy",), [1, np.int64(13)], np.int64(5), np.int64(2))
    assert len(picked) == 5 and all(name == "6x7-begin-easy" for name, _ in picked)
