"""One policy for checking arguments: TypeError for a wrong type, ValueError for a wrong value.

Every message names the argument, the value given and what is allowed. The core, the renderers, the envs, the
agents and the scripts all check through these helpers, so the same mistake gets the same error everywhere.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Collection, Iterable
from typing import Any

import numpy as np

__all__ = [
    "check_int",
    "check_number",
    "check_bool",
    "check_choice",
    "check_name_list",
    "check_seed",
    "seeded_rng",
    "shown_value",
]


def shown_value(value: object) -> str:
    """``repr(value)``, except for an integer too long to print in full (Python refuses past 4,300 digits)."""
    if isinstance(value, numbers.Integral) and int(value).bit_length() > 256:
        return f"an integer of {int(value).bit_length()} bits"
    return repr(value)


def _describe(value: object) -> str:
    return f"{value!r} ({type(value).__name__})"


def check_int(name: str, value: object, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as a plain int: a Python or numpy integer (not a bool) within ``minimum..maximum``.

    Raises:
        TypeError: ``value`` is not an integer (a float, a string, a bool, None).
        ValueError: ``value`` is an integer outside ``minimum..maximum``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer{_range_text(minimum, maximum)}, got {_describe(value)}")
    result = int(value)
    if (minimum is not None and result < minimum) or (maximum is not None and result > maximum):
        raise ValueError(
            f"{name} must be an integer{_range_text(minimum, maximum)}, got {shown_value(result)}"
        )
    return result


def check_number(
    name: str,
    value: object,
    minimum: float | None = None,
    maximum: float | None = None,
    *,
    above_minimum: bool = False,
) -> float:
    """``value`` as a finite float within ``minimum..maximum`` (``above_minimum``: strictly greater).

    Raises:
        TypeError: ``value`` is not a real number (a string, a bool, None).
        ValueError: ``value`` is NaN, infinite, or outside ``minimum..maximum``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {_describe(value)}")
    low = "" if minimum is None else (f" > {minimum}" if above_minimum else f" >= {minimum}")
    high = "" if maximum is None else f" <= {maximum}"
    allowed = f"a finite number{low}{' and' if low and high else ''}{high}"
    try:
        result = float(value)
    except OverflowError:  # an int past float's range (10**400)
        result = math.inf
    below = minimum is not None and (result < minimum or (above_minimum and result == minimum))
    if not math.isfinite(result) or below or (maximum is not None and result > maximum):
        raise ValueError(f"{name} must be {allowed}, got {shown_value(value)}")
    return result


def check_bool(name: str, value: object) -> bool:
    """``value`` if it is True or False (numpy bools too).

    Raises:
        TypeError: anything else (``"yes"``, 1, None).
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {_describe(value)}")


def check_choice(name: str, value: Any, allowed: Collection[Any]) -> Any:
    """``value`` if it is one of ``allowed``.

    Raises:
        ValueError: it is not (the message lists what is).
    """
    try:
        known = value in allowed
    except TypeError:  # unhashable values cannot be in a set of choices
        known = False
    if not known:
        raise ValueError(f"{name}={value!r} is not supported; allowed: {', '.join(repr(a) for a in allowed)}")
    return value


def _range_text(minimum: int | None, maximum: int | None) -> str:
    if minimum is not None and maximum is not None:
        return f" in {minimum}..{maximum}"
    if minimum is not None:
        return f" >= {minimum}"
    if maximum is not None:
        return f" <= {maximum}"
    return ""


def check_seed(value: object, name: str = "seed") -> int | None:
    """An env's ``reset(seed=...)``: None, or a non-negative Python or numpy integer, returned as a plain int
    (Gymnasium's ``np_random`` takes Python ints only, raises its own ``gymnasium.error.Error`` for the rest, and
    lets ``True`` through as 1).

    Raises:
        TypeError: ``value`` is neither None nor an integer (a bool, a float, a string, another type).
        ValueError: ``value`` is a negative integer.
    """
    return None if value is None else check_int(name, value, 0)


def seeded_rng(value: object, name: str = "seed") -> np.random.Generator:
    """A numpy Generator from a seed argument, as ``np.random.default_rng`` makes it (None: fresh entropy; a
    non-negative int; a sequence of them; a Generator or BitGenerator, used as is), with an error that names
    ``name`` instead of numpy's.

    Raises:
        TypeError: ``value`` is a bool, a float, a string or another type numpy cannot seed from (a float or
            None inside a sequence too).
        ValueError: ``value`` is a negative integer, or a sequence that holds one (or a string).
    """
    if isinstance(value, bool):
        raise TypeError(f"{name} must be None or a non-negative integer, got {_describe(value)}")
    try:
        return np.random.default_rng(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{name} must be None or a non-negative integer, got {_describe(value)}") from None
    except ValueError:
        raise ValueError(f"{name} must be None or a non-negative integer, got {value!r}") from None


def check_name_list(name: str, value: object, what: str) -> list[str]:
    """``value`` as a list of strings: a list, tuple or other iterable of them, not a lone string.

    Raises:
        TypeError: a string (the message shows it in a list), a non-iterable or an item that is not a string.
    """
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise TypeError(
            f"{name} must be a list of {what}, got {value!r:.80} ({type(value).__name__})"
            + (f"; write [{value!r}] for one" if isinstance(value, str) else "")
        )
    items = list(value)
    for item in items:
        if not isinstance(item, str):
            raise TypeError(
                f"{name} must be a list of {what}, got an item {item!r:.80} ({type(item).__name__})"
            )
    return items
