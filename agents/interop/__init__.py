"""Adapters that let our policies play in other ecosystems and other ecosystems' policies play here.

One module each, each importing its optional dependency only when used: `kaggle` (Kaggle ConnectX
agents, with `kaggle_position` reading Kaggle's call, `kaggle_endgame` its endgame solver and `kaggle_loading`
the background loading that keeps a cold start off the move path; `kaggle_submission` writes their
submission file),
[`openspiel`][connect4_agents.interop.openspiel] (OpenSpiel bots both ways), `text` (a ``str -> str``
function, such as a language model, as a policy), `torch_policy` (a torch network trained elsewhere, played
with the action mask).
"""

from __future__ import annotations
