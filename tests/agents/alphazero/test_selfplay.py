"""Self-play's speed-ups change its cost, not its meaning: the evaluation cache answers as the network does,
a reused subtree is searched up to the same number of visits, and without reuse the games are the same."""

from __future__ import annotations

import numpy as np
import pytest
from extras import importorskip

torch = importorskip("torch")

from reference import random_board  # noqa: E402

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
        search.reroot(type(child).terminal(Board.from_moves([0, 1, 0, 1, 0, 1, 0], rows=4, columns=5)))


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="evaluation_cache"):
        _config(evaluation_cache=-1)
    with pytest.raises(TypeError, match="subtree_reuse"):
        _config(subtree_reuse="yes")
