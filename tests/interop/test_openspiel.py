"""OpenSpiel both ways, against the real package: pyspiel states <-> Board on random games, our game registered
in pyspiel (OpenSpiel's own API checker, its MCTSBot on 5x6 and 7x7), bots both ways, and clear errors."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers.extras import importorskip

pyspiel = importorskip("pyspiel")

from connect4_agents.base import NoLegalMoveError  # noqa: E402
from connect4_agents.evaluation.arena import play_match  # noqa: E402
from connect4_agents.interop.openspiel import OpenSpielPolicy, PolicyBot, openspiel_mcts  # noqa: E402
from connect4_agents.random_agent import RandomAgent  # noqa: E402
from connect4_env import Board, Rules, action_mask, observation_planes  # noqa: E402
from connect4_env.integrations.openspiel.convert import (  # noqa: E402
    board_from_openspiel,
    board_to_openspiel,
    load_openspiel_game,
)

SIZES = [Rules(6, 7, 4), Rules(5, 6, 4), Rules(7, 7, 4), Rules(4, 5, 3), Rules(1, 8, 4)]


def random_games(rules: Rules, n_games: int, seed: int):
    """Each position of ``n_games`` random games: ``(moves so far, Board)``."""
    rng = np.random.default_rng(seed)
    for _ in range(n_games):
        board, moves = Board(rules), []
        yield list(moves), board.copy()
        while not board.is_terminal:
            moves.append(int(rng.choice(board.legal_moves())))
            board.play(moves[-1])
            yield list(moves), board.copy()


@pytest.mark.parametrize("game", ["connect_four", "python_connect4_env"])
@pytest.mark.parametrize("rules", SIZES, ids=str)
def test_every_position_of_random_games_converts_both_ways(game: str, rules: Rules) -> None:
    spiel_game = load_openspiel_game(rules, game=game)
    for moves, board in random_games(rules, 6, seed=rules.cells):
        state = spiel_game.new_initial_state()
        for column in moves:
            state.apply_action(column)
        from_state = board_from_openspiel(state)
        assert from_state == board, f"{moves}\n{board}\n{state}"
        assert from_state.last_move == board.last_move
        back = board_to_openspiel(board, game=game)
        assert str(back) == str(state)
        assert back.is_terminal() == state.is_terminal() and back.returns() == state.returns()
        assert back.legal_actions() == state.legal_actions()
        assert board_from_openspiel(back) == board
        # a board rebuilt from its stones has no history: some order of moves still reaches it
        stones_only = Board.from_stones(rules, *board.stones)
        assert board_from_openspiel(board_to_openspiel(stones_only, game=game)) == board


def test_the_ascii_layouts_agree_row_0_at_the_bottom_in_openspiel() -> None:
    board = Board.from_ascii(
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . O . . .
        O . . X X . .
        """
    )
    state = board_to_openspiel(board, game="connect_four")
    assert str(state).splitlines()[-2:] == ["...o...", "o..xx.."]
    planes = np.asarray(state.observation_tensor(0)).reshape(3, 6, 7)  # x, o, empty; row 0 = bottom
    assert planes[0, 0].tolist() == [0, 0, 0, 1, 1, 0, 0]
    assert planes[1, 1].tolist() == [0, 0, 0, 1, 0, 0, 0]


def test_a_won_position_without_history_ends_on_the_winning_move() -> None:
    board = Board.from_ascii(
        """
        . . . .
        O . . .
        O O . .
        X X X X
        """
    )
    state = board_to_openspiel(board, game="connect_four")
    assert state.is_terminal() and state.returns() == [1.0, -1.0]
    assert board_from_openspiel(state) == board


