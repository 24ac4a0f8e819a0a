"""A tournament between agents with Elo ratings: every pair plays N games, alternating who starts.

    python scripts/tournament.py random mcts:100 solver --games 20
    python scripts/tournament.py random mcts:10 mcts:100 mcts:1000 --games 100 --json ladder.json --plot ladder.png
    python scripts/tournament.py --gauntlet sb3:runs/sb3/model.zip --games 40      # against the reference ladder
    python scripts/tournament.py random mcts:100 --backend ray --address auto       # on a running Ray cluster
    python scripts/tournament.py mcts:100 solver --games 4 --games-out games.jsonl  # records for replay.py

Agent specs: random, solver, mcts:<playouts>, mcts:<seconds>s, qlearning:<table.npz>, sb3:<model.zip>.
Prints each pairing's W/D/L (from the first-named agent's side) with a 95 % interval on its score, then
Bradley-Terry Elo ratings (draws count half a point) with 95 % bootstrap intervals, anchored at random = 0
(or at --anchor). The same --seed plays the same games on any backend and number of workers. Ctrl-C stops
the workers and still writes the finished games to --json and --games-out.

--gauntlet SPEC plays SPEC against each ladder agent only, and rates it against the ladder's fixed ratings:
the reference ladder shipped for 6x7 (random, mcts:10 ... mcts:10000, solver) when no agents are named, or
the ratings in --ladder PATH (a --json file of an earlier tournament). Those ratings set the scale, so
--anchor is refused with --gauntlet.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from connect4_agents._support.cli import (
    check_output_file,
    check_outputs_spare_inputs,
    command_parser,
    positive_int,
    run_cli,
    spec_files,
)
from connect4_agents._support.figures import check_figure_path
from connect4_agents._support.progress import write_line
from connect4_agents.evaluation.backends import BACKENDS
from connect4_agents.evaluation.rated_tournament import gauntlet_ratings, run_rated_tournament
from connect4_agents.evaluation.tournament import pairing_line
from connect4_env import Rules
from connect4_env.extras import require

__all__ = ["build_parser", "run", "main"]


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The command's options, added to ``parser`` (a subcommand's) or to a new parser; returns it."""
    parser = command_parser(parser, __doc__)
    parser.add_argument("agents", nargs="*", help="agent specs (two or more; with --gauntlet, the ladder)")
    parser.add_argument("--games", type=positive_int, default=20, help="games per pairing (default 20)")
    parser.add_argument("--rows", type=int, default=6)
    parser.add_argument("--columns", type=int, default=7)
    parser.add_argument("--win-length", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0, help="seeds every game (default 0)")
    parser.add_argument("--gauntlet", metavar="SPEC", default=None, help="play SPEC against the ladder only")
    parser.add_argument("--ladder", metavar="PATH", default=None, help="fixed ladder ratings (a --json file)")
    parser.add_argument(
        "--anchor",
        default=None,
        help="the agent rated 0 (default random; not with --gauntlet: its ladder fixes them)",
    )
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap samples (default 1000)")
    parser.add_argument("--backend", choices=BACKENDS, default="process", help="process pool here, or Ray")
    parser.add_argument("--workers", type=positive_int, default=None, help="worker processes (default: CPUs)")
    parser.add_argument("--address", default=None, help="a Ray cluster's address (--backend ray)")
    parser.add_argument("--json", metavar="PATH", default=None, help="write ratings, pairings and games here")
    parser.add_argument("--out", dest="json", help=argparse.SUPPRESS)  # the earlier name of --json
    parser.add_argument(
        "--games-out",
        metavar="PATH",
        default=None,
        help="game records, one JSON line per game with the search numbers (for scripts/replay.py)",
    )
    parser.add_argument("--plot", metavar="PATH", default=None, help="ratings and head-to-head picture")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def run(args: argparse.Namespace) -> int:
    """Play, print each pairing as it ends and the ratings, write the files asked for.

    Raises:
        ValueError: fewer than two agents, a bad spec or ladder, --anchor with --gauntlet.
        TypeError: a spec of the wrong type.
        OSError: an unreadable ladder or an unwritable output path.
    """
    if args.gauntlet is not None and args.anchor is not None:
        # a gauntlet is rated on the ladder's fixed scale, so that its Elo compares with the ladder's
        raise ValueError(
            f"--anchor {args.anchor} does not apply to --gauntlet: its ratings are on the scale the ladder's "
            "fixed ratings set; leave --anchor out"
        )
    out = check_output_file(args.json) if args.json is not None else None
    plot = check_output_file(check_figure_path("--plot", Path(args.plot))) if args.plot is not None else None
    games_out = check_output_file(args.games_out) if args.games_out is not None else None
    named = [path.resolve() for path in (out, plot, games_out) if path is not None]
    if len(set(named)) < len(named):  # one file would overwrite the other
        raise ValueError("--json, --games-out and --plot must name different files")
    check_outputs_spare_inputs(
        {"--json": out, "--plot": plot, "--games-out": games_out},
        [*spec_files([*args.agents, args.gauntlet or ""]), args.ladder],
    )
    # the optional steps' dependencies are checked before any game is played, so none is lost to them
    require("scipy", "train", "the tournament's rating fit")
    if plot is not None:
        require("matplotlib", "train", "--plot")
    if args.backend == "ray":
        require("ray", "distributed", "--backend ray")
    rules = Rules(args.rows, args.columns, args.win_length)
    fixed: dict[str, float] | None = None
    specs = list(args.agents)
    if args.gauntlet is not None:
        specs, fixed = gauntlet_ratings(specs, rules, args.ladder)
    elif len(specs) < 2:
        raise ValueError("give at least two agents (or --gauntlet SPEC)")
    try:
        ratings = run_rated_tournament(
            specs,
            args.games,
            rules,
            seed=args.seed,
            gauntlet=args.gauntlet,
            fixed=fixed,
            anchor="random" if args.anchor is None else args.anchor,
            bootstrap=args.bootstrap,
            backend=args.backend,
            workers=args.workers,
            address=args.address,
            progress=not args.no_progress,
            json_out=out,
            games_out=games_out,
            on_pairing=lambda a, b, match: write_line(pairing_line(a, b, match)),
        )
    except KeyboardInterrupt:
        for path in (out, games_out):
            if path is not None:
                print(f"\ninterrupted: the finished games are in {path}", file=sys.stderr)
        raise
    print("\n" + ratings.table())
    if games_out is not None:
        print(f"game records: {games_out} (python scripts/replay.py {games_out} -o replay.html)")
    if plot is not None:
        ratings.plot(str(plot))
        print(f"plot: {plot}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line) and run; returns the exit code."""
    return run_cli(run, build_parser().parse_args(argv))
