"""connect4_v0.parallel_env(): PettingZoo's Parallel checkers, the wait convention's masks, the same games as the
AEC env and the rules core, illegal actions under both settings, bad input, seeding and copies."""

from __future__ import annotations

import copy
import pickle
import re
import warnings

import numpy as np
import pytest
from helpers.pettingzoo_games import SIZES, random_moves, size_id
from helpers.strategies import board_sizes
from hypothesis import given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test, parallel_api_test
from pettingzoo.test.seed_test import parallel_seed_test
from pettingzoo.test.state_test import test_parallel_env as pettingzoo_parallel_state_test
from pettingzoo.utils.conversions import parallel_to_aec

from connect4_env import Board, IllegalMoveError, Rules, connect4_v0
from connect4_env.encoding import observation_planes
from connect4_env.envs.parallel_env import Connect4ParallelEnv, IllegalActionWarning
from connect4_env.envs.pettingzoo_env import UnknownAgentError
from connect4_env.envs.wrappers import ResetNeededError

AGENTS = ("player_0", "player_1")


def wait_only(columns: int) -> np.ndarray:
    mask = np.zeros(columns + 1, dtype=np.int8)
    mask[columns] = 1
    return mask


def turn(env: Connect4ParallelEnv, column: int) -> dict[str, int]:
    """The actions of one move: ``column`` for the agent to move, wait for the other."""
    mover = AGENTS[env.board.ply % 2]
    return {agent: column if agent == mover else env.wait_action for agent in AGENTS}


def snapshot(env: Connect4ParallelEnv) -> tuple:
    return (list(env.agents), env.board.copy(), env.state(), env._game.mask.copy())


def assert_unchanged(env: Connect4ParallelEnv, before: tuple) -> None:
    agents, board, state, mask = before
    assert env.agents == agents
    assert env.board == board
    np.testing.assert_array_equal(env.state(), state)
    np.testing.assert_array_equal(env._game.mask, mask)


# -- PettingZoo's own checkers -----------------------------------------------------------------------------
@pytest.mark.parametrize("size", SIZES, ids=size_id)
@pytest.mark.parametrize("illegal_action", ["lose", "raise"])
def test_pettingzoo_parallel_checkers(size: dict, illegal_action: str) -> None:
    make = lambda: connect4_v0.parallel_env(illegal_action=illegal_action, **size)  # noqa: E731
    parallel_api_test(make(), num_cycles=1000)
    # samples every agent's action without its mask: under "raise" an illegal one would raise
    if illegal_action == "lose":
        parallel_seed_test(make)
    pettingzoo_parallel_state_test(make())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test's generic advice (dict observations, zero planes)
        api_test(parallel_to_aec(make()), num_cycles=200)


def test_parallel_env_is_native_and_not_a_conversion() -> None:
    env = connect4_v0.parallel_env()
    assert type(env) is Connect4ParallelEnv and env.unwrapped is env
    assert str(env) == "connect4_v0"
    assert env.possible_agents == list(AGENTS) and env.agents == []
    assert env.action_space("player_0").n == 8 and env.wait_action == 7
    assert env.observation_space("player_1")["action_mask"].shape == (8,)
    assert env.observation_space("player_0")["observation"].shape == (6, 7, 2)


# -- the wait convention -----------------------------------------------------------------------------------
def check_masks(env: Connect4ParallelEnv, observations: dict, infos: dict, over: bool) -> None:
    """The convention: the mover's mask is its legal columns, the other's (and both after the end) wait only."""
    columns = env.rules.columns
    legal = np.array(env.board.legal_mask(), dtype=np.int8)
    movers = [agent for agent in AGENTS if infos[agent]["to_move"]]
    assert movers == ([] if over else [AGENTS[env.board.ply % 2]])
    for agent in AGENTS:
        mask = observations[agent]["action_mask"]
        assert mask.dtype == np.int8 and mask.shape == (columns + 1,)
        assert mask.any(), f"{agent} got an all-zero mask"
        assert set(infos[agent]) == {"to_move", "illegal_action"}  # the mask only in the observation
        if agent in movers:
            assert mask[columns] == 0
            np.testing.assert_array_equal(mask[:columns], legal)
        else:
            np.testing.assert_array_equal(mask, wait_only(columns))


