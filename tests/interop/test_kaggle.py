"""Kaggle ConnectX: the agent adapter (positions read and checked, time budgets, fallbacks), the submission
file, and (``-m kaggle``, in ``make test-kaggle``) submissions played by kaggle-environments against its negamax
in .venv-kaggle, where our package is not installed."""

from __future__ import annotations

import ast
import base64
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import threading
import tokenize
import zipfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from helpers.extras import importorskip

from connect4_agents.commands import kaggle_submission as command
from connect4_agents.interop.kaggle import make_kaggle_agent
from connect4_agents.interop.kaggle_loading import KERNEL_THREAD
from connect4_agents.interop.kaggle_position import read_kaggle_position
from connect4_agents.interop.kaggle_submission import write_kaggle_submission
from connect4_agents.mcts import MCTSAgent
from connect4_agents.solver import SolverAgent
from connect4_env.core import Board
from connect4_env.rules import Rules

GAMES = Path(__file__).with_name("kaggle_games.py")
CONFIG = {"rows": 6, "columns": 7, "inarow": 4, "actTimeout": 2}
EARLY = """
. . . . . . .
. . . . . . .
. . . . . . .
. . . . . . .
. . . O . . .
. . X X . . .
"""


def kaggle_board(ascii_board: str) -> list[int]:
    """Kaggle's flat board (top row first, 1 = X, 2 = O) of an ASCII board."""
    cells = {".": 0, "X": 1, "O": 2}
    return [cells[ch] for line in ascii_board.strip().splitlines() for ch in line.split()]


def test_the_flat_board_is_read_top_row_first_with_mark_1_first() -> None:
    board = read_kaggle_position({"board": kaggle_board(EARLY), "mark": 2}, CONFIG)
    assert board == Board.from_ascii(EARLY) and board.to_move == 1
    five_by_six = read_kaggle_position({"board": [0] * 30, "mark": 1}, {"rows": 5, "columns": 6, "inarow": 3})
    assert (five_by_six.rules.rows, five_by_six.rules.columns, five_by_six.rules.win_length) == (5, 6, 3)


class Struct(dict):
    """Kaggle's ``Struct``: a dict whose keys are attributes too."""

    def __getattr__(self, name: str) -> Any:
        return self[name]


@pytest.mark.parametrize("wrap", [dict, Struct, lambda fields: SimpleNamespace(**fields)])
def test_dicts_structs_and_objects_give_the_same_move(wrap: Any) -> None:
    # playout counts decide these moves, not the clock: a minute a move never cuts 200 playouts short
    configuration = {**CONFIG, "actTimeout": 60}
    agent = make_kaggle_agent("mcts:200", seed=0, background=False)
    column = agent(wrap({"board": kaggle_board(EARLY), "mark": 2}), wrap(configuration))
    other = make_kaggle_agent("mcts:200", seed=0, background=False)
    assert column == other({"board": kaggle_board(EARLY), "mark": 2}, configuration)
    assert isinstance(column, int) and agent.fallbacks == 0


class CountingClock:
    """A clock that moves ``step`` seconds each time it is read: a move's measured time is a count of reads,
    the same on any machine and under any load."""

    def __init__(self, step: float) -> None:
        self.step, self.now = step, 0.0

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_a_bare_mcts_spec_searches_for_the_whole_move_and_a_count_caps_it() -> None:
    observation = {"board": kaggle_board(EARLY), "mark": 2}
    bare = make_kaggle_agent("mcts", seed=0, move_seconds=0.2, endgame=False, background=False)
    bare.clock = CountingClock(0.0)  # the move measures no time before its search: all 0.2 s are the search's
    bare(observation, CONFIG)
    policy = bare.policy_for(Board.from_ascii(EARLY).rules)
    assert policy.playouts is None and policy.time_limit == 0.2
    counted = make_kaggle_agent("mcts:300", seed=0, move_seconds=0.2, background=False)
    counted(observation, CONFIG)
    assert counted.policy_for(Board.from_ascii(EARLY).rules).playouts == 300


def test_a_bare_alphazero_sizes_its_simulations_to_the_move_time() -> None:
    importorskip("torch")
    observation = {"board": kaggle_board(EARLY), "mark": 2}
    rules = Board.from_ascii(EARLY).rules
    bare = make_kaggle_agent("alphazero", seed=0, move_seconds=0.3, endgame=False, background=False)
    bare.clock = CountingClock(0.01)  # the move measures 0.01 s for its 200 simulations (the default)
    bare(observation, CONFIG)
    policy = bare.policy_for(rules)
    assert policy.simulations == 400  # 4,480 would fill 80 % of the 0.28 s left; at most twice the last count
    # the sizing itself, on given timings: 80 % of the move's time at the measured seconds a simulation, at
    # most twice the last move's count
    policy.last_search, policy.simulations = None, 100
    bare._fit_simulations(policy, 0.3, 0.1)  # 1 ms a simulation: 240 fit, capped at twice 100
    assert policy.simulations == 200
    bare._fit_simulations(policy, 0.3, 0.4)  # 2 ms a simulation: 120 fit
    assert policy.simulations == 120
    # a fixed count stays unless a move overruns its time (measured by the clock, here a counting one)
    fixed = make_kaggle_agent("alphazero:8", seed=0, move_seconds=5.0, background=False)
    fixed.clock = CountingClock(0.01)
    fixed(observation, CONFIG)
    assert fixed.policy_for(rules).simulations == 8
    fixed.clock = CountingClock(3.0)  # each read 3 s later: the move overran its 5 s
    fixed(observation, CONFIG)
    assert fixed.policy_for(rules).simulations == 4


FLOATING = kaggle_board(
    """
. . . . . . .
. . . . . . .
. . . . . . .
. . . O . . .
. . . . . . .
. . . X . . .
"""
)  # O floats over an empty cell
BAD = [
    ({"board": [0] * 41, "mark": 1}, CONFIG, ValueError, "41 cells"),
    ({"board": [0] * 41 + [3], "mark": 1}, CONFIG, ValueError, "is 3"),
    ({"board": FLOATING, "mark": 1}, CONFIG, ValueError, "column 3 has a stone above an empty cell"),
    ({"board": [0] * 42, "mark": 3}, CONFIG, ValueError, "observation.mark"),
    ({"board": [0] * 42, "mark": 2}, CONFIG, ValueError, "observation.mark is 2"),
    ({"board": [0] * 41 + [1], "mark": 1}, CONFIG, ValueError, "observation.mark is 1"),
    ({"board": [0.0] * 42, "mark": 1}, CONFIG, TypeError, "integers"),
    ({"board": "0" * 42, "mark": 1}, CONFIG, TypeError, "observation.board must be a list"),
    ({"board": [0] * 42, "mark": "1"}, CONFIG, TypeError, "observation.mark must be an integer"),
    ({"mark": 1}, CONFIG, ValueError, "no 'board' field"),
    ([0] * 42, CONFIG, TypeError, "got list"),
    ({"board": [0] * 42, "mark": 1}, {**CONFIG, "rows": "6"}, TypeError, "configuration.rows"),
    ({"board": [0] * 42, "mark": 1}, {**CONFIG, "inarow": 0}, ValueError, "configuration.inarow"),
    ({"board": [0] * 42, "mark": 1}, {**CONFIG, "actTimeout": -1}, ValueError, "configuration.actTimeout"),
    ({"board": [0] * 35 + [1, 1, 1, 1, 2, 2, 2], "mark": 2}, CONFIG, ValueError, "the game"),
    # ragged or nested boards: numpy's "inhomogeneous shape" before
    ({"board": [0] * 41 + [[0]], "mark": 1}, CONFIG, TypeError, r"board\[41\] .* is \[0\] \(list\).* flat"),
    ({"board": [[0] * 7] * 5 + [[0] * 6], "mark": 1}, CONFIG, ValueError, r"6 cells \(a list of rows\?\)"),
    ({"board": np.zeros((6, 7), int), "mark": 1}, CONFIG, ValueError, r"array of shape \(6, 7\); connectx"),
    ({"board": [0] * 41 + [None], "mark": 1}, CONFIG, TypeError, r"board\[41\] .* is None \(NoneType\)"),
    ({"board": [0] * 41 + [True], "mark": 1}, CONFIG, TypeError, r"board\[41\] .* is True \(bool\)"),
]


