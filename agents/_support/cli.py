"""What every command shares: one error handler, argument types, and output checks made before any work.

A command runs through ``run_cli(work, args)``: a bad value or file prints ``error: ...`` and exits 2
(argparse's code for usage errors), Ctrl-C exits 130 (the shell's code for SIGINT) after the work's own
handler has saved what it can, and nothing prints a traceback for a user's mistake.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import math
import os
import re
import signal
import sys
import tempfile
import textwrap
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from connect4_agents._support.files import check_file_target, parse_json
from connect4_env.extras import MissingExtraError
from connect4_env.policy import did_you_mean, policy_names

__all__ = [
    "port_number",
    "listen_host",
    "is_host_spelling",
    "run_cli",
    "CommandParser",
    "command_parser",
    "positive_int",
    "ply_range",
    "json_object",
    "check_output_dir",
    "check_output_file",
    "shown_path",
    "SPEC_FORMS",
    "agent_specs_help",
    "with_agent_specs",
    "os_error_text",
    "EXIT_USAGE",
    "EXIT_INTERRUPTED",
]

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143  # 128 + SIGTERM


def run_cli(work: Callable[..., int | None], *args: Any) -> int:
    """Run ``work(*args)`` and turn its failures into exit codes.

    SIGTERM (``kill PID``) ends the work as Ctrl-C does, through its cleanup (worker pools stopped, Ray shut
    down, files closed), with exit code 143 instead of leaving orphaned workers behind.

    Returns:
        ``work``'s code (0 for None); 2 after printing ``error: <message>`` for a ValueError, TypeError,
        MissingExtraError (an optional dependency not installed), OSError (missing, unreadable or unwritable files) or EOFError (input closed), or a RuntimeError whose class sets
        ``reported_in_one_line`` (a search past its budget: the message says what to change); 130 on Ctrl-C;
        143 on SIGTERM.
    """
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _terminated)
    created = len(_CREATED_FOLDERS)
    failed = True
    try:
        code = int(work(*args) or 0)
        failed = code != 0
        return code
    except _Terminated:
        print("\nterminated", file=sys.stderr)
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except EOFError:
        print("error: the input was closed (no more moves can be read)", file=sys.stderr)
        return EXIT_USAGE
    except OSError as error:
        print(f"error: {os_error_text(error)}", file=sys.stderr)
        return EXIT_USAGE
    except (ValueError, TypeError, MissingExtraError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except RuntimeError as error:
        if not getattr(error, "reported_in_one_line", False):
            raise  # a bug: its traceback is worth seeing
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        if failed:  # output folders made for this run and left empty are removed again
            _remove_empty(_CREATED_FOLDERS[created:])
        del _CREATED_FOLDERS[created:]
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def os_error_text(error: OSError) -> str:
    """An OSError as one line naming the file, as command-line tools write it: ``games.jsonl: No such file or
    directory`` rather than Python's ``[Errno 2] No such file or directory: 'games.jsonl'``; an error with
    no file or no reason (ours, such as "no Q-table file at t.npz") as its own message.

    Returns:
        The line, without ``error:``.
    """
    if error.filename is None or not error.strerror:
        return str(error)
    names = [shown_path(str(name)) for name in (error.filename, error.filename2) if name is not None]
    return f"{' -> '.join(names)}: {error.strerror}"


# Folders check_output_dir made, parents before children: a run that fails removes those still empty.
_CREATED_FOLDERS: list[Path] = []


def _remove_empty(folders: list[Path]) -> None:
    for folder in reversed(folders):  # children first
        with contextlib.suppress(OSError):
            folder.rmdir()  # only an empty folder goes


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the work is, so that its cleanup runs as for Ctrl-C."""


def _terminated(signum: int, frame: Any) -> None:
    raise _Terminated


class CommandParser(argparse.ArgumentParser):
    """The commands' argument parser: argparse's, with a suggestion for a mistyped choice, such as a command
    name (``connect4 mtch``: "invalid choice: 'mtch' (choose from ...) (did you mean 'match'?)"), a mode or a
    ``--ui``. Its subcommands' parsers are of this class too.
    """

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        try:
            super()._check_value(action, value)
        except argparse.ArgumentError as error:
            hint = did_you_mean(value, action.choices or ()) if isinstance(value, str) else ""
            if not hint:
                raise
            raise argparse.ArgumentError(action, f"{error.message}{hint}") from None


