"""Options built from a config dataclass (connect4_agents._support.config_cli): each kind of field as the option
a user types, back into the dataclass, and a field without a docstring refused."""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connect4_agents._support.cli import positive_int
from connect4_agents._support.config_cli import add_options, field_docs, from_args, option, options_markdown


@dataclass
class Settings:
    """Every kind of field a command declares."""

    count: int = 3
    """How many."""
    rate: float = 0.5
    """A share of 100% (a percent sign in a help text)."""
    name: str = "plain"
    """A ``name`` with [`Markdown`][connect4_agents._support.config_cli.option] in it."""
    limit: int | None = None
    """At most this many (default: no limit)."""
    verbose: bool = False
    """Say more."""
    reuse: bool = True
    """Reuse the tree."""
    progress: bool = field(default=True, metadata=option(flags=("--quiet",), negated=True))
    """A progress bar; ``--quiet`` turns it off."""
    specs: tuple[str, ...] = ("random", "mcts:100")
    """Agent specs."""
    sizes: tuple[int, ...] = field(default=(8, 8), metadata=option(type=positive_int))
    """Layer sizes."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Extra arguments as a JSON object."""
    mode: Literal["fast", "slow"] = "fast"
    """Which way."""
    backend: str = field(default="process", metadata=option(choices=("process", "ray")))
    """Where it runs."""
    games: int = field(default=20, metadata=option(type=positive_int))
    """Games per pairing."""
    origin: tuple[str, ...] = field(default=(), metadata=option(append=True, metavar="ORIGIN"))
    """An origin; repeat for more."""
    out: str = field(default="out.html", metadata=option(flags=("-o", "--out"), hidden_flags=("--output",)))
    """The file to write."""


@dataclass
class WithPositionals:
    """Positional arguments: one that must be given and any number of others."""

    first: str = field(default="", metadata=option(positional=True))
    """The first word."""
    rest: tuple[str, ...] = field(default=(), metadata=option(positional=True, nargs="*"))
    """Any more words."""
    table: str = field(default="", metadata=option(required=True))
    """A table that must be named."""


@dataclass
class Undocumented:
    """A config with one field that says nothing."""

    documented: int = 1
    """Says what it is."""
    silent: int = 2


@dataclass
class Base:
    """A base whose field a subclass redeclares."""

    rows: int = 6
    """Board rows."""
    seed: int = 0
    """Seed of the base."""


@dataclass
class Derived(Base):
    """Redeclares ``rows`` (docstring inherited) and ``seed`` (docstring its own)."""

    rows: int = 4
    seed: int = 1
    """Seed of the derived."""


def _parser(config_class: type) -> argparse.ArgumentParser:
    return add_options(argparse.ArgumentParser(prog="test"), config_class)


