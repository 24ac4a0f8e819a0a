"""Train a Stable-Baselines3 baseline on Connect Four with the batched env, evaluate it, save it.

    python scripts/train_sb3.py --algo dqn --opponent mcts:50 --timesteps 500000

The command is `connect4_agents.commands.train_sb3`; ``--help`` shows its usage.
"""

from __future__ import annotations

import sys

from connect4_agents.commands.train_sb3 import main

if __name__ == "__main__":
    sys.exit(main())
