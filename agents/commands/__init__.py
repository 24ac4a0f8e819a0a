"""The bundled commands, one module each, so that an installed wheel has them.

Each module has ``CONFIG``, the dataclass its options are declared in (one field each, its docstring the help;
``match``'s modes have one each, in ``MODE_CONFIGS``), which checks every setting when it is built;
``build_parser(parser=None)`` (fills a given parser, such as a subcommand's, or makes one, from that dataclass
alone through `connect4_agents._support.config_cli.add_options`), ``run(config)`` (the work on a built config,
returning an exit code or None) and ``main(argv=None)`` (parse, build the config, run, all through
`connect4_agents._support.cli.run_cli`: ``error: ...`` and exit 2 for a user's mistake, 130 on Ctrl-C). A
command only builds its parser, calls one or two package functions and prints; the work itself lives in the
package (the families, `connect4_agents.evaluation`, `connect4_agents.ui`).

`main` is the ``connect4`` command (``[project.scripts]``; also ``python -m connect4_agents.commands``): it
mounts every module's parser as a subcommand (``connect4 play ...``, ``connect4 match train ...``) and runs the
chosen one on its config through ``run_cli``. Importing this package imports no command; `build_parser`
imports them all, and none imports an optional dependency before its ``run`` (torch, SB3, ray, pygame,
matplotlib, scipy, numba stay out), so ``connect4 <command> --help`` works on a core install.
"""

from __future__ import annotations

import argparse
import importlib
from types import ModuleType

from connect4_agents._support.cli import CommandParser
from connect4_agents._support.config_cli import run_config
from connect4_env import __version__

__all__ = ["COMMANDS", "SUBCOMMANDS", "build_parser", "main"]

# module names, in the order a help text lists them
COMMANDS = (
    "play",
    "tournament",
    "evaluate",
    "grade",
    "audit",
    "perfect",
    "exploit",
    "train_sb3",
    "train_alphazero",
    "train_rllib",
    "train_ntuple",
    "replay",
    "kaggle_submission",
    "make_test_sets",
    "mcts_vs_qlearning",
    "serve_openenv",
    "serve_grader",
)

# the name each module answers to under ``connect4`` (the bundled MCTS vs Q-learning program is ``match``)
SUBCOMMANDS = {
    module: "match" if module == "mcts_vs_qlearning" else module.replace("_", "-") for module in COMMANDS
}
_DEST = "connect4_command"  # a name no command's own options use


def _command_module(module: str) -> ModuleType:
    return importlib.import_module(f"{__name__}.{module}")


def _summary(doc: str) -> str:
    """The help line of a command: its docstring's first line, up to the first colon (the rest details it)."""
    first = doc.strip().splitlines()[0] if doc.strip() else ""
    return first.split(": ")[0].rstrip(".")


def build_parser() -> argparse.ArgumentParser:
    """The ``connect4`` parser: ``--version`` and one subcommand per module of `COMMANDS`, each filled by
    the module's own ``build_parser``, its help the module's docstring.

    Returns:
        A new `argparse.ArgumentParser` whose parsed namespace names the command to run (see `main`).
    """
    parser = CommandParser(
        prog="connect4",
        description="Connect Four for reinforcement learning: play, train and measure agents.",
        epilog="connect4 <command> --help describes each command.",
    )
    parser.add_argument("--version", action="version", version=f"connect4-env {__version__}")
    commands = parser.add_subparsers(dest=_DEST, metavar="<command>", title="commands", required=True)
    for module_name in COMMANDS:
        module = _command_module(module_name)
        name = SUBCOMMANDS[module_name]
        doc = module.__doc__ or ""
        module.build_parser(
            commands.add_parser(
                name,
                help=_summary(doc),
                description=doc,
                formatter_class=argparse.RawDescriptionHelpFormatter,
            )
        )
    return parser


def main(argv: list[str] | None = None) -> int:
    """The ``connect4`` command: parse ``argv`` (default: the command line), then run the chosen command.

    Returns:
        The command's exit code: 0 when it worked, 2 after ``error: ...`` for a bad value or file (argparse's
        own usage errors exit 2 too, through SystemExit), 130 on Ctrl-C, 143 on SIGTERM.

    Raises:
        SystemExit: from argparse, for ``--help``, ``--version`` (code 0) or a usage error (code 2).
    """
    args = build_parser().parse_args(argv)
    module_name = next(module for module, name in SUBCOMMANDS.items() if name == getattr(args, _DEST))
    module = _command_module(module_name)
    modes = getattr(module, "MODE_CONFIGS", None)  # match: one config per mode
    return run_config(module.run, module.CONFIG if modes is None else modes[args.mode], args)
