"""Adapters that let our policies play in other ecosystems and other ecosystems' policies play here.

One module each, each importing its optional dependency only when used: :mod:`.kaggle` (Kaggle ConnectX
agents; :mod:`.kaggle_submission` writes their submission file),
:mod:`.openspiel` (OpenSpiel bots both ways), :mod:`.text` (a ``str -> str`` function,
such as a language model, as a policy), :mod:`.torch_policy` (a torch network trained elsewhere, played with the
action mask).
"""

from __future__ import annotations
