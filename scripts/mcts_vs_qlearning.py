"""The bundled match program that ``make run`` runs: ``connect4 match`` with the arguments given.

``connect4 match --help`` shows its modes (``demo``, ``train``, ``match``, ``mcts-vs-mcts``) and options.
"""

from __future__ import annotations

import sys

from connect4_agents.commands import main

if __name__ == "__main__":
    sys.exit(main(["match", *sys.argv[1:]]))
