"""The APIs this package *is*, on the core install: Gymnasium (single, flat, text, vector), PettingZoo (AEC and
Parallel) and their wrappers, built on the rules core at the package root.

Import from the modules (`connect4_env.envs.gym_env`, ...) or from the package root, which re-exports the public
names; this package root imports nothing so that a module here loads only what it needs.
"""
