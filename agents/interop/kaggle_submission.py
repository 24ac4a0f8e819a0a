"""A Kaggle ConnectX submission: one ``main.py`` with our rules and agents (env side: Kaggle's connectx).

Kaggle runs a submission's ``main.py`` (alone, or from a ``submission.tar.gz``) and plays its last-defined
function. Our packages are not installed there, and its Python may lack Gymnasium, PettingZoo and numba: the
file written here holds the source of ``connect4_env`` and ``connect4_agents`` (with light package roots that
import neither Gymnasium nor PettingZoo), the model file an AlphaZero, Q-learning or SB3 spec names, and a
loader. On first use it unpacks them into a temporary folder keyed by their hash, puts it on ``sys.path``,
registers our agent names and builds a [`KaggleAgent`][connect4_agents.interop.kaggle.KaggleAgent] for the
spec, whose first moves search in plain Python while the compiled kernels (numba, when installed) and an
AlphaZero policy (torch) load in the background. It needs only numpy (torch too for AlphaZero).

The carried packages are renamed ``connect4_env_<tag>`` and ``connect4_agents_<tag>``, the tag a hash of what
the file carries, so that any number of submissions (of other agents, or of other versions of this package)
run in one process, as Kaggle's ``evaluate`` runs them, each with its own code and data.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import io
import os
import re
import tarfile
import tokenize
import zipfile
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, BinaryIO

from connect4_agents._support.files import atomic_write
from connect4_agents.interop import kaggle_ntuple
from connect4_agents.interop.kaggle import make_kaggle_agent
from connect4_agents.ntuple.agent import shipped_model_path
from connect4_agents.ntuple.files import load_network
from connect4_env import __version__
from connect4_env.policy import ENTRY_POINT_GROUP, policy_names
from connect4_env.validation import check_int

__all__ = ["write_kaggle_submission", "submission_source", "renamed_source"]

_ENV_ROOT = Path(__file__).resolve().parents[2] / "connect4_env"
_AGENTS_ROOT = Path(__file__).resolve().parents[1]
_PACKAGES = ("connect4_env", "connect4_agents")
# the agents' folders a submission leaves out: commands and windows play no Kaggle move
_SKIPPED = {"commands", "ui", "data", "__pycache__"}
# package roots that would import more than a move needs (Gymnasium, every agent, the measurements), and what a
# submission carries instead: the Q-learning agent keeps a learning curve (evaluation.curves), nothing else there
_LIGHT_INITS = {
    "connect4_env/__init__.py": f'"""connect4_env in a Kaggle submission: the rules only (no Gymnasium)."""\n\n'
    f'__version__ = "{__version__}"\n',
    "connect4_agents/__init__.py": '"""connect4_agents in a Kaggle submission: import the agents from their modules."""\n',
    "connect4_agents/evaluation/__init__.py": '"""The measurements in a Kaggle submission: import their modules."""\n',
}

_LOADER = '''"""Kaggle ConnectX agent: {spec!r} from connect4-env {version} (written by connect4 kaggle-submission).

