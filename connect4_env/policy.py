"""The policy boundary: what the environments ask of a policy, how a policy receives the game's rules, and
the registry of policies by name.

The environments never import ``agents``: they call any object that follows `Policy`, and hand it
the game's [`Rules`][connect4_env.rules.Rules] through `bind_policy` before it plays. Names such as
``"mcts"`` resolve through a registry of string entry points (``"package.module:Class"``, an
[`EntryPointRegistry`][connect4_env.registry.EntryPointRegistry]), as Gymnasium's registry does for envs:
installed packages declare theirs under the ``connect4_env.policies`` entry-point group (this project's
``connect4_agents`` does, in ``pyproject.toml``, the only list of its names), and `register_policy` adds more
at run time. Nothing is imported until a name is used.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import os
import re
import sys
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, runtime_checkable

from connect4_env.registry import EntryPointRegistry
from connect4_env.rules import Rules

__all__ = [
    "Policy",
    "bind_policy",
    "register_policy",
    "policy_names",
    "make_policy",
    "policy_from_spec",
    "import_spec_module",
    "resolve_opponent",
    "did_you_mean",
    "ENTRY_POINT_GROUP",
    "Forfeit",
]

ENTRY_POINT_GROUP = "connect4_env.policies"


class Forfeit(ValueError):
    """Raised by a policy's ``act`` that gives up the game instead of moving (a text policy whose answers were
    all rejected, under ``fallback="forfeit"``, as Game Arena and TextArena rule). The game runners
    (`connect4_agents.evaluation.arena.play_game`) end the game there: the other player wins, and the record
    keeps ``reason`` and ``info``.

    Args:
        reason: why, in words.
        info: what the policy reports about the failed move (a JSON-ready dict, such as a text policy's
            ``move_info()``), or None.
    """

    def __init__(self, reason: str, info: dict[str, Any] | None = None) -> None:
        super().__init__(reason)
        self.reason = str(reason)
        self.info = info


@runtime_checkable
class Policy(Protocol):
    """Anything that picks a column from an observation and an action mask.

    ``observation`` is the ``(rows, columns, 2)`` int8 planes from the mover's view (plane 0 = own stones,
    row 0 = top), as both environments produce; a PettingZoo ``{"observation", "action_mask"}`` dict is also
    accepted. ``action_mask`` has one 0/1 entry per column. ``act`` returns a legal column as a plain int.

    Optional:

    - ``bind(rules)``: receive the game's rules (board size and ``win_length``, which observations do not
      carry). Everything that runs a policy in a game calls it first (`bind_policy`); a policy that
      cannot play those rules raises ``ValueError`` there.
    - ``reset(seed=None)`` before a game.
    - ``act_batch(observations, action_masks) -> columns`` for many games at once (the batched env uses it),
      and ``uses_observations = False`` for a policy that looks only at the masks (the batched env then
      passes ``observations=None``). Such a policy may also offer ``choose(legal) -> column``, one of the
      ``legal`` columns (a list of ints), for callers that hold no observation (Q-learning's training loop
      asks a random opponent this way).
    - ``restricted_masks = True`` for a policy that chooses among the columns any mask allows, also a mask
      narrower than the position's legal columns (a shield narrows it to the safe ones); without it, a
      policy may refuse a mask that is not exactly the legal columns.
    """

    def act(self, observation: Any, action_mask: Any = None) -> int:
        """A legal column (a plain int) for the position ``observation`` shows, among ``action_mask``'s."""
        ...


def bind_policy(policy: Any, rules: Rules) -> Any:
    """Give ``policy`` the game's rules through its ``bind(rules)``, if it has one; returns ``policy``.

    Raises:
        ValueError: the policy cannot play these rules (its own ``bind`` says why, and checks ``rules``).
    """
    bind = getattr(policy, "bind", None)
    if callable(bind):
        bind(rules)
    return policy


# name -> a factory or "module:attr"; filled from the entry points on first use, then by register_policy.
# _POLICIES looks this global up on each use (a test may swap it for a copy); _registry() is it, loaded.
_REGISTRY: dict[str, str | Callable[..., Any]] = {}


def _registry() -> dict[str, str | Callable[..., Any]]:
    return _POLICIES.entries()


def register_policy(name: str, entry_point: str | Callable[..., Any]) -> None:
    """Register a policy factory under ``name``: a callable, or a ``"module:attr"`` string imported on first use.

    A factory with a ``from_spec(value, **kwargs)`` classmethod also serves specs such as ``"name:value"``.

    Raises:
        TypeError: ``name`` is not a string or ``entry_point`` neither a string nor callable.
        ValueError: an empty name, a name with ``":"``, or a string that is not ``"module:attr"``.
    """
    _POLICIES.register(name, entry_point)


def policy_names() -> list[str]:
    """The names `make_policy` knows."""
    return _POLICIES.names()


