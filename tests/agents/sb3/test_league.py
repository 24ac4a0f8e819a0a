"""Self-play and leagues with SB3: snapshots swapped only between games, the league's files, ratings and resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.extras import importorskip

for _module in ("stable_baselines3", "sb3_contrib", "torch"):
    importorskip(_module)

from connect4_agents.sb3 import callbacks as callbacks_module  # noqa: E402
from connect4_agents.sb3 import train as train_module  # noqa: E402
from connect4_agents.sb3.league import LEAGUE_FILE, League, LeagueSettings  # noqa: E402
from connect4_agents.sb3.train import SB3TrainConfig, train_baseline  # noqa: E402
from connect4_env.rules import Rules  # noqa: E402

TINY = {"n_steps": 64, "batch_size": 64}


def _config(tmp_path: Path, **overrides: Any) -> SB3TrainConfig:
    settings: dict[str, Any] = {
        "timesteps": 2048,
        "n_envs": 8,
        "eval_freq": 100_000,
        "eval_games": 2,
        "eval_opponents": ("random",),
        "out": str(tmp_path / "run"),
        "progress": False,
        "hyperparameters": TINY,
    }
    settings.update(overrides)
    return SB3TrainConfig(**settings)


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> list[tuple[np.ndarray, list[dict[str, Any]]]]:
    """Every step's dones and infos of the training env, as SB3 sees them."""
    from stable_baselines3.common.vec_env import VecEnvWrapper

    from connect4_env.integrations import sb3 as sb3_env

    steps: list[tuple[np.ndarray, list[dict[str, Any]]]] = []
    original = sb3_env.make_sb3_vec_env

    class Recorder(VecEnvWrapper):
        def reset(self):
            return self.venv.reset()

        def step_wait(self):
            observations, rewards, dones, infos = self.venv.step_wait()
            steps.append((dones.copy(), [dict(info) for info in infos]))
            return observations, rewards, dones, infos

    monkeypatch.setattr(sb3_env, "make_sb3_vec_env", lambda *a, **k: Recorder(original(*a, **k)))
    return steps


def test_self_play_snapshots_change_only_between_games(tmp_path, recorded):
    """opponent='self' refreshes the snapshot every snapshot_freq steps; a game that was playing one when the
    next arrived finishes against it (the old self-play swapped it in every env at once, mid-game)."""
    train_baseline(_config(tmp_path, opponent="self", snapshot_freq=256, timesteps=2048))
    current: list[str | None] = [None] * 8
    swapped_mid_game = 0
    names = set()
    latest = None
    for dones, infos in recorded:
        for i, info in enumerate(infos):
            name = info["opponent"]  # the ended game's own opponent when done
            names.add(name)
            if current[i] is not None:
                assert name == current[i], "a game met two snapshots"
                if latest is not None and name != latest:
                    swapped_mid_game += 1
            latest = max(names, key=lambda n: int(n.split("@")[1]))
            current[i] = None if dones[i] else name
    assert len(names) >= 6  # self@0, self@256, ... each played
    assert swapped_mid_game > 0  # some game outlived its snapshot's turn as the newest


def test_a_league_run_writes_its_files_rates_its_members_and_resumes(tmp_path):
    config = _config(
        tmp_path,
        league=True,
        league_members=("random", "mcts:10"),
        snapshot_freq=1024,
        league_rating_games=2,
        timesteps=2048,
    )
    train_baseline(config)
    out = Path(config.out)
    league = json.loads((out / LEAGUE_FILE).read_text())
    assert [s["name"] for s in league["snapshots"]] == ["self@1024", "self@2048"]
    assert all((out / "snapshots" / f"{s['name']}.zip").is_file() for s in league["snapshots"])
    assert (out / "league.png").is_file()
    pairs = {(r["a"], r["b"]) for r in league["results"]}
    assert pairs == {
        ("self@1024", "random"),
        ("self@1024", "mcts:10"),
        ("self@2048", "random"),
        ("self@2048", "mcts:10"),
        ("self@2048", "self@1024"),
    }
    assert all(r["wins"] + r["draws"] + r["losses"] == 2 for r in league["results"])
    # rated on the project's ladder: its members keep their ladder Elo
    assert league["ratings"]["random"]["elo"] == 0 and league["ratings"]["mcts:10"]["elo"] == pytest.approx(
        354.7
    )
    records = league["learner_records"]
    assert sum(r["games"] for r in records.values()) > 0
    assert league["timesteps"] == 2048
    # started again on the same folder with more steps, it goes on from its checkpoint
    train_baseline(dataclass_replace(config, timesteps=3072))
    resumed = json.loads((out / LEAGUE_FILE).read_text())
    assert [s["name"] for s in resumed["snapshots"]] == ["self@1024", "self@2048", "self@3072"]
    assert resumed["timesteps"] == 3072
    assert resumed["learner_records"]["random"]["games"] >= records["random"]["games"]


