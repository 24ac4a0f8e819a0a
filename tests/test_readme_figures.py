"""tools/readme_figures.py, which measures the README's figures of default runs: every figure it measures is one
the README quotes, and it reads the runs' outputs (train-sb3's eval.csv, evaluate's JSON) as they are written."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("readme_figures", ROOT / "tools" / "readme_figures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


FIGURES = _script()


@pytest.mark.parametrize("name", list(FIGURES.FIGURES))
def test_each_figure_it_measures_is_in_the_readme(name: str) -> None:
    words, _ = FIGURES.FIGURES[name]
    assert words in (ROOT / "README.md").read_text(), (
        f"the README no longer says {words!r}: update the script"
    )


def test_the_short_figures_are_those_of_runs_under_a_few_minutes() -> None:
    assert set(FIGURES.SHORT) == {"demo", "train-sb3"} and "league" in FIGURES.FIGURES


def test_it_reads_the_last_evaluation_of_each_opponent(tmp_path: Path) -> None:
    # eval.csv as connect4 train-sb3 writes it: a row per opponent at every evaluation
    header = "timesteps,seconds,cpu_seconds,opponent,wins,draws,losses,games,win_rate"
    rows = [
        "50000,5.0,5.1,random,80,0,20,100,0.8",
        "50000,5.0,5.1,mcts:100,0,1,99,100,0.0",
        "300000,30.0,31.2,random,99,0,1,100,0.99",
        "300000,30.0,31.2,mcts:100,3,2,95,100,0.03",
    ]
    (tmp_path / "eval.csv").write_text("\n".join([header, *rows]) + "\n")
    final = FIGURES.final_evaluations(tmp_path / "eval.csv")
    assert list(final) == ["random", "mcts:100"]
    assert FIGURES.wdl(final["random"]) == "99 W / 0 D / 1 L of 100"
    assert FIGURES.score(final["random"]) == 0.99 and FIGURES.score(final["mcts:100"]) == 0.04


def test_it_reads_the_nontrivial_errors_of_evaluate_json(tmp_path: Path) -> None:
    report = {"agent": "sb3:m.zip", "nontrivial_optimal_class_rate": 0.467, "per_set": {}}
    (tmp_path / "evaluate.json").write_text(json.dumps({"seed": 0, "reports": [report]}))
    assert FIGURES.nontrivial_errors(tmp_path / "evaluate.json") == pytest.approx(0.533)
