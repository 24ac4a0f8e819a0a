"""The API reference (docs/api/*.md, rendered by mkdocstrings) covers every public module of both packages: each
module whose dotted name has no part starting with ``_`` is named by a ``::: module`` directive of its own, so a
new module cannot be left out of the site (``make docs`` builds it strictly: a directive naming nothing fails)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "api"
# the import package each source folder installs as (agents/ installs as connect4_agents)
PACKAGES = {"connect4_env": ROOT / "connect4_env", "connect4_agents": ROOT / "agents"}
DIRECTIVE = re.compile(r"^::: ([\w.]+)", re.MULTILINE)


def public_modules() -> set[str]:
    """Every module and package of both packages whose dotted name has no part starting with ``_`` (package
    data folders left out)."""
    found = set()
    for package, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            parts = [package, *path.relative_to(folder).with_suffix("").parts]
            if "data" in parts:
                continue
            if parts[-1] == "__init__":
                parts.pop()
            if not any(part.startswith("_") for part in parts):
                found.add(".".join(parts))
    return found


def documented(text: str) -> set[str]:
    return set(DIRECTIVE.findall(text))


def test_every_public_module_has_its_own_directive_in_the_api_reference() -> None:
    named = set().union(*(documented(page.read_text()) for page in API.glob("*.md")))
    missing = sorted(public_modules() - named)
    assert not missing, f"public modules missing from docs/api/*.md (add a '::: module' line): {missing}"


def test_the_walk_finds_modules_at_every_depth_and_leaves_private_ones_out() -> None:
    modules = public_modules()
    assert {
        "connect4_env",
        "connect4_env.envs.text_env",
        "connect4_env.envs.dialects",
        "connect4_env.integrations.openenv.server",
        "connect4_agents",
        "connect4_agents.interop.text",
        "connect4_agents.interop.hf_text",
        "connect4_agents.evaluation.grading",
        "connect4_agents.sb3.league",
    } <= modules
    assert not any("._" in module or module.startswith("_") for module in modules)
    assert (
        "connect4_agents.commands.__main__" not in modules and "connect4_agents._support.cli" not in modules
    )


def test_the_directive_pattern_reads_only_directives() -> None:
    text = "::: connect4_env.core\n    options:\n      members: false\n\nsee `::: x` and\n::: connect4_agents.ui\n"
    assert documented(text) == {"connect4_env.core", "connect4_agents.ui"}
