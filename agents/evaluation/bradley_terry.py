"""The Bradley-Terry maximum-likelihood fit of strengths from pairings' points, in natural units (see
`connect4_agents.evaluation.ratings`, which turns them into Elo ratings with intervals).
"""

from __future__ import annotations

import math

import numpy as np

from connect4_env.extras import require

__all__ = ["fit_strengths", "MAX_COUNT"]

MAX_COUNT = 10**12  # games of one result in one pairing: far beyond any run, and exact in a float64


def fit_strengths(
    pairs: np.ndarray,
    points: np.ndarray,
    games: np.ndarray,
    free: np.ndarray,
    fixed_values: np.ndarray,
    guess: np.ndarray,
) -> np.ndarray:
    """Maximum-likelihood strengths (natural units) of the ``free`` players, starting from ``guess``; the
    others keep ``fixed_values``.

    Args:
        pairs: ``(k, 2)`` player indices of each pairing.
        points: the first player's points in each pairing (a draw half a point), prior included.
        games: the games of each pairing, prior included.
        free: per player, whether its strength is fitted.
        fixed_values: per player, the strength of those not fitted.
        guess: per player, where the fit starts.

    Returns:
        Every player's strength (``fixed_values`` where not ``free``).
    """
    minimize = require("scipy.optimize", "train", "the rating fit").minimize

    i, j = pairs[:, 0], pairs[:, 1]
    if not np.any(free[i] & free[j]):  # a gauntlet: each free player's likelihood is its own
        return _fit_separately(pairs, points, games, free, fixed_values)
    n = len(free)

    def theta_of(x: np.ndarray) -> np.ndarray:
        theta = fixed_values.copy()
        theta[free] = x
        return theta

    def negative_log_likelihood(x: np.ndarray) -> tuple[float, np.ndarray]:
        diff = (theta := theta_of(x))[i] - theta[j]
        # log sigma(d) = -logaddexp(0, -d): stable for any d
        value = (points * np.logaddexp(0, -diff) + (games - points) * np.logaddexp(0, diff)).sum()
        residual = games / (1 + np.exp(-diff)) - points  # d(-loglik)/d(diff)
        gradient = np.bincount(i, residual, n) - np.bincount(j, residual, n)
        return float(value), gradient[free]

    def hessian(x: np.ndarray) -> np.ndarray:
        diff = (theta := theta_of(x))[i] - theta[j]
        p = 1 / (1 + np.exp(-diff))
        weight = games * p * (1 - p)
        matrix = np.zeros((n, n))
        np.add.at(matrix, (i, i), weight)
        np.add.at(matrix, (j, j), weight)
        np.add.at(matrix, (i, j), -weight)
        np.add.at(matrix, (j, i), -weight)
        result: np.ndarray = matrix[np.ix_(free, free)]
        return result

    # the log-likelihood is concave with this Hessian: Newton's steps (trust-exact) converge in a few
    result = minimize(negative_log_likelihood, guess[free], jac=True, hess=hessian, method="trust-exact")
    return theta_of(result.x)


def _fit_separately(
    pairs: np.ndarray, points: np.ndarray, games: np.ndarray, free: np.ndarray, fixed_values: np.ndarray
) -> np.ndarray:
    """`fit_strengths` when every pairing has one fixed player (a gauntlet, a league's snapshots): each free player's
    strength is the root of its own increasing residual, found for all at once by Newton steps kept inside a
    shrinking bracket (a dense fit of 640 snapshots took 10 CPU-seconds, its 200 resamples over 15 minutes).
    """
    theta, i, j = fixed_values.copy(), pairs[:, 0], pairs[:, 1]
    slot = np.cumsum(free) - 1  # a free player's index among the free ones
    k, opponent = slot[np.where(free[i], i, j)], theta[np.where(free[i], j, i)]
    mine = np.where(free[i], points, games - points)  # the free player's points in each pairing
    count = int(free.sum())
    margin = math.log(2 * MAX_COUNT + 2) + 1.0  # the prior bounds any log-odds: the root is this near a rival
    low, high = np.full(count, np.inf), np.full(count, -np.inf)
    np.minimum.at(low, k, opponent - margin)
    np.maximum.at(high, k, opponent + margin)
    x = np.clip(theta[free], low, high)
    for _ in range(200):
        expected = games / (1 + np.exp(opponent - x[k]))
        residual = np.bincount(k, expected - mine, count)
        curvature = np.bincount(k, expected * (1 - expected / games), count)
        high, low = np.where(residual > 0, x, high), np.where(residual < 0, x, low)
        step = x - residual / np.maximum(curvature, 1e-300)
        x, before = np.where((step > low) & (step < high), step, 0.5 * (low + high)), x
        if np.all(np.abs(x - before) <= 1e-12 * np.maximum(1.0, np.abs(x))):
            break
    theta[free] = x
    return theta
