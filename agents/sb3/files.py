"""Stable-Baselines3 model files read without running code stored in them.

SB3's own ``load`` unpickles (cloudpickle) several entries of the zip's ``data`` (the policy class, the spaces,
schedules), so a crafted file runs code when it is loaded. Here nothing is unpickled:

- ``data`` is read as JSON only, for its plain fields: which policy class saved it (module and name), the
  observation shape and the number of actions, and ``policy_kwargs`` when they are plain JSON;
- ``policy_kwargs`` that SB3 had to pickle (e.g. a custom feature extractor) come instead from our JSON sidecar
  (``model.json``, written by `connect4_agents.sb3.train.save_model`), which names the extractor among ours;
- before anything is built, every layer size and channel count and the board are checked against fixed
  limits (`MAX_LAYERS`, `MAX_UNITS`, `MAX_CHANNELS`, the package's board limits), and the
  number of parameters that architecture has (`policy_parameters`) must fit in the ``policy.pth`` it
  comes with: a file of a few hundred bytes cannot make the loader build a network of gigabytes;
- the policy is built from its class in the installed SB3, and the weights are read with
  ``torch.load(weights_only=True)``, which refuses anything but tensors and plain containers.

A file that cannot be loaded this way (damaged zip members included) gets a ValueError naming it and saying why.
"""

from __future__ import annotations

import importlib
import inspect
import io
import json
import os
import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

from connect4_agents._support.files import (
    atomic_write,
    atomic_write_json,
    parse_json,
    read_text_limited,
    read_zip_member,
    require_safe_torch,
)
from connect4_env.extras import require
from connect4_env.rules import check_size
from connect4_env.validation import check_bool, check_int

__all__ = [
    "load_policy",
    "save_policy",
    "sidecar_architecture",
    "policy_parameters",
    "ALGORITHMS",
    "detect_algorithm",
    "MAX_LAYERS",
    "MAX_UNITS",
    "MAX_CHANNELS",
    "MAX_PARAMETERS",
]

ALGORITHMS = ("ppo", "maskable_ppo", "dqn")
MAX_LAYERS = 32
"""Hidden layers in each of a policy's networks (``net_arch``)."""
MAX_UNITS = 16_384
"""Units in a hidden layer (``net_arch``), and ``features`` of the CNN extractor."""
MAX_CHANNELS = 1024
"""``channels`` of the CNN extractor."""
_DATA_MAX_BYTES = 64 << 20
_SIDECAR_MAX_BYTES = 1 << 20
_WEIGHTS_MAX_BYTES = 256 << 20
_SAVE_OVERHEAD = (
    1 << 20
)  # what torch.save adds to the tensors' bytes (a record per tensor, the pickle, the zip)
MAX_PARAMETERS = _WEIGHTS_MAX_BYTES // 4
"""Parameters (float32) a policy may have: what the largest ``policy.pth`` loaded holds (the trainer refuses
larger networks, so every model it saves loads)."""
_CNN_DEFAULTS = {"channels": 64, "features": 256}  # BoardCNN's
# (module, class) of the policy each algorithm saves with its "MlpPolicy"
_POLICIES = {
    "ppo": ("stable_baselines3.common.policies", "ActorCriticPolicy"),
    "maskable_ppo": ("sb3_contrib.common.maskable.policies", "MaskableActorCriticPolicy"),
    "dqn": ("stable_baselines3.dqn.policies", "DQNPolicy"),
}
_FEATURES = {"cnn": "connect4_agents.sb3.features:BoardCNN"}  # feature extractors a sidecar may name


def _plain(entry: Any) -> bool:
    return not (isinstance(entry, dict) and ":serialized:" in entry)


def _policy_class_name(data: dict[str, Any]) -> tuple[str, str]:
    entry = data.get("policy_class")
    if not isinstance(entry, dict):
        raise ValueError("its data names no policy class")
    module = str(entry.get("__module__", ""))
    found = re.match(r"<function (\w+)\.__init__", str(entry.get("__init__", "")))
    return module, found.group(1) if found else ""


