"""Strength against perfect play: W/D/L as first player and plies survived as second, against the solver.

    python scripts/perfect.py alphazero:0 --games 50

The command is `connect4_agents.commands.perfect`; ``--help`` shows its usage.
"""

from __future__ import annotations

import sys

from connect4_agents.commands.perfect import main

if __name__ == "__main__":
    sys.exit(main())
