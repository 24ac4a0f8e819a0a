"""The one-move shield: its rules against a brute-force reference, its choice among the allowed columns, specs,
and the batched path."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers.reference import ReferenceGame
from helpers.strategies import board_sizes
from hypothesis import given, settings
from hypothesis import strategies as st

from connect4_agents import MCTSAgent, RandomAgent
from connect4_agents.shield import SHIELD_RULES, Shield, shield_columns
from connect4_env import Board, Connect4VectorEnv, Rules
from connect4_env.encoding import observation_planes
from connect4_env.policy import policy_from_spec


def reference_shield(game: ReferenceGame) -> tuple[list[int], str]:
    """The shield's rule spelled out by brute force: play every move, and every reply to it."""
    mover, legal = game.to_move, game.legal_moves()

    def dropped(column: int, player: int) -> ReferenceGame:
        child = game.copy()
        child.to_move = player  # who drops the stone is given: the mover, or the opponent as if to move
        child.play(column)
        return child

    wins = [c for c in legal if dropped(c, mover).winner() == mover]
    if wins:
        return wins, "win"
    threats = [c for c in legal if dropped(c, 1 - mover).winner() == 1 - mover]
    if threats:
        return threats, "block"
    safe = []
    for column in legal:
        child = dropped(column, mover)  # then the opponent is to move
        replies = []
        for reply in child.legal_moves():
            grandchild = child.copy()
            grandchild.play(reply)
            replies.append(grandchild.winner())
        if 1 - mover not in replies:
            safe.append(column)
    if not safe:
        return legal, "lost"
    return safe, "free" if safe == legal else "safe"


def moves_game(rows: int, columns: int, win_length: int, picks: list[int]) -> tuple[Board, ReferenceGame]:
    """The same position on the fast board and the reference, from ``picks`` read as indices into the legal
    columns (a game that ends stops early)."""
    board = Board(Rules(rows, columns, win_length))
    game = ReferenceGame(rows, columns, win_length)
    for pick in picks:
        legal = board.legal_moves()
        if not legal:
            break
        column = legal[pick % len(legal)]
        board.play(column)
        game.play(column)
        if board.is_terminal:
            break
    return board, game


@settings(max_examples=400)
@given(size=board_sizes(), picks=st.lists(st.integers(0, 8), max_size=40))
def test_the_shield_allows_what_brute_force_allows(size: tuple[int, int, int], picks: list[int]) -> None:
    board, game = moves_game(*size, picks)
    if board.is_terminal:
        with pytest.raises(ValueError, match="game is over"):
            shield_columns(board)
        return
    assert shield_columns(board) == reference_shield(game), board.to_ascii()


