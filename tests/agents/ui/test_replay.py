"""The HTML replay: a self-contained page, its verdicts where the solver can judge, and a real browser (chromium)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from helpers.browser import browser
from helpers.commands import run
from helpers.extras import importorskip, skip_without_book

from connect4_agents import MCTSAgent, RandomAgent, SolverAgent
from connect4_agents.evaluation.arena import play_game
from connect4_agents.evaluation.records import GameLog, game_log, write_games
from connect4_agents.evaluation.verdicts import can_judge
from connect4_agents.ui.replay import replay_html, write_replay
from connect4_env import Rules


def random_game(rules: Rules, seed: int) -> GameLog:
    players = [RandomAgent(seed=seed), RandomAgent(seed=seed + 1)]
    return game_log(play_game(players, rules), ("random", "random"), rules)


def page_data(page: str) -> dict:
    match = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', page, re.S)
    assert match is not None
    return json.loads(match.group(1))


def test_page_is_self_contained_and_escapes_names(tmp_path: Path) -> None:
    rules = Rules(4, 5, 4)
    game = random_game(rules, 1)
    sneaky = GameLog(**{**game.__dict__, "players": ("</script><script>alert(1)</script>", "<b>bold</b>")})
    page = replay_html([game, sneaky], title="<i>mine</i>")
    assert "</script><script>alert" not in page and "<i>mine</i>" not in page
    assert "&lt;i&gt;mine&lt;/i&gt;" in page
    for remote in ("<link", " src=", "@import", "url(", "fetch(", "XMLHttpRequest"):
        assert remote not in page
    assert set(re.findall(r"https?://[^\s\"']+", page)) <= {"http://www.w3.org/2000/svg"}
    data = page_data(page)
    assert [g["moves"] for g in data["games"]] == [list(game.moves)] * 2
    assert data["games"][1]["players"][0] == sneaky.players[0]
    assert data["games"][0]["verdicts"] is not None  # 20 cells: judged
    assert data["games"][0]["winning_cells"] == [list(c) for c in game.board().winning_cells()]


def test_no_verdicts_where_the_solver_cannot_judge() -> None:
    rules = Rules(7, 8, 4)
    assert not can_judge(rules)
    game = random_game(rules, 2)
    assert page_data(replay_html([game]))["games"][0]["verdicts"] is None
    assert (
        page_data(replay_html([random_game(Rules(4, 5, 4), 3)], verdicts=False))["games"][0]["verdicts"]
        is None
    )


def test_bad_games_are_refused() -> None:
    with pytest.raises(ValueError, match="no games"):
        replay_html([])
    with pytest.raises(TypeError, match="GameLog"):
        replay_html([{"moves": [1]}])  # type: ignore[list-item]
    game = random_game(Rules(4, 5, 4), 4)
    broken = GameLog(**{**game.__dict__, "moves": game.moves[:2]})  # not a finished game
    with pytest.raises(ValueError, match="game 0"):
        replay_html([broken])


def test_replay_script(tmp_path: Path) -> None:
    records, page = tmp_path / "games.jsonl", tmp_path / "replay.html"
    rules = Rules(4, 5, 4)
    games = [random_game(rules, 5), random_game(rules, 6)]
    write_games(records, games)
    result = run("replay", str(records), "-o", str(page), "--no-progress")
    assert result.returncode == 0, result.stderr
    assert [g["moves"] for g in page_data(page.read_text())["games"]] == [list(g.moves) for g in games]
    records.write_text('{"format": "connect4-game"}\n')
    bad = run("replay", str(records), "-o", str(page))
    assert bad.returncode == 2 and "line 1" in bad.stderr and "Traceback" not in bad.stderr


# -- in a real browser ---------------------------------------------------------------------------------------
def dom(url: str) -> str:
    result = browser("--virtual-time-budget=2000", "--dump-dom", url)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def count(page: str, kind: str) -> int:
    return len(re.findall(rf'<circle class="{kind}"', page))


@pytest.fixture(scope="module")
def replay_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[GameLog]]:
    skip_without_book()  # the solver plays 6x7 from the first move
    rules = Rules()
    games = []
    for seed in range(2):
        players = [MCTSAgent(playouts=100, seed=seed), SolverAgent(seed=seed)]
        games.append(game_log(play_game(players, rules, record_search=True), ("mcts:100", "solver"), rules))
    path = tmp_path_factory.mktemp("replay") / "replay.html"
    write_replay(path, games)
    return path, games


@pytest.mark.slow  # about 5 s on 2 cores (over 3 s): make test-slow, CI runs it
def test_address_opens_the_position(replay_file: tuple[Path, list[GameLog]]) -> None:
    path, games = replay_file
    for game_index, ply in ((0, 0), (0, 5), (1, 9), (1, len(games[1].moves))):
        page = dom(f"{path.as_uri()}#game={game_index}&ply={ply}")
        assert f'data-game="{game_index}"' in page and f'data-ply="{ply}"' in page
        assert count(page, "player0") == (ply + 1) // 2 and count(page, "player1") == ply // 2
        assert count(page, "empty") == 42 - ply
        game = games[game_index]
        end = ply == len(game.moves)
        assert count(page, "winning") == (len(game.board().winning_cells()) if end else 0)
        if ply:  # the move's search numbers and the solver's verdict are shown
            assert "played column " + str(game.moves[ply - 1] + 1) in page  # numbered from 1
            assert re.search(r'class="verdict (best|keeps|mistake)"', page)


def test_keys_buttons_and_slider(replay_file: tuple[Path, list[GameLog]], tmp_path: Path) -> None:
    path, games = replay_file
    script = """
