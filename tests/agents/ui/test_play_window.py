"""The play window (pygame on the dummy video driver), terminal colours, search plots and RecordVideo."""

from __future__ import annotations

import io
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from helpers.commands import run
from helpers.extras import importorskip, needs, needs_book

pygame = importorskip("pygame")

from connect4_agents import MCTSAgent, SolverAgent  # noqa: E402
from connect4_agents.evaluation.records import read_games  # noqa: E402
from connect4_agents.human import HumanAgent  # noqa: E402
from connect4_agents.ui.play_window import PlayWindow, display_available  # noqa: E402
from connect4_env import Board, Rules  # noqa: E402
from connect4_env.render import render_ansi, render_rgb, terminal_has_colour  # noqa: E402
from connect4_env.svg import BACKGROUND, PALETTE  # noqa: E402

RED, YELLOW = (220, 40, 40), (245, 200, 30)


@pytest.fixture
def windows():
    opened: list[PlayWindow] = []

    def make(*args, **kwargs) -> PlayWindow:
        kwargs.setdefault("delay", 0)
        window = PlayWindow(*args, **kwargs)
        opened.append(window)
        return window

    yield make
    for window in opened:
        window.close()


def click(window: PlayWindow, column: int) -> None:
    x = window.left + column * window.tile + window.tile // 2
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=(x, window.top + 5), button=1))
    window.step()


def key(window: PlayWindow, name: int) -> None:
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=name, mod=0, unicode="", scancode=0))
    window.step()


def pixel(window: PlayWindow, x: int, y: int) -> tuple[int, int, int]:
    return tuple(window.screen.get_at((x, y)))[:3]


def test_clicks_and_digit_keys_play_for_people(windows) -> None:
    window = windows([None, None], ["human", "human"], Rules())
    click(window, 2)
    key(window, pygame.K_4)
    assert window.moves == [2, 3]
    key(window, pygame.K_9)  # no ninth column on 6x7
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=(window.left - 1, 50), button=1))
    window.step()
    assert window.moves == [2, 3]
    for _ in range(6):
        click(window, 0)
    assert window.moves == [2, 3, 0, 0, 0, 0, 0, 0]
    click(window, 0)  # full
    assert window.moves == [2, 3, 0, 0, 0, 0, 0, 0]
    key(window, pygame.K_u)  # two people: one move back
    assert window.moves == [2, 3, 0, 0, 0, 0, 0]
    key(window, pygame.K_n)
    assert window.moves == [] and window.game_index == 1
    key(window, pygame.K_ESCAPE)
    assert window.closed


def test_the_agent_replies_and_undo_returns_to_your_move(windows) -> None:
    window = windows([None, MCTSAgent(playouts=50, seed=0)], ["human", "mcts:50"], Rules())
    window.step()
    assert window.moves == []  # the agent waits for you
    click(window, 3)
    assert len(window.moves) == 2 and window.moves[0] == 3
    assert window.view is not None and window.view[1]["kind"] == "mcts"
    click(window, 4)
    assert len(window.moves) == 4
    key(window, pygame.K_u)  # back before your last move (and the reply to it)
    assert len(window.moves) == 2 and window.moves[0] == 3 and window.human_to_move()
    window.step()
    assert len(window.moves) == 2  # the agent does not move again: it is your turn
    key(window, pygame.K_s)  # swap: a new game with the agent first
    assert window.names == ["mcts:50", "human"] and len(window.moves) == 1
    key(window, pygame.K_u)  # no move of yours to take back
    assert len(window.moves) == 1


