"""Steps and resets are all or nothing: an opponent that fails leaves every game exactly as it was."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from helpers.extras import importorskip

from connect4_agents import RandomAgent
from connect4_env.envs.gym_env import Connect4Env
from connect4_env.envs.vector_env import Connect4VectorEnv
from connect4_env.rules import IllegalMoveError

FAILURES = ["raise", "interrupt", "full", "out_of_range", "float", "string", "none", "bool", "array"]


class Flaky:
    """A random opponent that fails in the chosen way on its ``fail_at``-th call (then plays again)."""

    def __init__(self, failure: str, fail_at: int, seed: int = 0, batched: bool = False) -> None:
        self.inner = RandomAgent(seed=seed)
        self.failure = failure
        self.fail_at = fail_at
        self.calls = 0
        if batched:
            self.act_batch = self._act_batch

    def reset(self, seed: int | None = None) -> None:
        self.inner.reset(seed)

    def _answer(self, good: object, mask: np.ndarray) -> object:
        self.calls += 1
        if self.calls != self.fail_at:
            return good
        full = np.flatnonzero(np.asarray(mask).reshape(-1, mask.shape[-1])[0] == 0)
        return {
            "raise": RuntimeError("opponent crashed"),
            "interrupt": KeyboardInterrupt(),
            "full": int(full[0]) if full.size else 99,
            "out_of_range": 99,
            "float": 2.5,
            "string": "3",
            "none": None,
            "bool": True,
            "array": np.array([1, 2]),
        }[self.failure]

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> object:
        answer = self._answer(self.inner.act(observation, action_mask), action_mask)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def _act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> object:
        good = self.inner.act_batch(observations, action_masks)
        answer = self._answer(good, action_masks)
        if answer is good:
            return good
        if isinstance(answer, BaseException):
            raise answer
        if isinstance(answer, (int, np.integer)) and not isinstance(answer, bool):
            bad = good.copy()
            bad[0] = answer
            return bad
        if self.failure == "float":
            return good.astype(np.float64)
        if self.failure == "bool":
            return good.astype(bool)
        if self.failure == "array":
            return good[:-1] if good.size > 1 else np.array([0, 1])
        return answer

    def __repr__(self) -> str:
        return f"Flaky({self.failure})"


def expected_error(failure: str) -> type[BaseException]:
    return {"raise": RuntimeError, "interrupt": KeyboardInterrupt}.get(failure, IllegalMoveError)


def single_state(env: Connect4Env) -> tuple:
    board = env.board
    return (
        tuple(board.stones),
        tuple(board.heights),
        board.ply,
        board.winner,
        board.last_move,
        env._game.views[0].tobytes(),
        env._game.views[1].tobytes(),
        env._game.mask.tobytes(),
        env.learner,
        env._done,
    )


@pytest.mark.parametrize("failure", FAILURES)
def test_single_env_step_is_all_or_nothing(failure: str) -> None:
    env = Connect4Env(opponent=Flaky(failure, fail_at=4))
    obs, _ = env.reset(seed=1)
    for column in (0, 0, 0):  # three good replies fill column 0 partly
        obs, *_ = env.step(column)
    before = single_state(env)
    with pytest.raises(
        expected_error(failure), match=None if failure in ("raise", "interrupt") else "opponent"
    ):
        env.step(3)
    assert single_state(env) == before
    # the next step is the learner's again: its stone in its own colour, then a reply
    height = env.board.heights[3]
    obs, reward, terminated, truncated, info = env.step(3)
    assert env.board.cell(env.rules.rows - 1 - height, 3) == env.learner
    assert env.board.ply == before[2] + 2


@pytest.mark.parametrize("failure", FAILURES)
def test_single_env_failed_reset_leaves_the_episode(failure: str) -> None:
    env = Connect4Env(opponent=Flaky(failure, fail_at=3), agent_first=False)
    env.reset(seed=0)  # call 1: its first move
    env.step(2)  # call 2: its reply
    before = single_state(env)
    rng_before = env.np_random.bit_generator.state
    with pytest.raises(expected_error(failure)):
        env.reset(seed=5)  # call 3 fails
    assert single_state(env) == before
    assert env.np_random.bit_generator.state == rng_before
    env.step(4)  # the old episode goes on
    env.reset(seed=5)
    assert env.board.ply == 1


def vector_state(env: Connect4VectorEnv) -> tuple:
    return (
        env.boards.stones.tobytes(),
        env.boards.heights.tobytes(),
        env.boards.ply.tobytes(),
        env.learner.tobytes(),
        env._obs.tobytes(),
        env._needs_reset.tobytes(),
        str(env.np_random.bit_generator.state),
    )


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("failure", FAILURES)
def test_vector_env_step_is_all_or_nothing(failure: str, mode: AutoresetMode, batched: bool) -> None:
    learner = RandomAgent(seed=3)
    for fail_at in range(2, 40, 3):
        env = Connect4VectorEnv(
            num_envs=5,
            opponent=Flaky(failure, fail_at=fail_at, batched=batched),
            agent_first=None,
            autoreset_mode=mode,
        )
        env.reset(seed=fail_at)
        env.opponent.calls = 0  # count the calls of the steps only
        while True:
            actions = learner.act_batch(None, env.action_masks())
            before = vector_state(env)
            observations_before = env._obs.copy()
            try:
                env.step(actions)
            except (RuntimeError, KeyboardInterrupt, IllegalMoveError) as error:
                assert isinstance(error, expected_error(failure))
                assert vector_state(env) == before
                np.testing.assert_array_equal(env._obs, observations_before)
                # and the same step then goes through, as the learner's
                env.step(actions)
                for i in range(env.num_envs):
                    board = env.boards.board(i)
                    np.testing.assert_array_equal(
                        env._obs[i, :, :, 0] + 2 * env._obs[i, :, :, 1],
                        [
                            [0 if c is None else (1 if c == env.learner[i] else 2) for c in row]
                            for row in [[board.cell(r, k) for k in range(7)] for r in range(6)]
                        ],
                    )
                break
            if env.opponent.calls > fail_at:
                break


@pytest.mark.parametrize("failure", ["raise", "full", "float"])
def test_vector_env_failed_reset_leaves_every_game(failure: str) -> None:
    env = Connect4VectorEnv(num_envs=3, opponent=Flaky(failure, fail_at=3, batched=True), agent_first=False)
    env.reset(seed=0)  # call 1
    env.step(np.array([0, 1, 2]))  # call 2
    before = vector_state(env)
    with pytest.raises(expected_error(failure)):
        env.reset(seed=9)
    assert vector_state(env) == before
    env.step(np.array([3, 3, 3]))


def test_sb3_vec_env_refuses_what_it_used_to_cast() -> None:
    importorskip("stable_baselines3")
    import connect4_env

    venv = connect4_env.make_sb3_vec_env(4, monitor=False)
    venv.reset()
    for bad in (
        [3.9, 6.9, -0.5, 0.2],
        ["1", "2", "3", "4"],
        np.array([True, False, True, False]),
        np.array([[1, 2, 3, 4]]),
        np.array([np.nan, 1, 2, 3]),
        [1, 2, 3],
    ):
        with pytest.raises(TypeError, match=r"integer array of shape \(4,\)"):
            venv.step(bad)
    obs, rewards, dones, infos = venv.step(np.array([1, 2, 3, 4]))
    assert obs.shape == (4, 6, 7, 2)


@pytest.mark.parametrize("seed", [[], 1.5, "1", -1])
def test_vector_reset_seed_is_checked(seed: object) -> None:
    env = Connect4VectorEnv(num_envs=2)
    with pytest.raises((TypeError, ValueError), match="seed"):
        env.reset(seed=seed)  # type: ignore[arg-type]
    env.reset(seed=[7, 8])
    assert env.np_random_seed == 7


@pytest.mark.parametrize("when", ["before", "after"])
@pytest.mark.parametrize("mover", ["learner", "opponent"])
def test_ctrl_c_inside_a_move_leaves_every_game(when: str, mover: str) -> None:
    """Ctrl-C landing in the boards' own play, before or after its stones are placed: the opponent's move was
    journaled before it was made (an interrupt before it made the rollback take back a move never played:
    IndexError, seen in train_sb3's Ctrl-C test), the learner's after (one after it kept the move)."""
    env = Connect4VectorEnv(num_envs=4, opponent=RandomAgent(seed=0), agent_first=True)
    env.reset(seed=1)
    env.step(np.array([0, 1, 2, 3]))
    before = vector_state(env)
    observations_before = env._obs.copy()
    play = env.boards.play
    calls = []

    def interrupted(index: np.ndarray, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        calls.append(len(calls))
        if len(calls) == (1 if mover == "learner" else 2):
            if when == "after":
                play(index, columns)
            raise KeyboardInterrupt
        return play(index, columns)

    env.boards.play = interrupted  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        env.step(np.array([3, 3, 3, 3]))
    assert vector_state(env) == before
    np.testing.assert_array_equal(env._obs, observations_before)
    env.boards.play = play  # type: ignore[method-assign]
    env.step(np.array([3, 3, 3, 3]))  # and the step then goes through
