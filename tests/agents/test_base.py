"""The Policy protocol, RandomAgent and make_agent."""

from __future__ import annotations

import numpy as np
import pytest

from connect4_agents import NoLegalMoveError, Policy, RandomAgent, agent_names, make_agent


def test_random_agent_plays_legal_reproducible_moves() -> None:
    planes = np.zeros((6, 7, 2), np.int8)
    mask = np.array([0, 1, 0, 1, 1, 0, 0], np.int8)
    moves = [RandomAgent(seed=5).act(planes, mask) for _ in range(3)]
    a, b = RandomAgent(seed=5), RandomAgent(seed=5)
    seq_a = [a.act(planes, mask) for _ in range(50)]
    seq_b = [b.act({"observation": planes, "action_mask": mask}) for _ in range(50)]
    assert seq_a == seq_b and set(seq_a) == {1, 3, 4} and len(set(moves)) == 1
    assert all(type(m) is int for m in seq_a)
    a.reset(seed=5)
    assert [a.act(planes, mask) for _ in range(50)] == seq_a
    assert isinstance(a, Policy)


def test_no_legal_move_is_a_clear_error() -> None:
    with pytest.raises(NoLegalMoveError, match="no legal move"):
        RandomAgent(seed=0).act(np.zeros((6, 7, 2), np.int8), np.zeros(7, np.int8))


def test_make_agent_by_name() -> None:
    assert isinstance(make_agent("random", seed=1), RandomAgent)
    assert "random" in agent_names()
    with pytest.raises(ValueError, match="unknown agent 'muzero'; known agents: .*random"):
        make_agent("muzero")


def test_random_act_batch_is_uniform_over_legal_columns() -> None:
    agent = RandomAgent(seed=0)
    masks = np.zeros((30000, 7), np.int8)
    masks[:, [0, 3, 6]] = 1
    masks[:10000, 6] = 0  # a third of the rows allow only columns 0 and 3
    chosen = agent.act_batch(None, masks)
    assert masks[np.arange(30000), chosen].all()
    counts = np.bincount(chosen[10000:], minlength=7)
    assert counts[[1, 2, 4, 5]].sum() == 0 and all(abs(c / 20000 - 1 / 3) < 0.02 for c in counts[[0, 3, 6]])
    assert abs(np.mean(chosen[:10000] == 0) - 0.5) < 0.03
    with pytest.raises(NoLegalMoveError):
        agent.act_batch(None, np.zeros((2, 7), np.int8))


@pytest.mark.parametrize("columns", [127, 128, 256, 300])
def test_random_act_batch_on_wide_boards(columns: int) -> None:
    # the legal-column counts must not overflow a small integer type: every legal column can be chosen
    agent = RandomAgent(seed=0)
    masks = np.ones((4000, columns), np.int8)
    masks[:, 1] = 0
    chosen = agent.act_batch(None, masks)
    assert masks[np.arange(4000), chosen].all()
    assert chosen.max() >= columns - 10 and chosen.min() == 0  # the whole width is reachable
    np.testing.assert_array_equal(agent.act_batch(None, np.eye(columns, dtype=np.int8)), np.arange(columns))
