"""Self-play's speed-ups change its cost, not its meaning: the evaluation cache answers as the network does,
a reused subtree is searched up to the same number of visits, and without reuse the games are the same."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.extras import importorskip

torch = importorskip("torch")

from helpers.reference import random_board  # noqa: E402

from connect4_agents.alphazero import PolicyValueNet  # noqa: E402
from connect4_agents.alphazero.config import AlphaZeroTrainConfig  # noqa: E402
from connect4_agents.alphazero.network import NetworkEvaluator  # noqa: E402
from connect4_agents.alphazero.selfplay import CachedEvaluator, self_play  # noqa: E402
from connect4_agents.mcts.puct import PUCTSearch  # noqa: E402
from connect4_env import Board, Rules  # noqa: E402

torch.set_num_threads(1)


def _net(seed: int = 0) -> PolicyValueNet:
    torch.manual_seed(seed)
    return PolicyValueNet(channels=8, blocks=1)


def _config(**settings: object) -> AlphaZeroTrainConfig:
    base: dict[str, object] = dict(rows=4, columns=5, games=6, parallel=3, simulations=12)
    base.update(settings)
    return AlphaZeroTrainConfig(**base).check()  # type: ignore[arg-type]


def test_the_cache_answers_as_the_network_does_and_stays_bounded() -> None:
    network = NetworkEvaluator(_net())
    cache = CachedEvaluator(network, capacity=10)
    boards = [random_board(np.random.default_rng(seed), 8) for seed in range(30)]
    boards = [board for board in boards if not board.is_terminal]
    for start in range(0, len(boards), 4):
        batch = boards[start : start + 4] + boards[:2]  # each batch repeats two earlier positions
        priors, values = cache.evaluate(batch)
        want_priors, want_values = network.evaluate(batch)
        assert np.allclose(priors, want_priors, atol=1e-6) and np.allclose(values, want_values, atol=1e-6)
        assert len(cache.answers) <= 10
    assert cache.hits > 0


def test_without_reuse_the_cache_plays_the_same_games() -> None:
    net = _net(1)
    plain = self_play(net, _config(subtree_reuse=False, evaluation_cache=0), 6, np.random.default_rng(5))
    cached = self_play(net, _config(subtree_reuse=False), 6, np.random.default_rng(5))
    assert plain[3] == cached[3]
    assert np.array_equal(plain[0], cached[0]) and np.array_equal(plain[2], cached[2])
    assert np.allclose(plain[1], cached[1])


def test_reuse_plays_legal_games_with_full_searches() -> None:
    planes, policies, values, plies = self_play(_net(2), _config(), 6, np.random.default_rng(0))
    assert len(planes) == len(policies) == len(values) == plies > 0
    assert np.allclose(policies.sum(axis=1), 1.0) and set(np.unique(values)) <= {-1.0, 0.0, 1.0}
    # a visit target never puts weight on a full column
    full = planes.sum(axis=3)[:, 0, :] != 0
    assert not np.any(policies[full] > 0)


def test_a_reused_root_is_searched_up_to_the_visits_asked() -> None:
    search = PUCTSearch(NetworkEvaluator(_net(3)), noise=0.25, seed=0)
    board = Board(Rules(4, 5, 4))
    (root,) = search.roots([board])
    search.run_to([root], 40)
    assert root.total_visits == 40
    column = int(np.argmax(root.visits))
    child = root.children[column]
    assert child is not None and 0 < child.total_visits < 40
    kept = child.total_visits
    priors = child.priors.copy()
    search.reroot(child)
    assert np.allclose(child.priors.sum(), 1.0) and not np.allclose(child.priors, priors)  # fresh noise
    search.run_to([child], 30)
    assert child.total_visits == max(30, kept)
    with pytest.raises(ValueError, match="finished game"):
        search.reroot(type(child).terminal(Board.from_moves([0, 1, 0, 1, 0, 1, 0], Rules(4, 5))))


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="evaluation_cache"):
        _config(evaluation_cache=-1)
    with pytest.raises(TypeError, match="subtree_reuse"):
        _config(subtree_reuse="yes")


def test_playout_cap_keeps_only_the_full_searches(monkeypatch: pytest.MonkeyPatch) -> None:
    targets: list[int] = []
    noised: list[bool] = []
    run_to, add_noise = PUCTSearch.run_to, PUCTSearch._add_noise

    def counting_run_to(self: PUCTSearch, roots: list, simulations: list[int]) -> None:  # type: ignore[type-arg]
        targets.extend(simulations)
        run_to(self, roots, simulations)

    def counting_noise(self: PUCTSearch, root: object, wanted: bool = True) -> object:
        noised.append(wanted)
        return add_noise(self, root, wanted)  # type: ignore[arg-type]

    monkeypatch.setattr(PUCTSearch, "run_to", counting_run_to)
    monkeypatch.setattr(PUCTSearch, "_add_noise", counting_noise)
    config = _config(playout_cap=0.3, fast_simulations=3)
    planes, policies, values, plies = self_play(_net(4), config, 6, np.random.default_rng(1))
    assert len(targets) == len(noised) == plies  # one search a move, each root noised or not once
    full = targets.count(config.simulations)
    assert targets.count(3) == plies - full and 0 < full < plies
    assert noised.count(True) == full  # root noise on the full searches only
    assert len(planes) == len(policies) == len(values) == full  # and only their positions kept
    assert np.allclose(policies.sum(axis=1), 1.0) and set(np.unique(values)) <= {-1.0, 0.0, 1.0}


def test_without_the_cap_fast_simulations_change_nothing() -> None:
    net = _net(5)
    one = self_play(net, _config(fast_simulations=1), 6, np.random.default_rng(2))
    other = self_play(net, _config(fast_simulations=12), 6, np.random.default_rng(2))
    assert one[3] == other[3] and np.array_equal(one[0], other[0]) and np.array_equal(one[2], other[2])


def test_value_mix_moves_only_the_value_targets_towards_the_search() -> None:
    net = _net(6)
    outcome = self_play(net, _config(subtree_reuse=False), 6, np.random.default_rng(3))
    mixed = self_play(net, _config(subtree_reuse=False, value_mix=0.5), 6, np.random.default_rng(3))
    searched = self_play(net, _config(subtree_reuse=False, value_mix=1.0), 6, np.random.default_rng(3))
    for part in (0, 1):  # the same games and visit targets
        assert np.allclose(outcome[part], mixed[part]) and np.allclose(outcome[part], searched[part])
    assert set(np.unique(outcome[2])) <= {-1.0, 0.0, 1.0}
    assert np.all(np.abs(searched[2]) <= 1) and not set(np.unique(searched[2])) <= {-1.0, 0.0, 1.0}
    assert np.allclose(mixed[2], 0.5 * outcome[2] + 0.5 * searched[2], atol=1e-6)


def test_run_to_takes_a_target_per_root_and_roots_a_noise_flag_each() -> None:
    evaluator = NetworkEvaluator(_net(7))
    search = PUCTSearch(evaluator, noise=0.5, seed=0)
    boards = [Board(Rules(4, 5, 4)), Board.from_moves([2], Rules(4, 5))]
    noisy, plain = search.roots(boards, noise=[True, False])
    priors, _ = evaluator.evaluate(boards)
    assert np.allclose(plain.priors, priors[1], atol=1e-6) and not np.allclose(
        noisy.priors, priors[0], atol=1e-3
    )
    search.run_to([noisy, plain], [5, 9])
    assert (noisy.total_visits, plain.total_visits) == (5, 9)
    search.run_to([noisy, plain], np.int64(12))  # numpy's integers count as one number for all
    assert (noisy.total_visits, plain.total_visits) == (12, 12)
    (quiet,) = search.roots(boards[:1], noise=np.bool_(False))
    assert np.allclose(quiet.priors, priors[0], atol=1e-6)
    with pytest.raises(ValueError, match="2 numbers for 1 roots"):
        search.run_to([noisy], [5, 9])
    with pytest.raises(ValueError, match="1 flags for 2 boards"):
        search.roots(boards, noise=[True])


def test_the_new_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="playout_cap"):
        _config(playout_cap=0)
    with pytest.raises(ValueError, match="playout_cap"):
        _config(playout_cap=1.5)
    with pytest.raises(TypeError, match="value_mix"):
        _config(value_mix="half")
    with pytest.raises(ValueError, match="value_mix"):
        _config(value_mix=-0.1)
    with pytest.raises(ValueError, match="fast_simulations=20 is more than simulations=12"):
        _config(playout_cap=0.5, fast_simulations=20)
    assert _config(fast_simulations=20).fast_simulations == 20  # unused without the cap: not an error
