"""MCTS against a learner: the n-tuple network on 6x7, or tabular Q-learning on 4x5, and MCTS against itself.

    connect4 match demo                        # the shipped n-tuple network vs MCTS (make run)
    connect4 match demo --cpu-minutes 5        # train a network for 5 CPU-minutes, then its match
    connect4 match train                       # n-tuple TD(lambda) self-play on 6x7
    connect4 match match --model runs/match-ntuple/model.npz   # a saved network vs MCTS
    connect4 match demo --learner qlearning    # a short Q-learning run on 4x5, then its match
    connect4 match train --learner qlearning   # Q-learning on 4x5 against MCTS(40)
    connect4 match match --table runs/qlearning/qtable.npz   # a saved Q-table vs MCTS(10)
    connect4 match mcts-vs-mcts                # one 6x5 game, every search shown

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
    shown_path,
)
from connect4_agents._support.config_cli import config_parser, run_config
from connect4_agents.commands._match_options import (
    DEFAULTS,
    DEMO_EPISODES,
    MODE_CONFIGS,
    SETTINGS,
    DemoConfig,
    MatchConfig,
    MctsVsMctsConfig,
    TrainConfig,
)
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
from connect4_env import Board

__all__ = ["build_parser", "run", "main"]

_CURVE_POINTS, _CURVE_GAMES = 4, 10  # the n-tuple run's curve: points, and games against perfect play at each


def _default(config: Any, name: str) -> Any:
    """The setting ``name``, or the learner's default where it was not given."""
    value = getattr(config, name)
    return DEFAULTS[config.learner][name] if value is None else value


def _records_written(path: Path) -> None:
    print(f"game records: {shown_path(path)}")


# -- modes -------------------------------------------------------------------------------------------------
def mcts_vs_mcts(config: MctsVsMctsConfig) -> int:
    """Two MCTS agents: one game shown move by move, or a match with a W/D/L summary."""
    if config.games_out is not None:
        check_output_file(config.games_out)
    rules = config.rules
    names = (f"MCTS({config.playouts0}, c={config.c0:.3g})", f"MCTS({config.playouts1}, c={config.c1:.3g})")
    players = [
        MCTSAgent(playouts=config.playouts0, c=config.c0, seed=config.seed, rules=rules),
        MCTSAgent(playouts=config.playouts1, c=config.c1, seed=config.seed + 1, rules=rules),
    ]
    if config.games > 1:
        result = play_recorded_match(
            players[0],
            players[1],
            config.games,
            rules,
            names=names,
            seed=config.seed,
            games_out=config.games_out,
            on_records=_records_written,
        )
        print(result.table(*names))
        return 0

    def show(board: Board, player: int, column: int) -> None:
        playouts = [config.playouts0, config.playouts1][player]
        print(f"move {board.ply}: {'XO'[player]} (MCTS {playouts} playouts) plays {column}")
        search = players[player].last_search
        if search is not None:
            print(search.table())
        print(board.to_ascii())  # 0-based, as the move above and the search table

    record = play_recorded_game(
        players, rules, names=names, seed=config.seed, on_move=show, games_out=config.games_out
    )
    print("draw" if record.winner is None else f"{'XO'[record.winner]} wins", f"in {len(record.moves)} moves")
    if config.games_out is not None:
        print(f"game record: {shown_path(config.games_out)}")
    return 0


