"""Connect4-v0: the ecosystem's checkers, rewards, sides, illegal actions, seeding, vector envs."""

from __future__ import annotations

import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from helpers.extras import needs

import connect4_env  # noqa: F401  (registers Connect4-v0)
from connect4_agents import RandomAgent
from connect4_env import Board, IllegalMoveError
from connect4_env.encoding import observation_planes


class ScriptedOpponent:
    """Plays a fixed list of columns (for set positions)."""

    def __init__(self, moves: list[int]) -> None:
        self.moves = list(moves)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return self.moves.pop(0)


def test_gymnasium_check_env_passes_without_warnings() -> None:
    from gymnasium.utils.env_checker import check_env

    for kwargs in ({}, {"rows": 4, "columns": 5, "win_length": 3, "agent_first": None}):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(gym.make("Connect4-v0", **kwargs).unwrapped, skip_render_check=False)


# SB3's checker advises, for *any* 3-d Box, that CnnPolicy wants >= 36x36 uint8 images. Our observation is
# (rows, columns, 2) int8 by design (connect_four_v3's layout; MlpPolicy flattens it): those three notes are
# expected, anything else is a failure.
SB3_IMAGE_ADVICE = (
    "is an image but its `dtype`",
    "upper and lower bounds are not in [0, 255]",
    "minimal resolution",
)


@needs("train", "stable_baselines3")
def test_stable_baselines3_check_env() -> None:
    from stable_baselines3.common.env_checker import check_env

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(gym.make("Connect4-v0").unwrapped)
    unexpected = [str(w.message) for w in caught if not any(a in str(w.message) for a in SB3_IMAGE_ADVICE)]
    assert unexpected == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(gym.make("Connect4-v0").unwrapped, warn=False)


def test_learner_first_wins_with_plus_one() -> None:
    env = gym.make("Connect4-v0", opponent=ScriptedOpponent([6, 6, 6]))
    obs, info = env.reset(seed=0)
    assert obs.shape == (6, 7, 2) and obs.dtype == np.int8 and not obs.any()
    np.testing.assert_array_equal(info["action_mask"], np.ones(7, dtype=np.int8))
    for column in (0, 1, 2):
        obs, reward, terminated, truncated, info = env.step(column)
        assert (reward, terminated, truncated) == (0.0, False, False)
    obs, reward, terminated, truncated, info = env.step(3)
    assert (reward, terminated, truncated, info["outcome"]) == (1.0, True, False, "win")
    assert obs[5, :4, 0].tolist() == [1, 1, 1, 1] and obs[3:, 6, 1].tolist() == [1, 1, 1]
    assert not env.unwrapped.action_masks().any()


def test_learner_second_sees_the_opponents_first_move_and_can_lose() -> None:
    env = gym.make("Connect4-v0", opponent=ScriptedOpponent([3, 3, 3, 3]), agent_first=False)
    obs, _ = env.reset(seed=0)
    assert obs[5, 3].tolist() == [0, 1] and obs.sum() == 1
    for column in (0, 0):
        _, reward, terminated, _, _ = env.step(column)
        assert not terminated
    _, reward, terminated, _, info = env.step(0)
    assert (reward, terminated, info["outcome"]) == (-1.0, True, "loss")
    assert env.unwrapped.board.winner == 0 and env.unwrapped.learner == 1


def test_draw_gives_zero() -> None:
    # 2x3 board, win_length 3: learner 0, opponent 1, learner 1, opponent 0, learner 2, opponent 2 -> draw
    env = gym.make("Connect4-v0", rows=2, columns=3, win_length=3, opponent=ScriptedOpponent([1, 0, 2]))
    env.reset(seed=0)
    env.step(0)
    env.step(1)
    _, reward, terminated, _, info = env.step(2)
    assert (reward, terminated, info["outcome"]) == (0.0, True, "draw")


def test_illegal_action_lose_and_raise() -> None:
    env = gym.make("Connect4-v0", rows=2, columns=3, win_length=3, opponent=ScriptedOpponent([0, 1]))
    env.reset(seed=0)
    env.step(0)  # column 0 now full
    _, reward, terminated, _, info = env.step(0)
    assert (reward, terminated, info["illegal_action"], info["outcome"]) == (-1.0, True, True, "loss")
    with pytest.raises(RuntimeError, match="reset"):
        env.step(1)

    env = gym.make(
        "Connect4-v0", rows=2, columns=3, win_length=3, opponent=ScriptedOpponent([0]), illegal_action="raise"
    )
    env.reset(seed=0)
    env.step(0)
    before = env.unwrapped.board.copy()
    with pytest.raises(IllegalMoveError, match=r"column 0 is full; legal columns are \[1, 2\]"):
        env.step(0)
    assert env.unwrapped.board == before


