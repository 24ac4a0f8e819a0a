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
import inspect
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

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
from connect4_agents._support.config_cli import add_options, option
from connect4_agents.evaluation.matches import play_recorded_game, play_recorded_match, qtable_against_mcts
from connect4_agents.mcts.agent import MCTSAgent
from connect4_agents.qlearning.agent import QLearningAgent
from connect4_agents.qlearning.train import CURVE_JSON, CURVE_PNG, TABLE_FILE, train_and_save
from connect4_env import Board, Rules
from connect4_env.render import render_ansi

__all__ = [
    "MctsVsMctsConfig",
    "QLearningTrainConfig",
    "QTableMatchConfig",
    "DemoConfig",
    "MODE_CONFIGS",
    "build_parser",
    "run",
    "main",
]

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
# the Q-learning settings' own defaults, shown in the help where an option's None leaves the agent's in place
_AGENT_DEFAULTS = {
    name: str(value.default) for name, value in inspect.signature(QLearningAgent).parameters.items()
}


@dataclass
class _Board:
    """The board and the seed, which every mode takes."""

    rows: int = 4
    """Board rows."""
    columns: int = 5
    """Board columns."""
    win_length: int = 4
    """Stones in a line to win."""
    seed: int = 0
    """Seed of every agent."""


@dataclass
class MctsVsMctsConfig(_Board):
    """The options of ``connect4 match mcts-vs-mcts``."""

    rows: int = 6
    playouts0: int = field(default=1000, metadata=option(type=positive_int))
    """Playouts per move of the first player."""
    playouts1: int = field(default=1000, metadata=option(type=positive_int))
    """Playouts per move of the second player."""
    c0: float = math.sqrt(2)
    """UCB1 constant of the first player."""
    c1: float = 2.0
    """UCB1 constant of the second player; the default is the original project's."""
    games: int = field(default=1, metadata=option(type=positive_int))
    """Games to play (1: one game shown move by move)."""
    games_out: str | None = field(default=None, metadata=option(metavar="PATH"))
    """Game records, one JSON line per game with the search numbers (for ``connect4 replay``)."""


@dataclass
class QLearningTrainConfig(_Board):
    """The options of ``connect4 match train``."""

    opponent: str = "mcts:40"
    """The opponent: ``random``, ``mcts:<playouts>``, ``solver``, ``qlearning:<table>``, or ``self``."""
    episodes: int = field(default=50_000, metadata=option(type=positive_int))
    """Training games."""
    preset: Literal["default", "original"] = "default"
    """``original``: the original project's alpha 0.6, gamma 0.8, epsilon 0.1 and shaped rewards (the options
    below are then not used)."""
    alpha: float | None = field(default=None, metadata=option(shown_default=_AGENT_DEFAULTS["alpha"]))
    """Learning rate."""
    gamma: float | None = field(default=None, metadata=option(shown_default=_AGENT_DEFAULTS["gamma"]))
    """Discount."""
    epsilon: float | None = field(default=None, metadata=option(shown_default=_AGENT_DEFAULTS["epsilon"]))
    """Exploration at the start."""
    epsilon_min: float | None = field(
        default=None, metadata=option(shown_default=_AGENT_DEFAULTS["epsilon_min"])
    )
    """Exploration floor."""
    exploration_fraction: float | None = field(
        default=None, metadata=option(shown_default=_AGENT_DEFAULTS["exploration_fraction"])
    )
    """Share of the episodes over which epsilon falls linearly to its floor."""
    epsilon_decay: float | None = None
    """Instead: this factor per episode, whatever the budget (default: off)."""
    rewards: Literal["plain", "shaped"] | None = field(
        default=None, metadata=option(shown_default=_AGENT_DEFAULTS["rewards"])
    )
    """Reward scheme."""
    window: int = field(default=1000, metadata=option(type=positive_int))
    """Episodes per learning-curve point."""
    out: str | None = None
    """Output folder (default ``runs/qlearning``)."""
    quiet: bool = False
    """No progress bar."""


@dataclass
class _Match:
    """The MCTS opponent of a saved table, and the games it plays."""

    mcts_playouts: int = field(default=10, metadata=option(type=positive_int))
    """Playouts per move of the MCTS opponent."""
    c: float = math.sqrt(2)
    """Its UCB1 constant."""
    games: int = field(default=200, metadata=option(type=positive_int))
    """Games, alternating who starts."""
    games_out: str | None = field(default=None, metadata=option(metavar="PATH"))
    """Game records, one JSON line per game with the search numbers (for ``connect4 replay``)."""


@dataclass
class _Table:
    """The saved table a match plays, and where its results go."""

    table: str = field(default="", metadata=option(required=True))
    """The ``.npz`` Q-table to load."""
    seed: int = 0
    """Seed of both agents."""
    out: str | None = None
    """JSON results file (default: ``match.json`` beside the table)."""


@dataclass
class QTableMatchConfig(_Match, _Table):
    """The options of ``connect4 match match`` (a dataclass's fields come base first: the table's, then
    the match's).
    """


@dataclass
class DemoConfig(_Match, QLearningTrainConfig):
    """The options of ``connect4 match demo``: a training's, then a match's."""

    episodes: int = field(default=40_000, metadata=option(type=positive_int))
    out: str | None = None
    """Output folder of the table, its curve and ``match.json`` (default ``runs/demo``)."""


MODE_CONFIGS = {
    "mcts-vs-mcts": MctsVsMctsConfig,
    "train": QLearningTrainConfig,
    "match": QTableMatchConfig,
    "demo": DemoConfig,
}
"""Each mode's options, as a dataclass (see `connect4_agents.commands`)."""

# each mode's summary and description in the help
_MODE_HELP = {
    "mcts-vs-mcts": (
        "two MCTS agents play",
        "Two MCTS agents play: one game shown move by move with each search's table, or --games N with a "
        "W/D/L summary.",
    ),
    "train": (
        "train a Q-table",
        "Tabular Q-learning against an opponent, playing both sides; saves the table and a learning-curve PNG.",
    ),
    "match": (
        "a saved Q-table against MCTS",
        "A saved Q-table (on its own board size) against MCTS, alternating who starts; W/D/L per side with "
        "95% intervals.",
    ),
    "demo": (
        "a short train, then a match (what `make run` runs)",
        "Train a Q-table briefly on 4x5 against MCTS(40), then play it against MCTS(10).",
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
        add_options(modes.add_parser(mode, help=summary, description=description), config_class)
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
