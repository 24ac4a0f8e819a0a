"""`Connect4Text-v0` over OpenEnv, laid out as OpenEnv's own envs are: `models` (the wire format),
`environment` (what the server runs per session), `client` (OpenEnv's `EnvClient`, typed) and `server` (the
app, `create_app`), with `hardening` (the limits OpenEnv's server lacks) and `connections` (uvicorn's).
"""