def test_our_6x7_game_plays_exactly_like_openspiels_connect_four() -> None:
    ours, theirs = load_openspiel_game(), pyspiel.load_game("connect_four")
    rng = np.random.default_rng(1)
    for _ in range(25):
        a, b = ours.new_initial_state(), theirs.new_initial_state()
        while True:
            assert str(a) == str(b)
            assert a.current_player() == b.current_player()
            assert a.legal_actions() == b.legal_actions()
            assert a.returns() == b.returns() and a.is_terminal() == b.is_terminal()
            assert a.observation_tensor(0) == b.observation_tensor(0)
            assert a.observation_string(1) == b.observation_string(1)
            if b.is_terminal():
                break
            column = int(rng.choice(b.legal_actions()))
            assert a.action_to_string(column) == b.action_to_string(column)
            a.apply_action(column)
            b.apply_action(column)
    assert ours.observation_tensor_shape() == theirs.observation_tensor_shape()
    assert ours.num_distinct_actions() == 7 and ours.max_game_length() == 42


@pytest.mark.parametrize("rules", SIZES, ids=str)
def test_our_game_passes_openspiels_own_simulation_checks(rules: Rules) -> None:
    game = load_openspiel_game(rules)
    pyspiel.random_sim_test(game, num_sims=10, serialize=False, verbose=False)
    assert game.get_parameters() == {
        "rows": rules.rows,
        "columns": rules.columns,
        "win_length": rules.win_length,
    }
    loaded = pyspiel.load_game(
        f"python_connect4_env(rows={rules.rows},columns={rules.columns},win_length={rules.win_length})"
    )
    assert loaded.num_distinct_actions() == rules.columns


@pytest.mark.parametrize("rules", [Rules(5, 6, 4), Rules(7, 7, 4)], ids=str)
def test_openspiels_mcts_bot_plays_full_games_on_our_boards(rules: Rules) -> None:
    from open_spiel.python.algorithms import evaluate_bots, mcts

    game = load_openspiel_game(rules)
    rng = np.random.RandomState(0)
    bots = [
        mcts.MCTSBot(game, 2.0, 100, mcts.RandomRolloutEvaluator(1, rng), random_state=rng, solve=True)
        for _ in range(2)
    ]
    state = game.new_initial_state()
    returns = evaluate_bots.evaluate_bots(state, bots, rng)
    assert sorted(returns) in ([-1.0, 1.0], [0.0, 0.0])
    # and it beats random play there
    random_bot = pyspiel.make_uniform_random_bot(1, 3)
    assert evaluate_bots.evaluate_bots(game.new_initial_state(), [bots[0], random_bot], rng) == [1.0, -1.0]


def test_our_policies_play_as_pyspiel_bots() -> None:
    from open_spiel.python.algorithms import evaluate_bots

    rng = np.random.RandomState(0)
    for game in (pyspiel.load_game("connect_four"), load_openspiel_game(Rules(5, 6, 4))):
        for seat in (0, 1):
            bots = [pyspiel.make_uniform_random_bot(player, 7) for player in (0, 1)]
            bots[seat] = PolicyBot("mcts:300", seed=seat)
            returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rng)
            assert returns[seat] == 1.0, (game, seat, returns)


def test_openspiels_mcts_bot_plays_as_our_policy_in_the_arena() -> None:
    rules = Rules(5, 6, 4)
    theirs = openspiel_mcts(200, seed=0, rules=rules)
    result = play_match(theirs, RandomAgent(0), 4, rules=rules)
    assert result.wins == 4, result
    # any bot works through OpenSpielPolicy, also on our registered game
    random_policy = OpenSpielPolicy(pyspiel.make_uniform_random_bot(0, 1), game="python_connect4_env", seat=0)
    board = Board.from_moves([3, 3], Rules(5, 6))  # player 0 to move: the C++ bot plays for player 0
    assert board.is_legal(random_policy.act(observation_planes(board), action_mask(board)))


def test_same_seed_same_moves() -> None:
    board = Board.from_moves([3, 2, 4])
    moves = {openspiel_mcts(100, seed=5).act(observation_planes(board), action_mask(board)) for _ in range(3)}
    assert len(moves) == 1


