"""The house rules of the layout: every import points down (no cycle, counting imports inside functions),
function-level imports only keep an optional heavy dependency out of start-up, the light imports stay light,
the env layer names no agent module, pyproject installs every agents/ subpackage, and files stay small."""

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
MAX_LINES = 450


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


def test_pyproject_installs_every_agents_subpackage_under_our_import_name() -> None:
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["package-dir"] == {"connect4_agents": "agents"}
    folders = {_module_name(init) for folder in PACKAGES.values() for init in folder.rglob("__init__.py")}
    assert set(config["packages"]) == folders


@pytest.mark.parametrize("module", sorted(MODULES))
def test_product_modules_stay_small(module: str) -> None:
    lines = len(MODULES[module].read_text().splitlines())
    assert lines <= MAX_LINES, f"{MODULES[module].relative_to(ROOT)} has {lines} lines; split it by job"
