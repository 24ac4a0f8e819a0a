"""What a ``train-sb3`` run tells its user: the start banner, the line of a resumed run, and the end summary.

Text only: [`train_baseline`][connect4_agents.sb3.train.train_baseline] says the banner and the resume line
through the ``say`` it is given; ``connect4 train-sb3`` prints `summary_lines` of its result.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from connect4_agents.sb3.league import League
    from connect4_agents.sb3.train import SB3TrainConfig, TrainResult

__all__ = ["opponent_text", "budget_text", "banner", "resume_line", "summary_lines", "SUMMARY_SNAPSHOTS"]

SUMMARY_SNAPSHOTS = 5
"""How many of the latest snapshots the end summary rates (all of them are in ``league.json``)."""


def opponent_text(config: SB3TrainConfig) -> str:
    """Whom the learner trains against, in words (a league's members, ``self``, or the spec)."""
    if config.league:
        return f"a league ({', '.join(config.league_members)} and its own snapshots, drawn by {config.league_sampling})"
    if config.opponent == "self":
        return f"frozen snapshots of itself (a new one every {config.snapshot_freq:,} steps)"
    return config.opponent


def budget_text(config: SB3TrainConfig, step_limit: int | None) -> str:
    """How long the run trains: its steps, its CPU-minutes (the whole run's, all its parts), or both."""
    minutes = (
        f"{config.cpu_minutes:g} CPU-minutes (the whole run's, evaluations and rating matches included)"
        if config.cpu_minutes
        else ""
    )
    steps = "" if step_limit is None else f"{step_limit:,} steps"
    if steps and minutes:
        return f"{steps} or {minutes}, whichever comes first"
    return steps or minutes or "until Ctrl-C"


def banner(config: SB3TrainConfig, step_limit: int | None, out: Path) -> str:
    """The start banner: what runs, against whom, for how long, how it is evaluated, where the files go."""
    evaluations = (
        f"evaluated every {config.eval_freq:,} steps against {', '.join(config.eval_opponents)} "
        f"({config.eval_games} games each)"
    )
    return (
        f"train-sb3: {config.algo} ({config.features} policy, {config.n_envs} games at once) on "
        f"{config.rows}x{config.columns}, {config.win_length} in a row, against {opponent_text(config)}, for "
        f"{budget_text(config, step_limit)}; {evaluations}; files in {out}"
    )


def resume_line(
    config: SB3TrainConfig, league: League, cpu_seconds: float, step_limit: int | None, left: bool
) -> str:
    """The line of a resumed league run: its checkpoint's steps, snapshots and CPU time, what is left."""
    snapshots = len(league.snapshots)
    latest = f", the latest {league.snapshots[-1][0]}" if snapshots else ""
    used = f"{cpu_seconds / 60:.1f} CPU-minutes"
    if left:
        steps = None if step_limit is None else f"{step_limit:,} steps"
        minutes = f"{config.cpu_minutes:g} CPU-minutes" if config.cpu_minutes else None
        go_on = f"training on to {' or '.join(filter(None, (steps, minutes))) or 'Ctrl-C'} in all"
    else:
        go_on = "nothing left to train (a larger --cpu-minutes or --timesteps goes on)"
    return (
        f"resuming the league in {league.folder} from its checkpoint at step {league.timesteps:,} ({snapshots} "
        f"snapshots{latest}; {used} so far): {go_on}; --fresh starts afresh"
    )


def summary_lines(result: TrainResult, config: SB3TrainConfig) -> list[str]:
    """The end summary: steps and time (this part apart from the whole run when resumed), the final
    evaluation, the league's snapshots and ratings with how each was measured, and every file written.
    """
    state = "interrupted" if result.interrupted else "finished"
    trained = result.timesteps - result.start_timesteps
    speed = f"{trained / max(result.seconds, 1e-9):,.0f} steps/s"
    part = f"{trained:,} steps in {result.seconds:.0f} s ({speed}, {result.cpu_seconds / 60:.1f} CPU-minutes)"
    if result.start_timesteps:
        lines = [
            f"{state}: this part trained {part}, from step {result.start_timesteps:,}; the whole run "
            f"{result.timesteps:,} steps, {result.total_cpu_seconds / 60:.1f} CPU-minutes"
        ]
    else:
        lines = [f"{state} after {part}"]
    final = result.evaluations[-len(config.eval_opponents) :] if result.evaluations else []
    if final:
        lines.append(f"evaluation at step {final[0]['timesteps']:,} (greedy, sides alternating):")
    for row in final:
        lines.append(
            f"  vs {row['opponent']:>10}: {row['wins']} W / {row['draws']} D / {row['losses']} L of {row['games']}"
        )
    if result.league is not None:
        lines += _league_lines(result.league)
    lines.append(f"files in {Path(config.out)}:")
    for path in result.files:
        lines.append(f"  {_file_line(path)}")
    return lines


def _league_lines(league: League) -> list[str]:
    snapshots = [name for name, _ in league.snapshots]
    in_pool = sum(name in league.pool for name in snapshots)
    lines = [f"league: {len(snapshots)} snapshots ({in_pool} in the pool at the end)"]
    ratings = league.last_ratings
    if ratings is None:
        lines.append("  no ratings: no rating matches were played (--league-rating-games 0, or no snapshot)")
        return lines
    shown = [*league.settings.fixed, *snapshots[-SUMMARY_SNAPSHOTS:]]
    lines.append(f"ratings (Elo, 95 % interval): {ratings.method}")
    lines += [
        f"  {line}" for line in ratings.lines(sorted(shown, key=lambda n: -ratings.ratings.elo.get(n, 0)))
    ]
    rated = sum(name in ratings.ratings.elo for name in snapshots)
    if rated > SUMMARY_SNAPSHOTS:
        lines.append(f"  (the latest {SUMMARY_SNAPSHOTS} snapshots; all {rated} rated ones in league.json)")
    return lines


def _file_line(path: Path) -> str:
    """A written file or folder, with what it is."""
    what: dict[str, Any] = {
        "model.zip": f"the final model (play it as sb3:{path})",
        "model.json": "the model's algorithm, board and network",
        "checkpoint.zip": "the learner at the last evaluation (a league run resumes from it)",
        "checkpoint.previous.zip": "the checkpoint before it, kept until league.json names the new one",
        "eval.csv": "W/D/L at each evaluation, with the run's steps, seconds and CPU-seconds",
        "curve.png": "win rate against each evaluation opponent",
        "config.json": "the run's settings",
        "league.json": "members, results, ratings and how each was measured",
        "league.png": "ratings and the payoff matrix",
        "tensorboard": "TensorBoard logs",
    }
    if path.name == "snapshots":
        return f"{path}/  {sum(1 for _ in path.glob('self@*.zip'))} snapshot models (sb3:<path> each)"
    suffix = "/" if path.is_dir() else ""
    return f"{path}{suffix}  {what.get(path.name, '')}".rstrip()
