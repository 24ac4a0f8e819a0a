"""Our game in another library's shape: one module (or folder) per library, each behind its extra and the only
place in `connect4_env` that imports that library.

- `sb3`: the batched env as a Stable-Baselines3 `VecEnv` (the `train` extra).
- `rllib`: an RLlib multi-agent env (the `rllib` extra).
- `openspiel`: OpenSpiel states both ways and our rules as a pyspiel game (the `openspiel` extra).
- `openenv`: `Connect4Text-v0` as an OpenEnv environment, its client and its HTTP/WebSocket server (the
  `openenv` extra).

Nothing in the rules core or in `connect4_env.envs` imports a module here.
"""