def test_bad_inputs_raise_clear_errors_and_change_nothing() -> None:
    tic_tac_toe = pyspiel.load_game("tic_tac_toe").new_initial_state()
    tic_tac_toe.apply_action(4)
    with pytest.raises(ValueError, match=r"'tic_tac_toe' is not Connect Four; allowed: 'connect_four'"):
        board_from_openspiel(tic_tac_toe)
    assert tic_tac_toe.history() == [4]
    with pytest.raises(ValueError, match="tic_tac_toe"):
        PolicyBot("random").step(tic_tac_toe)
    with pytest.raises(TypeError, match=r"pyspiel.State .* got Board"):
        board_from_openspiel(Board())
    with pytest.raises(
        TypeError, match="connect4_env.Board, got State|connect4_env.Board, got TicTacToeState"
    ):
        board_to_openspiel(tic_tac_toe)
    board = Board.from_moves([3, 3])
    with pytest.raises(ValueError, match=r"game='chess' is not supported; allowed: 'connect_four'"):
        board_to_openspiel(board, game="chess")
    with pytest.raises(ValueError, match="rules"):
        board_to_openspiel(board, game=load_openspiel_game(Rules(5, 6, 4)))
    assert board == Board.from_moves([3, 3]) and board.last_move == 3
    with pytest.raises(TypeError, match="pyspiel.Bot or a function player_id -> pyspiel.Bot, got str"):
        OpenSpielPolicy("mcts")
    with pytest.raises(TypeError, match="act"):
        PolicyBot(42)
    unreachable = Board.from_stones(
        Rules(2, 2, 2), Rules(2, 2, 2).cell_bit(0, 0), Rules(2, 2, 2).cell_bit(1, 0)
    )
    assert unreachable.to_move == 0
    unreachable = Board.from_ascii("X .\nO .", win_length=2)
    with pytest.raises(ValueError, match="no order of moves"):
        board_to_openspiel(unreachable)


def test_the_policy_checks_the_mask_and_the_end_of_the_game() -> None:
    policy = openspiel_mcts(20, seed=0)
    board = Board.from_moves([3, 3])
    with pytest.raises(ValueError, match="disagrees"):
        policy.act(observation_planes(board), np.zeros(7, np.int8))
    won = Board.from_moves([0, 1, 0, 1, 0, 1, 0])
    with pytest.raises(NoLegalMoveError):
        policy.act(observation_planes(won), action_mask(won))


def test_openspiels_alphazero_evaluator_and_training_step_run_on_our_5x6_game(tmp_path) -> None:
    for module in ("jax", "flax", "optax", "orbax.checkpoint", "chex"):
        pytest.importorskip(
            module, reason="OpenSpiel's AlphaZero needs jax, flax, optax, orbax and chex (in no extra)"
        )
    from open_spiel.python.algorithms import evaluate_bots, mcts
    from open_spiel.python.algorithms.alpha_zero import evaluator as evaluator_lib
    from open_spiel.python.algorithms.alpha_zero import model_nnx as model_lib

    game = load_openspiel_game(Rules(5, 6, 4))
    model = model_lib.Model.build_model(
        "mlp",
        game.observation_tensor_shape(),
        game.num_distinct_actions(),
        nn_width=16,
        nn_depth=1,
        weight_decay=1e-4,
        learning_rate=0.01,
        path=str(tmp_path),
    )
    evaluator = evaluator_lib.AlphaZeroEvaluator(game, model)
    rng = np.random.RandomState(0)
    bot = mcts.MCTSBot(
        game, 2.0, 20, evaluator, random_state=rng, solve=False, child_selection_fn=mcts.SearchNode.puct_value
    )
    returns = evaluate_bots.evaluate_bots(
        game.new_initial_state(), [bot, pyspiel.make_uniform_random_bot(1, 0)], rng
    )
    assert sorted(returns) in ([-1.0, 1.0], [0.0, 0.0])
    # one training step on a trajectory of the game, as AlphaZero's learner takes it
    from open_spiel.python.algorithms.alpha_zero import utils

    state, inputs = game.new_initial_state(), []
    while not state.is_terminal():
        mask = np.asarray(state.legal_actions_mask(), np.float32)
        inputs.append(
            utils.TrainInput(
                observation=np.asarray(state.observation_tensor(), np.float32),
                legals_mask=mask.astype(bool),
                policy=mask / mask.sum(),
                value=np.float32(0.0),
            )
        )
        state.apply_action(int(rng.choice(state.legal_actions())))
    losses = model.update(utils.TrainInput.stack(inputs))
    assert np.isfinite(float(losses.total))