CASES = {
    "takes the win before blocking": (
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        O O O . . . .
        X X X . . . .
        """,
        ([3], "win"),
    ),
    "blocks the single threat": (
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . X
        O O O . . X X
        """,
        ([3], "block"),
    ),
    "two threats: the inner policy picks which to block": (
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . X
        . O O O . X X
        """,
        ([0, 4], "block"),
    ),
    "never plays under the opponent's winning cell": (
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        O O O . . . .
        X X O . . X X
        """,
        ([0, 1, 2, 4, 5, 6], "safe"),
    ),
    "every move is safe on the empty board": (
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        """,
        ([0, 1, 2, 3, 4, 5, 6], "free"),
    ),
    "every move hands over a win: all are left to the inner policy": (
        """
        . X . O
        . X . O
        . O . X
        X X O O
        """,
        ([0, 2], "lost"),
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_ascii_positions(name: str) -> None:
    text, expected = CASES[name]
    board = Board.from_ascii(text, 3 if "lost" in expected else 4)
    assert shield_columns(board) == expected, board.to_ascii()


def test_lost_position_is_really_lost() -> None:
    """The 4x4 'lost' case above (three in a row): each of the mover's columns lets the opponent win on top."""
    board = Board.from_ascii(CASES["every move hands over a win: all are left to the inner policy"][0], 3)
    for column in board.legal_moves():
        child = board.copy()
        child.play(column)
        assert child.winning_moves(), (column, child.to_ascii())


class Stubborn:
    """Plays ``column`` whenever its mask allows it, else the first allowed column; records the masks it saw."""

    def __init__(self, column: int, restricted: bool, info: dict[str, Any] | None = None) -> None:
        self.column, self.restricted_masks, self.info = column, restricted, info
        self.masks: list[list[int]] = []

    def act(self, observation: Any, action_mask: Any = None) -> int:
        mask = np.asarray(action_mask)
        self.masks.append(mask.tolist())
        return self.column if mask[self.column] else int(np.flatnonzero(mask)[0])

    def move_info(self) -> dict[str, Any] | None:
        return self.info


UNDER_THREAT = Board.from_ascii(
    """
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    O O O . . . .
    X X O . . X X
    """
)


def ask(shield: Shield, board: Board) -> int:
    return shield.act(observation_planes(board), np.array(board.legal_mask(), np.int8))


def test_a_policy_that_takes_narrow_masks_is_asked_with_the_safe_columns() -> None:
    inner = Stubborn(3, restricted=True)
    shield = Shield(inner, seed=0)
    assert ask(shield, UNDER_THREAT) == 0
    assert inner.masks == [[1, 1, 1, 0, 1, 1, 1]]
    assert shield.stats["safe"] == 1 and shield.stats["overruled"] == 0


def test_a_strict_policy_is_asked_with_the_full_mask_and_overruled_by_its_own_ranking() -> None:
    visits = [5, 1, 2, 90, 40, 3, 0]
    inner = Stubborn(3, restricted=False, info={"kind": "mcts", "column": 3, "visits": visits})
    shield = Shield(inner, seed=0)
    assert ask(shield, UNDER_THREAT) == 4  # its second choice by visits
    assert inner.masks == [[1, 1, 1, 1, 1, 1, 1]]
    assert shield.stats["overruled"] == 1
    assert shield.move_info() == {"kind": "shield", "column": 4, "rule": "safe"}
    unranked = Shield(Stubborn(3, restricted=False), seed=0)
    assert ask(unranked, UNDER_THREAT) in (0, 1, 2, 4, 5, 6)


def test_forced_moves_do_not_ask_the_inner_policy() -> None:
    board = Board.from_ascii(CASES["blocks the single threat"][0])
    inner = Stubborn(0, restricted=True)
    shield = Shield(inner)
    assert ask(shield, board) == 3 and inner.masks == []
    assert shield.move_info() == {"kind": "shield", "column": 3, "rule": "block"}


def test_the_inner_policy_move_info_is_kept_when_its_column_is_played() -> None:
    shield = Shield(MCTSAgent(playouts=30, seed=0))
    column = ask(shield, Board())
    info = shield.move_info()
    assert (
        info is not None and info["kind"] == "mcts" and info["column"] == column and info["shield"] == "free"
    )


def test_specs_build_the_wrapped_policy_and_bind_it() -> None:
    shield = policy_from_spec("shield:mcts:20", seed=3, rules=Rules(5, 4, 3))
    assert isinstance(shield, Shield) and isinstance(shield.policy, MCTSAgent)
    assert shield.policy.playouts == 20 and shield.policy.rules == Rules(5, 4, 3)
    assert isinstance(policy_from_spec("shield:shield:random").policy, Shield)
    with pytest.raises(ValueError, match="needs a value after ':'.*shield:<spec>"):
        policy_from_spec("shield")
    with pytest.raises(ValueError, match="unknown agent 'nope'"):
        policy_from_spec("shield:nope")
    with pytest.raises(TypeError, match="Shield wraps a policy"):
        Shield("random")


def test_seeded_games_repeat() -> None:
    def game(seed: int) -> list[int]:
        shield = Shield(RandomAgent(), seed=seed)
        shield.bind(Rules())
        shield.reset(seed=seed)
        board, moves = Board(), []
        while not board.is_terminal:
            column = ask(shield, board)
            board.play(column)
            moves.append(column)
        return moves

    assert game(7) == game(7)


@pytest.mark.parametrize("restricted", [True, False])
def test_act_batch_applies_the_same_rules(restricted: bool) -> None:
    rng = np.random.default_rng(0)
    boards = []
    while len(boards) < 60:
        board = Board()
        for _ in range(int(rng.integers(0, 30))):
            legal = board.legal_moves()
            board.play(legal[int(rng.integers(len(legal)))])
            if board.is_terminal:
                break
        if not board.is_terminal:
            boards.append(board)
    planes = np.stack([observation_planes(b) for b in boards])
    masks = np.array([b.legal_mask() for b in boards], np.int8)

    class Batched(Stubborn):
        def act_batch(self, observations: Any, action_masks: Any) -> np.ndarray:
            return np.array([self.act(o, m) for o, m in zip(observations, action_masks)])

    for inner in (Stubborn(3, restricted), Batched(3, restricted)):
        shield = Shield(inner, seed=0)
        columns = shield.act_batch(planes, masks)
        for board, column in zip(boards, columns):
            assert column in shield_columns(board)[0], board.to_ascii()
        assert sum(shield.stats[rule] for rule in SHIELD_RULES) == len(boards)


def test_a_vector_env_plays_against_a_shielded_opponent() -> None:
    envs = Connect4VectorEnv(
        num_envs=8, opponent="shield:random", agent_first=None, autoreset_mode="SameStep"
    )
    envs.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(30):
        masks = envs.action_masks()
        envs.step(np.array([rng.choice(np.flatnonzero(row)) for row in masks]))
    envs.close()
