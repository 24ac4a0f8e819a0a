"""The picture scripts of the docs (tools/pictures/, ``make pictures``) run and draw what they promise.

Slow: they train small models and open a browser. The long ones run here with short budgets; the pictures in
docs/ come from their defaults.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers.browser import require_chromium
from helpers.extras import installed, needs

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "tools" / "pictures"
pytestmark = [pytest.mark.slow, needs("train", "matplotlib", "torch")]

# script -> (arguments for a short run, the files it must write)
RUNS = {
    "mcts.py": ([], ["mcts-pair-tree.svg", "mcts-growth.svg", "mcts-search.png", "mcts-solver.png"]),
    "qlearning.py": (
        ["--episodes", "20000", "--every", "10000"],
        ["qlearning-epsilon.svg", "qlearning-curve.svg", "qlearning-coverage.svg"],
    ),
    "alphazero.py": (["--generations", "2", "--table-episodes", "2000"], ["alphazero-curve.svg"]),
    "play_and_watch.py": ([], ["board.svg", "rgb_array.png", "search.png", "window.png", "replay.png"]),
    "docs_site.py": ([], ["site-index.png", "site-mcts-tutorial.png"]),
    "selfplay.py": (
        ["--timesteps", "6000", "--snapshot-freq", "2000"],
        ["selfplay-curve.svg", "selfplay-league.svg"],
    ),
    "ntuple.py": (["--games", "2000", "--curve-games", "1"], ["ntuple-tuples.svg", "ntuple-curve.svg"]),
}


def test_every_script_is_run_here() -> None:
    assert sorted(RUNS) == sorted(path.name for path in SCRIPTS.glob("*.py"))


@pytest.mark.parametrize("script", sorted(RUNS))
def test_picture_script_draws_its_pictures(script: str, tmp_path: Path) -> None:
    arguments, expected = RUNS[script]
    if script in ("play_and_watch.py", "docs_site.py"):
        if not installed("pygame") or not installed("mkdocs"):
            pytest.skip("needs the render and docs extras")
        require_chromium()
    command = [sys.executable, str(SCRIPTS / script), "--out", str(tmp_path), *arguments]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    for name in expected:
        path = tmp_path / name
        assert path.exists(), (name, sorted(p.name for p in tmp_path.iterdir()))
        head = path.read_bytes()[:8]
        assert head.startswith(b"\x89PNG") if name.endswith(".png") else b"<svg" in path.read_bytes()[:400], (
            name
        )


def test_the_qlearning_table_size_counts_every_position_once() -> None:
    """count_positions (numpy, ply by ply) against a walk over Board objects, on boards small enough for it."""
    sys.path.insert(0, str(SCRIPTS))
    try:
        from qlearning import count_positions  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(SCRIPTS))
    from connect4_env import Board, Rules

    for rules in (Rules(3, 4, 3), Rules(4, 4, 3), Rules(3, 5, 3)):
        seen: set[tuple[int, int]] = set()
        level = [Board(rules)]
        while level:
            following = []
            for board in level:
                first, second = board.stones
                key = min((first, second), (rules.mirror(first), rules.mirror(second)))
                if key in seen:
                    continue
                seen.add(key)
                for column in board.legal_moves():
                    child = board.copy()
                    child.play(column)
                    if not child.is_terminal:
                        following.append(child)
            level = following
        assert count_positions(rules) == len(seen), rules


def test_the_qlearning_coverage_counts_the_stones_of_a_table_key() -> None:
    """stones_of_key (the coverage picture's count per ply) against the board the key was made from."""
    sys.path.insert(0, str(SCRIPTS))
    try:
        from qlearning import stones_of_key  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(SCRIPTS))
    from connect4_agents.qlearning import canonical_key
    from connect4_env import Board, Rules

    for rules, moves in ((Rules(4, 5, 4), [2, 2, 0, 4, 4, 4, 4, 1, 3]), (Rules(3, 4, 3), [0, 0, 0, 3, 1])):
        board = Board(rules)
        counts = [stones_of_key(canonical_key(board)[0], rules)]
        for column in moves:
            board.play(column)
            counts.append(stones_of_key(canonical_key(board)[0], rules))
        assert counts == list(range(len(moves) + 1)), rules
