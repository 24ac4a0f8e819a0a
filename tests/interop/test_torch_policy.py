"""TorchPolicy: a torch network trained elsewhere plays with the action mask applied."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from helpers.extras import importorskip
from hypothesis import given, settings
from hypothesis import strategies as st

torch = importorskip("torch")

from torch import nn  # noqa: E402

import connect4_env  # noqa: E402, F401
from connect4_agents import NoLegalMoveError, RandomAgent  # noqa: E402
from connect4_agents.evaluation.arena import play_match  # noqa: E402
from connect4_agents.interop.torch_policy import TorchPolicy  # noqa: E402
from connect4_env import Rules  # noqa: E402
from connect4_env.envs.vector_env import Connect4VectorEnv  # noqa: E402

torch.set_num_threads(1)

ROWS, COLUMNS = 6, 7


class Prefers(nn.Module):
    """An untrained-looking net whose scores always rank ``favourite`` first, by a wide margin."""

    def __init__(self, favourite: int, columns: int = COLUMNS, inputs: int = ROWS * COLUMNS * 2) -> None:
        super().__init__()
        self.linear = nn.Linear(inputs, columns)
        self.favourite = favourite

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scores = self.linear(x.reshape(x.shape[0], -1))
        scores[:, self.favourite] += 100.0
        return scores


def planes_from_ascii(text: str) -> tuple[np.ndarray, np.ndarray]:
    """``X`` = the mover's stones, ``O`` = the opponent's, row 0 on top; returns (planes, mask)."""
    lines = [line.strip() for line in text.strip().splitlines()]
    planes = np.zeros((len(lines), len(lines[0]), 2), dtype=np.int8)
    for row, line in enumerate(lines):
        for column, cell in enumerate(line):
            if cell in "XO":
                planes[row, column, "XO".index(cell)] = 1
    mask = (planes[0].sum(axis=1) == 0).astype(np.int8)
    return planes, mask


FULL_COLUMN_3 = """
...X...
...O...
...X...
...O...
...X...
...O...
"""


FULL_COLUMNS_5_AND_6 = """
.....XO
.....OX
.....XO
.....OX
.....XO
.....OX
"""


def test_a_full_favourite_column_is_never_played() -> None:
    planes, mask = planes_from_ascii(FULL_COLUMN_3)
    policy = TorchPolicy(Prefers(3))
    assert policy.act(np.zeros_like(planes), np.ones(COLUMNS, np.int8)) == 3
    column = policy.act(planes, mask)
    assert column != 3 and mask[column] == 1


@settings(max_examples=60, deadline=None)
@given(
    mask=st.lists(st.booleans(), min_size=COLUMNS, max_size=COLUMNS).filter(any),
    favourite=st.integers(0, COLUMNS - 1),
    output=st.sampled_from(["logits", "q"]),
    deterministic=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_only_legal_columns_are_played(mask, favourite, output, deterministic, seed) -> None:
    if output == "q" and not deterministic:
        deterministic = True
    policy = TorchPolicy(Prefers(favourite), output=output, deterministic=deterministic, seed=seed)
    rng = np.random.default_rng(seed)
    planes = rng.integers(0, 2, size=(ROWS, COLUMNS, 2)).astype(np.int8)
    column = policy.act(planes, np.array(mask, dtype=np.int8))
    assert mask[column]
    if mask[favourite] and deterministic:
        assert column == favourite


def test_flat_encoding_equals_connect4flat_observation() -> None:
    flat = gym.make("Connect4Flat-v0", opponent="random", agent_first=False)
    planes_env = gym.make("Connect4-v0", opponent="random", agent_first=False)
    flat_obs, _ = flat.reset(seed=3)
    obs, _ = planes_env.reset(seed=3)
    policy = TorchPolicy(Prefers(0))
    for column in (3, 3, 2, 4):
        encoded = policy.encode(obs[None])[0]
        assert encoded.dtype == np.float32 == flat_obs.dtype
        np.testing.assert_array_equal(encoded, flat_obs)
        flat_obs, *_ = flat.step(column)
        obs, *_ = planes_env.step(column)
    channels = TorchPolicy(Prefers(0), observation="channels_first").encode(obs[None])
    np.testing.assert_array_equal(channels[0, 0], obs[:, :, 0])


def test_plays_full_games_as_opponent_in_the_batched_env_and_in_the_arena() -> None:
    net = nn.Sequential(nn.Flatten(), nn.Linear(ROWS * COLUMNS * 2, COLUMNS))
    env = gym.make("Connect4-v0", opponent=TorchPolicy(Prefers(0)), illegal_action="raise")
    env.reset(seed=0)
    terminated = False
    while not terminated:  # the learner plays column 0 too, so it fills up and both must move elsewhere
        legal = np.flatnonzero(env.unwrapped.action_masks())
        _, _, terminated, _, _ = env.step(int(legal[0]))
    vector = Connect4VectorEnv(num_envs=8, opponent=TorchPolicy(Prefers(2)), illegal_action="raise")
    vector.reset(seed=0)
    for _ in range(40):
        vector.step(vector.action_masks().argmax(axis=1))
    result = play_match(TorchPolicy(net, observation="planes"), RandomAgent(seed=0), 4)
    assert result.n_games == 4


def test_tuple_outputs_and_forward() -> None:
    class TianshouLike(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = Prefers(5)

        def forward(self, obs, state=None, info=None):  # noqa: ANN001, ANN201
            return self.net(obs), state

    class CleanRLAgent(nn.Module):  # CleanRL's Agent: an actor and a critic, no forward of its own
        def __init__(self) -> None:
            super().__init__()
            self.actor = Prefers(1)
            self.critic = nn.Linear(ROWS * COLUMNS * 2, 1)

    empty = np.zeros((ROWS, COLUMNS, 2), np.int8)
    assert TorchPolicy(TianshouLike()).act(empty, np.ones(COLUMNS)) == 5
    agent = CleanRLAgent()
    assert TorchPolicy(agent, forward=agent.actor).act(empty, np.ones(COLUMNS)) == 1


def test_sampling_is_seeded_and_stays_legal() -> None:
    net = nn.Sequential(nn.Linear(ROWS * COLUMNS * 2, COLUMNS))
    planes, mask = planes_from_ascii(FULL_COLUMN_3)
    policy = TorchPolicy(net, deterministic=False, seed=1)
    first = [policy.act(planes, mask) for _ in range(30)]
    policy.reset(seed=1)
    assert [policy.act(planes, mask) for _ in range(30)] == first
    assert 3 not in first and len(set(first)) > 1


def test_bind_checks_the_board_size() -> None:
    policy = TorchPolicy(nn.Linear(ROWS * COLUMNS * 2, COLUMNS))
    assert policy.bind(Rules(6, 7, 4)) is policy
    with pytest.raises(ValueError, match="cannot take a 5x5 board"):
        policy.bind(Rules(5, 5, 4))
    assert policy.rules == Rules(6, 7, 4)  # nothing lost
    wide_output = TorchPolicy(nn.Linear(4 * 5 * 2, 7))
    with pytest.raises(ValueError, match=r"shape \(1, 7\).*expected \(1, 5\)"):
        wide_output.bind(Rules(4, 5, 4))
    with pytest.raises(ValueError, match="cannot"):
        gym.make("Connect4-v0", rows=5, columns=5, opponent=policy)


def test_bad_inputs_raise_clear_errors() -> None:
    net = nn.Linear(ROWS * COLUMNS * 2, COLUMNS)
    empty = np.zeros((ROWS, COLUMNS, 2), np.int8)
    with pytest.raises(TypeError, match="model must be a torch network.*str"):
        TorchPolicy("model.pt")
    with pytest.raises(TypeError, match="forward must be"):
        TorchPolicy(net, forward=3)
    with pytest.raises(ValueError, match="observation='image' is not supported; allowed: 'flat'"):
        TorchPolicy(net, observation="image")
    with pytest.raises(ValueError, match="output='probs' is not supported; allowed: 'logits', 'q'"):
        TorchPolicy(net, output="probs")
    with pytest.raises(ValueError, match="output='q' always takes the argmax"):
        TorchPolicy(net, output="q", deterministic=False)
    with pytest.raises(TypeError, match="deterministic"):
        TorchPolicy(net, deterministic="yes")
    with pytest.raises(TypeError, match="device"):
        TorchPolicy(net, device=0.5)
    with pytest.raises(ValueError, match=r"scores of shape \(1, 3\).*expected \(1, 7\)"):
        TorchPolicy(nn.Linear(ROWS * COLUMNS * 2, 3)).act(empty, np.ones(COLUMNS))
    with pytest.raises(TypeError, match="returned str"):
        TorchPolicy(lambda x: "left").act(empty, np.ones(COLUMNS))
    with pytest.raises(ValueError, match="NaN"):
        TorchPolicy(lambda x: torch.full((x.shape[0], COLUMNS), float("nan"))).act(empty, np.ones(COLUMNS))
    with pytest.raises(ValueError, match="no column to pick"):
        TorchPolicy(lambda x: torch.full((x.shape[0], COLUMNS), -float("inf"))).act(empty, np.ones(COLUMNS))
    with pytest.raises(NoLegalMoveError):
        TorchPolicy(net).act(empty, np.zeros(COLUMNS))
    with pytest.raises(ValueError, match="action_masks"):
        TorchPolicy(net).act(empty, np.ones(5))
    sampler = TorchPolicy(net, deterministic=False, seed=0)
    state = sampler.rng.bit_generator.state
    with pytest.raises(NoLegalMoveError):
        sampler.act(empty, np.zeros(COLUMNS))
    assert sampler.rng.bit_generator.state == state  # a refused call draws nothing


def test_a_nan_mask_an_unknown_device_and_an_empty_batch() -> None:
    net = nn.Linear(ROWS * COLUMNS * 2, COLUMNS)
    empty = np.zeros((ROWS, COLUMNS, 2), np.int8)
    mask = np.ones(COLUMNS)
    mask[2] = np.nan  # used to count as legal (NaN is truthy)
    with pytest.raises(ValueError, match="action_masks must hold only 0 and 1"):
        TorchPolicy(net).act(empty, mask)
    with pytest.raises(ValueError, match="device 'gpu' is not a torch device"):
        TorchPolicy(net, device="gpu")
    batch = TorchPolicy(net).act_batch(
        np.zeros((0, ROWS, COLUMNS, 2), np.int8), np.zeros((0, COLUMNS), np.int8)
    )
    assert batch.shape == (0,)
    planes, mask = planes_from_ascii(FULL_COLUMNS_5_AND_6)
    assert TorchPolicy(Prefers(4)).act(planes, mask.astype(np.float64)) == 4  # float 0/1 masks work


def test_a_mask_that_lies_about_the_position_is_refused() -> None:
    """The mask is checked against the position the planes show, as the other policies check it: a mask that
    allows a full column was trusted (the full favourite column was played)."""
    planes, mask = planes_from_ascii(FULL_COLUMN_3)
    policy = TorchPolicy(Prefers(3))
    with pytest.raises(
        ValueError, match=r"legal columns \[0, 1, 2, 4, 5, 6\]: it allows the full column\(s\) \[3\]"
    ):
        policy.act(planes, np.ones(COLUMNS, np.int8))
    narrower = mask.copy()
    narrower[0] = 0  # column 0 is open: a mask that hides it disagrees with the position too
    with pytest.raises(ValueError, match="does not match the position's legal columns"):
        policy.act(planes, narrower)
    batch = np.stack([np.zeros_like(planes), planes, planes])
    masks = np.stack([np.ones(COLUMNS, np.int8), mask, np.ones(COLUMNS, np.int8)])
    with pytest.raises(ValueError, match=r"\(game 2 of the batch\)"):
        policy.act_batch(batch, masks)
    masks[2] = mask
    columns = policy.act_batch(batch, masks).tolist()
    assert columns[0] == 3 and 3 not in columns[1:]
    # planes that show no position (a stone on air, a cell taken twice) are not a position to check against
    floating = np.zeros_like(planes)
    floating[0, 3, 0] = 1
    assert policy.act(floating, np.ones(COLUMNS, np.int8)) == 3