<script>
const key = (k) => document.dispatchEvent(new KeyboardEvent("keydown", {key: k, bubbles: true}));
key("ArrowRight"); key("ArrowRight"); key("ArrowRight"); key("ArrowLeft");
document.getElementById("next").click(); document.getElementById("next").click();
document.getElementById("prev").click();
document.body.dataset.afterKeys = document.body.dataset.ply;
key("End"); document.body.dataset.afterEnd = document.body.dataset.ply;
key("Home"); document.body.dataset.afterHome = document.body.dataset.ply;
const slider = document.getElementById("slider");
slider.value = 7; slider.dispatchEvent(new Event("input"));
document.body.dataset.afterSlider = document.body.dataset.ply;
key("ArrowDown"); document.body.dataset.afterDown = document.body.dataset.game;
document.body.dataset.hash = location.hash;
</script>
</body>"""
    driven = tmp_path / "driven.html"
    driven.write_text(path.read_text().replace("</body>", script))
    page = dom(f"{driven.as_uri()}#game=0&ply=0")
    assert 'data-after-keys="3"' in page
    assert f'data-after-end="{len(games[0].moves)}"' in page
    assert 'data-after-home="0"' in page and 'data-after-slider="7"' in page
    assert 'data-after-down="1"' in page
    assert f'data-hash="#game=1&amp;ply={len(games[1].moves)}"' in page


@pytest.mark.slow  # about 3 s on 2 cores (over 3 s): make test-slow, CI runs it
def test_screenshots_show_the_board_and_differ(
    replay_file: tuple[Path, list[GameLog]], tmp_path: Path
) -> None:
    pygame = importorskip("pygame")
    path, _ = replay_file
    pictures = []
    for ply in (2, 12):
        shot = tmp_path / f"ply{ply}.png"
        result = browser(
            "--window-size=1000,760", f"--screenshot={shot}", f"{path.as_uri()}#game=0&ply={ply}"
        )
        assert result.returncode == 0 and shot.exists(), result.stderr[-2000:]
        image = pygame.surfarray.array3d(pygame.image.load(str(shot))).transpose(1, 0, 2)
        pictures.append(image)

    def pixels(image: np.ndarray, colour: tuple[int, int, int]) -> int:
        return int(np.all(np.abs(image.astype(int) - colour) <= 12, axis=-1).sum())

    early, late = pictures
    assert early.shape == late.shape and not np.array_equal(early, late)
    for image in pictures:
        assert pixels(image, (30, 80, 200)) > 20_000  # the blue board is drawn
    red, yellow = (220, 40, 40), (245, 200, 30)
    assert pixels(late, red) > 3 * pixels(early, red) > 0  # six red stones against one
    assert pixels(late, yellow) > 3 * pixels(early, yellow) > 0


def text_game(rules: Rules) -> GameLog:
    """A language model's game: one rejected answer that holds markup, then legal ones, then a forfeit."""
    from connect4_agents.interop.text import TextAnswer, TextPolicy

    answers = iter(
        [TextAnswer("<b>bold</b> <script>alert('x')</script>", reasoning="I think <i>", completion_tokens=12)]
        + [TextAnswer(f"Final Answer: {c}", prompt_tokens=99, finish_reason="stop") for c in (0, 1, 2)]
        + ["no idea"] * 4
    )
    policy = TextPolicy(lambda prompt: next(answers), dialect="game_arena")
    record = play_game([policy, RandomAgent(seed=3)], rules, record_search=True)
    return game_log(record, ("text:model:answer:game_arena", "random"), rules)


def test_a_language_models_moves_and_forfeit_are_in_the_page() -> None:
    rules = Rules(5, 6, 4)
    game = text_game(rules)
    assert game.forfeit is not None and game.forfeit["player"] == 0 and len(game.moves) == 6
    data = page_data(replay_html([game], verdicts=False))["games"][0]
    assert data["forfeit"]["reason"].startswith("TextPolicy:") and "forfeited" in data["result_text"]
    assert data["search"][0]["tries"][0]["answer"].startswith("<b>bold</b>")  # data, escaped in the page


def test_a_language_models_answers_show_as_text_in_a_browser(tmp_path: Path) -> None:
    rules = Rules(5, 6, 4)
    game = text_game(rules)
    path = write_replay(tmp_path / "replay.html", [game], verdicts=False)
    first = dom(f"{path.as_uri()}#game=0&ply=1")
    assert "answer 1: rejected" in first and "answer 2: column 1" in first and "finish: stop" in first
    assert "&lt;script&gt;alert('x')&lt;/script&gt;" in first and "<script>alert('x')" not in first
    assert "I think &lt;i&gt;" in first and "12 answer tokens" in first and "99 prompt tokens" in first
    end = dom(f"{path.as_uri()}#game=0&ply={len(game.moves)}")
    assert (
        "forfeited (TextPolicy:" in end
        and "The forfeited move:" in end
        and end.count('<summary class="rejected">') == 2
    )
