"""Training Stable-Baselines3 baselines on the batched env (one job: a training run, from its settings to its files).

Evaluation, checkpoints, self-play, leagues and curves.

``train_baseline(SB3TrainConfig(...))`` is what ``connect4 train-sb3`` runs. Outputs in ``config.out``:
``model.zip`` (+ ``model.json``: algorithm, board and what it trained against), ``checkpoint.zip`` (the latest
periodic save), ``eval.csv`` (W/D/L against each fixed opponent at every evaluation, with the run's steps,
seconds and CPU-seconds so far), ``curve.png``, ``config.json`` (the settings of the run that happened) and,
when tensorboard is installed, ``tensorboard/``; a league's files besides (`connect4_agents.sb3.league`).
"""

from __future__ import annotations

import csv
import importlib.util
import io
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from connect4_agents._support.cli import positive_int
from connect4_agents._support.config_cli import option
from connect4_agents._support.figures import pyplot, save_figure
from connect4_agents._support.files import atomic_write, atomic_write_json
from connect4_agents._support.progress import progress_bar
from connect4_agents.evaluation.arena import play_match
from connect4_agents.sb3.agent import SB3Agent, algorithm_class
from connect4_agents.sb3.files import ALGORITHMS, load_policy, sidecar_architecture
from connect4_agents.sb3.hyperparameters import (
    DEFAULT_HYPERPARAMETERS,
    check_hyperparameters,
    plain_cnn_policy_kwargs,
    policy_kwargs_of,
)
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
from connect4_env.pool import OpponentPool
from connect4_env.rules import Rules
from connect4_env.validation import check_int, check_number

