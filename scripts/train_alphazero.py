"""Train an AlphaZero-style agent by self-play.

    python scripts/train_alphazero.py --out runs/alphazero --generations 10

The command is `connect4_agents.commands.train_alphazero`; ``--help`` shows its usage.
"""

from __future__ import annotations

import sys

from connect4_agents.commands.train_alphazero import main

if __name__ == "__main__":
    sys.exit(main())