def detect_algorithm(data: dict[str, Any]) -> str:
    """The algorithm whose policy class the file's ``data`` names (read from its plain-text fields).

    Raises:
        ValueError: a policy class this loader does not build.
    """
    module, name = _policy_class_name(data)
    for algo, expected in _POLICIES.items():
        if (module, name) == expected:
            return algo
    allowed = ", ".join(f"{m}.{n}" for m, n in _POLICIES.values())
    raise ValueError(f"it was saved with policy {module}.{name or '?'}; safe loading supports {allowed}")


def _member(archive: zipfile.ZipFile, name: str, limit: int) -> bytes:
    try:
        return read_zip_member(archive, name, limit)
    except ValueError as error:
        raise ValueError(f"its {error}") from None


def _open(path: Path) -> zipfile.ZipFile:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        raise ValueError(f"not a readable Stable-Baselines3 model file: {error}") from None
    names = set(archive.namelist())
    if "data" not in names or "policy.pth" not in names:
        archive.close()
        raise ValueError("not a Stable-Baselines3 model file (no 'data' or 'policy.pth' in the zip)")
    return archive


def _read_data(archive: zipfile.ZipFile) -> dict[str, Any]:
    try:
        data = parse_json(_member(archive, "data", _DATA_MAX_BYTES), "its 'data'", allow_nan=True)
    except (zipfile.BadZipFile, UnicodeDecodeError, OSError, EOFError) as error:
        raise ValueError(f"not a readable Stable-Baselines3 model file: {error}") from None
    if not isinstance(data, dict):
        raise ValueError("its data is not a JSON object")
    return data


def _spaces(data: dict[str, Any]) -> tuple[Any, Any]:

    observation, action = data.get("observation_space"), data.get("action_space")
    shape = observation.get("_shape") if isinstance(observation, dict) else None
    n = action.get("n") if isinstance(action, dict) else None
    if (
        not isinstance(shape, list)
        or len(shape) != 3
        or shape[2] != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in shape)
    ):
        raise ValueError(f"its observation shape {shape!r} is not a Connect Four board (rows, columns, 2)")
    try:
        check_size(shape[0], shape[1], 2)  # the package's board limits (at most MAX_CELLS cells)
    except ValueError as error:
        raise ValueError(
            f"its observation shape {shape!r} is not a board this package plays: {error}"
        ) from None
    if isinstance(n, str) and n.isdigit() and len(n) <= 9:
        n = int(n)
    if n != shape[1]:
        raise ValueError(f"its action space ({n!r} actions) does not match the {shape[1]} columns")

    return spaces.Box(0, 1, tuple(shape), dtype=np.int8), spaces.Discrete(shape[1])


def _policy_kwargs(data: dict[str, Any], sidecar: dict[str, Any] | None) -> tuple[dict[str, Any], str]:
    """The plain ``policy_kwargs`` and the feature extractor's name (``mlp`` or a key of ``_FEATURES``)."""
    if sidecar is not None and isinstance(sidecar.get("policy_kwargs"), dict):
        features = sidecar.get("features", "mlp")
        if not isinstance(features, str) or (features != "mlp" and features not in _FEATURES):
            raise ValueError(f"its sidecar names features {features!r}; known: mlp, {', '.join(_FEATURES)}")
        return dict(sidecar["policy_kwargs"]), features
    stored = data.get("policy_kwargs", {})
    if not _plain(stored) or not isinstance(stored, dict):
        raise ValueError(
            "its policy_kwargs hold pickled objects (e.g. a custom feature extractor), which are not unpickled; "
            "save it with connect4_agents.sb3.train.save_model, whose model.json describes them"
        )
    return dict(stored), "mlp"


def _layers(name: str, value: object) -> list[int]:
    if not isinstance(value, list):
        raise TypeError(f"{name} must be a list of layer sizes, got {value!r}")
    if len(value) > MAX_LAYERS:
        raise ValueError(f"{name} has {len(value)} layers; allowed: at most {MAX_LAYERS}")
    return [check_int(f"{name}[{i}]", units, 1, MAX_UNITS) for i, units in enumerate(value)]


