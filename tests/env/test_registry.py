"""connect4_env.registry: names from an entry-point group and from run time, checked when registered, a
``"module:attr"`` imported when its name is used; the agents' and the rewards' registries are two of them."""

from __future__ import annotations

import threading
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

import pytest

from connect4_env import policy, rewards
from connect4_env.registry import EntryPointRegistry


def _registry(**kwargs: Any) -> EntryPointRegistry[Callable[..., Any]]:
    return EntryPointRegistry(policy.ENTRY_POINT_GROUP, "agent", **kwargs)


def test_the_entry_points_are_read_on_first_use_and_a_name_registered_at_run_time_wins() -> None:
    declared = {point.name: point.value for point in entry_points(group=policy.ENTRY_POINT_GROUP)}
    table: dict[str, Any] = {"random": "json:dumps"}  # already in the table: kept over the declared one
    registry = _registry(table=lambda: table)
    assert table == {"random": "json:dumps"}  # nothing read yet
    assert registry.names() == sorted({*declared, "random"}) and "mcts" in registry
    assert table["mcts"] == declared["mcts"] and table["random"] == "json:dumps"
    registry.register("mcts", "json:loads")  # after the entry points: replaces the declared one
    assert registry.load("mcts").__name__ == "loads" and registry.load("random").__name__ == "dumps"


def test_a_callable_is_kept_and_a_module_attr_imported_when_used() -> None:
    registry = _registry()
    registry.register("plain", dict)
    registry.register("later", "no_such_module_for_the_registry:Thing")  # nothing imported yet
    registry.register("noattr", "json:NoSuchThing")
    assert registry.load("plain") is dict
    with pytest.raises(ValueError, match="agent 'later' is registered as .* there is no module"):
        registry.load("later")
    with pytest.raises(
        ValueError, match="agent 'noattr' is registered as 'json:NoSuchThing', but json has no"
    ):
        registry.load("noattr")
    with pytest.raises(KeyError):
        registry.load("unknown")


def test_a_module_that_lacks_a_dependency_keeps_its_own_error() -> None:
    def importer(name: str) -> Any:
        raise ModuleNotFoundError("No module named 'its_dependency'", name="its_dependency")

    registry = _registry(importer=importer)
    registry.register("needy", "json:loads")
    with pytest.raises(ModuleNotFoundError, match="its_dependency"):
        registry.load("needy")


@pytest.mark.parametrize(
    ("name", "entry_point", "error", "message"),
    [
        (3, "a:b", TypeError, r"a reward name must be a str, got 3 \(int\)"),
        ("", "a:b", ValueError, "must be non-empty, hold no ':' and not be 'outcome'"),
        ("a:b", "a:b", ValueError, "hold no ':'"),
        ("outcome", "a:b", ValueError, "not be 'outcome'"),
        ("fine", "no_colon", ValueError, "must have the form 'module:attr'"),
        ("fine", ":attr", ValueError, "must have the form 'module:attr'"),
        ("fine", 3, TypeError, "factory must be a 'module:attr' string or callable, got 3"),
    ],
)
def test_a_bad_registration_is_refused(name: Any, entry_point: Any, error: type, message: str) -> None:
    table: dict[str, Any] = {}
    registry: EntryPointRegistry[Callable[..., Any]] = EntryPointRegistry(
        rewards.ENTRY_POINT_GROUP, "reward", reserved=("outcome",), table=lambda: table
    )
    with pytest.raises(error, match=message):
        registry.register(name, entry_point)
    assert "fine" not in table


def test_the_agents_registry_says_agent() -> None:
    with pytest.raises(TypeError, match=r"an agent name must be a str, got None"):
        policy.register_policy(None, "a:b")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="agent name 'a:b' must be non-empty and hold no ':'$"):
        policy.register_policy("a:b", "a:b")


def test_many_threads_at_first_use_all_see_the_entry_points() -> None:
    registry = _registry()
    start = threading.Barrier(8)
    seen: list[list[str]] = []

    def first_use() -> None:
        start.wait()
        seen.append(registry.names())

    threads = [threading.Thread(target=first_use) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 8 and all(names == seen[0] and "mcts" in names for names in seen)


def test_the_modules_keep_their_registries_in_their_globals() -> None:
    assert policy._registry() is policy._REGISTRY and rewards._registry() is rewards._REGISTRY
    assert policy.policy_names() == sorted(policy._REGISTRY)
    assert rewards.rubric_names() == sorted(rewards._REGISTRY) and "solver" in rewards.rubric_names()
