"""``connect4 train-sb3`` says what runs before any work and names every file it wrote at the end: a league's
banner, resume line and summary with its ratings, and the plain run's (issue 53)."""

from __future__ import annotations

import json

from helpers.extras import importorskip

for _module in ("stable_baselines3", "sb3_contrib", "torch"):
    importorskip(_module)

TINY = {"n_steps": 64, "batch_size": 64}


def test_the_command_says_what_runs_what_it_resumes_and_names_every_file_at_the_end(tmp_path, capsys):
    """The league run had no start banner, a progress bar without total, and an end summary naming neither
    league.json, league.png, the snapshots nor a rating; the plain run named only model.zip."""
    from connect4_agents.commands import train_sb3

    out = tmp_path / "league"
    common = ["--n-envs", "8", "--eval-games", "2", "--eval-opponents", "random", "--quiet"]
    common += ["--hyperparameters", json.dumps(TINY)]
    league = [
        "--league",
        "--league-members",
        "random",
        "--league-rating-games",
        "2",
        "--snapshot-freq",
        "1024",
    ]
    league += ["--eval-freq", "1024", "--out", str(out), *common]
    assert train_sb3.main([*league, "--timesteps", "1024"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(
        "train-sb3: maskable_ppo (mlp policy, 8 games at once) on 6x7, 4 in a row, against "
    )
    assert "for 1,024 steps or 60 CPU-minutes" in lines[0] and lines[0].endswith(f"files in {out}")
    assert not any(line.startswith("resuming") for line in lines)
    assert any(line.startswith("finished after 1,024 steps in ") for line in lines)
    text = "\n".join(lines)
    for name in ("league.json", "league.png", "model.zip", "eval.csv", "config.json", "curve.png"):
        assert f"  {out / name}" in text
    assert f"  {out / 'snapshots'}/  1 snapshot models" in text
    assert "self@1024" in text and "gauntlet against the fixed members (2 games)" in text
    assert train_sb3.main([*league, "--timesteps", "2048"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith(f"resuming the league in {out} from its checkpoint at step 1,024 (1 snapshots")
    assert any(line.startswith("finished: this part trained 1,024 steps in ") for line in lines)
    assert train_sb3.main([*league, "--timesteps", "1024", "--fresh"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert not any(line.startswith("resuming") for line in lines)
    # the plain run: the same banner and summary, without a league
    plain = tmp_path / "plain"
    argv = ["--timesteps", "512", "--eval-freq", "512", "--out", str(plain), "--rows", "4", "--columns", "5"]
    assert train_sb3.main([*argv, "--win-length", "3", *common]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("train-sb3: maskable_ppo") and "against random, for 512 steps;" in lines[0]
    assert any(line.startswith("finished after 512 steps in ") for line in lines)
    assert f"  {plain / 'model.zip'}  the final model (play it as sb3:{plain / 'model.zip'})" in lines
    assert not any(line.startswith(("league", "ratings")) or "league.json" in line for line in lines)