@pytest.mark.parametrize(
    ("action", "error"),
    [
        (7, IllegalMoveError),
        (-1, IllegalMoveError),
        (1.0, TypeError),
        ("1", TypeError),
        (None, TypeError),
        (np.array([1, 2]), TypeError),
    ],
)
def test_malformed_actions_always_raise(action: object, error: type) -> None:
    env = gym.make("Connect4-v0")
    env.reset(seed=0)
    before = env.unwrapped.board.copy()
    with pytest.raises(error):
        env.step(action)
    assert env.unwrapped.board == before


@pytest.mark.parametrize(
    ("kwargs", "error", "fragment"),
    [
        ({"illegal_action": "ignore"}, ValueError, "ignore"),
        ({"agent_first": "yes"}, TypeError, "yes"),
        ({"opponent": "grandmaster"}, ValueError, "grandmaster"),
        ({"opponent": 42}, TypeError, "42"),
        ({"rows": 3, "columns": 3, "win_length": 4}, ValueError, "win_length=4"),
        ({"render_mode": "video"}, ValueError, "video"),
    ],
)
# gym.make warns about an unknown render_mode before our ValueError names it: the warning is expected here
@pytest.mark.filterwarnings("ignore:.*not in the possible render_modes:UserWarning")
def test_bad_configuration_names_the_value(kwargs: dict, error: type, fragment: str) -> None:
    with pytest.raises(error, match=fragment):
        gym.make("Connect4-v0", **kwargs)


def test_opponent_illegal_move_is_reported() -> None:
    env = gym.make("Connect4-v0", opponent=ScriptedOpponent([9]))
    env.reset(seed=0)
    with pytest.raises(IllegalMoveError, match="opponent"):
        env.step(0)


def rollout(env: gym.Env, seed: int, n_episodes: int = 5) -> list:
    rng = np.random.default_rng(123)
    trace = []
    obs, info = env.reset(seed=seed)
    episodes = 0
    while episodes < n_episodes:
        legal = np.flatnonzero(info["action_mask"])
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(legal)))
        trace.append((obs.tobytes(), reward, terminated))
        if terminated or truncated:
            episodes += 1
            trace.append(env.unwrapped.learner)
            obs, info = env.reset()
    return trace


def test_seed_makes_episodes_reproducible_opponent_and_side_included() -> None:
    make = lambda: gym.make("Connect4-v0", agent_first=None)  # noqa: E731
    assert rollout(make(), seed=7) == rollout(make(), seed=7)
    assert rollout(make(), seed=7) != rollout(make(), seed=8)
    env = make()
    sides = set()
    for s in range(30):
        env.reset(seed=s)
        sides.add(env.unwrapped.learner)
    assert sides == {0, 1}


def test_observations_match_the_encoding_and_masks() -> None:
    env = gym.make("Connect4-v0", rows=5, columns=4, win_length=4, agent_first=False)
    obs, info = env.reset(seed=1)
    while True:
        board: Board = env.unwrapped.board
        np.testing.assert_array_equal(obs, observation_planes(board, env.unwrapped.learner))
        if board.is_terminal:
            break
        np.testing.assert_array_equal(info["action_mask"], np.array(board.legal_mask(), dtype=np.int8))
        np.testing.assert_array_equal(env.unwrapped.action_masks(), np.array(board.legal_mask(), dtype=bool))
        obs, _, terminated, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))


def test_opponent_by_instance_and_by_name_with_kwargs() -> None:
    env = gym.make("Connect4-v0", opponent="random", opponent_kwargs={"seed": 3})
    assert isinstance(env.unwrapped.opponent, RandomAgent)
    agent = RandomAgent(seed=1)
    assert gym.make("Connect4-v0", opponent=agent).unwrapped.opponent is agent


def test_pickle_keeps_the_episode() -> None:
    env = gym.make("Connect4-v0").unwrapped
    env.reset(seed=5)
    env.step(3)
    clone = pickle.loads(pickle.dumps(env))
    assert clone.board == env.board
    a = env.step(2)
    b = clone.step(2)
    assert a[0].tobytes() == b[0].tobytes() and a[1:4] == b[1:4]


