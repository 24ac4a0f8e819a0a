"""MCTS against a learner: the n-tuple network on 6x7, or tabular Q-learning on 4x5, and MCTS against itself.

    python scripts/mcts_vs_qlearning.py demo                        # the shipped n-tuple network vs MCTS (make run)
    python scripts/mcts_vs_qlearning.py demo --cpu-minutes 5        # train a network for 5 CPU-minutes, then its match
    python scripts/mcts_vs_qlearning.py train                       # n-tuple TD(lambda) self-play on 6x7
    python scripts/mcts_vs_qlearning.py match --model runs/match-ntuple/model.npz   # a saved network vs MCTS
    python scripts/mcts_vs_qlearning.py demo --learner qlearning    # a short Q-learning run on 4x5, then its match
    python scripts/mcts_vs_qlearning.py train --learner qlearning   # Q-learning on 4x5 against MCTS(40)
    python scripts/mcts_vs_qlearning.py match --table runs/qlearning/qtable.npz   # a saved Q-table vs MCTS(10)
    python scripts/mcts_vs_qlearning.py mcts-vs-mcts                # one 6x5 game, every search shown

The learner's model goes under runs/<name>/ with its learning curve: the n-tuple network's model.npz,
checkpoint.npz, curve.csv and curve.png (as ``connect4 train-ntuple`` writes them; a run started again on the
same folder resumes), or the Q-table's qtable.npz, curve.png and curve.json; a match writes match.json. Ctrl-C
during training keeps what was trained (the n-tuple run's last checkpoint, the Q-table so far) and exits 130;
output folders and files are checked before any work starts.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from connect4_agents import policy_from_spec
from connect4_agents._support.cli import (
    check_output_dir,
    check_output_file,
    check_outputs_spare_inputs,
    command_parser,
    run_cli,
    shown_path,
    with_agent_specs,
)
from connect4_agents._support.config_cli import add_options
from connect4_agents.commands._match_options import DEMO_EPISODES, MODE_CONFIGS
from connect4_agents.evaluation.matches import (
    Learner,
    model_against_mcts,
    play_recorded_game,
    play_recorded_match,
)
from connect4_agents.mcts.agent import MCTSAgent
from connect4_agents.ntuple.run import NTupleTrainConfig, train_ntuple
from connect4_agents.qlearning.agent import QLearningAgent
from connect4_agents.qlearning.train import CURVE_JSON, CURVE_PNG, TABLE_FILE, train_and_save
from connect4_env import Board, Rules

__all__ = ["build_parser", "run", "main"]

# the settings --preset default lets the user override, one option each
_SETTINGS = ("alpha", "gamma", "epsilon", "epsilon_min", "exploration_fraction", "epsilon_decay", "rewards")
# every Q-learning option (None: not given), refused with --learner ntuple
_QLEARNING_ONLY = ("opponent", "preset", *_SETTINGS, "window")

# each learner's board, training budget, output folder and MCTS opponent where the option is not given: the
# n-tuple network learns the standard board; a Q-table only a small one (see docs/agents/qlearning.md)
_DEFAULTS: dict[str, dict[str, Any]] = {
    "ntuple": {
        "rows": 6,
        "columns": 7,
        "cpu_minutes": 10.0,
        "out": "runs/match-ntuple",
        "mcts_playouts": 1000,
    },
    "qlearning": {"rows": 4, "columns": 5, "episodes": 50_000, "out": "runs/qlearning", "mcts_playouts": 10},
}
_CURVE_POINTS, _CURVE_GAMES = 4, 10  # the n-tuple run's curve: points, and games against perfect play at each


def _default(args: argparse.Namespace, name: str) -> Any:
    """The option ``name``, or the learner's default where it was not given."""
    value = getattr(args, name)
    return _DEFAULTS[args.learner][name] if value is None else value