def dataclass_replace(config: SB3TrainConfig, **changes: Any) -> SB3TrainConfig:
    import dataclasses

    return dataclasses.replace(config, **changes)


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ({"league_members": ()}, ValueError),
        ({"league_members": "random"}, TypeError),
        ({"league_win_rate": 1.5}, ValueError),
        ({"league_sampling": "best"}, ValueError),
        ({"league_rating_games": -1}, ValueError),
    ],
)
def test_bad_league_settings_are_refused_by_the_config(tmp_path, changes, error):
    with pytest.raises(error):
        _config(tmp_path, league=True, **changes)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d.update(board=[5, 7, 4]),
        lambda d: d["snapshots"].append({"name": "../../etc/passwd", "step": 1}),
        lambda d: d["snapshots"].append({"name": "self@99", "step": 99}),  # no such file
        lambda d: d.pop("results"),
        lambda d: d["results"].append({"a": "x", "b": "y", "wins": -1, "draws": 0, "losses": 0}),
    ],
)
def test_a_damaged_league_file_is_refused_with_a_clear_error(tmp_path, edit):
    rules = Rules()
    settings = LeagueSettings(fixed=("random",), rating_games=0)
    league = League(tmp_path, rules, settings)
    league.save()
    data = json.loads((tmp_path / LEAGUE_FILE).read_text())
    edit(data)
    (tmp_path / LEAGUE_FILE).write_text(json.dumps(data))
    with pytest.raises((ValueError, FileNotFoundError)):
        League.load(tmp_path, rules, settings)


def test_train_module_has_no_mid_game_swap_left():
    assert not hasattr(train_module, "_SelfPlayOpponent")


def test_a_cpu_budget_stops_training_early_and_still_saves(tmp_path):
    result = train_baseline(_config(tmp_path, timesteps=10**9, cpu_minutes=0.02))
    assert 0 < result.timesteps < 10**9 and not result.interrupted
    assert result.model_path.is_file()
    with pytest.raises(ValueError, match="cpu_minutes"):
        _config(tmp_path, cpu_minutes=-1)


def test_the_default_league_run_is_bounded_by_sixty_cpu_minutes_and_the_plain_run_by_its_steps():
    league = SB3TrainConfig(league=True)
    assert (league.cpu_minutes, league.timesteps) == (
        train_module.DEFAULT_LEAGUE_CPU_MINUTES,
        train_module.MAX_TIMESTEPS,
    )
    assert train_module.DEFAULT_LEAGUE_CPU_MINUTES <= 60
    plain = SB3TrainConfig()
    assert (plain.cpu_minutes, plain.timesteps) == (0.0, train_module.DEFAULT_TIMESTEPS)
    assert SB3TrainConfig(league=True, timesteps=5000, cpu_minutes=0).timesteps == 5000


def test_ratings_are_fitted_at_evaluations_and_at_the_end_not_at_every_snapshot(tmp_path, monkeypatch):
    """A fit's cost grows with the members: a snapshot's save keeps the last fit (a 60-minute run spent most of
    its last quarter refitting with bootstrap intervals at every snapshot)."""
    fits: list[int] = []
    original = League.ratings

    def counted(self, bootstrap=0):
        fits.append(bootstrap)
        return original(self, bootstrap)

    monkeypatch.setattr(League, "ratings", counted)
    config = _config(
        tmp_path,
        league=True,
        league_members=("random",),
        snapshot_freq=512,
        league_rating_games=2,
        timesteps=2048,
        eval_freq=1024,
    )
    train_baseline(config)
    league = json.loads((Path(config.out) / LEAGUE_FILE).read_text())
    assert len(league["snapshots"]) >= 4
    assert fits == [0, 0, train_module.LEAGUE_BOOTSTRAP]  # the evaluations at 1024 and 2048, then the end