def command_parser(parser: argparse.ArgumentParser | None, doc: str | None) -> argparse.ArgumentParser:
    """``parser`` to fill (a ``connect4`` subcommand's), or a new one whose help shows ``doc`` as written.

    Returns:
        ``parser`` itself when given, else a new [`CommandParser`][connect4_agents._support.cli.CommandParser]
        with ``doc`` as its description, its line breaks kept (the usage examples stay readable).
    """
    if parser is not None:
        return parser
    return CommandParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)


def positive_int(text: str) -> int:
    """An argparse type: an integer in 1..10**12 (``--games 0`` is refused at parse time, and so is a count
    no run could finish or a counter could hold).
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    if value > MAX_COUNT:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_COUNT:,}, got {text[:40]}")
    return value


MAX_COUNT = 10**12  # the largest count a command takes (games, episodes, timesteps, ...)


def ply_range(text: str) -> tuple[int, int]:
    """An argparse type: ``MIN-MAX`` plies, 0 <= MIN <= MAX (``10-32``)."""
    low, dash, high = text.partition("-")
    if not (dash and low.isdigit() and high.isdigit() and int(low) <= int(high)):
        raise argparse.ArgumentTypeError(f"{text!r} is not a range of plies such as 10-32")
    return int(low), int(high)


def json_object(text: str) -> dict[str, Any]:
    """An argparse type: a JSON object such as ``'{"learning_rate": 0.0001}'``."""
    try:
        value = parse_json(text, "the argument", allow_nan=True)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{text!r} is not JSON: {error}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"{text!r} is not a JSON object ({{...}})")
    return value


def check_output_dir(path: str | Path) -> Path:
    """Create the folder ``path`` (if needed) and check that files can be written in it, before any work.

    Under `run_cli`, the folders made here are removed again if the run fails while they are empty (a
    refused setting leaves no empty ``--out`` behind).

    Raises:
        ValueError: it names a file, or it cannot be created or written to.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"the output folder {path} is a file; pass a folder")
    missing = []
    folder = path.absolute()
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    try:
        path.mkdir(parents=True, exist_ok=True)
        _CREATED_FOLDERS.extend(reversed(missing))
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as error:
        raise ValueError(f"cannot write to the output folder {path}: {error.strerror or error}") from None
    return path


def check_output_file(path: str | Path) -> Path:
    """Check that the file ``path`` can be written (its folder is created if needed), before any work.

    Raises:
        ValueError: it names a folder, or its folder cannot be created or written to.
    """
    path = check_file_target("the output file", path)
    check_output_dir(path.parent)
    return path


def spec_files(specs: Iterable[str]) -> list[Path]:
    """The existing files that agent specs read (``qlearning:t.npz``, ``alphazero:m.zip:400``, ...)."""
    found = []
    for spec in specs:
        if not isinstance(spec, str):
            continue
        _, _, value = spec.partition(":")
        for candidate in (value, value.rpartition(":")[0]):
            if candidate and Path(candidate).is_file():
                found.append(Path(candidate))
    return found


def check_outputs_spare_inputs(outputs: dict[str, Path | None], inputs: Iterable[str | Path | None]) -> None:
    """Refuse, before any work, an output path that names one of the run's input files: writing it would
    destroy what the run reads (``replay g.jsonl -o g.jsonl``, ``--json`` onto a Q-table).

    ``outputs`` maps each option (``"--json"``) to its path (None: not asked for).

    Raises:
        ValueError: an output is an input file (named, with its option).
    """
    existing = [Path(p) for p in inputs if p is not None and Path(p).is_file()]
    for option, out in outputs.items():
        if out is None or not Path(out).exists():
            continue
        for source in existing:
            if os.path.samefile(out, source):
                raise ValueError(
                    f"{option} {out} is also an input of this run ({source}); writing it would destroy it"
                )


