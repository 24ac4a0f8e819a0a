"""A tournament between agents with Elo ratings: every pair plays N games, alternating who starts.

    python scripts/tournament.py random mcts:100 solver --games 20

The command is `connect4_agents.commands.tournament`; ``--help`` shows its usage.
"""

from __future__ import annotations

import sys

from connect4_agents.commands.tournament import main

if __name__ == "__main__":
    sys.exit(main())
