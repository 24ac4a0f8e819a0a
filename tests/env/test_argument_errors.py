"""One exception policy everywhere: TypeError for a wrong type, ValueError for a wrong value, raised at once."""

from __future__ import annotations

import tracemalloc

import gymnasium as gym
import numpy as np
import pytest
from helpers.extras import importorskip

import connect4_env  # noqa: F401  (registers Connect4-v0)
from connect4_agents import MCTSAgent, QLearningAgent, RandomAgent, SolverAgent
from connect4_env import connect4_v0
from connect4_env.core import Board
from connect4_env.encoding import action_mask, observation_planes
from connect4_env.envs.vector_env import Connect4VectorEnv
from connect4_env.render import BoardRenderer, render_rgb
from connect4_env.rules import MAX_CELLS, Rules
from connect4_env.svg import MAX_TILE
from connect4_env.validation import check_bool, check_choice, check_int, check_number


@pytest.mark.parametrize("value", [2.0, "3", None, True, np.float64(1), [1]])
def test_check_int_refuses_other_types(value: object) -> None:
    with pytest.raises(TypeError, match="count must be an integer"):
        check_int("count", value, 1)


def test_check_helpers_name_the_value_and_range() -> None:
    assert check_int("n", np.int8(3), 1, 5) == 3 and type(check_int("n", np.int8(3))) is int
    with pytest.raises(ValueError, match=r"n must be an integer in 1..5, got 9"):
        check_int("n", 9, 1, 5)
    assert check_number("x", np.float32(0.5), 0, 1) == 0.5
    for bad in (float("nan"), float("inf"), -0.1):
        with pytest.raises(ValueError, match="x must be a finite number >= 0"):
            check_number("x", bad, 0)
    with pytest.raises(ValueError, match="> 0"):
        check_number("x", 0, 0, above_minimum=True)
    with pytest.raises(TypeError):
        check_number("x", "1")
    assert check_bool("flag", np.bool_(True)) is True
    with pytest.raises(TypeError, match="flag must be True or False"):
        check_bool("flag", "yes")
    with pytest.raises(ValueError, match="allowed: 'a', 'b'"):
        check_choice("mode", "c", ("a", "b"))
    with pytest.raises(ValueError):
        check_choice("mode", ["unhashable"], ("a",))


@pytest.mark.parametrize(
    "make",
    [
        lambda v: Rules(v, 7, 4),
        lambda v: gym.make("Connect4-v0", rows=v),
        lambda v: Connect4VectorEnv(num_envs=v),
        lambda v: connect4_v0.env(columns=v),
        lambda v: BoardRenderer("rgb_array", tile=v),
        lambda v: MCTSAgent(playouts=v),
        lambda v: SolverAgent(table_size=v),
        lambda v: QLearningAgent.load("table.npz", max_bytes=v),
    ],
)
def test_a_float_where_an_int_belongs_is_a_type_error_in_every_layer(make) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TypeError):
        make(2.5)


def test_board_sizes_past_the_limit_are_refused_at_once() -> None:
    # "at once": before anything sized by the board is built, which the memory taken shows on any machine
    for rows, columns in ((3000, 3000), (1, MAX_CELLS + 1), (MAX_CELLS, 2)):
        tracemalloc.start()
        try:
            with pytest.raises(ValueError, match=f"at most {MAX_CELLS} cells"):
                Rules(rows, columns, 4)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 50_000, (rows, columns, peak)  # a 3000x3000 board's masks alone are megabytes


