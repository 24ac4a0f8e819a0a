"""Serve Connect4Text-v0 to language models over HTTP, as an OpenEnv environment server.

    python scripts/serve_openenv.py --opponent solver --port 8001

The command is `connect4_agents.commands.serve_openenv`; ``--help`` shows its usage.
"""

from __future__ import annotations

import sys

from connect4_agents.commands.serve_openenv import main

if __name__ == "__main__":
    sys.exit(main())
