"""The batched env against N single Connect4-v0 envs, its autoreset modes, errors and seeding."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import connect4_env  # noqa: F401
from connect4_agents import RandomAgent
from connect4_env import IllegalMoveError
from connect4_env.envs.vector_env import Connect4VectorEnv


class Leftmost:
    """A deterministic opponent: the leftmost legal column."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(np.flatnonzero(action_mask)[0])


class BatchedLeftmost(Leftmost):
    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return np.asarray(action_masks).argmax(axis=1)


@settings(max_examples=40, deadline=None)
@given(
    size=st.sampled_from([(6, 7, 4), (4, 5, 3), (3, 3, 3), (8, 8, 4)]),  # 8x8 = 72 bits: the object fallback
    agent_first=st.booleans(),
    batched=st.booleans(),
    choices=st.lists(st.lists(st.integers(0, 7), min_size=3, max_size=3), min_size=1, max_size=60),
)
def test_batched_env_agrees_with_single_envs(size, agent_first, batched, choices) -> None:
    rows, columns, win_length = size
    n = 3
    opponent = BatchedLeftmost() if batched else Leftmost()
    kwargs = {"rows": rows, "columns": columns, "win_length": win_length, "agent_first": agent_first}
    vector = Connect4VectorEnv(num_envs=n, opponent=opponent, **kwargs)
    singles = [gym.make("Connect4-v0", opponent=Leftmost(), **kwargs) for _ in range(n)]
    obs, info = vector.reset(seed=0)
    for env in singles:
        env.reset(seed=0)
    needs_reset = [False] * n
    for step in choices:
        actions = np.array([c % columns for c in step])
        obs, rewards, terminated, truncated, info = vector.step(actions)
        for i, env in enumerate(singles):
            if needs_reset[i]:  # next-step autoreset: this step only resets
                expected_obs, expected_info = env.reset()
                expected = (expected_obs, 0.0, False)
                needs_reset[i] = False
            else:
                expected_obs, reward, term, _, expected_info = env.step(int(actions[i]))
                expected = (expected_obs, reward, term)
                needs_reset[i] = term
            np.testing.assert_array_equal(obs[i], expected[0])
            assert (rewards[i], terminated[i]) == expected[1:]
            if not terminated[i]:
                np.testing.assert_array_equal(info["action_mask"][i], expected_info["action_mask"])
            assert bool(info.get("illegal_action", np.zeros(n, bool))[i]) == bool(
                expected_info.get("illegal_action", False)
            )
        assert not truncated.any()


def test_make_vec_uses_the_batched_env() -> None:
    vector = gym.make_vec(
        "Connect4-v0", num_envs=5, vectorization_mode="vector_entry_point", rows=4, columns=5
    )
    assert isinstance(vector, Connect4VectorEnv)
    obs, info = vector.reset(seed=1)
    assert obs.shape == (5, 4, 5, 2) and obs.dtype == np.int8 and info["action_mask"].shape == (5, 5)
    assert vector.action_masks().dtype == bool and vector.action_masks().all()
    assert vector.observation_space.shape == (5, 4, 5, 2) and vector.single_action_space.n == 5


def test_same_step_autoreset_reports_the_final_observation() -> None:
    vector = Connect4VectorEnv(
        num_envs=2, rows=4, columns=4, win_length=4, opponent=BatchedLeftmost(), autoreset_mode="SameStep"
    )
    vector.reset(seed=0)
    # learner stacks column 3 four times; the leftmost opponent fills column 0: the learner wins on move 4
    for _ in range(3):
        obs, rewards, terminated, _, info = vector.step(np.array([3, 3]))
        assert not terminated.any()
    obs, rewards, terminated, _, info = vector.step(np.array([3, 3]))
    assert terminated.all() and (rewards == 1).all()
    assert info["_final_obs"].all() and info["final_obs"][0][:, 3, 0].sum() == 4
    assert not obs.any()  # already the first observation of the next game


