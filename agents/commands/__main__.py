"""``python -m connect4_agents.commands``: the ``connect4`` command without its installed launcher."""

from __future__ import annotations

import sys

from connect4_agents.commands import main

if __name__ == "__main__":
    sys.exit(main())
