"""Play Connect Four against an agent, or watch two agents: in a window or in the terminal.

    python scripts/play.py --player0 solver --player1 human

The command is `connect4_agents.commands.play`; ``--help`` shows its usage.
"""

from __future__ import annotations

import sys

from connect4_agents.commands.play import main

if __name__ == "__main__":
    sys.exit(main())
