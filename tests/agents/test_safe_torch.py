"""The model loaders refuse a torch whose ``torch.load(weights_only=True)`` runs code from the file (before 2.6,
CVE-2025-32434), and the train extra asks for no older one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tomllib
from helpers.extras import importorskip

torch = importorskip("torch")
from connect4_agents._support.files import SAFE_TORCH, require_safe_torch  # noqa: E402
from connect4_env.extras import MissingExtraError  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("version", ["2.1.0", "2.5.1+cpu", "1.13.1", "nightly"])
def test_a_torch_before_2_6_is_refused_with_its_version(
    version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(torch, "__version__", version)
    with pytest.raises(
        MissingExtraError, match=rf"needs torch 2\.6 or later.*CVE-2025-32434.*{re.escape(version)}"
    ):
        require_safe_torch(torch, "loading a model")


@pytest.mark.parametrize("version", ["2.6.0", "2.13.0+cpu", "3.0.0a0"])
def test_torch_2_6_and_later_are_taken(version: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch, "__version__", version)
    require_safe_torch(torch, "loading a model")


def test_the_alphazero_loader_refuses_an_unsafe_torch_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from connect4_agents.alphazero import PolicyValueNet, load_model, save_model
    from connect4_env import Rules

    path = save_model(tmp_path / "model.zip", PolicyValueNet(channels=8, blocks=1), Rules())
    assert load_model(path).rules == Rules()
    monkeypatch.setattr(torch, "__version__", "2.5.1")
    with pytest.raises(MissingExtraError, match="loading an AlphaZero model needs torch 2.6 or later"):
        load_model(path)


def test_the_sb3_loaders_refuse_an_unsafe_torch_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    importorskip("stable_baselines3")
    from connect4_agents.sb3.agent import SB3Agent
    from connect4_agents.sb3.files import load_policy

    monkeypatch.setattr(torch, "__version__", "2.5.1")
    path = tmp_path / "model.zip"
    path.write_bytes(b"not looked at")
    with pytest.raises(MissingExtraError, match="loading an SB3 model needs torch 2.6 or later"):
        SB3Agent.load(path)
    with pytest.raises(MissingExtraError, match="loading an SB3 model needs torch 2.6 or later"):
        load_policy(path)


def test_the_train_extra_asks_for_a_safe_torch() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    floor = ".".join(map(str, SAFE_TORCH))
    for extra, requirements in extras.items():
        for requirement in requirements:
            if re.match(r"torch\b", requirement):
                assert requirement == f"torch>={floor}", (extra, requirement)
    assert f"torch>={floor}" in extras["train"]
