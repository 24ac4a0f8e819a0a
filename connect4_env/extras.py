"""One clear error for a missing optional dependency: which extra brings it, and the pip command.

It lives in the env layer so that the envs (the SB3 VecEnv, the RLlib env, the pygame window) and the agents
(which import it from here) raise the same `MissingExtraError`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["MissingExtraError", "require"]


class MissingExtraError(ImportError):
    """An optional dependency is not installed; the message names the extra that brings it.

    An ``ImportError`` (``except ImportError`` still catches it); the commands print it as ``error: ...`` and
    exit with status 2.
    """


def require(module: str, extra: str, what: str, *, hint: str = "", install: str = "") -> ModuleType:
    """Import ``module``, or raise `MissingExtraError` saying that ``what`` needs ``extra``.

    Args:
        module: the module to import, e.g. ``"torch"``.
        extra: the project extra that installs it, e.g. ``"train"``.
        what: what needs it, for the message, e.g. ``"loading an SB3 model"``.
        hint: appended to the message, e.g. an alternative that needs no extra.
        install: for what no extra installs: ``extra`` is then the requirement itself (``"ray[rllib]"``) and
            this says how to install it, in place of the extra's pip line.

    Returns:
        The imported module.

    Raises:
        MissingExtraError: ``module`` (or one of its own imports) is not installed.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        if install:
            message = f"{what} needs {extra} ({error.name} is not installed), {install}"
        else:
            message = (
                f"{what} needs the {extra!r} extra ({error.name} is not installed): "
                f'pip install -e ".[{extra}]"'
            )
        raise MissingExtraError(message + (f" {hint}" if hint else "")) from error
