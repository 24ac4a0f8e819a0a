"""The Policy protocol, RandomAgent and make_policy."""

from __future__ import annotations

import numpy as np
import pytest

from connect4_agents import NoLegalMoveError, Policy, RandomAgent, make_policy, policy_names


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
    assert isinstance(make_policy("random", seed=1), RandomAgent)
    assert "random" in policy_names()
    with pytest.raises(ValueError, match="unknown agent 'muzero'; known agents: .*random"):
        make_policy("muzero")


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


def _rules_takers() -> list:
    from connect4_agents import MCTSAgent, QLearningAgent, SolverAgent
    from connect4_agents.evaluation.arena import play_game
    from connect4_agents.interop.text import TextPolicy
    from connect4_env.core import Board
    from connect4_env.integrations.openspiel.convert import load_openspiel_game
    from connect4_env.policy import bind_policy

    return [
        ("Board", lambda r: Board(r), True),
        ("Board.from_stones", lambda r: Board.from_stones(r, 0, 0), False),
        ("MCTSAgent", lambda r: MCTSAgent(rules=r), True),
        ("SolverAgent", lambda r: SolverAgent(rules=r), True),
        ("QLearningAgent", lambda r: QLearningAgent(rules=r), True),
        ("RandomAgent.bind", lambda r: RandomAgent().bind(r), False),
        ("bind_policy", lambda r: bind_policy(RandomAgent(), r), False),
        ("TextPolicy.bind", lambda r: TextPolicy(lambda prompt: "4").bind(r), False),
        ("play_game", lambda r: play_game([RandomAgent(), RandomAgent()], rules=r), True),
        ("load_openspiel_game", lambda r: load_openspiel_game(r), True),  # checked before OpenSpiel is needed
    ]


@pytest.mark.parametrize("value", [4, "6x7", True, (6, 7, 4), pytest.param(10**5000, id="10**5000")])
def test_every_rules_argument_is_checked_alike(value: object) -> None:
    """One check (connect4_env.rules.check_rules) for every ``rules`` argument: a TypeError naming the value,
    "or None" where None means the standard board, and how to build a Rules for a bare number."""
    for name, call, optional in _rules_takers():
        with pytest.raises(TypeError) as caught:
            call(value)
        message = str(caught.value)
        expected = "rules must be a connect4_env.Rules" + (" or None" if optional else ",")
        assert message.startswith(expected), (name, message)
        # a number past the 4,300 digits Python prints is shown by its size (repr() itself raised ValueError)
        shown = "an integer of 16610 bits" if value == 10**5000 else repr(value)
        assert shown in message, (name, message)
        assert ("Rules(rows, columns, win_length)" in message) == (type(value) is int), (name, message)