def test_preview_and_the_agents_view_are_drawn(windows) -> None:
    window = windows([None, SolverAgent()], ["human", "solver"], Rules(4, 5, 4))
    x = window.left + 2 * window.tile + window.tile // 2
    pygame.event.post(pygame.event.Event(pygame.MOUSEMOTION, pos=(x, 10), rel=(0, 0), buttons=(0, 0, 0)))
    window.step()
    assert pixel(window, x, window.top - window.tile // 2) == RED  # your stone over column 2

    def lit(top: int, bottom: int) -> int:
        area = pygame.surfarray.array3d(window.screen)[:, top:bottom]
        return int((area.sum(axis=-1) > 400).sum())

    below = (window.info_top, window.status_top)
    assert lit(*below) == 0  # no view before the agent moved
    click(window, 2)
    assert window.view is not None and window.view[1]["kind"] == "solver"
    assert lit(*below) > 50  # verdicts under the columns
    landing = window._cell_centre(window.rules.rows - 1, 2)
    assert pixel(window, *landing) == RED


def test_the_winning_line_and_a_record(windows) -> None:
    games = []
    window = windows([None, None], ["a", "b"], Rules(), on_game_end=games.append)
    for column in (0, 1, 0, 1, 0, 1, 0):
        click(window, column)
    assert window.board.winner == 0 and len(games) == 1
    assert games[0].moves == (0, 1, 0, 1, 0, 1, 0) and games[0].result == "player0"
    centre = window._cell_centre(2, 0)
    ring = (centre[0] + int(0.4 * window.tile) - 2, centre[1])
    assert pixel(window, *ring) == (34, 221, 68)  # ringed in green
    click(window, 3)  # the game is over
    assert len(window.moves) == 7 and len(games) == 1


def test_huge_boards_are_refused() -> None:
    with pytest.raises(ValueError, match="does not fit"):
        PlayWindow([None, None], ["a", "b"], Rules(1100, 2, 2))


def test_display_detection(monkeypatch) -> None:
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    assert not display_available()
    monkeypatch.setenv("SDL_VIDEODRIVER", "x11")
    assert display_available()


@needs_book  # the solver plays 6x7 from the first move
def test_two_agents_headless_with_screenshot_and_record(tmp_path: Path) -> None:
    shot, record = tmp_path / "game.png", tmp_path / "games.jsonl"
    args = ["--player0", "mcts:100", "--player1", "solver", "--ui", "window", "--delay", "0"]
    result = run("play", *args, "--exit-at-end", "--screenshot", str(shot), "--record", str(record))
    assert result.returncode == 0, result.stderr
    (game,) = read_games(record)
    assert game.players == ("mcts:100", "solver") and game.result != "player0"  # the solver does not lose
    image = pygame.surfarray.array3d(pygame.image.load(str(shot))).transpose(1, 0, 2)
    tile = 96  # the window's layout for 6x7: 96-pixel cells, the preview row above the board
    assert image.shape[1] == 7 * tile
    final = game.board()
    for row in range(6):
        for column in range(7):
            y, x = tile + row * tile + tile // 2 + int(0.08 * tile), column * tile + tile // 2
            owner = final.cell(row, column)
            expected = (235, 235, 235) if owner is None else (RED, YELLOW)[owner]
            assert tuple(image[y, x]) == expected, (row, column)
    if game.winner is not None:
        assert int(np.all(image == (34, 221, 68), axis=-1).sum()) > 0
    bad = run("play", "--ui", "terminal", "--screenshot", str(shot))
    assert bad.returncode == 2 and "--ui window" in bad.stderr


def test_terminal_colours() -> None:
    board = Board.from_moves([3, 2])
    plain, coloured = render_ansi(board), render_ansi(board, colour=True)
    assert "\x1b[" not in plain and "\x1b[1;31mX\x1b[0m" in coloured and "\x1b[1;33mO\x1b[0m" in coloured
    assert not terminal_has_colour(io.StringIO())
    shown: list[str] = []
    person = HumanAgent(input_fn=lambda _: "1", output_fn=shown.append, colour=True)  # columns typed from 1
    second = Board.from_moves([3])  # you are the second player: your X is drawn yellow
    from connect4_env.encoding import action_mask, observation_planes

    assert person.act(observation_planes(second), action_mask(second)) == 0
    assert "\x1b[1;33mX" in shown[0] and "\x1b[1;31mO" in shown[0]
    with pytest.raises(TypeError):
        HumanAgent(colour="yes")  # type: ignore[arg-type]


@needs("train", "matplotlib")
def test_search_plot(tmp_path: Path) -> None:
    agent = MCTSAgent(playouts=300, seed=0)
    result = agent.search(Board.from_moves([3, 3]))
    png = result.plot(tmp_path / "search.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = result.plot(tmp_path / "search.svg")
    assert "<svg" in svg.read_text()[:500]
    assert [p.name for p in sorted(tmp_path.iterdir())] == ["search.png", "search.svg"]


def test_record_video(tmp_path: Path) -> None:
    importorskip("moviepy")
    env = gym.make("Connect4-v0", render_mode="rgb_array")
    env = gym.wrappers.RecordVideo(env, str(tmp_path / "videos"), episode_trigger=lambda episode: True)
    try:
        env.reset(seed=0)
        done = False
        while not done:
            mask = env.unwrapped.action_masks()
            _, _, terminated, truncated, _ = env.step(int(np.flatnonzero(mask)[0]))
            done = terminated or truncated
    finally:
        env.close()
    videos = list((tmp_path / "videos").glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 1000


def test_the_board_is_drawn_by_connect4_env_render(windows) -> None:
    window = windows([None, None], ["a", "b"], Rules(5, 6, 4))
    for column in (2, 3, 3, 0):
        click(window, column)
    t, rules = window.tile, window.rules
    area = pygame.surfarray.array3d(window.screen).transpose(1, 0, 2)
    area = area[window.top : window.top + rules.rows * t, window.left : window.left + rules.columns * t]
    expected = render_rgb(window.board, t)
    row = rules.rows - window.board.heights[0]  # the last move's cell carries the window's ring
    differ = np.argwhere(np.any(area != expected, axis=-1))
    assert differ.size and all(row * t <= y < (row + 1) * t and 0 <= x < t for y, x in differ)
    assert pixel(window, window.left + 1, window.top + 1) == BACKGROUND
    assert pixel(window, *window._cell_centre(rules.rows - 1, 2)) == PALETTE[1]


def test_screenshot_picks_the_window_without_a_display(tmp_path: Path) -> None:
    # the README's screenshot command has no --ui: asking for a screenshot means the window, even headless
    shot = tmp_path / "game.png"
    args = ["--player0", "mcts:20", "--player1", "mcts:20", "--rows", "4", "--columns", "5", "--delay", "0"]
    result = run("play", *args, "--exit-at-end", "--screenshot", str(shot))
    assert result.returncode == 0, result.stderr
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_window_nobody_could_see_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from connect4_agents.commands import play

    for name in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    assert (
        play.main(["--ui", "window", "--player0", "random", "--player1", "random"]) == 2
    )  # it used to wait forever
    assert "there is no display here" in capsys.readouterr().err


@pytest.mark.parametrize("ui", ["window", "terminal"])
def test_a_forfeit_ends_the_game_and_is_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ui: str
) -> None:
    (tmp_path / "c4_resigns.py").write_text("def answer(prompt):\n    return 'I resign.'\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    record = tmp_path / "games.jsonl"
    args = [
        "--player0",
        "random",
        "--player1",
        "text:c4_resigns:answer:game_arena",
        "--ui",
        ui,
        "--delay",
        "0",
    ]
    extra = ["--exit-at-end"] if ui == "window" else []
    result = run("play", *args, *extra, "--record", str(record))
    assert result.returncode == 0, result.stderr
    (game,) = read_games(record)
    assert game.forfeit["player"] == 1 and game.result == "player0" and len(game.moves) == 1
    assert len(game.forfeit["info"]["tries"]) == 2  # Game Arena's rule: one rethink, then the forfeit
    if ui == "terminal":
        assert "X (player0) wins, O forfeited (TextPolicy:" in result.stdout
