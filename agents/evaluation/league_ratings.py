"""A league's ratings anchored on its fixed members, each saying how it was measured.

Snapshots of one learner beat the snapshots before them, so a fit over every pairing of a league lets the
chain of snapshot-against-snapshot wins carry the latest snapshots far above the fixed members they lose to (two
3-CPU-minute runs rated six snapshots above ``mcts:100``, 1050 against 851, though each lost 12 to 18 of its 20
games against it). Here the scale comes from the fixed members alone, in two steps:

1. **The fixed members** are held at the reference ladder's Elo where a ladder rates them (``random``,
   ``mcts:10``, ``mcts:100`` on 6x7); the others are fitted from the fixed members' round robin, the ladder's
   members held (or, with no ladder, the first fixed member anchored at 0).
2. **Every other member** (a snapshot) is rated by its gauntlet: its own games against the rated fixed members,
   held at their step-1 ratings. Games between snapshots are kept for the payoff picture, not counted.

A snapshot's rating is then what its games against fixed opponents say, as the reference ladder's gauntlet
(``connect4 tournament --gauntlet``) measures an agent, and it no longer moves when later snapshots join. Its
95 % interval resamples its own games; the fixed members' ratings are taken as exact there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from connect4_agents.evaluation.ratings import PairingCounts, Ratings, fit_ratings

__all__ = ["LeagueRatings", "rate_league", "fixed_pairings_to_play", "LADDER", "ROUND_ROBIN", "GAUNTLET"]

LADDER = "held at its reference-ladder Elo"
"""How a fixed member the ladder rates is measured."""
ROUND_ROBIN = "round robin of the fixed members"
"""How a fixed member the ladder does not rate is measured (``anchor`` for the first one without a ladder)."""
GAUNTLET = "gauntlet against the fixed members"
"""How every other member is measured."""


@dataclass
class LeagueRatings:
    """The league's ratings (`Ratings`: Elo and 95 % interval per rated member, every pairing for the payoff
    picture) with, per member, how its rating was measured and how many games it counts.
    """

    ratings: Ratings
    measured: dict[str, str]
    games: dict[str, int]
    method: str

    def to_dict(self) -> dict[str, Any]:
        """What ``league.json`` holds: ``{"method": text, "bootstrap": n, "ratings": {member: {"elo", "ci95",
        "games", "measured"}}}``.
        """
        return {
            "method": self.method,
            "bootstrap": self.ratings.bootstrap,
            "ratings": {
                name: {
                    "elo": elo,
                    "ci95": list(self.ratings.ci95[name]),
                    "games": self.games[name],
                    "measured": self.measured[name],
                }
                for name, elo in self.ratings.elo.items()
            },
        }

    def lines(self, members: Sequence[str]) -> list[str]:
        """One line per member of ``members`` that is rated: name, Elo, interval, games and how measured."""
        shown = [name for name in members if name in self.ratings.elo]
        width = max([8, *(len(name) for name in shown)])
        lines = []
        for name in shown:
            low, high = self.ratings.ci95[name]
            interval = "" if low == high else f"[{low:.0f}, {high:.0f}]"
            games = f"{self.games[name]} games" if self.games[name] else "no games"
            lines.append(
                f"{name:{width}} {self.ratings.elo[name]:6.0f} {interval:>13}  {self.measured[name]} ({games})"
            )
        return lines


def fixed_pairings_to_play(fixed: Sequence[str], ladder: Mapping[str, float] | None) -> list[tuple[str, str]]:
    """The pairs of fixed members whose games step 1 needs: every pair of which the ladder does not rate both
    (two ladder members' games would change neither rating).
    """
    held = set(ladder or ())
    return [(a, b) for a, b in combinations(fixed, 2) if not (a in held and b in held)]


def rate_league(
    fixed: Sequence[str],
    pairings: Sequence[PairingCounts],
    *,
    ladder: Mapping[str, float] | None = None,
    bootstrap: int = 0,
    seed: int = 0,
) -> LeagueRatings | None:
    """Rate a league's members as the module says.

    Args:
        fixed: the fixed members' names (the first is the anchor when ``ladder`` rates none of them).
        pairings: W/D/L of every pairing played (between fixed members, snapshots against fixed members, and
            snapshots against snapshots, which are not counted).
        ladder: member -> Elo of a rated ladder (the reference ladder on 6x7), or None.
        bootstrap: resamples for the 95 % intervals (0: each interval is its point).
        seed: the bootstrap's random generator.

    Returns:
        The ratings; None when no game links any member to the fixed ones. A member no counted game links to
        the rated fixed members is left out.

    Raises:
        TypeError: a pairing that is not a `PairingCounts`, as `fit_ratings` checks them.
        ValueError: no fixed member, or a bad count or a member paired with itself, as `fit_ratings` checks
            them.
    """
    fixed = list(dict.fromkeys(fixed))
    if not fixed:
        raise ValueError("a league's ratings need at least one fixed member")
    held = {name: float(ladder[name]) for name in fixed if ladder is not None and name in ladder}
    roots = held or {fixed[0]: 0.0}
    played = [p for p in pairings if p.games]
    among_fixed = [p for p in played if p.a in fixed and p.b in fixed and not (p.a in roots and p.b in roots)]
    linked = _linked(among_fixed, set(roots))
    counted = [p for p in among_fixed if p.a in linked and p.b in linked]
    elo = dict(roots)
    ci95 = {name: (value, value) for name, value in roots.items()}
    measured = {name: LADDER if held else "anchor (rated 0)" for name in roots}
    games = {name: 0 for name in roots}
    if any(name not in roots for name in linked):
        present = {p.a for p in counted} | {p.b for p in counted}
        fit = fit_ratings(
            counted,
            fixed={name: value for name, value in roots.items() if name in present},
            bootstrap=bootstrap,
            seed=seed,
        )
        for name in linked - set(roots):
            elo[name], ci95[name], measured[name] = fit.elo[name], fit.ci95[name], ROUND_ROBIN
            games[name] = sum(p.games for p in counted if name in (p.a, p.b))
    gauntlet = []
    for p in played:
        if p.a in elo and p.b not in fixed:
            gauntlet.append(PairingCounts(p.b, p.a, p.losses, p.draws, p.wins))
        elif p.b in elo and p.a not in fixed:
            gauntlet.append(p)
    if gauntlet:
        opponents = {p.b for p in gauntlet}
        fit = fit_ratings(
            gauntlet, fixed={name: elo[name] for name in opponents}, bootstrap=bootstrap, seed=seed
        )
        for name in dict.fromkeys(p.a for p in gauntlet):
            elo[name], ci95[name], measured[name] = fit.elo[name], fit.ci95[name], GAUNTLET
            games[name] = sum(p.games for p in gauntlet if p.a == name)
    if not gauntlet and not counted:
        return None
    where = "held at their reference-ladder Elo" if held else f"anchored at {fixed[0]} = 0"
    intervals = (
        f"95 % intervals from {bootstrap} bootstrap resamples of each member's own games"
        if bootstrap
        else "no intervals (point estimates)"
    )
    method = (
        f"fixed members {where}, any others among them fitted from their round robin; every other member rated "
        f"from its own games against the fixed members (its gauntlet), those held; games between snapshots not "
        f"counted; {intervals}"
    )
    # the picture's scale names one held member with its Elo; the method says how every rating was measured
    anchor = next(iter(roots))
    ratings = Ratings(elo, ci95, anchor, pairings=list(pairings), prior_draws=1.0, bootstrap=bootstrap)
    return LeagueRatings(ratings, measured, games, method)


def _linked(pairings: Sequence[PairingCounts], roots: set[str]) -> set[str]:
    """The players ``pairings`` link to ``roots`` (the roots included)."""
    reached = set(roots)
    changed = True
    while changed:
        changed = False
        for p in pairings:
            if (p.a in reached) != (p.b in reached):
                reached |= {p.a, p.b}
                changed = True
    return reached