def test_without_openspiel_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from helpers.extras import absent

    from connect4_env.extras import MissingExtraError

    absent(monkeypatch, "pyspiel", "open_spiel")
    with pytest.raises(MissingExtraError, match=r"'openspiel' extra .*pip install -e \"\.\[openspiel\]\""):
        board_from_openspiel(object())


def test_openspiel_mcts_checks_its_settings_before_the_first_move() -> None:
    """0 simulations failed at the first move ("max() arg is an empty sequence"), 1.5 inside OpenSpiel, and a
    NaN exploration constant or a string for solve were taken."""
    cases = [
        ({"simulations": 0}, ValueError, "simulations"),
        ({"simulations": 1.5}, TypeError, "simulations"),
        ({"seed": -1}, ValueError, "seed"),
        ({"uct_c": float("nan")}, ValueError, "uct_c"),
        ({"solve": "x"}, TypeError, "solve"),
        ({"rules": "6x7"}, TypeError, "rules"),
    ]
    for settings, error, name in cases:
        with pytest.raises(error, match=name):
            openspiel_mcts(**settings)
    bot = openspiel_mcts(10, seed=0).bot
    with pytest.raises(TypeError, match="rules"):
        OpenSpielPolicy(bot, rules="6x7")  # type: ignore[arg-type]


SEAT_BOUND_SCRIPT = """
import pyspiel
from connect4_agents.evaluation.arena import play_match
from connect4_agents.interop.openspiel import OpenSpielPolicy
from connect4_agents.random_agent import RandomAgent

try:  # the crash of issue 41: a bot built for player 0, asked for player 1's move in the second game
    play_match(OpenSpielPolicy(pyspiel.make_uniform_random_bot(0, 0)), RandomAgent(seed=0), 2)
except ValueError as error:
    print("refused:", error)
seat_zero = OpenSpielPolicy(pyspiel.make_uniform_random_bot(0, 0), seat=0)
try:
    play_match(seat_zero, RandomAgent(seed=0), 2)
except ValueError as error:
    print("refused:", error)
one_per_seat = OpenSpielPolicy(lambda player: pyspiel.make_uniform_random_bot(player, 0))
result = play_match(one_per_seat, RandomAgent(seed=0), 2)
print("games:", result.wins + result.draws + result.losses)
"""


