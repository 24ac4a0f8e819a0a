"""Every command that takes an agent spec lists every kind of spec in its help, generated from the policy
registry (so a kind registered later, here or by another package, is listed without editing a help text), in
the forms each agent's ``from_spec`` documents; a subcommand's help names commands, not scripts; the docs' spec
table and the commands page name every kind too."""

from __future__ import annotations

import argparse
import inspect
import re
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import connect4_env.policy
from connect4_agents._support.cli import SPEC_FORMS, agent_specs_help
from connect4_agents.commands import build_parser
from connect4_env.extras import MissingExtraError
from connect4_env.policy import ENTRY_POINT_GROUP, policy_from_spec, policy_names

ROOT = Path(__file__).resolve().parents[3]
# this project's kinds: the connect4_agents entry points of pyproject.toml
OURS = {
    point.name: point
    for point in entry_points(group=ENTRY_POINT_GROUP)
    if point.value.startswith("connect4_agents.")
}
# options that take agent specs, by their namespace name; any option whose help says "agent spec" counts too
SPEC_OPTIONS = {
    "player0",
    "player1",
    "agents",
    "gauntlet",
    "spec",
    "opponent",
    "eval_opponents",
    "league_members",
}
# the helps a user meets that take agent specs (found below from their options; listed here so that a command
# losing or gaining one is noticed)
TAKE_SPECS = {
    "play", "tournament", "evaluate", "grade", "perfect", "exploit", "train-sb3", "train-rllib",
    "kaggle-submission", "serve-openenv", "match train", "match demo",
}  # fmt: skip


def _helps() -> dict[str, argparse.ArgumentParser]:
    """Every ``connect4`` subcommand's parser (and each mode of ``match``), named as the user types it."""
    found: dict[str, argparse.ArgumentParser] = {}
    (commands,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    for name, parser in commands.choices.items():
        modes = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if modes:
            found.update({f"{name} {mode}": sub for mode, sub in modes[0].choices.items()})
        else:
            found[name] = parser
    return found


HELPS = _helps()


def _takes_specs(parser: argparse.ArgumentParser) -> bool:
    return any(
        action.dest in SPEC_OPTIONS or "agent spec" in (action.help or "").lower()
        for action in parser._actions
    )


def _listed_kinds(help_text: str) -> set[str]:
    """The kinds the help's agent-spec paragraph names: the name before each form's ``:``, ``[`` or end."""
    text = " ".join(help_text.split())
    start = text.find("Agent specs (every kind installed")
    assert start >= 0, f"no agent-spec paragraph in: {text[-600:]}"
    listed = text[start:].split(": ", 1)[1].rstrip(".")
    return {
        form.strip().split(":")[0].split("[")[0] for kind in listed.split(";") for form in kind.split(",")
    }


def test_the_commands_that_take_agent_specs_are_the_ones_listed() -> None:
    assert {name for name, parser in HELPS.items() if _takes_specs(parser)} == TAKE_SPECS


@pytest.mark.parametrize("name", sorted(TAKE_SPECS))
def test_every_registered_kind_is_in_the_help_of_every_command_that_takes_a_spec(name: str) -> None:
    assert _listed_kinds(HELPS[name].format_help()) == set(policy_names())
    assert set(policy_names()) >= set(OURS) >= {"alphazero", "text", "ntuple", "shield", "mcts", "solver"}


def test_a_kind_another_package_registers_is_listed_too(monkeypatch: pytest.MonkeyPatch) -> None:
    policy_names()  # the registry reads the entry points on first use
    monkeypatch.setitem(connect4_env.policy._REGISTRY, "otherbot", "otherpkg.agents:OtherBot")
    text = " ".join(agent_specs_help().split())
    assert "; otherbot[:<value>]; " in text
    assert "otherbot" in _listed_kinds(_helps()["play"].format_help())  # as `connect4 play --help` builds it


def test_every_kind_of_ours_has_its_forms() -> None:
    assert set(SPEC_FORMS) == set(OURS)
    for name, forms in SPEC_FORMS.items():
        assert all(form == name or form.startswith(f"{name}:") for form in forms), name


@pytest.mark.parametrize("name", sorted(SPEC_FORMS))
def test_the_forms_are_those_the_agent_documents_and_takes(name: str) -> None:
    try:
        factory = OURS[name].load()
    except (ImportError, MissingExtraError) as error:  # torch for AlphaZero, on a core install
        pytest.skip(f"{name}'s agent needs an extra: {error}")
    forms = SPEC_FORMS[name]
    if name in forms:  # the bare name is listed only where it builds the agent
        assert policy_from_spec(name) is not None
    elif name != "qlearning":  # (bare, it is a fresh, untrained table: not listed)
        with pytest.raises((TypeError, ValueError)):
            policy_from_spec(name)
    from_spec = getattr(factory, "from_spec", None)
    documented = re.findall(r'``"?(' + re.escape(name) + r':[^`"\s]+)"?``', inspect.getdoc(from_spec) or "")
    assert [form for form in forms if ":" in form] == [
        form for form in dict.fromkeys(documented) if "<" in form
    ]


def test_no_subcommand_help_names_a_script() -> None:
    # `connect4 replay --help` said `python scripts/tournament.py ...`: a subcommand's help names subcommands
    for name, parser in [("connect4", build_parser()), *HELPS.items()]:
        assert "scripts/" not in parser.format_help(), name
    (commands,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    replay = commands.choices["replay"].format_help()
    assert "connect4 tournament mcts:100 solver --games 4 --games-out games.jsonl" in replay


def test_the_docs_spec_table_shows_every_form() -> None:
    table = (ROOT / "docs" / "agents" / "index.md").read_text()
    rows = set(re.findall(r"^\| `([^`]+)` \|", table, re.MULTILINE))
    missing = [form for forms in SPEC_FORMS.values() for form in forms if form not in rows]
    assert not missing, f"docs/agents/index.md's spec table lacks {missing}"


def test_the_commands_page_names_every_kind() -> None:
    text = (ROOT / "docs" / "commands.md").read_text()
    paragraph = text[text.index("Agent specs are the same everywhere") :].split("\n\n")[0]
    named = {form.split(":")[0] for form in re.findall(r"`([a-z0-9]+(?::[^`]*)?)`", paragraph)}
    assert set(OURS) <= named, sorted(set(OURS) - named)