Kaggle plays the last function of this file, agent(observation, configuration). Needs numpy only{torch}.
Its packages are {env} and {agents}, names of this file's own, so that other submissions run beside it.
"""

import time

_LOAD_START = time.perf_counter()  # Kaggle times this file's loading as part of the first move

import base64  # noqa: E402
import hashlib  # noqa: E402
import io  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import zipfile  # noqa: E402

SPEC = {spec!r}
OPTIONS = {options!r}
AGENTS = {registered!r}
FILE = {file!r}
SUFFIX = {suffix!r}
PAYLOAD = """{payload}"""


def _unpack():
    data = base64.b64decode(PAYLOAD)
    folder = os.path.join(tempfile.gettempdir(), "connect4_kaggle_" + hashlib.sha256(data).hexdigest()[:16])
    if not os.path.isfile(os.path.join(folder, "COMPLETE")):
        partial = tempfile.mkdtemp(prefix="connect4_kaggle_")
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            archive.extractall(partial)
        open(os.path.join(partial, "COMPLETE"), "w").close()
        try:
            os.rename(partial, folder)
        except OSError:  # another process unpacked it meanwhile, or an earlier try broke off: ours is whole
            if not os.path.isfile(os.path.join(folder, "COMPLETE")):
                return partial
    return folder


_FOLDER = _unpack()
if _FOLDER not in sys.path:
    sys.path.insert(0, _FOLDER)

from {agents}.interop.kaggle import KaggleAgent  # noqa: E402
from {env}.policy import register_policy  # noqa: E402

for _name, _entry_point in AGENTS.items():
    register_policy(_name, _entry_point)
# the spec was checked when this file was written; its policy is built at the first move, in the background
_AGENT = KaggleAgent(SPEC if FILE is None else SPEC + os.path.join(_FOLDER, FILE) + SUFFIX, **OPTIONS)
_AGENT.load_seconds = time.perf_counter() - _LOAD_START


def agent(observation, configuration):
    return _AGENT(observation, configuration)
'''


def _sources() -> list[tuple[str, bytes]]:
    """Our packages' files as the archive holds them (before renaming): ``(name, bytes)``, sorted."""
    files = []
    for package, root in (("connect4_env", _ENV_ROOT), ("connect4_agents", _AGENTS_ROOT)):
        for path in sorted(root.rglob("*.py")):
            relative = path.relative_to(root)
            if relative.parts[0] in _SKIPPED:
                continue
            name = f"{package}/{relative.as_posix()}"
            light = _LIGHT_INITS.get(name)
            files.append((name, path.read_bytes() if light is None else light.encode()))
    return files


def _module_names(files: list[tuple[str, bytes]]) -> frozenset[str]:
    """The import names of the ``.py`` files among ``files`` (``connect4_env/core.py``: ``connect4_env.core``)."""
    names = set()
    for name, _ in files:
        if name.endswith(".py"):
            parts = name[: -len(".py")].split("/")
            names.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return frozenset(names)


_PATH_STRING = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*(:[A-Za-z_][A-Za-z0-9_.]*)?")


def renamed_source(source: bytes, names: dict[str, str], modules: frozenset[str]) -> bytes:
    """``source`` (Python) with our packages renamed: each name token that is a key of ``names`` (imports
    and attribute uses alike), and each string that is exactly the path of one of ``modules``, optionally
    followed by ``:attribute`` (``"connect4_agents.sb3.features:BoardCNN"``). Other text keeps the old names:
    docstrings, messages, and names that are not modules (the entry-point group ``"connect4_env.policies"``,
    the file format ``"connect4_env.qtable"``).

    Raises:
        ValueError: one of the names inside an f-string's braces, which this Python's tokenizer cannot
            reach (the renamed code would still import the old name).
    """
    text = source.decode("utf-8")
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int, int, str]] = []  # (line, start column, end column, new text)
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        (row, column), (end_row, end_column) = token.start, token.end
        if token.type == tokenize.NAME and token.string in names:
            edits.append((row, column, end_column, names[token.string]))
        elif token.type == tokenize.STRING and row == end_row:
            new = _renamed_string(token.string, names, modules)
            if new is not None:
                edits.append((row, column, end_column, new))
    for row, column, end_column, new in sorted(edits, reverse=True):
        line = lines[row - 1]
        lines[row - 1] = line[:column] + new + line[end_column:]
    return "".join(lines).encode("utf-8")


def _renamed_string(literal: str, names: dict[str, str], modules: frozenset[str]) -> str | None:
    """The renamed literal when the string ``literal`` is a module path of ours, else None."""
    try:
        value = ast.literal_eval(literal)
    except (ValueError, SyntaxError):  # an f-string: its braces hold code that the rename must reach
        if re.search(r"\{[^{}]*\b(" + "|".join(map(re.escape, names)) + r")\b", literal):
            raise ValueError(f"cannot rename our packages inside the f-string {literal}") from None
        return None
    if not isinstance(value, str) or not _PATH_STRING.fullmatch(value):
        return None
    module = value.partition(":")[0]
    top = module.split(".")[0]
    if top not in names or module not in modules:
        return None
    return repr(names[top] + value[len(top) :])


def _tag(files: list[tuple[str, bytes]]) -> str:
    """A short hash of what an archive carries (names and contents): the suffix of its packages' names."""
    digest = hashlib.sha256()
    for name, data in files:
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()[:12]


