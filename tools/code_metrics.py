"""Measure what issue 51's goals name: lines, ``raise`` density, long modules, the OpenEnv integration's size.

    python tools/code_metrics.py            # the two packages
    python tools/code_metrics.py --json     # the same as JSON

Lines are physical lines of ``.py`` files (tests are elsewhere). ``raise`` statements are counted from the AST, so
a ``raise`` in a string or comment does not count. Cyclomatic complexity is ruff's C90 rule: run
``ruff check --select C90 --config lint.mccabe.max-complexity=15`` for the list.
"""

from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("connect4_env", "agents")
LONG_MODULE = 450


def _files(package: str) -> list[Path]:
    return sorted(p for p in (ROOT / package).rglob("*.py") if "__pycache__" not in p.parts)


def measure() -> dict[str, object]:
    """Each package's lines, raises, raises per 1,000 lines and modules over 450 lines; the OpenEnv integration's lines."""
    out: dict[str, object] = {}
    for package in PACKAGES:
        lines = raises = 0
        long_modules = []
        for path in _files(package):
            text = path.read_text(encoding="utf-8")
            count = text.count("\n")
            lines += count
            raises += sum(isinstance(node, ast.Raise) for node in ast.walk(ast.parse(text)))
            if count > LONG_MODULE:
                long_modules.append(f"{path.relative_to(ROOT)} ({count})")
        out[package] = {
            "lines": lines,
            "raises": raises,
            "raises_per_1000_lines": round(1000 * raises / lines, 1),
            "modules_over_450_lines": long_modules,
        }
    openenv = ROOT / "connect4_env" / "integrations" / "openenv"
    out["openenv_integration_lines"] = sum(
        p.read_text(encoding="utf-8").count("\n") for p in openenv.rglob("*.py")
    )
    out["product_lines"] = sum(out[p]["lines"] for p in PACKAGES)  # type: ignore[index]
    return out


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    figures = measure()
    if parser.parse_args().json:
        print(json.dumps(figures, indent=1))
        return
    for package in PACKAGES:
        f = figures[package]
        print(
            f"{package}: {f['lines']} lines, {f['raises']} raise, {f['raises_per_1000_lines']} per 1,000 lines"
        )  # type: ignore[index]
        for module in f["modules_over_450_lines"]:  # type: ignore[index]
            print(f"  over {LONG_MODULE} lines: {module}")
    print(
        f"product lines: {figures['product_lines']}; the OpenEnv integration: {figures['openenv_integration_lines']}"
    )


if __name__ == "__main__":
    main()