def test_a_seat_bound_cpp_bot_is_never_asked_for_the_other_seat() -> None:
    """OpenSpiel's C++ factory bots take a player_id; asked for the other player's move they crashed Python
    (exit 139) in an ordinary 2-game match. Run in a subprocess, so that a crash fails this test only."""
    done = subprocess.run(
        [sys.executable, "-c", SEAT_BOUND_SCRIPT], capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    lines = done.stdout.splitlines()
    assert lines[0].startswith("refused: a bot of OpenSpiel's C++ factories") and "seat=" in lines[0]
    assert lines[1].startswith("refused: this OpenSpielPolicy's bot was built for player 0 and is asked for")
    assert lines[2] == "games: 2"


def test_one_bot_per_seat_and_the_seat_checks() -> None:
    made: list[int] = []

    def make(player: int) -> Any:
        made.append(player)
        return pyspiel.make_uniform_random_bot(player, 5)

    policy = OpenSpielPolicy(make)
    for moves in ([], [3], [3, 3], [2]):
        board = Board.from_moves(moves)
        assert board.is_legal(policy.act(observation_planes(board), action_mask(board)))
    assert made == [0, 1]  # each seat's bot built once, on first use
    second = OpenSpielPolicy(pyspiel.make_uniform_random_bot(1, 0), seat=1)
    board = Board.from_moves([3])
    assert board.is_legal(second.act(observation_planes(board), action_mask(board)))
    with pytest.raises(ValueError, match="built for player 1 and is asked for player 0's move"):
        second.act(observation_planes(Board()), action_mask(Board()))
    with pytest.raises(ValueError, match="seat is for a single bot"):
        OpenSpielPolicy(make, seat=0)
    with pytest.raises(ValueError, match="seat must be an integer in 0..1"):
        OpenSpielPolicy(pyspiel.make_uniform_random_bot(0, 0), seat=2)
    with pytest.raises(TypeError, match="returned str for player 0, not a pyspiel.Bot"):
        OpenSpielPolicy(lambda player: "bot").act(observation_planes(Board()), action_mask(Board()))
    # a bot that plays whoever is to move needs no seat: OpenSpiel's Python MCTSBot and its C++ MCTSBot
    cpp_mcts = pyspiel.MCTSBot(
        pyspiel.load_game("connect_four"), pyspiel.RandomRolloutEvaluator(1, 0), 2.0, 50, 100, True, 0, False
    )
    result = play_match(OpenSpielPolicy(cpp_mcts), RandomAgent(seed=0), 2)
    assert result.wins + result.draws + result.losses == 2


def _proxy_game_class() -> type:
    """A game that wraps ``connect_four`` under the name ``connect_four_proxy``, built as Kaggle's Game Arena
    builds its proxy (kaggle_environments/envs/open_spiel_env/proxy.py and games/connect_four): a Python
    ``pyspiel.Game`` with the wrapped game's type, information and parameters, whose states forward every call
    to the wrapped C++ state. Written here, as that package is not installed beside OpenSpiel."""

    class ProxyState(pyspiel.State):
        def __init__(self, wrapped: Any, game: Any) -> None:
            super().__init__(game)
            self.wrapped = wrapped

        def current_player(self) -> int:
            return self.wrapped.current_player()

        def _legal_actions(self, player: int) -> list[int]:
            return self.wrapped.legal_actions(player)

        def _apply_action(self, action: int) -> None:
            self.wrapped.apply_action(action)

        def _action_to_string(self, player: int, action: int) -> str:
            return self.wrapped.action_to_string(player, action)

        def is_terminal(self) -> bool:
            return self.wrapped.is_terminal()

        def returns(self) -> list[float]:
            return self.wrapped.returns()

        def __str__(self) -> str:
            return str(self.wrapped)

    class ProxyGame(pyspiel.Game):
        def __init__(self, params: Any = None) -> None:
            wrapped = pyspiel.load_game("connect_four", params or {})
            kind = wrapped.get_type()
            game_type = pyspiel.GameType(
                short_name="connect_four_proxy",
                long_name="Connect Four (proxy)",
                dynamics=kind.dynamics,
                chance_mode=kind.chance_mode,
                information=kind.information,
                utility=kind.utility,
                reward_model=kind.reward_model,
                max_num_players=kind.max_num_players,
                min_num_players=kind.min_num_players,
                provides_information_state_string=kind.provides_information_state_string,
                provides_information_state_tensor=kind.provides_information_state_tensor,
                provides_observation_string=kind.provides_observation_string,
                provides_observation_tensor=kind.provides_observation_tensor,
                parameter_specification=kind.parameter_specification,
            )
            info = pyspiel.GameInfo(
                num_distinct_actions=wrapped.num_distinct_actions(),
                max_chance_outcomes=wrapped.max_chance_outcomes(),
                num_players=wrapped.num_players(),
                min_utility=wrapped.min_utility(),
                max_utility=wrapped.max_utility(),
                utility_sum=wrapped.utility_sum(),
                max_game_length=wrapped.max_game_length(),
            )
            super().__init__(game_type, info, wrapped.get_parameters())
            self.wrapped = wrapped

        def new_initial_state(self) -> Any:
            return ProxyState(self.wrapped.new_initial_state(), self)

    return ProxyGame


@pytest.fixture(scope="module")
def proxy_registered() -> None:
    if "connect_four_proxy" not in pyspiel.registered_names():
        game_class = _proxy_game_class()
        pyspiel.register_game(game_class().get_type(), game_class)


def test_kaggle_game_arena_proxy_states_are_accepted_like_connect_four(proxy_registered: None) -> None:
    """Kaggle's Game Arena hands agents a connect_four_proxy state (deserialized from the observation's
    serializedGameAndState); the adapters refused it as "not Connect Four"."""
    rules = Rules(6, 7, 4)
    game = pyspiel.load_game("connect_four_proxy", pyspiel.load_game("connect_four").get_parameters())
    state = game.new_initial_state()
    for column in [3, 3, 4, 4, 5, 5]:
        state.apply_action(column)
    _, state = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
    assert state.get_game().get_type().short_name == "connect_four_proxy"
    board = board_from_openspiel(state)
    assert board == Board.from_moves([3, 3, 4, 4, 5, 5]) and board.rules == rules
    assert PolicyBot("solver").step(state) in (2, 6)  # either completes the bottom row
    back = board_to_openspiel(board, game=game)
    assert str(back) == str(state) and back.get_game().get_type().short_name == "connect_four_proxy"
    assert str(board_to_openspiel(board, game="connect_four_proxy")) == str(state)
    assert load_openspiel_game(Rules(5, 6, 4), game="connect_four_proxy").get_parameters()["x_in_row"] == 4
    # a whole game there: our MCTS as a pyspiel bot wins both seats against random play, and a bot of any
    # game plays through OpenSpielPolicy on it
    from open_spiel.python.algorithms import evaluate_bots

    rng = np.random.RandomState(0)
    for seat in (0, 1):
        bots = [pyspiel.make_uniform_random_bot(player, 7) for player in (0, 1)]
        bots[seat] = PolicyBot("mcts:100", seed=seat)
        assert evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rng)[seat] == 1.0
    policy = OpenSpielPolicy(lambda player: pyspiel.make_uniform_random_bot(player, 0), game=game)
    assert board.is_legal(policy.act(observation_planes(board), action_mask(board)))


