"""The bundled commands, one module each, so that an installed wheel has them (``scripts/*.py`` only call them).

Each module has ``build_parser(parser=None)`` (fills a given parser, such as a subcommand's, or makes one),
``run(args)`` (the work, returning an exit code or None) and ``main(argv=None)`` (parse, then run through
:func:`connect4_agents._support.cli.run_cli`: ``error: ...`` and exit 2 for a user's mistake, 130 on
Ctrl-C). A command only builds its parser, calls one or two package functions and prints; the work itself
lives in the package (the families, :mod:`connect4_agents.evaluation`, :mod:`connect4_agents.ui`).

Modules are not imported here: ``train_alphazero`` loads torch and ``train_rllib`` runs ray, so importing this
package stays light and each command loads only what it needs.
"""

from __future__ import annotations

__all__ = ["COMMANDS"]

# module names, in the order a help text lists them
COMMANDS = (
    "play",
    "tournament",
    "evaluate",
    "train_sb3",
    "train_alphazero",
    "train_rllib",
    "replay",
    "make_test_sets",
    "mcts_vs_qlearning",
)
