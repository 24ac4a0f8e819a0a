"""Request latency of ``connect4 serve-openenv``: median and p99 of ``step`` over N local steps through OpenEnv's
WebSocket client (``Connect4TextClient``) and through the stateless-client HTTP routes (``/sessions``), next to
the same steps of ``Connect4Text-v0`` in process (the peer: what the server adds is the difference).

The server runs as a child process on 127.0.0.1 (a free port) and is stopped at the end. Each step is one
answer (the leftmost legal column, as text) and the opponent's reply; resets between games are not timed.
Needs the ``openenv`` extra.

    python benchmarks/openenv_latency.py [--steps 1000] [--opponent random]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import urllib.request

import numpy as np

from connect4_env.envs.text_env import Connect4TextEnv
from connect4_env.integrations.openenv.client import Connect4TextClient
from connect4_env.integrations.openenv.models import Connect4TextAction


def percentiles(name: str, seconds: list[float]) -> float:
    ms = np.asarray(seconds) * 1000
    median, p99 = np.percentile(ms, 50), np.percentile(ms, 99)
    print(f"{name:<28} {len(ms):>6} steps   median {median:8.3f} ms   p99 {p99:8.3f} ms")
    return float(median)


def in_process(steps: int, opponent: str) -> list[float]:
    env = Connect4TextEnv(opponent=opponent)
    times: list[float] = []
    seed = 0
    while len(times) < steps:
        text, info = env.reset(seed=seed)
        seed += 1
        done = False
        while not done and len(times) < steps:
            answer = str(int(np.flatnonzero(info["action_mask"])[0]) + 1)
            start = time.perf_counter()
            text, _, done, _, info = env.step(answer)
            times.append(time.perf_counter() - start)
    return times


def over_websocket(url: str, steps: int) -> list[float]:
    times: list[float] = []
    seed = 0
    with Connect4TextClient(base_url=url).sync() as env:
        while len(times) < steps:
            result = env.reset(seed=seed)
            seed += 1
            while not result.done and len(times) < steps:
                action = Connect4TextAction(message=str(result.observation.legal_columns[0]))
                start = time.perf_counter()
                result = env.step(action)
                times.append(time.perf_counter() - start)
    return times


def post(url: str, body: dict | None = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, method="POST", headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def over_http(url: str, steps: int) -> list[float]:
    session = f"{url}/sessions/{post(f'{url}/sessions')['session_id']}"
    times: list[float] = []
    seed = 0
    while len(times) < steps:
        result = post(f"{session}/reset", {"seed": seed})
        seed += 1
        while not result["done"] and len(times) < steps:
            column = result["observation"]["legal_columns"][0]
            start = time.perf_counter()
            result = post(f"{session}/step", {"action": {"message": str(column)}})
            times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--opponent", default="random")
    args = parser.parse_args()
    command = [sys.executable, "-m", "connect4_agents.commands", "serve-openenv", "--port", "0"]
    server = subprocess.Popen([*command, "--opponent", args.opponent], stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline() if server.stdout else ""
        if " at http://" not in line:
            raise SystemExit(f"the server did not start: {line!r}")
        url = line.split(" at ")[1].strip()
        print(f"Connect4Text-v0 against {args.opponent}, server {url} (a child process, 127.0.0.1)")
        peer = percentiles("in process (peer)", in_process(args.steps, args.opponent))
        ws = percentiles("OpenEnv /ws (EnvClient)", over_websocket(url, args.steps))
        http = percentiles("HTTP /sessions/{id}/step", over_http(url, args.steps))
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"ratio of medians to in process: /ws {ws / peer:.1f}x, HTTP {http / peer:.1f}x")


if __name__ == "__main__":
    main()
