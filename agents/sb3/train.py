"""Training Stable-Baselines3 baselines on the batched env (one job: a training run, from its settings to its files).

Evaluation, checkpoints, self-play, leagues and curves.

``train_baseline(SB3TrainConfig(...))`` is what ``connect4 train-sb3`` runs. Outputs in ``config.out``:
``model.zip`` (+ ``model.json``: algorithm, board and what it trained against), ``checkpoint.zip`` (the latest
periodic save), ``eval.csv`` (W/D/L against each fixed opponent at every evaluation, with the run's steps,
seconds and CPU-seconds so far), ``curve.png``, ``config.json`` (the settings of the run that happened) and,
when tensorboard is installed, ``tensorboard/``; a league's files besides (`connect4_agents.sb3.league`).
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from connect4_agents._support.cli import positive_int
from connect4_agents._support.config_cli import option
from connect4_agents._support.figures import pyplot, save_figure
from connect4_agents._support.files import atomic_write, atomic_write_json
from connect4_agents.sb3.agent import algorithm_class
from connect4_agents.sb3.files import ALGORITHMS, load_policy, sidecar_architecture
from connect4_agents.sb3.hyperparameters import algorithm_arguments, check_hyperparameters
from connect4_agents.sb3.league import (
    CHECKPOINT_FILE,
    LEAGUE_FILE,
    PREVIOUS_CHECKPOINT_FILE,
    League,
    LeagueSettings,
    remove_league_files,
)
from connect4_agents.sb3.report import banner, opponent_text, resume_line
from connect4_env.policy import policy_from_spec as policy_from_spec
from connect4_env.rules import Rules
from connect4_env.validation import check_bool, check_choice, check_int, check_number

if TYPE_CHECKING:
    from connect4_agents.sb3.callbacks import Run

__all__ = [
    "SB3TrainConfig",
    "TrainResult",
    "train_baseline",
    "MAX_THREADS",
    "MAX_TIMESTEPS",
    "DEFAULT_TIMESTEPS",
    "DEFAULT_LEAGUE_CPU_MINUTES",
]

MAX_THREADS = 1024
"""Most torch threads a run may ask for (as ``AlphaZeroAgent``'s ``threads``)."""
DEFAULT_TIMESTEPS = 300_000
"""A run's learner steps when ``timesteps`` is not given and there is no league."""
MAX_TIMESTEPS = 10**12
"""The most learner steps a run may ask for (a league's default: its CPU-minutes end it)."""
DEFAULT_LEAGUE_CPU_MINUTES = 60.0
"""A league run's CPU budget when ``cpu_minutes`` is not given."""
LEAGUE_BOOTSTRAP = 200
"""Resamples for the 95 % intervals of a league's final ratings."""


@dataclass
class SB3TrainConfig:
    """Settings of one SB3 training run (each field is also a ``connect4 train-sb3`` option).

    AlphaZero's settings are `connect4_agents.alphazero.config.AlphaZeroTrainConfig`.
    """

    algo: str = field(default="maskable_ppo", metadata=option(choices=ALGORITHMS))
    """The algorithm: ``ppo``, ``maskable_ppo`` (sb3-contrib, uses the action masks) or ``dqn``."""
    opponent: str = "random"
    """The opponent while training: an agent spec (``random``, ``mcts:<playouts>``, ``qlearning:<table>``,
    ``solver``, ``sb3:<model.zip>``) or ``self`` (a frozen snapshot of the learner, a new one every
    ``snapshot_freq`` steps, each game keeping the snapshot it started against). Ignored with ``league``."""
    rows: int = 6
    """Board rows."""
    columns: int = 7
    """Board columns."""
    win_length: int = 4
    """Stones in a line to win."""
    timesteps: int | None = field(default=None, metadata=option(type=positive_int))
    """Learner steps in total (over all envs). Default: 300,000; with ``league``, no limit but
    ``cpu_minutes``."""
    cpu_minutes: float | None = None
    """Stop training once the run has used this many CPU-minutes (its process's CPU time: training, opponents'
    moves, rating matches and evaluations; a resumed league's earlier parts count too; 0: no limit). The final
    evaluation and the saves come after. Default: no limit; with ``league``, 60."""
    n_envs: int = field(default=16, metadata=option(type=positive_int))
    """Games played in parallel in the batched env."""
    seed: int = 0
    """Seed of the learner, the envs and the opponents."""
    out: str = "runs/sb3"
    """Output folder."""
    eval_freq: int = field(default=50_000, metadata=option(type=positive_int))
    """Evaluate (and checkpoint) every this many learner steps."""
    eval_games: int = field(default=100, metadata=option(type=positive_int))
    """Games per evaluation opponent, alternating sides."""
    eval_opponents: tuple[str, ...] = ("random", "mcts:100")
    """Agent specs the learner is evaluated against."""
    snapshot_freq: int = field(default=25_000, metadata=option(type=positive_int))
    """Self-play and league: learner steps between snapshots of the learner (a league takes one sooner once
    the learner beats the latest, see ``league_win_rate``)."""
    league: bool = False
    """Train against a league (`connect4_agents.sb3.league.League`): the ``league_members`` and the learner's
    frozen snapshots in one opponent pool, drawn per game; ``league.json``, ``league.png`` and ``snapshots/``
    go to ``out``, and a run started again on the same ``out`` resumes from its last checkpoint (``timesteps``
    and ``cpu_minutes`` then count the whole run, all its parts), unless ``fresh``."""
    fresh: bool = False
    """League: start afresh even if ``out`` holds a league run to resume (its league files, checkpoints,
    snapshots and ``eval.csv`` are removed first)."""
    league_members: tuple[str, ...] = ("random", "mcts:10", "mcts:30", "mcts:100")
    """League: agent specs that stay in the pool for the whole run (a curriculum)."""
    league_sampling: str = field(default="pfsp", metadata=option(choices=("uniform", "weights", "pfsp")))
    """League: how each game's opponent is drawn; ``pfsp`` favours the members the learner loses to."""
    league_win_rate: float = 0.7
    """League: the learner's recent score against the latest snapshot that brings the next one sooner."""
    league_max_snapshots: int = field(default=8, metadata=option(type=positive_int))
    """League: snapshots in the pool at once (the oldest leaves; its file and results stay)."""
    league_rating_games: int = 20
    """League: games each new snapshot plays against every other member, and each pair of fixed members the
    reference ladder does not both rate plays once, for the ratings (0: none). A snapshot is rated from its games
    against the fixed members only (see `connect4_agents.evaluation.league_ratings`)."""
    threads: int = field(default=1, metadata=option(type=positive_int))
    """torch threads of the learner."""
    progress: bool = field(default=True, metadata=option(flags=("--quiet",), negated=True))
    """A progress bar while training; ``--quiet`` turns it off."""
    features: str = field(default="mlp", metadata=option(choices=("mlp", "cnn")))
    """``mlp`` (SB3's MlpPolicy on the flattened planes) or ``cnn`` (two 3x3 convolutions over the board, see
    `cnn_policy_kwargs`)."""
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    """Extra keyword arguments for the algorithm (e.g. ``{"learning_rate": 1e-4}``), plain JSON values: the
    names in `HYPERPARAMETERS` for the algorithm, each checked for its type and range."""

    def __post_init__(self) -> None:
        """Check every setting, without building anything or importing SB3.

        Raises:
            TypeError: a setting of the wrong type (``threads=1.5``, ``hyperparameters={"n_steps": "8"}``).
            ValueError: an unknown ``algo``, ``features`` or hyperparameter name, a value out of range
                (``threads`` outside 1..`MAX_THREADS`, ``learning_rate`` <= 0), a bad board, or
                hyperparameters whose buffers or network would be too large (over `MAX_BUFFER_BYTES`,
                or more parameters than a model file may hold).
        """
        if self.timesteps is None:  # the defaults a league changes (see the fields)
            self.timesteps = MAX_TIMESTEPS if self.league else DEFAULT_TIMESTEPS
        if self.cpu_minutes is None:
            self.cpu_minutes = DEFAULT_LEAGUE_CPU_MINUTES if self.league else 0.0
        check_choice("algo", self.algo, ALGORITHMS), check_choice("features", self.features, ("mlp", "cnn"))
        # upper bounds keep a typed number from running for ever (SB3 plays n_envs x n_steps steps a rollout)
        for name, high in (
            ("timesteps", MAX_TIMESTEPS),
            ("n_envs", 4096),
            ("eval_freq", 10**12),
            ("eval_games", 10**7),
            ("snapshot_freq", 10**12),
        ):
            check_int(name, getattr(self, name), 1, high)
        check_int("seed", self.seed, 0, 2**32 - 1)  # SB3's (and numpy's legacy) seed range
        check_int("threads", self.threads, 1, MAX_THREADS)
        check_number("cpu_minutes", self.cpu_minutes, 0.0, 10.0**7)
        check_bool("league", self.league), check_bool("fresh", self.fresh)
        Rules(self.rows, self.columns, self.win_length)
        if not isinstance(self.hyperparameters, dict):
            raise TypeError(f"hyperparameters must be a dict, got {self.hyperparameters!r}")
        check_hyperparameters(self)
        if self.league:
            self.league_settings()

    def league_settings(self) -> LeagueSettings:
        """The ``league_*`` fields (and ``snapshot_freq``) as the league takes them.

        Raises:
            TypeError: a league setting of the wrong type.
            ValueError: a league setting out of range.
        """
        return LeagueSettings(
            fixed=self.league_members if isinstance(self.league_members, str) else tuple(self.league_members),
            snapshot_freq=self.snapshot_freq,
            win_rate=self.league_win_rate,
            max_snapshots=self.league_max_snapshots,
            sampling=self.league_sampling,
            rating_games=self.league_rating_games,
        )


@dataclass
class TrainResult:
    """What a training run left: where the model is, whether Ctrl-C stopped it, its steps, this part's wall-clock
    seconds and the evaluation rows (as ``eval.csv``); a resumed league run counts this part apart from the whole.
    """

    model_path: Path
    interrupted: bool
    timesteps: int
    """The learner's steps in all (a resumed run's earlier parts included)."""
    seconds: float
    """Wall-clock seconds of this part, its final evaluation and saves included."""
    evaluations: list[dict[str, Any]]
    start_timesteps: int = 0
    """The steps the run had when this part began (0 unless it resumed)."""
    cpu_seconds: float = 0.0
    """CPU-seconds of this part (the process's: training, opponents, rating matches, evaluations)."""
    total_cpu_seconds: float = 0.0
    """CPU-seconds of the whole run, all its parts (what ``cpu_minutes`` counts)."""
    files: list[Path] = field(default_factory=list)
    """The files and folders the run wrote in ``out``."""
    league: League | None = None
    """The league, for a league run (its snapshots and last ratings)."""


def step_limit(config: SB3TrainConfig) -> int | None:
    """The run's learner steps in all, or None when only ``cpu_minutes`` ends it (a league's default)."""
    steps = config.timesteps or DEFAULT_TIMESTEPS
    return None if steps >= MAX_TIMESTEPS else steps


def run_settings(config: SB3TrainConfig) -> dict[str, Any]:
    """The settings of the run that happens, as ``config.json`` holds them: a league run's ``opponent`` is
    ``"league"`` (its members are ``league_members``), and ``timesteps`` is None when no step count ends the run.
    """
    settings = asdict(config)
    settings["timesteps"] = step_limit(config)
    if config.league:
        settings["opponent"] = "league"
    return settings


def save_model(model: Any, path: Path, config: SB3TrainConfig, timesteps: int) -> Path:
    """``model.save`` through a temporary file, plus a ``.json`` sidecar naming the algorithm and board."""
    atomic_write(path, model.save)
    meta = {
        "algo": config.algo,
        **sidecar_architecture(model, config.features),
        "rows": config.rows,
        "columns": config.columns,
        "win_length": config.win_length,
        "timesteps": timesteps,
        "opponent": "league" if config.league else config.opponent,
        **({"league_members": list(config.league_members)} if config.league else {}),
        "seed": config.seed,
    }
    atomic_write_json(path.with_suffix(".json"), meta)
    return path


def plot_evaluations(rows: list[dict[str, Any]], path: Path, title: str) -> Path:
    """Win rate against each evaluation opponent over training, as a PNG."""
    figure, axis = pyplot().subplots(figsize=(7, 4))
    for opponent in dict.fromkeys(row["opponent"] for row in rows):
        mine = [row for row in rows if row["opponent"] == opponent]
        axis.plot(
            [r["timesteps"] for r in mine], [r["win_rate"] for r in mine], marker="o", label=f"vs {opponent}"
        )
    axis.set_xlabel("learner steps")
    axis.set_ylabel("win rate")
    axis.set_ylim(0, 1)
    axis.set_title(title)
    axis.legend()
    figure.tight_layout()
    return save_figure(figure, path, dpi=100, format="png")


def train_baseline(
    config: SB3TrainConfig,
    *,
    on_evaluation: Callable[[Any, list[dict[str, Any]]], None] | None = None,
    say: Callable[[str], None] | None = None,
) -> TrainResult:
    """Train ``config.algo`` against ``config.opponent`` on the batched env; Ctrl-C still saves the model.

    Every setting is checked again, the opponents and the model are built, and only then is anything written
    to ``config.out`` (or torch's thread count set). ``on_evaluation(model, rows)``, when given, is called
    after each evaluation with the SB3 model and that evaluation's rows (one per evaluation opponent, as in
    ``eval.csv``, already written), for a caller that keeps its own best model. ``say``, when given, is told
    the start banner (what runs, for how long, where the files go) and, for a league that resumes, what it
    resumes from; ``connect4 train-sb3`` prints them.

    A league run on an ``out`` that holds a league with a checkpoint resumes from it (unless ``config.fresh``):
    ``timesteps`` and ``cpu_minutes`` count the whole run, and ``eval.csv`` goes on with its steps, seconds and
    CPU-seconds; a run whose budget is spent trains no further.

    Raises:
        TypeError: a setting or opponent spec of the wrong type; nothing is written then.
        ValueError: a bad setting or opponent spec, hyperparameters that SB3 refuses (its AssertionError,
            RuntimeError, ValueError or TypeError while building the model, turned into a ValueError naming
            the hyperparameters), or a league in ``out`` that cannot be resumed (named); nothing is written
            then.
    """
    import torch

    from connect4_agents.sb3.callbacks import Clock, Run, budget_left, callbacks

    config.__post_init__()  # the fields may have changed since the config was made
    rules = Rules(config.rows, config.columns, config.win_length)
    out = Path(config.out)
    run = Run(
        config,
        rules,
        out,
        lambda model, path, steps: save_model(model, path, config, steps),
        {spec: policy_from_spec(spec, seed=config.seed + 100, rules=rules) for spec in config.eval_opponents},
        Clock(),
        step_limit(config),
        on_evaluation=on_evaluation,
    )
    checkpoint = _league(run)
    model, venv = _model(run)
    torch.set_num_threads(config.threads)
    if checkpoint is not None:  # the checkpoint's weights (read without unpickling) and its curve
        _resume(run, model, checkpoint)
    elif run.league is not None:  # a league run starting afresh leaves nothing of an earlier one in out
        remove_league_files(out)
    if run.self_play is not None:
        run.self_play.refresh(model.policy, 0)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out / "config.json", run_settings(config))
    start_timesteps = int(model.num_timesteps)
    left = budget_left(config, run.clock.cpu_before) and (run.limit is None or start_timesteps < run.limit)
    if say is not None:
        say(banner(config, run.limit, out))
        if checkpoint is not None and run.league is not None:
            say(resume_line(config, run.league, run.clock.cpu_before, run.limit, left))
    run.clock.start, run.clock.cpu_start = time.perf_counter(), time.process_time()
    interrupted = False
    steps_callbacks = callbacks(run)
    try:
        model.learn(
            total_timesteps=max((run.limit or MAX_TIMESTEPS) - start_timesteps, 0) if left else 0,
            callback=steps_callbacks,
            reset_num_timesteps=checkpoint is None,
        )
    except KeyboardInterrupt:
        interrupted = True
    evaluations = run.evaluations
    if not interrupted and (not evaluations or evaluations[-1]["timesteps"] != model.num_timesteps):
        steps_callbacks[0].evaluate()  # type: ignore[attr-defined]  # the first is the evaluation callback
    model_path = save_model(model, out / "model.zip", config, model.num_timesteps)
    if run.league is not None:  # the ratings with their intervals, and the picture, once at the end
        if not interrupted:  # in step with the final evaluation's checkpoint: the time since counts too
            run.league.seconds, run.league.cpu_seconds = (round(value, 1) for value in run.clock.total())
        # interrupted, league.json keeps the last checkpoint's steps and times: a resumed run starts from both
        run.league.save(rate=True, bootstrap=LEAGUE_BOOTSTRAP, picture=True)
    if evaluations and importlib.util.find_spec("matplotlib") is not None:
        plot_evaluations(evaluations, out / "curve.png", f"{config.algo} against {opponent_text(config)}")
    venv.close()
    seconds, cpu_seconds = run.clock.part()
    return TrainResult(
        model_path,
        interrupted,
        int(model.num_timesteps),
        seconds,
        evaluations,
        start_timesteps=start_timesteps,
        cpu_seconds=cpu_seconds,
        total_cpu_seconds=run.clock.cpu_before + cpu_seconds,
        files=_written(out, run.league is not None),
        league=run.league,
    )