def test_the_proxy_name_says_who_registers_it(monkeypatch: pytest.MonkeyPatch) -> None:
    names = [name for name in pyspiel.registered_names() if name != "connect_four_proxy"]
    monkeypatch.setattr(pyspiel, "registered_names", lambda: names)
    with pytest.raises(ValueError, match="not registered with pyspiel in this process: kaggle_environments"):
        load_openspiel_game(game="connect_four_proxy")


def _counting_lines(call: Callable[[], Any], limit: int) -> Any:
    """``call()`` while counting the lines of connect4_env/integrations/openspiel/convert.py and move_order.py that run; past
    ``limit`` it fails (work bounded by a count, not by the clock)."""
    import connect4_env.integrations.openspiel.convert
    import connect4_env.integrations.openspiel.move_order

    files = {
        connect4_env.integrations.openspiel.move_order.__file__,
        connect4_env.integrations.openspiel.convert.__file__,
    }
    count = 0

    class TooMuchWork(Exception):
        pass

    def local(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
            if count > limit:
                raise TooMuchWork(f"over {limit:,} lines run")
        return local

    def calls(frame: Any, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename in files else None

    previous = sys.gettrace()
    sys.settrace(calls)
    try:
        return call()
    finally:
        sys.settrace(previous)


CRAFTED_12X8 = Board.from_ascii(
    """
    . . . . . . . .
    . . . . . . . .
    . . . . . . . .
    . . . . . . . .
    X O O O O O X X
    X X O X O X X X
    O O X O X O X X
    X X X X O X X X
    X X O O X X O X
    O O O X X X O X
    O O X O X O X O
    O O O O O O O O
    """,
    win_length=9,
)


def test_an_unreachable_position_is_refused_after_bounded_work() -> None:
    """Every bottom stone is the second player's, so no first move exists; the search from the top took 34 s to
    find that out on this board (more with more stones). It is refused within a fixed count of lines."""
    with pytest.raises(ValueError, match="no order of moves reaches this position"):
        _counting_lines(lambda: board_to_openspiel(CRAFTED_12X8, game="connect_four"), 200_000)


def test_a_long_game_on_a_big_board_converts_without_recursion() -> None:
    """A 40x40 game at ply 1,100 raised RecursionError (the search recursed once per stone)."""
    rules = Rules(40, 40, 40)
    rng = np.random.default_rng(0)
    board = Board(rules)
    while board.ply < 1100:
        board.play(int(rng.choice(board.legal_moves())))
    assert board.winner is None
    stones_only = Board.from_stones(rules, *board.stones)
    for position in (board, stones_only):
        state = _counting_lines(lambda p=position: board_to_openspiel(p, game="connect_four"), 300_000)
        assert board_from_openspiel(state) == board
