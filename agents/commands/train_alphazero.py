"""Train an AlphaZero-style agent by self-play.

    python scripts/train_alphazero.py --out runs/alphazero --generations 10
    python scripts/train_alphazero.py --out runs/alphazero --generations 10 --resume   # go on from the last one
    python scripts/train_alphazero.py --rows 4 --columns 5 --games 16 --simulations 25 --generations 2  # tiny

Each generation plays --games self-play games (--parallel of them searched together, --simulations per move),
adds their positions and mirror images to the replay buffer, and takes --steps training steps; then
out/model.zip (the model, loadable as alphazero:<path>), out/buffer.npz, out/state.json, a line of
out/log.csv, TensorBoard scalars (out/tensorboard) and the curve (out/curve.png) are written atomically, so Ctrl-C keeps the last finished generation (exit 130). After each
generation the model is measured on --eval-positions solver-scored positions of its board (6x7: 10 to 32
stones): the share of moves keeping the best outcome, raw policy and with --eval-simulations.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import TYPE_CHECKING

from connect4_agents._support.cli import check_output_dir, command_parser, config_values, run_cli
from connect4_agents.alphazero.config import AlphaZeroTrainConfig
from connect4_agents.evaluation.backends import BACKENDS
from connect4_env.extras import require

if TYPE_CHECKING:
    from connect4_agents.alphazero.monitor import GenerationLog

__all__ = ["build_parser", "run", "main"]

_HELP = {
    "rows": "board rows",
    "columns": "board columns",
    "win_length": "stones in a line to win",
    "channels": "feature maps of the network",
    "blocks": "residual blocks of the network",
    "generations": "generations to run (more with --resume)",
    "games": "self-play games per generation",
    "parallel": "games searched in lockstep (one network call per step for all of them; at most the games "
    "a worker plays)",
    "simulations": "PUCT simulations per self-play move",
    "c_puct": "PUCT's exploration weight",
    "dirichlet_alpha": "Dirichlet noise's alpha at the root",
    "noise": "weight of the root noise",
    "temperature_moves": "moves drawn in proportion to the visits at the start of a game",
    "buffer_size": "positions kept in the replay buffer (mirror images included)",
    "steps": "training steps per generation",
    "batch_size": "positions per training step",
    "lr": "Adam's learning rate",
    "weight_decay": "Adam's weight decay",
    "workers": "self-play processes",
    "eval_positions": "test-set positions measured after each generation (0: none)",
    "eval_simulations": "simulations per move in that measurement (0: the raw policy only)",
    "ladder_every": "on 6x7, play the reference ladder every this many generations (0: never)",
    "ladder_games": "games against each ladder agent (the model at 200 simulations a move)",
    "seed": "seed of self-play and sampling",
    "subtree_reuse": "keep the searched subtree of the move played as the next move's tree, and search only up to "
    "--simulations visits in all",
    "evaluation_cache": "network answers remembered by position within a generation's self-play (0: none)",
    "teacher": "where the targets come from: none (self-play's search) or solver (games labelled by the exact "
    "solver, its outcomes as targets; 6x7 with the book extra, or small boards)",
    "teacher_explore": "with --teacher solver: each game plays a random move with a probability drawn between 0 and "
    "this, else a best one",
    "init": "a model file the first weights are read from ('shipped': the 6x7 model shipped with the package; "
    "default: random weights); its board and network must be the run's",
    "device": "where the training steps run: auto (a CUDA GPU when torch sees one, else the CPU), cpu, cuda or "
    "cuda:N; self-play and the measurement stay on the CPU",
    "playout_cap": "share of self-play moves searched with --simulations (root noise, kept for training); the "
    "others get --fast-simulations, no noise, and are not kept (playout-cap randomisation; 1: every move)",
    "fast_simulations": "simulations of the fast searches when --playout-cap is below 1",
    "value_mix": "weight of the search's root value in the value target, the game's result having the rest "
    "(0: the result only)",
    "precision": "how self-play's forward passes compute: auto (bfloat16 where the CPU computes it natively, "
    "with AMX or AVX512-BF16, such as recent Xeons; else winograd where numba is installed; else float32), "
    "float32, winograd (float32 through Winograd convolutions: about 1.4x faster forward passes, needs the fast "
    "extra), or bfloat16 (emulated and many times slower on CPUs without it, and warns there)",
}


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The command's options (one per `AlphaZeroTrainConfig` field), added to ``parser`` (a
    subcommand's) or to a new parser; returns it.
    """
    parser = command_parser(parser, __doc__)
    for item in dataclasses.fields(AlphaZeroTrainConfig):
        default = item.default
        if isinstance(default, bool):  # --subtree-reuse / --no-subtree-reuse
            parser.add_argument(
                "--" + item.name.replace("_", "-"),
                action=argparse.BooleanOptionalAction,
                default=default,
                help=f"{_HELP[item.name]} (default {'on' if default else 'off'})",
            )
            continue
        parser.add_argument(
            "--" + item.name.replace("_", "-"),
            type=type(default),
            default=default,
            help=f"{_HELP[item.name]} (default {default})",
        )
    parser.add_argument("--out", default="runs/alphazero", help="output folder (default runs/alphazero)")
    parser.add_argument("--resume", action="store_true", help="go on from the model and buffer in --out")
    parser.add_argument(
        "--backend", choices=BACKENDS, default="process", help="self-play on processes or Ray"
    )
    parser.add_argument("--address", default=None, help="a Ray cluster's address (--backend ray)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def run(args: argparse.Namespace) -> int:
    """Train generation after generation, printing one line each.

    Raises:
        ValueError: a bad setting, an unwritable output folder, or files in ``--out`` that cannot resume.
        KeyboardInterrupt: Ctrl-C, after saying where the last finished generation is.
    """
    # torch only here, so that --help (and a connect4 subcommand's parser) works on a core install; through
    # require, so that a core install gets the extra's name instead of a traceback
    torch = require("torch", "train", "train-alphazero")
    require("matplotlib", "train", "train-alphazero")  # the curve is drawn after each generation
    from connect4_agents.alphazero.train import check_resumable, train

    torch.set_num_threads(1)  # the work is in worker processes and small batches: one thread each
    config = AlphaZeroTrainConfig(**config_values(AlphaZeroTrainConfig, args))
    config.check()  # every setting, then the folder: a refused run leaves no folder behind
    check_resumable(args.out, args.resume)
    out = check_output_dir(args.out)

    def report(log: GenerationLog) -> None:
        print(
            f"generation {log.generation}: {log.games} games ({log.games_per_hour:,.0f}/hour), "
            f"{log.positions} positions, buffer {log.buffer}, policy loss {log.policy_loss:.3f}, "
            f"value loss {log.value_loss:.3f}, training {log.train_seconds:.1f} s"
            + (
                f"; best outcome kept: raw policy {log.raw_accuracy:.1%} ({log.raw_nontrivial:.1%} non-trivial)"
                if log.raw_accuracy == log.raw_accuracy
                else ""
            )
            + (
                f", {config.eval_simulations} simulations {log.search_accuracy:.1%} "
                f"({log.search_nontrivial:.1%} non-trivial)"
                if log.search_accuracy == log.search_accuracy
                else ""
            )
            + (
                f"; Elo against the ladder {log.elo:.0f} ({log.elo_low:.0f}-{log.elo_high:.0f})"
                if log.elo == log.elo
                else ""
            ),
            flush=True,
        )

    try:
        path = train(
            config,
            out,
            resume=args.resume,
            on_generation=report,
            backend=args.backend,
            address=args.address,
            progress=not args.no_progress,
        )
    except KeyboardInterrupt:
        model = out / "model.zip"
        where = f"the last finished generation is in {model}" if model.exists() else "no generation finished"
        print(f"\ninterrupted: {where} (--resume goes on from it)", file=sys.stderr)
        raise
    print(f"model: {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line) and run; returns the exit code."""
    return run_cli(run, build_parser().parse_args(argv))
