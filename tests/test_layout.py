"""The house rules of the layout: every import points down (no cycle, counting imports inside functions),
function-level imports only keep an optional heavy dependency out of start-up, the light imports stay light,
the env layer names no agent module, the env package's three layers (rules core, `envs/`, `integrations/`) import
only downwards and the first two no extra, a family imports the measurements only where it says why,
pyproject installs every subpackage, a long module says why it is one job, and the architecture page names
every module there is."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# the import package each source folder installs as
PACKAGES = {"connect4_env": ROOT / "connect4_env", "connect4_agents": ROOT / "agents"}
# optional dependencies that a function may import so that start-up does not pay for them (the extras)
HEAVY = {
    "torch",
    "numba",
    "pygame",
    "ray",
    "matplotlib",
    "stable_baselines3",
    "sb3_contrib",
    "scipy",
    "tqdm",
    "moviepy",
    "tensorboard",
    "bitbully_databases",
    "openenv",
    "fastapi",
    "uvicorn",
    "pyspiel",
    "open_spiel",
}
# a module may pass this many lines only with a reason in the first line of its docstring ("one job: ...")
LONG_MODULE = 450
# the layers of the env package: the rules core at its root, the APIs it is, other libraries' shapes
ENVS = "connect4_env.envs"
INTEGRATIONS = "connect4_env.integrations"
# The package root re-exports the public names of every layer (Connect4Env, connect4_v0, make_sb3_vec_env):
# it is the front door, not the rules core, so the layer rules below leave it out. connect4_v0 is the
# PettingZoo-style public module (`from connect4_env import connect4_v0`), a two-line re-export of envs/.
FACADES = {"connect4_env", "connect4_env.connect4_v0"}
# the extras the rules core and envs/ may import, each inside the one function that needs it, and why
CORE_EXTRAS = {
    (
        "connect4_env.compiled",
        "numba",
    ): "the compiled build of the kernels (the fast extra); plain Python without it",
    (
        "connect4_env.render",
        "pygame",
    ): "render_mode='human' opens a window (the play extra); the other modes need none",
}
# family modules (agents/<family>/) that import connect4_agents.evaluation, and why; an agent itself never does
FAMILIES = ("mcts", "solver", "qlearning", "ntuple", "sb3", "rllib", "alphazero")
FAMILY_MEASURES = {
    "connect4_agents.qlearning.agent": "a Q-table keeps its learning curve (evaluation.curves) in its file",
    "connect4_agents.qlearning.learning": "the training loop records the learning curve (evaluation.curves)",
    "connect4_agents.qlearning.train": "training saves the learning curve (evaluation.curves)",
    "connect4_agents.ntuple.train": "training scores the network on the test sets (evaluation.accuracy)",
    "connect4_agents.ntuple.run": "a run measures its curve against perfect play (evaluation.perfect_play)",
    "connect4_agents.sb3.callbacks": "training evaluates against reference opponents (evaluation.arena)",
    "connect4_agents.sb3.league": "a league plays rating matches and rates them on the ladder (evaluation.*)",
    "connect4_agents.rllib.train": "training plays and rates the ladder (evaluation.arena, evaluation.ratings)",
    "connect4_agents.alphazero.monitor": "the training monitor measures accuracy and Elo (evaluation.*)",
    "connect4_agents.alphazero.teacher": "the solver teacher runs on the measurements' worker pools and test sets",
    "connect4_agents.alphazero.selfplay": "self-play runs on the measurements' worker pools (evaluation.backends)",
    "connect4_agents.alphazero.train": "training runs on the worker pools and reads test-set positions",
}
# Where outside input enters (issue 51): env constructors and reset/step, agent constructors, config dataclasses,
# file readers and the network server turn it into typed values (Rules, MatchSettings, a bound policy, a
# dialect, a command config), and only these modules import a `check_*` validator; the code behind them takes
# those types unchecked. One line each says what enters there. A key ending in "." names a package's modules.
BOUNDARIES = {
    # the rules core: its public constructors and functions take what a user types
    "connect4_env.rules": "Rules(rows, columns, win_length): the board's size",
    "connect4_env.core": "Board's constructors (from_stones, from_ascii) and its moves, cells and undo",
    "connect4_env.encoding": "observation_planes and action_mask take a user's board and player",
    "connect4_env.render": "the renderers' boards, tiles and modes",
    "connect4_env.svg": "draw_svg takes plain data (owners, cells, tile)",
    "connect4_env.pool": "OpponentPool's members, weights, window and seeds",
    "connect4_env.pool_records": "a pool's records restored from a saved run's stats",
    # the envs: constructors and reset/step
    "connect4_env.envs.settings": "the match settings every env's constructor takes (MatchSettings)",
    "connect4_env.envs.gym_env": "reset(seed=...)",
    "connect4_env.envs.vector_env": "the vector env's constructor, reset and step (actions, seeds)",
    "connect4_env.envs.pettingzoo_env": "the AEC env's reset(seed=...)",
    "connect4_env.envs.parallel_env": "the Parallel env's constructor",
    "connect4_env.envs.text_env": "the text env's constructor and reset",
    "connect4_env.envs.two_seats": "the two-seat text game's constructor and reset",
    "connect4_env.envs.dialects.": "each dialect reads a model's answer and its own settings",
    # integrations: another library's calls and the network
    "connect4_env.integrations.sb3": "the SB3 VecEnv's constructor, seeds and set_attr",
    "connect4_env.integrations.openspiel.": "OpenSpiel games and states handed in",
    "connect4_env.integrations.openenv.": "the OpenEnv server: requests from the network, its settings",
    # agents: constructors, spec values, bind and act (observations and masks from any env)
    "connect4_agents.base": "bind(rules), spec values and masks, shared by every agent",
    "connect4_agents.random_agent": "act's mask",
    "connect4_agents.human": "the human player's constructor and mask",
    "connect4_agents.shield": "the shield's spec and board",
    "connect4_agents.mcts.agent": "MCTSAgent's constructor and spec",
    "connect4_agents.solver.agent": "SolverAgent's constructor and boards",
    "connect4_agents.qlearning.agent": "QLearningAgent's constructor and spec",
    "connect4_agents.ntuple.agent": "NTupleAgent's spec and masks",
    "connect4_agents.ntuple.network": "the network's size (tuples and their length: memory)",
    "connect4_agents.alphazero.agent": "AlphaZeroAgent's constructor and spec",
    "connect4_agents.alphazero.network": "PolicyValueNet's size and the evaluator's settings",
    "connect4_agents.sb3.agent": "SB3Agent's spec",
    "connect4_agents.rllib.agent": "the RLlib agent's masks",
    "connect4_agents.interop.": "players across the boundary: Kaggle's calls, OpenSpiel bots, torch networks, text",
    # config dataclasses of the trainers
    "connect4_agents.alphazero.config": "AlphaZeroTrainConfig",
    "connect4_agents.sb3.train": "SB3TrainConfig",
    "connect4_agents.sb3.hyperparameters": "SB3TrainConfig's hyperparameters",
    "connect4_agents.sb3.league": "LeagueSettings",
    "connect4_agents.ntuple.train": "the n-tuple trainer's settings",
    "connect4_agents.ntuple.run": "a train-ntuple run's settings",
    "connect4_agents.qlearning.learning": "train_agent's episodes",
    "connect4_agents.rllib.train": "RLlibTrainConfig",
    # file readers
    "connect4_agents.alphazero.files": "AlphaZero model files",
    "connect4_agents.ntuple.files": "n-tuple network files",
    "connect4_agents.qlearning.files": "Q-table files",
    "connect4_agents.sb3.files": "SB3 model files",
    "connect4_agents.sb3.league_file": "league.json, to resume a run",
    # measurement: the public functions a user calls with agents, counts and sets
    "connect4_agents.evaluation.": "matches, test sets, accuracy, ratings and tournaments called with a user's values",
    # the command line
    "connect4_agents.commands.": "each command's arguments become its config",
    "connect4_agents._support.cli": "command-line paths",
    "connect4_agents.ui.terminal": "what a person types at the terminal",
}
ARCHITECTURE = ROOT / "docs" / "design" / "architecture.md"


def _module_name(path: Path) -> str:
    for package, folder in PACKAGES.items():
        if folder in path.parents:
            parts = [package, *path.relative_to(folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            return ".".join(parts)
    raise AssertionError(path)


def _sources() -> dict[str, Path]:
    return {
        _module_name(path): path
        for folder in PACKAGES.values()
        for path in sorted(folder.rglob("*.py"))
        if "data" not in path.relative_to(folder).parts
    }


MODULES = _sources()


def _imports(path: Path) -> list[tuple[str, bool, int]]:
    """``(imported module, inside a function, line)`` for every import in the file, resolved to the longest
    project module or the top-level name of a third-party one (``TYPE_CHECKING`` blocks left out)."""
    tree = ast.parse(path.read_text(), str(path))
    found: list[tuple[str, bool, int]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append((_resolve(alias.name), in_function, node.lineno))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                found.append((_resolve(f"{node.module}.{alias.name}", node.module), in_function, node.lineno))
        for child in ast.iter_child_nodes(node):
            visit(child, in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))

    visit(tree, False)
    return found


def _resolve(name: str, fallback: str | None = None) -> str:
    if name.split(".")[0] not in PACKAGES:
        return (fallback or name).split(".")[0]
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


GRAPH = {module: _imports(path) for module, path in MODULES.items()}


def _top_level_heavy(module: str, seen: set[str] | None = None) -> bool:
    """Does importing ``module`` import a heavy optional dependency at once?"""
    seen = set() if seen is None else seen
    if module in HEAVY:
        return True
    if module not in GRAPH or module in seen:
        return False
    seen.add(module)
    return any(_top_level_heavy(target, seen) for target, lazy, _ in GRAPH[module] if not lazy)


def test_no_import_cycle_counting_imports_inside_functions() -> None:
    edges = {m: sorted({t for t, _, _ in GRAPH[m] if t in MODULES and t != m}) for m in MODULES}
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        state[module] = 1
        stack.append(module)
        for target in edges[module]:
            if state.get(target) == 1:
                cycles.append([*stack[stack.index(target) :], target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[module] = 2

    for module in MODULES:
        if module not in state:
            visit(module)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_function_level_imports_only_keep_heavy_dependencies_out_of_start_up() -> None:
    hiding = [
        f"{MODULES[module].relative_to(ROOT)}:{line} imports {target}"
        for module, imports in GRAPH.items()
        for target, lazy, line in imports
        if lazy and not _top_level_heavy(target)
    ]
    assert not hiding, "imports inside functions that keep nothing heavy out:\n" + "\n".join(hiding)


def test_light_imports_load_no_heavy_dependency() -> None:
    code = (
        "import sys, gymnasium as gym, connect4_env, connect4_agents\n"
        "env = gym.make('Connect4-v0'); env.reset(seed=0); env.step(3)\n"
        "from connect4_env import Connect4Env, Connect4VectorEnv, Policy\n"
        f"heavy = sorted(m for m in {sorted(HEAVY)!r} if m in sys.modules)\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""


def test_the_env_layer_names_no_agent_module() -> None:
    """connect4_env resolves agents by name through entry points alone: no module path of ours in its code."""
    for module, path in MODULES.items():
        if not module.startswith("connect4_env"):
            continue
        tree = ast.parse(path.read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                assert "connect4_agents" not in node.value and "agents." not in node.value, (path, node.value)
        assert all(not t.startswith("connect4_agents") for t, _, _ in GRAPH[module]), path


def test_pyproject_installs_every_subpackage_under_our_import_names() -> None:
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["package-dir"] == {"connect4_agents": "agents"}
    folders = {_module_name(init) for folder in PACKAGES.values() for init in folder.rglob("__init__.py")}
    assert set(config["packages"]) == folders


def _layer(module: str) -> str:
    if module == INTEGRATIONS or module.startswith(INTEGRATIONS + "."):
        return "integrations"
    if module == ENVS or module.startswith(ENVS + "."):
        return "envs"
    if module.startswith("connect4_env") and module not in FACADES:
        return "core"
    return "other"


def _required_extras(path: Path) -> list[tuple[str, int]]:
    """The extras a module loads through `require("module", ...)` (connect4_env.extras), with their lines."""
    return [
        (node.args[0].value.split(".")[0], node.lineno)
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", None)) == "require"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ]


def test_the_rules_core_and_envs_import_no_extra_at_any_level() -> None:
    found = [
        f"{MODULES[module].relative_to(ROOT)}:{line} imports {target}"
        for module in MODULES
        if _layer(module) in ("core", "envs")
        for target, line in [(t, n) for t, _, n in GRAPH[module]] + _required_extras(MODULES[module])
        if target in HEAVY and (module, target) not in CORE_EXTRAS
    ]
    assert not found, "an extra belongs in connect4_env/integrations/:\n" + "\n".join(found)


def test_the_core_extras_list_is_current() -> None:
    for module, extra in CORE_EXTRAS:
        targets = {t for t, lazy, _ in GRAPH[module] if lazy} | {
            t for t, _ in _required_extras(MODULES[module])
        }
        assert extra in targets, f"{module} no longer imports {extra}: drop it from CORE_EXTRAS"
        assert not any(t == extra for t, lazy, _ in GRAPH[module] if not lazy), (
            f"{module} imports {extra} at once"
        )


def test_imports_point_down_the_three_layers() -> None:
    """core -> envs -> integrations: the rules core imports neither envs/ nor integrations/, envs/ no
    integration (at any level, lazy imports included)."""
    allowed = {"core": {"core"}, "envs": {"core", "envs"}}
    upward = [
        f"{MODULES[module].relative_to(ROOT)}:{line} imports {target}"
        for module in MODULES
        if _layer(module) in allowed
        for target, _, line in GRAPH[module]
        if target in MODULES and _layer(target) not in allowed[_layer(module)] | {"other"}
    ]
    assert not upward, "imports that point up the env package's layers:\n" + "\n".join(upward)


def test_each_integration_is_the_only_place_that_imports_its_library() -> None:
    libraries = {
        "sb3": {"stable_baselines3", "sb3_contrib"},
        "rllib": {"ray"},
        "openspiel": {"pyspiel", "open_spiel"},
        "openenv": {"openenv", "fastapi", "uvicorn"},
    }
    for module in MODULES:
        if _layer(module) != "integrations" or module == INTEGRATIONS:
            continue
        own = libraries[module.split(".")[2]]
        others = set().union(*libraries.values()) - own
        targets = {t for t, _, _ in GRAPH[module]} | {t for t, _ in _required_extras(MODULES[module])}
        assert not targets & others, (
            f"{module} imports another integration's library: {sorted(targets & others)}"
        )
        siblings = {
            t for t in targets if _layer(t) == "integrations" and t.split(".")[2] != module.split(".")[2]
        }
        assert not siblings, f"{module} imports another integration: {sorted(siblings)}"


def test_a_family_imports_the_measurements_only_where_it_says_why() -> None:
    measuring = {
        module
        for module in MODULES
        if module.split(".")[1:2]
        and module.split(".")[1] in FAMILIES
        and module.startswith("connect4_agents.")
        for target, _, _ in GRAPH[module]
        if target.startswith("connect4_agents.evaluation")
    }
    assert measuring == set(FAMILY_MEASURES), (
        f"unlisted: {sorted(measuring - set(FAMILY_MEASURES))}; listed but no longer: "
        f"{sorted(set(FAMILY_MEASURES) - measuring)}"
    )


def _validators_imported(path: Path) -> set[str]:
    """The ``check_*`` validators a module imports from this project (at any level, ``TYPE_CHECKING`` too)."""
    return {
        alias.name
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in PACKAGES
        for alias in node.names
        if alias.name.startswith("check_")
    }


def _covers(key: str, module: str) -> bool:
    """Whether the BOUNDARIES key names ``module``: the module itself, or a package and its modules."""
    return module == key or (key.endswith(".") and f"{module}.".startswith(key))


def test_only_the_boundary_modules_import_validators() -> None:
    """Input is checked once, where it enters: a module that is not a boundary takes typed values and imports
    no validator (``check_int``, ``check_rules``, ``check_board``, ...). The list stays true both ways."""
    importing = {module for module, path in MODULES.items() if _validators_imported(path)}
    unlisted = sorted(module for module in importing if not any(_covers(key, module) for key in BOUNDARIES))
    stale = sorted(key for key in BOUNDARIES if not any(_covers(key, module) for module in importing))
    assert not unlisted, (
        f"{unlisted} import check_* validators but are no boundary: trust the typed values they are given, or "
        "add the module to BOUNDARIES with what enters there"
    )
    assert not stale, f"BOUNDARIES lists {stale}, which import no validator now: take them off the list"


def test_interop_modules_name_their_env_side_twin_in_their_first_line() -> None:
    for module, path in MODULES.items():
        if not module.startswith("connect4_agents.interop.") or module == "connect4_agents.interop":
            continue
        first = (ast.get_docstring(ast.parse(path.read_text())) or "").splitlines()[0]
        assert "env side:" in first, f"{path.relative_to(ROOT)}: name the env-side twin ('env side: ...')"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_a_long_module_says_why_it_is_one_job(module: str) -> None:
    """A module is one job and its size follows from that: past ~450 lines, the first line of its docstring
    gives the reason ("one job: ...")."""
    text = MODULES[module].read_text()
    lines = len(text.splitlines())
    first = (ast.get_docstring(ast.parse(text)) or "").splitlines()[:1]
    assert lines <= LONG_MODULE or (first and "one job:" in first[0]), (
        f"{MODULES[module].relative_to(ROOT)} has {lines} lines: split it by job, or say in the first line of "
        "its docstring why it is one ('one job: ...'); splitting to fit is not a reason"
    )


def _architecture_tree() -> tuple[set[str], set[str]]:
    """The modules and packages the first fenced block of the architecture page names.

    The convention: each line is `<indent><names>  <description>`, the names ending at the first run of two
    spaces; a name ending in `/` is a folder, and lines indented under it are in it; other names are
    comma-separated `module.py` files. Folders outside `connect4_env/` and `agents/` are not read."""
    text = ARCHITECTURE.read_text()
    block = text.split("```text\n", 1)[1].split("```", 1)[0]
    roots = {"connect4_env/": "connect4_env", "agents/": "connect4_agents"}
    modules: set[str] = set()
    packages: set[str] = set()
    stack: list[tuple[int, str | None]] = []
    for line in block.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        names = line.strip().split("  ", 1)[0]
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else None
        for name in (n.strip() for n in names.split(",")):
            if name.endswith("/"):
                # a folder inside an unread one (parent None below the top) is not read either
                package = roots.get(name) if not stack else (f"{parent}.{name[:-1]}" if parent else None)
                if package is not None:
                    packages.add(package)
                stack.append((indent, package))
            elif name.endswith(".py") and parent is not None:
                modules.add(f"{parent}.{name[: -len('.py')]}")
    return modules, packages


def test_the_architecture_page_names_every_module_and_no_other() -> None:
    named, packages = _architecture_tree()
    inits = {m for m, p in MODULES.items() if p.name == "__init__.py"}
    modules = {m for m in MODULES if m not in inits}
    assert named - modules == set(), f"the page names modules that do not exist: {sorted(named - modules)}"
    assert modules - named == set(), f"the page leaves out: {sorted(modules - named)}"
    assert packages == inits, f"packages: page {sorted(packages ^ inits)} differ"


def test_a_module_exports_only_its_own_names() -> None:
    # one name for each thing: a name is public in its home module and in its package's __init__ only, so a
    # module's __all__ lists what it defines, never what it imports (connect4_v0 is the PettingZoo-style facade)
    reexports = {}
    for module, path in MODULES.items():
        if path.name == "__init__.py" or module in FACADES:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {
            alias.asname or alias.name
            for node in tree.body
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in node.names
        }
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
            ):
                names = {
                    element.value for element in ast.walk(node.value) if isinstance(element, ast.Constant)
                }
                if names & imported:
                    reexports[module] = sorted(names & imported)
    assert reexports == {}, reexports
