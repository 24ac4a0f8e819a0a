"""OpponentPool: members, sampling, records, pickling, and the episode-boundary rule in every env that takes it."""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest

import connect4_env  # noqa: F401  (registers the envs)
from connect4_env import OpponentPool
from connect4_env.core import Board
from connect4_env.rules import Rules


class Fixed:
    """A deterministic member: among the legal columns it picks the one at (offset + stones) mod count."""

    def __init__(self, offset: int) -> None:
        self.offset = offset
        self.batch_calls = 0

    def act(self, observation, action_mask):
        legal = np.flatnonzero(action_mask)
        return int(legal[(self.offset + int(observation.sum())) % legal.size])

    def __repr__(self) -> str:
        return f"Fixed({self.offset})"


class Batched(Fixed):
    """The same rule with act_batch, counting its calls."""

    def act_batch(self, observations, action_masks):
        self.batch_calls += 1
        return np.array([self.act(o, m) for o, m in zip(observations, action_masks)], dtype=np.int64)


def test_members_from_specs_or_a_mapping_and_their_order():
    pool = OpponentPool(["random", "mcts:5"])
    assert pool.names == ["random", "mcts:5"] and len(pool) == 2 and "random" in pool
    pool = OpponentPool({"b": Fixed(1), "a": Fixed(2)}, weights={"a": 3})
    assert pool.names == ["b", "a"] and pool.weight("a") == 3.0 and pool.weight("b") == 1.0
    assert isinstance(pool["a"], Fixed)


@pytest.mark.parametrize(
    ("make", "error", "words"),
    [
        (lambda: OpponentPool("random"), TypeError, "mapping"),
        (lambda: OpponentPool([3]), TypeError, "agent specs"),
        (lambda: OpponentPool({1: "random"}), TypeError, "name"),
        (lambda: OpponentPool({"": "random"}), ValueError, "empty"),
        (lambda: OpponentPool(["random"], sampling="best"), ValueError, "sampling"),
        (lambda: OpponentPool(["random"], pfsp="soft"), ValueError, "pfsp"),
        (lambda: OpponentPool(["random"], weights={"x": 1}), ValueError, "name no member"),
        (lambda: OpponentPool(["random"], weights={"random": -1}), ValueError, "weight"),
        (lambda: OpponentPool(["random"], weights={"random": float("nan")}), ValueError, "weight"),
        (lambda: OpponentPool(["random"], weights={"random": "2"}), TypeError, "weight"),
        (lambda: OpponentPool(["random"], window=0), ValueError, "window"),
        (lambda: OpponentPool(["nobody"]), ValueError, "nobody"),
        (lambda: OpponentPool({"x": 3.5}), TypeError, "pool member"),
        (lambda: OpponentPool(["random"], seed=-1), ValueError, "seed"),
    ],
)
def test_bad_arguments_raise_clear_errors(make, error, words):
    with pytest.raises(error, match=words):
        make()


def test_a_failed_change_leaves_the_pool_as_it_was():
    pool = OpponentPool({"a": Fixed(0)})
    before = pickle.dumps(pool)
    for bad in (lambda: pool.add("a", Fixed(1)), lambda: pool.add("b", 7), lambda: pool.set_weight("a", -2)):
        with pytest.raises((TypeError, ValueError)):
            bad()
    with pytest.raises(KeyError, match="no member"):
        pool.remove("zz")
    with pytest.raises(ValueError, match="outcome"):
        pool.record("a", "won")
    with pytest.raises(KeyError, match="never was"):
        pool.record("zz", "win")
    assert pool == pickle.loads(before)


def test_an_empty_pool_or_all_zero_weights_cannot_start_a_game():
    with pytest.raises(ValueError, match="empty"):
        OpponentPool().draw()
    pool = OpponentPool({"a": Fixed(0)}, weights={"a": 0}, sampling="weights")
    with pytest.raises(ValueError, match="weighs 0"):
        pool.draw()
    env = gym.make("Connect4-v0", opponent=OpponentPool())
    with pytest.raises(ValueError, match="empty"):
        env.reset(seed=0)


def _frequencies(pool: OpponentPool, draws: int = 20_000) -> dict[str, float]:
    names = pool.draw(np.random.default_rng(7), size=draws)
    return {name: names.count(name) / draws for name in pool.names}


