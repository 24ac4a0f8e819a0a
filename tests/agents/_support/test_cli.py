"""The shared command-line helpers: how a command prints a path."""

from __future__ import annotations

from pathlib import Path

import pytest

from connect4_agents._support.cli import shown_path


def test_shown_path_is_relative_inside_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert shown_path(tmp_path.resolve() / "runs" / "demo" / "qtable.npz") == str(
        Path("runs/demo/qtable.npz")
    )
    assert shown_path("runs/x.json") == str(Path("runs/x.json"))  # a relative path stays as the user wrote it
    outside = tmp_path.parent.resolve() / "elsewhere.json"
    assert shown_path(outside) == str(outside)  # outside it, only the absolute path names the file
