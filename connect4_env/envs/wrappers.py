"""PettingZoo's standard classic-game wrappers, with the common case made direct.

PettingZoo's ``BaseWrapper.__getattr__`` forwards every read of ``agent_selection``, ``terminations``, ... one
wrapper at a time, and each wrapper adds frames to every ``step``/``observe``: together they cost more than a
whole Connect Four move. These subclasses

- answer those reads straight from the unwrapped env: the same values the chain returns (no wrapper overrides
  them), including the ``AttributeError`` before ``reset()``;
- take a fast path for the everyday call (a legal in-range ``int`` action, a live game, after ``reset``) that
  does exactly what the parent's code does in that case, and hand every other call to the parent.

``tests/env/envs/test_wrappers.py`` plays random games, illegal moves included, through these and through the
stock wrappers and checks that every ``last()`` agrees.
"""

from __future__ import annotations

import operator
from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from connect4_env.rules import as_column, short_repr

__all__ = [
    "OrderEnforcingWrapper",
    "AssertOutOfBoundsWrapper",
    "TerminateIllegalWrapper",
    "wrap_classic",
    "ActionTypeError",
    "ActionOutOfBoundsError",
    "ResetNeededError",
]

_FORWARDED = (
    "agent_selection",
    "agents",
    "terminations",
    "truncations",
    "rewards",
    "infos",
    "_cumulative_rewards",
)


def _forward(name: str) -> property:
    # attrgetter runs in C: no Python frame per read.
    return property(operator.attrgetter(f"_raw.{name}"), doc=f"``{name}`` of the unwrapped env.")


class _DirectAttributes:
    _raw: AECEnv

    def _bind_raw(self) -> None:
        self._raw = self.unwrapped  # type: ignore[attr-defined]


for _name in _FORWARDED:
    setattr(_DirectAttributes, _name, _forward(_name))


class TerminateIllegalWrapper(_DirectAttributes, wrappers.TerminateIllegalWrapper):
    """PettingZoo's ``TerminateIllegalWrapper``: a move that the mover's last action mask forbids ends the
    game, the mover getting ``illegal_reward`` and the other agent 0; attribute reads go straight to the
    unwrapped env.

    Args:
        env: the AEC env to wrap; its observations are dicts with an ``action_mask``.
        illegal_reward: the reward of an agent that makes an illegal move.
    """

    def __init__(self, env: AECEnv, illegal_reward: float) -> None:
        super().__init__(env, illegal_reward)
        self._bind_raw()

    def observe(self, agent: Any) -> Any:
        """``agent``'s observation from the wrapped env; for the agent to move it is also kept, as
        PettingZoo's wrapper keeps it, for the next
        `step` to read its mask.
        """
        obs = self.env.observe(agent)
        raw = self._raw
        if agent == raw.agent_selection:
            self._prev_obs = obs
            self._prev_info = raw.infos.get(agent, {})
        return obs

    def step(self, action: Any) -> None:
        """Pass a move its mask allows to the wrapped env; on a forbidden move end the game with
        ``illegal_reward`` for the mover (PettingZoo's ``step``, the wrapped env's errors passing through).
        """
        prev_obs = self._prev_obs
        raw = self._raw
        agent = raw.agent_selection
        if (
            type(action) is int
            and prev_obs is not None
            and not self._terminated
            and not raw.terminations[agent]
            and not raw.truncations[agent]
            and 0 <= action < len(prev_obs["action_mask"])
            and prev_obs["action_mask"][action]
        ):
            # A legal move in a live game: the parent clears its record and steps the inner env.
            self._prev_obs = None
            self._prev_info = None
            self.env.step(action)
        else:
            super().step(action)