def _mlp(inputs: int, layers: list[int], outputs: int) -> int:
    """Weights and biases of linear layers ``inputs -> *layers -> outputs`` (no output layer for 0)."""
    total, last = 0, inputs
    for units in [*layers, outputs] if outputs else layers:
        total += last * units + units
        last = units
    return total


def policy_parameters(
    algo: str, rows: int, columns: int, policy_kwargs: dict[str, Any], features: str = "mlp"
) -> int:
    """The number of parameters of ``algo``'s ``MlpPolicy`` (one of `ALGORITHMS`) for a ``rows`` x ``columns``
    board with these ``policy_kwargs`` (a dict of plain values: ``features`` names the extractor, ``mlp`` or
    ``cnn``), worked out without building anything, after checking every size in them. Its callers (the model
    file reader, the trainer's settings) have checked the algorithm, the board and ``features``.

    Returns:
        The count, as ``sum(p.numel() for p in policy.parameters())`` gives for the built policy.

    Raises:
        TypeError: ``net_arch`` or ``features_extractor_kwargs`` of the wrong type (a string, a float).
        ValueError: a layer size outside 1..`MAX_UNITS`, more than `MAX_LAYERS` layers, ``channels`` outside
            1..`MAX_CHANNELS`, a ``features_extractor_class`` (named by ``features`` instead), or more than
            `MAX_PARAMETERS` parameters in all.
    """
    if "features_extractor_class" in policy_kwargs:
        raise ValueError(
            "policy_kwargs name a features_extractor_class; only the built-in ones (mlp, cnn) load"
        )
    extractor_kwargs = policy_kwargs.get("features_extractor_kwargs") or {}
    if not isinstance(extractor_kwargs, dict):
        raise TypeError(f"features_extractor_kwargs must be a dict, got {extractor_kwargs!r}")
    if features == "mlp":
        if extractor_kwargs:
            raise ValueError(
                f"features_extractor_kwargs {extractor_kwargs!r} are for the cnn extractor; mlp takes none"
            )
        extractor, width = 0, rows * columns * 2
    else:
        unknown = sorted(set(extractor_kwargs) - set(_CNN_DEFAULTS))
        if unknown:
            raise ValueError(
                f"features_extractor_kwargs {unknown} are not cnn settings; allowed: channels, features"
            )
        settings = {**_CNN_DEFAULTS, **extractor_kwargs}
        channels = check_int("features_extractor_kwargs['channels']", settings["channels"], 1, MAX_CHANNELS)
        width = check_int("features_extractor_kwargs['features']", settings["features"], 1, MAX_UNITS)
        # BoardCNN: two 3x3 convolutions (2 -> channels -> channels), then a linear layer to ``width``
        extractor = (18 * channels + channels) + (9 * channels * channels + channels)
        extractor += channels * rows * columns * width + width
    net_arch = policy_kwargs.get("net_arch")
    if algo == "dqn":
        layers = [64, 64] if net_arch is None else _layers("net_arch", net_arch)
        total = 2 * (extractor + _mlp(width, layers, columns))  # q_net and q_net_target
    else:
        if net_arch is None:
            pi = vf = [64, 64]
        elif isinstance(net_arch, dict):
            unknown = sorted(set(net_arch) - {"pi", "vf"}, key=str)
            if unknown:
                raise ValueError(f"net_arch has keys {unknown}; allowed: pi, vf")
            pi = _layers("net_arch['pi']", net_arch.get("pi", []))
            vf = _layers("net_arch['vf']", net_arch.get("vf", []))
        else:
            pi = vf = _layers("net_arch", net_arch)
        shared = check_bool("share_features_extractor", policy_kwargs.get("share_features_extractor", True))
        total = extractor * (1 if shared else 2)
        total += _mlp(width, pi, columns) + _mlp(width, vf, 1)  # then the action and value heads
    if total > MAX_PARAMETERS:
        raise ValueError(
            f"this architecture has {total:,} parameters on a {rows}x{columns} board; allowed: at most "
            f"{MAX_PARAMETERS:,} (use smaller or fewer layers)"
        )
    return total


