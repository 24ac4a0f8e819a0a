"""How often an agent's move is as good as perfect play, on positions with exact scores: the runs over the
positions, in workers (the counts and reports are in `connect4_agents.evaluation.accuracy_report`).

A move is *optimal-class* when it keeps the best outcome the position allows (a win if there is one, else a
draw); *exact* when it has the best score (the quickest win, the slowest loss); its *regret* is the best score
minus its score, in the solver's units (two points per ply sooner or later, see
`connect4_agents.solver.agent`).

Every rate is given over all positions and over the *non-trivial* ones
([`Position.nontrivial`][connect4_agents.evaluation.test_sets.Position.nontrivial]: some move has a worse
outcome than the best). In a trivial position every move keeps the outcome, so random play is right there too;
the non-trivial rate is the one that tells agents apart, as AlphaZero.jl's benchmark reads its errors. Reports
break both down per test set.

An agent that gives a position up ([`Forfeit`][connect4_env.policy.Forfeit]: a text policy out of answers) is
scored as a loss right there (below the score of any move), and the forfeits are counted. A move its fallback
played (a text policy's random column after no answer: its `move_info` says ``"outcome": "fallback"``) is not
the agent's: it is counted in ``fallbacks`` and left out of every rate and of ``n``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from connect4_agents._support.progress import progress_bar
from connect4_agents.evaluation.accuracy_report import AccuracyReport, SetAccuracy
from connect4_agents.evaluation.arena import check_callable
from connect4_agents.evaluation.backends import plan_batches, run_batches, worker_policy
from connect4_agents.evaluation.test_sets import (
    TEST_SET_SPECS,
    Position,
    _check_name,
    load_test_set,
    select_labelled_positions,
    select_test_sets,
)
from connect4_env.encoding import TrackedBoard
from connect4_env.policy import Forfeit
from connect4_env.rules import IllegalMoveError, as_column
from connect4_env.validation import check_bool, check_int, check_name_list

__all__ = ["evaluate_accuracy", "evaluate_agents", "position_seed", "playable_sets"]


def position_seed(seed: int, index: int) -> int:
    """The agent's seed for the ``index``-th position (independent of how positions are split in batches).

    Raises:
        TypeError: ``seed`` or ``index`` is not an integer.
        ValueError: ``seed`` or ``index`` is a negative integer.
    """
    seed, index = check_int("seed", seed, 0), check_int("index", index, 0)
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])


# -- the work done in each worker -----------------------------------------------------------------------------
def _fell_back(policy: Any) -> bool:
    """Whether the policy's last move was its fallback's, by its `move_info` record (a text policy's)."""
    move_info = getattr(policy, "move_info", None)
    record = move_info() if callable(move_info) else None
    return isinstance(record, dict) and record.get("outcome") == "fallback"


def _choose_moves(batch: tuple[Any, int, list[tuple[int, Position]]]) -> list[tuple[int | None, bool]]:
    """The agent's column in each position of the batch (None where it forfeited) and whether its fallback
    chose it, its seed reset from the position's index.
    """
    agent, seed, items = batch
    columns: list[tuple[int | None, bool]] = []
    for index, position in items:
        rules = position.rules
        policy = worker_policy(agent, rules)
        game = TrackedBoard(rules)
        for move in position.moves:
            game.play(move)
        reset = getattr(policy, "reset", None)
        if callable(reset):
            reset(seed=position_seed(seed, index))
        try:
            action = policy.act(game.observation(game.board.to_move), game.mask.copy())
        except Forfeit:  # counted as a loss there, as a game counts it
            columns.append((None, False))
            continue
        # the same check as a game's: an integer (numpy's too), never a float or a string read as one
        columns.append((as_column(action), _fell_back(policy)))
    return columns


def playable_sets(agent: Any, names: Sequence[str]) -> list[str]:
    """The sets among ``names`` whose board ``agent`` (a spec or a policy) can play.

    A Q-table plays only its own board size, for example; a spec that cannot be built at all raises.

    Raises:
        ValueError: ``agent`` is a spec that fails on every board, with that board's error.
    """
    playable, error = [], None
    for name in check_name_list("names", names, "test set names"):
        rules = TEST_SET_SPECS[_check_name(name)].rules
        try:
            worker_policy(agent, rules)
        except ValueError as exc:
            error = exc
            continue
        playable.append(name)
    if not playable and error is not None:
        raise error
    return playable


def _agent_name(agent: Any) -> str:
    return agent if isinstance(agent, str) else repr(agent)


def _positions(test_set: Any) -> list[tuple[str, Position]]:
    if isinstance(test_set, str) or (
        isinstance(test_set, Sequence) and test_set and all(isinstance(x, str) for x in test_set)
    ):
        # read as the command line's --test-sets: a set named twice would count its positions twice
        names = select_test_sets([test_set] if isinstance(test_set, str) else list(test_set))
        return [(name, p) for name in names for p in load_test_set(name)]
    if isinstance(test_set, Sequence) and all(isinstance(x, Position) for x in test_set):
        return [(f"{p.rows}x{p.columns}-w{p.win_length}", p) for p in test_set]
    if isinstance(test_set, Sequence) and all(
        isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str) and isinstance(x[1], Position)
        for x in test_set
    ):
        return [(name, p) for name, p in test_set]
    raise TypeError(
        "test_set must be a set name, a list of set names, a list of Position objects or of (set name, "
        "Position) pairs, "
        f"got {type(test_set).__name__}"
    )


