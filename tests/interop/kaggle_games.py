"""Play a Kaggle ConnectX submission against Kaggle's built-in negamax, half the games on each side.

Runs with kaggle-environments alone (in .venv-kaggle, where our package is not installed, as on Kaggle):

    .venv-kaggle/bin/python tests/interop/kaggle_games.py main.py 100 '{"rows": 6, "columns": 7, "inarow": 4}' [both|first|second]

Prints one JSON line: wins, draws, losses, the games whose status was not DONE (an error, an invalid column,
a timeout) and the most overage time (Kaggle's 60 s bank) one game used.
"""

import json
import sys
import time

from kaggle_environments import make


def play(path: str, games: int, configuration: dict, sides: str = "both") -> dict:
    results = {"games": games, "wins": 0, "draws": 0, "losses": 0, "errors": [], "overage_used": 0.0}
    start = time.perf_counter()
    for game in range(games):
        # "both": even games the submission moves first, odd games second; "first" / "second": always
        side = game % 2 if sides == "both" else ("first", "second").index(sides)
        env = make("connectx", configuration=configuration)
        steps = env.run([path, "negamax"] if side == 0 else ["negamax", path])
        ours = steps[-1][side]
        if ours.status != "DONE":
            logs = [step[side].get("stderr", "") for step in env.logs if len(step) > side and step[side]]
            results["errors"].append(f"game {game} (side {side}): {ours.status} {''.join(logs)[-1500:]}")
        outcome = "wins" if ours.reward == 1 else "losses" if ours.reward == -1 else "draws"
        results[outcome] += 1
        bank = min(step[side].observation.get("remainingOverageTime", 60) for step in steps)
        results["overage_used"] = max(results["overage_used"], round(60 - bank, 2))
    results["seconds"] = round(time.perf_counter() - start, 1)
    return results


if __name__ == "__main__":
    config = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    print(
        json.dumps(play(sys.argv[1], int(sys.argv[2]), config, sys.argv[4] if len(sys.argv) > 4 else "both"))
    )