def test_the_league_picture_shows_the_fixed_members_and_the_latest_snapshots_in_bounded_size(tmp_path):
    """A long run rates hundreds of snapshots: its picture once took 17 GB and the run was killed at its end."""
    from matplotlib import image

    from connect4_agents.evaluation.ratings import MAX_PLOTTED, PairingCounts, Ratings
    from connect4_agents.sb3.league import PICTURE_MEMBERS, League, LeagueSettings

    league = League(tmp_path, Rules(), LeagueSettings(fixed=("random", "mcts:10")), seed=0)
    league.snapshots = [(f"self@{k}", k) for k in range(0, 600_000, 1000)]
    shown = league.picture_members()
    assert shown == ["random", "mcts:10", *[f"self@{k}" for k in range(586_000, 600_000, 1000)]]
    assert len(shown) == PICTURE_MEMBERS and league.picture_members(2) == ["random", "mcts:10"]
    league.snapshots = league.snapshots[:3]  # fewer than there is room for: all (it showed the last one)
    assert league.picture_members() == ["random", "mcts:10", "self@0", "self@1000", "self@2000"]
    names = [f"p{k}" for k in range(300)]
    ratings = Ratings(
        {name: float(k) for k, name in enumerate(names)},
        {name: (k - 1.0, k + 1.0) for k, name in enumerate(names)},
        "p0",
        [PairingCounts(a, b, 1, 0, 1) for a, b in zip(names, names[1:])],
    )
    ratings.plot(str(tmp_path / "all.png"))
    height, width, _ = image.imread(tmp_path / "all.png").shape
    size = 0.6 * MAX_PLOTTED + 2  # the picture of MAX_PLOTTED players, in inches, at 110 dots an inch
    assert width <= (2 * size + 2) * 110 + 1 and height <= size * 110 + 1


# -- issue 49: resume reads only what the pool holds, a league file checked as a whole, files in step -----------
def _policy():
    from stable_baselines3 import PPO

    from connect4_env.integrations.sb3 import make_sb3_vec_env

    return PPO("MlpPolicy", make_sb3_vec_env(1), n_steps=64, batch_size=64, device="cpu", seed=0).policy


def test_resume_loads_only_the_snapshots_in_the_pool_and_a_retired_ones_file_may_be_deleted(
    tmp_path, monkeypatch
):
    """A default run's 639 snapshots were all loaded at resume (44.5 s), and deleting a retired one's file made
    the run impossible to resume."""
    from connect4_agents.sb3 import league as league_module

    rules = Rules()
    settings = LeagueSettings(fixed=("random",), max_snapshots=2, rating_games=0)
    league = League(tmp_path, rules, settings)
    policy = _policy()
    for step in (100, 200, 300, 400):
        league.add_snapshot(policy, step)
    assert league.pool.names == ["random", "self@300", "self@400"]
    (tmp_path / "snapshots" / "self@100.zip").unlink()  # retired: nobody needs it
    loaded: list[str] = []
    original = league_module.SB3Agent.load

    def counted(path, *args, **kwargs):
        loaded.append(Path(path).name)
        return original(path, *args, **kwargs)

    monkeypatch.setattr(league_module.SB3Agent, "load", staticmethod(counted))
    resumed = League.load(tmp_path, rules, settings)
    assert loaded == ["self@300.zip", "self@400.zip"]
    assert resumed.pool.names == ["random", "self@300", "self@400"]
    assert [name for name, _ in resumed.snapshots] == ["self@100", "self@200", "self@300", "self@400"]
    resumed.add_snapshot(policy, 500)  # and it goes on: the oldest in the pool leaves
    assert resumed.pool.names == ["random", "self@400", "self@500"]


