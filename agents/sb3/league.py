"""A league for SB3 self-play: an opponent pool of fixed members and the learner's frozen snapshots, kept in a
run folder with its results, ratings and payoff picture.

[`League`][connect4_agents.sb3.league.League] is what ``connect4 train-sb3 --league`` trains against. Its pool
([`OpponentPool`][connect4_env.pool.OpponentPool]) is the env's ``opponent``: each game draws a member when it
starts (prioritised fictitious self-play by default) and keeps it to the end. Snapshots of the learner join on a
schedule, or sooner once the learner beats the latest one; each new snapshot plays a short match against every
other member, and the league's W/D/L between members is rated on the project's Elo ladder.

Files in the run folder: ``league.json`` (members, their records against the learner, W/D/L between members,
ratings), ``snapshots/<name>.zip`` (each snapshot, loadable with ``SB3Agent.load`` and as ``sb3:<path>``) and
``league.png`` (ratings and the payoff matrix).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from connect4_agents._support.files import atomic_write_json, parse_json
from connect4_agents.evaluation.arena import play_match
from connect4_agents.evaluation.ratings import PairingCounts, Ratings, fit_ratings, reference_ladder
from connect4_agents.sb3.agent import SB3Agent
from connect4_env.policy import policy_from_spec
from connect4_env.pool import OpponentPool
from connect4_env.rules import Rules
from connect4_env.validation import check_int, check_number

__all__ = ["League", "LeagueSettings", "LEAGUE_FILE", "MAX_LEAGUE_FILE_BYTES", "PICTURE_MEMBERS"]

LEAGUE_FILE = "league.json"
"""The league's file in the run folder."""
PICTURE_MEMBERS = 16
"""How many members ``league.png`` shows: the fixed ones, then the latest snapshots."""
MAX_LEAGUE_FILE_BYTES = 16 << 20
"""The largest ``league.json`` read back."""
_SNAPSHOT_NAME = re.compile(r"self@(\d{1,15})")


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
    """Games a new snapshot plays against each other member, alternating sides, for the ratings."""

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
        self.last_ratings: Ratings | None = None  # the last fit (see save)

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
        self._rate_newcomer(name)
        self.last_snapshot_step = step
        self.save()
        return name

    def _join(self, name: str, path: Path, step: int) -> None:
        agent = SB3Agent.load(path, deterministic=False, seed=self.seed + step)
        if name in self.pool:
            self.pool.remove(name)
        self.pool.add(name, agent)
        self.snapshots.append((name, step))
        in_pool = [snapshot for snapshot, _ in self.snapshots if snapshot in self.pool]
        for old in in_pool[: max(0, len(in_pool) - self.settings.max_snapshots)]:
            self.pool.remove(old)

    def _rate_newcomer(self, name: str) -> None:
        """The new member's matches against every other member (``rating_games`` each, alternating sides)."""
        games = self.settings.rating_games
        if games == 0:
            return
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

    def ratings(self, bootstrap: int = 0) -> Ratings | None:
        """Elo ratings of the members from their matches: on the project's reference ladder (6x7: the fixed
        members it rates are held at their ladder Elo) or anchored at the first fixed member; None before any
        rating match.
        """
        pairings = self.pairings()
        if not pairings:
            return None
        players = {p for pairing in pairings for p in (pairing.a, pairing.b)}
        fixed = None
        if (self.rules.rows, self.rules.columns, self.rules.win_length) == (6, 7, 4):
            ladder = reference_ladder()
            fixed = {p: ladder[p] for p in players if p in ladder} or None
        anchor = (
            None
            if fixed
            else self.settings.fixed[0]
            if self.settings.fixed[0] in players
            else sorted(players)[0]
        )
        try:
            return fit_ratings(pairings, anchor=anchor, fixed=fixed, bootstrap=bootstrap, seed=self.seed)
        except ValueError:  # members not yet linked to the ladder: rate them among themselves
            return fit_ratings(pairings, anchor=sorted(players)[0], bootstrap=bootstrap, seed=self.seed)

    def to_dict(self) -> dict[str, Any]:
        """The league as plain JSON values (what ``league.json`` holds), with the ratings of the last fit."""
        ratings = self.last_ratings
        return {
            "board": [self.rules.rows, self.rules.columns, self.rules.win_length],
            "settings": {
                "fixed": list(self.settings.fixed),
                "snapshot_freq": self.settings.snapshot_freq,
                "win_rate": self.settings.win_rate,
                "max_snapshots": self.settings.max_snapshots,
                "sampling": self.settings.sampling,
                "rating_games": self.settings.rating_games,
            },
            "seed": self.seed,
            "timesteps": self.timesteps,
            "last_snapshot_step": self.last_snapshot_step,
            "snapshots": [
                {"name": name, "step": step, "in_pool": name in self.pool} for name, step in self.snapshots
            ],
            "learner_records": self.pool.stats(),
            "results": [
                {"a": a, "b": b, "wins": w, "draws": d, "losses": lo}
                for (a, b), (w, d, lo) in self.results.items()
            ],
            "ratings": None if ratings is None else ratings.to_dict()["ratings"],
        }

    def picture_members(self, count: int = PICTURE_MEMBERS) -> list[str]:
        """The members ``league.png`` shows: the fixed ones and the latest snapshots, ``count`` in all."""
        room = max(0, count - len(self.settings.fixed))
        latest = [name for name, _ in self.snapshots[len(self.snapshots) - room :]] if room else []
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
        if picture and ratings is not None and len(ratings.elo) > 1:
            try:
                ratings.plot(str(self.folder / "league.png"), self.picture_members())
            except Exception as error:  # noqa: BLE001  (no matplotlib: the JSON has it all)
                if type(error).__name__ != "MissingExtraError":
                    raise
        return path

    @classmethod
    def load(
        cls, folder: str | os.PathLike[str], rules: Rules, settings: LeagueSettings, seed: int = 0
    ) -> League:
        """The league saved in ``folder`` (to resume a run): its snapshots rejoin, its results and records
        are read back; ``settings`` and ``seed`` are this run's.

        Raises:
            ValueError: ``league.json`` is malformed, too large, or of another board; a snapshot's file is
                missing or not a model file.
            OSError: the file cannot be read.
        """
        league = cls(folder, rules, settings, seed)
        path = league.folder / LEAGUE_FILE
        with open(path, "rb") as stream:
            raw = stream.read(MAX_LEAGUE_FILE_BYTES + 1)
        if len(raw) > MAX_LEAGUE_FILE_BYTES:
            raise ValueError(f"{path} is over {MAX_LEAGUE_FILE_BYTES} bytes: not a league file")
        data = parse_json(raw, "league file")
        if not isinstance(data, dict) or data.get("board") != [rules.rows, rules.columns, rules.win_length]:
            raise ValueError(
                f"{path} is not a league of a {rules.rows}x{rules.columns} board with {rules.win_length} in a row"
            )
        try:
            for entry in data["snapshots"]:
                name, step = entry["name"], check_int("snapshot step", entry["step"], 0, 10**15)
                if not isinstance(name, str) or not _SNAPSHOT_NAME.fullmatch(name):
                    raise ValueError(f"bad snapshot name {name!r:.40}")
                league._join(name, league.folder / "snapshots" / f"{name}.zip", step)
            for entry in data["results"]:
                counts = [check_int(key, entry[key], 0, 10**9) for key in ("wins", "draws", "losses")]
                league.results[(str(entry["a"]), str(entry["b"]))] = counts
            league.pool.load_stats(data["learner_records"])
            league.last_snapshot_step = check_int("last_snapshot_step", data["last_snapshot_step"], 0, 10**15)
            league.timesteps = check_int("timesteps", data["timesteps"], 0, 10**15)
        except (KeyError, TypeError) as error:
            raise ValueError(f"{path} is not a league file: {error!r:.120}") from None
        return league
