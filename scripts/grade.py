"""Grade a player by perfect play: its games against an opponent and its moves on the test sets.

    python scripts/grade.py mcts:10 --games 10

The command is `connect4_agents.commands.grade`; ``--help`` shows its usage.
"""

from __future__ import annotations

import sys

from connect4_agents.commands.grade import main

if __name__ == "__main__":
    sys.exit(main())