def _saved_league(tmp_path: Path) -> tuple[Rules, LeagueSettings, dict[str, Any]]:
    rules = Rules()
    settings = LeagueSettings(fixed=("random", "mcts:10"), rating_games=0)
    league = League(tmp_path, rules, settings)
    league.results[("mcts:10", "random")] = [2, 0, 0]
    league.save()
    return rules, settings, json.loads((tmp_path / LEAGUE_FILE).read_text())


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (
            lambda d: d["results"].append({"a": "random", "b": "random", "wins": 1, "draws": 0, "losses": 1}),
            "itself",
        ),
        (lambda d: d["results"][0].update(wins=10**9), "wins"),
        (lambda d: d["results"][0].update(wins=6000, losses=6000), "12000 games"),
        (lambda d: d["results"][0].update(wins=0), "0 games"),
        (lambda d: d["results"][0].update(a="self@5"), "no member"),
        (
            lambda d: d["snapshots"].extend([{"name": "self@9", "step": 9}, {"name": "self@8", "step": 8}]),
            "later",
        ),
        (lambda d: d.update(checkpoint={"step": 0, "sha256": "x"}), "SHA-256"),
    ],
)
def test_a_league_file_bad_as_a_whole_is_refused_when_read_naming_the_file(tmp_path, edit, words):
    """It loaded, then the run died at its first evaluation, every time it was resumed."""
    rules, settings, data = _saved_league(tmp_path)
    edit(data)
    (tmp_path / LEAGUE_FILE).write_text(json.dumps(data))
    with pytest.raises(ValueError, match=words) as caught:
        League.load(tmp_path, rules, settings)
    assert str(tmp_path / LEAGUE_FILE) in str(caught.value)


def test_a_truncated_league_file_is_refused_naming_the_file(tmp_path):
    rules, settings, _ = _saved_league(tmp_path)
    path = tmp_path / LEAGUE_FILE
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(ValueError, match="not a league file") as caught:
        League.load(tmp_path, rules, settings)
    assert str(path) in str(caught.value)


