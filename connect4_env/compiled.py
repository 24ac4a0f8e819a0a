"""Kernel modules in two builds: numba-compiled (boards up to 63 bits) and plain Python (any board).

A kernel module is a file of functions in the numba subset, such as `connect4_env.kernels` (the rules)
or the agents' search kernels, which import their rule functions from `connect4_env.kernels`.
``kernels_for(module, rules)`` returns a `KernelBuild`: the module's functions plus the array dtype for
bitboards in that build. The plain build is the module itself. The compiled build is a second copy of the
module's file in which every function is ``njit``-ed and every function it imports from another kernel module
is replaced by that module's compiled version, *before* anything is called: numba resolves globals when it
compiles, so the search kernels then call the compiled rules (one set of rules, compiled once). A module may
ask for more of numba's options in a ``NUMBA_OPTIONS`` dict (the solver: ``nogil``, and no reference counting).

numba is imported on first use of a compiled build only, so ``import connect4_env`` does not load it. The
compiled code is cached on disk by numba (``cache=True``): the first use on a machine compiles it (seconds),
later processes load it in well under a second. numba's cache tracks each function's own source file only, so
a kernel module whose compiled rules come from another file would keep old rules after that file changed: the
loader keeps a marker of those files' contents beside the module's cache and drops the cache when they change.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
import types
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from connect4_env import kernels
from connect4_env.rules import Rules

__all__ = [
    "KernelBuild",
    "kernels_for",
    "kernel_geometry",
    "compiled_module",
    "fits_compiled",
    "MAX_COMPILED_BITS",
]

MAX_COMPILED_BITS = 63  # bitboards live in int64: bit 63 would be the sign
_COPY_SUFFIX = "_numba"  # the compiled copy of module ``x`` is registered as ``x_numba``


def kernel_geometry(rules: Rules) -> tuple[int, ...]:
    """The ``geo`` tuple the kernels read (see `connect4_env.kernels`).

    Returns:
        ``(rows, columns, height, win_length, cells)``, then the rules' vertical win shifts padded with zeros
        to at least ``kernels.STEPS`` entries: one length for every board the compiled build plays
        (win_length <= 62 needs at most 6 shifts), so numba compiles each kernel once.
    """
    runs = rules.win_shifts[0]  # vertical: direction 1, so the shifts are the run lengths themselves
    padded = (*runs, *[0] * (max(kernels.STEPS, len(runs)) - len(runs)))
    return (rules.rows, rules.columns, rules.height, rules.win_length, rules.cells, *padded)


def fits_compiled(rules: Rules) -> bool:
    """Whether a bitboard of ``rules`` (sentinel row included) fits in the compiled build's int64."""
    return rules.columns * rules.height <= MAX_COMPILED_BITS


class KernelBuild:
    """The functions of one build of a kernel module plus how to allocate bitboard arrays for it.

    Attributes:
        module: the module (the plain one, or its compiled copy); its functions are also attributes here.
        compiled: whether the functions are numba-compiled.
        bit_dtype: ``np.int64`` for the compiled build, ``object`` (Python ints, any size) for the plain one.
    """

    def __init__(self, module: types.ModuleType, compiled: bool) -> None:
        self.module = module
        self.compiled = compiled
        self.bit_dtype: Any = np.int64 if compiled else object

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy/pickle probe dunders before ``module`` is set: no recursion
            raise AttributeError(name)
        return getattr(self.module, name)

    def __repr__(self) -> str:
        return f"KernelBuild({self.name!r}, compiled={self.compiled})"

    def __reduce__(self) -> tuple[Any, tuple[str, bool]]:
        # a module cannot be pickled: a copy looks the same build up again by name (one object per process)
        return _build_named, (self.name, self.compiled)

    @property
    def name(self) -> str:
        """The import name of the plain kernel module."""
        name: str = self.module.__name__
        return name.removesuffix(_COPY_SUFFIX) if self.compiled else name

    def geometry(self, rules: Rules) -> tuple[int, ...]:
        """The ``geo`` tuple of ``rules`` (see `kernel_geometry`)."""
        return kernel_geometry(rules)

    def bit_array(self, size: int) -> np.ndarray:
        """``size`` zero bitboards of this build's dtype (object dtype: Python int zeros)."""
        return np.zeros(size, dtype=self.bit_dtype)


@cache
def _plain_build(name: str) -> KernelBuild:
    return KernelBuild(importlib.import_module(name), compiled=False)