def shown_path(path: str | Path) -> str:
    """``path`` as a command prints it: relative to the working folder when it lies inside it, else as given.

    Package functions return resolved paths (``/home/you/repo/runs/demo/qtable.npz``); a command's output
    says ``runs/demo/qtable.npz``, which is shorter, can be pasted into the next command, and does not show
    where someone's home folder is.

    Returns:
        The path to print.
    """
    path = Path(path)
    if path.is_absolute():
        try:
            return str(path.relative_to(Path.cwd().resolve()))
        except ValueError:  # outside the working folder: only the absolute path names it
            return str(path)
    return str(path)


SPEC_FORMS: dict[str, tuple[str, ...]] = {
    "alphazero": (
        "alphazero",
        "alphazero:<simulations>",
        "alphazero:<model.zip>",
        "alphazero:<model.zip>:<simulations>",
    ),
    "human": ("human",),
    "mcts": ("mcts", "mcts:<playouts>", "mcts:<seconds>s"),
    "ntuple": ("ntuple", "ntuple:<model.npz>"),
    "qlearning": ("qlearning:<table.npz>",),
    "random": ("random",),
    "sb3": ("sb3:<model.zip>",),
    "shield": ("shield:<spec>",),
    "solver": ("solver",),
    "text": ("text:<module>:<function>", "text:<module>:<function>:<dialect>"),
}
"""The forms each of this project's agent kinds takes as a spec: the name alone where the agent has a default,
and the ``name:<value>`` forms of its ``from_spec`` docstring (the source: a test checks the two agree). Kept
here so that ``--help`` lists them without importing the agents (AlphaZero's imports torch)."""


def agent_specs_help() -> str:
    """The help's paragraph on agent specs: every kind the policy registry holds (this project's and those other
    installed packages register, read from the entry points without importing them), each in its forms.

    Returns:
        One paragraph, wrapped at 100 columns, for a parser's epilog.
    """
    kinds = [", ".join(SPEC_FORMS.get(name, (f"{name}[:<value>]",))) for name in policy_names()]
    text = "Agent specs (every kind installed, in the forms each takes): " + "; ".join(kinds) + "."
    return textwrap.fill(text, 100, break_long_words=False, break_on_hyphens=False)


def with_agent_specs(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """``parser`` with [`agent_specs_help`][connect4_agents._support.cli.agent_specs_help] at the end of its
    help (after any epilog it has), for a command that takes agent specs; returns it.
    """
    parser.epilog = "\n\n".join(filter(None, [parser.epilog, agent_specs_help()]))
    return parser


def check_positive_flag(flag: str, value: float, unit: str, ceiling: float | None = None) -> None:
    """Check a command's number ``value``, given as ``flag``: finite, above 0 and at most ``ceiling``.

    Raises:
        ValueError: one that is not, naming ``flag``, its ``unit`` and what is allowed.
    """
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{flag} must be a finite number of {unit} > 0, got {value}")
    if ceiling is not None and value > ceiling:
        raise ValueError(f"{flag} must be at most {ceiling:,.0f} {unit}, got {value:,}")


def port_number(text: str) -> int:
    """A TCP port number for argparse: an integer in 0..65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0..65535)") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port number (0..65535)")
    return value


_HOST_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)\Z")


def is_host_spelling(text: str) -> bool:
    """Whether ``text`` can name an address to listen on, by its spelling alone (nothing is looked up): an
    IPv4 or IPv6 address, or a host name of ASCII letters, digits and hyphens in dot-separated labels of at
    most 63 characters (RFC 1123), whose last label is not all digits (``999.1.1.1`` is no address).
    """
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        pass
    labels = text[:-1].split(".") if text.endswith(".") else text.split(".")
    return (
        0 < len(text) <= 253
        and all(_HOST_LABEL.match(label) for label in labels)
        and not labels[-1].isdigit()
    )


def listen_host(text: str) -> str:
    """An address to listen on, for argparse: an IP address or a host name (see `is_host_spelling`); not empty
    (an empty host listens on every interface; to do that on purpose, say ``--host 0.0.0.0``).
    """
    if not is_host_spelling(text):
        raise argparse.ArgumentTypeError(
            f"{text[:80]!r} is not an address: name an IP address such as 127.0.0.1 (local only) or 0.0.0.0 "
            "(every interface), or a host name of letters, digits, hyphens and dots (localhost)"
        )
    return text