def _check_learner_options(args: argparse.Namespace) -> None:
    """Refuse a Q-learning option with ``--learner ntuple`` and ``--cpu-minutes`` with ``--learner qlearning``."""
    if args.learner == "ntuple":
        given = [name for name in _QLEARNING_ONLY if getattr(args, name) is not None]
        if given:
            flags = ", ".join("--" + name.replace("_", "-") for name in given)
            raise ValueError(
                f"{flags}: Q-learning option(s); add --learner qlearning (the n-tuple learner takes --cpu-minutes "
                "or --episodes here, and every setting in connect4 train-ntuple)"
            )
    elif args.cpu_minutes is not None:
        raise ValueError("--cpu-minutes trains the n-tuple learner; Q-learning trains for --episodes")


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
        print(board.to_ascii())  # 0-based, as the move above and the search table

    record = play_recorded_game(
        players, rules, names=names, seed=args.seed, on_move=show, games_out=args.games_out
    )
    print("draw" if record.winner is None else f"{'XO'[record.winner]} wins", f"in {len(record.moves)} moves")
    if args.games_out is not None:
        print(f"game record: {shown_path(args.games_out)}")
    return 0


def train_qtable(args: argparse.Namespace) -> Path:
    """Train a Q-table and save it with its curve; returns the table's path."""
    rules = Rules(_default(args, "rows"), _default(args, "columns"), args.win_length)
    if args.preset == "original":
        agent = QLearningAgent.original(rules, seed=args.seed)
    else:
        settings = {name: getattr(args, name) for name in _SETTINGS if getattr(args, name) is not None}
        agent = QLearningAgent(rules, seed=args.seed, **settings)
    opponent_spec = args.opponent or "mcts:40"
    opponent = (
        agent if opponent_spec == "self" else policy_from_spec(opponent_spec, seed=args.seed + 1, rules=rules)
    )
    out = check_output_dir(_default(args, "out"))
    episodes = _default(args, "episodes")
    print(f"training {agent!r} against {opponent_spec} for {episodes:,} episodes -> {shown_path(out)}")
    try:
        trained = train_and_save(
            agent,
            opponent,
            episodes,
            out,
            opponent_name=opponent_spec,
            window=args.window or 1000,
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


def train_network(args: argparse.Namespace) -> Path:
    """Train an n-tuple network by TD(lambda) self-play (`train_ntuple`, a short curve, no final games) and
    save it with its curve; returns the model's path.
    """
    out = check_output_dir(_default(args, "out"))
    config = NTupleTrainConfig(
        cpu_minutes=None if args.episodes is not None else _default(args, "cpu_minutes"),
        games=args.episodes,
        out=str(out),
        rows=_default(args, "rows"),
        columns=_default(args, "columns"),
        win_length=args.win_length,
        seed=args.seed,
        curve_points=_CURVE_POINTS,
        curve_games=_CURVE_GAMES,
        final_games=0,
        progress=not args.quiet,
    )
    config.check()
    model, _, _ = train_ntuple(config, say=print)
    written = [model] + [
        out / name for name in ("checkpoint.npz", "curve.csv", "curve.png") if (out / name).exists()
    ]
    print(f"saved {', '.join(shown_path(path) for path in written)}")
    if not (out / "curve.png").exists():
        print("matplotlib is not installed: no curve.png (pip install -e '.[train]')")
    return model


def train(args: argparse.Namespace) -> Path:
    """Train the chosen learner and save its model with its curve; returns the model's path.

    Raises:
        ValueError: another learner's option, or a bad setting.
    """
    _check_learner_options(args)
    return train_network(args) if args.learner == "ntuple" else train_qtable(args)


def _learner_and_model(args: argparse.Namespace) -> tuple[Learner, str | None]:
    """The learner whose model the match plays: a Q-table with ``--table``, else an n-tuple network."""
    if args.table is not None and args.model is not None:
        raise ValueError("give --model (an n-tuple network) or --table (a Q-table), not both")
    return ("qlearning", args.table) if args.table is not None else ("ntuple", args.model)


def match(args: argparse.Namespace) -> int:
    """A saved model against MCTS; the results printed and written as JSON."""
    learner, model = _learner_and_model(args)
    default_out = Path("runs/match/match.json") if model is None else Path(model).with_name("match.json")
    out = check_output_file(args.out if args.out else default_out)
    if args.games_out is not None:
        check_output_file(args.games_out)
    outputs = {"--out": out, "--games-out": None if args.games_out is None else Path(args.games_out)}
    check_outputs_spare_inputs(outputs, [model])
    playouts = args.mcts_playouts or _DEFAULTS[learner]["mcts_playouts"]
    played = model_against_mcts(
        learner,
        model,
        playouts=playouts,
        c=args.c,
        games=args.games,
        seed=args.seed,
        out=out,
        games_out=args.games_out,
        on_records=_records_written,
    )
    rules = played.rules
    name = "Q-table" if learner == "qlearning" else "n-tuple" if model is not None else "n-tuple (shipped)"
    print(f"board {rules.rows}x{rules.columns}, win_length {rules.win_length}")
    print(played.result.table(name, f"MCTS({playouts})"))
    print(f"results written to {shown_path(played.out)}")
    return 0


_NEXT = """\
try next:
  connect4 play --player0 human --player1 ntuple --ui terminal   # play the network yourself
  connect4 match demo --cpu-minutes 5                 # train a network of your own first, then its match
  connect4 match match --games 100 --mcts-playouts 100   # the shipped network over 100 games
  connect4 match demo --learner qlearning             # tabular Q-learning, on 4x5 where a table can learn
  connect4 train-ntuple --help                        # the learner's every setting"""


def demo(args: argparse.Namespace) -> int:
    """The shipped n-tuple network against MCTS on 6x7, or a short training (the n-tuple learner's with
    ``--cpu-minutes`` / ``--episodes``; Q-learning's always), then its model against MCTS (every output
    checked before the training).
    """
    _check_learner_options(args)
    folder = Path(args.out or "runs/demo")
    check_output_file(folder / "match.json")
    if args.games_out is not None:
        check_output_file(args.games_out)
    trains = args.learner == "qlearning" or args.cpu_minutes is not None or args.episodes is not None
    args.model = args.table = None
    if trains:
        args.out = str(folder)
        if args.learner == "qlearning" and args.episodes is None:
            args.episodes = DEMO_EPISODES
        trained = str(train(args))
        if args.learner == "ntuple":
            args.model = trained
        else:
            args.table = trained
    args.out = str(folder / "match.json")
    code = match(args)
    print(_NEXT)
    return code


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


# -- command line (each mode's options: connect4_agents.commands._match_options) -------------------------

# each mode's summary and description in the help
_MODE_HELP = {
    "mcts-vs-mcts": (
        "two MCTS agents play",
        "Two MCTS agents play: one game shown move by move with each search's table, or --games N with a "
        "W/D/L summary.",
    ),
    "train": (
        "train the n-tuple learner (6x7) or a Q-table (4x5)",
        "The n-tuple learner by TD(lambda) self-play on 6x7 (--cpu-minutes), or, with --learner qlearning, "
        "tabular Q-learning on 4x5 against an opponent, playing both sides (--episodes); saves the model and "
        "its learning curve.",
    ),
    "match": (
        "a saved model against MCTS",
        "A saved n-tuple network (--model; default the shipped 6x7 one) or Q-table (--table) against MCTS on "
        "the model's own board size, alternating who starts; W/D/L per side with 95% intervals.",
    ),
    "demo": (
        "the shipped n-tuple network against MCTS (what `make run` runs)",
        "The shipped n-tuple network against MCTS(1000) on 6x7, or a network trained first for --cpu-minutes "
        "or --episodes; with --learner qlearning, a short Q-learning run on 4x5 against MCTS(40), then its "
        "table against MCTS(10).",
    ),
}


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The command's modes and their options (one per field of the mode's dataclass in `MODE_CONFIGS`),
    added to ``parser`` (a subcommand's) or to a new parser; returns it.
    """
    parser = command_parser(parser, __doc__)
    modes = parser.add_subparsers(dest="mode", required=True, metavar="MODE")
    for mode, config_class in MODE_CONFIGS.items():
        summary, description = _MODE_HELP[mode]
        sub = add_options(modes.add_parser(mode, help=summary, description=description), config_class)
        if "opponent" in {item.name for item in dataclasses.fields(config_class)}:  # Q-learning's: any spec
            with_agent_specs(sub)
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