@settings(max_examples=60)
@given(size=board_sizes(), seed=st.integers(0, 2**32 - 1))
def test_no_mask_is_ever_all_zero(size: tuple[int, int, int], seed: int) -> None:
    rows, columns, win_length = size
    env = connect4_v0.parallel_env(rows=rows, columns=columns, win_length=win_length, illegal_action="raise")
    observations, infos = env.reset(seed=seed)
    check_masks(env, observations, infos, over=False)
    while env.agents:
        actions = {a: env.action_space(a).sample(observations[a]["action_mask"]) for a in env.agents}
        observations, rewards, terminations, truncations, infos = env.step(actions)
        over = env.board.is_terminal
        check_masks(env, observations, infos, over)
        assert set(observations) == set(rewards) == set(terminations) == set(truncations) == set(AGENTS)
        assert all(terminations[a] == over for a in AGENTS) and not any(truncations.values())


def test_a_masked_distribution_of_the_waiting_agent_is_a_point_mass() -> None:
    # what a masked softmax makes of the mask: all probability on wait, log-probability 0 (no gradient)
    env = connect4_v0.parallel_env()
    observations, _ = env.reset(seed=0)
    logits = np.random.default_rng(0).normal(size=8)
    for agent, total in (("player_0", 7), ("player_1", 1)):
        mask = observations[agent]["action_mask"].astype(bool)
        masked = np.where(mask, logits, -np.inf)
        probabilities = np.exp(masked - masked.max())
        probabilities /= probabilities.sum()
        assert np.isfinite(probabilities).all() and np.count_nonzero(probabilities) == total
    assert probabilities[7] == 1.0 and np.log(probabilities[7]) == 0.0


# -- the same games as the AEC env and the rules core ------------------------------------------------------
@settings(max_examples=40)
@given(size=board_sizes(), seed=st.integers(0, 2**32 - 1))
def test_games_equal_the_aec_env_and_the_rules_core(size: tuple[int, int, int], seed: int) -> None:
    rows, columns, win_length = size
    rules = Rules(rows, columns, win_length)
    moves = random_moves(seed, rows, columns, win_length)
    env = connect4_v0.parallel_env(rows=rows, columns=columns, win_length=win_length, illegal_action="raise")
    aec = connect4_v0.raw_env(rows=rows, columns=columns, win_length=win_length)
    observations, _ = env.reset()
    aec.reset()
    board = Board(rules)
    for i, column in enumerate(moves):
        mover = AGENTS[i % 2]
        assert aec.agent_selection == mover
        for index, agent in enumerate(AGENTS):
            planes = observations[agent]["observation"]
            np.testing.assert_array_equal(planes, aec.observe(agent)["observation"])
            np.testing.assert_array_equal(planes, observation_planes(board, index))
        np.testing.assert_array_equal(
            observations[mover]["action_mask"][:columns], aec.observe(mover)["action_mask"]
        )
        observations, rewards, terminations, truncations, _ = env.step(turn(env, column))
        aec.step(column)
        board.play(column)
        assert rewards == {agent: aec.rewards[agent] for agent in AGENTS}
        assert terminations == {agent: aec.terminations[agent] for agent in AGENTS}
        assert truncations == {agent: aec.truncations[agent] for agent in AGENTS}
        assert env.board == aec.board == board
        np.testing.assert_array_equal(env.state(), aec.state())
    assert board.is_terminal and env.agents == []
    expected = {agent: 0 for agent in AGENTS}
    if board.winner is not None:
        expected = {AGENTS[board.winner]: 1, AGENTS[1 - board.winner]: -1}
    assert rewards == expected and all(terminations.values())
    for index, agent in enumerate(AGENTS):
        np.testing.assert_array_equal(observations[agent]["observation"], observation_planes(board, index))


def test_a_win_and_a_draw() -> None:
    env = connect4_v0.parallel_env(rows=4, columns=4, win_length=3)
    env.reset()
    for column in (0, 1, 0, 1):
        _, rewards, terminations, _, infos = env.step(turn(env, column))
        assert rewards == {"player_0": 0, "player_1": 0} and not any(terminations.values())
    _, rewards, terminations, _, infos = env.step(turn(env, 0))
    assert env.board.to_ascii(column_numbers=False) == "\n".join([". . . .", "X . . .", "X O . .", "X O . ."])
    assert rewards == {"player_0": 1, "player_1": -1} and all(terminations.values())
    assert env.agents == [] and not infos["player_0"]["illegal_action"]

    draw = connect4_v0.parallel_env(rows=1, columns=2, win_length=2)
    draw.reset()
    draw.step(turn(draw, 0))
    _, rewards, terminations, _, _ = draw.step(turn(draw, 1))
    assert draw.board.to_ascii(column_numbers=False) == "X O"
    assert rewards == {"player_0": 0, "player_1": 0} and all(terminations.values()) and draw.agents == []