def test_next_step_autoreset_ignores_the_action_of_a_finished_game() -> None:
    vector = Connect4VectorEnv(num_envs=1, rows=4, columns=4, win_length=4, opponent=BatchedLeftmost())
    vector.reset(seed=0)
    for _ in range(4):
        obs, rewards, terminated, _, _ = vector.step(np.array([3]))
    assert terminated[0] and rewards[0] == 1 and vector.action_masks().all()
    obs, rewards, terminated, _, _ = vector.step(np.array([3]))  # the reset step
    assert not obs.any() and rewards[0] == 0 and not terminated[0]


def test_errors() -> None:
    vector = Connect4VectorEnv(
        num_envs=2, rows=2, columns=3, win_length=3, opponent=BatchedLeftmost(), illegal_action="raise"
    )
    with pytest.raises(RuntimeError, match="reset"):
        vector.step(np.array([0, 0]))
    vector.reset(seed=0)
    with pytest.raises(IllegalMoveError, match="out of range"):
        vector.step(np.array([0, 3]))
    with pytest.raises(TypeError, match="integer"):
        vector.step(np.array([0.0, 1.0]))
    with pytest.raises(TypeError, match=r"integer array of shape \(2,\)"):
        vector.step(np.array([0]))
    vector.step(np.array([1, 1]))  # the opponent answers in column 0
    before = vector.boards.stones.copy()
    vector.step(np.array([0, 2]))  # column 0 now full in both games
    with pytest.raises(IllegalMoveError, match="column 0 is full in game 0"):
        vector.step(np.array([0, 1]))
    assert (vector.boards.stones != before).any()  # the legal step went through
    with pytest.raises(ValueError, match="autoreset_mode"):
        Connect4VectorEnv(num_envs=2, autoreset_mode="Sometimes")
    with pytest.raises(ValueError, match="num_envs"):
        Connect4VectorEnv(num_envs=0)
    with pytest.raises(ValueError, match="tile"):
        Connect4VectorEnv(num_envs=2, render_mode="rgb_array", tile=2)


def test_illegal_lose_mode_penalises_only_that_game() -> None:
    vector = Connect4VectorEnv(num_envs=2, rows=2, columns=3, win_length=3, opponent=BatchedLeftmost())
    vector.reset(seed=0)
    vector.step(np.array([0, 2]))  # game 0: column 0 is now full (learner, then the opponent's reply)
    obs, rewards, terminated, _, info = vector.step(np.array([0, 2]))
    assert rewards[0] == -1 and terminated[0] and info["illegal_action"][0] and not info["illegal_action"][1]


def test_seeded_random_opponent_is_reproducible() -> None:
    def trace(seed: int) -> list[bytes]:
        vector = Connect4VectorEnv(num_envs=8, opponent=RandomAgent(), agent_first=None)
        obs, _ = vector.reset(seed=seed)
        rng = np.random.default_rng(0)
        out = [obs.tobytes()]
        for _ in range(30):
            masks = vector.action_masks()
            scores = rng.random(masks.shape)
            scores[~masks] = -1
            obs, rewards, *_ = vector.step(scores.argmax(1))
            out.append(obs.tobytes() + rewards.tobytes())
        return out

    assert trace(3) == trace(3) != trace(4)


def test_render() -> None:
    vector = Connect4VectorEnv(num_envs=2, render_mode="ansi")
    vector.reset(seed=0)
    assert len(vector.render()) == 2 and "to move" in vector.render()[0]
    vector = Connect4VectorEnv(num_envs=2, render_mode="rgb_array", tile=8)
    vector.reset(seed=0)
    assert vector.render()[0].shape == (48, 56, 3)


@pytest.mark.parametrize(
    "make",
    [
        lambda: Connect4VectorEnv(num_envs=268, rows=1000, columns=1000),
        lambda: gym.make_vec(
            "Connect4-v0", num_envs=268, vectorization_mode="vector_entry_point", rows=1000, columns=1000
        ),
    ],
)
def test_a_batch_of_too_many_cells_is_refused_at_construction(make: Any) -> None:
    # 268 boards of 1000x1000 passed the old check (2**28 cells) and took 3.6 GB in reset
    from connect4_env.envs.vector_env import MAX_BATCH_CELLS

    with pytest.raises(ValueError, match=f"{MAX_BATCH_CELLS:,}"):
        make()
    assert Connect4VectorEnv(num_envs=16, rows=1000, columns=1000).num_envs == 16  # 16 M cells: allowed


