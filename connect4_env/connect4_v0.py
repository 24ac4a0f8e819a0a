"""PettingZoo-style module: ``connect4_v0.env()`` and ``connect4_v0.raw_env()`` (the AEC environment) and
``connect4_v0.parallel_env()`` (the Parallel one).
"""

from connect4_env.envs.parallel_env import parallel_env
from connect4_env.envs.pettingzoo_env import env, raw_env

__all__ = ["env", "raw_env", "parallel_env"]