def _league(run: Run) -> Path | None:
    """Set the run's league (loaded when it resumes) or self-play; the checkpoint to resume from, if any."""
    from connect4_agents.sb3.callbacks import SelfPlay

    config, out = run.config, run.out
    if not config.league:
        run.self_play = SelfPlay(config.seed + 1) if config.opponent == "self" else None
        return None
    settings = config.league_settings()
    resumes = (
        not config.fresh
        and (out / LEAGUE_FILE).is_file()
        and any((out / name).is_file() for name in (CHECKPOINT_FILE, PREVIOUS_CHECKPOINT_FILE))
    )
    if not resumes:
        run.league = League(out, run.rules, settings, seed=config.seed)
        return None
    run.league = League.load(out, run.rules, settings, seed=config.seed)
    return run.league.checkpoint_path()  # the one in step with league.json, checked before any work


def _model(run: Run) -> tuple[Any, Any]:
    """The SB3 model and its batched env, playing the league, self-play or the configured opponent."""
    from connect4_env.integrations.sb3 import make_sb3_vec_env

    config, rules = run.config, run.rules
    if run.league is not None:
        opponent: Any = run.league.pool
    elif run.self_play is not None:
        opponent = run.self_play.pool
    else:
        opponent = policy_from_spec(config.opponent, seed=config.seed + 1, rules=rules)
    size: dict[str, Any] = {"rows": rules.rows, "columns": rules.columns, "win_length": rules.win_length}
    venv = make_sb3_vec_env(config.n_envs, opponent=opponent, agent_first=None, illegal_action="lose", **size)
    venv.seed(config.seed)
    try:
        model = algorithm_class(config.algo)(
            "MlpPolicy",
            venv,
            seed=config.seed,
            device="cpu",
            verbose=0,
            **algorithm_arguments(config, run.out),
        )
    except (AssertionError, RuntimeError, ValueError, TypeError) as error:
        venv.close()
        raise ValueError(
            f"hyperparameters {config.hyperparameters!r} do not make a {config.algo} model: {error}"
        ) from None
    return model, venv


