"""A tournament with its outputs: Elo ratings, the results file and the game records, kept when interrupted.

What ``connect4 tournament`` runs: `gauntlet_ratings` picks the fixed ratings a ``--gauntlet`` is rated
against, `run_rated_tournament` plays (through
[`run_tournament`][connect4_agents.evaluation.tournament.run_tournament]), rates and writes.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from connect4_agents._support.files import atomic_write_json, check_file_target
from connect4_agents.evaluation.arena import MatchResult
from connect4_agents.evaluation.ratings import (
    REFERENCE_LADDER,
    Ratings,
    check_fit_settings,
    fit_ratings,
    read_ladder,
)
from connect4_agents.evaluation.records import write_games
from connect4_agents.evaluation.tournament import (
    GameOutcome,
    TournamentResult,
    game_logs,
    pairing_counts,
    run_tournament,
)
from connect4_env.rules import Rules

__all__ = ["gauntlet_ratings", "run_rated_tournament"]


def gauntlet_ratings(
    specs: Sequence[str], rules: Rules, ladder: str | os.PathLike[str] | None = None
) -> tuple[list[str], dict[str, float]]:
    """The ladder a gauntlet plays against and its fixed ratings: ``specs`` (every agent of the ladder file
    when empty) rated as in ``ladder`` (a ``tournament.py --json`` file; default: the reference ladder
    shipped for 6x7).

    Returns:
        The ladder agents and their ratings.

    Raises:
        TypeError: ``ladder`` is neither None nor a str or os.PathLike.
        ValueError: the reference ladder (``ladder`` None) on a board other than 6x7, a ``ladder`` that is a
            folder, a malformed ladder file or one of another board, or a spec without a rating in it.
        OSError: the ladder file cannot be read.
    """
    if ladder is None and (rules.rows, rules.columns, rules.win_length) != (6, 7, 4):
        raise ValueError("the reference ladder is rated on 6x7: pass --ladder PATH for another board")
    board, ratings = read_ladder(REFERENCE_LADDER if ladder is None else ladder)
    if ladder is not None and board != (rules.rows, rules.columns, rules.win_length):
        raise ValueError(
            f"the ladder {ladder} was rated on {board[0]}x{board[1]} with {board[2]} in a row; this gauntlet "
            f"plays {rules.rows}x{rules.columns} with {rules.win_length} in a row"
        )
    chosen = list(specs) or list(ratings)
    unrated = [s for s in chosen if s not in ratings]
    if unrated:
        raise ValueError(f"ladder agents without a rating in the ladder file: {unrated}")
    return chosen, {s: ratings[s] for s in chosen}


def run_rated_tournament(
    specs: Sequence[str],
    games: int,
    rules: Rules,
    *,
    seed: int = 0,
    gauntlet: str | None = None,
    fixed: dict[str, float] | None = None,
    anchor: str | None = "random",
    bootstrap: int = 1000,
    backend: str = "process",
    workers: int | None = None,
    address: str | None = None,
    progress: bool = True,
    json_out: str | os.PathLike[str] | None = None,
    games_out: str | os.PathLike[str] | None = None,
    on_pairing: Callable[[str, str, MatchResult], None] | None = None,
) -> Ratings:
    """Play the tournament (see [`run_tournament`][connect4_agents.evaluation.tournament.run_tournament]),
    rate it with [`fit_ratings`][connect4_agents.evaluation.ratings.fit_ratings] and write its outputs.

    Args:
        specs: the players' agent specs (the ladder for a ``gauntlet``), as for ``run_tournament``.
        games: games per pairing, alternating sides.
        rules: the board every game is played on.
        seed: seeds every player's reset and the bootstrap.
        gauntlet: an agent spec to play against each of ``specs`` only (None: a round robin).
        fixed: ratings held fixed (a gauntlet's ladder, see `gauntlet_ratings`).
        anchor: the player rated 0, as for ``fit_ratings`` (ignored with ``fixed``).
        bootstrap: resamples for the 95 % intervals, as for ``fit_ratings``.
        backend: where the games are played, ``"process"`` or ``"ray"``.
        workers: worker processes or Ray tasks at once (default: the CPUs available).
        address: the Ray cluster to join with ``backend="ray"`` (default: a local one).
        progress: a progress bar over the games.
        json_out: where to write the board, the ratings, each pairing and every game as JSON.
        games_out: where to write the game records, with each move's search numbers.
        on_pairing: called with ``(a, b, match)`` when a pairing's last game is in.

    Returns:
        The ratings.

    Every argument and spec is checked before any game.

    Raises:
        TypeError: an argument of the wrong type, as ``run_tournament`` checks them; an ``anchor`` that is
            neither a str nor None or a ``bootstrap`` that is not an integer; or an output path that is not a
            str or os.PathLike.
        ValueError: an argument out of range or a spec that cannot play ``rules``, as ``run_tournament``
            checks them; ``bootstrap`` outside ``0..1_000_000``; an ``anchor`` that is not one of the
            players; an output path that is a folder; or, at the rating, players that no games link.
        MissingExtraError: ``backend="ray"`` without Ray (the ``distributed`` extra).
        IllegalMoveError: an agent chose an illegal column.
        OSError: an output file cannot be written.
        KeyboardInterrupt: Ctrl-C, after the finished games were written to both files (``"finished":
            false``; ratings only when those games link every player).
    """
    # checked before any game, so that a long run is not lost to a setting only the rating fit reads
    bootstrap = check_fit_settings(anchor, bootstrap)
    for name, path in (("json_out", json_out), ("games_out", games_out)):
        if path is not None:
            check_file_target(name, path)
    # "random" (the default) may be absent, and None means the first player, as for fit_ratings
    if fixed is None and anchor not in (None, "random") and anchor not in specs:
        raise ValueError(f"anchor {anchor!r} is not one of the players: {', '.join(map(str, specs))}")
    result = TournamentResult()
    played: list[GameOutcome] = []

    def rate() -> Ratings:
        return fit_ratings(pairing_counts(result), anchor=anchor, fixed=fixed, bootstrap=bootstrap, seed=seed)

    def write(finished: bool) -> None:
        ordered = sorted(played, key=lambda g: (g.pairing, g.game))
        if games_out is not None:
            write_games(games_out, game_logs(ordered, rules, seed))
        if json_out is None:
            return
        data: dict[str, Any] = {
            "rows": rules.rows,
            "columns": rules.columns,
            "win_length": rules.win_length,
            "games_per_pairing": games,
            "seed": seed,
            "finished": finished,
        }
        if result.pairings:
            # an interrupted run's finished games may not link every player yet: then no ratings
            with contextlib.suppress(ValueError):
                data.update(rate().to_dict())
        data.update(result.to_dict())
        data["games"] = [g.to_dict() for g in ordered]
        atomic_write_json(Path(json_out), data)

    try:
        run_tournament(
            specs,
            games,
            rules,
            seed=seed,
            gauntlet=gauntlet,
            backend=backend,
            workers=workers,
            address=address,
            progress=progress,
            result=result,
            on_pairing=on_pairing,
            games=played,
            record_search=games_out is not None,
        )
    except KeyboardInterrupt:
        write(finished=False)
        raise
    ratings = rate()
    write(finished=True)
    return ratings
