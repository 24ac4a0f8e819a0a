"""A league for SB3 self-play (one job: the league's state, kept in step with the learner's checkpoint).

An opponent pool of fixed members and the learner's frozen snapshots, kept in a run folder with its results,
ratings and payoff picture.

[`League`][connect4_agents.sb3.league.League] is what ``connect4 train-sb3 --league`` trains against. Its pool
([`OpponentPool`][connect4_env.pool.OpponentPool]) is the env's ``opponent``: each game draws a member when it
starts (prioritised fictitious self-play by default) and keeps it to the end. Snapshots of the learner join on a
schedule, or sooner once the learner beats the latest one; each new snapshot plays a short match against every
other member. Ratings are anchored on the fixed members (`connect4_agents.evaluation.league_ratings`): those
the reference ladder rates (6x7) keep their ladder Elo, the others are fitted from the fixed members' own round
robin (played once, before the first snapshot's matches), and each snapshot is rated from its games against the
fixed members alone, so that the chain of snapshots beating their predecessors cannot lift them above the fixed
members they lose to.

Files in the run folder: ``league.json`` (members, their records against the learner, W/D/L between members,
ratings with how each was measured and its interval, the run's steps, seconds and CPU-seconds, and the step and
SHA-256 of the checkpoint it goes with), ``snapshots/<name>.zip`` (each snapshot,
loadable with ``SB3Agent.load`` and as ``sb3:<path>``), ``league.png`` (ratings and the payoff matrix), and the
learner's ``checkpoint.zip`` with ``checkpoint.previous.zip``, the one before it, kept until ``league.json`` names
the new one: a run killed between the two files resumes from the pair that is in step.

Resuming reads only the snapshots the pool holds (the latest ``max_snapshots``): a retired snapshot's file may be
deleted.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from connect4_agents._support.files import atomic_write, atomic_write_json
from connect4_agents.evaluation.arena import play_match
from connect4_agents.evaluation.league_ratings import LeagueRatings, fixed_pairings_to_play, rate_league
from connect4_agents.evaluation.ratings import PairingCounts, reference_ladder
from connect4_agents.sb3.agent import SB3Agent
from connect4_agents.sb3.league_file import league_dict, restore_league
from connect4_env.policy import policy_from_spec
from connect4_env.pool import OpponentPool
from connect4_env.rules import Rules
from connect4_env.validation import check_int, check_number

__all__ = [
    "League",
    "remove_league_files",
    "LeagueSettings",
    "LEAGUE_FILE",
    "CHECKPOINT_FILE",
    "PREVIOUS_CHECKPOINT_FILE",
    "PICTURE_MEMBERS",
]

LEAGUE_FILE = "league.json"
"""The league's file in the run folder."""
CHECKPOINT_FILE = "checkpoint.zip"
"""The learner's latest checkpoint in the run folder."""
PREVIOUS_CHECKPOINT_FILE = "checkpoint.previous.zip"
"""The checkpoint before it, kept until ``league.json`` names the latest."""
PICTURE_MEMBERS = 16
"""How many members ``league.png`` shows: the fixed ones, then the latest snapshots."""


@dataclass(frozen=True)
class LeagueSettings:
    """How a league grows and samples (the ``league_*`` fields of ``SB3TrainConfig``)."""

    fixed: tuple[str, ...] = ("random", "mcts:10", "mcts:30", "mcts:100")
    """Agent specs that stay in the pool for the whole run (a curriculum)."""
    snapshot_freq: int = 50_000
    """Learner steps between snapshots at the latest."""
    win_rate: float = 0.7
    """A snapshot is taken sooner (but not before a quarter of ``snapshot_freq``) once the learner's recent
    score against the latest snapshot reaches this."""
    max_snapshots: int = 8
    """Snapshots in the pool at once; the oldest leaves (its file and results stay)."""
    sampling: str = "pfsp"
    """The pool's sampling rule (``uniform``, ``weights``, ``pfsp``)."""
    rating_games: int = 20
    """Games a new snapshot plays against each other member, alternating sides, for the ratings; as many
    between two fixed members the ladder does not both rate, once."""

    def __post_init__(self) -> None:
        """Check every setting.

        Raises:
            TypeError: a setting of the wrong type.
            ValueError: a setting out of range, or no fixed member while the pool would start empty.
        """
        if isinstance(self.fixed, str) or not all(isinstance(spec, str) for spec in self.fixed):
            raise TypeError(f"league fixed members must be a list of agent specs, got {self.fixed!r:.80}")
        if not self.fixed:
            raise ValueError("a league needs at least one fixed member (the pool's first opponent)")
        check_int("league snapshot_freq", self.snapshot_freq, 1, 10**12)
        check_number("league win_rate", self.win_rate, 0.0, 1.0)
        check_int("league max_snapshots", self.max_snapshots, 1, 1000)
        check_int("league rating_games", self.rating_games, 0, 10_000)
        OpponentPool(sampling=self.sampling)  # checks the rule's name


