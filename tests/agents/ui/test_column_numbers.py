"""Every view a person reads names a column by the same number, from 1 at the left: ``env.render()``, the terminal
game, a person's prompt, the play window's keys, the HTML replay and the ``connect4`` text dialect. Each view is
shown the same position, one stone played as action 6 (the rightmost of 6x7), and must call that column 7; the
actions stay 0-based."""

from __future__ import annotations

import io
import re
from pathlib import Path

import gymnasium as gym
import pytest
from helpers.browser import browser
from helpers.extras import importorskip

import connect4_env  # noqa: F401  (registers Connect4-v0)
from connect4_agents.evaluation.arena import play_game
from connect4_agents.evaluation.records import game_log
from connect4_agents.human import HumanAgent
from connect4_agents.interop.text import TextPolicy
from connect4_agents.ui.replay import write_replay
from connect4_agents.ui.terminal import TerminalHuman, board_text, play_in_terminal
from connect4_env import Board, Rules, connect4_v0
from connect4_env.encoding import action_mask, observation_planes
from connect4_env.envs.dialects import get_dialect
from connect4_env.render import render_ansi

ACTION = 6  # the rightmost column of 6x7
NUMBER = "7"  # what a person calls it


class Plays:
    """A policy that plays its list of actions in turn."""

    def __init__(self, *actions: int) -> None:
        self.actions = list(actions)

    def act(self, observation: object, action_mask: object = None) -> int:
        return self.actions.pop(0)


def number_under_or_over(text: str, stone: str) -> str:
    """The column number printed in line with the one ``stone`` (``X`` or ``O``) of ``text``'s board: the number
    whose characters span the stone's offset in the row of numbers above or below it.
    """
    lines = text.splitlines()
    row = next(line for line in lines if line.count(stone) == 1 and set(line) <= set(" .XO0123456789"))
    offset = row.rindex(stone)
    numbers = [line for line in lines if re.fullmatch(r"[ \d]*\d[ \d]*", line) and len(line) >= offset]
    assert len(numbers) == 1, f"one row of column numbers in\n{text}"
    for match in re.finditer(r"\d+", numbers[0]):
        if match.start() <= offset < match.end():
            return match.group()
    raise AssertionError(f"no number in line with the {stone} in\n{text}")


def test_env_render_numbers_the_column_as_people_do() -> None:
    env = gym.make("Connect4-v0", render_mode="ansi", opponent=Plays(0))
    env.reset(seed=0)
    env.step(ACTION)  # X at the right, the opponent's O at the left
    assert number_under_or_over(env.render(), "X") == NUMBER
    assert number_under_or_over(env.render(), "O") == "1"
    aec = connect4_v0.env(render_mode="ansi")
    aec.reset()
    aec.step(ACTION)
    assert number_under_or_over(aec.render(), "X") == NUMBER
    parallel = connect4_v0.parallel_env(render_mode="ansi")
    parallel.reset()
    parallel.step({"player_0": ACTION, "player_1": parallel.wait_action})
    assert number_under_or_over(parallel.render(), "X") == NUMBER
    wide = Board.from_moves([10], Rules(4, 12, 4))  # two-digit numbers stay in line with their columns
    assert number_under_or_over(render_ansi(wide), "X") == "11"


def test_the_terminal_shows_and_announces_the_same_number() -> None:
    board = Board.from_moves([ACTION])
    assert board_text(board) + "\n" == render_ansi(board)  # the terminal's picture is render's
    assert number_under_or_over(board_text(board), "X") == NUMBER
    out = io.StringIO()
    play_in_terminal([Plays(ACTION, 0, 0, 0, 0), Plays(1, 1, 1, 2)], ["a", "b"], Rules(), stream=out)
    first_move = out.getvalue().split("O plays column")[0]
    assert first_move.startswith(f"X plays column {NUMBER}\n")
    assert number_under_or_over(first_move, "X") == NUMBER
    assert "moves: 7" in out.getvalue()  # the outcome line lists the moves as numbers too


@pytest.mark.parametrize("person", ["terminal", "human agent"])
def test_a_person_reads_and_types_the_same_number(person: str) -> None:
    board = Board.from_moves([ACTION])  # the person is O, to move; the X is the opponent's stone
    shown: list[str] = []
    typed = iter(["0", NUMBER])  # 0 is no column; 7 is the rightmost
    if person == "terminal":
        agent = TerminalHuman(1, input_fn=lambda _: next(typed), output_fn=shown.append, colour=False)
        opponents_stone = "X"
    else:
        agent = HumanAgent(input_fn=lambda _: next(typed), output_fn=shown.append, colour=False)
        opponents_stone = "O"  # HumanAgent draws the person as X
    assert agent.act(observation_planes(board), action_mask(board)) == ACTION
    assert number_under_or_over(shown[0], opponents_stone) == NUMBER
    assert "'0' is not a legal column; type one of 1 2 3 4 5 6 7" in shown[1]


def test_the_connect4_text_dialect_names_the_same_number() -> None:
    board = Board.from_moves([ACTION])
    dialect = get_dialect("connect4")
    prompt = dialect.prompt(board, board.to_move, [ACTION])
    assert number_under_or_over(prompt.split("\n\n")[2], "O") == NUMBER  # the mover's view: the opponent is O
    assert f"The opponent played column {NUMBER}" in prompt and dialect.column_text(ACTION) == NUMBER
    model = TextPolicy(lambda prompt: f"<answer>{NUMBER}</answer>")  # a model that answers 7
    assert model.act(observation_planes(Board()), action_mask(Board())) == ACTION


def test_the_window_key_plays_the_same_number() -> None:
    pygame = importorskip("pygame")
    from connect4_agents.ui.play_window import PlayWindow

    window = PlayWindow([None, None], ["human", "human"], Rules(), delay=0)
    try:
        key = getattr(pygame, f"K_{NUMBER}")
        pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=key, mod=0, unicode=NUMBER, scancode=0))
        window.step()
        assert window.moves == [ACTION]
    finally:
        window.close()


def test_the_replay_names_the_same_number(tmp_path: Path) -> None:
    rules = Rules()
    game = game_log(play_game([Plays(ACTION, 0, 0, 0, 0), Plays(1, 1, 1, 2)], rules), ("a", "b"), rules)
    assert game.moves[0] == ACTION  # the record keeps the action
    path = write_replay(tmp_path / "replay.html", [game], verdicts=False)
    result = browser("--virtual-time-budget=2000", "--dump-dom", f"{path.as_uri()}#game=0&ply=1")
    assert result.returncode == 0, result.stderr[-2000:]
    page = result.stdout
    assert f"played column {NUMBER}." in page
    # under the stone, the board's own row of numbers says 7
    stone = re.search(r'<circle class="player0" cx="([\d.]+)"', page)
    label = re.search(
        rf'<text class="column-number" x="{stone[1] if stone else "?"}"[^>]*>(\d+)</text>', page
    )
    assert stone and label and label[1] == NUMBER
