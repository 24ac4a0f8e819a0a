"""Factories by name: the names installed packages declare under an entry-point group, read on first use, and
those registered at run time, as Gymnasium's registry does for envs.

A name stands for a callable or a ``"module:attr"`` string, imported only when the name is used. The agents
(`connect4_env.policy`, group ``connect4_env.policies``) and the per-move rewards (`connect4_env.rewards`,
group ``connect4_env.rewards``) each keep one `EntryPointRegistry`; their functions say what an unknown name
gets.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Iterable
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any, Generic, TypeVar

__all__ = ["EntryPointRegistry"]

F = TypeVar("F", bound=Callable[..., Any])


class EntryPointRegistry(Generic[F]):
    """Names -> factories (``F``): from the entry-point group ``group``, read on first use, and `register`.

    The entry points are read once, under a lock, so a first use from several threads at once sees them all;
    registering is one dict store.

    Args:
        group: the entry-point group installed packages declare their names under (``name = "module:attr"``).
        what: what a name names, for messages (``"agent"``, ``"reward"``).
        reserved: names that cannot be registered (one the caller answers itself, such as ``"outcome"``).
        importer: imports a ``"module:attr"``'s module (`importlib.import_module` unless given; the agents'
            also looks in the current folder).
        table: returns the dict the names live in (the registry's own unless given); a module that keeps its
            table in a global passes ``lambda: _REGISTRY``, so a test may swap the global for a copy.
    """

    def __init__(
        self,
        group: str,
        what: str,
        *,
        reserved: Iterable[str] = (),
        importer: Callable[[str], ModuleType] = importlib.import_module,
        table: Callable[[], dict[str, str | F]] | None = None,
    ) -> None:
        self.group = group
        self.what = what
        self.reserved = tuple(reserved)
        self._importer = importer
        own: dict[str, str | F] = {}
        self._table = table or (lambda: own)
        self._loaded = False
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"EntryPointRegistry({self.group!r}, {self.what!r})"

    def entries(self) -> dict[str, str | F]:
        """The table, name -> factory or ``"module:attr"``, the entry points read into it the first time (a
        name already in the table keeps its value).
        """
        if not self._loaded:
            with self._lock:
                if not self._loaded:
                    table = self._table()
                    for point in entry_points(group=self.group):
                        table.setdefault(point.name, point.value)
                    self._loaded = True
        return self._table()

    def __contains__(self, name: object) -> bool:
        return name in self.entries()

    def names(self) -> list[str]:
        """The registered names, sorted."""
        return sorted(self.entries())

    def register(self, name: str, entry_point: str | F) -> None:
        """Register ``entry_point`` under ``name``: a callable, or a ``"module:attr"`` imported when used.

        Raises:
            TypeError: ``name`` is not a str, or ``entry_point`` neither a str nor callable.
            ValueError: an empty name, a name with ``":"``, a reserved name, or a string that is not
                ``"module:attr"``.
        """
        article = "an" if self.what[:1] in "aeiou" else "a"
        if not isinstance(name, str):
            raise TypeError(
                f"{article} {self.what} name must be a str, got {name!r:.80} ({type(name).__name__})"
            )
        if not name or ":" in name or name in self.reserved:
            rules = "non-empty and hold no ':'"
            if self.reserved:
                rules = f"non-empty, hold no ':' and not be {' or '.join(map(repr, self.reserved))}"
            raise ValueError(f"{self.what} name {name!r:.80} must be {rules}")
        if isinstance(entry_point, str):
            module, _, attr = entry_point.partition(":")
            if not module or not attr:
                raise ValueError(f"entry point {entry_point!r:.80} must have the form 'module:attr'")
        elif not callable(entry_point):
            raise TypeError(
                f"{article} {self.what}'s factory must be a 'module:attr' string or callable, "
                f"got {entry_point!r:.80}"
            )
        self.entries()[name] = entry_point

    def load(self, name: str) -> F:
        """The factory registered as ``name``, its ``"module:attr"`` imported now if it is one.

        Raises:
            KeyError: no such name (the caller checks ``name in registry`` first and says what is known).
            ValueError: the ``"module:attr"`` names no module, or no such attribute of it.
            ModuleNotFoundError: the module is there, but something it imports is not (Python's own error).
        """
        factory = self.entries()[name]
        if not isinstance(factory, str):
            return factory
        module_name, _, attr = factory.partition(":")
        try:
            module = self._importer(module_name)
        except ModuleNotFoundError as error:
            missing = error.name or ""
            if missing != module_name and not module_name.startswith(f"{missing}."):
                raise  # the module is there; something it imports is not: its own message says what
            raise ValueError(
                f"{self.what} {name!r} is registered as {factory!r}, but there is no module {module_name!r}: "
                f"{error}"
            ) from None
        if not hasattr(module, attr):
            raise ValueError(
                f"{self.what} {name!r} is registered as {factory!r}, but {module_name} has no {attr!r}"
            )
        loaded: F = getattr(module, attr)
        return loaded