def evaluate_accuracy(
    agent: Any,
    test_set: str | Sequence[str] | Sequence[Position] | Sequence[tuple[str, Position]],
    *,
    backend: str = "process",
    workers: int | None = None,
    progress: bool = True,
    seed: int = 0,
    address: str | None = None,
    batch_size: int | None = None,
) -> AccuracyReport:
    """Ask ``agent`` for a move in every position of ``test_set`` and compare it with perfect play.

    Args:
        agent: an agent spec (``"mcts:1000"``, built in each worker) or a policy object (sent to the
            workers; bound to each position's rules).
        test_set: a shipped set's name
            ([`test_set_names`][connect4_agents.evaluation.test_sets.test_set_names]), a list of names (or
            ``"6x7"``, ``"all"``: read by `connect4_agents.evaluation.test_sets.select_test_sets`, which
            refuses a set named twice), a list of [`Position`][connect4_agents.evaluation.test_sets.Position],
            or a list of ``(set name, Position)`` pairs (what
            `connect4_agents.evaluation.test_sets.select_labelled_positions` returns). The per-set breakdown
            is by name (by board for bare positions).
        backend: where the positions are played, ``"process"`` or ``"ray"`` (see
            `connect4_agents.evaluation.backends`).
        workers: the number of worker processes or Ray tasks at once (default: the CPUs available).
        progress: a progress bar (tqdm) over positions.
        seed: the agent is reset with a seed derived from ``seed`` and the position's index before each
            position, so the same seed gives the same moves on any backend and number of workers.
        address: the Ray cluster to join with ``backend="ray"``, such as ``"ray://head:10001"`` (default: a
            local one).
        batch_size: positions per task (default: about four tasks per worker, at most 100 positions each).

    Raises:
        TypeError: ``test_set`` is none of the forms above, ``progress`` is not a bool, ``seed``, ``workers``
            or ``batch_size`` is not an integer, ``address`` is not a str, or ``agent`` is neither a spec nor
            an object with ``act``.
        ValueError: an unknown set or one named twice, no positions, a negative ``seed``, ``workers`` or
            ``batch_size`` out of range, an unknown ``backend``, an ``address`` without ``backend="ray"``, or
            an agent that is an unknown spec or cannot play a set's board (checked before any position).
        MissingExtraError: ``backend="ray"`` without Ray (the ``distributed`` extra).
        IllegalMoveError: the agent chose a full or out-of-range column.
    """
    check_bool("progress", progress)
    seed = check_int("seed", seed, 0)
    labelled = _positions(test_set)
    if not labelled:
        raise ValueError("test_set holds no positions")
    indexed = list(enumerate(p for _, p in labelled))
    n_workers, chunks = plan_batches(indexed, workers, batch_size, largest=100)
    for rules in {p.rules for _, p in labelled}:  # fail early, here, if the agent cannot play a board
        worker_policy(agent, rules)
    batches = [(agent, seed, chunk) for chunk in chunks]
    bar = progress_bar(len(indexed), "positions", unit="pos") if progress else None
    try:
        results = run_batches(
            _choose_moves,
            batches,
            backend=backend,
            workers=n_workers,
            address=address,
            on_result=None if bar is None else lambda i, r: bar.update(len(r)),
        )
    finally:
        if bar is not None:
            bar.close()
    report = AccuracyReport(agent=_agent_name(agent))
    for (name, position), (column, fell_back) in zip(labelled, (c for batch in results for c in batch)):
        if column is not None:
            column = as_column(column)
            if not 0 <= column < position.columns or position.move_scores[column] is None:
                raise IllegalMoveError(
                    f"{report.agent} chose column {column}, which is not legal after {position.moves}"
                )
        part = report.per_set.setdefault(name, SetAccuracy())
        report.moves.append(column)
        if fell_back:  # not the agent's move: counted apart, in no rate
            report.fallbacks += 1
            part.fallbacks += 1
            continue
        report.add(position, column)
        part.add(position, column)
    return report


