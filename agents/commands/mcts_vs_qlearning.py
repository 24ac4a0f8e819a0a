"""MCTS and tabular Q-learning for Connect Four: the original project's three modes, done right.

    python scripts/mcts_vs_qlearning.py mcts-vs-mcts               # one 6x5 game, every search shown
    python scripts/mcts_vs_qlearning.py mcts-vs-mcts --games 50    # a W/D/L summary instead
    python scripts/mcts_vs_qlearning.py train                       # Q-learning on 4x5 against MCTS(40)
    python scripts/mcts_vs_qlearning.py match --table runs/qlearning/qtable.npz   # the match mode: vs MCTS(10)
    python scripts/mcts_vs_qlearning.py demo                        # a short train, then a match (make run)

Outputs go under runs/<name>/: the Q-table (qtable.npz), the learning curve (curve.png, curve.json) and
match results (match.json). Ctrl-C during training saves the table trained so far (and its curve) and exits
130; output folders and files are checked before any work starts.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from pathlib import Path

from connect4_agents import policy_from_spec
from connect4_agents._support.cli import (
    check_output_dir,
    check_output_file,
    check_outputs_spare_inputs,
    command_parser,
    positive_int,
    run_cli,
    shown_path,
)
from connect4_agents.evaluation.matches import play_recorded_game, play_recorded_match, qtable_against_mcts
from connect4_agents.mcts.agent import MCTSAgent
from connect4_agents.qlearning.agent import QLearningAgent
from connect4_agents.qlearning.train import CURVE_JSON, CURVE_PNG, TABLE_FILE, train_and_save
from connect4_env import Board, Rules
from connect4_env.render import render_ansi

__all__ = ["build_parser", "run", "main"]

# the settings --preset default lets the user override, one option each
_SETTINGS = ("alpha", "gamma", "epsilon", "epsilon_min", "exploration_fraction", "epsilon_decay", "rewards")


def _records_written(path: Path) -> None:
    print(f"game records: {shown_path(path)}")


# -- modes -------------------------------------------------------------------------------------------------
def mcts_vs_mcts(args: argparse.Namespace) -> int:
    """Two MCTS agents: one game shown move by move, or a match with a W/D/L summary."""
    if args.games_out is not None:
        check_output_file(args.games_out)
    rules = Rules(args.rows, args.columns, args.win_length)
    names = (f"MCTS({args.playouts0}, c={args.c0:.3g})", f"MCTS({args.playouts1}, c={args.c1:.3g})")
    players = [
        MCTSAgent(playouts=args.playouts0, c=args.c0, seed=args.seed, rules=rules),
        MCTSAgent(playouts=args.playouts1, c=args.c1, seed=args.seed + 1, rules=rules),
    ]
    if args.games > 1:
        result = play_recorded_match(
            players[0],
            players[1],
            args.games,
            rules,
            names=names,
            seed=args.seed,
            games_out=args.games_out,
            on_records=_records_written,
        )
        print(result.table(*names))
        return 0

    def show(board: Board, player: int, column: int) -> None:
        print(
            f"move {board.ply}: {'XO'[player]} (MCTS {[args.playouts0, args.playouts1][player]} playouts) plays {column}"
        )
        search = players[player].last_search
        if search is not None:
            print(search.table())
        print(render_ansi(board))

    record = play_recorded_game(
        players, rules, names=names, seed=args.seed, on_move=show, games_out=args.games_out
    )
    print("draw" if record.winner is None else f"{'XO'[record.winner]} wins", f"in {len(record.moves)} moves")
    if args.games_out is not None:
        print(f"game record: {shown_path(args.games_out)}")
    return 0


def train(args: argparse.Namespace) -> Path:
    """Train a Q-table and save it with its curve; returns the table's path."""
    rules = Rules(args.rows, args.columns, args.win_length)
    if args.preset == "original":
        agent = QLearningAgent.original(rules, seed=args.seed)
    else:
        settings = {name: getattr(args, name) for name in _SETTINGS if getattr(args, name) is not None}
        agent = QLearningAgent(rules, seed=args.seed, **settings)
    opponent = (
        agent if args.opponent == "self" else policy_from_spec(args.opponent, seed=args.seed + 1, rules=rules)
    )
    out = check_output_dir(args.out or "runs/qlearning")
    print(f"training {agent!r} against {args.opponent} for {args.episodes:,} episodes -> {shown_path(out)}")
    try:
        trained = train_and_save(
            agent,
            opponent,
            args.episodes,
            out,
            opponent_name=args.opponent,
            window=args.window,
            progress=not args.quiet,
        )
    except KeyboardInterrupt:
        print(
            f"\ninterrupted after {agent.episodes_trained:,} episodes: saved {shown_path(out / TABLE_FILE)} "
            f"and {shown_path(out / CURVE_JSON)}",
            file=sys.stderr,
        )
        raise
    if trained.curve_png is None:
        print("matplotlib is not installed: no curve.png (pip install -e '.[train]')")
    curve, last = trained.curve, -1
    print(
        f"done in {trained.seconds:.1f} s: {len(agent.q):,} states; last {curve.window} episodes: "
        f"win {curve.win_rate[last]:.3f}, draw {curve.draw_rate[last]:.3f}, loss {curve.loss_rate[last]:.3f} "
        f"(epsilon {curve.epsilon[last]:.3f})"
    )
    saved = (trained.table, out / CURVE_PNG, out / CURVE_JSON)
    print(f"saved {', '.join(shown_path(path) for path in saved)}")
    return trained.table


