"""Regenerate the shipped test sets: positions from random play with the exact score of every move.

    python scripts/make_test_sets.py --seed 0

The command is `connect4_agents.commands.make_test_sets`; ``--help`` shows its usage.
"""

from __future__ import annotations

import sys

from connect4_agents.commands.make_test_sets import main

if __name__ == "__main__":
    sys.exit(main())