def did_you_mean(typed: str, known: Iterable[str]) -> str:
    """`` (did you mean 'mcts'?)`` for the known name closest to ``typed`` (a typo such as ``mtcs``), or ``""``
    when none is close or ``typed`` is too long to be a typo of one.

    Returns:
        The text to append to an "unknown ..." message.
    """
    names = [str(name) for name in known]
    if not isinstance(typed, str) or len(typed) > 2 * max(map(len, names), default=0) + 2:
        return ""
    close = difflib.get_close_matches(typed, names, n=1, cutoff=0.6)
    if not close:  # a wrong case alone ("MCTS") is not always within the cutoff
        close = [name for name in names if name.lower() == typed.lower()][:1]
    return f" (did you mean {close[0]!r}?)" if close else ""


def import_spec_module(module_name: str) -> ModuleType:
    """Import ``module_name``, named by the user in an agent spec (``text:mybot:answer``) or a registered
    ``"module:attr"``, looking in the current folder too, as ``python -m`` does.

    The ``connect4`` command starts with its own folder on the import path, not the one it is run from, so
    ``mybot.py`` next to the user would not be found. When the module is not found on the import path, the
    current folder is added at the end of ``sys.path`` and the import tried again; the folder stays there, so
    the module's own imports of its neighbours work later too. Added at the end, it never hides an installed
    module of the same name.

    Returns:
        The module.

    Raises:
        TypeError: ``module_name`` is not a str.
        ValueError: ``module_name`` is not a dotted name of identifiers (``mypkg.llm``).
        ModuleNotFoundError: neither the import path nor the current folder holds it (the message says where
            it looked and what to do; ``name`` is the missing top-level name, ``mypkg`` for ``mypkg.llm``),
            or a module it names or imports is missing (Python's own error).
    """
    if not isinstance(module_name, str):
        raise TypeError(
            f"a module name must be a str, got {module_name!r:.80} ({type(module_name).__name__})"
        )
    if not all(part.isidentifier() for part in module_name.split(".")):
        raise ValueError(f"{module_name!r:.80} is not a module name such as 'mypkg.llm'")
    top = module_name.partition(".")[0]
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name != top:
            raise  # the module is there; a part of it or something it imports is not
    if not _current_folder_on_path():
        sys.path.append(os.getcwd())
        importlib.invalidate_caches()
        try:
            return importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name != top:
                raise
    raise ModuleNotFoundError(
        f"no module named {top!r} on the import path nor in the current folder ({os.getcwd()}): run the "
        f"command from the folder that holds {top}.py (or the package {top}/), or add that folder to PYTHONPATH",
        name=top,
    ) from None


def _current_folder_on_path() -> bool:
    """True when ``sys.path`` already searches the current folder (as ``""`` or its path: ``python -m`` and
    ``python -c`` put it there).
    """
    here = os.getcwd()
    return any(isinstance(entry, str) and os.path.abspath(entry) == here for entry in sys.path)


_POLICIES: EntryPointRegistry[Callable[..., Any]] = EntryPointRegistry(
    ENTRY_POINT_GROUP, "agent", importer=import_spec_module, table=lambda: _REGISTRY
)


def _factory(name: str) -> Callable[..., Any]:
    if not isinstance(name, str):
        raise TypeError(
            f"an agent name must be a str such as 'mcts', got {name!r:.80} ({type(name).__name__})"
        )
    if name not in _POLICIES:
        raise ValueError(
            f"unknown agent {name!r:.80}{did_you_mean(name, policy_names())}; known agents: "
            f"{', '.join(policy_names())}"
        )
    return _POLICIES.load(name)


def make_policy(name: str, **kwargs: Any) -> Any:
    """Build the policy registered as ``name`` with ``kwargs``.

    Raises:
        TypeError: ``name`` is not a str.
        ValueError: no policy has that name (the message lists the known ones), or its ``"module:attr"`` names
            no module or attribute; the factory's own errors.
    """
    return _factory(name)(**kwargs)


def policy_from_spec(spec: str, seed: int | None = None, rules: Rules | None = None) -> Any:
    """Build a policy from a command-line spec, ``"name"`` or ``"name:value"``, bound to ``rules`` if given.

    The value is the policy's main setting, read by its ``from_spec``: ``mcts:200`` (playouts),
    ``qlearning:table.npz`` (a saved table), ``sb3:model.zip`` (a saved model). ``seed`` goes to policies
    that take one.

    Raises:
        TypeError: ``spec`` is not a string.
        ValueError: an unknown name, a value missing where the policy needs one or that it cannot take (the
            message shows the spec's forms, such as ``text:<module>:<function>``), a number written with digits
            other than ASCII 0-9 (``mcts:٥``), or a policy that cannot play ``rules``.
    """
    if not isinstance(spec, str):
        raise TypeError(f"an agent spec must be a string such as 'mcts:200', got {spec!r}")
    name, colon, value = spec.partition(":")
    factory = _factory(name)
    kwargs: dict[str, Any] = {}
    if seed is not None and _takes_seed(factory):
        kwargs["seed"] = seed
    if colon:
        from_spec = getattr(factory, "from_spec", None)
        if not callable(from_spec):
            raise ValueError(f"agent spec {spec!r}: {name!r} takes no ':value'")
        if not value:
            raise ValueError(
                f"agent spec {spec!r}: the value after ':' is empty; write {_spec_forms(name, factory)}"
            )
        _check_ascii_digits(spec, value)
        policy = from_spec(value, **kwargs)
    else:
        try:
            policy = factory(**kwargs)
        except TypeError as error:  # a required argument missing: the spec needs its value
            if not _needs_value(factory) or "required" not in str(error):
                raise
            raise ValueError(
                f"agent spec {spec!r} needs a value after ':' (the policy has no default): write "
                f"{_spec_forms(name, factory)}"
            ) from None
    return policy if rules is None else bind_policy(policy, rules)