class League:
    """Fixed members and snapshots of the learner in one [`OpponentPool`][connect4_env.pool.OpponentPool],
    saved in ``folder``.

    Args:
        folder: the run folder (``league.json`` and ``snapshots/`` go there).
        rules: the board.
        settings: how the league grows and samples.
        seed: seeds the pool's members and the snapshots' sampling.

    Raises:
        TypeError: a setting of the wrong type.
        ValueError: a fixed member's spec is unknown or cannot play ``rules``.
    """

    def __init__(
        self, folder: str | os.PathLike[str], rules: Rules, settings: LeagueSettings, seed: int = 0
    ) -> None:
        self.folder = Path(folder)
        self.rules = rules
        self.settings = settings
        self.seed = seed
        self.pool = OpponentPool(sampling=settings.sampling, seed=seed)
        self.pool.bind(rules)
        for k, spec in enumerate(settings.fixed):
            self.pool.add(spec, policy_from_spec(spec, seed=seed + 1 + k, rules=rules))
        self.snapshots: list[tuple[str, int]] = []  # (name, learner step), oldest first
        self.results: dict[tuple[str, str], list[int]] = {}  # (a, b) -> [wins, draws, losses] of a
        self.last_snapshot_step = 0
        self.timesteps = 0  # the learner's steps at the last save (a resumed run goes on from there)
        # the run's wall and CPU seconds at the last checkpoint (None: a league file from before they were kept)
        self.seconds: float | None = None
        self.cpu_seconds: float | None = None
        self.last_ratings: LeagueRatings | None = None  # the last fit (see save)
        # {"step", "sha256"} of the checkpoint league.json goes with (see save_checkpoint); None before one
        self.checkpoint: dict[str, Any] | None = None

    # -- growth ------------------------------------------------------------------------------------------------
    def due(self, step: int) -> bool:
        """True when a snapshot should join now: ``snapshot_freq`` steps since the last one, or a quarter of that
        and a recent score of at least ``win_rate`` against the latest snapshot (over at least 20 games).
        """
        since = step - self.last_snapshot_step
        if since >= self.settings.snapshot_freq:
            return True
        if not self.snapshots or since < self.settings.snapshot_freq // 4:
            return False
        record = self.pool.record_of(self.snapshots[-1][0])
        return len(record.recent) >= 20 and record.score() >= self.settings.win_rate

    def add_snapshot(self, policy: Any, step: int) -> str:
        """Freeze the learner's SB3 ``policy`` as member ``self@<step>``: save it under ``snapshots/``, let it
        join the pool (the oldest snapshot leaves beyond ``max_snapshots``), play its rating matches, and save
        ``league.json``.

        Returns:
            The new member's name.

        Raises:
            ValueError: a policy the safe SB3 loader could not rebuild; nothing joins then.
        """
        name = f"self@{step}"
        path = self.folder / "snapshots" / f"{name}.zip"
        path.parent.mkdir(parents=True, exist_ok=True)
        SB3Agent(policy).save(path)
        self._join(name, path, step)
        self.snapshots.append((name, step))
        self._rate_newcomer(name)
        self.last_snapshot_step = step
        self.save()
        return name

    def _join(self, name: str, path: Path, step: int) -> None:
        agent = SB3Agent.load(path, deterministic=False, seed=self.seed + step)
        if name in self.pool:
            self.pool.remove(name)
        self.pool.add(name, agent)
        in_pool = [snapshot for snapshot, _ in self.snapshots if snapshot in self.pool]
        if name not in in_pool:
            in_pool.append(name)
        for old in in_pool[: max(0, len(in_pool) - self.settings.max_snapshots)]:
            self.pool.remove(old)

    def ladder(self) -> dict[str, float] | None:
        """The reference ladder's ratings (spec -> Elo) on 6x7, where the league's ratings are anchored; None on
        other boards (the first fixed member is the anchor there).
        """
        if (self.rules.rows, self.rules.columns, self.rules.win_length) == (6, 7, 4):
            return reference_ladder()
        return None

    def play_fixed_pairings(self) -> int:
        """Play the fixed members' round robin that their ratings need and that ``results`` lacks: every pair the
        ladder does not both rate, ``rating_games`` games each, alternating sides. Returns the games played.
        """
        games = self.settings.rating_games
        if games == 0:
            return 0
        played = 0
        for a, b in fixed_pairings_to_play(self.settings.fixed, self.ladder()):
            if (a, b) in self.results or (b, a) in self.results:
                continue
            match = play_match(self.pool[a], self.pool[b], games, self.rules)
            self.results[(a, b)] = [match.wins, match.draws, match.losses]
            played += games
        return played

    def _rate_newcomer(self, name: str) -> None:
        """The new member's matches against every other member (``rating_games`` each, alternating sides), after
        the fixed members' round robin if it is not played yet.
        """
        games = self.settings.rating_games
        if games == 0:
            return
        self.play_fixed_pairings()
        newcomer = self.pool[name]
        for other in self.pool.names:
            if other == name:
                continue
            match = play_match(newcomer, self.pool[other], games, self.rules)
            self.results[(name, other)] = [match.wins, match.draws, match.losses]

    # -- results -----------------------------------------------------------------------------------------------
    def pairings(self) -> list[PairingCounts]:
        """The W/D/L between members, one entry per pair played."""
        return [PairingCounts(a, b, *counts) for (a, b), counts in self.results.items()]

    def ratings(self, bootstrap: int = 0) -> LeagueRatings | None:
        """Elo ratings of the members, anchored on the fixed members (see
        [`rate_league`][connect4_agents.evaluation.league_ratings.rate_league]): on 6x7 those the reference
        ladder rates keep their ladder Elo, elsewhere the first fixed member is 0; each snapshot is rated from
        its games against the fixed members alone. None before any rating match.
        """
        return rate_league(
            self.settings.fixed, self.pairings(), ladder=self.ladder(), bootstrap=bootstrap, seed=self.seed
        )

    def to_dict(self) -> dict[str, Any]:
        """The league as plain JSON values (what ``league.json`` holds), with the ratings of the last fit."""
        return league_dict(self)

    def picture_members(self, count: int = PICTURE_MEMBERS) -> list[str]:
        """The members ``league.png`` shows: the fixed ones and the latest snapshots, ``count`` in all."""
        room = max(0, count - len(self.settings.fixed))
        latest = [name for name, _ in self.snapshots[max(0, len(self.snapshots) - room) :]] if room else []
        return [*self.settings.fixed, *latest]

    def save(self, *, rate: bool = False, bootstrap: int = 0, picture: bool = False) -> Path:
        """Write ``league.json`` (atomically); returns its path.

        Args:
            rate: fit the ratings again (else the file keeps the last fit's). The fit's cost grows with the
                members, so a training run rates at its evaluations only.
            bootstrap: resamples for the ratings' 95 % intervals (0: point estimates; each resample costs about
                one fit), as a training run does at its end.
            picture: also draw ``league.png`` (ratings and payoff matrix of the fixed members and the latest
                snapshots, `picture_members`; needs matplotlib).
        """
        if rate:
            self.last_ratings = self.ratings(bootstrap)
        path = atomic_write_json(self.folder / LEAGUE_FILE, self.to_dict())
        ratings = self.last_ratings
        if picture and ratings is not None and len(ratings.ratings.elo) > 1:
            try:
                ratings.ratings.plot(str(self.folder / "league.png"), self.picture_members())
            except Exception as error:  # noqa: BLE001  (no matplotlib: the JSON has it all)
                if type(error).__name__ != "MissingExtraError":
                    raise
        return path

    def save_checkpoint(
        self,
        write: Callable[[Path], object],
        step: int,
        *,
        seconds: float | None = None,
        cpu_seconds: float | None = None,
    ) -> Path:
        """Write the learner's checkpoint, then ``league.json`` naming it (its step and SHA-256, ratings fitted
        again), so that the two stay in step whenever the run is killed: the checkpoint ``league.json`` named
        so far is kept as ``checkpoint.previous.zip`` until the new ``league.json`` is written.

        Args:
            write: writes the checkpoint to the path it is given, atomically (``save_model``), with its
                ``.json`` sidecar beside it.
            step: the learner's steps at the checkpoint.
            seconds: the run's wall-clock seconds at the checkpoint, all its parts together (a resumed run
                goes on counting from there).
            cpu_seconds: the run's CPU-seconds at the checkpoint, all its parts together (what its
                ``cpu_minutes`` budget counts).

        Returns:
            The path of ``league.json``.
        """
        current = self.folder / CHECKPOINT_FILE
        previous = self.folder / PREVIOUS_CHECKPOINT_FILE
        if (
            self.checkpoint is not None
            and current.is_file()
            and _sha256(current) == self.checkpoint["sha256"]
        ):
            sidecar = current.with_suffix(".json")
            if sidecar.is_file():  # copied, so that either checkpoint has its sidecar at every moment
                atomic_write(previous.with_suffix(".json"), lambda stream: stream.write(sidecar.read_bytes()))
            os.replace(current, previous)
        write(current)
        self.checkpoint = {"step": step, "sha256": _sha256(current)}
        self.timesteps = step
        self.seconds, self.cpu_seconds = seconds, cpu_seconds
        return self.save(rate=True)

    def checkpoint_path(self) -> Path:
        """The checkpoint ``league.json`` goes with, to resume from: ``checkpoint.zip``, or
        ``checkpoint.previous.zip`` when the run was killed after writing a new checkpoint and before the
        ``league.json`` naming it (a league file from before checkpoints were named: ``checkpoint.zip``).

        Raises:
            ValueError: neither file is the checkpoint ``league.json`` names (the message says which step).
        """
        current = self.folder / CHECKPOINT_FILE
        if self.checkpoint is None:
            return current
        for path in (current, self.folder / PREVIOUS_CHECKPOINT_FILE):
            if path.is_file() and _sha256(path) == self.checkpoint["sha256"]:
                return path
        raise ValueError(
            f"{self.folder / LEAGUE_FILE} goes with the checkpoint of step {self.checkpoint['step']}, and neither "
            f"{CHECKPOINT_FILE} nor {PREVIOUS_CHECKPOINT_FILE} in {self.folder} is that file: the run cannot "
            "resume in step; start it in a new folder"
        )

    @classmethod
    def load(
        cls, folder: str | os.PathLike[str], rules: Rules, settings: LeagueSettings, seed: int = 0
    ) -> League:
        """The league saved in ``folder`` (to resume a run): its snapshots rejoin, its results and records
        are read back; ``settings`` and ``seed`` are this run's.

        Only the snapshots the pool holds (the latest ``max_snapshots``) are loaded: a retired one's file may be
        gone.

        Raises:
            ValueError: ``league.json`` is malformed (truncated, or not JSON), too large, of another board, or
                inconsistent as a whole (a result naming no member or pairing one with itself, a pairing of
                no games or more than [`MAX_PAIRING_GAMES`][connect4_agents.sb3.league_file.MAX_PAIRING_GAMES], snapshots out of order, results that cannot be
                rated), each message naming the file; a snapshot's file the pool needs is missing or not a
                model file.
            OSError: the file cannot be read.
        """
        league = cls(folder, rules, settings, seed)
        restore_league(league, league.folder / LEAGUE_FILE)
        for name, step in league.snapshots[-settings.max_snapshots :]:  # only the files the pool holds
            league._join(name, league.folder / "snapshots" / f"{name}.zip", step)
        return league


def remove_league_files(folder: str | os.PathLike[str]) -> list[Path]:
    """Remove what a league run wrote in ``folder`` (for a run that starts afresh there): ``league.json``,
    ``league.png``, both checkpoints with their sidecars, ``eval.csv`` and the ``snapshots/self@<step>`` models;
    nothing else. Returns the paths removed.
    """
    folder = Path(folder)
    names = [LEAGUE_FILE, "league.png", "eval.csv"]
    for checkpoint in (CHECKPOINT_FILE, PREVIOUS_CHECKPOINT_FILE):
        names += [checkpoint, str(Path(checkpoint).with_suffix(".json"))]
    paths = [folder / name for name in names]
    if (folder / "snapshots").is_dir():
        paths += sorted((folder / "snapshots").glob("self@*.zip")) + sorted(
            (folder / "snapshots").glob("self@*.json")
        )
    removed = [path for path in paths if path.is_file()]
    for path in removed:
        path.unlink()
    return removed


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
