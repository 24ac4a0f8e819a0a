"""Tabular Q-learning: canonical keys, the update, training, greedy play, files."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from helpers.extras import needs

from connect4_agents import RandomAgent, make_policy, policy_from_spec
from connect4_agents.evaluation.arena import play_match
from connect4_agents.evaluation.metrics import optimal_move_rate
from connect4_agents.qlearning.agent import QLearningAgent, canonical_key
from connect4_agents.qlearning.learning import td_update
from connect4_agents.solver.agent import SolverAgent
from connect4_env import Board, IllegalMoveError, Rules
from connect4_env.encoding import action_mask, observation_planes


def test_mirror_images_share_one_entry() -> None:
    left = Board.from_moves([0, 1, 0], Rules(4, 5))
    right = Board.from_moves([4, 3, 4], Rules(4, 5))
    assert canonical_key(left)[0] == canonical_key(right)[0]
    assert canonical_key(left)[1] != canonical_key(right)[1]
    agent = QLearningAgent(Rules(4, 5, 4))
    row, mirrored = agent._row(left)
    row[:] = np.arange(5) if not mirrored else np.arange(5)[::-1]
    np.testing.assert_array_equal(agent.q_values(left), np.arange(5))
    np.testing.assert_array_equal(agent.q_values(right), np.arange(5)[::-1])


def test_update_rule() -> None:
    agent = QLearningAgent(Rules(4, 5, 4), alpha=0.5, gamma=0.9)
    row, next_row = np.zeros(5), np.array([0.0, 2.0, 9.0, 1.0, 0.0])
    td_update(agent, row, 1, 1.0, next_row, [0, 1, 3])  # column 2 is not legal next: max over legal is 2.0
    assert row[1] == pytest.approx(0.5 * (1.0 + 0.9 * 2.0))
    td_update(agent, row, 1, -1.0, None, [])
    assert row[1] == pytest.approx(1.4 + 0.5 * (-1.0 - 1.4))


def test_training_learns_and_is_reproducible() -> None:
    def trained(seed: int) -> tuple[QLearningAgent, list[float]]:
        agent = QLearningAgent(Rules(3, 4, 3), seed=seed, epsilon_decay=0.999)
        curve = agent.train(RandomAgent(seed=seed + 1), 4000, window=1000)
        return agent, curve.win_rate

    agent, win_rates = trained(0)
    again, win_rates_again = trained(0)
    assert win_rates == win_rates_again and agent.q.keys() == again.q.keys()
    assert len(win_rates) == 4 and agent.episodes_trained == 4000
    assert win_rates[-1] > win_rates[0]
    result = play_match(agent, RandomAgent(seed=9), 400, Rules(3, 4, 3))
    assert result.score > 0.8


def test_self_play_and_mcts_opponents() -> None:
    agent = QLearningAgent(Rules(3, 4, 3), seed=0)
    curve = agent.train(agent, 300, window=100)
    assert len(curve.episodes) == 3 and len(agent.q) > 0
    curve = agent.train(make_policy("mcts", playouts=20, seed=1, rules=Rules(3, 4, 3)), 50, window=50)
    assert curve.episodes == [350]


def test_epsilon_schedule_and_greedy_act() -> None:
    agent = QLearningAgent(Rules(4, 5, 4), epsilon=0.5, epsilon_min=0.1, epsilon_decay=0.5)
    assert agent.current_epsilon() == 0.5
    agent.episodes_trained = 10
    assert agent.current_epsilon() == 0.1
    board = Board.from_moves([2, 2], Rules(4, 5))
    row, mirrored = agent._row(board)
    row[:] = 0
    row[4 if mirrored else 0] = 1.0  # column 0 in board orientation is the best
    assert all(agent.act(observation_planes(board), action_mask(board)) == 0 for _ in range(20))
    full = Board.from_moves([0, 0, 0, 0], Rules(4, 5))
    row, mirrored = agent._row(full)
    row[:] = 0
    row[4 if mirrored else 0] = 5.0  # the best value sits on a full column: it must not be played
    assert agent.act(observation_planes(full), action_mask(full)) != 0


def test_every_budget_ends_near_greedy() -> None:
    agent = QLearningAgent(Rules(3, 4, 3), seed=0)
    start, floor, fraction = agent.epsilon, agent.epsilon_min, agent.exploration_fraction
    assert agent.current_epsilon() == start  # no plan yet
    curve = agent.train(RandomAgent(seed=1), 400, window=100)
    assert agent.planned_episodes == 400
    assert agent.epsilon_at(0) == start and agent.epsilon_at(400) == floor
    assert agent.epsilon_at(int(200 * fraction)) == pytest.approx((start + floor) / 2)
    assert curve.epsilon[-1] == floor and curve.epsilon[0] > floor
    # in several calls: the plan spans them all when told the total
    chunked = QLearningAgent(Rules(3, 4, 3), seed=0)
    chunked.train(RandomAgent(seed=1), 200, window=100, total_episodes=400)
    assert chunked.current_epsilon() == pytest.approx(agent.epsilon_at(200))
    chunked.train(RandomAgent(seed=1), 200, window=100, total_episodes=400)
    assert chunked.current_epsilon() == floor
    # a table trained further without a total continues near greedy
    agent.train(RandomAgent(seed=1), 100, window=100)
    assert agent.planned_episodes == 500 and agent.epsilon_at(400) == floor
    with pytest.raises(ValueError, match="total_episodes"):
        agent.train(RandomAgent(), 10, total_episodes=0)


def test_learning_from_the_opponents_moves_fills_both_seats_states() -> None:
    both = QLearningAgent(Rules(3, 4, 3), seed=0)
    both.train(RandomAgent(seed=1), 300, window=100)
    own = QLearningAgent(Rules(3, 4, 3), seed=0, learn_from_opponent=False)
    own.train(RandomAgent(seed=1), 300, window=100)
    assert len(both.q) > len(own.q)


def test_wrong_board_size_is_refused() -> None:
    agent = QLearningAgent(Rules(4, 5, 4))
    board = Board(Rules(3, 5, 3))
    with pytest.raises(ValueError, match="trained on a 4x5 board and cannot play a 3x5"):
        agent.act(observation_planes(board), action_mask(board))


def test_save_load_round_trip(tmp_path: Path) -> None:
    agent = QLearningAgent(Rules(3, 4, 3), seed=0, rewards="shaped")
    agent.train(RandomAgent(seed=1), 500, window=250)
    path = agent.save(tmp_path / "q.npz")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["q.npz"]  # no temporary file left behind
    loaded = QLearningAgent.load(path)
    assert loaded.q.keys() == agent.q.keys()
    for key in agent.q:
        np.testing.assert_array_equal(loaded.q[key], agent.q[key])
    assert (loaded.rules, loaded.rewards, loaded.episodes_trained, loaded.alpha) == (
        agent.rules,
        "shaped",
        500,
        agent.alpha,
    )
    with np.load(path, allow_pickle=False) as data:
        meta = json.loads(str(data["meta"]))
    assert meta["format"] == "connect4_env.qtable" and meta["rows"] == 3
    assert isinstance(policy_from_spec(f"qlearning:{path}"), QLearningAgent)


def test_bad_files_raise_clear_errors(tmp_path: Path) -> None:
    agent = QLearningAgent(Rules(3, 4, 3))
    agent.train(RandomAgent(seed=1), 50, window=50)
    good = agent.save(tmp_path / "q.npz")
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(good.read_bytes()[: len(good.read_bytes()) // 2])
    with pytest.raises(ValueError, match="corrupt or truncated"):
        QLearningAgent.load(truncated)
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a zip file at all")
    with pytest.raises(ValueError, match="corrupt or truncated"):
        QLearningAgent.load(garbage)
    other = tmp_path / "other.npz"
    np.savez(other, weights=np.zeros(3))
    with pytest.raises(ValueError, match="not a Q-table file"):
        QLearningAgent.load(other)
    wrong_format = tmp_path / "wrong.npz"
    np.savez(
        wrong_format,
        keys=np.zeros((1, 3), np.uint8),
        q=np.zeros((1, 4)),
        meta=np.array(json.dumps({"format": "x"})),
    )
    with pytest.raises(ValueError, match="not a Q-table file"):
        QLearningAgent.load(wrong_format)
    with np.load(good, allow_pickle=False) as data:
        meta = str(data["meta"])
        keys = data["keys"]
    mismatched = tmp_path / "mismatched.npz"
    np.savez(mismatched, keys=keys, q=np.zeros((keys.shape[0], 7)), meta=np.array(meta))
    with pytest.raises(ValueError, match=r"array .q. is float64 \(\d+, 7\); expected float64"):
        QLearningAgent.load(mismatched)
    with pytest.raises(FileNotFoundError):
        QLearningAgent.load(tmp_path / "missing.npz")
    assert zipfile.is_zipfile(good)


def test_original_preset() -> None:
    agent = QLearningAgent.original(seed=0)
    assert (agent.alpha, agent.gamma, agent.epsilon, agent.epsilon_decay, agent.rewards) == (
        0.6,
        0.8,
        0.1,
        1.0,
        "shaped",
    )
    assert agent.current_epsilon() == 0.1


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"alpha": 0}, "alpha"),
        ({"gamma": 1.5}, "gamma"),
        ({"epsilon": -0.1}, "epsilon"),
        ({"rewards": "dense"}, "rewards"),
        ({"updates": "batch"}, "updates"),
        ({"exploration_fraction": 0}, "exploration_fraction"),
        ({"epsilon_decay": 1.5}, "epsilon_decay"),
    ],
)
def test_bad_settings_raise(kwargs: dict, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        QLearningAgent(**kwargs)


@needs("train", "matplotlib")
def test_learning_curve_plot(tmp_path: Path) -> None:
    agent = QLearningAgent(Rules(3, 4, 3), seed=0)
    curve = agent.train(RandomAgent(seed=1), 200, window=50)
    path = curve.plot(tmp_path / "curve.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_a_short_run_at_defaults_learns() -> None:
    # 20,000 games against random at the defaults (a few seconds). The goal, 0.90 overall and 0.85 as
    # second, is not reached (0.805 / 0.742 over five seeds, see the README); this asserts what is.
    agent = QLearningAgent(Rules(4, 5, 4), seed=0)
    curve = agent.train(RandomAgent(seed=1), 20_000, window=10_000)
    assert curve.epsilon[-1] == agent.epsilon_min  # the budget ends greedy
    summary = play_match(agent, RandomAgent(seed=2), 2000, Rules(4, 5, 4)).summary()
    assert summary["overall"]["win_rate"] >= 0.76 and summary["as_second"]["win_rate"] >= 0.68


@pytest.mark.slow
def test_four_by_five_against_random() -> None:
    # One million games against random at the defaults (a few minutes). The targets are 95 % wins on
    # each side (reached: 0.952 / 0.958 here) and 90 % solver-best moves (not reached, see the README).
    agent = QLearningAgent(Rules(4, 5, 4), seed=0)
    agent.train(RandomAgent(seed=1), 1_000_000, window=10_000)
    result = play_match(agent, RandomAgent(seed=2), 2000, Rules(4, 5, 4), keep_games=True)
    summary = result.summary()
    assert summary["as_first"]["win_rate"] >= 0.945
    assert summary["as_second"]["win_rate"] >= 0.945
    boards = []
    for index, record in enumerate(result.games[:300]):
        board, seat = Board(Rules(4, 5, 4)), index % 2
        for column in record.moves:
            if board.to_move == seat:
                boards.append(board.copy())
            board.play(column)
    assert optimal_move_rate(agent, SolverAgent(), boards) >= 0.78


def test_train_takes_an_opponent_by_name_or_spec_and_refuses_other_things() -> None:
    agent = QLearningAgent(Rules(4, 5, 4), seed=0)
    agent.train("random", 20)
    agent.train("mcts:5", 2)
    assert agent.episodes_trained == 22
    for bad, error in (("nobody", ValueError), (42, TypeError), (object(), TypeError)):
        with pytest.raises(error):
            agent.train(bad, 5)
    assert agent.episodes_trained == 22  # a refused call trains nothing


@pytest.mark.parametrize("learn_from_opponent", [False, True])
def test_every_setting_survives_save_and_load(tmp_path: Path, learn_from_opponent: bool) -> None:
    agent = QLearningAgent(
        Rules(3, 4, 3),
        alpha=0.3,
        gamma=0.9,
        epsilon=0.4,
        epsilon_min=0.02,
        exploration_fraction=0.3,
        updates="online",
        learn_from_opponent=learn_from_opponent,
        seed=0,
    )
    agent.train(RandomAgent(seed=1), 50)
    loaded = QLearningAgent.load(agent.save(tmp_path / "q.npz"))
    assert loaded.settings() == agent.settings()
    assert loaded.learn_from_opponent is learn_from_opponent


@pytest.mark.parametrize("size", [(4, 5, 4), (3, 4, 3), (5, 2, 2)])
def test_the_key_is_the_smaller_of_the_position_and_its_mirror_image(size: tuple[int, int, int]) -> None:
    rng = np.random.default_rng(0)
    rules = Rules(*size)
    for _ in range(200):
        board, moves = Board(rules), []
        for _ in range(int(rng.integers(0, rules.cells))):
            if board.is_terminal:
                break
            moves.append(int(rng.choice(board.legal_moves())))
            board.play(moves[-1])
        mirror = Board.from_moves([rules.columns - 1 - c for c in moves], rules)
        keys = [b.stones[b.to_move] + b.mask + rules.bottom_mask for b in (board, mirror)]
        key, mirrored = canonical_key(board)
        assert key == min(keys) and mirrored == (keys[1] < keys[0])
        assert canonical_key(mirror)[0] == key


class _RandomThroughAct:
    """A random opponent that is not a RandomAgent: training asks its act, with the observation."""

    def __init__(self, seed: int) -> None:
        self.inner = RandomAgent(seed=seed)
        self.observations = 0

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        assert observation.shape == (4, 5, 2)
        self.observations += 1
        return self.inner.act(observation, action_mask)


def test_a_random_opponent_plays_the_same_games_with_or_without_its_observations() -> None:
    # RandomAgent is asked to choose without the observation planes; through act it draws the same columns
    tables, through_act = [], _RandomThroughAct(seed=3)
    for opponent in (RandomAgent(seed=3), through_act):
        agent = QLearningAgent(Rules(4, 5, 4), seed=0)
        curve = agent.train(opponent, 300, window=100)
        tables.append((agent.q, curve.win_rate))
    assert through_act.observations > 1000 and tables[0][1] == tables[1][1]
    assert tables[0][0].keys() == tables[1][0].keys()
    assert all(np.array_equal(tables[0][0][key], tables[1][0][key]) for key in tables[0][0])


class _MaskOnly:
    """A policy that reads only the mask, with or without ``choose(legal)``: it plays the rightmost legal column."""

    uses_observations = False

    def __init__(self) -> None:
        self.chosen_from: list[list[int]] = []
        self.observations: list[object] = []

    def act(self, observation: object, action_mask: np.ndarray) -> int:
        self.observations.append(observation)
        return int(np.flatnonzero(action_mask)[-1])


class _MaskOnlyChooser(_MaskOnly):
    def choose(self, legal: list[int]) -> int:
        self.chosen_from.append(list(legal))
        return legal[-1]


def test_a_mask_only_opponent_with_choose_is_asked_to_choose_from_the_legal_columns() -> None:
    curves, opponents = [], (_MaskOnlyChooser(), _MaskOnly())
    for opponent in opponents:
        curves.append(QLearningAgent(Rules(4, 5, 4), seed=0).train(opponent, 60, window=20).win_rate)
    chooser, actor = opponents
    # the chooser is never given an observation; its lists are the legal columns, which the actor's masks hold
    assert not chooser.observations and len(chooser.chosen_from) > 100
    assert all(legal == sorted(set(legal)) and set(legal) <= set(range(5)) for legal in chooser.chosen_from)
    assert not actor.chosen_from and all(np.shape(obs) == (4, 5, 2) for obs in actor.observations)
    assert curves[0] == curves[1] and len(actor.observations) == len(chooser.chosen_from)


class _Answers(_MaskOnlyChooser):
    """An opponent that answers ``answer`` through both act and choose."""

    def __init__(self, answer: object, mask_only: bool) -> None:
        super().__init__()
        self.answer = answer
        self.uses_observations = not mask_only

    def act(self, observation: object, action_mask: np.ndarray) -> int:
        return self.answer  # type: ignore[return-value]

    def choose(self, legal: list[int]) -> int:
        return self.answer  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"Answers({self.answer!r})"


@pytest.mark.parametrize("mask_only", [False, True], ids=["act", "choose"])
@pytest.mark.parametrize("answer", [5, -1, "2", 2.0, True, np.array([1, 2])], ids=repr)
def test_an_opponents_illegal_answer_names_the_opponent(answer: object, mask_only: bool) -> None:
    with pytest.raises(IllegalMoveError, match=r"the opponent Answers\("):
        QLearningAgent(Rules(4, 5, 4), seed=0).train(_Answers(answer, mask_only), 5)
