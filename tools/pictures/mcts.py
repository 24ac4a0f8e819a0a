"""Draw the pictures of the tutorial "MCTS step by step" (docs/tutorials/mcts.md).

Every picture comes from a real, seeded search with the settings the page's code blocks use, so the numbers in
the pictures are the numbers the page prints:

- ``mcts-pair-tree.svg``: the search tree of the pair game (a 1x4 board, two in a row) after each of its first
  five playouts, with what each of the four phases did;
- ``mcts-growth.svg``: visits and mean values per column as one search of a 6x7 position grows;
- ``mcts-search.png``: ``SearchResult.plot`` of a fresh 20,000-playout search of that position (the page's table);
- ``mcts-solver.png``: ``SearchResult.plot`` of a search that proves a win;
- ``mcts-board-334.svg``, ``mcts-board-solver.svg``: the two 6x7 positions (``connect4_env.render.to_svg``).

Run from anywhere: ``python tools/pictures/mcts.py`` (``--out DIR`` to write elsewhere). It needs matplotlib
(the ``train`` extra) and takes a few seconds.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.patches import Circle, FancyBboxPatch  # noqa: E402
from matplotlib.ticker import NullFormatter  # noqa: E402

from connect4_agents import MCTSAgent  # noqa: E402
from connect4_env import (
    Board,  # noqa: E402
    Rules,
)
from connect4_env.render import to_svg  # noqa: E402
from connect4_env.svg import BACKGROUND, PALETTE  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "docs" / "tutorials" / "img"

# The settings of the page's code blocks: keep both in step.
# the seed whose first four playouts visit columns 0, 1, 2, 3 in order, as the walkthrough does
PAIR_SEED = 2057
PAIR_PLAYOUTS = 5
# section "Reading a search": O to move; 2 and 5 win, the other columns lose
SEARCH_MOVES = [3, 3, 4]
SEARCH_PLAYOUTS = 20_000
# section "MCTS-Solver": X to move, column 3 wins in 5 plies
SOLVER_MOVES = [3, 4, 5, 6, 4, 3, 0, 1, 1, 0, 6, 2, 3, 5]
SOLVER_PLAYOUTS = 20_000
# 10 ... 20,000 playouts, log-spaced
GROWTH_STEPS = sorted({round(10 ** (1 + k / 8)) for k in range(27)} | {20_000})


def _colour(rgb: tuple[int, int, int]) -> tuple[float, float, float]:
    return (rgb[0] / 255, rgb[1] / 255, rgb[2] / 255)


# The docs' content column is about 690 px wide (Material, a 1280-pixel window and wider): a picture wider than
# WIDTH_INCHES is shown shrunk. An SVG figure up to that width is shown at 96 px an inch, so 9-point text is
# 12 px on the page; no text here is smaller.
WIDTH_INCHES = 7.1
SMALL, NORMAL, LARGE = 9.0, 9.5, 10.5  # points

BLUE = _colour(BACKGROUND)
STONE = [_colour(c) for c in PALETTE]  # empty, X (red), O (yellow)
MOVER_EDGE = {1: "#b22222", 2: "#c99a00"}  # the outline of a node: who moved into it (X red, O yellow)


def _save(figure: Any, path: Path) -> None:
    """Save as SVG with text kept as text (small files) and no date (the same file on every run)."""
    with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": "mcts"}):
        figure.savefig(path, format="svg", metadata={"Date": None})
    plt.close(figure)


# -- the pair game's tree, playout by playout -----------------------------------------------------------------
@dataclass
class Snapshot:
    """One node of a copy of the tree: the column played into it, its statistics and its children."""

    move: int
    visits: int
    wins: float
    cells: list[int]  # 0 empty, 1 X, 2 O
    children: list[Snapshot] = field(default_factory=list)


def _snapshot(tree: Any, node: int, cells: list[int], ply: int) -> Snapshot:
    # ``tree`` is the agent's private array tree (connect4_agents.mcts.tree.Tree): there is no public view of
    # the nodes below the root, and this picture needs them
    snap = Snapshot(int(tree.move[node]), int(tree.visits[node]), float(tree.value[node]), cells)
    for child in tree.children(node):
        column = int(tree.move[child])
        child_cells = list(cells)
        child_cells[column] = 1 + ply % 2
        snap.children.append(_snapshot(tree, child, child_cells, ply + 1))
    return snap


def pair_snapshots(playouts: int = PAIR_PLAYOUTS, seed: int = PAIR_SEED) -> list[Snapshot]:
    """The tree of the pair game after each of its first ``playouts`` playouts (the page's second block)."""
    board = Board.from_moves([], Rules(1, 4, 2))
    agent = MCTSAgent(playouts=1, seed=seed, symmetry=False, solver=False)
    snapshots = []
    for _ in range(playouts):
        agent.search(board)
        snapshots.append(_snapshot(agent._tree, 0, [0, 0, 0, 0], 0))
    return snapshots


def _path(before: Snapshot | None, after: Snapshot) -> list[Snapshot]:
    """The nodes whose visit count grew from ``before`` to ``after``: the path of the playout."""
    path = [after]
    old_children = {c.move: c for c in before.children} if before is not None else {}
    for child in after.children:
        old = old_children.get(child.move)
        if child.visits > (old.visits if old is not None else 0):
            return path + _path(old, child)
    return path


def _count(snap: Snapshot) -> int:
    return 1 + sum(_count(c) for c in snap.children)


def _words(before: Snapshot | None, after: Snapshot) -> list[str]:
    """What the four phases did in the playout from ``before`` to ``after``."""
    path = _path(before, after)
    steps = ["root"] + [f"{'XO'[depth % 2]} plays {node.move}" for depth, node in enumerate(path[1:])]
    grown = _count(after) - (_count(before) if before is not None else 1)
    # the same node as the playout's last one, before the playout (None: the expansion just made it)
    old_end: Snapshot | None = before
    for step in path[1:]:
        old_end = (
            next((c for c in old_end.children if c.move == step.move), None) if old_end is not None else None
        )
    # the playout's result for the player who moved into its last node
    result = path[-1].wins - (old_end.wins if old_end is not None else 0.0)
    mover, other = "XO"[len(path) % 2], "XO"[(len(path) + 1) % 2]
    outcome = "a draw" if result == 0.5 else f"{mover if result == 1 else other} wins"
    if before is None:
        selection = "the root (it has no children yet)"
    elif grown:
        selection = " → ".join(steps[:-1]) + "  (highest UCB1)"
    else:
        selection = " → ".join(steps) + "  (unvisited children first)"
    expansion = (
        f"{grown} new nodes, one per legal move" if grown else "none (a leaf grows on its second visit)"
    )
    return [
        f"1 selection: {selection}",
        f"2 expansion: {expansion}",
        f"3 simulation: a random game after “{steps[-1]}”: {outcome}",
        f"4 backpropagation: {len(path)} nodes on the path get a visit,",
        "\u00a0\u00a0\u00a0each scored for the player who moved into it",  # no-break spaces: SVG keeps them
    ]


def _mini_board(axes: Axes, x: float, y: float, cells: list[int], edge: str, lw: float) -> None:
    width, height = 0.8, 0.24
    axes.add_patch(
        FancyBboxPatch(
            (x - width / 2, y - height / 2),
            width,
            height,
            boxstyle="round,pad=0.02",
            facecolor=BLUE,
            edgecolor=edge,
            linewidth=lw,
        )
    )
    for i, owner in enumerate(cells):
        axes.add_patch(Circle((x - 0.3 + 0.2 * i, y), 0.075, facecolor=STONE[owner], edgecolor="none"))


def _layout(snap: Snapshot, x: float, depth: int, spots: dict[int, tuple[float, float]]) -> None:
    """Place ``snap`` at ``x`` and its children spread evenly below it (``spots``: node id -> position)."""
    spots[id(snap)] = (x, -0.62 * depth)
    n = len(snap.children)
    for i, child in enumerate(snap.children):
        _layout(child, x + (i - (n - 1) / 2) * (1.0 if depth == 0 else 0.9), depth + 1, spots)


def _draw_tree(axes: Axes, before: Snapshot | None, after: Snapshot) -> None:
    on_path = {id(node) for node in _path(before, after)}
    spots: dict[int, tuple[float, float]] = {}
    _layout(after, 0.0, 0, spots)

    def walk(node: Snapshot, depth: int) -> None:
        x, y = spots[id(node)]
        for child in node.children:
            cx, cy = spots[id(child)]
            hot = id(child) in on_path
            axes.plot(
                [x, cx], [y - 0.14, cy + 0.14], color="#222222" if hot else "#bbbbbb", lw=2.2 if hot else 0.8
            )
            walk(child, depth + 1)
        edge = "#222222" if depth == 0 else MOVER_EDGE[1 + (depth - 1) % 2]
        _mini_board(axes, x, y, node.cells, edge, 2.4 if id(node) in on_path else 1.0)
        weight = "bold" if id(node) in on_path else "normal"
        if depth == 0:
            axes.text(
                x + 0.5,
                y,
                f"root, N = {node.visits}",
                ha="left",
                va="center",
                fontsize=SMALL,
                fontweight=weight,
            )
        else:
            label = f"{node.wins:g}/{node.visits}"
            axes.text(x, y - 0.17, label, ha="center", va="top", fontsize=SMALL, fontweight=weight)

    walk(after, 0)


def draw_pair_tree(path: Path) -> Path:
    """The pair game's tree after each of its first five playouts, with the four phases in words."""
    snapshots = pair_snapshots()
    figure, rows = plt.subplots(
        len(snapshots), 2, figsize=(WIDTH_INCHES, 1.3 * len(snapshots) + 0.9), width_ratios=[0.84, 1.0]
    )
    before: Snapshot | None = None
    for number, (after, (tree_axes, text_axes)) in enumerate(zip(snapshots, rows), start=1):
        _draw_tree(tree_axes, before, after)
        tree_axes.set_xlim(-2.85, 2.2)
        tree_axes.set_ylim(-1.55, 0.25)
        tree_axes.set_aspect("equal")
        tree_axes.axis("off")
        text_axes.axis("off")
        text_axes.text(0.0, 0.95, f"after playout {number}", fontsize=LARGE, fontweight="bold", va="top")
        for line_number, line in enumerate(_words(before, after)):
            text_axes.text(0.0, 0.74 - 0.17 * line_number, line, fontsize=SMALL, va="top")
        before = after
    figure.suptitle(
        "The pair game (1x4 board, two in a row),\nMCTSAgent(seed=2057, symmetry=False, solver=False).\n"
        "Under each node: wins/visits for the player who moved into it\n(red outline: X moved, yellow: O moved)",
        fontsize=NORMAL,
        y=0.995,
    )
    # fixed margins: each row is about 1.3 inches, the title about 0.9 (tight_layout would leave the
    # equal-aspect trees a band of white above them)
    height = figure.get_figheight()
    figure.subplots_adjust(
        left=0.01, right=0.99, bottom=0.01, top=1 - 0.85 / height, wspace=0.04, hspace=0.12
    )
    _save(figure, path)
    return path


# -- 6x7 searches --------------------------------------------------------------------------------------------
def draw_growth(path: Path) -> Path:
    """Visits (share) and mean value per column as one search of SEARCH_MOVES grows to 20,000 playouts."""
    board = Board.from_moves(SEARCH_MOVES)
    columns = board.rules.columns
    shares: list[list[float]] = [[] for _ in range(columns)]
    means: list[list[float]] = [[] for _ in range(columns)]
    # the agent keeps its tree between searches of one position: each search adds playouts to it
    agent = MCTSAgent(playouts=1, seed=0)
    done = 0
    proofs: list[int] = []  # columns proven lost, at each step
    for total in GROWTH_STEPS:
        agent.playouts = total - done
        result = agent.search(board)
        done = total
        proofs.append(result.proven.count("loss"))
        for column in range(columns):
            shares[column].append(result.visits[column] / result.root_visits)
            means[column].append(result.mean_value[column])
    figure, (share_axes, mean_axes) = plt.subplots(1, 2, figsize=(WIDTH_INCHES, 3.9))
    for column in range(columns):
        style = "-" if column in (2, 5) else "--"
        width = 2.0 if column in (2, 5) else 1.0
        share_axes.plot(
            GROWTH_STEPS, shares[column], style, lw=width, marker="o", ms=3, label=f"column {column}"
        )
        mean_axes.plot(GROWTH_STEPS, means[column], style, lw=width, marker="o", ms=3)
    for axes, title in ((share_axes, "share of the visits"), (mean_axes, "mean value (win 1, draw 1/2)")):
        axes.set_xscale("log")
        # plain numbers: the default 10^n labels have exponents at 70 % of the label size
        axes.set_xticks([10, 100, 1000, 10_000], ["10", "100", "1,000", "10,000"])
        axes.xaxis.set_minor_formatter(NullFormatter())
        axes.set_xlabel("playouts", fontsize=NORMAL)
        axes.set_title(title, fontsize=LARGE)
        axes.tick_params(labelsize=SMALL)
        axes.grid(alpha=0.3)
    if proofs[-1]:  # the first step at which all the losses of the end were proven
        proved_at = GROWTH_STEPS[proofs.index(proofs[-1])]
        for axes in (share_axes, mean_axes):
            axes.axvline(proved_at, color="#555555", lw=0.8, ls=":")
        share_axes.annotate(
            f"{proofs[-1]} columns\nproven lost",
            (proved_at, 0.78),
            xytext=(-4, 0),
            textcoords="offset points",
            fontsize=SMALL,
            ha="right",
            va="top",
        )
        share_axes.set_ylim(-0.02, 0.82)
    figure.legend(
        *share_axes.get_legend_handles_labels(), loc="lower center", ncol=4, fontsize=SMALL, frameon=False
    )
    figure.suptitle(
        "One search after 3, 3, 4, stopped and resumed, MCTSAgent(seed=0)\n"
        "(O to move; columns 2 and 5 win: solid lines)",
        fontsize=NORMAL,
    )
    figure.tight_layout(rect=(0, 0.11, 1, 1))
    _save(figure, path)
    return path


def draw_search(path: Path) -> Path:
    """``SearchResult.plot`` of the page's table: 20,000 playouts after 3, 3, 4."""
    result = MCTSAgent(playouts=SEARCH_PLAYOUTS, seed=0).search(Board.from_moves(SEARCH_MOVES))
    return result.plot(
        path, title=f"MCTSAgent(playouts=20000, seed=0) after 3, 3, 4: chose column {result.column}"
    )


def draw_solver(path: Path) -> Path:
    """``SearchResult.plot`` of the MCTS-Solver section's search, which proves a win."""
    result = MCTSAgent(playouts=SOLVER_PLAYOUTS, seed=0).search(Board.from_moves(SOLVER_MOVES))
    return result.plot(
        path,
        title=f"MCTS-Solver: {result.playouts:,} of 20,000 playouts, column {result.column} ({result.reason})",
    )


def board_svg(board: Board, tile: int = 32) -> str:
    """``to_svg(board)`` with the column numbers under it."""
    inner = to_svg(board, tile=tile)
    width, height = tile * board.rules.columns, tile * board.rules.rows
    numbers = "".join(
        f'<text x="{tile * (c + 0.5):g}" y="{height + tile * 0.55:g}" text-anchor="middle" '
        f'font-family="sans-serif" font-size="{tile * 0.45:g}">{c}</text>'
        for c in range(board.rules.columns)
    )
    total = height + round(tile * 0.75)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{total}" viewBox="0 0 {width} {total}">\n'
        f"{inner}\n{numbers}\n</svg>\n"
    )


def draw_boards(out: Path) -> list[Path]:
    """The two 6x7 positions of the page, with column numbers."""
    written = []
    for name, moves in (("mcts-board-334.svg", SEARCH_MOVES), ("mcts-board-solver.svg", SOLVER_MOVES)):
        target = out / name
        target.write_text(board_svg(Board.from_moves(moves)))
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"folder to write to (default {DEFAULT_OUT})"
    )
    args = parser.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    written = [
        draw_pair_tree(out / "mcts-pair-tree.svg"),
        draw_growth(out / "mcts-growth.svg"),
        draw_search(out / "mcts-search.png"),
        draw_solver(out / "mcts-solver.png"),
        *draw_boards(out),
    ]
    for target in written:
        print(f"{target} ({math.ceil(target.stat().st_size / 1024)} KB)")


if __name__ == "__main__":
    main()
