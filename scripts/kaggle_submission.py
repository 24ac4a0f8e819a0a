"""Write a Kaggle ConnectX submission that plays one of our agents.

    python scripts/kaggle_submission.py mcts -o main.py

The command is `connect4_agents.commands.kaggle_submission`; ``--help`` shows its usage.
"""

from __future__ import annotations

import sys

from connect4_agents.commands.kaggle_submission import main

if __name__ == "__main__":
    sys.exit(main())