@cache
def compiled_module(name: str) -> types.ModuleType | None:
    """The compiled copy of the kernel module ``name``, or None when numba is not installed.

    Raises:
        ImportError: no module ``name``.
    """
    try:
        import numba  # optional (the ``fast`` extra), and slow to import: loaded on first use only
    except ImportError:
        return None
    plain = importlib.import_module(name)
    spec = importlib.util.spec_from_file_location(name + _COPY_SUFFIX, plain.__file__)
    if spec is None or spec.loader is None:  # pragma: no cover - a module always has a file loader here
        raise ImportError(f"cannot load a second copy of the kernel module {name!r}")
    _drop_stale_cache(plain)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # numba's on-disk cache finds the module's globals by this name
    spec.loader.exec_module(module)
    options = numba_options(plain)
    # Every function must be replaced *before* any is called: a call between them (the solver's recursion, the
    # searches' calls into the rules) then resolves to compiled code when numba compiles the caller.
    for attribute, value in list(vars(module).items()):
        if not inspect.isfunction(value):
            continue
        if value.__module__ == module.__name__:
            setattr(module, attribute, numba.njit(**options)(value))
        else:  # imported from another kernel module: take that module's compiled version
            source = compiled_module(value.__module__)
            if source is None:  # pragma: no cover - numba was importable a moment ago
                return None
            setattr(module, attribute, getattr(source, value.__name__))
    return module


def numba_options(plain: types.ModuleType) -> dict[str, Any]:
    """``njit``'s options for the kernel module ``plain``: ``cache=True``, plus the module's ``NUMBA_OPTIONS`` (a
    dict) that the installed numba knows (an option it dropped is left out, never an error).
    """
    asked = dict(getattr(plain, "NUMBA_OPTIONS", {}))
    try:
        from numba.core.cpu import CPUTargetOptions
    except ImportError:  # pragma: no cover - numba moved its options: compile with the defaults
        return {"cache": True}
    return {
        "cache": True,
        **{name: value for name, value in asked.items() if hasattr(CPUTargetOptions, name)},
    }


def _drop_stale_cache(plain: types.ModuleType) -> None:
    """Remove numba's cache of ``plain``'s functions when the kernel modules it imports rules from changed.

    numba stamps a cached function with its own file's contents only. The marker
    ``__pycache__/<module>.rules-<digest>`` records the contents of the files it imports kernels from; a
    missing marker means they changed (or nothing was cached yet), and the module's ``*.nbi``/``*.nbc`` go.
    Only numba's cache beside the source is handled: with ``NUMBA_CACHE_DIR`` set, or a read-only install
    (whose files do not change), nothing is done.
    """
    sources = sorted(
        {
            value.__module__
            for value in vars(plain).values()
            if inspect.isfunction(value) and value.__module__ != plain.__name__
        }
    )
    if not sources or os.environ.get("NUMBA_CACHE_DIR") or plain.__file__ is None:
        return
    digest = hashlib.sha256()
    for source in sources:
        digest.update(Path(str(importlib.import_module(source).__file__)).read_bytes())
    path = Path(plain.__file__)
    folder = path.parent / "__pycache__"
    marker = folder / f"{path.stem}.rules-{digest.hexdigest()[:16]}"
    if marker.exists():
        return
    try:
        for stale in [*folder.glob(f"{path.stem}.*.nbi"), *folder.glob(f"{path.stem}.*.nbc")]:
            stale.unlink(missing_ok=True)
        for old in folder.glob(f"{path.stem}.rules-*"):
            old.unlink(missing_ok=True)
        folder.mkdir(exist_ok=True)
        marker.touch()
    except OSError:  # not writable here: numba caches elsewhere, and such an install is not edited
        return


@cache
def _compiled_build(name: str) -> KernelBuild | None:
    module = compiled_module(name)
    return None if module is None else KernelBuild(module, compiled=True)


def _build_named(name: str, compiled: bool) -> KernelBuild:
    """The build of kernel module ``name`` (for unpickling); the plain one when numba is missing here."""
    return (_compiled_build(name) if compiled else None) or _plain_build(name)


def kernels_for(module: str | types.ModuleType, rules: Rules, compiled: bool | None = None) -> KernelBuild:
    """The build of kernel ``module`` to run on ``rules``.

    Args:
        module: the kernel module or its import name (``"connect4_env.kernels"``, ...).
        rules: the board the kernels will play on.
        compiled: None: the compiled build when numba is installed and the board fits in 63 bits, else the
            plain Python one; False: the plain Python build; True: the compiled build, required.

    Returns:
        The chosen build (cached: the same object for the same module and build).

    Raises:
        ValueError: ``compiled=True`` without numba, or for a board over 63 bits.
    """
    name = module if isinstance(module, str) else module.__name__
    if compiled is False:
        return _plain_build(name)
    fits = fits_compiled(rules)
    build = _compiled_build(name) if fits else None
    if build is None:
        if compiled:
            reason = (
                "numba is not installed"
                if fits
                else f"a {rules.rows}x{rules.columns} board needs more than {MAX_COMPILED_BITS} bits"
            )
            raise ValueError(f"compiled=True: the compiled kernels cannot be used ({reason})")
        return _plain_build(name)
    return build
