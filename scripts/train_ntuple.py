"""Train an n-tuple network by TD(lambda) self-play on 6x7 (60 CPU-minutes by default).

    python scripts/train_ntuple.py --cpu-minutes 10 --out runs/ntuple

The command is `connect4_agents.commands.train_ntuple`; ``--help`` shows its usage.
"""

from __future__ import annotations

import sys

from connect4_agents.commands.train_ntuple import main

if __name__ == "__main__":
    sys.exit(main())
