"""MCTS and tabular Q-learning for Connect Four: the original project's three modes, done right.

    python scripts/mcts_vs_qlearning.py demo

The command is `connect4_agents.commands.mcts_vs_qlearning`; ``--help`` shows its usage.
"""

from __future__ import annotations

import sys

from connect4_agents.commands.mcts_vs_qlearning import main

if __name__ == "__main__":
    sys.exit(main())