@pytest.mark.slow  # about 4 s on 2 cores (over 3 s): make test-slow, CI runs it
@needs("train", "stable_baselines3")
def test_gymnasium_make_vec_and_sb3_subproc() -> None:
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv

    for mode in ("sync", "async"):
        vec = gym.make_vec("Connect4-v0", num_envs=3, vectorization_mode=mode)
        obs, info = vec.reset(seed=0)
        assert obs.shape == (3, 6, 7, 2) and info["action_mask"].shape == (3, 7)
        obs, reward, terminated, truncated, info = vec.step(np.array([0, 1, 2]))
        assert obs.shape == (3, 6, 7, 2)
        vec.close()

    # "module:id" makes each worker process import connect4_env (and so register Connect4-v0) first.
    venv = make_vec_env("connect4_env:Connect4-v0", n_envs=2, seed=0, vec_env_cls=SubprocVecEnv)
    obs = venv.reset()
    assert obs.shape == (2, 6, 7, 2)
    masks = venv.env_method("action_masks")
    assert all(mask.shape == (7,) and mask.all() for mask in masks)
    obs, rewards, dones, infos = venv.step(np.array([3, 3]))
    assert obs.shape == (2, 6, 7, 2) and rewards.shape == (2,)
    venv.close()


def test_render_modes() -> None:
    env = gym.make("Connect4-v0", render_mode="ansi", opponent=ScriptedOpponent([0]))
    env.reset(seed=0)
    env.step(3)
    assert env.render().splitlines()[5] == "O . . X . . ."
    env = gym.make("Connect4-v0", render_mode="rgb_array", tile=8)
    env.reset(seed=0)
    assert env.render().shape == (48, 56, 3)
    env = gym.make("Connect4-v0", render_mode="human", tile=8)
    env.reset(seed=0)
    env.step(0)
    assert env.render() is None
    env.close()


class FailsOnce:
    """Answers the first legal column, but raises on its first ``act`` (a flaky opponent)."""

    def __init__(self) -> None:
        self.failures_left = 1

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        if self.failures_left:
            self.failures_left -= 1
            raise RuntimeError("opponent failed")
        return int(np.flatnonzero(action_mask)[0])


@pytest.mark.parametrize("env_id", ["Connect4-v0", "Connect4Flat-v0"])
def test_a_failed_first_reset_leaves_gym_make_env_as_if_never_called(env_id: str) -> None:
    # Gymnasium's own PassiveEnvChecker marked its first reset as checked before the call, so after a
    # failed first reset every step played both stones and then raised TypeError from the checker.
    flaky = gym.make(env_id, opponent=FailsOnce(), agent_first=False)
    with pytest.raises(RuntimeError, match="opponent failed"):
        flaky.reset(seed=1)
    clean = gym.make(env_id, opponent=FailsOnce(), agent_first=False)
    clean.unwrapped.opponent.failures_left = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the checker still checks the (now first successful) calls
        for env in (flaky, clean):
            env.reset(seed=1)
        for column in (3, 3, 3, 2, 2):
            flaky_result, clean_result = flaky.step(column), clean.step(column)
            np.testing.assert_array_equal(flaky_result[0], clean_result[0])
            assert flaky_result[1:4] == clean_result[1:4]
            np.testing.assert_array_equal(flaky_result[4]["action_mask"], clean_result[4]["action_mask"])
            if flaky_result[2]:
                break
    assert flaky.unwrapped.board == clean.unwrapped.board


def test_a_failed_first_step_leaves_the_checker_checking_the_next() -> None:
    env = gym.make("Connect4-v0", opponent=FailsOnce())
    env.reset(seed=0)
    board = env.unwrapped.board.copy()
    with pytest.raises(RuntimeError, match="opponent failed"):
        env.step(3)
    assert env.unwrapped.board == board
    observation, reward, terminated, truncated, info = env.step(3)
    assert observation[..., 0].sum() == 1 and observation[..., 1].sum() == 1
    assert str(env) == "<OrderEnforcing<RetryableEnvChecker<Connect4Env<Connect4-v0>>>>"
    remade = gym.make(
        env.spec
    )  # from its spec: the same wrappers, no second (Gymnasium's) checker around ours
    assert str(remade) == str(env)
