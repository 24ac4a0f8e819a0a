"""A pygame window to play Connect Four in, against an agent, another person, or to watch two agents.

Click a column or press 1-9 (0 for the tenth column); the stone to be played hovers over the column under
the mouse, with a ring where it would land. Under the board, the agent that moved last shows what it thought
when it has a ``move_info()``: MCTS the share of playouts and the mean value (win 1, draw 1/2) of each
column, the solver win/draw/loss with the plies to the end. Keys: N new game, U undo (back to your last move
against an agent), S swap sides (a new game with the seats swapped), Esc quit. The result is written in the
status line and the winning line is ringed in green. Needs pygame-ce (the ``render`` extra); runs without a
screen under ``SDL_VIDEODRIVER=dummy``.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from connect4_agents._support.files import atomic_write
from connect4_agents.evaluation.records import GameLog
from connect4_agents.solver.agent import plies_to_end
from connect4_env.core import Board
from connect4_env.encoding import action_mask, observation_planes
from connect4_env.extras import require
from connect4_env.policy import Forfeit, bind_policy
from connect4_env.render import render_rgb
from connect4_env.rules import IllegalMoveError, Rules, as_column
from connect4_env.svg import LAST_MOVE, LAST_MOVE_RADIUS, PALETTE, STONE_RADIUS, WINNING, ring_width

__all__ = ["PlayWindow", "display_available", "MAX_WINDOW_PIXELS"]

MAX_WINDOW_PIXELS = 4096  # the board's width and height are at most this many pixels
_MIN_TILE, _MAX_TILE = 4, 96
# The board, its stones and rings come from connect4_env (render_rgb and the svg constants); these are
# the window's own: the backdrop around the board and the text.
_BACK, _WHITE, _GREY, _RED_TEXT = (24, 26, 34), (255, 255, 255), (170, 174, 186), (230, 90, 90)


def display_available() -> bool:
    """True when pygame is installed and a person could see a window: a display (X11 or Wayland on Linux;
    always on Windows and macOS) or an SDL_VIDEODRIVER other than the headless ``dummy``/``offscreen``.
    """
    try:
        import pygame  # noqa: F401
    except ImportError:
        return False
    driver = os.environ.get("SDL_VIDEODRIVER", "")
    if driver:
        return driver not in ("dummy", "offscreen")
    if sys.platform in ("win32", "darwin"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


class PlayWindow:
    """One window, one game at a time, any board size.

    Args:
        players: the two seats' policies, first mover first; None is a person at the window.
        names: labels (agent specs) of the two seats, for the status line and the records.
        rules: the board size and line length.
        seed: game ``g`` resets the agent on seat ``s`` with ``seed + 2 * g + s``.
        delay: seconds to show each position before an agent moves (0 for tests and screenshots).
        on_game_end: called with the `connect4_agents.evaluation.records.GameLog` of every game that ends
            (``--record``).

    Raises:
        ValueError: ``players`` or ``names`` is not two long, the board cannot be drawn within
            `MAX_WINDOW_PIXELS` pixels a side at 4 pixels a cell, or a policy cannot play these rules.
        MissingExtraError: pygame (the ``render`` extra) is not installed (an ImportError).
    """

    def __init__(
        self,
        players: Sequence[Any | None],
        names: Sequence[str],
        rules: Rules,
        *,
        seed: int = 0,
        delay: float = 0.5,
        on_game_end: Callable[[GameLog], None] | None = None,
    ) -> None:
        if len(players) != 2 or len(names) != 2:
            raise ValueError("a game needs two players and two names")
        if max(rules.rows, rules.columns) * _MIN_TILE > MAX_WINDOW_PIXELS:
            raise ValueError(
                f"a {rules.rows}x{rules.columns} board does not fit a window (at most "
                f"{MAX_WINDOW_PIXELS // _MIN_TILE} rows and columns); use --ui terminal"
            )
        pygame = require("pygame", "render", "the play window", hint="(or use --ui terminal)")
        for player in players:
            if player is not None:
                bind_policy(player, rules)
        self.pg: Any = pygame
        self.rules = rules
        self.players = list(players)
        self.names = [str(n) for n in names]
        self.seed = int(seed)
        self.delay = float(delay)
        self.on_game_end = on_game_end
        self.tile = int(max(_MIN_TILE, min(_MAX_TILE, 840 // rules.columns, 600 // rules.rows)))
        self.game_index = -1
        self.closed = False
        self.hover: int | None = None
        self._fonts: dict[int, Any] = {}
        self._thinking = False
        self._board_image: tuple[tuple[int, ...], Any] | None = None  # (moves, surface) drawn last
        pygame.display.init()
        pygame.font.init()
        board_width, board_height = rules.columns * self.tile, rules.rows * self.tile
        self.width = max(board_width, 520)
        self.left = (self.width - board_width) // 2
        self.top = self.tile  # the preview row
        self.info_top = self.top + board_height + 4
        self.show_numbers = self.tile >= 28
        self.status_top = self.info_top + (int(self.tile * 0.9) if self.show_numbers else 0)
        self.height = self.status_top + 52
        self.screen = pygame.display.set_mode((self.width, self.height))
        pygame.display.set_caption(f"Connect Four {rules.rows}x{rules.columns}: {' vs '.join(self.names)}")
        self.clock = pygame.time.Clock()
        self.new_game()

    # -- game state ----------------------------------------------------------------------------------------
    def new_game(self) -> None:
        """Start a new game on the same seats; agents are reset (seeded from the game's number)."""
        self.game_index += 1
        self.board = Board(self.rules)
        self.moves: list[int] = []
        self.search: list[dict[str, Any] | None] = []
        self.view: tuple[int, dict[str, Any], int] | None = None  # seat, move_info, stones before its move
        self.recorded = False
        self.forfeit: dict[str, Any] | None = None  # a player that gave up: {"player", "reason", "info"}
        self._last_agent_move = time.monotonic()
        for seat, player in enumerate(self.players):
            reset = getattr(player, "reset", None)
            if callable(reset):
                reset(seed=self.seed + 2 * self.game_index + seat)

    def swap(self) -> None:
        """Swap the seats and start a new game (a person plays the other colour)."""
        self.players.reverse()
        self.names.reverse()
        self.new_game()

    @property
    def over(self) -> bool:
        """True when the game has ended: a win, a draw or a forfeit."""
        return self.board.is_terminal or self.forfeit is not None

    def human_to_move(self) -> bool:
        """True when the game is on and the seat to move is a person's."""
        return not self.over and self.players[self.board.to_move] is None

    def play(self, column: int) -> bool:
        """Play ``column`` for the person to move; False (and nothing changes) if it is not a person's turn
        or the column is not legal.
        """
        if not self.human_to_move() or not self.board.is_legal(column):
            return False
        self._move(column, None)
        return True

    def _move(self, column: int, info: dict[str, Any] | None) -> None:
        self.board.play(column)
        self.moves.append(column)
        self.search.append(info)
        self._last_agent_move = time.monotonic()
        if self.board.is_terminal and not self.recorded:
            self.recorded = True
            if self.on_game_end is not None:
                self.on_game_end(self.game_log())

    def agent_move(self) -> None:
        """Let the agent on the seat to move play (its view is kept for the panel under the board)."""
        mover = self.board.to_move
        agent = self.players[mover]
        if agent is None:
            raise RuntimeError("agent_move: a person is to move")
        try:
            action = agent.act(observation_planes(self.board, mover), action_mask(self.board))
        except Forfeit as given_up:  # the agent gives the game up: the other seat wins
            self.forfeit = {"player": mover, "reason": given_up.reason, "info": given_up.info}
            if not self.recorded:
                self.recorded = True
                if self.on_game_end is not None:
                    self.on_game_end(self.game_log())
            return
        column = as_column(action)
        if not self.board.is_legal(column):
            raise IllegalMoveError(f"{self.names[mover]} chose column {column}, which is not legal here")
        move_info = getattr(agent, "move_info", None)
        info = move_info() if callable(move_info) else None
        self.view = (mover, info, len(self.moves)) if info else None
        self._move(column, info)

    def undo(self) -> bool:
        """Take back moves to the last move of a person (and the agent's replies after it); with no person
        playing, the last move. False when there is nothing to take back.
        """
        humans = [seat for seat in (0, 1) if self.players[seat] is None]
        if not self.moves or not humans:
            return False
        keep = len(self.moves) - 1
        if len(humans) == 1:
            keep = max((i for i in range(len(self.moves)) if i % 2 == humans[0]), default=-1)
            if keep < 0:
                return False
        self.moves, self.search = self.moves[:keep], self.search[:keep]
        self.board = Board(self.rules).play_moves(self.moves)
        self.recorded = False
        self.forfeit = None  # a forfeit is taken back with the moves before it
        self.view = None
        return True

    def game_log(self) -> GameLog:
        """The current game as a record: the seats' names, the moves so far, the result (a draw while the
        game is unfinished), the window's seed, the game's number and the agents' search numbers per move
        (None when no agent gave any).
        """
        winner = self.board.winner if self.forfeit is None else 1 - self.forfeit["player"]
        return GameLog(
            self.rules.rows,
            self.rules.columns,
            self.rules.win_length,
            (self.names[0], self.names[1]),
            tuple(self.moves),
            "draw" if winner is None else ("player0", "player1")[winner],
            self.seed,
            None,
            self.game_index,
            tuple(self.search) if any(s is not None for s in self.search) else None,
            forfeit=self.forfeit,
        )

    # -- events ------------------------------------------------------------------------------------------
    def column_at(self, x: int) -> int | None:
        """The board column under the window's x coordinate ``x`` (pixels), or None beside the board."""
        column = (x - self.left) // self.tile
        return int(column) if 0 <= column < self.rules.columns else None

    def handle(self, event: Any) -> None:
        """React to one pygame event."""
        pg = self.pg
        if event.type == pg.QUIT:
            self.closed = True
        elif event.type == pg.MOUSEMOTION:
            self.hover = self.column_at(event.pos[0])
        elif event.type == pg.MOUSEBUTTONDOWN and event.button == 1:
            column = self.column_at(event.pos[0])
            if column is not None:
                self.play(column)
        elif event.type == pg.KEYDOWN:
            if event.key == pg.K_ESCAPE:
                self.closed = True
            elif event.key == pg.K_n:
                self.new_game()
            elif event.key == pg.K_u:
                self.undo()
            elif event.key == pg.K_s:
                self.swap()
            elif pg.K_0 <= event.key <= pg.K_9 or pg.K_KP0 <= event.key <= pg.K_KP9:
                digit = event.key - (pg.K_0 if pg.K_0 <= event.key <= pg.K_9 else pg.K_KP0)
                column = 9 if digit == 0 else digit - 1
                if column < self.rules.columns:
                    self.hover = column
                    self.play(column)

    def step(self) -> None:
        """One frame: handle the queued events, let an agent move when it is its turn, draw."""
        for event in self.pg.event.get():
            self.handle(event)
        if self.closed:
            return
        board = self.board
        agent_turn = not self.over and self.players[board.to_move] is not None
        if agent_turn and time.monotonic() - self._last_agent_move >= self.delay:
            self._thinking = True
            self.draw()
            self._thinking = False
            self.agent_move()
        self.draw()

    def run(self, exit_at_end: bool = False, screenshot: str | os.PathLike[str] | None = None) -> None:
        """Play until Esc or the window is closed (``exit_at_end``: until the first game ends); then save the
        window to ``screenshot`` (PNG) if given and close it.
        """
        try:
            while not self.closed:
                self.step()
                if exit_at_end and self.over:
                    break
                self.clock.tick(30)
            if screenshot is not None:
                self.save(screenshot)
        finally:
            self.close()

    def save(self, path: str | os.PathLike[str]) -> Path:
        """The window's picture as a PNG, written atomically."""
        self.draw()
        pg = self.pg
        return atomic_write(path, lambda stream: pg.image.save(self.screen, stream, "window.png"))

    def close(self) -> None:
        """Close the window (pygame's display is shut down)."""
        if self.pg.display.get_init():
            self.pg.display.quit()
        self.closed = True

    # -- drawing -----------------------------------------------------------------------------------------
    def _font(self, size: int) -> Any:
        if size not in self._fonts:
            self._fonts[size] = self.pg.font.Font(None, size)
        return self._fonts[size]

    def _text(self, text: str, size: int, colour: tuple[int, int, int], centre: tuple[int, int]) -> None:
        surface = self._font(size).render(text, True, colour)
        self.screen.blit(surface, surface.get_rect(center=centre))

    def _cell_centre(self, row: int, column: int) -> tuple[int, int]:
        t = self.tile
        return (self.left + column * t + t // 2, self.top + row * t + t // 2)

    def _board_surface(self) -> Any:
        """The board as `connect4_env.render.render_rgb` draws it, as a pygame surface; drawn again
        only when the position changed (the window redraws 30 times a second).
        """
        key = tuple(self.moves)
        if self._board_image is None or self._board_image[0] != key:
            image = render_rgb(self.board, self.tile)
            self._board_image = (key, self.pg.surfarray.make_surface(image.transpose(1, 0, 2)))
        return self._board_image[1]

    def draw(self) -> None:
        """Draw the window's frame: the board with the last move ringed and the winning line outlined, the
        hovered column's preview on a person's turn, the agent's search numbers and the status line.
        """
        pg, screen, t, rules, board = self.pg, self.screen, self.tile, self.rules, self.board
        screen.fill(_BACK)
        screen.blit(self._board_surface(), (self.left, self.top))
        radius = max(1, int(STONE_RADIUS * t))
        ring = int(ring_width(t))
        if board.last_move is not None:
            row = rules.rows - board.heights[board.last_move]
            centre = self._cell_centre(row, board.last_move)
            pg.draw.circle(screen, LAST_MOVE, centre, int(radius * LAST_MOVE_RADIUS), ring)
        for row, column in board.winning_cells():
            pg.draw.circle(screen, WINNING, self._cell_centre(row, column), radius, 2 * ring)
        if self.human_to_move() and self.hover is not None and board.is_legal(self.hover):
            colour = PALETTE[1 + board.to_move]
            centre = (self.left + self.hover * t + t // 2, self.top - t // 2)
            pg.draw.circle(screen, colour, centre, radius)
            landing = rules.rows - 1 - board.heights[self.hover]
            pg.draw.circle(screen, colour, self._cell_centre(landing, self.hover), radius, ring)
        if self.show_numbers and self.view is not None:
            self._draw_view(*self.view)
        self._draw_status()
        pg.display.flip()

    def _draw_view(self, seat: int, info: dict[str, Any], n_stones: int) -> None:
        t, rules = self.tile, self.rules
        size = max(12, int(t * 0.34))
        line_one, line_two = self.info_top + size // 2, self.info_top + size // 2 + size
        kind = info.get("kind")
        for column in range(rules.columns):
            x = self.left + column * t + t // 2
            if kind == "mcts":
                visits, values = info.get("visits", []), info.get("values", [])
                total = max(1, sum(visits))
                if column < len(visits) and (visits[column] or values[column] is not None):
                    share = f"{100 * visits[column] / total:.0f}%"
                    self._text(share, size, _WHITE, (x, line_one))
                    if values[column] is not None:
                        self._text(f"{values[column]:.2f}", size, _GREY, (x, line_two))
            elif kind == "solver":
                scores = info.get("scores", [])
                if column < len(scores) and scores[column] is not None:
                    score = scores[column]
                    plies = plies_to_end(score, n_stones, rules.cells)
                    label = "D" if score == 0 else f"{'W' if score > 0 else 'L'}{plies}"
                    colour = WINNING if score > 0 else _GREY if score == 0 else _RED_TEXT
                    self._text(label, size, colour, (x, line_one))
            elif kind == "ntuple":
                values = info.get("values", [])
                if column < len(values) and values[column] is not None:
                    self._text(f"{values[column]:+.2f}", size, _WHITE, (x, line_one))

    def _draw_status(self) -> None:
        board, names = self.board, self.names
        seat_name = [f"{'XO'[s]} ({'you' if self.players[s] is None else names[s]})" for s in (0, 1)]
        if self.forfeit is not None:
            loser = self.forfeit["player"]
            status = f"{seat_name[1 - loser]} wins: {seat_name[loser]} forfeited"
        elif board.winner is not None:
            status = f"{seat_name[board.winner]} wins after {len(self.moves)} moves"
        elif board.is_draw:
            status = f"draw after {len(self.moves)} moves"
        elif self._thinking:
            status = f"{seat_name[board.to_move]} is thinking..."
        elif self.players[board.to_move] is None:
            status = f"{seat_name[board.to_move]} to move: click a column or press its number"
        else:
            status = f"{seat_name[board.to_move]} to move"
        if self.view is not None and self.show_numbers:
            kind = self.view[1].get("kind")
            shown = {"mcts": "playout share and mean value]", "ntuple": "afterstate values]"}
            status += "   [under the board: " + shown.get(str(kind), "solver's verdicts]")
        centre = self.width // 2
        self._text(status, 22, _WHITE, (centre, self.status_top + 14))
        self._text("N new game   U undo   S swap sides   Esc quit", 18, _GREY, (centre, self.status_top + 38))
