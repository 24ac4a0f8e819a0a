"""A player graded by perfect play: its games against an opponent, move by move, and its moves on the test sets.

For every move the player made in its games, the solver's verdict
([`move_verdicts`][connect4_agents.evaluation.verdicts.move_verdicts]):
``best`` (the best score), ``keeps`` (not the best score, the same outcome) or ``mistake`` (a worse outcome: a
win or a draw given up, a *blunder*). The report gives, each with its 95 % Wilson interval:

- the share of moves that keep the best outcome class (``best`` or ``keeps``), over all judged moves and over
  the *non-trivial* positions only (some legal move there loses the outcome class: the figure that tells
  players apart, as in `connect4_agents.evaluation.accuracy`);
- the blunder rate (``mistake`` over judged moves), with the blunders that gave up a win and a draw counted;
- SPIN-Bench's measure beside them: the share of judged moves whose dense rank among the legal columns by exact
  score is at most 3 (ties sharing a rank). Where few scores are distinct the top 3 holds losing moves (scores
  ``(-3, -3, -3, 2, -3, -3, -3)``: every losing column ranks 2), so it counts a move that throws a win away as
  good, which the outcome class never does;
- for a text policy (moves recorded with ``search`` entries of kind ``"text"``): the illegal-answer rate
  (rejected tries over all tries, those of a forfeited move included) and the share of moves the fallback
  played (a fallback's move is not the player's: it is left out of every verdict rate, in games and on the
  test sets alike);
- the forfeit rate per game, and the wins, draws and losses with the score;
- per test set, the share of non-trivial positions where the player's move keeps the best outcome class
  (`connect4_agents.evaluation.accuracy.evaluate_agents`).

Moves the solver cannot judge (a board [`can_judge`][connect4_agents.evaluation.verdicts.can_judge] refuses, a
position over its node budget) are counted apart and left out of every verdict rate. The grades themselves are in
`connect4_agents.evaluation.grades`, the report that holds them in `connect4_agents.evaluation.grade_report`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from typing import Any

from connect4_agents._support.progress import progress_bar
from connect4_agents.evaluation.accuracy import evaluate_agents
from connect4_agents.evaluation.arena import MatchResult, check_agent, play_match
from connect4_agents.evaluation.audit import game_forfeit, is_text_record, text_tries
from connect4_agents.evaluation.grade_report import GradeReport
from connect4_agents.evaluation.grades import GameGrade, Rate, SetGrade
from connect4_agents.evaluation.records import GameLog, game_log, match_logs
from connect4_agents.evaluation.test_sets import TEST_SET_SPECS, score_outcome, select_test_sets
from connect4_agents.evaluation.verdicts import VERDICT_NODES, can_judge, move_verdicts
from connect4_agents.solver.agent import SolverAgent
from connect4_env.policy import policy_from_spec
from connect4_env.rules import Rules, check_rules
from connect4_env.validation import check_bool, check_int

__all__ = ["grade_games", "grade_test_sets", "grade_match", "default_sets", "MAX_GAMES"]

MAX_GAMES = 1000  # games per grading run: each is tens of model calls for a language model


# -- grading games ------------------------------------------------------------------------------------------
def _check_games(games: object, player: object, solver: object) -> list[GameLog]:
    if isinstance(games, (str, bytes)) or not isinstance(games, Sequence):
        raise TypeError(f"games must be a list of GameLog records, got {type(games).__name__}")
    if not isinstance(player, str):
        raise TypeError(f"player must be a str (a name in the records' players), got {player!r:.80}")
    if solver is not None and not isinstance(solver, SolverAgent):
        raise TypeError(f"solver must be None or a SolverAgent, got {type(solver).__name__}")
    games = list(games)
    if not games:
        raise ValueError("there are no games to grade")
    for index, game in enumerate(games):
        if not isinstance(game, GameLog):
            raise TypeError(f"game {index} is a {type(game).__name__}, not a GameLog")
        if player not in game.players:
            raise ValueError(
                f"game {index} was played by {list(game.players)}, not by {player!r}; grade only the games "
                f"it played: [g for g in games if {player!r} in g.players]"
            )
    return games


def grade_games(games: Sequence[GameLog], player: str, solver: SolverAgent | None = None) -> GameGrade:
    """Grade every move ``player`` made in ``games`` by perfect play (see the module docstring).

    Args:
        games: game records (`connect4_agents.evaluation.records.GameLog`), each played by ``player``.
        player: the name to grade, as the records' ``players`` spell it (a game where both seats have it
            grades both).
        solver: the solver that judges every move (its table shared by all games); None: one per board
            with the replay's node budget, on the boards `connect4_agents.ui.replay.can_judge` accepts (on
            another board no move is judged).

    Returns:
        The grade.

    Raises:
        TypeError: ``games`` is not a list of `GameLog`, ``player`` is not a str, or ``solver`` is neither
            None nor a `SolverAgent`.
        ValueError: no games, a game ``player`` did not play, a move into a full column, or a malformed
            text record or forfeit.
    """
    games = _check_games(games, player, solver)
    solvers: dict[Rules, SolverAgent] = {}
    kinds = ("judged", "best", "keeps", "mistake", "top3", "from_win", "from_draw")
    counts = dict.fromkeys((*kinds, "nontrivial", "nontrivial_kept"), 0)
    results = [0, 0, 0]  # wins, draws, losses
    seats_held = moves = unjudged = text_moves = tries = rejected = fallbacks = forfeits = 0
    verdicts: list[tuple[str | None, ...]] = []
    for index, game in enumerate(games):
        seats = [seat for seat in (0, 1) if game.players[seat] == player]
        judge = solver
        if judge is None and can_judge(game.rules):
            judge = solvers.setdefault(game.rules, SolverAgent(node_budget=VERDICT_NODES))
        judged = move_verdicts(game, judge) if judge is not None else [None] * len(game.moves)
        mine: list[str | None] = []
        for ply, verdict in enumerate(judged):
            if ply % 2 not in seats:
                continue
            moves += 1
            entry = game.search[ply] if game.search is not None else None
            fell_back = False
            if is_text_record(entry):
                text_moves += 1
                made, refused = text_tries(entry, f"game {index}, move {ply}")
                tries, rejected = tries + made, rejected + refused
                fell_back = entry.get("outcome") == "fallback"
                fallbacks += fell_back
            if fell_back:  # the fallback's move, not the player's: in no verdict rate
                mine.append(None)
                continue
            if verdict is None:
                unjudged += 1
                mine.append(None)
                continue
            kind = verdict["verdict"]
            mine.append(kind)
            scores = verdict["scores"]
            best = score_outcome(max(s for s in scores if s is not None))
            counts["judged"] += 1
            counts[kind] += 1
            counts["top3"] += verdict["top3"]
            if kind == "mistake":
                counts["from_win" if best > 0 else "from_draw"] += 1
            if any(s is not None and score_outcome(s) < best for s in scores):
                counts["nontrivial"] += 1
                counts["nontrivial_kept"] += kind != "mistake"
        verdicts.append(tuple(mine))
        forfeit = game_forfeit(game, f"game {index}")
        if forfeit is not None and forfeit["player"] in seats:
            forfeits += 1
            if is_text_record(forfeit.get("info")):
                made, refused = text_tries(forfeit["info"], f"game {index}, forfeit")
                tries, rejected = tries + made, rejected + refused
        for seat in seats:
            seats_held += 1
            results[1 if game.winner is None else 0 if game.winner == seat else 2] += 1
    judged_moves = counts["judged"]
    return GameGrade(
        player=player,
        games=seats_held,
        wins=results[0],
        draws=results[1],
        losses=results[2],
        moves=moves,
        unjudged=unjudged,
        best_class=Rate(counts["best"] + counts["keeps"], judged_moves),
        exact=Rate(counts["best"], judged_moves),
        blunders=Rate(counts["mistake"], judged_moves),
        blunders_from_win=counts["from_win"],
        blunders_from_draw=counts["from_draw"],
        nontrivial_best_class=Rate(counts["nontrivial_kept"], counts["nontrivial"]),
        text_moves=text_moves,
        illegal_answers=Rate(rejected, tries),
        fallbacks=Rate(fallbacks, text_moves),
        forfeits=Rate(forfeits, seats_held),
        verdicts=tuple(verdicts),
        top3=Rate(counts["top3"], judged_moves),
    )


# -- grading on the test sets -------------------------------------------------------------------------------
def default_sets(rules: Rules) -> tuple[str, ...]:
    """The test sets of the board ``rules``: ``("6x7",)`` (the six 6x7 sets) for 6x7 with four in a row, the
    shipped set of a smaller board (``("4x5",)``, ``("5x5-w3",)``), none for a board without one.

    """
    if rules == Rules():
        return ("6x7",)
    name = f"{rules.rows}x{rules.columns}" + ("" if rules.win_length == 4 else f"-w{rules.win_length}")
    return (name,) if name in TEST_SET_SPECS else ()


def grade_test_sets(
    agent: Any,
    sets: Sequence[str],
    *,
    sample: int | None = None,
    seed: int = 0,
    workers: int | None = None,
    progress: bool = True,
) -> dict[str, SetGrade]:
    """The agent's move in the positions of ``sets``, graded per set (through
    [`evaluate_agents`][connect4_agents.evaluation.accuracy.evaluate_agents], on the sets it can play). A
    position the agent forfeits counts as lost; one its fallback played is counted apart, in no rate.

    Args:
        agent: an agent spec or a policy object.
        sets: set names, ``"6x7"`` or ``"all"`` (see
            `connect4_agents.evaluation.test_sets.select_test_sets`).
        sample: only this many positions, drawn with ``seed`` from all the sets' positions (None: all).
        seed: seeds the agent per position and draws the sample.
        workers: worker processes (None: one per CPU; 1 plays here).
        progress: a progress bar over the positions.

    Returns:
        Set name -> its grade.

    Raises:
        TypeError: as `evaluate_agents`.
        ValueError: as `evaluate_agents` (an unknown set, a spec that cannot play any of them ...).
    """
    (report,) = evaluate_agents(
        [agent], list(sets), sample=sample, seed=seed, workers=workers, progress=progress
    )
    return {
        name: SetGrade(
            Rate(part.optimal_class, part.n),
            Rate(part.nontrivial_optimal_class, part.nontrivial),
            part.forfeits,
            part.fallbacks,
            Rate(part.nontrivial_top3, part.nontrivial),
        )
        for name, part in report.per_set.items()
    }


# -- a player's games and sets, graded -----------------------------------------------------------------------
def _player(agent: Any, name: str, seed: int, rules: Rules) -> tuple[Any, str]:
    """The policy and its name: a spec built with ``seed`` and bound to ``rules``, or an object as it is."""
    if isinstance(agent, str):
        return policy_from_spec(agent, seed=seed, rules=rules), agent
    return check_agent(name, agent), repr(agent)


def grade_match(
    player: Any,
    opponent: Any = "mcts:100",
    *,
    games: int = 20,
    rules: Rules | None = None,
    sets: Sequence[str] | None = None,
    sample: int | None = None,
    seed: int = 0,
    workers: int | None = None,
    progress: bool = True,
    games_out: str | os.PathLike[str] | None = None,
    on_games: Callable[[MatchResult], None] | None = None,
) -> GradeReport:
    """Play ``player`` against ``opponent`` with paired seats, grade its moves, and grade it on test sets.

    Args:
        player: an agent spec (``"mcts:10"``, ``"text:mypkg.llm:answer"``), built with ``seed``, or a policy
            object (named by its repr).
        opponent: a spec (built with ``seed + 1``) or a policy object.
        games: games to play, an even number from 2 to `MAX_GAMES`: the player moves first in half of them
            (see `connect4_agents.evaluation.arena.play_match`).
        rules: the board (default 6x7, four in a row).
        sets: test sets to grade the player on (None: `default_sets` of the board; empty: none).
        sample: grade only this many test-set positions, drawn with ``seed`` (None: all).
        seed: seeds the players and the test-set positions.
        workers: worker processes for the test sets (None: one per CPU; 1 plays here).
        progress: progress bars.
        games_out: write the game records (search entries, so a text policy's prompts and answers, included)
            here, one JSON line each as the game ends (appended and flushed to disk: a run killed after
            hours of model calls keeps every finished game); the file is emptied first.
        on_games: called with the match result after the games, before the test sets (to print it).

    Returns:
        The report (its ``opponent`` the opponent's name, its ``sets`` empty when none was graded).

    Raises:
        TypeError: a setting of the wrong type, or a player neither a spec nor an object with ``act``.
        ValueError: an odd ``games`` or one out of range, an unknown spec or test set, a player that cannot
            play ``rules``.
        IllegalMoveError: a player chose an illegal column (the games before it are written to
            ``games_out``).
    """
    games = check_int("games", games, 2, MAX_GAMES)
    if games % 2:
        raise ValueError(f"games={games}: paired seats need an even number of games (each seat in half)")
    rules = check_rules(rules, None) or Rules()
    seed = check_int("seed", seed, 0)
    progress = check_bool("progress", progress)
    if sets is not None and (isinstance(sets, (str, bytes)) or not isinstance(sets, Sequence)):
        raise TypeError(f"sets must be None or a list of test set names, got {sets!r:.80}")
    chosen = default_sets(rules) if sets is None else tuple(sets)
    if chosen:  # an unknown set is refused before any game is played
        select_test_sets(list(chosen))
    if sample is not None:
        check_int("sample", sample, 1)
    agent, name = _player(player, "player", seed, rules)
    rival, rival_name = _player(opponent, "opponent", seed + 1, rules)
    if rival_name == name:  # the same spec on both sides: the records must tell the graded seat apart
        rival_name += " (opponent)"
    names = (name, rival_name)
    result = MatchResult()
    # opened before any game is played, so an unwritable path costs no model call
    stream = None if games_out is None else open(games_out, "w", encoding="utf-8")  # noqa: SIM115
    bar = progress_bar(games, "games", unit="game") if progress else None

    def game_over(index: int, record: GameLog, a_first: bool) -> None:
        if bar is not None:
            bar.update(1)
        if stream is not None:  # as match_logs labels it, and as write_games writes it
            log = game_log(record, names if a_first else names[::-1], rules, seed=seed, game=index)
            stream.write(json.dumps(log.to_dict(), separators=(",", ":")) + "\n")
            stream.flush()
            os.fsync(stream.fileno())

    try:
        play_match(
            agent,
            rival,
            games,
            rules,
            keep_games=True,
            record_search=True,
            names=names,
            result=result,
            on_game=game_over,
        )
    finally:
        if bar is not None:
            bar.close()
        if stream is not None:
            stream.close()
    logs = match_logs(result, names, rules, seed=seed)
    if on_games is not None:
        on_games(result)
    graded = grade_games(logs, name)
    set_grades = (
        grade_test_sets(player, chosen, sample=sample, seed=seed, workers=workers, progress=progress)
        if chosen
        else {}
    )
    return GradeReport(
        name, rival_name, rules.rows, rules.columns, rules.win_length, seed, graded, set_grades
    )
