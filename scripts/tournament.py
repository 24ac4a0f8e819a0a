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
the ratings in --ladder PATH (a --json file of an earlier tournament).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any

from connect4_agents._support.cli import check_output_file, positive_int, run_cli
from connect4_agents._support.files import atomic_write_json
from connect4_agents.evaluation.arena import TournamentResult, pairing_line
from connect4_agents.evaluation.backends import BACKENDS
from connect4_agents.evaluation.ratings import REFERENCE_LADDER, fit_ratings, read_ratings
from connect4_agents.evaluation.records import write_games
from connect4_agents.evaluation.tournament import game_logs, pairing_counts, run_tournament

from connect4_env import Rules


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("agents", nargs="*", help="agent specs (two or more; with --gauntlet, the ladder)")
    parser.add_argument("--games", type=positive_int, default=20, help="games per pairing (default 20)")
    parser.add_argument("--rows", type=int, default=6)
    parser.add_argument("--columns", type=int, default=7)
    parser.add_argument("--win-length", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0, help="seeds every game (default 0)")
    parser.add_argument("--gauntlet", metavar="SPEC", default=None, help="play SPEC against the ladder only")
    parser.add_argument("--ladder", metavar="PATH", default=None, help="fixed ladder ratings (a --json file)")
    parser.add_argument("--anchor", default="random", help="the agent rated 0 (default random)")
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


def tournament(args: argparse.Namespace) -> int:
    out = check_output_file(args.json) if args.json else None
    plot = check_output_file(args.plot) if args.plot else None
    games_out = check_output_file(args.games_out) if args.games_out else None
    rules = Rules(args.rows, args.columns, args.win_length)
    fixed: dict[str, float] | None = None
    specs = list(args.agents)
    if args.gauntlet is not None:
        if args.ladder is None and (rules.rows, rules.columns, rules.win_length) != (6, 7, 4):
            raise ValueError("the reference ladder is rated on 6x7: pass --ladder PATH for another board")
        ladder = read_ratings(args.ladder or REFERENCE_LADDER)
        specs = specs or list(ladder)
        unrated = [s for s in specs if s not in ladder]
        if unrated:
            raise ValueError(f"ladder agents without a rating in the ladder file: {unrated}")
        fixed = {s: ladder[s] for s in specs}
    elif len(specs) < 2:
        raise ValueError("give at least two agents (or --gauntlet SPEC)")
    result = TournamentResult()
    games: list[Any] = []

    def write(finished: bool) -> None:
        if games_out is not None:
            write_games(
                games_out, game_logs(sorted(games, key=lambda g: (g.pairing, g.game)), rules, args.seed)
            )
        if out is None:
            return
        data: dict[str, Any] = {
            "rows": rules.rows,
            "columns": rules.columns,
            "win_length": rules.win_length,
            "games_per_pairing": args.games,
            "seed": args.seed,
            "finished": finished,
        }
        if result.pairings:
            # an interrupted run's finished games may not link every player yet: then no ratings
            with contextlib.suppress(ValueError):
                data.update(rate(result, fixed, args).to_dict())
        data.update(result.to_dict())
        data["games"] = [g.to_dict() for g in sorted(games, key=lambda g: (g.pairing, g.game))]
        atomic_write_json(out, data)

    try:
        run_tournament(
            specs,
            args.games,
            rules,
            seed=args.seed,
            gauntlet=args.gauntlet,
            backend=args.backend,
            workers=args.workers,
            address=args.address,
            progress=not args.no_progress,
            result=result,
            on_pairing=lambda a, b, match: print(pairing_line(a, b, match), flush=True),
            games=games,
            record_search=games_out is not None,
        )
    except KeyboardInterrupt:
        write(finished=False)
        for path in (out, games_out):
            if path is not None:
                print(f"\ninterrupted: the finished games are in {path}", file=sys.stderr)
        raise
    ratings = rate(result, fixed, args)
    print("\n" + ratings.table())
    write(finished=True)
    if games_out is not None:
        print(f"game records: {games_out} (python scripts/replay.py {games_out} -o replay.html)")
    if plot is not None:
        ratings.plot(str(plot))
        print(f"plot: {plot}")
    return 0


def rate(result: TournamentResult, fixed: dict[str, float] | None, args: argparse.Namespace) -> Any:
    return fit_ratings(
        pairing_counts(result), anchor=args.anchor, fixed=fixed, bootstrap=args.bootstrap, seed=args.seed
    )


def main(argv: list[str] | None = None) -> int:
    return run_cli(tournament, build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
