"""The RLlib training loop (connect4_agents.rllib.train) on a stand-in for Ray: checkpoints, the failure of a
run whose env runners played nothing, and Ray shut down however the run ends. RLlib itself runs in
tests/env/integrations/test_rllib.py, in its own venv."""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any

import pytest

from connect4_agents.commands import train_rllib as command
from connect4_agents.rllib import train as rllib_train


class FakeAlgo:
    def __init__(self, episodes: list[int], calls: list[str]) -> None:
        self.episodes, self.calls = list(episodes), calls

    def train(self) -> dict[str, Any]:
        return {"env_runners": {"num_episodes": self.episodes.pop(0), "episode_len_mean": 21.5}}

    def save(self, path: str) -> Any:
        self.calls.append(f"save {path.rsplit('/', 1)[-1]}")
        return SimpleNamespace(checkpoint=SimpleNamespace(path=path))

    def get_module(self, name: str) -> str:
        return name

    def stop(self) -> None:
        self.calls.append("stop")


@pytest.fixture
def fake_ray(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Ray and RLlib's PPO replaced: returns (episodes per iteration to set, the calls made)."""
    calls: list[str] = []
    plan: list[int] = []
    ray = SimpleNamespace(
        init=lambda **options: calls.append(f"init {sorted(options)}"),
        shutdown=lambda: calls.append("shutdown"),
    )
    monkeypatch.setitem(sys.modules, "ray", ray)
    monkeypatch.setattr(rllib_train, "require_rllib", lambda: None)  # the fake has no ray.rllib to import
    monkeypatch.setattr(
        rllib_train, "ppo_config", lambda config: SimpleNamespace(build_algo=lambda: FakeAlgo(plan, calls))
    )
    return plan, calls


def test_checkpoints_every_n_iterations_and_at_the_end(fake_ray: Any, tmp_path: Any) -> None:
    plan, calls = fake_ray
    plan.extend([3, 4, 5])
    seen: list[tuple[int, int, float]] = []
    ratings = rllib_train.train_rllib(
        rllib_train.RLlibTrainConfig(rows=4, columns=5),
        iterations=3,
        out=tmp_path,
        checkpoint_every=2,
        eval_games=0,
        on_iteration=lambda *row: seen.append(row),
    )
    assert ratings is None
    assert seen == [(1, 3, 21.5), (2, 4, 21.5), (3, 5, 21.5)]
    assert calls == ["init ['include_dashboard', 'logging_level', 'num_cpus']", "save checkpoint_0002",
                     "save checkpoint_0003", "stop", "shutdown"]  # fmt: skip


def test_an_iteration_without_episodes_fails_with_exit_1_and_ray_shut_down(
    fake_ray: Any, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    plan, calls = fake_ray
    plan.extend([2, 0, 7])
    code = command.main(["--iterations", "3", "--rows", "4", "--columns", "5", "--out", str(tmp_path)])
    assert code == 1
    out, err = capsys.readouterr()
    assert "iteration 2: 0 episodes" in out and "error: no episode was played" in err
    assert calls[-2:] == ["stop", "shutdown"] and not any(c.startswith("save") for c in calls)


def test_a_bad_opponent_fails_before_ray_starts(fake_ray: Any, tmp_path: Any) -> None:
    _, calls = fake_ray
    assert command.main(["--eval-opponents", "muzero", "--out", str(tmp_path)]) == 2
    assert calls == []


def test_settings_are_bounded_and_rllib_is_named_before_any_folder(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    for bad, message in (
        ({"hidden": (10**9,)}, "a hidden layer's size must be an integer in 1..4096"),
        ({"hidden": ()}, "hidden must be 1 to 16 layer sizes"),
        ({"minibatch_size": 500, "batch_size": 400}, "minibatch_size must be an integer in 1..400"),
        ({"env_runners": 100_000}, "env_runners must be an integer in 0..256"),
    ):
        with pytest.raises(ValueError, match=message):
            rllib_train.RLlibTrainConfig(**bad).check()  # type: ignore[arg-type]
    out = tmp_path / "never"
    assert command.main(["--hidden", "1000000000", "--out", str(out)]) == 2
    assert "4096" in capsys.readouterr().err and not out.exists()
    try:
        import ray.rllib.algorithms.ppo  # noqa: F401
    except ImportError:  # here, in the main venv: the message names RLlib's own venv, before any folder
        assert command.main(["--out", str(out)]) == 2
        assert "ray[rllib]" in capsys.readouterr().err and not out.exists()
