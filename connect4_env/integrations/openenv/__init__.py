"""OpenEnv on the env side, laid out as OpenEnv's own envs are: `environment` (the models, the environment and its
client), `server` (the HTTP app), with `websocket` (the `/ws` route), `sessions` (the games it holds) and `guards`
(what a network client may send).
"""