def test_uniform_ignores_weights_and_weights_draw_in_proportion():
    members = {"a": Fixed(0), "b": Fixed(1), "c": Fixed(2)}
    uniform = OpponentPool(members, weights={"a": 8})
    assert uniform.probabilities() == pytest.approx({"a": 1 / 3, "b": 1 / 3, "c": 1 / 3})
    weighted = OpponentPool(members, sampling="weights", weights={"a": 2, "b": 1, "c": 0})
    assert weighted.probabilities() == pytest.approx({"a": 2 / 3, "b": 1 / 3, "c": 0})
    seen = _frequencies(weighted)
    assert seen["c"] == 0 and abs(seen["a"] - 2 / 3) < 0.02  # 20,000 draws: sd ~0.003


def test_pfsp_favours_the_members_the_learner_loses_to():
    pool = OpponentPool({"weak": Fixed(0), "strong": Fixed(1), "new": Fixed(2)}, sampling="pfsp", window=10)
    for _ in range(30):
        pool.record("weak", "win")
        pool.record("strong", "loss")
    chances = pool.probabilities()
    assert chances["strong"] > chances["new"] > chances["weak"]
    # hard: (1 - score)^2 with one win and one loss of prior over the last 10 games
    assert chances["weak"] / chances["strong"] == pytest.approx((1 / 12) ** 2 / (1 - 1 / 12) ** 2)
    pool.pfsp = "variance"
    variance = pool.probabilities()
    assert variance["new"] > variance["strong"] == pytest.approx(variance["weak"])
    assert pool.stats()["strong"]["losses"] == 30 and pool.stats()["strong"]["games"] == 30
    assert len(pool._records["weak"].recent) == 10  # the window keeps the latest games only


def test_draws_are_reproducible_under_a_seed_and_after_pickling():
    a = OpponentPool(["random", "mcts:5", "solver"], seed=3)
    b = OpponentPool(["random", "mcts:5", "solver"], seed=3)
    assert [a.draw() for _ in range(50)] == [b.draw() for _ in range(50)]
    a.record("random", "win")
    restored = pickle.loads(pickle.dumps(a))
    assert restored == a and restored.stats() == a.stats()
    assert [restored.draw() for _ in range(20)] == [a.draw() for _ in range(20)]


def test_removed_members_keep_their_record_and_are_never_drawn():
    pool = OpponentPool({"a": Fixed(0), "b": Fixed(1)})
    pool.record("a", "draw")
    pool.remove("a")
    pool.record("a", "win")  # a game that was playing it ends after its removal
    stats = pool.stats()
    assert stats["a"]["member"] is False and stats["a"]["games"] == 2 and stats["a"]["probability"] == 0
    assert set(pool.draw(size=100)) == {"b"}


def test_a_pool_serves_one_board_size():
    pool = OpponentPool(["random"])
    gym.make("Connect4-v0", opponent=pool)
    with pytest.raises(ValueError, match="serves"):
        gym.make("Connect4-v0", opponent=pool, columns=8)
    assert pool.rules == Rules()


def test_a_pool_is_not_one_policy():
    with pytest.raises(TypeError, match="draw"):
        OpponentPool(["random"]).act(np.zeros((6, 7, 2), np.int8), np.ones(7, np.int8))


def _expected_reply(member, board: Board) -> int:
    from connect4_env.encoding import action_mask, observation_planes

    return member.act(observation_planes(board, board.to_move), action_mask(board))


def _reply(before: Board, after: Board) -> int:
    """The column of the one stone ``after`` has more than ``before``."""
    grown = [c for c in range(before.rules.columns) if after.heights[c] != before.heights[c]]
    assert len(grown) == 1 and after.ply == before.ply + 1
    return grown[0]


def test_a_gym_episode_keeps_its_member_while_the_pool_changes():
    members = {f"m{k}": Fixed(k) for k in range(3)}
    pool = OpponentPool(members, seed=1)
    env = gym.make("Connect4-v0", opponent=pool, agent_first=None)
    rng = np.random.default_rng(0)
    episodes = 0
    _, info = env.reset(seed=5)
    for step in range(3000):
        name = info["opponent"]
        member = env.unwrapped._seats.policy(0)
        board = env.unwrapped.board.copy()
        column = int(rng.choice(np.flatnonzero(info["action_mask"])))
        if step % 7 == 3:  # change the pool mid-episode: the member playing leaves, another joins
            if name in pool:
                pool.remove(name)
            pool.add(f"new{step}", Fixed(step % 5))
        _, _, terminated, _, info = env.step(column)
        assert info["opponent"] == name
        if not terminated:  # the reply is the drawn member's
            won = board.play(column)
            assert not won
            assert _reply(board, env.unwrapped.board) == _expected_reply(member, board)
        else:
            episodes += 1
            pool.add(name, member) if name not in pool else None
            _, info = env.reset()
    assert episodes > 100
    assert sum(s["games"] for s in pool.stats().values()) == episodes


