"""The search kernels in two builds: numba-compiled (boards up to 63 bits) and plain Python (any board).

``kernels_for(rules)`` returns a namespace with the functions of :mod:`connect4_agents._kernels` and the array dtype
for bitboards in that build. The compiled build is cached on disk by numba (``cache=True``): the first use
on a machine compiles it (about ten seconds), later processes load it in well under a second.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
import types
from functools import lru_cache

import numpy as np
from connect4_agents import _kernels

from connect4_env.core import Rules

__all__ = ["KernelBuild", "kernels_for", "kernel_geometry", "MAX_COMPILED_BITS"]

MAX_COMPILED_BITS = 63  # bitboards live in int64: bit 63 would be the sign
# Win shifts per direction in the kernels' geometry tuple: one length for every board the compiled build
# plays (win_length <= 62 needs at most 6), so numba compiles the kernels once.
_MIN_STEPS = _kernels.STEPS


def kernel_geometry(rules: Rules) -> tuple[int, ...]:
    """The ``geo`` tuple the kernels read: sizes, then the rules' vertical win shifts padded with zeros."""
    runs = rules.win_shifts[0]  # vertical: direction 1, so the shifts are the run lengths themselves
    padded = (*runs, *[0] * (max(_MIN_STEPS, len(runs)) - len(runs)))
    return (rules.rows, rules.columns, rules.height, rules.win_length, rules.cells, *padded)


class KernelBuild:
    """The kernel functions of one build plus how to allocate arrays for it."""

    def __init__(self, module: types.ModuleType, compiled: bool) -> None:
        self.module = module
        self.compiled = compiled
        self.bit_dtype = np.int64 if compiled else object

    def __getattr__(self, name: str):
        return getattr(self.module, name)

    def geometry(self, rules: Rules) -> tuple[int, ...]:
        return kernel_geometry(rules)

    def bit_array(self, size: int) -> np.ndarray:
        return np.zeros(size, dtype=self.bit_dtype)  # object dtype: Python int zeros


PYTHON = KernelBuild(_kernels, compiled=False)


@lru_cache(maxsize=1)
def _compiled_build() -> KernelBuild | None:
    try:
        import numba
    except ImportError:
        return None
    spec = importlib.util.spec_from_file_location("connect4_agents._kernels_numba", _kernels.__file__)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # numba's on-disk cache re-imports the module by this name
    spec.loader.exec_module(module)
    # Replace every function by its compiled version *before* any is called: calls between them (and the
    # solver's recursion) then resolve to compiled code.
    for name, function in list(vars(module).items()):
        if inspect.isfunction(function) and function.__module__ == module.__name__:
            setattr(module, name, numba.njit(cache=True)(function))
    return KernelBuild(module, compiled=True)


def kernels_for(rules: Rules, compiled: bool | None = None) -> KernelBuild:
    """The compiled build when numba is installed and the board fits in 63 bits, else the Python one.

    ``compiled=False`` forces the Python build; ``compiled=True`` raises if the compiled one cannot be used.
    """
    fits = rules.columns * rules.height <= MAX_COMPILED_BITS
    if compiled is False:
        return PYTHON
    build = _compiled_build() if fits else None
    if build is None:
        if compiled:
            reason = (
                "numba is not installed"
                if fits
                else f"a {rules.rows}x{rules.columns} board needs more than 63 bits"
            )
            raise ValueError(f"the compiled search kernels cannot be used: {reason}")
        return PYTHON
    return build
