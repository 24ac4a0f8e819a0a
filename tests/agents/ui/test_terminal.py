"""The terminal game: the same letters and column numbers as the window everywhere, the agent's column announced,
another game offered, the running score, Ctrl-D to quit; through the real ``connect4 play`` command too."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from helpers.commands import HANG_GUARD, ROOT

from connect4_agents.ui.terminal import (
    Score,
    TerminalHuman,
    board_text,
    play_in_terminal,
    play_terminal_session,
)
from connect4_env import Board, Rules
from connect4_env.encoding import action_mask, observation_planes

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


def person(columns: str, seat: int = 0, shown: list[str] | None = None) -> TerminalHuman:
    """A person at seat ``seat`` who types ``columns`` (one digit per move, from 1); what they are shown goes
    to ``shown`` (or nowhere)."""
    return TerminalHuman(
        seat, input_fn=answers(*columns), output_fn=(shown.append if shown is not None else lambda text: None)
    )


def test_the_agents_column_is_announced_to_the_person_from_1() -> None:
    out = io.StringIO()
    # X stacks column 4 and wins on its 4th stone; O (leftmost) answers 1, 1, 1
    play_in_terminal([person("4444"), Leftmost()], ["human", "leftmost"], RULES, stream=out)
    text = out.getvalue()
    assert text.count("O (leftmost) plays column 1") == 3
    assert "X (human) plays" not in text  # the person knows their own move
    assert "X (player0) wins after 7 moves: 4141414" in text
    assert "1 2 3 4 5\nX wins" in text  # the final board, numbered from 1


def test_the_person_moving_second_sees_their_stones_as_o_as_every_message_names_them() -> None:
    shown: list[str] = []
    out = io.StringIO()
    # X (leftmost) stacks column 1; O (the person) plays 2, 3, 4, then X's fourth stone in column 1 wins
    play_in_terminal(
        [Leftmost(), person("234", seat=1, shown=shown)], ["leftmost", "human"], RULES, stream=out
    )
    assert out.getvalue().count("X (leftmost) plays column 1") == 4
    assert all("(you are O, 4 in a row wins)" in view for view in shown)
    # the person's last view: X's three stones in column 1, their own O in columns 2 and 3
    assert shown[-1].startswith(". . . . .\nX . . . .\nX . . . .\nX O O . .\n1 2 3 4 5\n"), shown[-1]
    assert "X (player0) wins after 7 moves: 1213141" in out.getvalue()


def test_the_person_types_columns_from_1_and_a_bad_entry_is_asked_again() -> None:
    shown: list[str] = []
    board = Board.from_moves([0] * 4, Rules(4, 5))  # column 1 is full
    human = TerminalHuman(
        0, input_fn=answers("0", "1", "6", "٣", "9" * 5000, "five", "2"), output_fn=shown.append
    )
    assert human.act(observation_planes(board), action_mask(board)) == 1  # "2": the second column
    refusals = [line for line in shown if "is not a legal column" in line]
    assert len(refusals) == 6 and all("type one of 2 3 4 5 (Ctrl-D quits)" in line for line in refusals)
    assert all(len(line) < 120 for line in refusals)  # a pasted flood is not repeated back
    with pytest.raises(EOFError):
        TerminalHuman(1, input_fn=answers(), output_fn=shown.append).act(
            observation_planes(board), action_mask(board)
        )
    with pytest.raises(ValueError, match="seat"):
        TerminalHuman(2)
    with pytest.raises(TypeError, match="input_fn"):
        TerminalHuman(0, input_fn="4")  # type: ignore[arg-type]


def test_board_text_numbers_wide_boards_column_by_column() -> None:
    board = Board.from_moves([9, 0], Rules(2, 12, 3))
    assert board_text(board) == (
        " .  .  .  .  .  .  .  .  .  .  .  .\n"
        " O  .  .  .  .  .  .  .  .  X  .  .\n"
        " 1  2  3  4  5  6  7  8  9 10 11 12\n"
        "X to move"
    )
    with pytest.raises(TypeError, match="Board"):
        board_text("board")  # type: ignore[arg-type]


def test_another_game_until_no_with_the_running_score() -> None:
    out = io.StringIO()
    kept: list[int | None] = []
    score = play_terminal_session(
        [person("4444" + "1234" + "4444"), Leftmost()],
        ["human", "leftmost"],
        RULES,
        on_game_end=lambda game: kept.append(game.winner),
        ask=answers("", "maybe", "y", "n"),  # Enter is yes; a stray answer is asked again
        stream=out,
    )
    text = out.getvalue()
    # game 2: X takes the bottom row 1-4 while O (leftmost) stacks column 1 on X's first stone
    assert kept == [0, 0, 0] and score == Score([3, 0], 0)
    assert text.count("score: X (human)") == 3
    assert "score: X (human) 1, O (leftmost) 0, draws 0" in text  # after the first game
    assert "score: X (human) 3, O (leftmost) 0, draws 0" in text
    assert "please answer y or n, not 'maybe'" in text


def test_end_of_input_at_the_prompt_ends_the_session() -> None:
    out = io.StringIO()
    score = play_terminal_session(
        [person("4444"), Leftmost()], ["human", "leftmost"], RULES, ask=answers(), stream=out
    )
    assert score == Score([1, 0], 0)
    assert out.getvalue().count("wins after") == 1


def test_end_of_input_during_a_game_quits_and_keeps_the_finished_games() -> None:
    out = io.StringIO()
    kept: list[int | None] = []
    score = play_terminal_session(
        [person("4444" + "12"), Leftmost()],  # the second game's input ends after two moves
        ["human", "leftmost"],
        RULES,
        on_game_end=lambda game: kept.append(game.winner),
        ask=answers("y"),
        stream=out,
    )
    text = out.getvalue()
    assert kept == [0] and score == Score([1, 0], 0)  # the unfinished game is neither counted nor recorded
    assert "end of input (Ctrl-D): quit, game 2 left unfinished" in text
    assert text.rstrip().endswith("score: X (human) 1, O (leftmost) 0, draws 0")


def test_without_ask_one_game_is_played() -> None:
    out = io.StringIO()
    score = play_terminal_session([Leftmost(), Leftmost()], ["a", "b"], RULES, stream=out)
    text = out.getvalue()
    assert "X plays column 1\n" in text and "1 2 3 4 5\nO to move" in text and "Another game" not in text
    assert score.line(["a", "b"]) in text


@pytest.mark.parametrize("winner, expected", [(0, ([1, 0], 0)), (1, ([0, 1], 0)), (None, ([0, 0], 1))])
def test_score_counts_each_side_and_draws(winner: int | None, expected: tuple[list[int], int]) -> None:
    score = Score([0, 0])
    score.add(winner)
    assert (score.wins, score.draws) == expected
    assert score.line(["human", "mcts:1000"]).startswith("score: X (human) ")


# -- the real command, a person's keys on its standard input ---------------------------------------------------
PROMPT = re.compile(r"your move as ([XO]) \[[0-9 ]+\]: ")
ANNOUNCED = re.compile(r"^([XO]) \(solver\) plays column (\d+)$")


def connect4_play(*args: str, keys: str) -> subprocess.CompletedProcess[str]:
    """``connect4 play ... --ui terminal`` on a 4x5 board with ``keys`` typed (then end of input)."""
    return subprocess.run(
        [sys.executable, "-m", "connect4_agents.commands", "play", *args, "--ui", "terminal"]
        + ["--rows", "4", "--columns", "5", "--seed", "3"],
        cwd=ROOT,
        input=keys,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
        check=False,
    )


def boards(text: str) -> list[list[str]]:
    """The boards printed in ``text`` (prompts removed), each as its four rows."""
    lines = PROMPT.sub("\n", text).splitlines()
    return [lines[i - 4 : i] for i, line in enumerate(lines) if line == "1 2 3 4 5"]


def top_stone(board: list[str], column: int) -> str | None:
    """The letter of the highest stone in ``column`` (from 1), or None for an empty column."""
    return next((row.split()[column - 1] for row in board if row.split()[column - 1] != "."), None)


@pytest.mark.parametrize("seat", [0, 1])
def test_the_command_names_each_seat_by_one_letter_and_numbers_columns_from_1(seat: int) -> None:
    players = ["human", "solver"] if seat == 0 else ["solver", "human"]
    done = connect4_play(
        "--player0", players[0], "--player1", players[1], keys="1\n2\n3\n4\n5\n1\n2\n3\n4\n5\n"
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    me, agent = "XO"[seat], "XO"[1 - seat]
    assert f"(you are {me}, 4 in a row wins)" in done.stdout and f"(you are {agent}" not in done.stdout
    assert f"{me} (solver)" not in done.stdout  # the agent is never given the person's letter
    announced = [m.groups() for m in map(ANNOUNCED.match, PROMPT.sub("\n", done.stdout).splitlines()) if m]
    assert announced and all(letter == agent for letter, _ in announced)
    # after each announcement, the next board shows the agent's letter on top of the column announced
    after = boards(done.stdout)[1 - seat :]  # a person moving first saw the empty board before any
    assert len(after) >= len(announced), done.stdout
    for (letter, column), board in zip(announced, after):
        assert top_stone(board, int(column)) == letter, (column, board)
    # the outcome line lists the same column numbers: the agent's as announced, the person's as typed
    moves = re.search(r"after \d+ moves: (\d+)", done.stdout)
    assert moves is not None, done.stdout
    played = moves.group(1)
    assert list(played[1 - seat :: 2]) == [column for _, column in announced]
    assert all(c in "12345" for c in played[seat::2])


@pytest.mark.parametrize("seat", [0, 1])
def test_ctrl_d_in_the_command_quits_with_a_message_and_exit_code_0(seat: int) -> None:
    players = ["human", "solver"] if seat == 0 else ["solver", "human"]
    done = connect4_play("--player0", players[0], "--player1", players[1], keys="3\n")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "error" not in done.stderr
    assert "end of input (Ctrl-D): quit, game 1 left unfinished" in done.stdout
    assert "score: " in done.stdout.splitlines()[-1]
