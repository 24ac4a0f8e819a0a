"""Self-play at equal CPU time: MaskablePPO trained against random play, against itself, and in a league.

Each run is ``connect4 train-sb3`` with the same settings but its opponent (``--opponent random``, ``--opponent
self``, ``--league``), stopped by ``--cpu-minutes`` (the run's process CPU time: training, the opponents' moves
and the league's rating matches). Each final model (greedy, no search) is then scored:

- on the six shipped 6x7 test sets: the share of non-trivial positions (where some move loses the outcome)
  where its move loses the best outcome, per set and over all six (``connect4 evaluate sb3:<model>``);
- against ``mcts:100``: ``--games`` games, alternating seats (the run's final evaluation).

References in the same table: random play and ``mcts:100`` on the same positions.

    python benchmarks/selfplay_league.py --cpu-minutes 60 [--modes random self league] [--out runs/bench]
    python benchmarks/selfplay_league.py --timesteps 2048 --games 4     # each run ended by its steps instead
"""

from __future__ import annotations

import argparse
from pathlib import Path

from connect4_agents.evaluation.accuracy import evaluate_agents
from connect4_agents.sb3.train import SB3TrainConfig, train_baseline

SETS = ["6x7"]


def train(
    mode: str, minutes: float, out: Path, games: int, seed: int, timesteps: int | None = None
) -> tuple[Path, dict, int]:
    config = SB3TrainConfig(
        opponent="self" if mode == "self" else "random",
        league=mode == "league",
        timesteps=timesteps or 10**11,
        cpu_minutes=0.0 if timesteps else minutes,  # 0: no CPU budget, the steps end the run
        eval_freq=10**11,  # one evaluation, at the end
        eval_games=games,
        eval_opponents=("mcts:100",),
        out=str(out / mode),
        seed=seed,
        progress=False,
    )
    result = train_baseline(config)
    final = result.evaluations[-1]
    return result.model_path, final, result.timesteps


def errors(report) -> dict[str, float]:
    """Non-trivial error rate per set and over all, in percent."""
    rows = {}
    total = wrong = 0
    for name, accuracy in report.per_set.items():
        rows[name] = 100.0 * (1.0 - accuracy.nontrivial_rate)
        total += accuracy.nontrivial
        wrong += accuracy.nontrivial - accuracy.nontrivial_optimal_class
    rows["all"] = 100.0 * wrong / total
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu-minutes", type=float, default=60.0)
    parser.add_argument("--timesteps", type=int, help="end each run after these learner steps instead")
    parser.add_argument("--modes", nargs="+", default=["random", "self", "league"])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", default="runs/bench_selfplay")
    args = parser.parse_args()
    out = Path(args.out)
    rows = []
    for mode in args.modes:
        model, final, steps = train(mode, args.cpu_minutes, out, args.games, args.seed, args.timesteps)
        report = evaluate_agents([f"sb3:{model}"], SETS, workers=args.workers, progress=False)[0]
        score = (final["wins"] + 0.5 * final["draws"]) / final["games"]
        rows.append(
            (mode, steps, errors(report), f"{final['wins']}/{final['draws']}/{final['losses']}", score)
        )
        print(f"{mode}: {steps:,} steps, vs mcts:100 {rows[-1][3]} (W/D/L)", flush=True)
    references = evaluate_agents(["random", "mcts:100"], SETS, workers=args.workers, progress=False)
    sets = list(rows[0][2]) if rows else []
    budget = f"{args.timesteps:,} steps" if args.timesteps else f"{args.cpu_minutes:g} CPU-minutes"
    print(f"\nnon-trivial errors (%) per 6x7 test set, {budget} each; vs mcts:100 over {args.games} games")
    header = (
        f"{'run':<10}{'steps':>12}  "
        + "  ".join(f"{s.replace('6x7-', ''):>13}" for s in sets)
        + "   vs mcts:100"
    )
    print(header)
    for mode, steps, errs, wdl, score in rows:
        cells = "  ".join(f"{errs[s]:13.1f}" for s in sets)
        print(f"{mode:<10}{steps:>12,}  {cells}   {wdl} ({score:.2f})")
    for report in references:
        errs = errors(report)
        cells = "  ".join(f"{errs[s]:13.1f}" for s in sets)
        print(f"{'(' + report.agent + ')':<10}{'-':>12}  {cells}")  # references, not runs


if __name__ == "__main__":
    main()
