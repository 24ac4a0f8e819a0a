"""connect4_v0: PettingZoo's own checkers, connect_four_v3 compatibility, bad input, rewards, pickling."""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest
from helpers.pettingzoo_games import SIZES, random_moves, size_id
from helpers.reference import ReferenceGame
from pettingzoo.test import api_test, render_test, seed_test
from pettingzoo.test.state_test import test_state as pettingzoo_state_test

from connect4_env import IllegalMoveError, connect4_v0


@pytest.mark.parametrize("size", SIZES, ids=size_id)
def test_pettingzoo_checkers(size: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    # render_test opens the human window too: at 1000 frames a second it draws the same frames without the
    # half-second pause each that a person watching gets (7 s of sleep a size)
    monkeypatch.setitem(connect4_v0.raw_env.metadata, "render_fps", 1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test's generic advice (dict observations, zero masks)
        api_test(connect4_v0.env(**size), num_cycles=200)
        api_test(connect4_v0.raw_env(**size), num_cycles=200)
    seed_test(lambda **kw: connect4_v0.env(**size, **kw), num_cycles=50)
    render_test(lambda render_mode=None: connect4_v0.env(render_mode=render_mode, **size))
    env = connect4_v0.env(**size)
    env.reset(seed=0)
    pettingzoo_state_test(env, 200)


def play_through(env, moves: list[int]) -> list[tuple]:
    """Step the moves (then None for the finished agents); record every last()."""
    seen = []
    env.reset()
    it = iter(moves)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        seen.append(
            (agent, obs["observation"].copy(), obs["action_mask"].copy(), reward, termination, truncation)
        )
        env.step(None if termination or truncation else next(it))
    return seen


@pytest.mark.parametrize("seed", range(12))
def test_same_observations_and_rewards_as_pettingzoo_connect_four_v3(seed: int) -> None:
    from pettingzoo.classic import connect_four_v3

    moves = random_moves(seed)
    ours = play_through(connect4_v0.env(), moves)
    theirs = play_through(connect_four_v3.env(), moves)
    assert len(ours) == len(theirs)
    for mine, peer in zip(ours, theirs):
        agent, obs, mask, reward, termination, truncation = mine
        assert agent == peer[0]
        np.testing.assert_array_equal(obs, peer[1])
        assert obs.dtype == peer[1].dtype == np.int8
        assert (reward, termination, truncation) == peer[3:]
        if not termination:  # connect_four_v3 leaves stale masks after the end; ours are all zeros then
            np.testing.assert_array_equal(mask, peer[2])


@pytest.mark.parametrize("size", [(6, 7, 4), (4, 5, 3), (5, 4, 4), (2, 9, 2)])
def test_observations_follow_the_reference(size: tuple[int, int, int]) -> None:
    rows, columns, win_length = size
    env = connect4_v0.raw_env(rows=rows, columns=columns, win_length=win_length)
    for seed in range(5):
        moves = random_moves(seed, rows, columns, win_length)
        reference = ReferenceGame(rows, columns, win_length)
        env.reset()
        for i, column in enumerate(moves):
            agent = env.agent_selection
            assert agent == f"player_{i % 2}"
            obs = env.observe(agent)
            np.testing.assert_array_equal(
                obs["observation"], np.array(reference.planes(i % 2), dtype=np.int8)
            )
            legal = np.zeros(columns, dtype=np.int8)
            legal[reference.legal_moves()] = 1
            np.testing.assert_array_equal(obs["action_mask"], legal)
            other = env.observe(f"player_{1 - i % 2}")
            assert not other["action_mask"].any()
            env.step(column)
            reference.play(column)
        winner = reference.winner()
        expected = {"player_0": 0, "player_1": 0}
        if winner is not None:
            expected = {f"player_{winner}": 1, f"player_{1 - winner}": -1}
        assert env._cumulative_rewards == expected
        assert {a: env.rewards[a] for a in env.possible_agents} == expected
        assert all(env.terminations.values()) and not any(env.truncations.values())
        np.testing.assert_array_equal(env.state(), np.array(reference.planes(0), dtype=np.int8))


BAD_ACTIONS = [
    (7, IllegalMoveError, "column 7"),
    (-1, IllegalMoveError, "column -1"),
    (3.0, TypeError, "3.0"),
    ("3", TypeError, "'3'"),
    (np.array([3]), TypeError, "array"),
    (None, TypeError, "None"),
    (True, TypeError, "True"),
]


@pytest.mark.parametrize(("action", "error", "fragment"), BAD_ACTIONS)
def test_raw_env_rejects_bad_actions_and_keeps_state(action: object, error: type, fragment: str) -> None:
    env = connect4_v0.raw_env()
    env.reset()
    for column in [0, 1, 0]:
        env.step(column)
    before = (env.agent_selection, env.state(), env.board.copy())
    with pytest.raises(error, match=fragment):
        env.step(action)
    assert env.agent_selection == before[0]
    np.testing.assert_array_equal(env.state(), before[1])
    assert env.board == before[2]


def test_full_column_raises_naming_the_legal_columns() -> None:
    env = connect4_v0.raw_env(rows=2, columns=3, win_length=3)
    env.reset()
    env.step(0)
    env.step(0)
    with pytest.raises(IllegalMoveError, match=r"legal columns are \[1, 2\]"):
        env.step(0)
    assert env.agent_selection == "player_0" and env.board.ply == 2
    assert isinstance(IllegalMoveError("x"), ValueError)


def test_numpy_integers_are_valid_actions() -> None:
    env = connect4_v0.raw_env()
    env.reset()
    env.step(np.int64(3))
    env.step(np.int8(3))
    env.step(np.array(4))
    assert env.board.heights[3] == 2 and env.board.heights[4] == 1


def test_wrapped_env_ends_the_game_on_a_full_column() -> None:
    env = connect4_v0.env(rows=2, columns=3, win_length=3)
    env.reset()
    env.step(0)
    env.step(0)
    env.step(0)  # full: player_0 loses
    assert env.terminations["player_0"] and env.rewards["player_0"] == -1 and env.rewards["player_1"] == 0


def test_wrapped_env_asserts_out_of_bounds_like_pettingzoo() -> None:
    env = connect4_v0.env()
    env.reset()
    with pytest.raises(AssertionError):
        env.step(7)


def test_step_after_the_end_takes_only_none() -> None:
    env = connect4_v0.raw_env()
    env.reset()
    for column in [0, 1, 0, 1, 0, 1, 0]:
        env.step(column)
    assert env.terminations["player_1"] and env.agent_selection == "player_1"
    assert env.rewards == {"player_0": 1, "player_1": -1}
    assert not env.observe("player_1")["action_mask"].any()
    with pytest.raises(ValueError):
        env.step(3)
    env.step(None)
    env.step(None)
    assert env.agents == []


def test_pickle_and_deepcopy_keep_the_position() -> None:
    for make in (connect4_v0.raw_env, connect4_v0.env):
        env = make()
        env.reset()
        for column in [3, 3, 4]:
            env.step(column)
        for restored in (pickle.loads(pickle.dumps(env)), copy.deepcopy(env)):
            assert restored.agent_selection == "player_1"
            np.testing.assert_array_equal(restored.state(), env.state())
            restored.step(5)
            assert restored.unwrapped.board.ply == 4 and env.unwrapped.board.ply == 3


def test_reset_seed_makes_sampling_reproducible() -> None:
    def sampled(seed: int) -> list[int]:
        env = connect4_v0.env()
        env.reset(seed=seed)
        return [int(env.action_space("player_0").sample()) for _ in range(20)]

    assert sampled(3) == sampled(3) != sampled(4)


def test_render_modes() -> None:
    env = connect4_v0.env(render_mode="ansi")
    env.reset()
    env.step(3)
    text = env.render()
    assert text.splitlines()[5] == ". . . X . . ." and "O to move" in text
    env = connect4_v0.env(render_mode="rgb_array", rows=4, columns=5, win_length=3, tile=10)
    env.reset()
    env.step(0)
    image = env.render()
    assert image.shape == (40, 50, 3) and image.dtype == np.uint8
    # the centre of the bottom-left cell is red (player_0), the cell beside it is the empty-hole colour
    assert tuple(image[35, 5]) == (220, 40, 40) and tuple(image[35, 15]) == (235, 235, 235)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [({"render_mode": "video"}, ValueError), ({"rows": 0}, ValueError), ({"win_length": 2.0}, TypeError)],
)
def test_bad_configuration_raises(kwargs: dict, error: type) -> None:
    with pytest.raises(error):
        connect4_v0.env(**kwargs)


def test_each_env_owns_its_spaces() -> None:
    first, second = connect4_v0.env(), connect4_v0.env()
    a, b = first.observation_space("player_0"), second.observation_space("player_0")
    assert a is not b and a["observation"] is not b["observation"]
    assert first.observation_space("player_0") is not first.observation_space("player_1")
    a.seed(1)
    b.seed(1)
    assert (a.sample()["observation"] == b.sample()["observation"]).all()  # same seed, same samples
    b.seed(2)
    samples = [a.sample()["observation"].tobytes() for _ in range(5)]
    assert samples != [b.sample()["observation"].tobytes() for _ in range(5)]
    assert a == b  # equal as spaces


@pytest.mark.parametrize("wrapped", [True, False])
def test_calls_before_reset_and_unknown_agents_get_clear_errors(wrapped: bool) -> None:
    """Before reset(): a RuntimeError that says to call it (also the AssertionError PettingZoo's wrapper raises),
    not an AttributeError; an agent name the env lacks: a ValueError (a TypeError for a non-string) that is also
    the KeyError of a dict lookup; and last() once both agents have left."""
    env = connect4_v0.env() if wrapped else connect4_v0.raw_env()
    calls = [lambda: env.step(3), lambda: env.observe("player_0"), lambda: env.last()]
    if wrapped:
        calls.append(lambda: env.state())
    for call in calls:
        with pytest.raises(RuntimeError, match="call reset"):
            call()
        with pytest.raises(AssertionError):
            call()
    env.reset(seed=0)
    for lookup in (env.observe, env.observation_space, env.action_space):
        with pytest.raises(ValueError, match="'player_0', 'player_1', got 'player_2'"):
            lookup("player_2")
        for bad in (None, 0, ["player_0"]):
            with pytest.raises(TypeError, match="agent must be one of"):
                lookup(bad)
        with pytest.raises(KeyError):
            lookup("player_2")
    assert env.observation_space("player_1") is env.observation_spaces["player_1"]
    for column in (3, 3, 4, 4, 5, 5, 6):  # player_0 wins along the bottom row
        env.step(column)
    assert env.terminations == {"player_0": True, "player_1": True}
    env.step(None), env.step(None)
    assert env.agents == []
    with pytest.raises(RuntimeError, match="every agent has left"):
        env.last()
    env.reset(seed=1)
    assert env.last()[2] is False  # a new game plays on