def test_a_random_masked_policy_plays_1000_games_without_an_error() -> None:
    env = connect4_v0.parallel_env(illegal_action="raise")
    outcomes = {"player_0": 0, "player_1": 0, "draw": 0}
    plies = 0
    for game in range(1000):
        observations, _ = env.reset(seed=game)
        while env.agents:
            actions = {a: env.action_space(a).sample(observations[a]["action_mask"]) for a in env.agents}
            observations, rewards, terminations, _, _ = env.step(actions)
            plies += 1
        assert all(terminations.values())
        winner = [agent for agent in AGENTS if rewards[agent] == 1]
        assert sorted(rewards.values()) in ([-1, 1], [0, 0])
        outcomes[winner[0] if winner else "draw"] += 1
    assert sum(outcomes.values()) == 1000
    assert outcomes["player_0"] > outcomes["player_1"] > 0  # the first mover's edge under random play
    assert 7 * 1000 <= plies <= 42 * 1000


# -- illegal actions ---------------------------------------------------------------------------------------
def full_column_env(illegal_action: str | None) -> Connect4ParallelEnv:
    """2x3, column 0 full, player_0 to move."""
    env = connect4_v0.parallel_env(rows=2, columns=3, win_length=3, illegal_action=illegal_action)
    env.reset()
    env.step(turn(env, 0))
    env.step(turn(env, 0))
    assert env.board.to_ascii(column_numbers=False) == "O . .\nX . ."
    return env


ILLEGAL = [
    # (player_0's action, player_1's action, who offends, message)
    (0, 3, ["player_0"], r"player_0 is to move and cannot play column 0: legal columns are \[1, 2\]"),
    (3, 3, ["player_0"], r"player_0 is to move and cannot wait: legal columns are \[1, 2\]"),
    (1, 2, ["player_1"], r"player_1 is not to move: its action must be 3 \(wait\), got 2"),
    (3, 1, ["player_0", "player_1"], "player_0 is to move and cannot wait"),
]


@pytest.mark.parametrize(("first", "second", "offenders", "message"), ILLEGAL)
def test_illegal_action_raise_names_it_and_changes_nothing(
    first: int, second: int, offenders: list[str], message: str
) -> None:
    env = full_column_env("raise")
    before = snapshot(env)
    with pytest.raises(IllegalMoveError, match=message):
        env.step({"player_0": first, "player_1": second})
    assert_unchanged(env, before)
    _, rewards, terminations, _, _ = env.step(turn(env, 1))  # the game goes on
    assert not any(terminations.values()) and env.board.ply == 3


@pytest.mark.parametrize(("first", "second", "offenders", "message"), ILLEGAL)
def test_illegal_action_lose_ends_the_game(
    first: int, second: int, offenders: list[str], message: str
) -> None:
    env = full_column_env("lose")
    board = env.board.copy()
    observations, rewards, terminations, truncations, infos = env.step(
        {"player_0": first, "player_1": second}
    )
    assert rewards == {agent: -1 if agent in offenders else 0 for agent in AGENTS}
    assert all(terminations.values()) and not any(truncations.values()) and env.agents == []
    assert {agent: infos[agent]["illegal_action"] for agent in AGENTS} == {a: a in offenders for a in AGENTS}
    assert env.board == board  # nothing was played
    for agent in AGENTS:
        np.testing.assert_array_equal(observations[agent]["action_mask"], wait_only(3))
    with pytest.raises(ResetNeededError, match="reset"):
        env.step({})


@pytest.mark.parametrize(("first", "second", "offenders", "message"), ILLEGAL)
def test_by_default_an_illegal_action_says_why_in_the_infos_and_warns(
    first: int, second: int, offenders: list[str], message: str
) -> None:
    env = full_column_env(None)
    with pytest.warns(IllegalActionWarning, match="action mask") as caught:
        _, rewards, terminations, _, infos = env.step({"player_0": first, "player_1": second})
    assert len(caught) == 1 and caught[0].filename == __file__  # it points at the caller's step
    assert rewards == {agent: -1 if agent in offenders else 0 for agent in AGENTS} and all(
        terminations.values()
    )
    assert [agent for agent in AGENTS if "illegal_reason" in infos[agent]] == offenders
    assert re.match(message, infos[offenders[0]]["illegal_reason"])
    for agent in offenders:
        assert infos[agent]["illegal_action"] and infos[agent]["illegal_reason"].startswith(agent)