def train_qtable(config: TrainConfig) -> Path:
    """Train a Q-table and save it with its curve; returns the table's path."""
    rules = config.learner_rules
    if config.preset == "original":
        agent = QLearningAgent.original(rules, seed=config.seed)
    else:
        settings = {name: getattr(config, name) for name in SETTINGS if getattr(config, name) is not None}
        agent = QLearningAgent(rules, seed=config.seed, **settings)
    opponent_spec = config.opponent or "mcts:40"
    opponent = (
        agent
        if opponent_spec == "self"
        else policy_from_spec(opponent_spec, seed=config.seed + 1, rules=rules)
    )
    out = check_output_dir(_default(config, "out"))
    episodes = _default(config, "episodes")
    print(f"training {agent!r} against {opponent_spec} for {episodes:,} episodes -> {shown_path(out)}")
    try:
        trained = train_and_save(
            agent,
            opponent,
            episodes,
            out,
            opponent_name=opponent_spec,
            window=config.window or 1000,
            progress=not config.quiet,
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


def train_network(config: TrainConfig) -> Path:
    """Train an n-tuple network by TD(lambda) self-play (`train_ntuple`, a short curve, no final games) and
    save it with its curve; returns the model's path.

    Raises:
        TypeError: a setting of the wrong type.
        ValueError: a setting out of range.
    """
    out = check_output_dir(_default(config, "out"))
    settings = NTupleTrainConfig(
        cpu_minutes=None if config.episodes is not None else _default(config, "cpu_minutes"),
        games=config.episodes,
        out=str(out),
        rows=config.learner_rules.rows,
        columns=config.learner_rules.columns,
        win_length=config.win_length,
        seed=config.seed,
        curve_points=_CURVE_POINTS,
        curve_games=_CURVE_GAMES,
        final_games=0,
        progress=not config.quiet,
    )
    settings.check()
    model, _, _ = train_ntuple(settings, say=print)
    written = [model] + [
        out / name for name in ("checkpoint.npz", "curve.csv", "curve.png") if (out / name).exists()
    ]
    print(f"saved {', '.join(shown_path(path) for path in written)}")
    if not (out / "curve.png").exists():
        print("matplotlib is not installed: no curve.png (pip install -e '.[train]')")
    return model


def train(config: TrainConfig) -> Path:
    """Train the chosen learner and save its model with its curve; returns the model's path."""
    return train_network(config) if config.learner == "ntuple" else train_qtable(config)


def match(config: MatchConfig) -> int:
    """A saved model against MCTS; the results printed and written as JSON."""
    learner: Learner = "qlearning" if config.table is not None else "ntuple"
    model = config.table if config.table is not None else config.model
    default_out = Path("runs/match/match.json") if model is None else Path(model).with_name("match.json")
    out = check_output_file(config.out if config.out else default_out)
    if config.games_out is not None:
        check_output_file(config.games_out)
    outputs = {"--out": out, "--games-out": None if config.games_out is None else Path(config.games_out)}
    check_outputs_spare_inputs(outputs, [model])
    playouts = config.mcts_playouts or DEFAULTS[learner]["mcts_playouts"]
    played = model_against_mcts(
        learner,
        model,
        playouts=playouts,
        c=config.c,
        games=config.games,
        seed=config.seed,
        out=out,
        games_out=config.games_out,
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


def demo(config: DemoConfig) -> int:
    """The shipped n-tuple network against MCTS on 6x7, or a short training (the n-tuple learner's with
    ``--cpu-minutes`` / ``--episodes``; Q-learning's always), then its model against MCTS (every output
    checked before the training).
    """
    folder = Path(config.out or "runs/demo")
    check_output_file(folder / "match.json")
    if config.games_out is not None:
        check_output_file(config.games_out)
    model = table = None
    if config.learner == "qlearning" or config.cpu_minutes is not None or config.episodes is not None:
        episodes = config.episodes
        if config.learner == "qlearning" and episodes is None:
            episodes = DEMO_EPISODES
        trained = str(train(dataclasses.replace(config, out=str(folder), episodes=episodes)))
        model, table = (trained, None) if config.learner == "ntuple" else (None, trained)
    shared = {name: getattr(config, name) for name in ("seed", "mcts_playouts", "c", "games", "games_out")}
    code = match(MatchConfig(model=model, table=table, out=str(folder / "match.json"), **shared))
    print(_NEXT)
    return code


def train_mode(config: TrainConfig) -> int:
    """The ``train`` mode: `train`, exit code 0."""
    train(config)
    return 0


MODES: dict[type, Callable[[Any], int]] = {
    MctsVsMctsConfig: mcts_vs_mcts,
    TrainConfig: train_mode,
    MatchConfig: match,
    DemoConfig: demo,
}
"""Each mode's work, by the config its options build."""


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
        sub = modes.add_parser(mode, help=summary, description=description)
        specs = "opponent" in {item.name for item in dataclasses.fields(config_class)}  # Q-learning: any spec
        config_parser(config_class, None, sub, agent_specs=specs)
    return parser


def run(config: MctsVsMctsConfig | TrainConfig | MatchConfig | DemoConfig) -> int:
    """Run the mode whose config ``config`` is.

    Raises:
        ValueError: a bad spec, a malformed table or an unwritable output path.
        TypeError: a spec of the wrong type.
        OSError: an unreadable table or an unwritable output path.
    """
    return MODES[type(config)](config)


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line), build the mode's config and run; returns the exit code."""
    args = build_parser().parse_args(argv)
    return run_config(run, MODE_CONFIGS[args.mode], args)
