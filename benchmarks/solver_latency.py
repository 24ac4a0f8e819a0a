"""Exact-solver latency on 6x7 with the opening book: percentiles of ``act`` and of ``evaluate`` (the exact score
of every column), on the six 6x7 test sets and on positions from self-play at every ply, next to bitbully (a
C++ solver reading the same 12-ply book) on the same positions, in the same run, per source with the ratio of
the medians (ours / bitbully's); and ``Connect4-v0`` agent
steps per second against the ``solver`` opponent.

One ``SolverAgent`` answers every position in turn, as an opponent would (its transposition table is kept
between calls). bitbully is AGPL-licensed: it is never a dependency of this package; install it by hand
beside the venv to compare (``pip install --target build/peers bitbully``, then run with
``PYTHONPATH=build/peers``). Without it the peer's columns are left out. Needs the ``book`` extra.

    python benchmarks/solver_latency.py [--per-set 150] [--games 5] [--seed 0] [--seconds 10]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np

import connect4_env  # noqa: F401 - registers Connect4-v0
from connect4_agents import MCTSAgent, SolverAgent
from connect4_agents.evaluation.arena import play_game
from connect4_agents.evaluation.test_sets import select_labelled_positions, select_test_sets
from connect4_agents.solver.book import book_available
from connect4_env import Board, Rules


def positions(per_set: int, games: int, seed: int) -> dict[str, list[tuple[int, ...]]]:
    """Move lists by source: each 6x7 test set (``per_set`` drawn from it) and self-play (every ply)."""
    chosen: dict[str, list[tuple[int, ...]]] = {}
    for name in select_test_sets(["6x7"]):
        for _, position in select_labelled_positions([name], None, per_set, seed):
            chosen.setdefault(name.removeprefix("6x7-"), []).append(position.moves)
    played = chosen.setdefault("self-play", [])
    for game in range(games):
        record = play_game(
            [MCTSAgent(200, seed=seed + 2 * game), MCTSAgent(200, seed=seed + 2 * game + 1)], Rules()
        )
        played += [tuple(record.moves[:ply]) for ply in range(len(record.moves))]
    return chosen


def timed(call: Callable[[], Any], nodes: Callable[[], int]) -> tuple[float, Any, int]:
    began = time.perf_counter()
    result = call()
    return time.perf_counter() - began, result, nodes()


def one_pass(
    boards: dict[str, list[list[int]]],
    board_of: Callable[[list[int]], Any],
    call: Callable[[Any], Any],
    nodes: Callable[[], int],
) -> dict[str, list[tuple[float, Any, int]]]:
    """``call`` on every position (built by ``board_of`` from its moves), timed, by source: (seconds, result,
    the nodes it searched, as ``nodes()`` tells after the call).
    """
    return {
        source: [timed(partial(call, board_of(moves)), nodes) for moves in lists]
        for source, lists in boards.items()
    }


def node_counter(peer: Any) -> Callable[[], int]:
    """bitbully's nodes since the last call of the returned function."""

    def nodes() -> int:
        count = int(peer.get_node_counter())
        peer.reset_node_counter()
        return count

    return nodes


def summary(seconds: list[float]) -> str:
    ms = 1000 * np.asarray(seconds)
    return f"median {np.median(ms):7.2f}  p99 {np.percentile(ms, 99):8.2f}  max {ms.max():8.2f} ms"


def peer() -> Any:
    """bitbully's solver with its 12-ply book, or None when it is not installed."""
    try:
        from bitbully import BitBully  # type: ignore[import-not-found]
    except ImportError:
        return None
    return BitBully("12-ply-dist")


