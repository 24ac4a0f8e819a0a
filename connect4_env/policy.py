"""The policy boundary: what the environments ask of a policy, and how a policy receives the game's rules.

The environments never import ``agents``: they call any object that follows :class:`Policy`, and hand it
the game's :class:`~connect4_env.core.Rules` through :func:`bind_policy` before it plays.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from connect4_env.core import Rules

__all__ = ["Policy", "bind_policy"]


@runtime_checkable
class Policy(Protocol):
    """Anything that picks a column from an observation and an action mask.

    ``observation`` is the ``(rows, columns, 2)`` int8 planes from the mover's view (plane 0 = own stones,
    row 0 = top), as both environments produce; a PettingZoo ``{"observation", "action_mask"}`` dict is also
    accepted. ``action_mask`` has one 0/1 entry per column. ``act`` returns a legal column as a plain int.

    Optional:

    - ``bind(rules)``: receive the game's rules (board size and ``win_length``, which observations do not
      carry). Everything that runs a policy in a game calls it first (:func:`bind_policy`); a policy that
      cannot play those rules raises ``ValueError`` there.
    - ``reset(seed=None)`` before a game.
    - ``act_batch(observations, action_masks) -> columns`` for many games at once (the batched env uses it),
      and ``uses_observations = False`` for a policy that looks only at the masks (the batched env then
      passes ``observations=None``).
    """

    def act(self, observation: Any, action_mask: Any = None) -> int: ...


def bind_policy(policy: Any, rules: Rules) -> Any:
    """Give ``policy`` the game's rules through its ``bind(rules)``, if it has one; returns ``policy``.

    Raises:
        TypeError: ``rules`` is not a :class:`Rules`. ValueError: the policy cannot play these rules (its own
            ``bind`` says why).
    """
    if not isinstance(rules, Rules):
        raise TypeError(f"rules must be a connect4_env.Rules, got {type(rules).__name__}")
    bind = getattr(policy, "bind", None)
    if callable(bind):
        bind(rules)
    return policy