def unmasked_episodes(env: Connect4ParallelEnv, episodes: int) -> list[tuple[int, dict, dict, set]]:
    """PettingZoo's Parallel usage loop, as its documentation gives it: every agent's action sampled without its
    mask, until ``agents`` is empty. Returns each episode's steps, last rewards, last infos and the sets of info
    keys seen at its reset and steps.
    """
    results = []
    for episode in range(episodes):
        observations, infos = env.reset(seed=episode)
        keys = {frozenset(infos[agent]) for agent in AGENTS}
        steps = 0
        while env.agents:
            # this is where you would insert your policy
            actions = {agent: env.action_space(agent).sample() for agent in env.agents}
            observations, rewards, terminations, truncations, infos = env.step(actions)
            keys |= {frozenset(infos[agent]) for agent in AGENTS}
            steps += 1
        results.append((steps, rewards, infos, keys))
    return results


def test_pettingzoos_parallel_loop_without_the_mask_warns_once_and_says_why() -> None:
    env = connect4_v0.parallel_env()
    hint = r"action_space\(agent\)\.sample\(observations\[agent\]\['action_mask'\]\)"
    with pytest.warns(IllegalActionWarning, match=hint) as caught:
        episodes = unmasked_episodes(env, 1000)
    assert len(caught) == 1  # once for the env, not once a game: 1,000 games ended on an illegal action
    assert "illegal_action='lose'" in str(caught[0].message)
    ended_illegally = 0
    for _, rewards, infos, _ in episodes:
        offenders = [agent for agent in AGENTS if infos[agent]["illegal_action"]]
        ended_illegally += bool(offenders)
        assert rewards == {agent: -1 if agent in offenders else 0 for agent in AGENTS}
        for agent in AGENTS:
            assert ("illegal_reason" in infos[agent]) == (agent in offenders)
        for agent in offenders:
            assert re.match(
                rf"{agent} is (to move and cannot|not to move: its action must be 7)",
                infos[agent]["illegal_reason"],
            )
    assert ended_illegally == 1000 and sum(episode[0] for episode in episodes) < 2000
    with pytest.warns(IllegalActionWarning):  # another env warns once of its own
        unmasked_episodes(connect4_v0.parallel_env(), 2)
    # PettingZoo's checkers with the default: the API test samples with the masks (no illegal action, no
    # warning), the seed test without them
    with warnings.catch_warnings():
        warnings.simplefilter("error", IllegalActionWarning)
        parallel_api_test(connect4_v0.parallel_env(), num_cycles=1000)
    with pytest.warns(IllegalActionWarning):
        parallel_seed_test(connect4_v0.parallel_env)


@pytest.mark.parametrize("illegal_action", ["lose", "raise"])
def test_a_chosen_illegal_action_rule_is_silent(illegal_action: str) -> None:
    env = connect4_v0.parallel_env(illegal_action=illegal_action)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails the test
        if illegal_action == "raise":
            env.reset(seed=0)
            with pytest.raises(IllegalMoveError, match="player_1 is not to move"):
                env.step({"player_0": 3, "player_1": 3})
            return
        episodes = unmasked_episodes(env, 200)
    # the same numeric keys at every reset and step, as TorchRL's wrapper needs
    assert set().union(*(keys for *_, keys in episodes)) == {frozenset({"to_move", "illegal_action"})}
    assert sum(any(infos[agent]["illegal_action"] for agent in AGENTS) for _, _, infos, _ in episodes) == 200


# -- bad input ---------------------------------------------------------------------------------------------
BAD_STEPS = [
    ([3, 7], TypeError, "dict of agent -> action"),
    (None, TypeError, "dict of agent -> action"),
    ({"player_0": 3}, ValueError, "no action for player_1.*wait action 7"),
    ({}, ValueError, "no action for player_0, player_1"),
    ({"player_0": 3, "player_1": 7, "player_2": 7}, UnknownAgentError, "'player_2'"),
    ({"player_0": 3, "player_1": 7, 0: 7}, TypeError, "agent must be one of"),
    ({"player_0": 3.0, "player_1": 7}, TypeError, "player_0: action 3.0"),
    ({"player_0": "3", "player_1": 7}, TypeError, "'3'"),
    ({"player_0": 3, "player_1": None}, TypeError, "player_1: action None"),
    ({"player_0": True, "player_1": 7}, TypeError, "True"),
    ({"player_0": np.array([3]), "player_1": 7}, TypeError, "array"),
    ({"player_0": 8, "player_1": 7}, ValueError, r"player_0's action 8 is outside Discrete\(8\)"),
    ({"player_0": 3, "player_1": -1}, ValueError, r"player_1's action -1 is outside"),
    ({"player_0": 10**400, "player_1": 7}, ValueError, "digits"),
]


