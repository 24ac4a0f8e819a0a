"""Matches with their records written: what the modes of ``connect4 match`` (``scripts/mcts_vs_qlearning.py``) run.

- `play_recorded_game`: one game, its record written when asked.
- `play_recorded_match`: a match with a progress bar, its game records written even when interrupted.
- `model_against_mcts`: a saved learner (an n-tuple network or a Q-table) against MCTS on the model's own
  board, the results to JSON; `qtable_against_mcts` is its Q-table case.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from connect4_agents._support.files import atomic_write_json
from connect4_agents._support.progress import progress_bar
from connect4_agents.evaluation.arena import MatchResult, play_game, play_match
from connect4_agents.evaluation.records import GameLog, game_log, match_logs, write_games
from connect4_agents.mcts.agent import MCTSAgent
from connect4_agents.ntuple.agent import NTupleAgent
from connect4_agents.qlearning.agent import QLearningAgent
from connect4_env.core import Board
from connect4_env.rules import Rules

__all__ = [
    "play_recorded_game",
    "play_recorded_match",
    "Learner",
    "ModelMatch",
    "QTableMatch",
    "model_against_mcts",
    "qtable_against_mcts",
]

Learner = Literal["ntuple", "qlearning"]
"""The learners whose saved models `model_against_mcts` plays: an n-tuple network or a Q-table."""


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
class ModelMatch:
    """What `model_against_mcts` played: the results from the model's side, on its board."""

    result: MatchResult
    rules: Rules
    out: Path


QTableMatch = ModelMatch  # its earlier name, when only Q-tables played


def _path_from(folder: Path, path: Path) -> str:
    """``path`` relative to ``folder`` when it lies inside it, else as given."""
    try:
        return path.resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return str(path)


def model_against_mcts(
    learner: Learner,
    model: str | os.PathLike[str] | None,
    *,
    playouts: int,
    c: float,
    games: int,
    seed: int,
    out: str | os.PathLike[str],
    games_out: str | os.PathLike[str] | None = None,
    progress: bool = True,
    on_records: Callable[[Path], None] | None = None,
) -> ModelMatch:
    """The model that ``learner`` saved in ``model`` against MCTS (``playouts`` a move, UCB1 constant ``c``)
    on the model's own board, alternating who starts; the results with 95 % intervals are written to ``out``
    as JSON (with the model's path relative to the JSON file's folder when the model lies inside it, so the
    pair can be moved).

    ``learner`` ``"ntuple"``: ``model`` is an n-tuple network file (``connect4 train-ntuple``'s
    ``model.npz``), None for the shipped 6x7 network (the spec ``ntuple``); ``"qlearning"``: a Q-table
    (``qtable.npz``). The model plays with seed ``seed``, MCTS with ``seed + 1``. ``games_out`` and
    ``on_records``: as for `play_recorded_match`.

    Returns:
        The results, the board, and the JSON file written.

    Raises:
        ValueError: an unknown learner, a malformed model file, no Q-table named, or a bad setting.
        OSError: a missing model file or an unwritable output file.
    """
    agent: Any
    if learner == "ntuple":
        agent = NTupleAgent(seed=seed) if model is None else NTupleAgent.load(model, seed=seed)
        rules = agent.network.rules  # the network plays on its own board size
    elif learner == "qlearning":
        if model is None:
            raise ValueError("a Q-table match needs the table's path (a qtable.npz)")
        agent = QLearningAgent.load(model, seed=seed)
        rules = agent.rules
    else:
        raise ValueError(f"learner must be 'ntuple' or 'qlearning', got {learner!r}")
    name = learner if model is None else f"{learner}:{model}"
    opponent = MCTSAgent(playouts=playouts, c=c, seed=seed + 1, rules=rules)
    result = play_recorded_match(
        agent,
        opponent,
        games,
        rules,
        names=(name, f"mcts:{playouts}"),
        seed=seed,
        games_out=games_out,
        progress=progress,
        on_records=on_records,
    )
    shown = learner if model is None else _path_from(Path(out).parent, Path(model))
    written = atomic_write_json(
        out,
        {
            "learner": learner,
            "model": shown,
            **({"table": shown} if learner == "qlearning" else {}),
            "opponent": f"mcts:{playouts}",
            "c": c,
            "rows": rules.rows,
            "columns": rules.columns,
            "win_length": rules.win_length,
            "seed": seed,
            "results_for": learner,
            **result.summary(),
        },
    )
    return ModelMatch(result, rules, written)


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
) -> ModelMatch:
    """The Q-table in ``table`` against MCTS: `model_against_mcts` with ``learner="qlearning"``.

    Returns:
        The results, the board, and the JSON file written.

    Raises:
        ValueError: a malformed table or a bad setting.
        OSError: a missing table or an unwritable file.
    """
    return model_against_mcts(
        "qlearning",
        table,
        playouts=playouts,
        c=c,
        games=games,
        seed=seed,
        out=out,
        games_out=games_out,
        progress=progress,
        on_records=on_records,
    )
