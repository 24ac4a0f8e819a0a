"""Matches with their records written: what the match modes of ``scripts/mcts_vs_qlearning.py`` run.

- `play_recorded_game`: one game, its record written when asked.
- `play_recorded_match`: a match with a progress bar, its game records written even when interrupted.
- `qtable_against_mcts`: a saved Q-table against MCTS on the table's own board, the results to JSON.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from connect4_agents._support.files import atomic_write_json
from connect4_agents._support.progress import progress_bar
from connect4_agents.evaluation.arena import MatchResult, play_game, play_match
from connect4_agents.evaluation.records import GameLog, game_log, match_logs, write_games
from connect4_agents.mcts.agent import MCTSAgent
from connect4_agents.qlearning.agent import QLearningAgent
from connect4_env.core import Board
from connect4_env.rules import Rules

__all__ = ["play_recorded_game", "play_recorded_match", "QTableMatch", "qtable_against_mcts"]


def play_recorded_game(
    players: Sequence[Any],
    rules: Rules,
    *,
    names: Sequence[str],
    seed: int = 0,
    on_move: Callable[[Board, int, int], None] | None = None,
    games_out: str | os.PathLike[str] | None = None,
) -> GameLog:
    """One game of ``players[0]`` (moves first) against ``players[1]`` (see
    `connect4_agents.evaluation.arena.play_game`); with ``games_out``, its record (search numbers
    included, players named ``names``, run seed ``seed``) is written there.

    Returns:
        The game.

    Raises:
        IllegalMoveError: a player chose an illegal column (no record is written).
        TypeError: ``players`` is not a pair of objects with ``act``, or ``rules`` is not a
            [`Rules`][connect4_env.rules.Rules].
        ValueError: a player cannot play ``rules``, or, with ``games_out``, ``names`` is not two names.
        OSError: the record cannot be written to ``games_out``.
    """
    record = play_game(players, rules, on_move=on_move, record_search=games_out is not None)
    if games_out is not None:
        write_games(games_out, [game_log(record, names, rules, seed=seed, game=0)])
    return record


def play_recorded_match(
    player_a: Any,
    player_b: Any,
    games: int,
    rules: Rules,
    *,
    names: tuple[str, str],
    seed: int = 0,
    games_out: str | os.PathLike[str] | None = None,
    progress: bool = True,
    on_records: Callable[[Path], None] | None = None,
) -> MatchResult:
    """``games`` games of A against B, alternating who starts (see
    `connect4_agents.evaluation.arena.play_match`), with a progress bar closed however the match
    ends.

    With ``games_out``, the games' records (search numbers included, named ``names``, run seed ``seed``) are
    written there when the match ends, also when it is interrupted (then the games finished so far), and
    ``on_records(path)`` is called after.

    Returns:
        The results from A's side.

    Raises:
        IllegalMoveError: a player chose an illegal column (the games finished before it are written).
        TypeError: ``games`` is not an integer, a player has no ``act`` method, or ``rules`` is not a
            [`Rules`][connect4_env.rules.Rules].
        ValueError: ``games`` is below 1, a player cannot play ``rules``, or, with ``games_out``, ``names``
            is not two names.
        OSError: the records cannot be written to ``games_out``.
        KeyboardInterrupt: Ctrl-C, after the finished games were written.
    """
    bar = progress_bar(games, "games", unit="game") if progress else None
    result = MatchResult()
    record = games_out is not None
    try:
        return play_match(
            player_a,
            player_b,
            games,
            rules,
            on_game=None if bar is None else lambda *_: bar.update(1),
            result=result,
            keep_games=record,
            record_search=record,
        )
    finally:
        if bar is not None:
            bar.close()
        if games_out is not None:
            written = write_games(games_out, match_logs(result, names, rules, seed=seed))
            if on_records is not None:
                on_records(written)


@dataclass(frozen=True)
class QTableMatch:
    """What `qtable_against_mcts` played: the results from the table's side, on its board."""

    result: MatchResult
    rules: Rules
    out: Path


def _path_from(folder: Path, path: Path) -> str:
    """``path`` relative to ``folder`` when it lies inside it, else as given."""
    try:
        return path.resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return str(path)


def qtable_against_mcts(
    table: str | os.PathLike[str],
    *,
    playouts: int,
    c: float,
    games: int,
    seed: int,
    out: str | os.PathLike[str],
    games_out: str | os.PathLike[str] | None = None,
    progress: bool = True,
    on_records: Callable[[Path], None] | None = None,
) -> QTableMatch:
    """The Q-table in ``table`` against MCTS (``playouts`` a move, UCB1 constant ``c``) on the table's own
    board, alternating who starts; the results with 95 % intervals are written to ``out`` as JSON (with the
    table's path relative to the JSON file's folder when the table lies inside it, so the pair can be moved).

    The table plays with seed ``seed``, MCTS with ``seed + 1``. ``games_out`` and ``on_records``: as for
    `play_recorded_match`.

    Returns:
        The results, the board, and the JSON file written.

    Raises:
        ValueError: a malformed table or a bad setting.
        OSError: a missing table or an unwritable file.
    """
    agent = QLearningAgent.load(table, seed=seed)
    rules = agent.rules  # the table plays on its own board size
    opponent = MCTSAgent(playouts=playouts, c=c, seed=seed + 1, rules=rules)
    result = play_recorded_match(
        agent,
        opponent,
        games,
        rules,
        names=(f"qlearning:{table}", f"mcts:{playouts}"),
        seed=seed,
        games_out=games_out,
        progress=progress,
        on_records=on_records,
    )
    written = atomic_write_json(
        out,
        {
            "table": _path_from(Path(out).parent, Path(table)),
            "opponent": f"mcts:{playouts}",
            "c": c,
            "rows": rules.rows,
            "columns": rules.columns,
            "win_length": rules.win_length,
            "seed": seed,
            "results_for": "qlearning",
            **result.summary(),
        },
    )
    return QTableMatch(result, rules, written)