__all__ = [
    "SB3TrainConfig",
    "TrainResult",
    "train_baseline",
    "evaluate_policy_wdl",
    "MAX_THREADS",
    "MAX_TIMESTEPS",
    "DEFAULT_TIMESTEPS",
    "DEFAULT_LEAGUE_CPU_MINUTES",
    "cnn_policy_kwargs",
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
        if self.algo not in ALGORITHMS:
            raise ValueError(f"algo={self.algo!r} is not supported; allowed: {', '.join(ALGORITHMS)}")
        if self.features not in ("mlp", "cnn"):
            raise ValueError(f"features={self.features!r} is not supported; allowed: mlp, cnn")
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
        for name in ("league", "fresh"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be True or False, got {getattr(self, name)!r:.40}")
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


def cnn_policy_kwargs(channels: int = 64, features: int = 256) -> dict[str, Any]:
    """``policy_kwargs`` for `connect4_agents.sb3.features.BoardCNN` over the ``(rows, columns, 2)``
    planes.
    """
    from connect4_agents.sb3.features import BoardCNN

    return {"features_extractor_class": BoardCNN, **plain_cnn_policy_kwargs(channels, features)}


def _algorithm_arguments(config: SB3TrainConfig, out: Path) -> dict[str, Any]:
    """The keyword arguments for the algorithm: our defaults, the checked hyperparameters over them."""
    arguments = {**DEFAULT_HYPERPARAMETERS[config.algo], **config.hyperparameters}
    policy_kwargs = policy_kwargs_of(config)
    if config.features == "cnn":
        policy_kwargs = {**cnn_policy_kwargs(), **policy_kwargs}
    if policy_kwargs or "policy_kwargs" in arguments:
        arguments["policy_kwargs"] = policy_kwargs
    if isinstance(arguments.get("train_freq"), list):  # JSON has no tuples; SB3 takes (count, unit)
        arguments["train_freq"] = tuple(arguments["train_freq"])
    if importlib.util.find_spec("tensorboard") is not None:
        arguments.setdefault("tensorboard_log", str(out / "tensorboard"))
    return arguments


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


def evaluate_policy_wdl(
    policy: Any, opponents: dict[str, Any], games: int, rules: Rules
) -> list[dict[str, Any]]:
    """W/D/L of ``policy`` (an SB3 policy) against each opponent, alternating sides."""
    agent = SB3Agent(policy)
    rows = []
    for name, opponent in opponents.items():
        result = play_match(agent, opponent, games, rules)
        rows.append(
            {
                "opponent": name,
                "games": games,
                "wins": result.wins,
                "draws": result.draws,
                "losses": result.losses,
                "win_rate": result.wins / games,
                "score": result.score,
            }
        )
    return rows


class _SelfPlay:
    """The opponents of ``self``: a pool holding one frozen snapshot of the learner, replaced by a new one every
    ``snapshot_freq`` steps; each game keeps the snapshot it started against.
    """

    def __init__(self, seed: int) -> None:
        self.pool = OpponentPool(seed=seed)
        self.name: str | None = None

    def refresh(self, policy: Any, step: int) -> None:
        """A frozen copy of ``policy`` becomes the only snapshot new games draw."""
        name = f"self@{step}"
        if name == self.name:
            return
        self.pool.add(name, policy)  # the pool copies and freezes it
        if self.name is not None:
            self.pool.remove(self.name)
        self.name = name


@dataclass
class _Clock:
    """This part's start, and the whole run's wall and CPU seconds before it (a resumed run's earlier parts)."""

    seconds_before: float = 0.0
    cpu_before: float = 0.0
    start: float = field(default_factory=time.perf_counter)
    cpu_start: float = field(default_factory=time.process_time)

    def part(self) -> tuple[float, float]:
        """Wall and CPU seconds of this part."""
        return time.perf_counter() - self.start, time.process_time() - self.cpu_start

    def total(self) -> tuple[float, float]:
        """Wall and CPU seconds of the whole run."""
        seconds, cpu_seconds = self.part()
        return self.seconds_before + seconds, self.cpu_before + cpu_seconds


def _budget_left(config: SB3TrainConfig, cpu_seconds: float) -> bool:
    """Whether the whole run's CPU budget (``cpu_minutes``, 0: none) has time left after ``cpu_seconds``."""
    return not config.cpu_minutes or cpu_seconds < 60.0 * config.cpu_minutes


def _callbacks(
    config: SB3TrainConfig,
    rules: Rules,
    out: Path,
    evaluations: list[dict[str, Any]],
    opponents: dict[str, Any],
    self_play: _SelfPlay | None,
    league: League | None,
    clock: _Clock,
    on_evaluation: Callable[[Any, list[dict[str, Any]]], None] | None = None,
) -> list[Any]:
    from stable_baselines3.common.callbacks import BaseCallback

    limit = step_limit(config)

    class Evaluate(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.next_eval = config.eval_freq

        def _on_training_start(self) -> None:  # a resumed run goes on from its steps
            self.next_eval = (self.num_timesteps // config.eval_freq + 1) * config.eval_freq

        def _on_step(self) -> bool:
            if self.num_timesteps >= self.next_eval:
                self.next_eval += config.eval_freq
                self.evaluate()
            return True

        def evaluate(self) -> None:
            seconds, cpu_seconds = clock.total()  # the whole run so far: training and earlier evaluations
            steps = self.model.num_timesteps
            rows = []
            for row in evaluate_policy_wdl(self.model.policy, opponents, config.eval_games, rules):
                row = {
                    "timesteps": steps,
                    "seconds": round(seconds, 1),
                    "cpu_seconds": round(cpu_seconds, 1),
                    **row,
                }
                evaluations.append(row)
                rows.append(row)
                self.logger.record(f"eval/{row['opponent']}_win_rate", row["win_rate"])
            _write_csv(out / "eval.csv", evaluations)
            if on_evaluation is not None:
                on_evaluation(self.model, rows)
            if league is None:
                save_model(self.model, out / CHECKPOINT_FILE, config, steps)
            else:  # the league as of this checkpoint, in step with it: a resumed run starts from both
                seconds, cpu_seconds = clock.total()
                league.save_checkpoint(
                    lambda path: save_model(self.model, path, config, steps),
                    steps,
                    seconds=round(seconds, 1),
                    cpu_seconds=round(cpu_seconds, 1),
                )

    class Snapshot(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.next_snapshot = config.snapshot_freq

        def _on_training_start(self) -> None:
            self.next_snapshot = (self.num_timesteps // config.snapshot_freq + 1) * config.snapshot_freq

        def _on_step(self) -> bool:
            if league is not None and league.due(self.num_timesteps):
                league.add_snapshot(self.model.policy, self.num_timesteps)
            if self_play is not None and self.num_timesteps >= self.next_snapshot:
                self.next_snapshot += config.snapshot_freq
                self_play.refresh(self.model.policy, self.num_timesteps)
            return True

    class Progress(BaseCallback):
        """Steps against the step limit, or the share of the run done (per mille of its steps or of its CPU
        budget, whichever is further) when CPU-minutes may end it: a total, so tqdm shows an ETA.
        """

        def _on_training_start(self) -> None:
            self.per_mille = bool(config.cpu_minutes)
            if self.per_mille:
                self.bar = progress_bar(1000, "training", unit="‰", initial=self.done())
            else:
                self.bar = progress_bar(limit, "steps", unit="step", initial=self.num_timesteps)

        def done(self) -> int:
            share = clock.total()[1] / (60.0 * config.cpu_minutes) if config.cpu_minutes else 0.0
            if limit is not None:
                share = max(share, self.num_timesteps / limit)
            return min(1000, int(1000 * share))

        def _on_step(self) -> bool:
            self.bar.n = self.done() if self.per_mille else self.num_timesteps
            postfix = {"steps": f"{self.num_timesteps:,}"} if self.per_mille else {}
            if evaluations:
                postfix |= {
                    row["opponent"]: f"{row['win_rate']:.2f}" for row in evaluations[-len(opponents) :]
                }
            self.bar.set_postfix(postfix, refresh=False)
            self.bar.update(0)
            return True

        def _on_training_end(self) -> None:
            self.bar.close()

    class CPUBudget(BaseCallback):
        def _on_step(self) -> bool:  # False stops SB3's learn
            return _budget_left(config, clock.total()[1])

    callbacks: list[Any] = [Evaluate(), Snapshot(), CPUBudget()]
    if config.progress and importlib.util.find_spec("tqdm") is not None:  # progress_bar gives None without it
        callbacks.append(Progress())
    return callbacks


def _read_evaluations(path: Path) -> list[dict[str, Any]]:
    """The rows of an ``eval.csv`` written by an earlier part of a resumed run (numbers as numbers)."""
    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8") as stream:
        rows: list[dict[str, Any]] = list(csv.DictReader(stream))
    for row in rows:
        for key, value in row.items():
            for kind in (int, float):
                try:
                    row[key] = kind(value)
                    break
                except (TypeError, ValueError):
                    continue
    return rows


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    def write(stream: Any) -> None:
        text = io.TextIOWrapper(stream, newline="", encoding="utf-8")
        writer = csv.DictWriter(text, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
        text.flush()
        text.detach()

    atomic_write(path, write)


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
        TypeError: a bad setting or opponent spec, or hyperparameters that SB3 refuses (its
            AssertionError, RuntimeError, ValueError or TypeError while building the model, turned into a
            ValueError naming the hyperparameters); nothing is written then.
        ValueError: a bad setting or opponent spec, or hyperparameters that SB3 refuses (its
            AssertionError, RuntimeError, ValueError or TypeError while building the model, turned into a
            ValueError naming the hyperparameters), or a league in ``out`` that cannot be resumed (named);
            nothing is written then.
    """
    import torch

    from connect4_env.integrations.sb3 import make_sb3_vec_env

    config.__post_init__()  # the fields may have changed since the config was made
    rules = Rules(config.rows, config.columns, config.win_length)
    out = Path(config.out)
    limit = step_limit(config)
    league = None
    resumed = False
    if config.league:
        settings = config.league_settings()
        resumed = (
            not config.fresh
            and (out / LEAGUE_FILE).is_file()
            and any((out / name).is_file() for name in (CHECKPOINT_FILE, PREVIOUS_CHECKPOINT_FILE))
        )
        if resumed:
            league = League.load(out, rules, settings, seed=config.seed)
            checkpoint = league.checkpoint_path()  # the one in step with league.json, checked before any work
        else:
            league = League(out, rules, settings, seed=config.seed)
    self_play = _SelfPlay(config.seed + 1) if config.opponent == "self" and league is None else None
    if league is not None:
        opponent: Any = league.pool
    elif self_play is not None:
        opponent = self_play.pool
    else:
        opponent = policy_from_spec(config.opponent, seed=config.seed + 1, rules=rules)
    eval_opponents = {
        spec: policy_from_spec(spec, seed=config.seed + 100, rules=rules) for spec in config.eval_opponents
    }
    venv = make_sb3_vec_env(
        config.n_envs,
        rows=rules.rows,
        columns=rules.columns,
        win_length=rules.win_length,
        opponent=opponent,
        agent_first=None,
        illegal_action="lose",
    )
    venv.seed(config.seed)
    try:
        model = algorithm_class(config.algo)(
            "MlpPolicy", venv, seed=config.seed, device="cpu", verbose=0, **_algorithm_arguments(config, out)
        )
    except (AssertionError, RuntimeError, ValueError, TypeError) as error:
        venv.close()
        raise ValueError(
            f"hyperparameters {config.hyperparameters!r} do not make a {config.algo} model: {error}"
        ) from None
    torch.set_num_threads(config.threads)
    evaluations: list[dict[str, Any]] = []
    clock = _Clock()
    if league is not None and resumed:  # the checkpoint's weights (read without unpickling) and its curve
        model.policy.load_state_dict(load_policy(checkpoint, config.algo).state_dict())
        model.num_timesteps = league.timesteps
        # rows past the checkpoint (a run killed between a checkpoint and the league.json naming it) are gone
        evaluations = [r for r in _read_evaluations(out / "eval.csv") if r["timesteps"] <= league.timesteps]
        earlier = [r for r in evaluations if r["timesteps"] == league.timesteps][-1:]
        clock.seconds_before = league.seconds if league.seconds is not None else _column(earlier, "seconds")
        clock.cpu_before = (
            league.cpu_seconds if league.cpu_seconds is not None else _column(earlier, "cpu_seconds")
        )
    elif league is not None:  # a league run starting afresh leaves nothing of an earlier one in out
        remove_league_files(out)
    if self_play is not None:
        self_play.refresh(model.policy, 0)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out / "config.json", run_settings(config))
    start_timesteps = int(model.num_timesteps)
    left = _budget_left(config, clock.cpu_before) and (limit is None or start_timesteps < limit)
    if say is not None:
        say(banner(config, limit, out))
        if league is not None and resumed:
            say(resume_line(config, league, clock.cpu_before, limit, left))
    clock.start, clock.cpu_start = time.perf_counter(), time.process_time()
    interrupted = False
    callbacks = _callbacks(
        config, rules, out, evaluations, eval_opponents, self_play, league, clock, on_evaluation
    )
    try:
        model.learn(
            total_timesteps=max((limit or MAX_TIMESTEPS) - start_timesteps, 0) if left else 0,
            callback=callbacks,
            reset_num_timesteps=not resumed,
        )
    except KeyboardInterrupt:
        interrupted = True
    if not interrupted and (not evaluations or evaluations[-1]["timesteps"] != model.num_timesteps):
        callbacks[0].evaluate()
    model_path = save_model(model, out / "model.zip", config, model.num_timesteps)
    if league is not None:  # the ratings with their intervals, and the picture, once at the end
        if not interrupted:  # in step with the final evaluation's checkpoint: the time since counts too
            league.seconds, league.cpu_seconds = (round(value, 1) for value in clock.total())
        # interrupted, league.json keeps the last checkpoint's steps and times: a resumed run starts from both
        league.save(rate=True, bootstrap=LEAGUE_BOOTSTRAP, picture=True)
    if evaluations and importlib.util.find_spec("matplotlib") is not None:
        plot_evaluations(evaluations, out / "curve.png", f"{config.algo} against {opponent_text(config)}")
    venv.close()
    seconds, cpu_seconds = clock.part()
    return TrainResult(
        model_path,
        interrupted,
        int(model.num_timesteps),
        seconds,
        evaluations,
        start_timesteps=start_timesteps,
        cpu_seconds=cpu_seconds,
        total_cpu_seconds=clock.cpu_before + cpu_seconds,
        files=_written(out, league is not None),
        league=league,
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