class AssertOutOfBoundsWrapper(_DirectAttributes, wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's ``AssertOutOfBoundsWrapper``: an action outside the mover's ``Discrete`` space is refused
    before it reaches the env, with an error that names the allowed actions; attribute reads go straight to
    the unwrapped env.

    Args:
        env: the AEC env to wrap; every agent's action space is ``Discrete``.
    """

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._bind_raw()
        self._n_actions = {agent: self.action_space(agent).n for agent in self.possible_agents}  # type: ignore[attr-defined]

    def step(self, action: Any) -> None:
        """Pass ``action`` to the wrapped env if it is in the mover's action space (or None for an agent whose
        game is over).

        Raises:
            ActionTypeError: ``action`` is not an integer (an AssertionError and a TypeError).
            ActionOutOfBoundsError: ``action`` is an integer outside ``0..n - 1`` for ``Discrete(n)`` (an
                AssertionError and a ValueError).
        """
        # Plain in-range ints pass the same check the parent makes, without building a numpy scalar.
        agent = self._raw.agent_selection
        if type(action) is int and 0 <= action < self._n_actions[agent]:
            self.env.step(action)
            return
        if not (action is None and (self._raw.terminations[agent] or self._raw.truncations[agent])):
            _check_action(action, self._n_actions[agent])
        super().step(action)


class ActionTypeError(AssertionError, TypeError):
    """An action that is not an integer (a float, a string, a bool, an array): a TypeError, and an
    AssertionError as PettingZoo's ``AssertOutOfBoundsWrapper`` raises.
    """


class ActionOutOfBoundsError(AssertionError, ValueError):
    """An integer action outside ``Discrete(columns)``: a ValueError, and an AssertionError as PettingZoo's
    ``AssertOutOfBoundsWrapper`` raises.
    """


class ResetNeededError(AssertionError, RuntimeError):
    """A call that needs a game before ``reset()`` started one: a RuntimeError, and an AssertionError as
    PettingZoo's ``OrderEnforcingWrapper`` raises.
    """


def _check_action(action: Any, n_actions: int) -> None:
    """Raise what PettingZoo's assertion would (an AssertionError), as a TypeError or ValueError that names the
    action and the actions allowed.
    """
    try:
        column = as_column(action)
    except TypeError:
        raise ActionTypeError(
            f"action {short_repr(action)} is not in the action space: actions are the integers 0..{n_actions - 1}"
        ) from None
    if not 0 <= column < n_actions:
        raise ActionOutOfBoundsError(
            f"action {column} is not in the action space: actions are 0..{n_actions - 1}"
        )


class OrderEnforcingWrapper(_DirectAttributes, wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper``: calls that need a game refuse to run before ``reset()``,
    reading ``agents``, ``rewards``, ``terminations``, ... before it raises ``AttributeError``, and a ``step``
    after every agent has left only warns; the other attribute reads go straight to the unwrapped env.

    Args:
        env: the AEC env to wrap.
    """

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._bind_raw()

    def step(self, action: Any) -> None:
        """Step the wrapped env (PettingZoo's ``step``); once every agent has left, only warn, as PettingZoo
        does.

        Raises:
            ResetNeededError: ``reset()`` has not been called.
        """
        if self._has_reset and self._raw.agents:
            self._has_updated = True
            self.env.step(action)
        else:
            self._require_reset("step()")
            super().step(action)

    def observe(self, agent: Any) -> Any:
        """``agent``'s observation from the wrapped env (PettingZoo's ``observe``).

        Raises:
            ResetNeededError: ``reset()`` has not been called.
        """
        if self._has_reset:
            return self.env.observe(agent)
        self._require_reset("observe()")
        return super().observe(agent)

    def last(self, observe: bool = True) -> Any:
        """PettingZoo's ``last``: ``(observation, cumulative reward, termination, truncation, info)`` of the
        agent to act (the observation None when ``observe`` is false).

        Raises:
            ResetNeededError: ``reset()`` has not been called, or the game is over and every agent has left.
        """
        self._require_reset("last()")
        if self._raw.agent_selection not in self._raw.terminations:  # both agents took their dead steps
            raise ResetNeededError("the game is over and every agent has left: call reset() to play again")
        return super().last(observe)

    def state(self) -> Any:
        """The wrapped env's global state (PettingZoo's ``state``).

        Raises:
            ResetNeededError: ``reset()`` has not been called.
        """
        self._require_reset("state()")
        return super().state()

    def render(self) -> Any:
        """The wrapped env's rendering (PettingZoo's ``render``).

        Raises:
            ResetNeededError: ``reset()`` has not been called.
        """
        self._require_reset("render()")
        return super().render()

    def _require_reset(self, call: str) -> None:
        if not self._has_reset:
            raise ResetNeededError(f"call reset() before {call}: no game has started")


def wrap_classic(env: AECEnv, illegal_reward: float = -1) -> AECEnv:
    """Wrap as PettingZoo's classic envs do: terminate-illegal, assert-out-of-bounds, order-enforcing."""
    env = TerminateIllegalWrapper(env, illegal_reward=illegal_reward)
    env = AssertOutOfBoundsWrapper(env)
    return OrderEnforcingWrapper(env)