def opponent_rate(seconds: float) -> float:
    """``Connect4-v0`` agent steps per second against ``opponent="solver"``, random learner moves."""
    env = gym.make("Connect4-v0", opponent="solver")
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))  # loads the kernels and the book
    _, info = env.reset(seed=1)
    steps, began = 0, time.perf_counter()
    while time.perf_counter() - began < seconds:
        _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        steps += 1
        if terminated or truncated:
            _, info = env.reset()
    rate = steps / (time.perf_counter() - began)
    env.close()
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--per-set", type=int, default=150, help="positions drawn from each 6x7 test set")
    parser.add_argument("--games", type=int, default=5, help="MCTS(200) self-play games, every ply measured")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=10.0, help="Connect4-v0 vs solver measurement")
    args = parser.parse_args()
    if not book_available():
        raise SystemExit('error: needs the opening book: pip install -e ".[book]"')
    sources = positions(args.per_set, args.games, args.seed)
    other = peer()
    boards = {
        source: [list(m) for m in moves_list if not Board.from_moves(list(m)).is_terminal]
        for source, moves_list in sources.items()
    }
    print(
        f"6x7 with the 12-ply book; each pass: one agent answering every position in turn (seed {args.seed})"
    )
    scores: dict[str, list[Any]] = {}
    medians: dict[str, dict[str, float]] = {}
    for kind in ("evaluate", "act"):
        solver = SolverAgent()  # a fresh agent (and transposition table) for each pass
        solver.evaluate_board(Board.from_moves([3]))  # loads the kernels and the book: not timed
        call = solver.evaluate_board if kind == "evaluate" else partial(solver.best_columns, every=False)
        runs = {"ours": one_pass(boards, Board.from_moves, call, partial(getattr, solver, "last_nodes"))}
        if other is not None:
            from bitbully import Board as PeerBoard

            other.reset_transposition_table()
            other.score_all_moves(PeerBoard.from_moves([3]))
            call = other.score_all_moves if kind == "evaluate" else other.best_move
            runs["bitbully"] = one_pass(boards, PeerBoard.from_moves, call, node_counter(other))
        for source, timings in runs["ours"].items():
            if not timings:
                continue
            line = f"  {kind:8} {source:14} {len(timings):4} positions  {summary([t for t, _, _ in timings])}"
            if other is not None:  # the peer on the same positions, and the ratio of the medians
                theirs = [t for t, _, _ in runs["bitbully"][source]]
                ratio = np.median([t for t, _, _ in timings]) / np.median(theirs)
                line += f"  | bitbully {summary(theirs)}  | median ratio {ratio:5.1f}x"
            print(line)
        sets = [t for source, part in runs["ours"].items() if source != "self-play" for t, _, _ in part]
        line = f"  {kind:8} {'six sets':14} {len(sets):4} positions  {summary(sets)}"
        if other is not None:
            theirs = [
                t for source, part in runs["bitbully"].items() if source != "self-play" for t, _, _ in part
            ]
            ratio = np.median(sets) / np.median(theirs)
            line += f"  | bitbully {summary(theirs)}  | median ratio {ratio:5.1f}x"
        print(line)
        for name, by_source in runs.items():  # nodes: the search's work, whatever the machine's speed
            counts = [n for source, part in by_source.items() if source != "self-play" for _, _, n in part]
            print(
                f"  {kind:8} {'six sets':14} nodes, {name:8}  total {sum(counts):12,}  "
                f"median {np.median(counts):9,.0f}  p99 {np.percentile(counts, 99):11,.0f}"
            )
        for name, by_source in runs.items():
            timings = [timing for part in by_source.values() for timing in part]
            label = "all" if name == "ours" else "bitbully, all"
            print(f"  {kind:8} {label:14} {len(timings):4} positions  {summary([t for t, _, _ in timings])}")
            medians.setdefault(name, {})[kind] = float(np.median([t for t, _, _ in timings]))
            if kind == "evaluate":
                scores[name] = [result for _, result, _ in timings]
    if other is not None:
        disagree = sum(
            [int(np.sign(s)) for s in ours if s is not None]
            != [int(np.sign(theirs[c])) for c, s in enumerate(ours) if s is not None]
            for ours, theirs in zip(scores["ours"], scores["bitbully"])
        )
        for kind in ("evaluate", "act"):
            print(
                f"median {kind}, ours / bitbully's: {medians['ours'][kind] / medians['bitbully'][kind]:.1f}x"
            )
        print(f"win/draw/loss classes of the columns disagree in {disagree} positions")
    else:
        print("bitbully is not installed: no peer in this run (see the docstring)")
    print(
        f"Connect4-v0 against opponent='solver', random learner: {opponent_rate(args.seconds):,.0f} agent steps/s"
    )


if __name__ == "__main__":
    main()