@pytest.mark.parametrize("size", [(1000, 1000), (1, 100_000), (100_000, 1)])
def test_rules_memory_grows_with_the_cells_only(size: tuple[int, int]) -> None:
    tracemalloc.start()
    try:
        rules = Rules(*size, 4)
        board = Board(rules)
        board.play(0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # a few bits per cell, plus per-column heights: far below rows x columns^2 bits
    assert peak < 64 * rules.cells + 200 * rules.columns + 100_000


def test_tile_is_capped_at_construction() -> None:
    with pytest.raises(ValueError, match=f"tile must be an integer in 4..{MAX_TILE}"):
        gym.make("Connect4-v0", render_mode="rgb_array", tile=10**5)
    with pytest.raises(ValueError, match="pixels"):
        Connect4VectorEnv(num_envs=1, rows=1000, columns=1000, render_mode="rgb_array", tile=48)
    with pytest.raises(ValueError, match="pixels"):
        render_rgb(Board(Rules(1000, 1000, 4)), tile=48)
    # ansi needs no image: a large board with the default tile is fine
    Connect4VectorEnv(num_envs=1, rows=1000, columns=1000, render_mode="ansi")


def test_agents_validate_at_construction() -> None:
    with pytest.raises(ValueError, match="node_budget"):
        SolverAgent(node_budget=2**70)
    # the table is allocated on the first search: a size is bounded before then (2**32 entries were 64 GiB)
    with pytest.raises(ValueError, match="table_size must be an integer in 1..134217728, got 4294967296"):
        SolverAgent(table_size=1 << 32)
    with pytest.raises(TypeError, match="compiled"):
        MCTSAgent(compiled="yes")
    with pytest.raises(TypeError, match="seed"):
        Connect4VectorEnv(num_envs=2).reset(seed=1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="opponent_kwargs"):
        gym.make("Connect4-v0", opponent="random", opponent_kwargs=[1])
    with pytest.raises(ValueError, match="unknown agent"):
        gym.make("Connect4-v0", opponent="nobody")
    with pytest.raises(TypeError, match="agent_first"):
        Connect4VectorEnv(agent_first=1)
    RandomAgent(seed=np.int64(3))


def test_the_registry_matches_the_declared_entry_points() -> None:
    from importlib.metadata import entry_points

    from connect4_env import policy

    declared = {point.name: point.value for point in entry_points(group=policy.ENTRY_POINT_GROUP)}
    assert {"random", "human", "mcts", "solver", "qlearning", "sb3", "alphazero"} <= set(declared)
    for name, value in declared.items():
        assert name in policy.policy_names()
        assert value.startswith("connect4_agents.")  # pyproject.toml is the only list


def test_register_policy_and_specs() -> None:
    from connect4_env.policy import make_policy, policy_from_spec, register_policy

    register_policy("lefty", "connect4_agents.random_agent:RandomAgent")
    assert isinstance(make_policy("lefty", seed=1), RandomAgent)
    with pytest.raises(ValueError, match="takes no ':value'"):
        policy_from_spec("lefty:3")
    with pytest.raises(ValueError, match="module:attr"):
        register_policy("broken", "no_colon")
    with pytest.raises(TypeError):
        register_policy("broken", 42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="playouts"):
        policy_from_spec("mcts:-5")
    assert policy_from_spec("mcts:25").playouts == 25
    # a registration that names no module or attribute is a ValueError when used (ModuleNotFoundError and
    # AttributeError before); a module that exists but lacks a dependency keeps its own error
    register_policy("test_no_module", "no_such_module_xyz:Agent")
    register_policy("test_no_attribute", "connect4_agents.random_agent:NoSuchAgent")
    with pytest.raises(ValueError, match="there is no module 'no_such_module_xyz'"):
        make_policy("test_no_module")
    with pytest.raises(ValueError, match="has no 'NoSuchAgent'"):
        make_policy("test_no_attribute")


_SEEDED_AGENTS = {
    "random": lambda seed: RandomAgent(seed=seed),
    "mcts": lambda seed: MCTSAgent(30, seed=seed),
    "solver": lambda seed: SolverAgent(seed=seed),
    "qlearning": lambda seed: QLearningAgent(Rules(4, 5, 4), seed=seed),
}


@pytest.mark.parametrize("name", sorted(_SEEDED_AGENTS))
def test_a_bad_seed_is_named_and_changes_nothing(name: str) -> None:
    make = _SEEDED_AGENTS[name]
    for bad, error in (
        ("x", TypeError),
        (1.5, TypeError),
        (True, TypeError),
        ([1.5], TypeError),
        (-1, ValueError),
    ):
        with pytest.raises(error, match="seed must be None or a non-negative integer"):
            make(bad)
    # a failed reset keeps the agent's random state: it plays on exactly as an untouched twin
    board = Board.from_moves([2, 2, 1, 3, 0, 4], Rules(4, 5))  # small: the solver needs no book
    planes, mask = observation_planes(board), action_mask(board)
    agent, twin = make(7), make(7)
    agent.act(planes, mask), twin.act(planes, mask)
    with pytest.raises(TypeError, match="seed"):
        agent.reset(seed="x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seed"):
        agent.reset(seed=-3)
    assert [agent.act(planes, mask) for _ in range(20)] == [twin.act(planes, mask) for _ in range(20)]
    make(np.int64(3)), make([1, 2]), make(np.random.default_rng(0))  # what numpy seeds from still works


_ENVS = {
    "Connect4-v0": lambda: gym.make("Connect4-v0", opponent="random"),
    "Connect4Text-v0": lambda: gym.make("Connect4Text-v0", opponent="random"),
    "connect4_v0": lambda: connect4_v0.env(),
    "Connect4VectorEnv": lambda: Connect4VectorEnv(num_envs=2, opponent="random"),
}


def _random_state(env) -> dict:  # type: ignore[no-untyped-def]
    """The env's own random stream's state (PettingZoo's raw env keeps it as ``_np_random``)."""
    inner = env.unwrapped
    return (inner.np_random if hasattr(inner, "np_random") else inner._np_random).bit_generator.state


@pytest.mark.parametrize("name", sorted(_ENVS))
def test_env_seeds_are_checked_like_every_other_argument(name: str) -> None:
    """reset(seed=...) takes None or a non-negative (Python or numpy) integer; a bool, a float or a negative
    number is a TypeError / ValueError naming the seed (Gymnasium's own check raises gymnasium.error.Error and
    takes True as 1), and the env is left as it was."""
    env = _ENVS[name]()
    env.reset(seed=5)
    random_state = _random_state(env)
    for bad, error in ((True, TypeError), (1.5, TypeError), ("3", TypeError), (-1, ValueError)):
        with pytest.raises(error, match="seed must be an integer >= 0"):
            env.reset(seed=bad)
    assert _random_state(env) == random_state
    twin = _ENVS[name]()
    env.reset(seed=np.int64(11))
    twin.reset(seed=11)
    # the same seed, the same random stream: a numpy integer seeds exactly as the Python int
    assert _random_state(env) == _random_state(twin)
    env.close(), twin.close()


def test_core_constructors_and_encoders_refuse_other_types() -> None:
    """What a fuzzer tries first: a string for the rules, None for the text, a numpy integer for a bitboard."""
    cases = [
        (lambda: Board("6x7"), TypeError, "rules must be a connect4_env.Rules"),  # type: ignore[arg-type]
        (lambda: Board.from_stones("x", 0, 0), TypeError, "rules must be"),  # type: ignore[arg-type]
        (lambda: Board.from_stones(Rules(), 1.0, 0), TypeError, "first must be an integer"),  # type: ignore[arg-type]
        (lambda: Board.from_ascii(None), TypeError, "from_ascii reads a str"),  # type: ignore[arg-type]
        (lambda: observation_planes("board"), TypeError, "board must be a connect4_env.Board"),  # type: ignore[arg-type]
        (lambda: action_mask(None), TypeError, "board must be a connect4_env.Board"),  # type: ignore[arg-type]
    ]
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            call()
    # numpy integers are integers: a uint64 bitboard builds the same position (it raised OverflowError)
    assert Board.from_stones(Rules(), np.uint64(1), np.uint64(0)) == Board.from_moves([0])
    board = Board.from_moves([3, 4])
    for bad, error in ((99, ValueError), (-1, ValueError), ("3", TypeError), (2.0, TypeError)):
        with pytest.raises(error, match="last_move"):
            board.undo(4, last_move=bad)  # type: ignore[arg-type]
        assert board == Board.from_moves([3, 4]) and board.last_move == 4  # nothing changed
    with pytest.raises(TypeError, match="column"):
        board.undo("4")  # type: ignore[arg-type]
    board.undo(4, last_move=np.int64(3))
    assert board == Board.from_moves([3]) and board.last_move == 3 and type(board.last_move) is int


@pytest.mark.parametrize(
    "make", [lambda: RandomAgent(0), lambda: MCTSAgent(20, seed=0), lambda: SolverAgent()]
)
def test_masks_hold_zeros_and_ones_only(make) -> None:  # type: ignore[no-untyped-def]
    """A -1 or NaN in a mask (from a network's output, say) is no legal column: it is refused, not read as
    one; strings are a TypeError; floats and booleans of 0 and 1 are masks."""
    # a small open position: the solver answers it without the book or numba (make test-core)
    agent, planes = make(), observation_planes(Board.from_moves([2, 2, 1, 3, 0, 4], Rules(4, 5)))
    for bad in ([-1, 1, 1, 1, 1], [np.nan] * 5, [2, 1, 1, 1, 1], [0.5] * 5):
        with pytest.raises(ValueError, match="action_mask must hold only 0 and 1"):
            agent.act(planes, np.array(bad))
    with pytest.raises(TypeError, match="action_mask must hold 0/1 or booleans"):
        agent.act(planes, np.array(["1"] * 5))
    for good in (np.ones(5), np.ones(5, bool), np.ones(5, np.uint8)):
        assert 0 <= agent.act(planes, good) < 5


def test_batched_masks_hold_zeros_and_ones_only() -> None:
    agent, planes = RandomAgent(0), np.zeros((2, 6, 7, 2), np.int8)
    with pytest.raises(ValueError, match="action_masks must hold only 0 and 1"):
        agent.act_batch(planes, np.array([[1] * 7, [-1] * 7]))
    with pytest.raises(TypeError, match="action_masks must hold 0/1 or booleans"):
        agent.act_batch(planes, np.array([["1"] * 7] * 2))
    assert agent.act_batch(planes[:0], np.ones((0, 7))).shape == (0,)  # an empty batch: no columns
    with pytest.raises(ValueError, match="at least one row"):
        agent.act(np.zeros((0, 7, 2)), np.ones(7))


def test_board_move_helpers_take_any_integer_and_refuse_the_rest() -> None:
    board = Board.from_moves([3, 3])
    # a numpy integer (what action_space.sample() gives) is a column, as play() takes it
    assert board.is_legal(np.int64(3)) and not board.is_legal(7) and not board.is_legal(-1)
    for bad in ("3", 3.0, True, None):
        with pytest.raises(TypeError, match="not an integer column"):
            board.is_legal(bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="not an integer column"):
            Board().play_moves([2, bad])  # type: ignore[list-item]
    assert Board().play_moves("334") == Board.from_moves([3, 3, 4]) == Board().play_moves(np.array([3, 3, 4]))


@pytest.mark.parametrize("bad", [[3, 3, 99], [3, 3, 2.5], [0, 1, 0, 1, 0, 1, 0, 5]])
def test_a_failed_play_moves_leaves_the_board_as_it_was(bad: list[object]) -> None:
    board = Board.from_moves([4])
    before = (board.copy(), board.heights[:], board.ply, board.last_move)
    with pytest.raises((TypeError, ValueError)):  # IllegalMoveError is a ValueError
        board.play_moves(bad)  # type: ignore[arg-type]
    assert (board, board.heights, board.ply, board.last_move) == before


def test_board_cell_is_checked_before_any_shift() -> None:
    board = Board.from_moves([3])
    assert board.cell(5, 3) == 0 and board.cell(np.int64(0), np.int64(0)) is None
    for row, column, error in [
        (0, 7, ValueError),
        (-1, 0, ValueError),
        (6, 0, ValueError),
        (0, 10**12, ValueError),
    ]:
        with pytest.raises(error, match="must be an integer in 0.."):
            board.cell(row, column)
    with pytest.raises(TypeError, match="row must be an integer"):
        board.cell("a", 0)  # type: ignore[arg-type]


def test_observation_helpers_name_what_is_wrong() -> None:
    from connect4_env.encoding import board_from_observation, split_observation

    with pytest.raises(ValueError, match="player must be an integer in 0..1, got 2"):
        observation_planes(Board(), 2)
    with pytest.raises(TypeError, match="player must be an integer"):
        observation_planes(Board(), True)  # type: ignore[arg-type]
    for call in (split_observation, board_from_observation, RandomAgent().act):
        with pytest.raises(ValueError, match="needs an 'observation' key.*got the keys \\['obs'\\]"):
            call({"obs": np.zeros((6, 7, 2))})


def test_q_learning_helpers_check_their_arguments() -> None:
    agent = QLearningAgent(Rules(4, 5, 4), seed=0)
    for bad, error in (("a", TypeError), (-5, ValueError), (float("nan"), TypeError)):
        with pytest.raises(error, match="episode must be an integer >= 0"):
            agent.epsilon_at(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="total must be an integer >= 0"):
        agent.epsilon_at(5, total=-10)
    with pytest.raises(ValueError, match="this Q-table plays Rules\\(rows=4, columns=5"):
        agent.q_values(Board())  # a 6x7 board: it used to read as an unseen position (zeros)
    with pytest.raises(TypeError, match="board must be a connect4_env.Board"):
        agent.q_values("3")  # type: ignore[arg-type]
    assert agent.epsilon_at(0, total=10) == agent.epsilon and agent.q_values(Board(Rules(4, 5, 4))).shape == (
        5,
    )


def test_methods_that_take_boards_specs_or_names_refuse_other_types() -> None:
    from connect4_agents.base import NoLegalMoveError
    from connect4_agents.human import HumanAgent
    from connect4_env.policy import make_policy

    solver = SolverAgent()
    for call in (
        solver.score,
        solver.evaluate_board,
        solver.outcomes_board,
        solver.best_columns,
        MCTSAgent(10).search,
    ):
        with pytest.raises(TypeError, match="board must be a connect4_env.Board, got 'x'"):
            call("x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="every must be True or False"):
        solver.best_columns(Board(), every="no")  # type: ignore[arg-type]
    for from_spec in (MCTSAgent.from_spec, QLearningAgent.from_spec):  # AlphaZero's: in its tests (torch)
        with pytest.raises(TypeError, match="a spec value must be a str"):
            from_spec(100)  # type: ignore[arg-type]
    for name in (5, None):
        with pytest.raises(TypeError, match="an agent name must be a str"):
            make_policy(name)  # type: ignore[arg-type]
    with pytest.raises(NoLegalMoveError, match="empty"):
        RandomAgent().choose([])
    with pytest.raises(TypeError, match="input_fn must be callable"):
        HumanAgent(5)  # type: ignore[arg-type]
    assert solver.best_columns(Board.from_moves([0, 1, 0, 1, 0, 1])) == [0]  # the win at once


def test_make_sb3_vec_env_checks_its_own_arguments() -> None:
    importorskip("stable_baselines3")
    from connect4_env.integrations.sb3 import make_sb3_vec_env

    with pytest.raises(TypeError, match="monitor must be True or False"):
        make_sb3_vec_env(2, monitor="no")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n_envs must be an integer >= 1, got 0"):
        make_sb3_vec_env(0)


def test_the_sb3_vec_env_checks_seeds_and_indices_and_keeps_working() -> None:
    """A bad seed is refused when given (it used to be stored and break every later reset); game indices
    must name games of this VecEnv (an out-of-range one was an IndexError, or silently ignored)."""
    importorskip("stable_baselines3")
    from connect4_env.integrations.sb3 import make_sb3_vec_env

    venv = make_sb3_vec_env(2, monitor=False, opponent="random")
    for bad, error in ((1.5, TypeError), (True, TypeError), ("3", TypeError), (-1, ValueError)):
        with pytest.raises(error, match="seed must be an integer >= 0"):
            venv.seed(bad)
    first = venv.reset()  # no bad seed was kept: reset works
    assert venv.seed(np.int64(4)) == [4, 5]
    seeded = venv.reset()
    assert venv.seed(4) == [4, 5] and np.array_equal(venv.reset(), seeded)
    assert first.shape == seeded.shape == (2, 6, 7, 2)
    for call in (
        lambda indices: venv.env_method("action_masks", indices=indices),
        lambda indices: venv.get_attr("num_envs", indices=indices),
        lambda indices: venv.set_attr("spare", 1, indices=indices),
        lambda indices: venv.env_is_wrapped(object, indices=indices),
    ):
        for bad in (2, -1, [0, 9]):
            with pytest.raises(ValueError, match="indices must be an integer in 0..1"):
                call(bad)
        for bad in ("0", 1.0, [0.0]):
            with pytest.raises(TypeError, match="indices"):
                call(bad)
    assert len(venv.env_method("action_masks", indices=[1, np.int64(0)])) == 2
    venv.close()


def test_a_spec_that_needs_a_value_says_so() -> None:
    from connect4_env.policy import policy_from_spec

    with pytest.raises(ValueError, match="agent spec 'text' needs a value after ':'"):
        policy_from_spec("text")  # it was "TextPolicy.__init__() missing 1 required positional argument"
    assert type(policy_from_spec("random")).__name__ == "RandomAgent"


def test_renderers_refuse_what_is_not_a_board() -> None:
    from connect4_env.render import render_ansi, render_rgb

    for render in (render_rgb, render_ansi):
        with pytest.raises(TypeError, match=r"board must be a connect4_env.Board, got .x. \(str\)"):
            render("x")  # type: ignore[arg-type]
