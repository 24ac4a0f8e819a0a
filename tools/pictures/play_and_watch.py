"""The pictures of the play-and-watch tutorial and the home page, under ``--out`` (default ``docs/``).

- ``board.svg``: ``to_svg`` of a 6x7 game that X won along the bottom row;
- ``rgb_array.png``: ``Connect4-v0``'s ``render()`` in ``rgb_array`` mode, 40 pixels a cell;
- ``search.png``: ``SearchResult.plot`` of one MCTS search after the moves 3, 3, 4 (the ``train`` extra);
- ``window.png``: the play window at the end of ``mcts:2000`` against ``mcts:200``, drawn without a screen
  (``SDL_VIDEODRIVER=dummy``; the ``render`` extra);
- ``replay.png``: the replay page at ply 17 of ``mcts:200`` against the solver, in headless Chromium (the
  ``book`` extra makes the solver quick on 6x7).

    python tools/pictures/play_and_watch.py [--out docs]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import docs_site  # noqa: E402 - the sibling script's browser helpers

ROOT = Path(__file__).resolve().parents[2]


def board_svg(out: Path) -> None:
    from connect4_env import Board
    from connect4_env.render import to_svg

    (out / "board.svg").write_text(to_svg(Board.from_moves([0, 0, 1, 1, 2, 2, 3])))


def rgb_array(out: Path) -> None:
    import gymnasium as gym
    import matplotlib.pyplot as plt

    import connect4_env  # noqa: F401 - registers Connect4-v0

    env = gym.make("Connect4-v0", opponent="mcts:200", render_mode="rgb_array", tile=40)
    env.reset(seed=0)
    for column in (3, 2, 4):
        env.step(column)
    plt.imsave(out / "rgb_array.png", env.render())
    env.close()


def search(out: Path) -> None:
    from connect4_agents import MCTSAgent
    from connect4_env import Board

    MCTSAgent(playouts=20000, seed=0).search(Board.from_moves([3, 3, 4])).plot(out / "search.png")


def window(out: Path) -> None:
    command = [sys.executable, "-m", "connect4_agents.commands", "play", "--player0", "mcts:2000"]
    command += ["--player1", "mcts:200", "--ui", "window", "--delay", "0", "--exit-at-end"]
    command += ["--screenshot", str(out / "window.png")]
    env = dict(os.environ, SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy")
    subprocess.run(command, check=True, env=env, cwd=ROOT, capture_output=True, timeout=600)


def replay(out: Path) -> None:
    from connect4_agents import MCTSAgent, SolverAgent
    from connect4_agents.evaluation.arena import play_game
    from connect4_agents.evaluation.records import game_log
    from connect4_agents.ui.replay import write_replay
    from connect4_env import Rules

    rules = Rules()
    players = [MCTSAgent(playouts=200, seed=0), SolverAgent(seed=0)]
    record = play_game(players, rules, record_search=True, names=("mcts:200", "solver"))
    with tempfile.TemporaryDirectory() as folder:
        page = write_replay(
            Path(folder) / "replay.html", [game_log(record, ("mcts:200", "solver"), rules, seed=0)]
        )
        docs_site.screenshot(page.as_uri() + "#game=0&ply=17", out / "replay.png", size="980,640")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=ROOT / "docs", help="folder for the pictures")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for draw in (board_svg, rgb_array, search, window, replay):
        draw(args.out)
        print(f"drew {draw.__name__}")


if __name__ == "__main__":
    main()
