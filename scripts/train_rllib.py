"""PPO self-play with RLlib: one shared, action-masked policy for both seats, then games against the ladder.

    .venv-rllib/bin/python scripts/train_rllib.py --iterations 50

The command is `connect4_agents.commands.train_rllib`; ``--help`` shows its usage.
"""

from __future__ import annotations

import sys

from connect4_agents.commands.train_rllib import main

if __name__ == "__main__":
    sys.exit(main())