def sidecar_architecture(model: Any, features: str) -> dict[str, Any]:
    """What a sidecar records so the model loads without unpickling: ``features`` and plain ``policy_kwargs``."""
    kwargs = {k: v for k, v in getattr(model, "policy_kwargs", {}).items() if k != "features_extractor_class"}
    json.dumps(kwargs)  # raises TypeError for anything that is not plain data
    return {"features": features, "policy_kwargs": kwargs}


def load_policy(path: Path, algo: str | None = None) -> Any:
    """The SB3 policy saved in ``path``, on CPU, in evaluation mode, built without unpickling anything.

    Raises:
        ValueError: not an SB3 model file, a damaged zip member, a policy class or ``policy_kwargs`` that cannot
            be rebuilt safely, a network larger than the limits or than its ``policy.pth`` can hold, or weights
            that do not fit the rebuilt network (each message names ``path`` and says which).
        MissingExtraError: torch or SB3 is not installed, or torch is older than 2.6 (unsafe weights_only).
    """
    torch = require("torch", "train", "loading an SB3 model")
    require_safe_torch(torch, "loading an SB3 model")
    require("stable_baselines3", "train", "loading an SB3 model")  # its policy classes rebuild the network
    path = Path(path)
    try:
        return _load_policy(torch, path, algo)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None


def _load_policy(torch: Any, path: Path, algo: str | None) -> Any:
    with _open(path) as archive:
        data = _read_data(archive)
        return _build_policy(torch, path, algo, archive, data)


def _build_policy(
    torch: Any, path: Path, algo: str | None, archive: zipfile.ZipFile, data: dict[str, Any]
) -> Any:
    sidecar_path = path.with_suffix(".json")
    sidecar = None
    if sidecar_path.is_file():
        try:
            text = read_text_limited(sidecar_path, _SIDECAR_MAX_BYTES, "sidecar JSON")
            sidecar = parse_json(text, "the sidecar", allow_nan=True)
        except (ValueError, OSError) as error:
            raise ValueError(f"its sidecar {sidecar_path} cannot be read as JSON: {error}") from None
        if not isinstance(sidecar, dict):
            sidecar = None
    found = detect_algorithm(data)
    if algo is not None and algo != found and {algo, found} != {"ppo", "maskable_ppo"}:
        raise ValueError(f"it holds a {found} policy, not {algo}")
    observation_space, action_space = _spaces(data)
    module, name = _POLICIES[found]
    kwargs, features = _policy_kwargs(data, sidecar)
    rows, columns = observation_space.shape[:2]
    try:
        parameters = policy_parameters(found, rows, columns, kwargs, features)
    except (TypeError, ValueError) as error:
        raise ValueError(f"its policy_kwargs are refused before anything is built: {error}") from None
    # torch.save stores float32 tensors raw: a policy.pth declared smaller than this cannot hold these weights,
    # so the network is never built for it (a few hundred bytes naming net_arch [200000, 200000] would take
    # 160 GB), and one declared larger than the weights and torch.save's records is not theirs: refused before
    # it is decompressed (a zip of deflated zeros declared as 200 MB would take that much to be refused)
    least = 4 * parameters
    most = least + _SAVE_OVERHEAD
    declared = archive.getinfo("policy.pth").file_size
    network = f"the network its policy_kwargs describe ({parameters:,} parameters)"
    if declared < least:
        raise ValueError(f"its policy.pth has {declared:,} bytes; {network} needs at least {least:,}")
    if declared > most:
        raise ValueError(
            f"its policy.pth is declared as {declared:,} bytes; {network} takes at most {most:,}"
        )
    weights = _member(archive, "policy.pth", min(most, _WEIGHTS_MAX_BYTES))
    if features in _FEATURES:
        extractor_module, _, attr = _FEATURES[features].partition(":")
        kwargs["features_extractor_class"] = getattr(importlib.import_module(extractor_module), attr)
    policy_class = getattr(importlib.import_module(module), name)
    try:
        policy = policy_class(observation_space, action_space, lambda _: 0.0, **kwargs)
    except (TypeError, ValueError, KeyError, AssertionError, RuntimeError, AttributeError) as error:
        raise ValueError(f"its policy_kwargs {kwargs!r} do not build a {name}: {error}") from None
    try:
        state = torch.load(io.BytesIO(weights), map_location="cpu", weights_only=True)
        if not isinstance(state, dict):
            raise ValueError("it is not a state dict")
        for key, tensor in state.items():
            if (
                isinstance(tensor, torch.Tensor)
                and tensor.is_floating_point()
                and not torch.isfinite(tensor).all()
            ):
                raise ValueError(f"{key} holds NaN or infinity")
        policy.load_state_dict(state)
    except Exception as error:  # torch raises many types for damaged or mismatched weights
        raise ValueError(f"its weights (policy.pth) cannot be loaded safely into {name}: {error}") from None
    policy.set_training_mode(False)
    return policy