@pytest.mark.parametrize(("observation", "configuration", "error", "message"), BAD)
def test_a_malformed_kaggle_call_raises_naming_the_value_and_loses_nothing(
    observation: Any, configuration: Any, error: type[Exception], message: str
) -> None:
    agent = make_kaggle_agent("mcts:50", seed=0)
    with pytest.raises(error, match=message):
        agent(observation, configuration)
    assert agent({"board": kaggle_board(EARLY), "mark": 2}, CONFIG) in range(7)  # still plays
    assert agent.moves == 1 and agent.fallbacks == 0


def test_bad_specs_and_settings_raise_when_the_agent_is_made() -> None:
    with pytest.raises(ValueError, match="unknown agent 'nope'"):
        make_kaggle_agent("nope")
    with pytest.raises(TypeError, match="agent spec"):
        make_kaggle_agent(3)
    with pytest.raises(ValueError, match="move_seconds"):
        make_kaggle_agent("mcts", move_seconds=0)


def test_the_solver_past_its_time_falls_back_to_a_time_bounded_mcts() -> None:
    solver = SolverAgent(book=False)
    agent = make_kaggle_agent(solver, move_seconds=0.2, background=False)
    column = agent({"board": [0] * 42, "mark": 1}, CONFIG)  # the empty 6x7 board, no book: hours to solve
    assert column in range(7) and agent.fallbacks == 1
    # what bounds the move's time (no wall-clock assertion here): the solver's node budget, a share of the
    # 0.2 s at its node rate, and the fallback MCTS's time limit, what was left of them
    assert solver.node_budget is not None and 0 < solver.node_budget < 10_000_000
    fallback = agent._fallbacks[Board().rules]
    assert fallback.time_limit is not None and 0 < fallback.time_limit <= 0.2
    late = """
. . . . . . .
. . . . . . .
. . . . . . .
. . . . . . .
. . . . O O .
. X X . X O .
"""  # mark 1 (X) completes four in column 3
    assert agent({"board": kaggle_board(late), "mark": 1}, CONFIG) == 3 and agent.fallbacks == 1


class Stubborn:
    """Always plays column 0, full or not."""

    def act(self, observation: Any, action_mask: Any) -> int:
        return 0


def test_an_illegal_column_is_never_played() -> None:
    agent = make_kaggle_agent(Stubborn(), move_seconds=0.05, endgame=False, background=False)
    board = [1, 0, 0, 0, 0, 0, 0] + [2, 0, 0, 0, 0, 0, 0] + [1] + [0] * 6 + [2] + [0] * 6 + [1] + [0] * 6
    board += [2] + [0] * 6
    assert agent({"board": board, "mark": 1}, CONFIG) in range(1, 7) and agent.fallbacks == 1


ENDGAME = """
. . . . . . .
. . . . . . .
. . . . . . .
. . . . . . .
. . . O O . .
. . X X X . O
"""  # X (mark 1) to move wins at once in column 1 or 5; the stubborn policy plays column 0


def test_the_endgame_solver_plays_what_it_proves_and_leaves_the_rest_to_the_policy() -> None:
    observation = {"board": kaggle_board(ENDGAME), "mark": 1}
    board = Board.from_ascii(ENDGAME)
    best = SolverAgent(board.rules).best_columns(board)
    agent = make_kaggle_agent(Stubborn(), move_seconds=0.5, background=False)
    assert agent(observation, CONFIG) in best and agent.endgame_moves == 1
    plain = make_kaggle_agent(Stubborn(), move_seconds=0.5, endgame=False, background=False)
    assert plain(observation, CONFIG) == 0 and plain.endgame_moves == 0
    # the empty board is too early to prove: the endgame solver gets 1,000 nodes (shallow tactics only, not a
    # share of the move it would spend in vain) and the policy moves
    assert agent({"board": [0] * 42, "mark": 1}, CONFIG) == 0 and agent.endgame_moves == 1
    assert agent._endgame.solvers[Board().rules].node_budget == 1_000
    solver = make_kaggle_agent("solver", move_seconds=0.5, background=False)  # it plays its own endgames
    assert solver(observation, CONFIG) in best and solver.endgame_moves == 0
    with pytest.raises(TypeError, match="endgame"):
        make_kaggle_agent("mcts", endgame="no")


def test_an_agent_that_cannot_play_the_board_is_replaced_by_mcts() -> None:
    pytest.importorskip("torch", reason="AlphaZero needs torch (the train extra)")
    agent = make_kaggle_agent("alphazero:0", move_seconds=0.05, endgame=False, background=False)  # 6x7
    small = {"rows": 5, "columns": 6, "inarow": 3, "actTimeout": 2}
    assert agent({"board": [0] * 30, "mark": 1}, small) in range(6) and agent.fallbacks == 1


def test_a_5x6_game_with_three_in_a_row_is_played_to_the_end() -> None:
    configuration = {"rows": 5, "columns": 6, "inarow": 3, "actTimeout": 2}
    players = [make_kaggle_agent("mcts:100", seed=0), make_kaggle_agent("solver", move_seconds=0.2)]
    board = Board(Rules(5, 6, 3))
    while not board.is_terminal:
        flat = (np.zeros(30, int) + 0).tolist()
        for row in range(5):
            for column in range(6):
                owner = board.cell(row, column)
                flat[row * 6 + column] = 0 if owner is None else owner + 1
        board.play(players[board.to_move]({"board": flat, "mark": board.to_move + 1}, configuration))
    assert board.is_terminal and players[0].moves + players[1].moves == board.ply


SUBMISSIONS_RUN = """
import importlib.abc, json, sys
# not on Kaggle: our installed packages either (a submission that named them would fail here)
BLOCKED = {"gymnasium", "pettingzoo", "numba", "bitbully_databases", "tqdm", "scipy", "connect4_env",
           "connect4_agents"}
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError("not on Kaggle: " + name)
sys.meta_path.insert(0, Block())
rows, columns, inarow = json.loads(sys.argv[1])
configuration = {"rows": rows, "columns": columns, "inarow": inarow, "actTimeout": 60}  # no overrun halves
observation = {"board": [0] * (rows * columns), "mark": 1}
report = []
for path in sys.argv[2:]:  # each file as kaggle-environments loads it (no __file__), all in this process
    namespace = {}
    exec(compile(open(path).read(), path, "exec"), namespace)
    agent = [value for value in namespace.values() if callable(value)][-1]
    first = agent(observation, configuration)
    kaggle_agent = namespace["_AGENT"]
    loaded = kaggle_agent.warm_up(configuration, timeout=600)
    module = sys.modules[type(kaggle_agent).__module__]
    policy = kaggle_agent.policy_for(module.read_kaggle_rules(configuration))
    report.append({
        "first": first, "second": agent(observation, configuration), "loaded": loaded,
        "cold_moves": kaggle_agent.cold_moves, "fallbacks": kaggle_agent.fallbacks,
        "module": module.__name__, "file": module.__file__, "policy": type(policy).__name__,
        "simulations": getattr(policy, "simulations", None),
    })
print(json.dumps(report))
"""


