"""Policies receive the game's rules (bind) wherever they play, and agents refuse masks that contradict the board."""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from helpers.extras import needs, needs_book

import connect4_env  # noqa: F401  (registers Connect4-v0)
from connect4_agents import MCTSAgent, QLearningAgent, RandomAgent, SolverAgent, make_policy, policy_from_spec
from connect4_agents.evaluation.arena import play_game
from connect4_env import Board, Rules
from connect4_env.encoding import action_mask, observation_planes
from connect4_env.envs.vector_env import Connect4VectorEnv
from connect4_env.policy import bind_policy

THREE_IN_A_ROW = Rules(5, 6, 3)


def immediate_wins(n: int, seed: int) -> list[Board]:
    """5x6 positions (three in a row wins) where the player to move can win at once."""
    rng = np.random.default_rng(seed)
    found = []
    while len(found) < n:
        board = Board(THREE_IN_A_ROW)
        for _ in range(int(rng.integers(2, 9))):
            if board.is_terminal:
                break
            legal = board.legal_moves()
            board.play(legal[rng.integers(len(legal))])
        if board.is_terminal:
            continue
        if any(board.copy().play(c) for c in board.legal_moves()):
            found.append(board)
    return found


def winning_columns(board: Board) -> set[int]:
    return {c for c in board.legal_moves() if board.copy().play(c)}


@pytest.mark.parametrize("name", ["mcts", "solver"])
def test_env_opponents_play_the_envs_win_length(name: str) -> None:
    env = gym.make("Connect4-v0", rows=5, columns=6, win_length=3, opponent=name)
    opponent = env.unwrapped.opponent
    assert opponent.rules == THREE_IN_A_ROW and opponent.win_length == 3
    for board in immediate_wins(12, seed=1):
        column = opponent.act(observation_planes(board), action_mask(board))
        assert column in winning_columns(board), board


def test_every_runner_binds_its_policies() -> None:
    vector = Connect4VectorEnv(3, rows=5, columns=6, win_length=3, opponent=MCTSAgent(playouts=50))
    assert vector.opponent.rules == THREE_IN_A_ROW
    players = [MCTSAgent(playouts=50, seed=0), SolverAgent()]
    play_game(players, THREE_IN_A_ROW)
    assert all(player.rules == THREE_IN_A_ROW for player in players)
    assert policy_from_spec("mcts:20", rules=THREE_IN_A_ROW).rules == THREE_IN_A_ROW
    learner = QLearningAgent(Rules(5, 6, 3), seed=0)
    teacher = MCTSAgent(playouts=20, seed=0)
    learner.train(teacher, 4, window=2)
    assert teacher.rules == THREE_IN_A_ROW


@needs("train", "stable_baselines3")
def test_the_sb3_vec_env_binds_its_opponent() -> None:
    sb3 = connect4_env.make_sb3_vec_env(2, rows=5, columns=6, win_length=3, opponent="solver")
    assert sb3.unwrapped.venv.opponent.rules == THREE_IN_A_ROW
    sb3.close()


def test_conflicting_rules_are_refused() -> None:
    with pytest.raises(
        ValueError, match="built for 6x7 with win_length=4, but the game is 5x6 with win_length=3"
    ):
        gym.make("Connect4-v0", rows=5, columns=6, win_length=3, opponent=MCTSAgent(rules=Rules()))
    with pytest.raises(ValueError, match="trained on 4x5"):
        bind_policy(QLearningAgent(Rules(4, 5, 4)), Rules())
    with pytest.raises(TypeError, match="Rules"):
        bind_policy(RandomAgent(), (6, 7, 4))
    bound = MCTSAgent(playouts=20).bind(Rules())
    with pytest.raises(ValueError, match="bound to a 6x7 game"):
        bound.act(observation_planes(Board(Rules(5, 6, 3))), np.ones(6, np.int8))


def test_unbound_agents_default_to_four_in_a_row() -> None:
    assert MCTSAgent().win_length == 4 and SolverAgent().win_length == 4
    assert MCTSAgent(rules=Rules(5, 6, 3)).win_length == 3


FULL_COLUMN = Board.from_moves([3] * 6)  # column 3 is full


@pytest.mark.parametrize(
    "agent",
    [
        MCTSAgent(playouts=20, seed=0),
        pytest.param(SolverAgent(), marks=needs_book),  # an early 6x7 position: the book answers it
        RandomAgent(seed=0),
        QLearningAgent(Rules(6, 7, 4)),
    ],
    ids=["mcts", "solver", "random", "qlearning"],
)
def test_masks_that_contradict_the_board_are_refused(agent: object) -> None:
    planes = observation_planes(FULL_COLUMN)
    only_full = np.zeros(7, dtype=np.int8)
    only_full[3] = 1
    with pytest.raises(ValueError, match="does not match|which is full"):
        agent.act(planes, only_full)
    for width in (6, 8):
        with pytest.raises(ValueError, match="7 columns"):
            agent.act(planes, np.ones(width, dtype=np.int8))
    assert agent.act(planes, action_mask(FULL_COLUMN)) != 3


def test_batched_random_refuses_masks_of_another_width() -> None:
    agent = RandomAgent(seed=0).bind(Rules())
    with pytest.raises(ValueError, match="7 columns"):
        agent.act_batch(None, np.ones((4, 8), np.int8))


@pytest.mark.slow  # over 6 s on 2 cores: make test-slow (CI runs it)
def test_commands_bind_their_agents(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "connect4_agents.commands",
            "tournament",
            "mcts:30",
            "solver",
            "--rows",
            "4",
            "--columns",
            "5",
            "--win-length",
            "3",
            "--games",
            "2",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    table = tmp_path / "q.npz"
    QLearningAgent(Rules(4, 5, 4)).save(table)
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "connect4_agents.commands",
            "tournament",
            f"qlearning:{table}",
            "random",
            "--games",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "error: this Q-table was trained on 4x5" in bad.stderr
    assert make_policy("random") is not None


@pytest.mark.parametrize("opponent", ["mcts", pytest.param("solver", marks=needs_book)])
def test_an_env_with_a_search_opponent_pickles_mid_game(opponent: str) -> None:
    env = gym.make("Connect4-v0", opponent=opponent)
    env.reset(seed=0)
    env.step(3)  # the opponent has searched once
    for clone in (pickle.loads(pickle.dumps(env.unwrapped)), copy.deepcopy(env.unwrapped)):
        assert clone.board == env.unwrapped.board
        assert clone.opponent.rules == Rules()
        clone.step(2)  # the copy plays on


def test_an_unknown_agent_name_suggests_the_closest_known_one() -> None:
    from connect4_env.policy import did_you_mean, policy_from_spec

    for typed, meant in (
        ("mtcs", "mcts"),
        ("slover:1", "solver"),
        ("MCTS:200", "mcts"),
        ("qlearn:t.npz", "qlearning"),
    ):
        with pytest.raises(
            ValueError, match=rf"unknown agent '{typed.split(':')[0]}' \(did you mean '{meant}'\?\); known"
        ):
            policy_from_spec(typed)
    with pytest.raises(ValueError) as unknown:
        policy_from_spec("zzz")
    assert "did you mean" not in str(unknown.value) and "known agents: alphazero," in str(unknown.value)
    with pytest.raises(ValueError) as flood:
        policy_from_spec("m" * 1_000_000)  # neither suggested nor repeated in full
    assert len(str(flood.value)) < 300 and "did you mean" not in str(flood.value)
    assert did_you_mean("plya", ["play", "replay"]) == " (did you mean 'play'?)"
    assert did_you_mean("anything", []) == ""