# constructor settings a saved policy leaves out: the spaces and schedule are rebuilt by load_policy, the
# optimiser only matters for training
_NOT_SAVED = {"observation_space", "action_space", "lr_schedule", "optimizer_class", "optimizer_kwargs"}


def save_policy(path: str | os.PathLike[str], policy: Any) -> Path:
    """Write ``policy`` as a model zip that `load_policy` (and so ``SB3Agent.load``) reads: ``data`` (plain
    JSON: policy class, spaces, ``policy_kwargs``) and ``policy.pth`` (the weights), both atomically, plus the
    ``.json`` sidecar naming the feature extractor.

    Returns:
        The path of the zip written.

    Raises:
        ValueError: a policy class or a setting (activation, feature extractor) that the safe loader could not
            rebuild; nothing is written then.
    """
    torch = require("torch", "train", "saving an SB3 model")
    kind = (type(policy).__module__, type(policy).__name__)
    algo = next((name for name, expected in _POLICIES.items() if expected == kind), None)
    if algo is None:
        allowed = ", ".join(f"{m}.{n}" for m, n in _POLICIES.values())
        raise ValueError(f"cannot save a {kind[0]}.{kind[1]}: the safe loader builds {allowed}")
    shape = tuple(policy.observation_space.shape)
    if len(shape) != 3 or shape[2] != 2:
        raise ValueError(f"cannot save a policy for observations of shape {shape}: not (rows, columns, 2)")
    defaults = inspect.signature(type(policy).__init__).parameters
    features = "mlp"
    kwargs: dict[str, Any] = {}
    for key, value in policy._get_constructor_parameters().items():
        if key in _NOT_SAVED:
            continue
        if key == "features_extractor_class":
            found = next(
                (
                    name
                    for name, target in _FEATURES.items()
                    if target == f"{value.__module__}:{value.__name__}"
                ),
                None,
            )
            if found is None and value.__name__ != "FlattenExtractor":
                raise ValueError(
                    f"cannot save feature extractor {value.__name__}: known ones are {list(_FEATURES)}"
                )
            features = found or "mlp"
            continue
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            default = defaults[key].default if key in defaults else inspect.Parameter.empty
            if value is not default:  # e.g. another activation_fn: leaving it out would change the network
                raise ValueError(
                    f"cannot save {key}={value!r}: only plain JSON settings load safely"
                ) from None
            continue
        kwargs[key] = value
    module, name = _POLICIES[algo]
    data = {
        "policy_class": {"__module__": module, "__init__": f"<function {name}.__init__>"},
        "observation_space": {"_shape": list(shape)},
        "action_space": {"n": int(shape[1])},
        "policy_kwargs": kwargs,
    }
    buffer = io.BytesIO()
    torch.save({key: value.detach().cpu() for key, value in policy.state_dict().items()}, buffer)

    def write(stream: Any) -> None:
        with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("data", json.dumps(data, indent=2))
            archive.writestr("policy.pth", buffer.getvalue())

    path = Path(path)
    # the sidecar first: load_policy prefers it to data's policy_kwargs, so a stale one must never survive
    atomic_write_json(
        path.with_suffix(".json"), {"algo": algo, "features": features, "policy_kwargs": kwargs}
    )
    return atomic_write(path, write)
