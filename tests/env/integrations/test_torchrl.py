"""TorchRL's ``PettingZooWrapper`` over ``connect4_v0``, both APIs, run in its own venv by ``make test-torchrl``.

The Parallel env once put a copy of ``action_mask`` in its infos as well as in its observation; TorchRL reads the
observation's, drops the infos' copy from its spec but not from the data, and failed at the first reset.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torchrl", reason="TorchRL runs in its own venv: make test-torchrl")

import torch  # noqa: E402
from torchrl.envs import PettingZooWrapper  # noqa: E402
from torchrl.envs.utils import MarlGroupMapType  # noqa: E402

from connect4_env import connect4_v0  # noqa: E402
from connect4_env.core import Board  # noqa: E402

AGENTS = ("player_0", "player_1")


def _masked_random_actions(td: torch.Tensor, generator: torch.Generator) -> None:
    """Write into ``td`` a random action each agent's ``action_mask`` allows."""
    for agent in AGENTS:
        mask = td[agent, "action_mask"]
        weights = mask.to(torch.float32)
        td[agent, "action"] = torch.multinomial(weights, 1, generator=generator).squeeze(-1)


@pytest.mark.parametrize("parallel", [True, False], ids=["parallel", "aec"])
def test_masked_random_games_through_pettingzoo_wrapper(parallel: bool) -> None:
    base = connect4_v0.parallel_env() if parallel else connect4_v0.env()
    # one group per agent in both APIs, so the keys are the agents' names (the Parallel default groups them)
    env = PettingZooWrapper(base, use_mask=True, seed=0, group_map=MarlGroupMapType.ONE_GROUP_PER_AGENT)
    assert env.parallel is parallel
    generator = torch.Generator().manual_seed(0)
    games = 0
    td = env.reset()
    for _ in range(200):
        for agent in AGENTS:  # the mask has the columns (and wait in the Parallel env), never all zeros
            assert td[agent, "action_mask"].any()
        _masked_random_actions(td, generator)
        td = env.step(td)["next"]
        if td["done"].all():
            games += 1
            # the game the wrapper played is over by the rules, and no agent was punished for a move
            board = env._env.unwrapped.board
            assert isinstance(board, Board) and board.is_terminal
            rewards = [float(td[agent, "reward"].sum()) for agent in AGENTS]
            assert sorted(rewards) in ([-1.0, 1.0], [0.0, 0.0])
            td = env.reset()
    assert games >= 3
    env.close()


def test_the_parallel_env_rolls_out_in_torchrl() -> None:
    env = PettingZooWrapper(connect4_v0.parallel_env(), use_mask=True, seed=1)
    rollout = env.rollout(10)  # TorchRL's own random policy, masked by the action spec
    assert rollout.batch_size[0] >= 7  # a game takes 7 moves at least
    # TorchRL groups both agents as "player": (steps, agents, rows, columns, planes)
    assert rollout["player", "observation", "observation"].shape[1:] == (2, 6, 7, 2)
    env.close()


def test_an_illegal_action_under_lose_ends_the_game_through_pettingzoo_wrapper() -> None:
    # "lose" keeps the infos' keys numeric and fixed (no "illegal_reason" str): the wrapper makes a tensor of each
    env = PettingZooWrapper(
        connect4_v0.parallel_env(illegal_action="lose"),
        use_mask=True,
        seed=0,
        group_map=MarlGroupMapType.ONE_GROUP_PER_AGENT,
    )
    td = env.reset()
    td["player_0", "action"] = torch.tensor([0])
    td["player_1", "action"] = torch.tensor([0])  # player_1 is not to move: it must wait (7)
    td = env.step(td)["next"]
    assert td["done"].all()
    assert float(td["player_1", "reward"].sum()) == -1.0 and float(td["player_0", "reward"].sum()) == 0.0
    env.close()