def match(args: argparse.Namespace) -> int:
    """A saved Q-table against MCTS; the results printed and written as JSON."""
    out = check_output_file(args.out if args.out else Path(args.table).with_name("match.json"))
    if args.games_out is not None:
        check_output_file(args.games_out)
    outputs = {"--out": out, "--games-out": None if args.games_out is None else Path(args.games_out)}
    check_outputs_spare_inputs(outputs, [args.table])
    played = qtable_against_mcts(
        args.table,
        playouts=args.mcts_playouts,
        c=args.c,
        games=args.games,
        seed=args.seed,
        out=out,
        games_out=args.games_out,
        on_records=_records_written,
    )
    rules = played.rules
    print(f"board {rules.rows}x{rules.columns}, win_length {rules.win_length}")
    print(played.result.table("Q-table", f"MCTS({args.mcts_playouts})"))
    print(f"results written to {shown_path(played.out)}")
    return 0


def demo(args: argparse.Namespace) -> int:
    """A short training, then its table against MCTS (every output checked before the training)."""
    args.out = args.out or "runs/demo"
    check_output_file(Path(args.out) / "match.json")
    if args.games_out is not None:
        check_output_file(args.games_out)
    args.table = str(train(args))
    args.out = str(Path(args.out) / "match.json")
    return match(args)


def train_mode(args: argparse.Namespace) -> int:
    """The ``train`` mode: `train`, exit code 0."""
    train(args)
    return 0


MODES: dict[str, Callable[[argparse.Namespace], int]] = {
    "mcts-vs-mcts": mcts_vs_mcts,
    "train": train_mode,
    "match": match,
    "demo": demo,
}


# -- command line ------------------------------------------------------------------------------------------
def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The command's modes and their options, added to ``parser`` (a subcommand's) or to a new parser;
    returns it.
    """
    parser = command_parser(parser, __doc__)
    modes = parser.add_subparsers(dest="mode", required=True, metavar="MODE")

    def board(p: argparse.ArgumentParser, rows: int, columns: int) -> None:
        p.add_argument("--rows", type=int, default=rows, help=f"board rows (default {rows})")
        p.add_argument("--columns", type=int, default=columns, help=f"board columns (default {columns})")
        p.add_argument("--win-length", type=int, default=4, help="stones in a line to win (default 4)")
        p.add_argument("--seed", type=int, default=0, help="seed for every agent (default 0)")

    def games_out(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--games-out",
            metavar="PATH",
            default=None,
            help="game records, one JSON line per game with the search numbers (for scripts/replay.py)",
        )

    p = modes.add_parser(
        "mcts-vs-mcts",
        help="two MCTS agents play",
        description="Two MCTS agents play: one game "
        "shown move by move with each search's table, or --games N with a W/D/L summary.",
    )
    board(p, 6, 5)
    p.add_argument(
        "--playouts0",
        type=positive_int,
        default=1000,
        help="playouts per move of the first player (default 1000)",
    )
    p.add_argument(
        "--playouts1",
        type=positive_int,
        default=1000,
        help="playouts per move of the second player (default 1000)",
    )
    p.add_argument(
        "--c0", type=float, default=math.sqrt(2), help="UCB1 constant of the first player (default sqrt 2)"
    )
    p.add_argument(
        "--c1", type=float, default=2.0, help="UCB1 constant of the second player (default 2, the original's)"
    )
    p.add_argument(
        "--games", type=positive_int, default=1, help="games to play (default 1: shown move by move)"
    )
    games_out(p)

    def training(p: argparse.ArgumentParser, episodes: int) -> None:
        board(p, 4, 5)
        p.add_argument(
            "--opponent",
            default="mcts:40",
            help="random, mcts:<playouts>, solver, qlearning:<table>, or self (default mcts:40)",
        )
        p.add_argument(
            "--episodes", type=positive_int, default=episodes, help=f"training games (default {episodes:,})"
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
            "--window",
            type=positive_int,
            default=1000,
            help="episodes per learning-curve point (default 1000)",
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

    def matching(p: argparse.ArgumentParser, games: int) -> None:
        p.add_argument(
            "--mcts-playouts",
            type=positive_int,
            default=10,
            help="playouts per move of the MCTS opponent (default 10)",
        )
        p.add_argument("--c", type=float, default=math.sqrt(2), help="its UCB1 constant (default sqrt 2)")
        p.add_argument(
            "--games",
            type=positive_int,
            default=games,
            help=f"games, alternating who starts (default {games})",
        )
        games_out(p)

    p = modes.add_parser(
        "match",
        help="a saved Q-table against MCTS",
        description="A saved Q-table (on its own "
        "board size) against MCTS, alternating who starts; W/D/L per side with 95% intervals.",
    )
    p.add_argument("--table", required=True, help="the .npz Q-table to load")
    p.add_argument("--seed", type=int, default=0, help="seed for both agents (default 0)")
    p.add_argument("--out", default=None, help="JSON results file (default: match.json beside the table)")
    matching(p, 200)

    p = modes.add_parser(
        "demo",
        help="a short train, then a match (what `make run` runs)",
        description="Train a Q-table briefly on 4x5 against MCTS(40), then play it against "
        "MCTS(10): about a minute on 2 cores.",
    )
    training(p, 40_000)
    matching(p, 200)
    return parser


def run(args: argparse.Namespace) -> int:
    """Run the chosen mode.

    Raises:
        ValueError: a bad setting or a malformed table.
        TypeError: a setting of the wrong type.
        OSError: an unreadable table or an unwritable output path.
    """
    return MODES[args.mode](args)


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line) and run; returns the exit code."""
    return run_cli(run, build_parser().parse_args(argv))
