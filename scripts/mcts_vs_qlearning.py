"""MCTS and tabular Q-learning for Connect Four: the original project's three modes, done right.

    python scripts/mcts_vs_qlearning.py mcts-vs-mcts               # one 6x5 game, every search shown
    python scripts/mcts_vs_qlearning.py mcts-vs-mcts --games 50    # a W/D/L summary instead
    python scripts/mcts_vs_qlearning.py train                       # Q-learning on 4x5 against MCTS(40)
    python scripts/mcts_vs_qlearning.py match --table runs/qlearning/qtable.npz
    python scripts/mcts_vs_qlearning.py demo                        # a short train, then a match (make run)

Outputs go under runs/<name>/: the Q-table (qtable.npz), the learning curve (curve.png, curve.json) and
match results (match.json).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

from agents import agent_from_spec
from agents._files import atomic_write_json
from agents.arena import MatchResult, play_game, play_match
from agents.mcts import MCTSAgent
from agents.qlearning import QLearningAgent
from connect4_env import Rules
from connect4_env.render import render_ansi


def _progress(total: int, description: str) -> Any:
    try:
        from tqdm.auto import tqdm
    except ImportError:  # the train extra is not installed: no bar
        return None
    return tqdm(total=total, desc=description, unit="game", mininterval=0.5)


def _print_result(result: MatchResult, name_a: str, name_b: str) -> dict[str, Any]:
    summary = result.summary()
    print(f"{name_a} vs {name_b}: {result.n_games} games, {name_a} moving first in half of them")
    print(
        f"{'side of ' + name_a:>18} {'games':>6} {'wins':>6} {'draws':>6} {'losses':>6}   win rate (95% CI)"
    )
    for label, key in (("first", "as_first"), ("second", "as_second"), ("overall", "overall")):
        block = summary[key]
        low, high = block["win_rate_ci95"]
        print(
            f"{label:>18} {block['games']:>6} {block['wins']:>6} {block['draws']:>6} {block['losses']:>6}"
            f"   {block['win_rate']:.3f} ({low:.3f}-{high:.3f})"
        )
    return summary


# -- modes -------------------------------------------------------------------------------------------------
def mcts_vs_mcts(args: argparse.Namespace) -> int:
    rules = Rules(args.rows, args.columns, args.win_length)
    players = [
        MCTSAgent(playouts=args.playouts0, c=args.c0, seed=args.seed, win_length=args.win_length),
        MCTSAgent(playouts=args.playouts1, c=args.c1, seed=args.seed + 1, win_length=args.win_length),
    ]
    if args.games == 1:

        def show(board, player, column):
            search = players[player].last_search
            print(
                f"move {board.ply}: {'XO'[player]} (MCTS {[args.playouts0, args.playouts1][player]} playouts) plays {column}"
            )
            print(search.table())
            print(render_ansi(board))

        record = play_game(players, rules, on_move=show)
        print(
            "draw" if record.winner is None else f"{'XO'[record.winner]} wins",
            f"in {len(record.moves)} moves",
        )
        return 0
    bar = _progress(args.games, "games")
    result = play_match(players[0], players[1], args.games, rules, on_game=lambda *_: bar and bar.update(1))
    if bar is not None:
        bar.close()
    _print_result(
        result, f"MCTS({args.playouts0}, c={args.c0:.3g})", f"MCTS({args.playouts1}, c={args.c1:.3g})"
    )
    return 0


def train(args: argparse.Namespace) -> Path:
    rules = Rules(args.rows, args.columns, args.win_length)
    if args.preset == "original":
        agent = QLearningAgent.original(rules.rows, rules.columns, rules.win_length, seed=args.seed)
    else:
        settings = {
            name: getattr(args, name)
            for name in (
                "alpha",
                "gamma",
                "epsilon",
                "epsilon_min",
                "exploration_fraction",
                "epsilon_decay",
                "rewards",
            )
            if getattr(args, name) is not None
        }
        agent = QLearningAgent(rules.rows, rules.columns, rules.win_length, seed=args.seed, **settings)
    opponent = (
        agent if args.opponent == "self" else agent_from_spec(args.opponent, seed=args.seed + 1, rules=rules)
    )
    out = Path(args.out)
    print(f"training {agent!r} against {args.opponent} for {args.episodes:,} episodes -> {out}")
    start = time.perf_counter()
    curve = agent.train(opponent, args.episodes, window=args.window, progress=not args.quiet)
    elapsed = time.perf_counter() - start
    table = agent.save(out / "qtable.npz")
    atomic_write_json(out / "curve.json", {**curve.to_dict(), "seconds": elapsed, "opponent": args.opponent})
    try:
        curve.plot(out / "curve.png", title=f"Q-learning {rules.rows}x{rules.columns} vs {args.opponent}")
    except ImportError:
        print("matplotlib is not installed: no curve.png (pip install 'connect4-env[train]')")
    last = -1
    print(
        f"done in {elapsed:.1f} s: {len(agent.q):,} states; last {curve.window} episodes: "
        f"win {curve.win_rate[last]:.3f}, draw {curve.draw_rate[last]:.3f}, loss {curve.loss_rate[last]:.3f} "
        f"(epsilon {curve.epsilon[last]:.3f})"
    )
    print(f"saved {table}, {out / 'curve.png'}, {out / 'curve.json'}")
    return table


def match(args: argparse.Namespace) -> int:
    agent = QLearningAgent.load(args.table, seed=args.seed)
    rules = agent.rules  # the table plays on its own board size
    opponent = MCTSAgent(
        playouts=args.mcts_playouts, c=args.c, seed=args.seed + 1, win_length=rules.win_length
    )
    bar = _progress(args.games, "games")
    result = play_match(agent, opponent, args.games, rules, on_game=lambda *_: bar and bar.update(1))
    if bar is not None:
        bar.close()
    print(f"board {rules.rows}x{rules.columns}, win_length {rules.win_length}")
    summary = _print_result(result, "Q-table", f"MCTS({args.mcts_playouts})")
    out = Path(args.out) if args.out else Path(args.table).with_name("match.json")
    atomic_write_json(
        out,
        {
            "table": str(args.table),
            "opponent": f"mcts:{args.mcts_playouts}",
            "c": args.c,
            "rows": rules.rows,
            "columns": rules.columns,
            "win_length": rules.win_length,
            "seed": args.seed,
            "results_for": "qlearning",
            **summary,
        },
    )
    print(f"results written to {out}")
    return 0


def demo(args: argparse.Namespace) -> int:
    args.out = args.out or "runs/demo"
    table = train(args)
    args.table = str(table)
    args.out = str(Path(args.out) / "match.json")
    return match(args)


# -- command line ------------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    modes = parser.add_subparsers(dest="mode", required=True, metavar="MODE")

    def board(p: argparse.ArgumentParser, rows: int, columns: int) -> None:
        p.add_argument("--rows", type=int, default=rows, help=f"board rows (default {rows})")
        p.add_argument("--columns", type=int, default=columns, help=f"board columns (default {columns})")
        p.add_argument("--win-length", type=int, default=4, help="stones in a line to win (default 4)")
        p.add_argument("--seed", type=int, default=0, help="seed for every agent (default 0)")

    p = modes.add_parser(
        "mcts-vs-mcts",
        help="two MCTS agents play",
        description="Two MCTS agents play: one game "
        "shown move by move with each search's table, or --games N with a W/D/L summary.",
    )
    board(p, 6, 5)
    p.add_argument(
        "--playouts0", type=int, default=1000, help="playouts per move of the first player (default 1000)"
    )
    p.add_argument(
        "--playouts1", type=int, default=1000, help="playouts per move of the second player (default 1000)"
    )
    p.add_argument(
        "--c0", type=float, default=math.sqrt(2), help="UCB1 constant of the first player (default sqrt 2)"
    )
    p.add_argument(
        "--c1", type=float, default=2.0, help="UCB1 constant of the second player (default 2, the original's)"
    )
    p.add_argument("--games", type=int, default=1, help="games to play (default 1: shown move by move)")
    p.set_defaults(run=mcts_vs_mcts)

    def training(p: argparse.ArgumentParser, episodes: int) -> None:
        board(p, 4, 5)
        p.add_argument(
            "--opponent",
            default="mcts:40",
            help="random, mcts:<playouts>, solver, qlearning:<table>, or self (default mcts:40)",
        )
        p.add_argument(
            "--episodes", type=int, default=episodes, help=f"training games (default {episodes:,})"
        )
        p.add_argument(
            "--preset",
            choices=["default", "original"],
            default="default",
            help="'original': the original project's alpha 0.6, gamma 0.8, epsilon 0.1, shaped rewards",
        )
        defaults = QLearningAgent()  # for the help texts
        p.add_argument("--alpha", type=float, default=None, help=f"learning rate (default {defaults.alpha})")
        p.add_argument("--gamma", type=float, default=None, help=f"discount (default {defaults.gamma})")
        p.add_argument(
            "--epsilon",
            type=float,
            default=None,
            help=f"exploration at the start (default {defaults.epsilon})",
        )
        p.add_argument(
            "--epsilon-min",
            type=float,
            default=None,
            help=f"exploration floor (default {defaults.epsilon_min})",
        )
        p.add_argument(
            "--exploration-fraction",
            type=float,
            default=None,
            help="share of the episodes over which epsilon falls linearly to its floor "
            f"(default {defaults.exploration_fraction})",
        )
        p.add_argument(
            "--epsilon-decay",
            type=float,
            default=None,
            help="instead: this factor per episode, whatever the budget (default: off)",
        )
        p.add_argument(
            "--rewards", choices=["plain", "shaped"], default=None, help="reward scheme (default plain)"
        )
        p.add_argument(
            "--window", type=int, default=1000, help="episodes per learning-curve point (default 1000)"
        )
        p.add_argument("--out", default=None, help="output folder (default runs/qlearning)")
        p.add_argument("--quiet", action="store_true", help="no progress bar")

    p = modes.add_parser(
        "train",
        help="train a Q-table",
        description="Tabular Q-learning against an opponent, "
        "playing both sides; saves the table and a learning-curve PNG.",
    )
    training(p, 50_000)
    p.set_defaults(run=lambda a: train(a) and 0)

    def matching(p: argparse.ArgumentParser, games: int) -> None:
        p.add_argument(
            "--mcts-playouts",
            type=int,
            default=10,
            help="playouts per move of the MCTS opponent (default 10)",
        )
        p.add_argument("--c", type=float, default=math.sqrt(2), help="its UCB1 constant (default sqrt 2)")
        p.add_argument(
            "--games", type=int, default=games, help=f"games, alternating who starts (default {games})"
        )

    p = modes.add_parser(
        "match",
        help="a saved Q-table against MCTS",
        description="A saved Q-table (on its own "
        "board size) against MCTS, alternating who starts; W/D/L per side with 95%% intervals.",
    )
    p.add_argument("--table", required=True, help="the .npz Q-table to load")
    p.add_argument("--seed", type=int, default=0, help="seed for both agents (default 0)")
    p.add_argument("--out", default=None, help="JSON results file (default: match.json beside the table)")
    matching(p, 200)
    p.set_defaults(run=match)

    p = modes.add_parser(
        "demo",
        help="a short train, then a match (what `make run` runs)",
        description="Train a Q-table briefly on 4x5 against MCTS(40), then play it against "
        "MCTS(10): about a minute on 2 cores.",
    )
    training(p, 40_000)
    matching(p, 200)
    p.set_defaults(run=demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "out", None) is None and args.mode == "train":
        args.out = "runs/qlearning"
    try:
        return int(args.run(args) or 0)
    except (ValueError, FileNotFoundError) as error:  # bad settings or files: say what, without a traceback
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
