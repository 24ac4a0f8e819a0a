"""``league.json``: a [`League`][connect4_agents.sb3.league.League] as plain JSON, and read back from it, each
value checked and the whole consistent, to resume a run.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from connect4_agents._support.files import parse_json
from connect4_env.validation import check_int, check_number

if TYPE_CHECKING:
    from connect4_agents.sb3.league import League

__all__ = ["league_dict", "restore_league", "MAX_LEAGUE_FILE_BYTES", "MAX_PAIRING_GAMES"]

MAX_PAIRING_GAMES = 10_000
"""The most games one pairing of members may have in ``league.json``: the most ``rating_games`` allows."""
MAX_LEAGUE_FILE_BYTES = 16 << 20
"""The largest ``league.json`` read back."""


def league_dict(league: League) -> dict[str, Any]:
    """The league as plain JSON values (what ``league.json`` holds), with the ratings of its last fit."""
    ratings = league.last_ratings
    return {
        "board": [league.rules.rows, league.rules.columns, league.rules.win_length],
        "settings": {
            "fixed": list(league.settings.fixed),
            "snapshot_freq": league.settings.snapshot_freq,
            "win_rate": league.settings.win_rate,
            "max_snapshots": league.settings.max_snapshots,
            "sampling": league.settings.sampling,
            "rating_games": league.settings.rating_games,
        },
        "seed": league.seed,
        "timesteps": league.timesteps,
        "seconds": league.seconds,
        "cpu_seconds": league.cpu_seconds,
        "last_snapshot_step": league.last_snapshot_step,
        "snapshots": [
            {"name": name, "step": step, "in_pool": name in league.pool} for name, step in league.snapshots
        ],
        "learner_records": league.pool.stats(),
        "results": [
            {"a": a, "b": b, "wins": w, "draws": d, "losses": lo}
            for (a, b), (w, d, lo) in league.results.items()
        ],
        "ratings": None if ratings is None else ratings.to_dict()["ratings"],
        "rating_method": None if ratings is None else ratings.method,
        "checkpoint": league.checkpoint,
    }


def restore_league(league: League, path: Path) -> None:
    """Read ``path`` (a ``league.json``) into a new ``league``: its snapshots (not yet loaded), results, records,
    steps and checkpoint.

    Raises:
        ValueError: the file is too large, not JSON, of another board, or inconsistent (see `League.load`),
            the message naming it.
        OSError: the file cannot be read.
    """
    with open(path, "rb") as stream:
        raw = stream.read(MAX_LEAGUE_FILE_BYTES + 1)
    if len(raw) > MAX_LEAGUE_FILE_BYTES:
        raise ValueError(f"{path} is over {MAX_LEAGUE_FILE_BYTES} bytes: not a league file")
    try:
        data = parse_json(raw, "the league file")
    except ValueError as error:  # a truncated file (a disk full) is named with what is wrong
        raise ValueError(f"{path} is not a league file: {error}") from None
    rules = league.rules
    if not isinstance(data, dict) or data.get("board") != [rules.rows, rules.columns, rules.win_length]:
        raise ValueError(
            f"{path} is not a league of a {rules.rows}x{rules.columns} board with {rules.win_length} in a row"
        )
    try:
        _read(league, data)
    except (KeyError, TypeError, ValueError) as error:
        shown = error.args[0] if isinstance(error, ValueError) and error.args else repr(error)
        raise ValueError(f"{path} is not a league file: {str(shown)[:300]}") from None


def _read(league: League, data: dict[str, Any]) -> None:
    """Each part checked and the whole consistent: every name a member's, no member paired with itself, no
    pairing beyond `MAX_PAIRING_GAMES` or without games, and the results rated as the run will rate them.
    """
    for entry in data["snapshots"]:
        name, step = entry["name"], check_int("snapshot step", entry["step"], 0, 10**15)
        if not isinstance(name, str) or name != f"self@{step}":
            raise ValueError(f"bad snapshot name {name!r:.40} (snapshot of step {step}: self@{step})")
        if league.snapshots and step <= league.snapshots[-1][1]:
            raise ValueError(f"snapshot {name} is not later than {league.snapshots[-1][0]}")
        league.snapshots.append((name, step))
    saved_fixed = data.get("settings", {}).get("fixed", [])
    members = {*league.settings.fixed, *(n for n in saved_fixed if isinstance(n, str))}
    members |= {name for name, _ in league.snapshots}
    for entry in data["results"]:
        a, b = entry["a"], entry["b"]
        for name in (a, b):
            if name not in members:
                raise ValueError(f"results name {name!r:.60}, no member of the league")
        if a == b:
            raise ValueError(f"results pair {a!r} with itself")
        counts = [check_int(key, entry[key], 0, MAX_PAIRING_GAMES) for key in ("wins", "draws", "losses")]
        if not 0 < sum(counts) <= MAX_PAIRING_GAMES:
            raise ValueError(
                f"results of {a} against {b} count {sum(counts)} games; a pairing has 1..{MAX_PAIRING_GAMES}"
            )
        league.results[(a, b)] = counts
    league.pool.load_stats(data["learner_records"])
    league.last_snapshot_step = check_int("last_snapshot_step", data["last_snapshot_step"], 0, 10**15)
    league.timesteps = check_int("timesteps", data["timesteps"], 0, 10**15)
    for key in ("seconds", "cpu_seconds"):  # absent from league files written before they were kept
        value = data.get(key)
        setattr(league, key, None if value is None else check_number(key, value, 0.0, 10.0**12))
    checkpoint = data.get("checkpoint")
    if checkpoint is not None:
        step = check_int("checkpoint step", checkpoint["step"], 0, 10**15)
        digest = checkpoint["sha256"]
        if not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{64}", digest):
            raise ValueError(f"checkpoint sha256 {digest!r:.80} is not a SHA-256 in hex")
        if step != league.timesteps:
            raise ValueError(f"checkpoint step {step} is not the league's timesteps {league.timesteps}")
        league.checkpoint = {"step": step, "sha256": digest}
    # rated as the run's first evaluation will rate them, so that it cannot fail there
    league.last_ratings = league.ratings()
