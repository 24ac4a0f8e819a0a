"""Our fast-path subclasses of PettingZoo's wrappers behave exactly like the stock wrappers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pettingzoo.utils import wrappers as pz_wrappers

from connect4_env import connect4_v0


def stock_env(**kwargs):
    env = connect4_v0.raw_env(**kwargs)
    env = pz_wrappers.TerminateIllegalWrapper(env, illegal_reward=-1)
    env = pz_wrappers.AssertOutOfBoundsWrapper(env)
    return pz_wrappers.OrderEnforcingWrapper(env)


def outcome(env, action):
    """What a step does: the exception type it raised, or None."""
    try:
        env.step(action)
    except Exception as error:  # noqa: BLE001 - comparing behaviour, whatever it is
        return type(error)
    return None


def snapshot(env):
    obs, reward, termination, truncation, info = env.last()
    return (
        env.agent_selection,
        obs["observation"].tolist(),
        obs["action_mask"].tolist(),
        reward,
        termination,
        truncation,
        dict(env.rewards),
        dict(env.terminations),
        list(env.agents),
    )


@settings(max_examples=150, deadline=None)
@given(
    actions=st.lists(
        st.one_of(st.integers(-1, 5), st.none(), st.sampled_from([np.int64(1), np.array(2), 1.5])),
        max_size=40,
    ),
    observe_first=st.lists(st.booleans(), min_size=40, max_size=40),
)
def test_fast_wrappers_match_stock_wrappers(actions: list, observe_first: list[bool]) -> None:
    ours, theirs = (
        connect4_v0.env(rows=3, columns=4, win_length=3),
        stock_env(rows=3, columns=4, win_length=3),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours.reset()
        theirs.reset()
        for action, observe in zip(actions, observe_first):
            if not ours.agents:
                break
            if observe:  # last() before step records the mask TerminateIllegalWrapper checks against
                assert snapshot(ours) == snapshot(theirs)
            mine, stock = outcome(ours, action), outcome(theirs, action)
            # the same exception, or a subclass of it (ours are also TypeError / ValueError and name the actions)
            assert mine is stock is None or (None not in (mine, stock) and issubclass(mine, stock))
            if ours.agents or theirs.agents:
                assert snapshot(ours) == snapshot(theirs)


def test_reads_before_reset_fail_as_in_pettingzoo() -> None:
    env = connect4_v0.env()
    with pytest.raises(AttributeError, match="before reset"):
        _ = env.agent_selection
    with pytest.raises(AttributeError, match="before reset"):
        _ = env.terminations


@pytest.mark.parametrize(
    ("action", "kind"),
    [(9, ValueError), (-1, ValueError), (3.0, TypeError), ("3", TypeError), (True, TypeError)],
)
def test_an_action_outside_the_space_is_an_assertion_error_as_pettingzoos_and_names_the_actions(
    action: object, kind: type[Exception]
) -> None:
    from connect4_env import connect4_v0

    env = connect4_v0.env()
    env.reset(seed=0)
    before = env.observe("player_0")["observation"].copy()
    with pytest.raises(AssertionError, match=r"is not in the action space: actions are .*0\.\.6") as caught:
        env.step(action)
    assert isinstance(caught.value, kind)  # TypeError for a non-integer, ValueError out of range
    assert env.agent_selection == "player_0" and (env.observe("player_0")["observation"] == before).all()
    env.step(np.int64(3))  # numpy integers are actions, as in Discrete.contains
    assert env.agent_selection == "player_1"