def evaluate_agents(
    agents: Sequence[str],
    test_sets: Sequence[str],
    *,
    plies: tuple[int, int] | None = None,
    sample: int | None = None,
    seed: int = 0,
    backend: str = "process",
    workers: int | None = None,
    address: str | None = None,
    progress: bool = True,
    on_report: Callable[[AccuracyReport], None] | None = None,
) -> list[AccuracyReport]:
    """[`evaluate_accuracy`][connect4_agents.evaluation.accuracy.evaluate_accuracy] of each agent spec on the
    sets among ``test_sets`` that it can play (what ``connect4 evaluate`` runs).

    Args:
        agents: agent specs (``"mcts:1000"``).
        test_sets: set names, ``"6x7"`` (the six 6x7 sets) or ``"all"`` (see
            `connect4_agents.evaluation.test_sets.select_test_sets`).
        plies: only the positions with ``plies[0]`` to ``plies[1]`` stones (None: all).
        sample: only ``sample`` of those positions, drawn with ``seed`` (None: all; see
            `connect4_agents.evaluation.test_sets.select_positions`).
        seed: draws the sample, and seeds the agents as in
            [`evaluate_accuracy`][connect4_agents.evaluation.accuracy.evaluate_accuracy].
        backend: ``"process"`` or ``"ray"``, as for
            [`evaluate_accuracy`][connect4_agents.evaluation.accuracy.evaluate_accuracy].
        workers: worker processes or Ray tasks at once (default: the CPUs available).
        address: the Ray cluster to join with ``backend="ray"`` (default: a local one).
        progress: a progress bar over each agent's positions.
        on_report: called with each agent's report as soon as it is done (to print it).

    Returns:
        One report per agent, in the order of ``agents``.

    Raises:
        TypeError: ``agents`` is not a list (a lone string included), ``test_sets`` is not a list of
            strings, ``on_report`` is not callable, a spec is neither a string nor an object with ``act``, or
            ``plies``, ``sample`` or another setting has the wrong type.
        ValueError: an unknown set or one named twice, a spec that cannot play any of the sets (checked for
            every spec before any plays), a ``plies`` range or ``sample`` out of range, no position in the
            range, or a setting out of range.
        MissingExtraError: ``backend="ray"`` without Ray (the ``distributed`` extra).
    """
    if isinstance(agents, (str, bytes)) or not isinstance(agents, Sequence):
        raise TypeError(
            f"agents must be a list of agent specs or policies, got {agents!r:.80} ({type(agents).__name__})"
            + (f"; write [{agents!r}] for one" if isinstance(agents, str) else "")
        )
    sets = select_test_sets(test_sets)
    check_callable("on_report", on_report)
    # every spec is checked against the sets before any of them plays
    plans = [(spec, playable_sets(spec, sets)) for spec in agents]
    reports = []
    for spec, playable in plans:
        chosen = (
            playable
            if plies is None and sample is None
            else select_labelled_positions(playable, plies, sample, seed)
        )
        if not chosen:
            low, high = plies if plies is not None else (0, 0)
            raise ValueError(f"no position of {playable} has {low} to {high} stones")
        report = evaluate_accuracy(
            spec, chosen, backend=backend, workers=workers, address=address, seed=seed, progress=progress
        )
        reports.append(report)
        if on_report is not None:
            on_report(report)
    return reports
