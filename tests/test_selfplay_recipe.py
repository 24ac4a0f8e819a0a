"""recipes/selfplay_ppo.py, the single-file self-play PPO recipe, runs as a user runs it: its help gives every
option a meaning and a default, it says what it runs and where its files go before any work, reports progress
against its total, saves a model that plays through `TorchPolicy`, keeps it on Ctrl-C, and learns something."""

from __future__ import annotations

import dataclasses
import importlib.util
import re
import signal
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parent.parent
RECIPE = ROOT / "recipes" / "selfplay_ppo.py"
# a budget of whole batches: 3 updates of 8 games x 16 steps, a snapshot every 2, 2 evaluation games each
TINY = ["--num-envs", "8", "--num-steps", "16", "--total-steps", "384", "--snapshot-every", "2"]
TINY += ["--log-every", "2", "--eval-games", "2"]


def _recipe() -> ModuleType:
    spec = importlib.util.spec_from_file_location("selfplay_ppo_recipe", RECIPE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(RECIPE), *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def test_help_gives_every_option_a_meaning_and_its_default() -> None:
    recipe = _recipe()
    text = " ".join(recipe.build_parser().format_help().split())
    fields = dataclasses.fields(recipe.Args)
    assert len(fields) >= 17
    for field in fields:
        flag = "--" + field.name.replace("_", "-")
        found = re.search(rf"{flag} {field.name.upper()} (.+?) \(default: (.+?)\)", text)
        assert found, f"{flag} has no help or no default in: {text}"
        meaning, default = found.groups()
        assert len(meaning.split()) >= 2, (flag, meaning)
        assert default == str(field.default), (flag, default)
    # the usage examples and the saved model's use come with it
    assert "python recipes/selfplay_ppo.py --total-steps 200000" in text and "model.pt" in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--total-steps", "100"], "less than one batch"),
        (["--num-envs", "0"], "at least 1"),
        (["--minibatches", "5000"], "more than the batch"),
    ],
)
def test_a_budget_that_cannot_run_is_refused_before_any_work(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        _recipe().parse_args(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.slow  # torch, numba's MCTS and a few hundred steps in a new process: over 10 s on 2 cores
def test_a_tiny_run_says_what_it_runs_reports_progress_and_saves_a_model_that_plays(tmp_path: Path) -> None:
    from connect4_agents.evaluation.arena import play_match
    from connect4_agents.interop.torch_policy import TorchPolicy
    from connect4_agents.random_agent import RandomAgent

    result = _run(*TINY, "--out", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    # the banner, before any progress: the budget in updates and steps, the opponents and the files
    assert lines[0].startswith("self-play PPO on 6x7: 3 updates of 8 games x 16 steps = 384 learner steps")
    assert f"{tmp_path / 'run' / 'model.pt'} at the end" in lines[1]
    progress = [line for line in lines if line.startswith("update ")]
    assert [line.split("  ")[:2] for line in progress] == [
        ["update 1/3", "128/384 steps"],
        ["update 2/3", "256/384 steps"],
        ["update 3/3", "384/384 steps"],
    ]
    assert all(re.search(r"elapsed, about \d+ s left$", line) for line in progress)
    assert lines.index(progress[0]) == 2  # nothing comes between the banner and the first update's line
    assert f"model saved to {tmp_path / 'run' / 'model.pt'}" in lines
    assert re.search(r"score vs random: [0-9.]+\nscore vs mcts:100: [0-9.]+", result.stdout)

    import torch

    assert (tmp_path / "run" / "args.json").read_text().count('"total_steps": 384') == 1
    checkpoint = torch.load(tmp_path / "run" / "model.pt", weights_only=True)
    assert (checkpoint["rows"], checkpoint["columns"], checkpoint["steps"]) == (6, 7, 384)
    agent = _recipe().Agent(checkpoint["rows"], checkpoint["columns"])
    agent.load_state_dict(checkpoint["state_dict"])
    # the docstring's way to play it: every move legal (play_match checks), whole games to the end
    policy = TorchPolicy(agent, observation="planes", forward=lambda x: agent.policy(agent.features(x)))
    match = play_match(policy, RandomAgent(seed=0), 4)
    assert match.wins + match.draws + match.losses == 4


@pytest.mark.slow  # as above, and the run is stopped once its first update has printed
def test_ctrl_c_stops_the_run_and_still_saves_the_model(tmp_path: Path) -> None:
    budget = ["--num-envs", "8", "--num-steps", "16", "--total-steps", "1000000", "--eval-games", "2"]
    process = subprocess.Popen(
        [sys.executable, str(RECIPE), *budget, "--out", str(tmp_path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        seen = []
        for line in process.stdout:  # wait for the first progress line, whatever the machine's speed
            seen.append(line)
            if line.startswith("update 1/"):
                process.send_signal(signal.SIGINT)
                break
        rest, errors = process.communicate(timeout=600)
    finally:
        process.kill()
    assert process.returncode == 0, errors[-2000:]
    assert re.search(r"^interrupted after [\d,]+ steps$", rest, re.MULTILINE), "".join(seen) + rest
    assert f"model saved to {tmp_path / 'model.pt'}" in rest
    assert (tmp_path / "model.pt").stat().st_size > 0


@pytest.mark.slow
def test_the_selfplay_recipe_runs_adds_snapshots_and_beats_random_play(tmp_path: Path) -> None:
    result = _run(
        "--total-steps", "16384", "--num-envs", "32", "--num-steps", "64", "--snapshot-every", "2",
        "--eval-games", "40", "--out", str(tmp_path),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    progress = [line for line in result.stdout.splitlines() if "recent score by member" in line]
    assert len(progress) == 4 and "self@4096" in progress[0] and "self@16384" in progress[-1]
    score = float(re.search(r"score vs random: ([0-9.]+)", result.stdout).group(1))
    assert score >= 0.6, result.stdout  # 8 updates already beat random play more often than not
    assert re.search(r"score vs mcts:100: [0-9.]+", result.stdout)
