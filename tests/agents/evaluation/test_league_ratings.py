"""A league's ratings are anchored on its fixed members: a chain of snapshots beating their predecessors cannot
lift them above a fixed member they lose to (issue 53), and every rating says how it was measured."""

from __future__ import annotations

import pytest
from helpers.extras import importorskip

importorskip("scipy")

from connect4_agents.evaluation.league_ratings import (  # noqa: E402
    GAUNTLET,
    LADDER,
    ROUND_ROBIN,
    fixed_pairings_to_play,
    rate_league,
)
from connect4_agents.evaluation.ratings import PairingCounts, fit_ratings, reference_ladder  # noqa: E402

FIXED = ("random", "mcts:10", "mcts:30", "mcts:100")


def _chain(snapshots: int = 20, in_pool: int = 8) -> list[PairingCounts]:
    """The issue's league in counts: each snapshot loses 14 of its 20 games against mcts:100, beats random and
    mcts:10, and beats each of the snapshots still in the pool 16 games to 4; mcts:30 played the fixed members'
    round robin."""
    names = [f"self@{k}" for k in range(1, snapshots + 1)]
    pairings = [
        PairingCounts("mcts:30", "random", 20, 0, 0),
        PairingCounts("mcts:30", "mcts:10", 15, 0, 5),
        PairingCounts("mcts:30", "mcts:100", 4, 1, 15),
    ]
    for k, name in enumerate(names):
        pairings += [
            PairingCounts(name, "random", 20, 0, 0),
            PairingCounts(name, "mcts:10", 18, 0, 2),
            PairingCounts(name, "mcts:30", 10, 0, 10),
            PairingCounts(name, "mcts:100", 6, 0, 14),
        ]
        pairings += [PairingCounts(name, old, 16, 0, 4) for old in names[max(0, k - in_pool) : k]]
    return pairings


def test_snapshots_that_lose_to_mcts_100_are_rated_below_it_however_long_their_chain():
    ladder = reference_ladder()
    pairings = _chain()
    # a fit over every pairing (what the league did) lifts the chain's end above mcts:100
    everything = fit_ratings(
        pairings, fixed={name: ladder[name] for name in ("random", "mcts:10", "mcts:100")}, bootstrap=0
    )
    assert everything.elo["self@20"] > ladder["mcts:100"] + 100
    league = rate_league(FIXED, pairings, ladder=ladder, bootstrap=50)
    assert league is not None
    snapshots = [name for name in league.ratings.elo if name.startswith("self@")]
    assert len(snapshots) == 20
    for name in snapshots:
        assert league.ratings.elo[name] < ladder["mcts:100"]
        assert league.ratings.ci95[name][1] < ladder["mcts:100"]  # the interval too
        assert league.measured[name] == GAUNTLET and league.games[name] == 80  # the fixed members' games only
    # the same record against the fixed members, the same rating: later snapshots do not drift
    assert league.ratings.elo["self@1"] == pytest.approx(league.ratings.elo["self@20"])
    for name in ("random", "mcts:10", "mcts:100"):
        assert league.ratings.elo[name] == ladder[name] and league.measured[name] == LADDER
        assert league.games[name] == 0
    assert league.measured["mcts:30"] == ROUND_ROBIN and league.games["mcts:30"] == 60
    assert ladder["mcts:10"] < league.ratings.elo["mcts:30"] < ladder["mcts:100"]


def test_the_ratings_file_form_and_summary_lines_say_how_each_was_measured():
    league = rate_league(FIXED, _chain(3), ladder=reference_ladder(), bootstrap=20)
    assert league is not None
    data = league.to_dict()
    assert data["bootstrap"] == 20 and "gauntlet" in data["method"] and "not counted" in data["method"]
    entry = data["ratings"]["self@3"]
    assert set(entry) == {"elo", "ci95", "games", "measured"}
    assert entry["ci95"][0] < entry["elo"] < entry["ci95"][1] and entry["games"] == 80
    held = reference_ladder()["mcts:100"]
    assert data["ratings"]["mcts:100"] == {"elo": held, "ci95": [held, held], "games": 0, "measured": LADDER}
    lines = league.lines(["mcts:100", "self@3", "not rated"])
    assert len(lines) == 2 and LADDER in lines[0] and "[" in lines[1] and "80 games" in lines[1]


