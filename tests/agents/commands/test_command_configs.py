"""Every command's options are declared once, in its config dataclass: the parser has one option per field and
nothing else, with the field's default; the help texts say what, not how fast; the commands page of the
documentation lists the same options with the same defaults (generated from the dataclasses, checked here).

``python tests/agents/commands/test_command_configs.py`` rewrites the page's generated part after a config changes.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from connect4_agents._support.config_cli import from_args, options_markdown
from connect4_agents.commands import COMMANDS, SUBCOMMANDS

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "commands.md"
BEGIN = "<!-- options: begin -->"
END = "<!-- options: end -->"
# the values a command cannot run without, by its name in the docs: positional arguments and required options
# (a tournament's two agents)
REQUIRED = {
    "evaluate": ["random"],
    "grade": ["random"],
    "audit": ["games.jsonl"],
    "perfect": ["random"],
    "exploit": ["random"],
    "replay": ["games.jsonl"],
    "tournament": ["random", "mcts:10"],
    "kaggle-submission": ["mcts"],
    "match match": [],
}
# Every option spelling the commands had before their options moved into dataclasses: each must still parse.
SPELLINGS = {
    "play": "--player0 --player1 --rows --columns --win-length --seed --ui --record --screenshot --exit-at-end "
    "--delay",
    "tournament": "--games --rows --columns --win-length --seed --gauntlet --ladder --anchor --bootstrap --backend "
    "--workers --address --json --out --games-out --plot --no-progress",
    "evaluate": "--test-sets --plies --sample --seed --backend --workers --address --json --plot --no-progress",
    "grade": "--opponent --games --rows --columns --win-length --sets --no-sets --sample --seed --workers --out "
    "--no-plot --no-progress",
    "audit": "--json --listed",
    "perfect": "--games --second-games --rows --columns --win-length --seed --out --no-progress",
    "exploit": "--cpu-minutes --timesteps --rows --columns --win-length --n-envs --eval-freq --eval-games "
    "--confirm-games --features --hyperparameters --seed --out --quiet",
    "train-sb3": "--algo --opponent --rows --columns --win-length --timesteps --n-envs --seed --out --eval-freq "
    "--eval-games --eval-opponents --snapshot-freq --features --threads --hyperparameters --quiet",
    "train-alphazero": "--rows --columns --win-length --channels --blocks --generations --games --parallel "
    "--simulations --c-puct --dirichlet-alpha --noise --temperature-moves --buffer-size --steps --batch-size --lr "
    "--weight-decay --workers --eval-positions --eval-simulations --ladder-every --ladder-games --seed --precision "
    "--subtree-reuse --no-subtree-reuse --evaluation-cache --teacher --teacher-explore --init --device "
    "--playout-cap --fast-simulations --value-mix --out --resume --backend --address --no-progress",
    "train-rllib": "--iterations --rows --columns --win-length --env-runners --batch-size --minibatch-size "
    "--epochs --hidden --seed --address --num-cpus --out --checkpoint-every --eval-games --eval-opponents",
    "train-ntuple": "--cpu-minutes --games --out --fresh --rows --columns --win-length --tuples --length --alpha "
    "--alpha-final --trace-decay --epsilon --epsilon-final --seed --curve-points --curve-games --final-games --quiet",
    "replay": "-o --out --title --no-verdicts --no-progress",
    "kaggle-submission": "-o --out --move-seconds --seed --no-endgame",
    "make-test-sets": "--seed --sets --out",
    "serve-openenv": "--host --port --opponent --agent-first --invalid-answer --max-retries --rows --columns "
    "--win-length --max-sessions --session-timeout --session-rate --max-body-bytes --allow-origin",
    "serve-grader": "--host --port --max-items --max-answer-length --max-pending --grade-timeout --request-timeout "
    "--max-connections --allow-origin",
    "match mcts-vs-mcts": "--rows --columns --win-length --seed --playouts0 --playouts1 --c0 --c1 --games "
    "--games-out",
    "match train": "--rows --columns --win-length --seed --opponent --episodes --preset --alpha --gamma --epsilon "
    "--epsilon-min --exploration-fraction --epsilon-decay --rewards --window --out --quiet",
    "match match": "--table --seed --out --mcts-playouts --c --games --games-out",
    "match demo": "--rows --columns --win-length --seed --opponent --episodes --preset --alpha --gamma --epsilon "
    "--epsilon-min --exploration-fraction --epsilon-decay --rewards --window --out --quiet --mcts-playouts --c "
    "--games --games-out",
}
# What a help text must not hold: speeds, durations and the machine they were measured on are measurements
# (docs/benchmarks.md, docs/design/notes.md). A setting in seconds is no measurement ("seconds before each move").
MEASUREMENT = re.compile(
    "|".join(
        [
            r"/s\b|/hour|per (second|minute|hour)",  # rates: steps/s, games/hour
            r"\b(faster|slower|fastest|slowest|quicker)\b",  # comparisons: 1.4x faster, many times slower
            r"(?<![:\w.])\d[\d,]*(\.\d+)?\s?(s|ms|seconds?|minutes?|hours?)\b",  # durations: 43 s (not mcts:0.1s)
            r"\b(a|an|one|two|few|ten)\s+(minutes?|hours?)\b",  # durations in words: about ten minutes
            r"\bon (one|two|\d+) (cores?|cpus?|gpus?)\b|\b\d+-core\b",  # machines: on 2 cores, a 2-core Xeon
        ]
    ),
    re.IGNORECASE,
)


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"connect4_agents.commands.{name}")


def _parsers() -> list[tuple[str, argparse.ArgumentParser, type]]:
    """Every parser a user meets, named as the docs name it (``match demo``), with the dataclass behind it."""
    found = []
    for name in COMMANDS:
        module = _module(name)
        parser = module.build_parser()
        if name == "mcts_vs_qlearning":
            (modes,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
            assert list(modes.choices) == list(module.MODE_CONFIGS)
            for mode, sub in modes.choices.items():
                found.append((f"{SUBCOMMANDS[name]} {mode}", sub, module.MODE_CONFIGS[mode]))
        else:
            found.append((SUBCOMMANDS[name], parser, module.CONFIG))
    return found


PARSERS = _parsers()
IDS = [name for name, _, _ in PARSERS]


def _normal(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value


@pytest.mark.parametrize(("name", "parser", "config_class"), PARSERS, ids=IDS)
def test_the_parser_is_its_dataclass_one_option_per_field(
    name: str, parser: argparse.ArgumentParser, config_class: type
) -> None:
    shown = [
        action
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction) and action.help != argparse.SUPPRESS
    ]
    # every field a user sets an option, in order, and nothing else (a field the config derives, such as its
    # Rules, is no option)
    fields = [item.name for item in dataclasses.fields(config_class) if item.init]
    assert [action.dest for action in shown] == fields
    # hidden earlier spellings write a field too
    assert {action.dest for action in parser._actions if action.help == argparse.SUPPRESS} <= set(fields)
    for action in shown:
        item = next(f for f in dataclasses.fields(config_class) if f.name == action.dest)
        default = item.default_factory() if item.default_factory is not dataclasses.MISSING else item.default
        if action.option_strings and not action.required:
            assert _normal(action.default) == default, action.dest


@pytest.mark.parametrize(("name", "parser", "config_class"), PARSERS, ids=IDS)
def test_parsing_only_what_is_required_gives_the_dataclass_defaults(
    name: str, parser: argparse.ArgumentParser, config_class: type
) -> None:
    argv = REQUIRED.get(name, [])
    config = from_args(config_class, parser.parse_args(argv))
    given = {
        action.dest: _normal(getattr(config, action.dest))
        for action in parser._actions
        if action.required or not action.option_strings  # the options and positional arguments given
    }
    assert config == config_class(**given)


@pytest.mark.parametrize("name", SPELLINGS)
def test_every_earlier_option_spelling_still_parses(name: str) -> None:
    parser = next(parser for parsed, parser, _ in PARSERS if parsed == name)
    known = {spelling for action in parser._actions for spelling in action.option_strings}
    assert set(SPELLINGS[name].split()) <= known, sorted(set(SPELLINGS[name].split()) - known)


def test_every_parser_has_its_earlier_spellings_listed() -> None:
    assert set(SPELLINGS) == set(IDS)


@pytest.mark.parametrize(("name", "parser", "config_class"), PARSERS, ids=IDS)
def test_help_texts_hold_no_measurement(
    name: str, parser: argparse.ArgumentParser, config_class: type
) -> None:
    text = " ".join(parser.format_help().split())
    found = [match.group(0) for match in MEASUREMENT.finditer(text)]
    assert not found, f"connect4 {name} --help: {found}"


@pytest.mark.parametrize(
    "text",
    [
        "about 1.4x faster forward passes",
        "many times slower on CPUs",
        "in 43 s here",
        "about a minute on 2 cores",
        "1,200 steps/s",
        "take about ten minutes each on one core here, the smaller boards' seconds.",
        "5,000 games/hour",
        "on a 2-core Xeon",
    ],
)
def test_the_measurement_pattern_catches_speeds(text: str) -> None:
    assert MEASUREMENT.search(text), text


@pytest.mark.parametrize(
    "text",
    [
        "seconds before each agent's move (default 0.5)",
        "the most seconds a move searches (default: Kaggle's actTimeout less 0.4)",
        "idle seconds before a session is dropped (default 600)",
        "mcts:<seconds>s, mcts:0.1s",
        "two 3x3 convolutions over the board",
        "new sessions a second, on average (default 20)",
        "where self-play runs: processes here, or Ray",
        "bfloat16 (emulated, with a warning, on CPUs without it)",
    ],
)
def test_the_measurement_pattern_spares_settings(text: str) -> None:
    assert not MEASUREMENT.search(text), text


def expected_options_section() -> str:
    """The generated part of the commands page: per command (and per mode of ``match``), its options."""
    parts = [BEGIN, ""]
    for name, _, config_class in PARSERS:
        parts += [f"### `connect4 {name}`", "", options_markdown(config_class)]
    parts.append(END)
    return "\n".join(parts)


def _section(text: str) -> str:
    start, end = text.find(BEGIN), text.find(END)
    assert 0 <= start < end, f"{PAGE} has no generated options section ({BEGIN} ... {END})"
    return text[start : end + len(END)]


def test_the_commands_page_lists_every_option_with_its_default_and_nothing_else() -> None:
    assert _section(PAGE.read_text()) == expected_options_section(), (
        "docs/commands.md's options differ from the commands' config dataclasses: "
        "run .venv/bin/python tests/agents/commands/test_command_configs.py to rewrite them"
    )


def test_the_commands_page_names_no_option_that_does_not_exist() -> None:
    """Outside the generated tables, the page's prose names options too: each is a command's."""
    text = PAGE.read_text().replace(_section(PAGE.read_text()), "")
    known = {
        spelling
        for _, parser, _ in PARSERS
        for action in parser._actions
        for spelling in action.option_strings
    }
    named = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text))
    assert named - {"--help", "--version"} <= known, sorted(named - known)


if __name__ == "__main__":  # rewrite the page's generated section
    text = PAGE.read_text()
    PAGE.write_text(text.replace(_section(text), expected_options_section()))
    print(f"rewrote the options section of {PAGE.relative_to(ROOT)}", file=sys.stderr)