def _archive(files: list[tuple[str, bytes]]) -> tuple[bytes, dict[str, str]]:
    """The zip archive of ``files`` with our packages renamed, and the new names (``connect4_env``: ...)."""
    tag = _tag(files)
    names = {package: f"{package}_{tag}" for package in _PACKAGES}
    modules = _module_names(files)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files:
            top, _, rest = name.partition("/")
            if name.endswith(".py"):
                data = renamed_source(data, names, modules)
            _add(archive, f"{names.get(top, top)}/{rest}" if rest else name, data)
    return buffer.getvalue(), names


def _add(archive: zipfile.ZipFile, name: str, data: bytes) -> None:
    """One file, dated 1980 so that the same sources make the same submission (and unpack to one folder)."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)


# agents a submission cannot play on Kaggle, and why (make_kaggle_agent would build them, and every move would
# fall back to MCTS)
_UNPLAYABLE = {
    "human": "a person at a terminal answers its moves, and Kaggle's runner has neither",
    "text": "it asks a language-model function that the submission does not carry",
}
# how the refusal shows each allowed agent (plain names need no value)
_ALLOWED_FORMS = {
    "qlearning": "qlearning:<table.npz>",
    "sb3": "sb3:<model.zip>",
    "alphazero": "alphazero[:<model.zip>][:<simulations>]",
    "mcts": "mcts[:<playouts>|:<seconds>s]",
    "ntuple": "ntuple[:<model.npz>]",
}


def _carried_agents() -> dict[str, str]:
    """Our agents' names and entry points (``connect4_agents.``...): those whose code a submission carries."""
    return {
        point.name: point.value
        for point in entry_points(group=ENTRY_POINT_GROUP)
        if point.value.startswith("connect4_agents.")
    }


def submission_source(
    spec: str, *, move_seconds: float | None = None, seed: int | None = None, endgame: bool = True
) -> str:
    """The text of a self-contained ``main.py`` that plays ``spec`` on Kaggle.

    A spec whose value is a file (``alphazero:model.zip``, ``qlearning:table.npz``) carries that file; plain
    ``alphazero`` carries the shipped model. ``move_seconds``, ``seed`` and ``endgame`` go to
    [`make_kaggle_agent`][connect4_agents.interop.kaggle.make_kaggle_agent].

    Raises:
        TypeError: a spec that is not a string, or a setting of the wrong type.
        ValueError: an unknown or malformed spec, or a file the spec's agent cannot read; an agent a submission
            cannot play (``human``, ``text:...``, one registered by another package: the message lists those it
            can).
        OSError: a file the spec names cannot be read.
    """
    if not isinstance(spec, str):
        raise TypeError(
            f"a submission plays an agent spec such as 'mcts', got {spec!r:.80} ({type(spec).__name__})"
        )
    name, _, value = spec.partition(":")
    ours = _carried_agents()
    if name in _UNPLAYABLE or (name in policy_names() and name not in ours):
        reason = _UNPLAYABLE.get(name, "its code is not ours, so the submission does not carry it")
        allowed = ", ".join(_ALLOWED_FORMS.get(n, n) for n in sorted(ours) if n not in _UNPLAYABLE)
        raise ValueError(f"a Kaggle submission cannot play {spec!r}: {reason}; allowed: {allowed}")
    if name == "ntuple":
        return _ntuple_source(spec, move_seconds=move_seconds, seed=seed)
    # the spec (its file read) and the options are checked before anything is written
    make_kaggle_agent(spec, move_seconds=move_seconds, seed=seed, endgame=endgame)
    carried, suffix = value, ""  # the file the spec names, and what follows it in the spec
    if name == "alphazero":
        from connect4_agents.alphazero.agent import SHIPPED_MODEL, spec_parts  # torch: loaded already

        path, count = spec_parts(value)
        carried = path or ""
        suffix = "" if path is None or count is None else f":{count}"
    files = _sources()
    file = None  # the carried file's place in the archive, when the spec names it
    if carried and Path(carried).is_file():
        file = "files/" + Path(carried).name
        files.append((file, Path(carried).read_bytes()))
        spec = f"{name}:"
    elif name == "alphazero":  # the shipped model, found by the agent inside the carried package
        files.append((f"connect4_agents/{SHIPPED_MODEL}", (_AGENTS_ROOT / SHIPPED_MODEL).read_bytes()))
    archive, names = _archive(files)
    payload = base64.b64encode(archive).decode("ascii")
    registered = {  # our agents' entry points, in the renamed package
        agent: names["connect4_agents"] + entry_point[len("connect4_agents") :]
        for agent, entry_point in ours.items()
    }
    options: dict[str, Any] = {
        key: value for key, value in (("move_seconds", move_seconds), ("seed", seed)) if value is not None
    }
    if not endgame:
        options["endgame"] = False
    return _LOADER.format(
        spec=spec,
        version=__version__,
        torch=" and torch" if name in ("alphazero", "sb3") else "",
        options=options,
        registered=registered,
        env=names["connect4_env"],
        agents=names["connect4_agents"],
        file=file,
        suffix=suffix,
        payload="\n".join(payload[i : i + 100] for i in range(0, len(payload), 100)),
    )