def run_submissions(*paths: Path, size: tuple[int, int, int] = (6, 7, 4)) -> list[dict[str, Any]]:
    """Load the submissions at ``paths`` one after the other in one fresh Python with numpy alone, in a fresh
    temporary folder, each playing an empty board's first move, loading (``warm_up``) and playing it again:
    what each reports (see ``SUBMISSIONS_RUN``)."""
    with tempfile.TemporaryDirectory() as temp:
        done = subprocess.run(
            [sys.executable, "-c", SUBMISSIONS_RUN, json.dumps(size), *map(str, paths)],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=paths[0].parent,
            env={**os.environ, "TMPDIR": temp},
        )
    assert done.returncode == 0, done.stderr[-3000:]
    result: list[dict[str, Any]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_submission_plays_with_numpy_alone(tmp_path: Path) -> None:
    path = write_kaggle_submission("mcts", tmp_path / "main.py", move_seconds=0.1)
    (result,) = run_submissions(path)
    assert result["first"] in range(7) and result["second"] in range(7)
    assert "connect4_kaggle_" in result["file"] and result["module"].startswith("connect4_agents_")
    assert result["policy"] == "MCTSAgent" and result["loaded"] and result["fallbacks"] == 0
    tarball = write_kaggle_submission("mcts", tmp_path / "submission.tar.gz", move_seconds=0.1)
    with tarfile.open(tarball) as archive:
        assert archive.getnames() == ["main.py"]
        assert archive.extractfile("main.py").read() == path.read_bytes()  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="main.py or a .tar.gz"):
        write_kaggle_submission("mcts", tmp_path / "main.txt")


def test_submissions_run_side_by_side_in_one_process_each_with_its_own_code(tmp_path: Path) -> None:
    """Two submissions in one process imported the second's ``connect4_agents`` from the first's folder (it
    was in ``sys.modules`` already): an AlphaZero file after an MCTS one found no model. Each file's packages
    now have names of its own, from a hash of what it carries."""
    table = tmp_path / "table.npz"
    from connect4_agents.qlearning import QLearningAgent

    QLearningAgent(Board().rules, seed=0).save(table)  # an untrained 6x7 table: it plays, weakly
    mcts = write_kaggle_submission("mcts", tmp_path / "mcts.py", move_seconds=0.1, seed=0)
    solver = write_kaggle_submission("solver", tmp_path / "solver.py", move_seconds=0.1)
    qlearning = write_kaggle_submission(f"qlearning:{table}", tmp_path / "qlearning.py", move_seconds=0.1)
    first, second, third, again = run_submissions(mcts, qlearning, solver, mcts)
    assert [r["policy"] for r in (first, second, third, again)] == [
        "MCTSAgent", "QLearningAgent", "SolverAgent", "MCTSAgent"
    ]  # fmt: skip
    # the Q-table is a file of the qlearning submission's own, in a package of its own; mcts and solver carry
    # the same code, so they share their packages, as the same file loaded again does
    assert second["module"] != first["module"] == third["module"] == again["module"]
    assert all(r["loaded"] for r in (first, second, third, again))
    # each played its own policy (the solver, on the empty board it cannot solve in time, hands it to MCTS)
    assert first["fallbacks"] == second["fallbacks"] == again["fallbacks"] == 0, (first, second, again)


def test_renaming_reaches_code_and_module_paths_and_nothing_else() -> None:
    from connect4_agents.interop.kaggle_submission import renamed_source

    names = {"connect4_env": "connect4_env_t", "connect4_agents": "connect4_agents_t"}
    modules = frozenset(
        {"connect4_env", "connect4_env.core", "connect4_agents", "connect4_agents.sb3.features"}
    )
    source = """\"\"\"Reads connect4_env.core boards.\"\"\"
import connect4_env.core as core
from connect4_agents.sb3 import features  # a comment on connect4_agents
import connect4_env

GROUP = "connect4_env.policies"  # an entry-point group, not a module
FORMAT = 'connect4_env.qtable'  # a file format's name, not a module
FEATURES = {"cnn": "connect4_agents.sb3.features:BoardCNN"}
PACKAGE = ('connect4_agents')
MESSAGE = f"connect4_env.{GROUP} is not a connect4_agents module"
board = connect4_env.core.Board
"""
    renamed = renamed_source(source.encode(), names, modules).decode()
    assert renamed == (
        source.replace("import connect4_env.core", "import connect4_env_t.core")
        .replace("from connect4_agents.sb3", "from connect4_agents_t.sb3")
        .replace("import connect4_env\n", "import connect4_env_t\n")
        .replace('"connect4_agents.sb3.features:BoardCNN"', "'connect4_agents_t.sb3.features:BoardCNN'")
        .replace("('connect4_agents')", "('connect4_agents_t')")
        .replace("= connect4_env.core.Board", "= connect4_env_t.core.Board")
    )
    fstring = b'version = f"{connect4_env.__version__}"\n'
    if sys.version_info >= (3, 12):  # the tokenizer reaches inside f-strings
        assert renamed_source(fstring, names, modules) == fstring.replace(b"env.", b"env_t.")
    else:  # it cannot: a name there would be left behind, so it is refused
        with pytest.raises(ValueError, match="f-string"):
            renamed_source(fstring, names, modules)


def test_a_submissions_code_names_its_own_packages_only(tmp_path: Path) -> None:
    """Every module a submission carries, read token by token: no name, and no string naming one of our
    modules, is left with the installed packages' names (an import of them would load another version)."""
    path = write_kaggle_submission("mcts", tmp_path / "main.py")
    payload = re.search(r'PAYLOAD = """(.*?)"""', path.read_text(), re.DOTALL)
    assert payload is not None
    with zipfile.ZipFile(io.BytesIO(base64.b64decode(payload.group(1)))) as archive:
        tops = {name.split("/")[0] for name in archive.namelist()}
        (env,) = [top for top in tops if top.startswith("connect4_env_")]
        assert tops == {env, env.replace("connect4_env_", "connect4_agents_")}
        old = {"connect4_env", "connect4_agents"}
        for name in archive.namelist():
            tokens = tokenize.generate_tokens(io.StringIO(archive.read(name).decode()).readline)
            for token in tokens:
                assert not (token.type == tokenize.NAME and token.string in old), (name, token)
                if token.type == tokenize.STRING and token.string[:1] in "'\"":
                    value = ast.literal_eval(token.string)
                    assert not re.fullmatch(r"connect4_(env|agents)(\.\w+)*(:\w+)?", value) or value in (
                        "connect4_env.policies",  # the entry-point group
                        "connect4_env.qtable",  # the Q-table file format
                        "connect4_env.ntuple",  # the n-tuple network file format
                    ), (name, value)


@pytest.mark.parametrize(
    ("tail", "size", "simulations"),
    [("{model}", (5, 6, 3), 200), ("{model}:7", (5, 6, 3), 7), ("7", (6, 7, 4), 7)],  # "7": the shipped 6x7
)
def test_an_alphazero_submission_plays_the_model_and_the_simulations_its_spec_names(
    tail: str, size: tuple[int, int, int], simulations: int, tmp_path: Path
) -> None:
    importorskip("torch")
    from connect4_agents.alphazero import AlphaZeroAgent
    from connect4_agents.alphazero.network import PolicyValueNet
    from connect4_env.rules import Rules

    model = AlphaZeroAgent(PolicyValueNet(8, 1), rules=Rules(5, 6, 3)).save(tmp_path / "small 5x6.zip")
    # a second a move: the simulations the spec names end each search long before the move's time, which no move
    # of theirs then overruns (an overrun would halve them) however busy the machine; a longer move would lengthen
    # the cold first move (up to half of it plain-Python MCTS while torch loads)
    path = write_kaggle_submission(
        "alphazero:" + tail.format(model=model), tmp_path / "main.py", move_seconds=1.0
    )
    (result,) = run_submissions(path, size=size)
    # the model named plays its board (the shipped 6x7 one could not play 5x6: MCTS would move, a fallback)
    assert result["policy"] == "AlphaZeroAgent" and result["loaded"], result
    assert result["second"] in range(size[1]) and result["fallbacks"] == 0, result
    assert result["simulations"] == simulations, result