def _usage_error(parser: argparse.ArgumentParser, argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_info:
        parser.parse_args(argv)
    assert exit_info.value.code == 2
    return capsys.readouterr().err


def test_no_options_give_the_dataclass_defaults() -> None:
    args = _parser(Settings).parse_args([])
    assert from_args(Settings, args) == Settings()
    assert args.specs == ["random", "mcts:100"]  # a list in the namespace, as argparse gives a typed one
    assert from_args(Settings, args).specs == ("random", "mcts:100")


def test_each_kind_of_field_reads_what_a_user_types() -> None:
    argv = [
        *(
            "--count",
            "7",
            "--rate",
            "0.25",
            "--name",
            "x",
            "--limit",
            "9",
            "--verbose",
            "--no-reuse",
            "--quiet",
        ),
        *("--specs", "solver", "random", "--sizes", "4", "2", "--extra", '{"gamma": 0.9}', "--mode", "slow"),
        *(
            "--backend",
            "ray",
            "--games",
            "5",
            "--origin",
            "http://a:1",
            "--origin",
            "http://b:2",
            "-o",
            "p.html",
        ),
    ]
    config = from_args(Settings, _parser(Settings).parse_args(argv))
    assert config == Settings(
        count=7,
        rate=0.25,
        name="x",
        limit=9,
        verbose=True,
        reuse=False,
        progress=False,
        specs=("solver", "random"),
        sizes=(4, 2),
        extra={"gamma": 0.9},
        mode="slow",
        backend="ray",
        games=5,
        origin=("http://a:1", "http://b:2"),
        out="p.html",
    )


def test_an_earlier_spelling_is_read_but_not_shown(capsys: pytest.CaptureFixture[str]) -> None:
    parser = _parser(Settings)
    assert parser.parse_args(["--output", "old.html"]).out == "old.html"
    assert parser.parse_args([]).out == "out.html"  # the hidden spelling does not reset the default
    assert "--output" not in parser.format_help() and "-o OUT, --out OUT" in parser.format_help()


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--count", "x"], "invalid int value"),
        (["--games", "0"], "must be at least 1"),
        (["--sizes", "4", "-1"], "must be at least 1"),
        (["--extra", "[1]"], "is not a JSON object"),
        (["--extra", "{"], "is not JSON"),
        (["--mode", "medium"], "invalid choice: 'medium'"),
        (["--backend", "rya"], "(did you mean"),
        (["--verbose", "yes"], "unrecognized arguments: yes"),
        (["--quiet=1"], "ignored explicit argument"),
    ],
)
def test_a_bad_value_is_a_usage_error(argv: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    from connect4_agents._support.cli import CommandParser

    parser = add_options(CommandParser(prog="test"), Settings)  # the commands' parser: did-you-mean hints
    assert said in _usage_error(parser, argv, capsys)


def test_the_help_is_the_docstring_with_the_default() -> None:
    parser = _parser(Settings)
    helps = {action.dest: action.help for action in parser._actions}
    assert helps["count"] == "how many (default 3)"
    assert helps["rate"] == "a share of 100%% (a percent sign in a help text) (default 0.5)"  # % escaped
    assert helps["name"] == "a name with Markdown in it (default plain)"  # Markdown as plain text
    assert helps["limit"] == "at most this many (default: no limit)"  # None: the docstring says it
    assert helps["verbose"] == "say more"  # a switch shows no default
    assert helps["reuse"] == "reuse the tree (default on)"
    assert helps["specs"] == "agent specs (default random mcts:100)"
    assert helps["extra"] == "extra arguments as a JSON object"  # an empty default shows nothing
    text = parser.format_help()
    assert "100% (a percent sign" in text and "--reuse, --no-reuse" in text and "--mode {fast,slow}" in text


def test_positional_and_required_arguments() -> None:
    parser = _parser(WithPositionals)
    config = from_args(WithPositionals, parser.parse_args(["a", "b", "c", "--table", "t.npz"]))
    assert config == WithPositionals(first="a", rest=("b", "c"), table="t.npz")
    assert from_args(WithPositionals, parser.parse_args(["a", "--table", "t"])).rest == ()
    positionals = [action.dest for action in parser._actions if not action.option_strings]
    assert positionals == ["first", "rest"]


@pytest.mark.parametrize("argv", [[], ["--table", "t"], ["a"]])
def test_a_missing_positional_or_required_option_is_a_usage_error(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert "the following arguments are required" in _usage_error(_parser(WithPositionals), argv, capsys)


def test_a_field_without_a_docstring_is_refused_before_the_parser_changes() -> None:
    parser = argparse.ArgumentParser()
    before = len(parser._actions)
    with pytest.raises(ValueError, match=r"Undocumented\.silent has no docstring"):
        add_options(parser, Undocumented)
    assert len(parser._actions) == before  # not even the documented field was added
    with pytest.raises(ValueError, match="silent"):
        options_markdown(Undocumented)


def test_a_redeclared_field_keeps_its_base_docstring_unless_it_has_its_own() -> None:
    assert field_docs(Derived) == {"rows": "Board rows.", "seed": "Seed of the derived."}
    args = _parser(Derived).parse_args([])
    assert (args.rows, args.seed) == (4, 1)


def test_what_cannot_be_read_from_a_word_is_a_type_error() -> None:
    @dataclass
    class Pair:
        """A fixed-length tuple with no type to read it."""

        plies: tuple[int, int] = (0, 42)
        """A range of plies."""

    with pytest.raises(TypeError, match=r"Pair\.plies: no way to read"):
        add_options(argparse.ArgumentParser(), Pair)
    # a class that is no dataclass: Python's own TypeError (the commands' configs are dataclasses, trusted)
    with pytest.raises(TypeError, match="dataclass"):
        add_options(argparse.ArgumentParser(), dict)


def test_from_args_needs_every_field_and_ignores_the_rest() -> None:
    args = _parser(Base).parse_args([])
    args.command = "play"  # a dispatcher's own attribute
    assert from_args(Base, args) == Base()
    with pytest.raises(AttributeError, match="'seed'"):  # a parser that is not the config's: a bug, named
        from_args(Base, argparse.Namespace(rows=6))


def test_the_markdown_table_has_a_row_per_field() -> None:
    table = options_markdown(Settings).splitlines()
    assert table[:2] == ["| option | default | what it sets |", "|---|---|---|"]
    rows = table[2:]
    assert len(rows) == len(Settings.__dataclass_fields__)
    assert "| `--count` | `3` | How many. |" in rows
    assert "| `--reuse`, `--no-reuse` | `on` | Reuse the tree. |" in rows
    assert "| `--quiet` |  | A progress bar; ``--quiet`` turns it off. |" in rows
    assert "| `--mode {fast,slow}` | `fast` | Which way. |" in rows
    assert "| `-o`, `--out` | `out.html` | The file to write. |" in rows  # the hidden spelling is left out
    positional = options_markdown(WithPositionals).splitlines()[2:]
    assert positional[0] == "| `first` | required | The first word. |"
    assert positional[2] == "| `--table` | required | A table that must be named. |"


@dataclass
class Numbers:
    """Values that go through a command line and back."""

    count: int = 0
    """A count."""
    share: float = 0.0
    """A share."""
    words: tuple[str, ...] = ("a",)
    """Words."""


@given(
    count=st.integers(-(10**12), 10**12),
    share=st.floats(allow_nan=False, allow_infinity=False),
    words=st.lists(st.from_regex(r"[a-z0-9:._]{1,12}", fullmatch=True), min_size=1, max_size=5),
)
def test_any_values_go_through_the_command_line_unchanged(count: int, share: float, words: list[str]) -> None:
    # the reference: the config made directly; the command line: each value written as a user would type it
    argv = [f"--count={count}", f"--share={share!r}", "--words", *words]
    config = from_args(Numbers, _parser(Numbers).parse_args(argv))
    assert config == Numbers(count=count, share=share, words=tuple(words))
    assert math.copysign(1.0, config.share) == math.copysign(1.0, share)  # -0.0 stays -0.0