class AnswersHuge:
    """Answers a column far beyond any int64 (one game at a time, through ``act``)."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return 10**400


def test_an_answer_beyond_int64_is_an_illegal_move_with_a_short_message() -> None:
    env = Connect4VectorEnv(num_envs=3, opponent=AnswersHuge(), agent_first=True)
    env.reset(seed=0)
    with pytest.raises(IllegalMoveError) as raised:  # was OverflowError from np.fromiter
        env.step(np.array([0, 1, 2]))
    message = str(raised.value)
    assert "(401 digits)" in message and len(message) < 300
    assert env.boards.ply.tolist() == [0, 0, 0]  # nothing played


def test_zero_d_integer_arrays_are_columns_for_the_learner_and_the_opponent() -> None:
    class AnswersArray:
        def act(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
            return np.array(int(np.flatnonzero(action_mask)[0]))

    env = gym.make("Connect4-v0", opponent=AnswersArray())
    env.reset(seed=0)
    observation, *_ = env.step(np.array(3))
    assert observation[5, 3, 0] == 1 and observation[5, 0, 1] == 1
    with pytest.raises(TypeError, match="shape"):
        env.step(np.array([3]))


def assert_infos_equal(ours: dict[str, Any], sync: dict[str, Any], where: str) -> None:
    """Key by key, values and ``_key`` masks, dtypes included; object arrays element by element."""
    assert sorted(ours) == sorted(sync), f"{where}: keys {sorted(ours)} != sync's {sorted(sync)}"
    for key, expected in sync.items():
        value = ours[key]
        if isinstance(expected, dict):
            assert_infos_equal(value, expected, f"{where} [{key!r}]")
            continue
        assert value.dtype == expected.dtype and value.shape == expected.shape, f"{where} {key!r}"
        if expected.dtype == object:
            for i, (mine, theirs) in enumerate(zip(value, expected)):
                if theirs is None or isinstance(theirs, str):
                    assert mine == theirs, f"{where} {key!r}[{i}]: {mine!r} != {theirs!r}"
                else:
                    np.testing.assert_array_equal(mine, theirs, err_msg=f"{where} {key!r}[{i}]")
        else:
            np.testing.assert_array_equal(value, expected, err_msg=f"{where} {key!r}")


@settings(max_examples=30, deadline=None)
@given(
    mode=st.sampled_from(["NextStep", "SameStep"]),
    size=st.sampled_from([(4, 4, 3), (3, 3, 3), (6, 7, 4)]),
    agent_first=st.booleans(),
    batched=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_infos_equal_sync_mode(mode, size, agent_first, batched, seed) -> None:
    """Same seeds and actions (full columns included) as ``vectorization_mode="sync"``: equal infos, key by key,
    on resets, ordinary steps, wins, losses, draws and illegal moves, in both autoreset modes."""
    rows, columns, win_length = size
    n = 4
    kwargs = {"rows": rows, "columns": columns, "win_length": win_length, "agent_first": agent_first}
    ours = gym.make_vec(
        "Connect4-v0",
        num_envs=n,
        vectorization_mode="vector_entry_point",
        autoreset_mode=mode,
        opponent=BatchedLeftmost() if batched else Leftmost(),
        **kwargs,
    )
    sync = gym.make_vec(
        "Connect4-v0",
        num_envs=n,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": mode},
        opponent=Leftmost(),
        **kwargs,
    )
    assert_infos_equal(ours.reset(seed=seed)[1], sync.reset(seed=seed)[1], "reset")
    rng = np.random.default_rng(seed)
    seen: set[str] = set()
    for step in range(60):
        actions = rng.integers(0, columns, size=n)
        *mine, info = ours.step(actions)
        *theirs, expected = sync.step(actions)
        for a, b in zip(mine, theirs):
            np.testing.assert_array_equal(a, b)
        assert_infos_equal(info, expected, f"step {step}, actions {actions.tolist()}")
        for outcome in expected.get("final_info", expected).get("outcome", []):
            seen.add(str(outcome))
    assert {"win", "loss"} & seen  # episodes did end within the run
    ours.close()
    sync.close()