def test_the_command_writes_a_submission_or_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert command.main(["mcts:0.5s", "-o", str(tmp_path / "main.py")]) == 0
    assert "main.py" in capsys.readouterr().out and (tmp_path / "main.py").stat().st_size > 10_000
    assert "OPTIONS = {}" in (tmp_path / "main.py").read_text()
    assert command.main(["mcts:0.5s", "--no-endgame", "-o", str(tmp_path / "plain.py")]) == 0
    assert "OPTIONS = {'endgame': False}" in (tmp_path / "plain.py").read_text()
    assert command.main(["nope", "-o", str(tmp_path / "other.py")]) == 2
    assert "unknown agent 'nope'" in capsys.readouterr().err and not (tmp_path / "other.py").exists()


# --- against kaggle-environments (make test-kaggle) ------------------------------------------------------------
KAGGLE_PYTHON = os.environ.get("KAGGLE_PYTHON")
N_GAMES = int(os.environ.get("KAGGLE_GAMES", "10"))
needs_kaggle = pytest.mark.skipif(
    not KAGGLE_PYTHON, reason="plays in .venv-kaggle with kaggle-environments: make test-kaggle"
)


def run_kaggle(*commands: list[str], cwd: Path) -> list[dict[str, Any]]:
    """Run tests/interop/kaggle_games.py with each argument list, all at once (one a core), each on a machine
    that never ran a submission: a fresh ``TMPDIR`` (where a submission unpacks, and numba caches its
    compilations beside the sources) and no ``NUMBA_CACHE_DIR``. Returns what each printed (JSON)."""
    environment = {key: value for key, value in os.environ.items() if key != "NUMBA_CACHE_DIR"}
    with contextlib.ExitStack() as stack:
        runs = []
        for command in commands:
            temp = stack.enter_context(tempfile.TemporaryDirectory(prefix="kaggle-cold-"))
            runs.append(
                subprocess.Popen(
                    [os.path.abspath(str(KAGGLE_PYTHON)), str(GAMES), *command],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    cwd=cwd,
                    env={**environment, "TMPDIR": temp},
                )
            )
        results = []
        try:
            for run in runs:
                out, err = run.communicate(timeout=1800)
                assert run.returncode == 0, err[-3000:]
                results.append(json.loads(out.strip().splitlines()[-1]))
        finally:
            for run in runs:  # a failed or timed-out run: stop the others
                if run.poll() is None:
                    run.kill()
                    run.wait()
    return results


