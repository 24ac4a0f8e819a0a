"""Skips for tests that need an optional extra, each naming the extra and the command that installs it.

The default suite runs on an install with only the ``dev`` extra (``make test-core``): a test that needs an
optional dependency skips with the extra's name instead of failing or erroring. Three ways to say so:

- ``pytestmark = needs("train")`` or ``@needs("train")`` on a module or a test (a mark; nothing is imported);
- ``torch = importorskip("torch")`` inside a test or at the top of a module (imports and returns the module);
- ``@needs_book`` on tests that solve early 6x7 positions, which only the opening book answers fast
  (``skip_without_book()`` in a fixture).
"""

from __future__ import annotations

import importlib.util
import sys
import types

import pytest

# The extra (pyproject.toml's optional-dependencies) that installs each optional top-level module.
EXTRAS: dict[str, str] = {
    "torch": "train",
    "stable_baselines3": "train",
    "sb3_contrib": "train",
    "matplotlib": "train",
    "scipy": "train",
    "tqdm": "train",
    "tensorboard": "train",
    "numba": "fast",
    "pygame": "render",
    "moviepy": "render",
    "ray": "distributed",
    "bitbully_databases": "book",
    "mkdocs": "docs",
    "openenv": "openenv",
    "fastapi": "openenv",
    "uvicorn": "openenv",
    "h11": "openenv",
    "pyspiel": "openspiel",
    "open_spiel": "openspiel",
    "transformers": "llm",
    "tokenizers": "llm",
    "trl": "trl",
    "datasets": "trl",
}
# What each extra brings, and so what ``needs(extra)`` checks is importable.
MODULES: dict[str, tuple[str, ...]] = {
    extra: tuple(module for module, owner in EXTRAS.items() if owner == extra)
    for extra in dict.fromkeys(EXTRAS.values())
}


def reason(extra: str, module: str | None = None) -> str:
    """The skip message for a test that needs ``extra``.

    Args:
        extra: the name of an optional extra, such as ``"train"``.
        module: the missing module, named in the message when given.

    Returns:
        A message that names the extra and the pip command that installs it.

    Raises:
        ValueError: ``extra`` is not one of the project's extras.
    """
    if extra not in MODULES:
        raise ValueError(f"unknown extra {extra!r}; expected one of {sorted(MODULES)}")
    missing = f" ({module} is not installed)" if module else ""
    return f'needs the {extra!r} extra{missing}: pip install -e ".[{extra}]"'


def installed(module: str) -> bool:
    """Whether ``module`` can be imported, found without importing it.

    Returns:
        True when the module is installed.
    """
    return importlib.util.find_spec(module) is not None


# A test that runs in seconds compiled and in a minute or more in plain Python: the core install (no numba,
# ``make test-core``) leaves it to the main suite, which runs the same code compiled.
heavy_without_numba = pytest.mark.skipif(
    not installed("numba"),
    reason="a minute or more in plain Python: runs compiled in the main suite (the 'fast' extra)",
)


def needs(extra: str, *modules: str) -> pytest.MarkDecorator:
    """A mark that skips the test (or module, as ``pytestmark``) unless ``extra`` is installed.

    Args:
        extra: the name of an optional extra, such as ``"train"``.
        modules: the modules of the extra that the test uses; all of the extra's modules when none are given.

    Returns:
        A ``skipif`` mark whose reason names the extra and the first missing module.

    Raises:
        ValueError: ``extra`` is not one of the project's extras, or a module is not part of it.
    """
    if extra not in MODULES:
        raise ValueError(f"unknown extra {extra!r}; expected one of {sorted(MODULES)}")
    for module in modules:
        if EXTRAS.get(module) != extra:
            raise ValueError(f"module {module!r} is not part of the {extra!r} extra; it has {MODULES[extra]}")
    missing = [module for module in modules or MODULES[extra] if not installed(module)]
    return pytest.mark.skipif(bool(missing), reason=reason(extra, missing[0] if missing else None))


def importorskip(module: str) -> types.ModuleType:
    """Import ``module`` (an optional dependency), or skip with the name of the extra that installs it.

    Args:
        module: a module such as ``"torch"`` or ``"sb3_contrib.common.wrappers"``.

    Returns:
        The imported module.

    Raises:
        ValueError: the top-level module belongs to no extra.
    """
    top = module.split(".")[0]
    if top not in EXTRAS:
        raise ValueError(f"module {module!r} belongs to no extra; known: {sorted(EXTRAS)}")
    return pytest.importorskip(module, reason=reason(EXTRAS[top], top))


def book_installed() -> bool:
    """Whether the 6x7 opening book (the ``book`` extra) is there for the solver.

    Returns:
        True when ``bitbully_databases`` is installed and the book loads.
    """
    if not installed("bitbully_databases"):
        return False
    from connect4_agents.solver.book import load_book  # only once the data package is there

    return load_book() is not None


def skip_without_book() -> None:
    """Skip the calling test or fixture unless the opening book is installed (for fixtures, which take no marks).

    Raises:
        pytest.skip.Exception: the ``book`` extra is not installed.
    """
    if not book_installed():
        pytest.skip(reason("book", "bitbully_databases"))


# Solving an early 6x7 position without the book: a solver left to its defaults refuses it at once
# (MissingExtraError), one told to search anyway (book=False, node_budget=None) takes minutes to hours.
needs_book = pytest.mark.skipif(not book_installed(), reason=reason("book", "bitbully_databases"))


def absent(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Simulate a core install: importing any of ``modules`` (or a submodule of one) fails as if missing.

    Args:
        monkeypatch: the test's fixture, which puts ``sys.modules`` back afterwards.
        modules: top-level module names, such as ``"torch"``.
    """
    for module in list(sys.modules):
        if module.split(".")[0] in modules:
            monkeypatch.delitem(sys.modules, module)
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)