def _spec_forms(name: str, factory: Callable[..., Any]) -> str:
    """The spec forms ``factory.from_spec``'s docstring shows (``text:<module>:<function>``), or
    ``name:<value>``: what to write when a spec's value is missing.
    """
    doc = inspect.getdoc(getattr(factory, "from_spec", None)) or ""
    forms = list(dict.fromkeys(re.findall(r'``"?(' + re.escape(name) + r':[^`"\s]+)"?``', doc)))
    placeholders = [form for form in forms if "<" in form]  # forms, not examples such as mcts:0.1s
    return " or ".join(placeholders or forms) or f"{name}:<value>"


def _check_ascii_digits(spec: str, value: str) -> None:
    """Refuse a number in a spec's value written with digits other than ASCII 0-9 (``mcts:٥``, Arabic-Indic
    five, or full-width ``５``), which Python's ``int`` and ``float`` would read as 5; a value that names an
    existing file is left alone, whatever its name.

    Raises:
        ValueError: a ``:``-separated part of ``value`` holds a non-ASCII digit, or reads as a number only
            thanks to non-ASCII characters (Unicode spaces around it).
    """
    if value.isascii() or Path(value).exists():
        return
    head, _, tail = value.rpartition(":")
    parts = [tail] if head and Path(head).exists() else value.split(":")
    for part in parts:
        if part.isascii():
            continue
        digits = [c for c in part if c.isdigit() and not c.isascii()]
        try:
            float(part[:-1] if part.endswith("s") else part)
            number = True
        except ValueError:
            number = False
        if digits or number:
            shown = ", ".join(f"{c!r} ({unicodedata.name(c, 'unnamed')})" for c in dict.fromkeys(digits))
            raise ValueError(
                f"agent spec {spec!r}: {part!r} holds {shown or 'characters other than ASCII'}; write the "
                "numbers in a spec with the ASCII digits 0-9 alone"
            )


def _needs_value(factory: Callable[..., Any]) -> bool:
    """True if ``factory`` has a required argument (other than ``seed``): it cannot be built from its name alone."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # no signature to read: let the call say
        return False
    return any(
        p.default is inspect.Parameter.empty
        and p.kind
        in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            inspect.Parameter.KEYWORD_ONLY,
        )
        and p.name not in ("self", "seed")
        for p in parameters
    )


def _takes_seed(factory: Callable[..., Any]) -> bool:
    try:
        return "seed" in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False


def resolve_opponent(
    opponent: Any, opponent_kwargs: dict[str, Any] | None = None, rules: Rules | None = None
) -> Any:
    """An object with ``act(observation, action_mask)``, a registered name (``"random"``, with
    ``opponent_kwargs``), or a spec (``"mcts:200"``, ``"qlearning:table.npz"``, ``"sb3:model.zip"``), bound to
    ``rules`` when given.

    Raises:
        TypeError: ``opponent`` is neither a name nor an object with ``act``, or ``opponent_kwargs`` is not a
            dict.
        ValueError: an unknown name, kwargs with a spec or an object, or an opponent that cannot play
            ``rules``.
    """
    if opponent_kwargs is not None and not isinstance(opponent_kwargs, dict):
        raise TypeError(f"opponent_kwargs must be a dict or None, got {type(opponent_kwargs).__name__}")
    if isinstance(opponent, str):
        if ":" in opponent:
            if opponent_kwargs:
                raise ValueError("opponent_kwargs cannot be combined with an agent spec such as 'mcts:200'")
            policy = policy_from_spec(opponent)
        elif opponent_kwargs:
            policy = make_policy(opponent, **opponent_kwargs)
        else:  # a bare name is a spec too: one that needs its value ("text") says what to write
            policy = policy_from_spec(opponent)
    elif callable(getattr(opponent, "act", None)):
        if opponent_kwargs:
            raise ValueError("opponent_kwargs only apply when opponent is given by name")
        policy = opponent
    else:
        raise TypeError(
            f"opponent must be an agent name (e.g. 'random') or an object with act(observation, action_mask), "
            f"got {opponent!r}"
        )
    return policy if rules is None else bind_policy(policy, rules)
