"""Play Kaggle ConnectX submissions in kaggle-environments' own ``env.run``, as Kaggle runs them.

Runs with kaggle-environments alone (in .venv-kaggle, where our package is not installed, as on Kaggle):

    .venv-kaggle/bin/python tests/interop/kaggle_games.py negamax main.py 100 '{"rows": 6, "columns": 7, "inarow": 4}' [both|first|second]
    .venv-kaggle/bin/python tests/interop/kaggle_games.py duel a.py b.py

``negamax``: one game from a cold start (this process has not run the submission; with a fresh ``TMPDIR`` and
no ``NUMBA_CACHE_DIR`` nothing of it is on disk either), then the submission's ``warm_up`` (its compiled
kernels and policy loaded), then the games counted against Kaggle's built-in negamax. ``duel``: a.py against
b.py and b.py against a.py, both in this process, then each file's policy as its ``warm_up`` loads it.

Prints one JSON line: for ``negamax`` the counted games' wins, draws, losses, the games whose status was not
DONE (an error, an invalid column, a timeout) and the most overage time (Kaggle's 60 s bank) one game used, and
the cold game (with each of its moves' seconds, as Kaggle timed them); for ``duel`` each game's statuses and
logs and each file's policy. Both report numba's compilations by thread (numba's event API): a compilation on
the thread that plays the moves is one that a move waited for. ``random`` in place of ``negamax`` plays Kaggle's
built-in random agent instead.
"""

import collections
import json
import sys
import threading
import time

from kaggle_environments import make

COMPILES: collections.Counter = collections.Counter()
try:  # a submission needs no numba; where it is installed, every compilation is counted by thread
    import numba.core.event as numba_events
except ImportError:  # pragma: no cover - .venv-kaggle installs numba, as Kaggle's image has it
    numba_events = None
if numba_events is not None:

    class _Compilations(numba_events.Listener):
        def on_start(self, event):
            COMPILES[threading.current_thread().name] += 1

        def on_end(self, event):
            pass

    numba_events.register("numba:compile", _Compilations())


def game(agents: list, configuration: dict) -> dict:
    """One game of ``agents`` (paths or Kaggle's built-in names): each side's status, reward and logs."""
    env = make("connectx", configuration=configuration)
    steps = env.run(agents)
    sides = []
    for side in range(2):
        # each move's log (the entry of a side that did not move has no duration)
        moved = [
            step[side] for step in env.logs if len(step) > side and step[side] and "duration" in step[side]
        ]
        logs = [entry.get("stderr", "") for entry in moved]
        durations = [round(entry["duration"], 4) for entry in moved]
        bank = min(step[side].observation.get("remainingOverageTime", 60) for step in steps)
        sides.append(
            {
                "status": steps[-1][side].status,
                "reward": steps[-1][side].reward,
                "logs": [log for log in logs if log],
                "first_log": logs[0] if logs else "",
                "durations": durations,
                "overage_used": round(60 - bank, 2),
            }
        )
    return {"agents": agents, "sides": sides}


def warm_up(path: str, configuration: dict) -> dict:
    """Run the submission's file as Kaggle does and wait for its ``warm_up``: whether it loaded, and what."""
    namespace: dict = {}
    with open(path) as source:
        exec(compile(source.read(), path, "exec"), namespace)  # as kaggle-environments loads it: no __file__
    agent = namespace["_AGENT"]
    if not hasattr(agent, "warm_up"):  # a numpy-only submission (the n-tuple network): nothing loads later
        return {"loaded": True, "module": None, "file": None, "policy": type(agent).__name__}
    board = {"rows": 6, "columns": 7, "inarow": 4, **configuration}
    loaded = agent.warm_up(board, timeout=900)
    module = sys.modules[type(agent).__module__]  # the submission's own copy of our Kaggle module
    policy = agent.policy_for(module.read_kaggle_rules(board))
    return {
        "loaded": loaded,
        "module": module.__name__,
        "file": module.__file__,
        "policy": type(policy).__name__,
    }


def play(path: str, games: int, configuration: dict, sides: str = "both", opponent: str = "negamax") -> dict:
    results = {"games": games, "wins": 0, "draws": 0, "losses": 0, "errors": [], "overage_used": 0.0}
    start = time.perf_counter()
    first = 0 if sides in ("both", "first") else 1
    cold = game([path, opponent] if first == 0 else [opponent, path], configuration)["sides"][first]
    results["cold"] = cold
    results["warm_up"] = warm_up(path, configuration)
    for index in range(games):
        # "both": even games the submission moves first, odd games second; "first" / "second": always
        side = index % 2 if sides == "both" else ("first", "second").index(sides)
        ours = game([path, opponent] if side == 0 else [opponent, path], configuration)["sides"][side]
        if ours["status"] != "DONE":
            results["errors"].append(
                f"game {index} (side {side}): {ours['status']} {''.join(ours['logs'])[-1500:]}"
            )
        outcome = "wins" if ours["reward"] == 1 else "losses" if ours["reward"] == -1 else "draws"
        results[outcome] += 1
        results["overage_used"] = max(results["overage_used"], ours["overage_used"])
    results["seconds"] = round(time.perf_counter() - start, 1)
    results["compiles"] = dict(COMPILES)
    return results


def duel(first: str, second: str) -> dict:
    played = [game([first, second], {}), game([second, first], {})]
    return {
        "games": played,
        "policies": {path: warm_up(path, {}) for path in (first, second)},
        "compiles": dict(COMPILES),
    }


if __name__ == "__main__":
    if sys.argv[1] == "duel":
        print(json.dumps(duel(sys.argv[2], sys.argv[3])))
    else:
        config = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
        sides = sys.argv[5] if len(sys.argv) > 5 else "both"
        print(json.dumps(play(sys.argv[2], int(sys.argv[3]), config, sides, opponent=sys.argv[1])))