def test_off_the_ladder_the_first_fixed_member_is_the_anchor_and_the_others_come_from_their_round_robin():
    pairings = [
        PairingCounts("a", "b", 5, 0, 15),
        PairingCounts("self@1", "a", 15, 0, 5),
        PairingCounts("self@1", "b", 5, 0, 15),
        PairingCounts("self@2", "self@1", 20, 0, 0),  # not counted
    ]
    league = rate_league(("a", "b"), pairings, ladder=None)
    assert league is not None
    assert league.ratings.elo["a"] == 0 and league.measured["a"] == "anchor (rated 0)"
    assert league.ratings.elo["b"] > 0 and league.measured["b"] == ROUND_ROBIN
    assert 0 < league.ratings.elo["self@1"] < league.ratings.elo["b"]
    assert "self@2" not in league.ratings.elo  # it played no fixed member
    assert len(league.ratings.pairings) == 4  # every pairing stays for the payoff picture


def test_no_rating_before_any_game_and_the_pairs_the_fixed_round_robin_needs():
    assert rate_league(FIXED, [], ladder=reference_ladder()) is None
    two_held = [PairingCounts("random", "mcts:100", 0, 0, 20)]  # changes neither ladder rating
    assert rate_league(("random", "mcts:100"), two_held, ladder=reference_ladder()) is None
    assert fixed_pairings_to_play(FIXED, reference_ladder()) == [
        ("random", "mcts:30"),
        ("mcts:10", "mcts:30"),
        ("mcts:30", "mcts:100"),
    ]
    assert fixed_pairings_to_play(("a", "b", "c"), None) == [("a", "b"), ("a", "c"), ("b", "c")]
    with pytest.raises(ValueError, match="fixed member"):
        rate_league((), [PairingCounts("a", "b", 1, 0, 0)])


def test_a_gauntlet_fit_solves_each_players_likelihood_as_a_dense_fit_does():
    """Every free player meeting only fixed ones (a league's snapshots, a gauntlet), the fit solves each player
    apart: a dense fit of 640 snapshots took 10 CPU-seconds and its 200 bootstrap resamples over 15 minutes.
    Checked against a slow reference: the same likelihood (half points, one prior draw) minimised by BFGS."""
    import math

    import numpy as np
    from scipy.optimize import minimize

    from connect4_agents.evaluation.ratings import ELO_PER_NATURAL_UNIT

    rng = np.random.default_rng(5)
    fixed = {"f0": -300.0, "f1": 400.0, "f2": 2500.0}
    pairings = []
    for k in range(12):
        for name in fixed:
            wins, draws, losses = (int(n) for n in rng.integers(0, 25, 3))
            if k % 4 == 0:  # perfect records too: the prior keeps them finite
                wins, draws, losses = 20, 0, 0
            if k % 2:  # either side of a pairing
                pairings.append(PairingCounts(name, f"s{k}", losses, draws, wins))
            else:
                pairings.append(PairingCounts(f"s{k}", name, wins, draws, losses))
    fitted = fit_ratings(pairings, fixed=fixed, bootstrap=0)
    for k in range(12):
        mine = [p for p in pairings if f"s{k}" in (p.a, p.b)]

        def negative_log_likelihood(x: np.ndarray, mine=mine, k=k) -> float:
            total = 0.0
            for p in mine:
                sign = 1.0 if p.a == f"s{k}" else -1.0
                other = fixed[p.b if sign > 0 else p.a] / ELO_PER_NATURAL_UNIT
                points = (p.wins if sign > 0 else p.losses) + 0.5 * p.draws + 0.5
                games = p.games + 1.0
                diff = float(x[0]) - other
                total += points * math.log1p(math.exp(-diff)) + (games - points) * math.log1p(math.exp(diff))
            return total

        reference = minimize(negative_log_likelihood, [0.0], method="BFGS", options={"gtol": 1e-9}).x[0]
        assert fitted.elo[f"s{k}"] == pytest.approx(reference * ELO_PER_NATURAL_UNIT, abs=0.05)