def test_setting_a_new_opponent_mid_episode_plays_from_the_next_episode():
    env = gym.make("Connect4-v0", opponent=Fixed(0))
    env.reset(seed=0)
    env.step(0)
    env.unwrapped.opponent = Fixed(3)  # Fixed(0) and Fixed(3) answer differently here
    board = env.unwrapped.board.copy()
    board.play(0)
    assert _expected_reply(Fixed(0), board) != _expected_reply(Fixed(3), board)
    env.step(0)
    assert _reply(board, env.unwrapped.board) == _expected_reply(Fixed(0), board)
    env.reset()
    env.step(0)
    assert env.unwrapped.board.last_move == _expected_reply(Fixed(3), Board.from_moves([0]))


@pytest.mark.parametrize("autoreset_mode", ["NextStep", "SameStep"])
def test_no_vector_game_meets_two_opponents_while_the_pool_changes(autoreset_mode):
    """64 games, the pool changed every 40 steps: each game's name holds for the whole game, and each reply is
    the named member's (replayed from the boards)."""
    pool = OpponentPool({f"m{k}": Batched(k) for k in range(3)}, sampling="weights", seed=2)
    kept = dict(pool._members)
    env = gym.make_vec(
        "Connect4-v0", num_envs=64, opponent=pool, agent_first=None, autoreset_mode=autoreset_mode
    )
    vector = env.unwrapped
    rng = np.random.default_rng(1)
    _, info = env.reset(seed=3)
    names = info["opponent"].copy()
    episodes = 0
    for step in range(400):
        if step % 40 == 39:
            new = f"n{step}"
            kept[new] = Batched(step % 7)
            pool.add(new, kept[new], weight=3.0)
            pool.remove(pool.names[0])
            pool.set_weight(pool.names[-1], 0.5)
        boards = [vector.boards.board(i) for i in range(64)]
        masks = vector.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        was_ending = vector._needs_reset.copy()
        _, _, terminated, _, info = env.step(actions)
        for i in range(64):
            if was_ending[i]:  # NextStep: this step started a new game
                names[i] = info["opponent"][i]
                continue
            same_step_end = autoreset_mode == "SameStep" and terminated[i]
            named = info["final_info"]["opponent"][i] if same_step_end else info["opponent"][i]
            assert named == names[i], (step, i)
            board = boards[i]
            if not board.play(int(actions[i])) and board.ply < board.rules.cells:
                after = vector.boards.board(i) if not terminated[i] or autoreset_mode == "NextStep" else None
                if after is not None:  # the reply is the named member's
                    assert _reply(board, after) == _expected_reply(kept[names[i]], board), (step, i)
            if terminated[i]:
                episodes += 1
                if autoreset_mode == "SameStep":
                    names[i] = info["opponent"][i]
    assert episodes > 2000
    recorded = sum(s["games"] for s in pool.stats().values())
    assert recorded == episodes


def test_games_facing_one_member_are_answered_in_one_call():
    members = {f"m{k}": Batched(k) for k in range(4)}
    env = gym.make_vec("Connect4-v0", num_envs=32, opponent=OpponentPool(members, seed=0))
    env.reset(seed=0)
    for member in members.values():
        member.batch_calls = 0
    steps = 5
    for _ in range(steps):
        env.step(np.zeros(32, dtype=np.int64) + np.arange(32) % 7)
    # one call per member a step at most (plus one per step for the games that restarted moving second: none,
    # the learner moves first)
    assert all(member.batch_calls <= steps for member in members.values())
    assert sum(member.batch_calls for member in members.values()) >= steps


def test_sb3_vec_env_names_the_opponent_and_set_attr_swaps_only_between_games():
    pytest.importorskip("stable_baselines3")
    from connect4_env import make_sb3_vec_env

    venv = make_sb3_vec_env(4, monitor=False, opponent=Fixed(0))
    venv.seed(0)
    venv.reset()
    venv.step(np.zeros(4, dtype=np.int64))
    venv.set_attr("opponent", Fixed(3))  # a curriculum's swap, mid-game
    venv.step(np.ones(4, dtype=np.int64))
    for i in range(4):
        before = Board.from_moves([0, _expected_reply(Fixed(0), Board.from_moves([0])), 1])
        assert _expected_reply(Fixed(0), before) != _expected_reply(Fixed(3), before)
        # not Fixed(3)'s answer: the game began against Fixed(0)
        assert _reply(before, venv.venv.boards.board(i)) == _expected_reply(Fixed(0), before)
    pooled = make_sb3_vec_env(4, monitor=False, opponent=OpponentPool({"a": Fixed(0), "b": Fixed(1)}, seed=0))
    pooled.seed(1)
    pooled.reset()
    _, _, dones, infos = pooled.step(np.zeros(4, dtype=np.int64))
    assert all(info["opponent"] in ("a", "b") for info in infos)