_NTUPLE_HEADER = """\
# Kaggle ConnectX agent: the n-tuple network {spec!r} from connect4-env {version} (written by
# connect4 kaggle-submission): {network}.
# Needs numpy only. Kaggle plays this file's last function, agent(observation, configuration). The code below is
# connect4_agents.interop.kaggle_ntuple; the network's tables follow it.
"""
_NTUPLE_TAIL = '''

NETWORK = """{payload}"""
_AGENT = NTupleKaggleAgent(decode_network(NETWORK), seed={seed!r})


def agent(observation, configuration):
    return _AGENT(observation, configuration)
'''


def _ntuple_source(spec: str, *, move_seconds: float | None, seed: int | None) -> str:
    """The ``main.py`` of an n-tuple spec: `kaggle_ntuple`'s source, the network and ``agent()`` (numpy only)."""
    if move_seconds is not None:
        raise ValueError(
            f"move_seconds does not apply to {spec!r}: the n-tuple network plays without search, in milliseconds"
        )
    if seed is not None:
        seed = check_int("seed", seed, 0)
    _, colon, value = spec.partition(":")
    network = load_network(value if colon else shipped_model_path())
    rules, (n_tuples, length) = network.rules, network.tuples.shape
    payload = kaggle_ntuple.encode_network(
        rules.rows, rules.columns, rules.win_length, network.tuples, network.weights
    )
    games = network.meta.get("games")
    trained = f"; {games:,} games of self-play" if isinstance(games, int) else ""
    header = _NTUPLE_HEADER.format(
        spec=spec,
        version=__version__,
        network=f"{rules.rows}x{rules.columns}, {rules.win_length} in a row, {n_tuples} tuples of {length} cells"
        f"{trained}",
    )
    body = Path(kaggle_ntuple.__file__).read_text(encoding="utf-8")
    lines = "\n".join(payload[i : i + 100] for i in range(0, len(payload), 100))
    return header + body + _NTUPLE_TAIL.format(payload=lines, seed=seed)


def write_kaggle_submission(
    spec: str,
    out: str | os.PathLike[str],
    *,
    move_seconds: float | None = None,
    seed: int | None = None,
    endgame: bool = True,
) -> Path:
    """Write a Kaggle ConnectX submission for ``spec``: ``main.py`` (any name ending ``.py``), or a
    ``.tar.gz`` holding it as ``main.py``, atomically (a failed write leaves the old file). The options are
    [`submission_source`][connect4_agents.interop.kaggle_submission.submission_source]'s.

    Returns:
        The written path.

    Raises:
        TypeError: a spec that is not a string, or a setting of the wrong type.
        ValueError: ``out`` ends neither in ``.py`` nor ``.tar.gz``; a bad spec (see
            [`submission_source`][connect4_agents.interop.kaggle_submission.submission_source]).
        OSError: the file cannot be written, or one the spec names cannot be read.
    """
    path = Path(out)
    if not (path.name.endswith(".py") or path.name.endswith(".tar.gz")):
        raise ValueError(f"a submission is main.py or a .tar.gz, got {str(out)!r}")
    source = submission_source(spec, move_seconds=move_seconds, seed=seed, endgame=endgame).encode()
    if path.name.endswith(".py"):
        return atomic_write(path, lambda stream: stream.write(source))

    def write_tarball(stream: BinaryIO) -> None:
        with tarfile.open(fileobj=stream, mode="w:gz") as archive:
            info = tarfile.TarInfo("main.py")
            info.size = len(source)
            info.mtime = 0
            archive.addfile(info, io.BytesIO(source))

    return atomic_write(path, write_tarball)
