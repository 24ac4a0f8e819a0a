"""SB3Agent's errors without a model: they name where a model comes from (no SB3 needed to get them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from connect4_agents import make_policy, policy_from_spec
from connect4_agents.sb3.agent import SB3Agent


def test_make_agent_sb3_without_a_model_names_the_fix() -> None:
    with pytest.raises(
        TypeError, match=r"needs a trained model.*SB3Agent\.load\('model\.zip'\).*'sb3:<model\.zip>'"
    ):
        make_policy("sb3")
    with pytest.raises(TypeError, match=r"needs a trained model"):
        policy_from_spec("sb3", seed=0)  # the command-line spec without ':<model.zip>'


@pytest.mark.parametrize("path", ["runs/sb3/model.zip", Path("model.zip")])
def test_a_path_instead_of_a_policy_points_to_load(path: str | Path) -> None:
    with pytest.raises(TypeError, match=r"not a path.*SB3Agent\.load"):
        SB3Agent(path)