@pytest.mark.parametrize("illegal_action", ["lose", "raise"])
@pytest.mark.parametrize(("actions", "error", "fragment"), BAD_STEPS)
def test_bad_steps_raise_and_change_nothing(
    actions: object, error: type, fragment: str, illegal_action: str
) -> None:
    env = connect4_v0.parallel_env(illegal_action=illegal_action)
    env.reset()
    for column in (3, 3, 4):
        env.step(turn(env, column))
    before = snapshot(env)
    with pytest.raises(error, match=fragment):
        env.step(actions)  # type: ignore[arg-type]
    assert_unchanged(env, before)
    env.step(turn(env, 4))
    assert env.board.ply == 4


def test_numpy_integers_and_0d_arrays_are_actions() -> None:
    env = connect4_v0.parallel_env()
    env.reset()
    env.step({"player_0": np.int64(3), "player_1": np.int8(7)})
    env.step({"player_0": np.array(7), "player_1": np.uint8(4)})
    assert env.board.heights[3] == 1 and env.board.heights[4] == 1


def test_step_before_reset_and_bad_arguments() -> None:
    env = connect4_v0.parallel_env()
    with pytest.raises(ResetNeededError, match="reset"):
        env.step({"player_0": 3, "player_1": 7})
    with pytest.raises(ValueError, match="illegal_action"):
        connect4_v0.parallel_env(illegal_action="ignore")
    with pytest.raises(TypeError):
        connect4_v0.parallel_env(rows=6.0)
    with pytest.raises(ValueError):
        connect4_v0.parallel_env(columns=0)
    with pytest.raises(ValueError, match="render_mode"):
        connect4_v0.parallel_env(render_mode="video")
    with pytest.raises(TypeError):
        env.reset(seed=1.5)
    with pytest.raises(ValueError):
        env.reset(seed=-1)
    with pytest.raises(UnknownAgentError, match="player_0"):
        env.action_space("player_2")
    with pytest.raises(TypeError):
        env.observation_space(None)  # type: ignore[arg-type]


# -- seeding, copies, rendering ----------------------------------------------------------------------------
def masked_trajectory(env: Connect4ParallelEnv, seed: int) -> list:
    observations, infos = env.reset(seed=seed)
    seen: list = [observations, infos]
    while env.agents:
        actions = {a: env.action_space(a).sample(observations[a]["action_mask"]) for a in env.agents}
        step = env.step(actions)
        observations = step[0]
        seen.append((actions, step))
    return seen


def assert_same(a: object, b: object) -> None:
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys()
        for key in a:
            assert_same(a[key], b[key])
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, type(a)) and len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    else:
        assert a == b


def test_seeded_games_are_reproducible() -> None:
    first = masked_trajectory(connect4_v0.parallel_env(), 7)
    assert_same(first, masked_trajectory(connect4_v0.parallel_env(), 7))
    env = connect4_v0.parallel_env()
    masked_trajectory(env, 3)
    assert_same(first, masked_trajectory(env, 7))  # a reseeded env forgets its past
    other = masked_trajectory(env, 8)
    assert [step[0] for step in first[2:]] != [step[0] for step in other[2:]]


def test_pickle_and_deepcopy_keep_the_position() -> None:
    for copy_of in (lambda env: pickle.loads(pickle.dumps(env)), copy.deepcopy):
        env = connect4_v0.parallel_env(rows=5, columns=6, win_length=4, illegal_action="raise")
        env.reset(seed=0)
        for column in (3, 3, 4):
            env.step(turn(env, column))
        restored = copy_of(env)
        assert restored.board == env.board and restored.agents == env.agents
        assert restored.illegal_action == "raise" and restored.wait_action == 6
        assert_same(restored.step(turn(restored, 5)), env.step(turn(env, 5)))
        restored.step(turn(restored, 0))
        assert env.board.ply == 4 and restored.board.ply == 5  # the copy has a board of its own


def test_render_modes_draw_the_board_as_the_aec_env() -> None:
    moves = [3, 3, 4, 2]
    env = connect4_v0.parallel_env(render_mode="ansi")
    aec = connect4_v0.raw_env(render_mode="ansi")
    env.reset()
    aec.reset()
    for column in moves:
        env.step(turn(env, column))
        aec.step(column)
    assert env.render() == aec.render()
    image = connect4_v0.parallel_env(rows=3, columns=4, win_length=3, render_mode="rgb_array", tile=10)
    image.reset()
    frame = image.render()
    assert isinstance(frame, np.ndarray) and frame.shape == (30, 40, 3) and frame.dtype == np.uint8
    image.close()
