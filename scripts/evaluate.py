"""Accuracy against perfect play: each agent's move in every position of the test sets, scored by the solver.

    python scripts/evaluate.py random mcts:1000

The command is `connect4_agents.commands.evaluate`; ``--help`` shows its usage.
"""

from __future__ import annotations

import sys

from connect4_agents.commands.evaluate import main

if __name__ == "__main__":
    sys.exit(main())
