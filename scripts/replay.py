"""Turn game records into one self-contained HTML replay (no network needed to open it).

    python scripts/replay.py games.jsonl -o replay.html

The command is `connect4_agents.commands.replay`; ``--help`` shows its usage.
"""

from __future__ import annotations

import sys

from connect4_agents.commands.replay import main

if __name__ == "__main__":
    sys.exit(main())