# -- issue 49: weights at the edge of float, threads, and envs in other processes --------------------------------
def test_weights_whose_sum_overflows_still_draw_in_proportion():
    """Two weights of 1e308 sum to inf: the chances were 0/0 and ``draw`` raised numpy's error."""
    pool = OpponentPool({"a": Fixed(0), "b": Fixed(1), "c": Fixed(2)}, sampling="weights", seed=0)
    pool.set_weight("a", 1e308)
    pool.set_weight("b", 1e308)
    pool.set_weight("c", 0.0)
    assert pool.probabilities() == {"a": 0.5, "b": 0.5, "c": 0.0}
    assert set(pool.draw(size=50)) == {"a", "b"}


def test_draws_racing_add_and_remove_from_another_thread_never_fail():
    """A league adds and removes snapshots while envs draw: a draw read a member's weight, or the env its policy,
    after another thread had removed it (KeyError)."""
    import sys
    import threading

    pool = OpponentPool({f"m{k}": Fixed(k) for k in range(4)}, sampling="pfsp", seed=0)
    env = gym.make("Connect4-v0", opponent=pool)
    vector = gym.make_vec("Connect4-v0", num_envs=4, opponent=pool)
    errors: list[BaseException] = []
    stop = threading.Event()

    def churn() -> None:
        k = 0
        while not stop.is_set():
            try:
                pool.add(f"n{k}", Fixed(k))
                pool.remove(f"n{k}")
            except BaseException as error:  # noqa: BLE001
                errors.append(error)
                return
            k += 1

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    thread = threading.Thread(target=churn)
    thread.start()
    try:
        for _ in range(1500):
            env.reset()
            vector.reset()
            pool.draw(size=4)
    except BaseException as error:  # noqa: BLE001
        errors.append(error)
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    assert errors == []


def test_an_async_vector_env_records_in_the_callers_pool_through_record_infos():
    """Each worker process of an async ``gym.make_vec`` plays with its own copy of the pool: the caller's pool
    heard of no game, so PFSP and the league's records never saw an outcome. ``record_infos`` records them."""
    import warnings

    pool = OpponentPool({"a": Fixed(0), "b": Fixed(3)}, sampling="pfsp", seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the workers' copies warn in their own processes
        env = gym.make_vec("Connect4-v0", num_envs=2, vectorization_mode="async", opponent=pool)
    try:
        env.reset(seed=0)
        rng = np.random.default_rng(0)
        ended = recorded = 0
        for _ in range(200):
            _, _, terminated, truncated, infos = env.step(rng.integers(0, 7, size=2))
            ended += int(np.sum(terminated | truncated))
            recorded += pool.record_infos(infos)
    finally:
        env.close()
    assert ended > 0 and recorded == ended
    assert sum(pool.record_of(name).games for name in ("a", "b")) == ended


def test_record_infos_reads_sb3_lists_and_skips_games_still_playing():
    pool = OpponentPool({"a": Fixed(0), "b": Fixed(1)})
    infos = [{"opponent": "a", "outcome": "win"}, {"opponent": "b"}, {"opponent": "b", "outcome": "loss"}]
    assert pool.record_infos(infos) == 2
    assert (pool.record_of("a").wins, pool.record_of("b").losses) == (1, 1)
    gym_infos = {
        "opponent": np.array(["a", "b"], dtype=object),
        "outcome": np.array(["draw", None], dtype=object),
        "_outcome": np.array([True, False]),
    }
    assert pool.record_infos(gym_infos) == 1 and pool.record_of("a").draws == 1
    with pytest.raises(TypeError, match="info dict"):
        pool.record_infos("win")


def test_a_copy_of_the_pool_in_another_process_warns_once_when_it_records():
    import subprocess
    import sys

    script = (
        "import pickle, sys, warnings\n"
        "pool = pickle.loads(sys.stdin.buffer.read())\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    pool.record('random', 'win'); pool.record('random', 'loss')\n"
        "print(len(caught)); print(caught[0].message)\n"
    )
    pool = OpponentPool(["random"])
    done = subprocess.run(
        [sys.executable, "-c", script], input=pickle.dumps(pool), capture_output=True, check=True
    )
    count, message = done.stdout.decode().splitlines()[:2]
    assert count == "1" and "copy" in message and "record_infos" in message
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pickle.loads(pickle.dumps(pool)).record("random", "win")  # a copy in this process: no warning
