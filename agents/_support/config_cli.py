"""Command-line options built from a config dataclass: each setting declared once, its docstring its help.

A command declares its settings as a dataclass whose every field has an attribute docstring (CleanRL's
``Args``). [`add_options`][connect4_agents._support.config_cli.add_options] turns the fields into argparse
options: ``--field-name``, the field's default, its docstring as the help (with the default appended), a type
from the annotation. [`from_args`][connect4_agents._support.config_cli.from_args] builds the dataclass back
from the parsed namespace, and
[`options_markdown`][connect4_agents._support.config_cli.options_markdown] writes the same options as a
Markdown table for the commands page, so that the help, the defaults and the docs come from one place.
[`run_config`][connect4_agents._support.config_cli.run_config] runs a command on the config built from its
parsed options: the config dataclass *is* the arguments (CleanRL's shape), checked once, when it is built.

What a field's type and name do not say (a short flag, a positional argument, a validator, choices, a flag
that turns a setting off) is in its metadata, made by [`option`][connect4_agents._support.config_cli.option].

| annotation | option |
|---|---|
| `int`, `float`, `str`, or one of them or `None` | ``--name VALUE`` of that type |
| `bool`, default `False` | ``--name``, a switch that sets it |
| `bool`, default `True` | ``--name`` / ``--no-name`` (or one flag that clears it: `option(flags=..., negated=True)`) |
| `tuple[X, ...]`, `list[X]` | ``--name X [X ...]`` (a list in the namespace, a tuple in the dataclass) |
| `dict[...]` | a JSON object |
| `Literal[...]` | its values as the choices |
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import functools
import inspect
import re
import textwrap
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, TypeVar, Union

from connect4_agents._support.cli import command_parser, json_object, run_cli, with_agent_specs

__all__ = [
    "Option",
    "option",
    "field_docs",
    "add_options",
    "config_parser",
    "from_args",
    "run_config",
    "options_markdown",
]

T = TypeVar("T")

# the metadata key of a field's Option (a name no other library's metadata uses)
_KEY = "connect4_option"


@dataclasses.dataclass(frozen=True)
class Option:
    """How a config field is spelled on the command line, where its annotation and name do not say it.

    Attributes:
        flags: the option's spellings (default: ``--field-name``), such as ``("-o", "--out")``.
        positional: a positional argument named after the field instead of an option.
        negated: for a `bool` field whose default is `True`: ``flags`` set it to `False` (``--quiet``
            clears ``progress``).
        nargs: argparse's ``nargs`` (default: ``"+"`` for a tuple or list, else one value).
        choices: the values allowed (default: a `Literal` annotation's).
        type: the function that reads a value, such as
            [`positive_int`][connect4_agents._support.cli.positive_int] (default: the annotation's type).
        metavar: the value's name in the help.
        append: the option may be repeated, each value added to the list (argparse's ``append``).
        required: the option must be given.
        hidden_flags: earlier spellings still accepted but not shown in the help.
        more_help: called when the parser is built, its text appended to the help (what only the installed
            package knows, such as the names of the shipped test sets).
        shown_default: the default to show where the field's is `None` because another object owns it
            (such as an agent's own default).
    """

    flags: tuple[str, ...] = ()
    positional: bool = False
    negated: bool = False
    nargs: str | None = None
    choices: tuple[Any, ...] | None = None
    type: Callable[[str], Any] | None = None
    metavar: str | None = None
    append: bool = False
    required: bool = False
    hidden_flags: tuple[str, ...] = ()
    more_help: Callable[[], str] | None = None
    shown_default: str | None = None


def option(**spelling: Any) -> dict[str, Option]:
    """A field's metadata: ``field(default=..., metadata=option(type=positive_int))``.

    Args:
        **spelling: the [`Option`][connect4_agents._support.config_cli.Option] attributes to set.

    Returns:
        The metadata mapping that [`add_options`][connect4_agents._support.config_cli.add_options] reads.

    Raises:
        TypeError: an attribute `Option` does not have.
    """
    return {_KEY: Option(**spelling)}


@functools.cache
def field_docs(config_class: type) -> dict[str, str]:
    """The attribute docstrings of ``config_class``'s fields, read from the source of the class and its bases.

    A field redeclared without a docstring (to change its default) keeps its base class's docstring.

    Args:
        config_class: a dataclass.

    Returns:
        Field name to its docstring (cleaned of indentation), for the fields that have one.
    """
    docs: dict[str, str] = {}
    for klass in reversed(config_class.__mro__):
        if klass is object:
            continue
        try:
            source = inspect.getsource(klass)
        except (OSError, TypeError):  # no source: a class made at run time documents nothing
            continue
        body = ast.parse(textwrap.dedent(source)).body[0]
        if not isinstance(body, ast.ClassDef):
            continue
        for node, after in zip(body.body, body.body[1:]):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[node.target.id] = inspect.cleandoc(after.value.value)
    return docs


@dataclasses.dataclass
class _Spec:
    """One field as an argparse argument: its spellings, argparse's keywords, its help and its default."""

    name: str
    flags: tuple[str, ...]
    kwargs: dict[str, Any]
    doc: str  # the docstring as written (Markdown) and any more_help, for the docs
    shown_default: str  # "" when none is shown
    hidden_flags: tuple[str, ...]


def _unwrap_optional(annotation: Any) -> Any:
    """``X`` for ``X | None`` (the option's value is an X; its default may be None)."""
    if typing.get_origin(annotation) in (Union, types.UnionType):
        members = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(members) == 1:
            return members[0]
    return annotation


def _shown(value: Any) -> str:
    """A default as the help shows it: what a user would type, nothing for an empty one."""
    if value is None or (isinstance(value, (str, tuple, list, dict)) and not value):
        return ""
    if isinstance(value, float):
        return format(value, ".6g")
    if isinstance(value, (tuple, list)):
        return " ".join(_shown(item) for item in value)
    return str(value)


def _default(item: dataclasses.Field[Any]) -> Any:
    if item.default_factory is not dataclasses.MISSING:
        return item.default_factory()  # a fresh one per parser: argparse hands the default out as it is
    return item.default


def _switch(default: Any, spelling: Option) -> tuple[dict[str, Any], str]:
    """The argparse keywords for a bool field, and the default its help shows."""
    if spelling.negated:  # --quiet clears progress
        return {"action": "store_false", "default": default}, ""
    if default is True:  # --subtree-reuse / --no-subtree-reuse
        return {"action": argparse.BooleanOptionalAction, "default": True}, "on"
    return {"action": "store_true", "default": bool(default)}, ""


def _values(annotation: Any, default: Any, spelling: Option) -> tuple[dict[str, Any], Any]:
    """The argparse keywords for a field that takes values, and the type of one value (None: the metadata's)."""
    origin = typing.get_origin(annotation)
    if origin in (tuple, list) or annotation in (tuple, list):
        members = typing.get_args(annotation)
        if origin is list or not members or (len(members) == 2 and members[1] is Ellipsis):
            # one value per word (--eval-opponents random mcts:100), or one per repeated option
            words = {"action": "append"} if spelling.append else {"nargs": spelling.nargs or "+"}
            listed = list(default) if isinstance(default, (tuple, list)) else default
            return {**words, "default": listed}, members[0] if members else str
        return {"default": default}, None  # a fixed-length tuple is one word its type reads (--plies 10-32)
    if origin is dict or annotation is dict:
        return {"default": default}, json_object
    extra = {"nargs": spelling.nargs} if spelling.nargs is not None else {}
    return {**extra, "default": default}, annotation


def _spec(config_class: type, item: dataclasses.Field[Any], hint: Any, doc: str) -> _Spec:
    spelling: Option = item.metadata.get(_KEY, Option())
    where = f"{config_class.__name__}.{item.name}"
    annotation = _unwrap_optional(hint)
    default = _default(item)
    flags = spelling.flags or ("--" + item.name.replace("_", "-"),)
    shown = spelling.shown_default or _shown(default)
    if annotation is bool:
        kwargs, switch_shown = _switch(default, spelling)
        shown = spelling.shown_default or switch_shown
    else:
        kwargs, value_type = _values(annotation, default, spelling)
        choices = spelling.choices
        if typing.get_origin(value_type) is Literal:
            choices = choices or typing.get_args(value_type)
            value_type = type(typing.get_args(value_type)[0])
        reader = spelling.type or value_type
        if reader not in (int, float, str, json_object) and spelling.type is None:
            raise TypeError(f"{where}: no way to read a {hint!r} from a word; give a type in its metadata")
        if reader is not str:
            kwargs["type"] = reader
        if choices is not None:
            kwargs["choices"] = tuple(choices)
        if spelling.metavar is not None:
            kwargs["metavar"] = spelling.metavar
    if spelling.required:
        kwargs["required"] = True
        shown = ""
    if spelling.positional:
        flags = (item.name,)
        kwargs.pop("required", None)
        if kwargs.get("nargs") not in ("?", "*"):  # one that must be given has no default
            kwargs.pop("default", None)
            shown = ""
    if spelling.more_help is not None:
        doc = _sentence_end(doc) + spelling.more_help()
    help_text = _sentence_end(_plain(doc)) + (f" (default {shown})" if shown else "")
    kwargs["help"] = help_text.replace("%", "%%")  # argparse formats help texts with %
    return _Spec(item.name, flags, kwargs, doc, shown, spelling.hidden_flags)


def _specs(config_class: type) -> list[_Spec]:
    """Every field of ``config_class`` as an argument, each checked (see `add_options`)."""
    docs = field_docs(config_class)
    hints = typing.get_type_hints(config_class)
    specs = []
    for item in dataclasses.fields(config_class):
        if not item.init:
            continue
        doc = docs.get(item.name, "").strip()
        if not doc:
            raise ValueError(
                f"{config_class.__name__}.{item.name} has no docstring: every field of a command's config "
                "needs one (a string right below it), which is its option's help"
            )
        specs.append(_spec(config_class, item, hints[item.name], doc))
    return specs


def _sentence_end(text: str) -> str:
    """``text`` without its final full stop (an ellipsis stays), for more words to follow."""
    return text[:-1] if text.endswith(".") and not text.endswith("..") else text


def _plain(markdown: str) -> str:
    """A docstring's Markdown as plain text on one line, as a terminal shows a help text: in argparse's own
    style, lower case first (``Board rows.`` is ``board rows``) unless the first word is a name (``PUCT's``).
    """
    text = re.sub(r"\[`?([^\]`]+)`?\]\[[^\]]*\]", r"\1", markdown)  # [`Name`][path] cross-references
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)  # [text](address) links
    text = re.sub(r"``(.+?)``", r"\1", text)
    text = re.sub(r"`([^`]+)`", r"\1", text)
    text = " ".join(text.split())
    first = text.split(" ", 1)[0]
    if first[:1].isupper() and first[1:] == first[1:].lower():
        text = text[0].lower() + text[1:]
    return text


def add_options(parser: argparse.ArgumentParser, config_class: type) -> argparse.ArgumentParser:
    """Add one argument per field of the dataclass ``config_class`` to ``parser``, in field order.

    Each option is named after its field (``--win-length`` sets ``win_length``, the namespace's attribute),
    its default is the field's, its help the field's docstring; the type, choices and number of values come
    from the annotation, or from the field's [`option`][connect4_agents._support.config_cli.option]
    metadata (see the module's table).

    Args:
        parser: the parser to fill (a command's or a subcommand's).
        config_class: a dataclass whose every field has a docstring.

    Returns:
        ``parser``.

    Raises:
        TypeError: a field's annotation cannot be read from a string and its metadata gives no ``type``.
        ValueError: a field has no docstring.
    """
    for spec in _specs(config_class):  # every field checked before the parser changes
        # an option writes its field (--quiet sets progress); a positional argument is named after it already
        named: dict[str, Any] = {"dest": spec.name} if spec.flags[0].startswith("-") else {}
        parser.add_argument(*spec.flags, **named, **spec.kwargs)
        if spec.hidden_flags:
            hidden = {
                key: value for key, value in spec.kwargs.items() if key not in ("help", "default", "required")
            }
            parser.add_argument(
                *spec.hidden_flags,
                dest=spec.name,
                default=argparse.SUPPRESS,
                help=argparse.SUPPRESS,
                **hidden,
            )
    return parser


def config_parser(
    config_class: type,
    doc: str | None,
    parser: argparse.ArgumentParser | None = None,
    *,
    agent_specs: bool = False,
) -> argparse.ArgumentParser:
    """A command's parser: ``parser`` (a subcommand's) or a new one whose help shows ``doc``, with one option per
    field of ``config_class`` (see [`add_options`][connect4_agents._support.config_cli.add_options]); with
    ``agent_specs``, the paragraph on agent specs ends its help.

    Returns:
        The parser.
    """
    filled = add_options(command_parser(parser, doc), config_class)
    return with_agent_specs(filled) if agent_specs else filled


def from_args(config_class: type[T], args: argparse.Namespace) -> T:
    """The dataclass ``config_class`` made from the namespace ``args`` that its options parsed.

    Each field takes the namespace's attribute of its name (other attributes are left out); a list goes into a
    tuple field as a tuple.

    Args:
        config_class: a dataclass.
        args: a namespace that holds every field of ``config_class`` (parsed by a parser
            [`add_options`][connect4_agents._support.config_cli.add_options] filled with it, or with a
            dataclass that has its fields).

    Returns:
        ``config_class(**values)``: its own checks run as for any other caller.
    """
    hints = typing.get_type_hints(config_class)
    values: dict[str, Any] = {}
    for item in dataclasses.fields(config_class):  # type: ignore[arg-type]
        if item.init:
            value = getattr(args, item.name)
            annotation = _unwrap_optional(hints[item.name])
            if isinstance(value, list) and (typing.get_origin(annotation) is tuple or annotation is tuple):
                value = tuple(value)
            values[item.name] = value
    return config_class(**values)


def run_config(run: Callable[[T], int | None], config_class: type[T], args: argparse.Namespace) -> int:
    """``run(config)`` for the config ``config_class`` built from ``args``, through
    [`run_cli`][connect4_agents._support.cli.run_cli]: a setting the config refuses is ``error: ...`` and exit
    code 2, as a failure of the run is.

    Returns:
        The exit code (see `run_cli`).
    """
    return run_cli(lambda: run(from_args(config_class, args)))


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def options_markdown(config_class: type) -> str:
    """The options of ``config_class`` as a Markdown table: spellings, default and the docstring as written.

    Args:
        config_class: a dataclass whose every field has a docstring.

    Returns:
        The table, one row per field, ending with a newline.

    Raises:
        TypeError: as [`add_options`][connect4_agents._support.config_cli.add_options].
        ValueError: as `add_options`.
    """
    lines = ["| option | default | what it sets |", "|---|---|---|"]
    for spec in _specs(config_class):
        if spec.kwargs.get("action") is argparse.BooleanOptionalAction:
            spelled = [*spec.flags, *("--no-" + flag[2:] for flag in spec.flags if flag.startswith("--"))]
        else:
            spelled = list(spec.flags)
        choices = spec.kwargs.get("choices")
        allowed = (
            " {" + ",".join(map(str, choices)) + "}" if choices is not None else ""
        )  # as --help shows them
        names = ", ".join(f"`{flag}{allowed}`" for flag in spelled)
        if spec.kwargs.get("required") or (
            not spec.flags[0].startswith("-") and "default" not in spec.kwargs
        ):
            default = "required"
        else:
            default = f"`{spec.shown_default}`" if spec.shown_default else ""
        lines.append(f"| {names} | {default} | {_cell(spec.doc)} |")
    return "\n".join(lines) + "\n"
