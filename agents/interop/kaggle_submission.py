"""A Kaggle ConnectX submission: one ``main.py`` that carries our rules and agents, for Kaggle's runtime.

Kaggle runs a submission's ``main.py`` (alone, or from a ``submission.tar.gz``) and plays its last-defined
function. Our packages are not installed there, and its Python may lack Gymnasium, PettingZoo and numba: the
file written here holds the source of ``connect4_env`` and ``connect4_agents`` (with light package roots that
import neither Gymnasium nor PettingZoo), the model file an AlphaZero, Q-learning or SB3 spec names, and a
loader. On first use it unpacks them into a temporary folder keyed by their hash, puts it on ``sys.path``,
registers our agent names and builds :func:`connect4_agents.interop.kaggle.make_kaggle_agent` for the spec.
It needs only numpy (torch too for AlphaZero); numba, when present, compiles the searches (its first move then
takes some seconds of Kaggle's 60 s overage bank), else they run in plain Python, slower.
"""

from __future__ import annotations

import base64
import io
import os
import tarfile
import zipfile
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, BinaryIO

from connect4_agents._support.files import atomic_write
from connect4_agents.interop.kaggle import make_kaggle_agent
from connect4_env import __version__
from connect4_env.policy import ENTRY_POINT_GROUP, policy_names

__all__ = ["write_kaggle_submission", "submission_source"]

_ENV_ROOT = Path(__file__).resolve().parents[2] / "connect4_env"
_AGENTS_ROOT = Path(__file__).resolve().parents[1]
# the agents' folders a submission leaves out: commands, measurements and windows play no Kaggle move
_SKIPPED = {"commands", "evaluation", "ui", "data", "__pycache__"}
_LIGHT_ENV_INIT = f'"""connect4_env in a Kaggle submission: the rules only (no Gymnasium)."""\n\n__version__ = "{__version__}"\n'
_LIGHT_AGENTS_INIT = '"""connect4_agents in a Kaggle submission: import the agents from their modules."""\n'

_LOADER = '''"""Kaggle ConnectX agent: {spec!r} from connect4-env {version} (written by connect4 kaggle-submission).

Kaggle plays the last function of this file, agent(observation, configuration). Needs numpy only{torch}.
"""

import base64
import hashlib
import os
import sys
import tempfile
import zipfile

SPEC = {spec!r}
OPTIONS = {options!r}
AGENTS = {agents!r}
FILE = {file!r}
SUFFIX = {suffix!r}
PAYLOAD = """{payload}"""


def _unpack():
    data = base64.b64decode(PAYLOAD)
    folder = os.path.join(tempfile.gettempdir(), "connect4_kaggle_" + hashlib.sha256(data).hexdigest()[:16])
    if not os.path.isfile(os.path.join(folder, "COMPLETE")):
        partial = tempfile.mkdtemp(prefix="connect4_kaggle_")
        with zipfile.ZipFile(__import__("io").BytesIO(data)) as archive:
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

from connect4_agents.interop.kaggle import make_kaggle_agent  # noqa: E402
from connect4_env.policy import register_policy  # noqa: E402

for _name, _entry_point in AGENTS.items():
    register_policy(_name, _entry_point)
_AGENT = make_kaggle_agent(SPEC if FILE is None else SPEC + os.path.join(_FOLDER, FILE) + SUFFIX, **OPTIONS)


def agent(observation, configuration):
    return _AGENT(observation, configuration)
'''


def _sources(archive: zipfile.ZipFile) -> None:
    for package, root, light in (
        ("connect4_env", _ENV_ROOT, _LIGHT_ENV_INIT),
        ("connect4_agents", _AGENTS_ROOT, _LIGHT_AGENTS_INIT),
    ):
        _add(archive, f"{package}/__init__.py", light.encode())
        for path in sorted(root.rglob("*.py")):
            relative = path.relative_to(root)
            if relative.parts[0] in _SKIPPED or relative == Path("__init__.py"):
                continue
            _add(archive, f"{package}/{relative.as_posix()}", path.read_bytes())


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
    :func:`connect4_agents.interop.kaggle.make_kaggle_agent`.

    Raises:
        TypeError / ValueError: an unknown or malformed spec, or a file the spec's agent cannot read; an agent
            a submission cannot play (``human``, ``text:...``, one registered by another package: the message
            lists those it can). OSError: a file the spec names cannot be read.
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
    # the spec (its file read) and the options are checked before anything is written
    make_kaggle_agent(spec, move_seconds=move_seconds, seed=seed, endgame=endgame)
    carried, suffix = value, ""  # the file the spec names, and what follows it in the spec
    if name == "alphazero":
        from connect4_agents.alphazero.agent import SHIPPED_MODEL, spec_parts  # torch: loaded already

        path, count = spec_parts(value)
        carried = path or ""
        suffix = "" if path is None or count is None else f":{count}"
    extra: tuple[str, bytes] | None = None
    file = None  # the carried file's place in the archive, when the spec names it
    if carried and Path(carried).is_file():
        file = "files/" + Path(carried).name
        extra = (file, Path(carried).read_bytes())
        spec = f"{name}:"
    elif name == "alphazero":  # the shipped model, found by the agent inside the carried package
        extra = (f"connect4_agents/{SHIPPED_MODEL}", (_AGENTS_ROOT / SHIPPED_MODEL).read_bytes())
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        _sources(archive)
        if extra is not None:
            _add(archive, *extra)
    payload = base64.b64encode(buffer.getvalue()).decode("ascii")
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
        agents=ours,
        file=file,
        suffix=suffix,
        payload="\n".join(payload[i : i + 100] for i in range(0, len(payload), 100)),
    )


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
    :func:`submission_source`'s.

    Returns:
        The written path.

    Raises:
        ValueError: ``out`` ends neither in ``.py`` nor ``.tar.gz``; a bad spec (see :func:`submission_source`).
        OSError: the file cannot be written.
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
