"""`connect4 serve-openenv` reads which OpenEnv distributions are installed (`openenv`, `openenv-core`: one
package, two distributions) from their metadata before it imports or serves anything: too old a release is a
one-line error naming it, both at once a warning naming the one to keep."""

from __future__ import annotations

import importlib.metadata
import sys
import types

import pytest

from connect4_agents.commands import serve_openenv
from connect4_agents.commands.serve_openenv import check_openenv
from connect4_env.extras import MissingExtraError


def installed_as(monkeypatch: pytest.MonkeyPatch, versions: dict[str, str]) -> None:
    """Make the environment's metadata show these distributions of OpenEnv, and a server that fails if run."""

    def version(name: str) -> str:
        if name in versions:
            return versions[name]
        if name in ("openenv", "openenv-core"):
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    def serve(*args: object, **kwargs: object) -> None:
        raise AssertionError("the server was started")

    real = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version", version)
    monkeypatch.setitem(
        sys.modules, "connect4_env.integrations.openenv.server", types.SimpleNamespace(serve=serve)
    )


@pytest.mark.parametrize(
    ("versions", "named"),
    [
        ({"openenv-core": "0.2.3"}, "found openenv-core 0.2.3: pip install --upgrade openenv-core"),
        ({"openenv": "0.9.1"}, "found openenv 0.9.1: pip install --upgrade openenv"),
        ({"openenv": "0.9.1", "openenv-core": "0.2.0"}, "found openenv 0.9.1 and openenv-core 0.2.0"),
    ],
)
def test_too_old_an_openenv_is_named_before_anything_is_served(
    versions: dict[str, str], named: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    installed_as(monkeypatch, versions)
    assert serve_openenv.main(["--port", "0"]) == 2
    error = capsys.readouterr().err
    assert "needs openenv 0.10 or later, or openenv-core 0.3 or later" in error and named in error


def test_both_distributions_at_once_are_a_warning_naming_the_one_to_keep() -> None:
    both = check_openenv({"openenv": "0.10.0", "openenv-core": "0.3.0"})
    assert both is not None and "openenv 0.10.0 and openenv-core 0.3.0 are both installed" in both
    assert "keep one" in both
    one_old = check_openenv({"openenv": "0.9.0", "openenv-core": "0.3.1"})
    assert one_old is not None and "keep openenv-core (pip uninstall openenv)" in one_old
    assert check_openenv({"openenv-core": "0.3.0"}) is None and check_openenv({"openenv": "1.2"}) is None
    assert check_openenv({}) is None  # none at all: the extra's own error comes next
    with pytest.raises(MissingExtraError, match="found openenv junk"):
        check_openenv({"openenv": "junk"})