def _resume(run: Run, model: Any, checkpoint: Path) -> None:
    """Load the checkpoint's weights and steps, and the run's rows and times up to it."""
    from connect4_agents.sb3.callbacks import read_evaluations

    league = run.league
    assert league is not None  # a checkpoint is a league's
    model.policy.load_state_dict(load_policy(checkpoint, run.config.algo).state_dict())
    model.num_timesteps = league.timesteps
    # rows past the checkpoint (a run killed between a checkpoint and the league.json naming it) are gone
    steps = league.timesteps
    run.evaluations[:] = [r for r in read_evaluations(run.out / "eval.csv") if r["timesteps"] <= steps]
    earlier = [r for r in run.evaluations if r["timesteps"] == steps][-1:]
    clock = run.clock
    clock.seconds_before = league.seconds if league.seconds is not None else _column(earlier, "seconds")
    clock.cpu_before = (
        league.cpu_seconds if league.cpu_seconds is not None else _column(earlier, "cpu_seconds")
    )


def _column(rows: list[dict[str, Any]], key: str) -> float:
    """``key`` of the first row as a float, 0.0 when there is none (an ``eval.csv`` from before it was kept)."""
    value = rows[0].get(key) if rows else None
    return float(value) if isinstance(value, (int, float)) else 0.0


def _written(out: Path, league: bool) -> list[Path]:
    """The files and folders a run writes in ``out``, those that are there."""
    names = ["model.zip", "model.json", CHECKPOINT_FILE, PREVIOUS_CHECKPOINT_FILE, "eval.csv", "curve.png"]
    names += ["config.json", *([LEAGUE_FILE, "league.png", "snapshots"] if league else []), "tensorboard"]
    return [out / name for name in names if (out / name).exists()]
