"""The agents' name for `connect4_env.extras`: one error for a missing optional dependency, naming its extra.

The class is defined in the env layer (the envs raise it too), so ``except MissingExtraError`` catches both.
"""

from __future__ import annotations

from connect4_env.extras import MissingExtraError, require

__all__ = ["MissingExtraError", "require"]
