"""PettingZoo-style module for the AEC environment: ``connect4_v0.env()`` and ``connect4_v0.raw_env()``."""

from connect4_env.envs.pettingzoo_env import env, raw_env

__all__ = ["env", "raw_env"]
