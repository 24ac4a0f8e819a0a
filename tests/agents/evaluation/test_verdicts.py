"""Move verdicts by perfect play against plain minimax."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.reference import ReferenceGame, reference_scores

from connect4_agents import RandomAgent
from connect4_agents.evaluation.arena import play_game
from connect4_agents.evaluation.records import GameLog, game_log
from connect4_agents.evaluation.verdicts import move_verdicts
from connect4_env import Rules


def random_game(rules: Rules, seed: int) -> GameLog:
    players = [RandomAgent(seed=seed), RandomAgent(seed=seed + 1)]
    return game_log(play_game(players, rules), ("random", "random"), rules)


@pytest.mark.parametrize("size", [(4, 4, 3), (3, 5, 3), (3, 4, 3)])
def test_verdicts_agree_with_plain_minimax(size: tuple[int, int, int]) -> None:
    rules = Rules(*size)
    memo: dict = {}
    for seed in range(4):
        game = random_game(rules, 10 * seed)
        verdicts = move_verdicts(game)
        assert len(verdicts) == len(game.moves)
        reference = ReferenceGame(*size)
        for ply, (column, verdict) in enumerate(zip(game.moves, verdicts)):
            if ply >= 3:  # (plain minimax of the first plies would take the test too long)
                scores = reference_scores(reference, memo)
                assert verdict is not None and verdict["scores"] == scores
                best = max(s for s in scores if s is not None)
                played = scores[column]
                expected = (
                    "best" if played == best else "keeps" if np.sign(played) == np.sign(best) else "mistake"
                )
                assert verdict["verdict"] == expected
            reference.play(column)