def play_negamax(path: Path, games: int, configuration: dict[str, int]) -> dict[str, Any]:
    """``games`` games against negamax, half with the submission first and half second, the halves in two
    processes at once; each process first plays a game from a cold start, then loads the submission
    (``warm_up``) and plays its half. The results added up, and each process's cold game and loading."""
    commands = [
        ["negamax", str(path), str(count), json.dumps(configuration), side]
        for side, count in (("first", (games + 1) // 2), ("second", games // 2))
        if count
    ]
    results = run_kaggle(*commands, cwd=path.parent)
    total: dict[str, Any] = {
        key: sum(r[key] for r in results) for key in ("games", "wins", "draws", "losses")
    }
    total["errors"] = [error for r in results for error in r["errors"]]
    total["overage_used"] = max(r["overage_used"] for r in results)
    total["seconds"] = max(r["seconds"] for r in results)
    for key in ("cold", "warm_up", "compiles"):
        total[key] = [r[key] for r in results]
    return total


def assert_cold_start_waited_for_nothing(result: dict[str, Any], policy: str) -> None:
    """What every process of ``play_negamax`` shows of its cold start, with Kaggle's own ``actTimeout`` (2 s)
    and overage bank (60 s): its first game ended in no error, invalid column or timeout; its first move said
    it played while the compiled kernels loaded; numba compiled, on the loading thread alone (never on the
    thread that plays the moves, where a move would have waited for it); the submission then loaded ``policy``."""
    for cold, loaded, compiles in zip(result["cold"], result["warm_up"], result["compiles"]):
        assert cold["status"] == "DONE", cold
        # a policy built from its spec first (AlphaZero's torch and model), then the kernels
        assert cold["first_log"].startswith("connect4 kaggle agent: cold start: loading "), cold
        assert "the compiled kernels" in cold["first_log"], cold
        assert not any("Traceback" in log for log in cold["logs"]), cold
        assert set(compiles) == {KERNEL_THREAD} and compiles[KERNEL_THREAD] > 0, compiles
        assert loaded["loaded"] and loaded["policy"] == policy, loaded


# seconds a move (None: Kaggle's actTimeout less the margin). MCTS and AlphaZero search a fixed count a move, 10,000
# playouts (about 30 ms compiled) and 200 simulations (AlphaZero's default), so that their games do not depend on
# the machine's speed or load: the move's time only bounds a search that a machine many times slower would not end
# by its count (a bare "mcts" would search the whole move, a bare "alphazero" size its simulations to it). The
# endgame solver's node budget is a count too (a share of the move's seconds). The solver's own early moves, which
# it cannot prove without the opening book, are still the clock's: the agent's fallback MCTS searches what is left
# of the move after the solver's node budget, and half a second leaves it about ten times the 10,000 playouts that
# win here. Before the endgame solver, alphazero won 94 to 98 of 100 (draws, and losses at 1.0 s on a machine at
# half speed): it let late wins slip.
SUBMISSIONS = {"mcts:10000": 0.5, "solver": 0.5, "alphazero:200": None}
POLICIES = {"mcts:10000": "MCTSAgent", "solver": "SolverAgent", "alphazero:200": "AlphaZeroAgent"}


@pytest.mark.kaggle
@needs_kaggle
@pytest.mark.parametrize("spec", list(SUBMISSIONS))
def test_the_submission_starts_cold_then_beats_kaggles_negamax_on_both_sides(
    spec: str, tmp_path: Path
) -> None:
    path = write_kaggle_submission(spec, tmp_path / "main.py", move_seconds=SUBMISSIONS[spec], seed=0)
    result = play_negamax(path, N_GAMES, {})
    print(spec, {key: value for key, value in result.items() if key != "cold"})
    assert_cold_start_waited_for_nothing(result, POLICIES[spec])
    # then, loaded: at most one game not won (a draw or a loss), with no error
    assert result["errors"] == [] and result["wins"] >= N_GAMES - 1, result


@pytest.mark.kaggle
@needs_kaggle
@pytest.mark.parametrize("spec", ["mcts", "alphazero"])  # AlphaZero's 6x7 model: MCTS plays 5x6 instead
def test_a_5x6_three_in_a_row_game_completes_on_kaggle(spec: str, tmp_path: Path) -> None:
    path = write_kaggle_submission(spec, tmp_path / "main.py", move_seconds=0.2, seed=0)
    (result,) = run_kaggle(
        ["negamax", str(path), "2", json.dumps({"rows": 5, "columns": 6, "inarow": 3}), "both"], cwd=tmp_path
    )
    assert result["errors"] == [] and result["wins"] + result["draws"] + result["losses"] == 2, result
    assert result["cold"]["status"] == "DONE" and result["warm_up"]["loaded"], result
    assert result["warm_up"]["policy"] == ("MCTSAgent" if spec == "mcts" else "NoneType"), result


# The n-tuple network without search, at Kaggle's own actTimeout: the share of N_GAMES (half on each side) it must win.
# The shipped model's 1.5 M-game predecessor won 38 of 40 against negamax (20 as first player; 18, 1 draw and 1 loss
# as second) and every game against random.
NTUPLE_WINS = {"random": 0.9, "negamax": 0.8}


@pytest.mark.kaggle
@needs_kaggle
@pytest.mark.parametrize("opponent", list(NTUPLE_WINS))
def test_the_ntuple_submission_plays_every_move_from_a_cold_start_and_beats_kaggles_agents(
    opponent: str, tmp_path: Path
) -> None:
    """The n-tuple file carries numpy code and the tables, no package of ours: in a cold process (a fresh
    ``TMPDIR``, no numba cache) the network plays from the first move, nothing compiles and nothing is logged,
    and Kaggle's ``env.run`` ends every game with no error or timeout."""
    path = write_kaggle_submission("ntuple", tmp_path / "main.py", seed=0)
    commands = [
        [opponent, str(path), str(count), "{}", side]
        for side, count in (("first", (N_GAMES + 1) // 2), ("second", N_GAMES // 2))
        if count
    ]
    results = run_kaggle(*commands, cwd=tmp_path)
    print(opponent, [(r["wins"], r["draws"], r["losses"], r["cold"]["durations"]) for r in results])
    for result in results:
        assert result["cold"]["status"] == "DONE" and result["cold"]["logs"] == [], result["cold"]
        assert result["compiles"] == {} and result["warm_up"]["policy"] == "NTupleKaggleAgent", result
        assert result["errors"] == [], result["errors"]
    wins = sum(result["wins"] for result in results)
    assert wins >= NTUPLE_WINS[opponent] * N_GAMES, results


@pytest.mark.kaggle
@needs_kaggle
def test_two_submissions_play_each_other_in_one_process_in_either_order(tmp_path: Path) -> None:
    """``env.run(["mcts.py", "alphazero.py"])``: the second file imported the first one's packages, and with
    them no AlphaZero model (a loss). Each file now imports its own. Both orders, from a cold start."""
    mcts = write_kaggle_submission("mcts", tmp_path / "mcts.py", move_seconds=0.2, seed=0)
    alphazero = write_kaggle_submission("alphazero", tmp_path / "alphazero.py", move_seconds=0.2, seed=0)
    policies = {str(mcts): "MCTSAgent", str(alphazero): "AlphaZeroAgent"}
    for order in run_kaggle(
        ["duel", str(mcts), str(alphazero)], ["duel", str(alphazero), str(mcts)], cwd=tmp_path
    ):
        for game in order["games"]:
            for side in game["sides"]:
                assert side["status"] == "DONE", game
                assert not any("Error" in log or "Traceback" in log for log in side["logs"]), game
        assert {path: loaded["policy"] for path, loaded in order["policies"].items()} == policies, order
        modules = {loaded["module"] for loaded in order["policies"].values()}
        assert len(modules) == 2 and all(loaded["loaded"] for loaded in order["policies"].values()), order
        assert set(order["compiles"]) == {KERNEL_THREAD}, order["compiles"]


def test_no_endgame_solver_past_the_compiled_solvers_board(monkeypatch: pytest.MonkeyPatch) -> None:
    # 10x10: 110 bits, past the compiled solver's 63; a win in one is there, and the policy still moves
    rows, columns = 10, 10
    board = [0] * (rows * columns)
    for column in (2, 3, 4):
        board[(rows - 1) * columns + column] = 1
    for column in (2, 3, 4):
        board[(rows - 2) * columns + column] = 2
    configuration = {"rows": rows, "columns": columns, "inarow": 4, "actTimeout": 2, "timeout": 2}
    no_other_loading(monkeypatch)
    agent = make_kaggle_agent(Stubborn(), move_seconds=0.5)  # past 63 bits: nothing loads in the background
    assert agent({"board": board, "mark": 1}, configuration) == 0  # the stubborn policy's column
    assert agent.endgame_moves == 0 and agent._endgame.solvers == {}  # no plain-Python solver built or run
    assert agent.cold_moves == 0


def test_a_huge_or_endless_act_timeout_is_bounded_or_named() -> None:
    """actTimeout 1e30 searched past every node counter (OverflowError) and 10**400 could not become a float:
    a move now searches at most MAX_MOVE_SECONDS, and a number past float's range is a ValueError."""
    from connect4_agents.interop.kaggle import MAX_MOVE_SECONDS

    agent = make_kaggle_agent("mcts:50", seed=0)
    assert agent.budget({**CONFIG, "actTimeout": 1e30}) == MAX_MOVE_SECONDS == 3600.0
    assert agent.budget({**CONFIG, "actTimeout": 2}) == pytest.approx(1.6)
    with pytest.raises(ValueError, match="actTimeout must be a finite number >= 0.0, got an integer of"):
        agent.budget({**CONFIG, "actTimeout": 10**400})
    with pytest.raises(ValueError, match="actTimeout"):
        agent.budget({**CONFIG, "actTimeout": float("nan")})


def test_a_submission_refuses_human_and_text_and_names_what_it_can_play(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``human`` waits for a terminal and ``text:`` for a language model: on Kaggle every move would fall back."""
    for spec in ("human", "text", "text:json:dumps"):
        assert command.main([spec, "-o", str(tmp_path / "main.py")]) == 2
        error = capsys.readouterr().err.strip()
        assert f"a Kaggle submission cannot play {spec!r}" in error and len(error.splitlines()) == 1
        assert (
            "allowed: alphazero" in error and "random" in error and "human" not in error.split("allowed")[1]
        )
        assert not (tmp_path / "main.py").exists()
    with pytest.raises(TypeError, match="agent spec such as 'mcts'"):
        write_kaggle_submission(Stubborn(), tmp_path / "main.py")  # type: ignore[arg-type]
    # weak, but it plays (a tenth of a second a move: the cold move MCTS plays meanwhile would take half the
    # minute this run allows)
    path = write_kaggle_submission("random", tmp_path / "main.py", seed=0, move_seconds=0.1)
    (result,) = run_submissions(path)
    assert result["policy"] == "RandomAgent" and result["second"] in range(7)


def test_the_endgame_solver_is_not_given_a_share_it_cannot_use_on_an_early_board() -> None:
    """Without the book an early 6x7 position is never proved in a fifth of a move: the attempt spent 0.27 s
    of Kaggle's 1.6 s on each early move. Above ENDGAME_MAX_EMPTY empty cells it now gets 1,000 nodes (the
    shallow tactics it can still prove); from there on, its share."""
    from connect4_agents.interop.kaggle_endgame import ENDGAME_MAX_EMPTY, endgame_node_budget, solver_compiled

    agent = make_kaggle_agent(Stubborn(), move_seconds=1.6, background=False)
    agent({"board": kaggle_board(EARLY), "mark": 2}, CONFIG)  # warm: the kernels load
    solver = next(iter(agent._endgame.solvers.values()))
    assert agent({"board": [0] * 42, "mark": 1}, CONFIG) == 0 and agent.endgame_moves == 0
    assert solver.node_budget == 1000  # it was a fifth of the move: 0.27 s or more spent in vain
    open_two = """
. . . . . . .
. . . . . . .
. . . . . . .
. . . . . . .
. . O O . . .
. . X X . . .
"""  # 38 empty cells; X to move wins by making an open three (column 1 or 4): 1,000 nodes prove it
    assert agent({"board": kaggle_board(open_two), "mark": 1}, CONFIG) in (1, 4) and agent.endgame_moves == 1
    six_stones = """
. . . . . . .
. . . . . . .
. . . . . . .
. . . O . . .
. . . X O . .
. . X O X . .
"""
    assert ENDGAME_MAX_EMPTY == 42 - 6
    agent({"board": kaggle_board(six_stones), "mark": 1}, CONFIG)
    assert solver.node_budget == endgame_node_budget(1.6, solver_compiled(solver, solver.rules)) > 1000


def test_the_plain_python_endgame_solver_gets_the_least_nodes_while_python_is_shared() -> None:
    """Beside a loading thread a plain-Python solver's nodes cost two to seven times their usual time (its
    share of 1.6 s took up to 1.07 s): while anything loads it gets 1,000 nodes, as on an early board; a
    compiled search (which keeps Python to itself) keeps its share."""
    from connect4_agents.interop.kaggle_endgame import (
        MIN_NODES,
        EndgameSolver,
        endgame_node_budget,
        solver_compiled,
    )

    board = Board.from_ascii(
        """
. . . . . . .
. . . . . . .
. . . . . . .
. . . O . . .
. . . X O . .
. . X O X . .
"""
    )  # 36 empty cells: late enough for the endgame's share
    endgame = EndgameSolver()
    endgame.column(board, 1.6, False)
    solver = endgame.solvers[board.rules]
    assert solver.node_budget == endgame_node_budget(1.6, False) > MIN_NODES
    endgame.column(board, 1.6, False, shared=True)
    assert solver.node_budget == MIN_NODES
    endgame.column(board, 1.6, None, shared=True)  # compiled where it can
    compiled = solver_compiled(solver, board.rules)
    assert solver.node_budget == (endgame_node_budget(1.6, True) if compiled else MIN_NODES)


def test_a_policy_left_no_time_still_searches_the_least_time() -> None:
    """A slow first move (kernels compiled) could leave a negative time: MCTS refused it and a fallback moved."""
    agent = make_kaggle_agent("mcts", seed=0, background=False)
    board = Board.from_ascii(EARLY)
    policy = agent.policy_for(board.rules)
    from connect4_env.encoding import action_mask, observation_planes

    column = agent._ask(policy, board, observation_planes(board), action_mask(board), -1.5)
    assert column in board.legal_moves() and policy.time_limit == pytest.approx(0.05)


# --- a cold start: what loads off the move path ---------------------------------------------------------------
def gated_loader(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, Any]:
    """Replace the compiled kernels' background load with one that ends when the returned event is set (the
    first move asking starts it): the moves see what they see while numba compiles. Returns the event and the
    loader."""
    from connect4_agents.interop import kaggle
    from connect4_agents.interop.kaggle_loading import Background

    release = threading.Event()
    loader = Background("test-kernels", release.wait)
    started: list[bool] = []

    def kernel_loader(rules: Rules, **options: Any) -> tuple[Background, bool]:
        started.append(True)
        return loader, len(started) == 1

    monkeypatch.setattr(kaggle, "kernel_loader", kernel_loader)
    no_other_loading(monkeypatch)
    return release, loader


def no_other_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    """No other agent loads anything in this process, as far as the agents see: other tests' agents may have
    left the real kernels loading in the background (for seconds where numba has never compiled them)."""
    from connect4_agents.interop import kaggle

    monkeypatch.setattr(kaggle, "loading_anywhere", lambda: False)


def test_until_the_kernels_load_plain_python_mcts_plays_for_half_the_move(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    release, loader = gated_loader(monkeypatch)
    agent = make_kaggle_agent("mcts:300", seed=0, move_seconds=0.2)
    observation, rules = {"board": kaggle_board(EARLY), "mark": 2}, Board.from_ascii(EARLY).rules
    assert agent(observation, CONFIG) in range(7) and agent.cold_moves == 1 and agent.fallbacks == 0
    fallback, policy = agent._fallbacks[rules], agent.policy_for(rules)
    # plain Python for the searches (the compiled kernels are loading), half of the 0.2 s for the move, and the
    # policy itself unused
    assert fallback.compiled is False and fallback._tree.build.compiled is False
    assert 0 < fallback.time_limit <= 0.1 and fallback.last_search.playouts > 0
    assert agent._endgame.solvers[rules].compiled is False and policy.last_search is None
    assert "cold start: loading the compiled kernels in the background; plain-Python MCTS plays" in (
        capsys.readouterr().err
    )
    release.set()
    assert loader.wait(60)
    # the kernels are loaded: the policy plays, compiled where it can, and its 300 playouts end the search, not
    # the clock (a minute a move; in plain Python, without numba, they take a tenth of a second)
    agent.move_seconds = None
    agent(observation, {**CONFIG, "actTimeout": 60})
    assert agent.cold_moves == 1 and policy.last_search is not None and policy.last_search.playouts == 300
    assert policy.compiled is None and "warm after 1 cold moves" in capsys.readouterr().err


class LoadsWhileWaited(threading.Event):
    """MCTS's kernels of a loader that finish while a move waits for them: ``wait`` records its timeout and
    sets the event, as a compilation ending within the wait would."""

    def __init__(self) -> None:
        super().__init__()
        self.timeouts: list[float | None] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.timeouts.append(timeout)
        self.set()
        return True


def test_a_cold_move_first_waits_for_mctss_kernels_and_plays_warm_when_they_load_meanwhile(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 49: a cold move that searched in plain Python for half its time took half of Python from the
    compilation, and a fresh process stayed cold for three games. A cold move now waits first (holding no
    lock) for at most 30 % of its time; MCTS's kernels, loaded first, let the policy play compiled while the
    solver's still load (the endgame solver then searches in plain Python), with half the move."""
    from connect4_agents.interop import kaggle
    from connect4_agents.interop.kaggle_loading import Background

    solver_stage = threading.Event()
    loader = Background("test-kernels", solver_stage.wait)
    loader.mcts_ready = LoadsWhileWaited()  # type: ignore[attr-defined]
    calls: list[bool] = []

    def kernel_loader(rules: Rules, **options: Any) -> tuple[Background, bool]:
        calls.append(True)
        return loader, len(calls) == 1

    monkeypatch.setattr(kaggle, "kernel_loader", kernel_loader)
    no_other_loading(monkeypatch)
    try:
        agent = make_kaggle_agent("mcts:300", seed=0, move_seconds=0.2)
        observation, rules = {"board": kaggle_board(EARLY), "mark": 2}, Board.from_ascii(EARLY).rules
        assert agent(observation, CONFIG) in range(7)
        (timeout,) = loader.mcts_ready.timeouts  # type: ignore[attr-defined]
        assert timeout is not None and 0 <= timeout <= 0.3 * 0.2
        policy = agent.policy_for(rules)
        # the policy searched (how many playouts fit in its 0.1 s depends on the machine: not asserted)
        assert agent.cold_moves == 0 and agent.fallbacks == 0 and policy.last_search.playouts >= 1
        assert policy.compiled is None and policy.time_limit <= 0.1  # compiled MCTS, half the move
        assert agent._endgame.solvers[rules].compiled is False  # the solver's kernels are still loading
        assert "cold start" not in capsys.readouterr().err
    finally:  # a failed assertion must not leave the loading thread waiting (it would mark the process loading)
        solver_stage.set()
    assert loader.wait(60)
    # the move's time by counted reads of the clock: the solver's kernels, compiled on their first call where no
    # earlier test in this process called them (most of a second), take none of it
    agent.clock = CountingClock(0.001)
    agent(observation, CONFIG)
    assert agent._endgame.solvers[rules].compiled is None and policy.time_limit > 0.1  # the whole move


def test_a_policy_built_in_the_background_is_replaced_by_mcts_until_it_is_built(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A submission builds its policy at the first move, in the background: AlphaZero imports torch there."""
    from connect4_agents.interop import kaggle

    release, build = threading.Event(), kaggle.build_policy
    monkeypatch.setattr(kaggle, "build_policy", lambda *args: release.wait() and build(*args))
    monkeypatch.setattr(
        kaggle, "kernel_loader", lambda rules, **options: (None, False)
    )  # no compiled kernels
    monkeypatch.setattr(kaggle, "compiled_kernels_possible", lambda rules: False)
    no_other_loading(monkeypatch)
    agent = kaggle.KaggleAgent("mcts:300", seed=0, move_seconds=0.2)  # as a submission builds it
    observation, rules = {"board": kaggle_board(EARLY), "mark": 2}, Board.from_ascii(EARLY).rules
    assert agent(observation, CONFIG) in range(7)
    assert agent.cold_moves == 1 and agent.fallbacks == 0 and rules not in agent._policies
    assert (
        "cold start: loading the policy 'mcts:300' in the background; MCTS plays" in capsys.readouterr().err
    )
    release.set()
    policy = agent.policy_for(rules)  # waits for the build
    assert isinstance(policy, MCTSAgent) and policy.playouts == 300 and policy.last_search is None
    agent(observation, CONFIG)
    assert agent.cold_moves == 1 and policy.last_search is not None


class NetworkPolicy:
    """A policy that evaluates positions with a network, as AlphaZero does (``evaluator.evaluate``): it plays
    column 3 and counts its moves."""

    def __init__(self) -> None:
        self.evaluator = SimpleNamespace(evaluate=lambda boards: None)
        self.moves = 0

    def act(self, observation: Any, action_mask: Any) -> int:
        self.moves += 1
        return 3


def test_another_agents_loading_in_the_process_makes_an_unbounded_networks_move_cold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two submissions in one process: one's loading threads slow the other's network as much as its own
    (each network call gives up Python's lock to them), so a network whose search has no ``time_limit`` stays
    cold until they end; a search that holds Python's lock (MCTS) plays those moves, with half of each move.
    A network with a ``time_limit`` (AlphaZero's) plays them itself, bounded by half of each move."""
    from connect4_agents.interop import kaggle
    from connect4_agents.interop.kaggle_loading import KERNEL_THREAD, Background, loading_anywhere

    release = threading.Event()
    elsewhere = Background(KERNEL_THREAD, release.wait)  # as another submission's copy of the module makes it
    assert loading_anywhere()  # the thread is marked on itself, which every copy of the module reads
    monkeypatch.setattr(
        kaggle, "kernel_loader", lambda rules, **options: (None, False)
    )  # ours: nothing to load
    monkeypatch.setattr(kaggle, "loading_anywhere", lambda: not elsewhere.done)  # other tests' loads left out
    network = NetworkPolicy()
    agent = make_kaggle_agent(network, seed=0, move_seconds=0.2, endgame=False)
    searcher = make_kaggle_agent("mcts:300", seed=0, move_seconds=0.2)
    bounded = TimedNetworkPolicy()
    timed = make_kaggle_agent(bounded, seed=0, move_seconds=0.2, endgame=False)
    observation, rules = {"board": kaggle_board(EARLY), "mark": 2}, Board.from_ascii(EARLY).rules
    agent(observation, CONFIG)
    assert agent.cold_moves == 1 and network.moves == 0
    timed(observation, CONFIG)
    assert timed.cold_moves == 0 and bounded.moves == 1
    assert bounded.time_limit is not None and 0 < bounded.time_limit <= 0.1
    searcher(observation, CONFIG)
    policy = searcher.policy_for(rules)
    assert searcher.cold_moves == 0 and policy.last_search is not None and policy.time_limit <= 0.1
    release.set()
    assert elsewhere.wait(60) and not elsewhere.thread.connect4_kaggle_loading  # type: ignore[attr-defined]
    agent(observation, CONFIG)
    assert agent.cold_moves == 1 and network.moves == 1
    # the move's time by counted reads of the clock: the endgame solver's search before it (plain Python where the
    # compiled kernels are not loaded) takes none of it
    searcher.clock = CountingClock(0.001)
    searcher(observation, CONFIG)
    assert policy.time_limit > 0.1  # nothing loads: the whole move
    timed.clock = CountingClock(0.001)  # the move's time by counted reads of the clock
    timed(observation, CONFIG)
    assert bounded.moves == 2 and 0.1 < bounded.time_limit < 0.2


class TimedNetworkPolicy(NetworkPolicy):
    """A network policy whose search a ``time_limit`` bounds, as AlphaZero's is."""

    def __init__(self) -> None:
        super().__init__()
        self.time_limit: float | None = None


class StagedLoader:
    """A fake kernel load, started by the first call that asks to start it, that records the order asked for;
    its stages and its end are events the test sets."""

    def __init__(self) -> None:
        from connect4_agents.interop.kaggle_loading import Background

        self.end = threading.Event()
        self.load: Background | None = None
        self.solver_first: list[bool] = []

    def __call__(self, rules: Rules, *, start: bool = True, solver_first: bool = False) -> tuple[Any, bool]:
        from connect4_agents.interop.kaggle_loading import Background

        if self.load is None and start:
            self.solver_first.append(solver_first)
            self.load = Background("test-kernels", self.end.wait)
            self.load.mcts_ready = threading.Event()  # type: ignore[attr-defined]
            self.load.solver_ready = threading.Event()  # type: ignore[attr-defined]
            return self.load, True
        return self.load, False


def test_a_network_is_built_first_and_plays_while_the_kernels_load_the_solvers_stage_first(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 49: an AlphaZero submission stayed cold for two whole games: its network waited for torch, for
    every kernel and for every loading thread in the process, which all loaded at once. Now the policy loads
    first (nothing else takes Python from torch's import), the kernels only once it is built (the solver's
    first: the network needs MCTS's only to stand in for it), and the network plays meanwhile, its search
    bounded by half the move."""
    from connect4_agents.interop import kaggle

    built, network = threading.Event(), TimedNetworkPolicy()
    monkeypatch.setattr(kaggle, "build_policy", lambda *args: built.wait() and network)
    monkeypatch.setattr(kaggle, "cached_policy", lambda *args: None)
    loader = StagedLoader()
    monkeypatch.setattr(kaggle, "kernel_loader", loader)
    monkeypatch.setattr(kaggle, "compiled_kernels_possible", lambda rules: True)
    no_other_loading(monkeypatch)
    agent = kaggle.KaggleAgent("alphazero", seed=0, move_seconds=0.2, endgame=False)  # as a submission does
    agent.clock = CountingClock(0.001)  # the moves' times by counted reads of the clock
    observation, rules = {"board": kaggle_board(EARLY), "mark": 2}, Board.from_ascii(EARLY).rules
    assert agent(observation, CONFIG) in range(7)
    assert agent.cold_moves == 1 and network.moves == 0 and loader.load is None  # no kernel loads yet
    # the policy's build started as the move ended: torch's import holds Python's lock between moves
    assert rules in agent._builds
    assert agent._fallbacks[rules].compiled is False
    assert (
        "cold start: loading the policy 'alphazero', then the compiled kernels in the background; "
        "plain-Python MCTS plays until then" in capsys.readouterr().err
    )
    built.set()
    assert agent._builds[rules].wait(60)
    assert agent(observation, CONFIG) == 3  # the network's column
    assert agent.cold_moves == 1 and network.moves == 1 and loader.solver_first == [True]
    assert network.time_limit is not None and 0.09 < network.time_limit <= 0.1  # half the move
    assert (
        "warm after 1 cold moves; the network plays, the compiled kernels loading" in capsys.readouterr().err
    )
    assert agent._kernels(rules, True, True) == (False, False, True, True)  # both stages still loading
    assert loader.load is not None
    loader.load.solver_ready.set()  # type: ignore[attr-defined]
    assert agent._kernels(rules, True, True) == (False, None, True, True)  # the endgame solver compiled
    agent(observation, CONFIG)
    assert network.moves == 2 and network.time_limit <= 0.1
    loader.end.set()
    assert loader.load.wait(60)
    agent(observation, CONFIG)
    assert network.moves == 3 and 0.1 < network.time_limit < 0.2 and agent.cold_moves == 1


def test_a_network_built_for_one_game_plays_the_next_games_first_move(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """kaggle-environments runs a submission's file again for every game, a new agent each time: the network
    built for the first game (torch's model read, its first evaluation) is kept for the process, and the next
    game's agent plays it from its first move. Other policies (MCTS keeps its tree between moves) are not kept."""
    from connect4_agents.interop import kaggle, kaggle_loading

    built: list[TimedNetworkPolicy] = []

    def policy_from_spec(spec: str, **options: Any) -> TimedNetworkPolicy:
        built.append(TimedNetworkPolicy())
        return built[-1]

    monkeypatch.setattr(kaggle_loading, "_POLICIES", {})
    monkeypatch.setattr(kaggle_loading, "policy_from_spec", policy_from_spec)
    monkeypatch.setattr(kaggle, "kernel_loader", lambda rules, **options: (None, False))
    monkeypatch.setattr(kaggle, "compiled_kernels_possible", lambda rules: False)
    no_other_loading(monkeypatch)
    observation, rules = {"board": kaggle_board(EARLY), "mark": 2}, Board.from_ascii(EARLY).rules
    first = kaggle.KaggleAgent("alphazero", seed=0, move_seconds=0.2, endgame=False)
    first(observation, CONFIG)
    first.warm_up(timeout=60)
    assert len(built) == 1 and first.policy_for(rules) is built[0]
    second = kaggle.KaggleAgent("alphazero", seed=0, move_seconds=0.2, endgame=False)  # the next game's
    second(observation, CONFIG)
    assert len(built) == 1 and second.cold_moves == 0 and built[0].moves >= 1 and rules not in second._builds
    other_seed = kaggle.KaggleAgent("alphazero", seed=1, move_seconds=0.2, endgame=False)
    assert other_seed.warm_up(timeout=60) and len(built) == 2  # another policy: built anew
    monkeypatch.undo()
    assert kaggle_loading.build_policy("mcts:30", 0, rules) is not kaggle_loading.build_policy(
        "mcts:30", 0, rules
    )


def test_the_kernels_load_the_solvers_stage_first_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    from connect4_agents.interop import kaggle_loading

    order: list[str] = []
    monkeypatch.setattr(kaggle_loading, "load_mcts_kernels", lambda rules: order.append("mcts"))
    monkeypatch.setattr(kaggle_loading, "load_solver_kernels", lambda rules: order.append("solver"))
    for solver_first, expected in ((True, ["solver", "mcts"]), (False, ["mcts", "solver"])):
        order.clear()
        load = kaggle_loading.KernelLoad(Rules(), solver_first=solver_first)
        assert load.wait(60) and load.error is None and order == expected
        assert load.mcts_ready.is_set() and load.solver_ready.is_set()


def test_python_switches_threads_often_while_anything_loads_and_as_before_after() -> None:
    """A loading thread gives Python's lock up at every file it reads, and a busy move's thread then kept it
    for 5 ms (Python's switch interval): torch's import took three times as long. While anything loads, the
    interval is LOADING_SWITCH_INTERVAL; the last loading thread to end sets it back."""
    from connect4_agents.interop.kaggle_loading import LOADING_SWITCH_INTERVAL, Background

    for thread in threading.enumerate():  # other tests' loads (the kernels, compiling for minutes when cold)
        if getattr(thread, "connect4_kaggle_loading", False):
            thread.join(900)
    before = sys.getswitchinterval()
    assert before != pytest.approx(LOADING_SWITCH_INTERVAL)
    releases = [threading.Event(), threading.Event()]
    first, second = (Background(f"test-load-{index}", release.wait) for index, release in enumerate(releases))
    assert sys.getswitchinterval() == pytest.approx(LOADING_SWITCH_INTERVAL)
    releases[0].set()
    assert first.wait(60) and sys.getswitchinterval() == pytest.approx(
        LOADING_SWITCH_INTERVAL
    )  # the second loads
    releases[1].set()
    assert second.wait(60) and sys.getswitchinterval() == before


def test_a_submissions_loading_counts_toward_its_first_move() -> None:
    """kaggle-environments runs a submission's file inside its first call, and times the whole call."""
    agent = make_kaggle_agent("mcts", seed=0, move_seconds=1.0, endgame=False, background=False)
    agent.clock = CountingClock(0.001)
    agent.load_seconds = 5.0  # the file took 5 s to load: nothing is left of the first move
    observation, rules = {"board": kaggle_board(EARLY), "mark": 2}, Board.from_ascii(EARLY).rules
    agent(observation, CONFIG)
    policy = agent.policy_for(rules)
    assert policy.time_limit == pytest.approx(0.05) and agent.last_seconds > 5  # the least search
    agent(observation, CONFIG)  # a later move has its whole time (less the clock's read before it)
    assert policy.time_limit == pytest.approx(1.0 - 0.001) and agent.load_seconds == 0


def test_warm_up_loads_the_policy_and_the_kernels_before_the_first_move(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from connect4_agents.interop.kaggle import KaggleAgent

    release, _ = gated_loader(monkeypatch)
    agent = KaggleAgent("mcts:300", seed=0, move_seconds=0.2)
    assert agent.warm_up(timeout=0) is False  # the kernels are still loading
    release.set()
    assert agent.warm_up(timeout=None) is True and isinstance(agent.policy_for(Rules()), MCTSAgent)
    agent({"board": kaggle_board(EARLY), "mark": 2}, CONFIG)
    assert agent.cold_moves == 0 and agent.policy_for(Rules()).last_search is not None
    small = {"rows": 5, "columns": 6, "inarow": 3}
    assert agent.warm_up(small, timeout=None) is True and agent.policy_for(Rules(5, 6, 3)) is not None
    with pytest.raises(ValueError, match="timeout"):
        agent.warm_up(timeout=-1)
    with pytest.raises(TypeError, match="a Kaggle configuration must be a dict"):
        agent.warm_up("6x7")


def test_the_kernels_load_once_per_process_for_every_board_of_their_signature() -> None:
    from connect4_agents.interop.kaggle_loading import kernel_loader

    loader, _ = kernel_loader(Rules())
    if loader is None:
        pytest.skip("no numba: the searches run in plain Python, and nothing loads")
    assert loader.wait(600) and loader.error is None and loader.mcts_ready.is_set()
    for rules in (Rules(), Rules(5, 6, 3), Rules(8, 6, 5)):  # one signature: the same loader, finished
        assert kernel_loader(rules) == (loader, False)
    assert kernel_loader(Rules(10, 10, 4)) == (None, False)  # past 63 bits: plain Python only
