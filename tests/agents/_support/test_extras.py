"""A missing optional dependency gets one clear error naming its extra, from the API and from the commands."""

from __future__ import annotations

import pytest

from connect4_agents._support.cli import EXIT_USAGE, run_cli
from connect4_agents._support.extras import MissingExtraError, require


def test_require_names_the_extra_and_the_pip_command() -> None:
    assert require("json", "train", "reading").loads("[1]") == [1]
    with pytest.raises(MissingExtraError) as raised:
        require("no_such_module_for_connect4", "train", "loading an SB3 model")
    message = str(raised.value)
    assert "loading an SB3 model needs the 'train' extra" in message
    assert "no_such_module_for_connect4 is not installed" in message
    assert 'pip install "connect4-env[train]"' in message
    assert isinstance(raised.value, ImportError)  # ``except ImportError`` still catches it


def test_commands_print_it_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    def work() -> None:
        require("no_such_module_for_connect4", "render", "the play window")

    assert run_cli(work) == EXIT_USAGE
    assert capsys.readouterr().err.startswith("error: the play window needs the 'render' extra")
