"""The terminal game: the agent's column announced, another game offered, the running score."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from connect4_agents.human import HumanAgent
from connect4_agents.ui.terminal import Score, play_in_terminal, play_terminal_session
from connect4_env import Rules

RULES = Rules(4, 5, 4)


class Leftmost:
    """Plays the leftmost legal column: a predictable agent."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(np.flatnonzero(action_mask)[0])


def answers(*lines: str) -> Callable[[str], str]:
    """An ``input`` that gives ``lines`` one by one, then end of input (Ctrl-D)."""
    source: Iterator[str] = iter(lines)

    def read(prompt: str) -> str:
        try:
            return next(source)
        except StopIteration:
            raise EOFError from None

    return read


def person(columns: str) -> HumanAgent:
    """A person who types ``columns`` (one digit per move), their board views discarded."""
    return HumanAgent(input_fn=answers(*columns), output_fn=lambda text: None)


def test_the_agents_column_is_announced_to_the_person() -> None:
    out = io.StringIO()
    # X stacks column 3 and wins on its 4th stone; O (leftmost) answers 0, 0, 0
    play_in_terminal([person("3333"), Leftmost()], ["human", "leftmost"], RULES, stream=out)
    text = out.getvalue()
    assert text.count("O (leftmost) plays column 0") == 3
    assert "X (human) plays" not in text  # the person knows their own move
    assert "X (player0) wins after 7 moves: 3030303" in text


def test_another_game_until_no_with_the_running_score() -> None:
    out = io.StringIO()
    kept: list[int | None] = []
    score = play_terminal_session(
        [person("3333" + "0123" + "3333"), Leftmost()],
        ["human", "leftmost"],
        RULES,
        on_game_end=lambda game: kept.append(game.winner),
        ask=answers("", "maybe", "y", "n"),  # Enter is yes; a stray answer is asked again
        stream=out,
    )
    text = out.getvalue()
    # game 2: X takes the bottom row 0-3 while O (leftmost) stacks column 0 on X's first stone
    assert kept == [0, 0, 0] and score == Score([3, 0], 0)
    assert text.count("score: X (human)") == 3
    assert "score: X (human) 1, O (leftmost) 0, draws 0" in text  # after the first game
    assert "score: X (human) 3, O (leftmost) 0, draws 0" in text
    assert "please answer y or n, not 'maybe'" in text


def test_end_of_input_at_the_prompt_ends_the_session() -> None:
    out = io.StringIO()
    score = play_terminal_session(
        [person("3333"), Leftmost()], ["human", "leftmost"], RULES, ask=answers(), stream=out
    )
    assert score == Score([1, 0], 0)
    assert out.getvalue().count("wins after") == 1


def test_without_ask_one_game_is_played() -> None:
    out = io.StringIO()
    score = play_terminal_session([Leftmost(), Leftmost()], ["a", "b"], RULES, stream=out)
    text = out.getvalue()
    assert "X plays column 0" in text and "Another game" not in text
    assert score.line(["a", "b"]) in text


@pytest.mark.parametrize("winner, expected", [(0, ([1, 0], 0)), (1, ([0, 1], 0)), (None, ([0, 0], 1))])
def test_score_counts_each_side_and_draws(winner: int | None, expected: tuple[list[int], int]) -> None:
    score = Score([0, 0])
    score.add(winner)
    assert (score.wins, score.draws) == expected
    assert score.line(["human", "mcts:1000"]).startswith("score: X (human) ")