def test_a_kill_between_the_checkpoint_and_league_json_resumes_from_the_pair_in_step(tmp_path, monkeypatch):
    """The checkpoint was written, then league.json: a kill between left a newer checkpoint with an older
    league. The checkpoint league.json names is kept until the new league.json is written."""
    rules = Rules()
    settings = LeagueSettings(fixed=("random",), rating_games=0)
    league = League(tmp_path, rules, settings)

    def writer(content: bytes):
        return lambda path: (path.write_bytes(content), path.with_suffix(".json").write_text("{}"))

    league.save_checkpoint(writer(b"weights at 1000"), 1000)
    assert League.load(tmp_path, rules, settings).checkpoint_path().read_bytes() == b"weights at 1000"
    league.save_checkpoint(writer(b"weights at 2000"), 2000)
    resumed = League.load(tmp_path, rules, settings)
    assert (resumed.timesteps, resumed.checkpoint_path().read_bytes()) == (2000, b"weights at 2000")

    def killed(self, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(League, "save", killed)
    with pytest.raises(KeyboardInterrupt):  # the kill: checkpoint.zip is new, league.json is not
        league.save_checkpoint(writer(b"weights at 3000"), 3000)
    monkeypatch.undo()
    assert (tmp_path / "checkpoint.zip").read_bytes() == b"weights at 3000"
    resumed = League.load(tmp_path, rules, settings)
    path = resumed.checkpoint_path()
    assert (resumed.timesteps, path.name, path.read_bytes()) == (
        2000,
        "checkpoint.previous.zip",
        b"weights at 2000",
    )
    assert path.with_suffix(".json").is_file()  # its sidecar beside it
    # the run goes on from there; its next checkpoint keeps the pair in step again
    resumed.save_checkpoint(writer(b"weights at 3000 again"), 3000)
    again = League.load(tmp_path, rules, settings)
    assert again.checkpoint_path().read_bytes() == b"weights at 3000 again"
    (tmp_path / "checkpoint.zip").write_bytes(b"someone else's file")
    (tmp_path / "checkpoint.previous.zip").unlink()
    with pytest.raises(ValueError, match="step 3000"):
        League.load(tmp_path, rules, settings).checkpoint_path()


# -- issue 53: ratings a user can trust, anchored on the fixed members ---------------------------------------------
def test_a_league_whose_snapshots_lose_to_mcts_100_rates_them_below_it_and_says_how(tmp_path):
    """Six snapshots were rated above mcts:100 (1050 against 851) though each lost 12-18 of its 20 games against
    it: each beat its predecessors and the chain carried them up. Untrained snapshots lose to mcts:100; their
    ratings come from their games against the fixed members alone."""
    from connect4_agents.evaluation.league_ratings import GAUNTLET, LADDER, ROUND_ROBIN
    from connect4_agents.evaluation.ratings import reference_ladder

    settings = LeagueSettings(fixed=("random", "mcts:30", "mcts:100"), rating_games=10)
    league = League(tmp_path, Rules(), settings)
    policy = _policy()
    for step in (100, 200, 300):
        league.add_snapshot(policy, step)
    league.save(rate=True, bootstrap=20)
    data = json.loads((tmp_path / LEAGUE_FILE).read_text())
    results = {(r["a"], r["b"]): (r["wins"], r["draws"], r["losses"]) for r in data["results"]}
    # the fixed members the ladder does not both rate played each other once, before the first snapshot's games
    assert ("random", "mcts:30") in results and ("mcts:30", "mcts:100") in results
    assert ("random", "mcts:100") not in results and ("mcts:100", "random") not in results
    ratings = data["ratings"]
    mcts_100 = reference_ladder()["mcts:100"]
    assert ratings["mcts:100"]["elo"] == mcts_100 and ratings["mcts:100"]["measured"] == LADDER
    assert ratings["mcts:30"]["measured"] == ROUND_ROBIN
    for name in ("self@100", "self@200", "self@300"):
        wins, draws, losses = results[(name, "mcts:100")]
        assert losses > wins  # each loses to mcts:100, and is rated below it, its interval too
        assert ratings[name]["elo"] < mcts_100 and ratings[name]["ci95"][1] < mcts_100
        assert ratings[name]["measured"] == GAUNTLET and ratings[name]["games"] == 30
    assert "gauntlet" in data["rating_method"] and "20 bootstrap" in data["rating_method"]


def _csv_rows(path: Path) -> list[dict[str, str]]:
    import csv

    with open(path, newline="") as stream:
        return list(csv.DictReader(stream))


def test_a_resumed_league_says_what_it_resumes_from_counts_this_part_apart_and_fresh_starts_afresh(
    tmp_path, monkeypatch
):
    """A league run on an existing --out resumed silently, trained a whole --cpu-minutes again, reported the
    whole run's steps over this part's seconds, and eval.csv's seconds restarted at 0."""
    from connect4_agents.sb3.report import summary_lines

    bars: list[tuple[Any, str, int]] = []
    original_bar = callbacks_module.progress_bar

    def recorded_bar(total, description, unit="it", initial=0):
        bars.append((total, unit, initial))
        return original_bar(total, description, unit, initial)

    monkeypatch.setattr(callbacks_module, "progress_bar", recorded_bar)
    config = _config(
        tmp_path,
        league=True,
        league_members=("random",),
        snapshot_freq=1024,
        eval_freq=1024,
        league_rating_games=2,
        timesteps=2048,
        cpu_minutes=100.0,  # far beyond these runs: the step counts end them
        progress=True,
    )
    said: list[str] = []
    first = train_baseline(config, say=said.append)
    out = Path(config.out)
    before = json.loads((out / LEAGUE_FILE).read_text())["cpu_seconds"]
    assert 0 < before <= first.total_cpu_seconds
    assert len(said) == 1 and "against a league (random and its own snapshots" in said[0]
    assert "2,048 steps or 100 CPU-minutes" in said[0] and f"files in {out}" in said[0]
    assert bars == [(1000, "‰", 0)]  # a total, so the bar has an ETA
    assert first.start_timesteps == 0 and first.timesteps == 2048
    said.clear()
    second = train_baseline(dataclass_replace(config, timesteps=3072), say=said.append)
    assert len(said) == 2
    assert said[1].startswith(
        f"resuming the league in {out} from its checkpoint at step 2,048 (2 snapshots, "
    )
    assert "the latest self@2048" in said[1] and "--fresh starts afresh" in said[1]
    assert bars[1][2] >= 666  # the bar starts where the run is: 2,048 of 3,072 steps
    assert (second.start_timesteps, second.timesteps) == (2048, 3072)
    assert second.total_cpu_seconds == pytest.approx(before + second.cpu_seconds)  # the whole run's
    rows = _csv_rows(out / "eval.csv")
    assert [int(r["timesteps"]) for r in rows] == [1024, 2048, 3072]
    for key in ("seconds", "cpu_seconds"):  # eval.csv goes on with the whole run's totals
        values = [float(r[key]) for r in rows]
        assert values == sorted(values) and values[2] >= values[1]
    league = json.loads((out / LEAGUE_FILE).read_text())
    assert league["cpu_seconds"] >= float(rows[2]["cpu_seconds"])  # the final rating and saves count too
    summary = summary_lines(second, config)
    assert summary[0].startswith("finished: this part trained 1,024 steps in ")
    assert "from step 2,048; the whole run 3,072 steps" in summary[0]
    # its budget spent (as if its earlier parts had used it), a resumed run trains no further and says so
    league["cpu_seconds"] = 10_000.0
    (out / LEAGUE_FILE).write_text(json.dumps(league))
    said.clear()
    spent = train_baseline(dataclass_replace(config, timesteps=None, cpu_minutes=1.0), say=said.append)
    assert "nothing left to train" in said[1] and "166.7 CPU-minutes so far" in said[1]
    assert spent.timesteps == 3072 and len(_csv_rows(out / "eval.csv")) == 3
    # --fresh: a new run in the same folder, nothing of the old one left
    said.clear()
    fresh = train_baseline(dataclass_replace(config, timesteps=1024, fresh=True), say=said.append)
    assert len(said) == 1 and fresh.start_timesteps == 0 and fresh.timesteps == 1024
    assert sorted(p.name for p in (out / "snapshots").glob("*.zip")) == ["self@1024.zip"]
    assert [int(r["timesteps"]) for r in _csv_rows(out / "eval.csv")] == [1024]
    assert json.loads((out / LEAGUE_FILE).read_text())["timesteps"] == 1024
    with pytest.raises(TypeError, match="fresh must be True or False"):
        dataclass_replace(config, fresh="yes")


def test_a_league_runs_files_describe_the_league_run_and_its_summary_names_every_file(tmp_path, monkeypatch):
    """curve.png was titled 'maskable_ppo vs random', config.json and model.json said "opponent": "random", and
    config.json held "timesteps": 1000000000000 (a sentinel); the end summary named no league file or rating."""
    from connect4_agents.sb3.report import summary_lines

    titles: list[str] = []
    original_plot = train_module.plot_evaluations
    monkeypatch.setattr(
        train_module,
        "plot_evaluations",
        lambda rows, path, title: (titles.append(title), original_plot(rows, path, title))[1],
    )
    config = _config(
        tmp_path,
        league=True,
        league_members=("random", "mcts:10"),
        timesteps=1024,
        snapshot_freq=1024,
        league_rating_games=2,
    )
    result = train_baseline(config)
    out = Path(config.out)
    settings = json.loads((out / "config.json").read_text())
    assert settings["opponent"] == "league" and settings["league_members"] == ["random", "mcts:10"]
    assert settings["timesteps"] == 1024
    model = json.loads((out / "model.json").read_text())
    assert model["opponent"] == "league" and model["league_members"] == ["random", "mcts:10"]
    assert titles == ["maskable_ppo against a league (random, mcts:10 and its own snapshots, drawn by pfsp)"]
    # a league bounded by its CPU-minutes alone: no sentinel step count in its files
    unbounded = SB3TrainConfig(league=True, out=str(tmp_path / "other"))
    assert train_module.run_settings(unbounded)["timesteps"] is None
    summary = "\n".join(summary_lines(result, config))
    for name in ("model.zip", "model.json", "checkpoint.zip", "eval.csv", "curve.png", "config.json"):
        assert str(out / name) in summary
    assert str(out / "league.json") in summary and str(out / "league.png") in summary
    assert f"{out / 'snapshots'}/  1 snapshot models" in summary
    assert "league: 1 snapshots" in summary and "gauntlet against the fixed members" in summary
    assert "held at its reference-ladder Elo" in summary and "ratings (Elo, 95 % interval)" in summary


def test_a_league_run_stopped_by_ctrl_c_resumes_from_its_last_checkpoint(tmp_path, monkeypatch):
    """Ctrl-C wrote the learner's steps into league.json, beyond the checkpoint it names: the run could not be
    resumed ("checkpoint step ... is not the league's timesteps ...")."""
    calls: list[int] = []
    original = League.add_snapshot

    def interrupted_at_the_third(self, policy, step):
        calls.append(step)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return original(self, policy, step)

    monkeypatch.setattr(League, "add_snapshot", interrupted_at_the_third)
    config = _config(
        tmp_path,
        league=True,
        league_members=("random",),
        snapshot_freq=512,
        eval_freq=1024,
        league_rating_games=2,
        timesteps=2048,
    )
    result = train_baseline(config)
    assert result.interrupted and calls[-1] == 1536
    league = json.loads((Path(config.out) / LEAGUE_FILE).read_text())
    assert league["timesteps"] == league["checkpoint"]["step"] == 1024
    monkeypatch.undo()
    resumed = train_baseline(config)
    assert not resumed.interrupted and (resumed.start_timesteps, resumed.timesteps) == (1024, 2048)
