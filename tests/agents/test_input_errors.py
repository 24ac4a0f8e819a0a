"""A bad input (a folder for a model file, a host that is no address, a damaged Q-table or model, a text spec
without its function, digits that are not ASCII, a setting through SB3's set_attr) is answered in this
project's words, not another library's (zipfile, numpy, the resolver, argparse's "missing argument"): an
error naming the value and what is allowed, and a failed call changes nothing."""

from __future__ import annotations

import io
import json
import re
import socket
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.extras import importorskip, needs

from connect4_env.policy import policy_from_spec, resolve_opponent
from connect4_env.rules import Rules


# --- 1. a folder where a model file is expected --------------------------------------------------------------
def test_an_alphazero_folder_is_named_as_a_folder(tmp_path: Path) -> None:
    importorskip("torch")
    from connect4_agents.alphazero.files import load_model

    with pytest.raises(ValueError, match=r"is a folder; an AlphaZero model is a \.zip file"):
        load_model(tmp_path)  # it was "[Errno 21] Is a directory"
    for spec in (f"alphazero:{tmp_path}", f"alphazero:{tmp_path}:5"):
        with pytest.raises(ValueError, match=f"{tmp_path} is a folder"):
            policy_from_spec(spec)


# --- 2. serve-openenv's host ---------------------------------------------------------------------------------
@pytest.mark.parametrize("host", ["bad_host!", "999.1.1.1", "a..b", "-x", "[::1]", "bad host", "x" * 64])
def test_serve_openenv_refuses_a_host_that_is_no_address_before_any_lookup(
    host: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from connect4_agents.commands import serve_openenv

    with pytest.raises(SystemExit) as exit_:  # argparse's usage error, before the extra is needed
        serve_openenv.main([f"--host={host}"])
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert exit_.value.code == 2 and f"{host[:80]!r} is not an address" in error


@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0", "::1", "localhost", "my-host.example.com", "host."])
def test_serve_openenv_takes_addresses_and_host_names(host: str) -> None:
    from connect4_agents.commands import serve_openenv

    assert serve_openenv.build_parser().parse_args(["--host", host]).host == host


def test_a_host_name_that_does_not_resolve_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    importorskip("openenv")
    from connect4_env.integrations.openenv import server as openenv_server

    class Unresolved:
        """A socket whose bind meets a name the resolver does not know (no network is asked)."""

        def __init__(self, *args: Any) -> None:
            self.closed = False

        def setsockopt(self, *args: Any) -> None:
            pass

        def bind(self, address: Any) -> None:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

        def close(self) -> None:
            self.closed = True

    monkeypatch.setattr(openenv_server.socket, "socket", Unresolved)
    with pytest.raises(
        OSError, match="cannot listen on host 'nosuchhost.invalid': Name or service not known"
    ):
        openenv_server.serve("nosuchhost.invalid", 0)
    with pytest.raises(TypeError, match="host must be a str"):
        openenv_server.serve(None, 0)  # type: ignore[arg-type]


# --- 4. damaged Q-table and model files ----------------------------------------------------------------------
def _qtable(path: Path) -> Path:
    from connect4_agents.qlearning.files import save_qtable

    rules = Rules(4, 5, 4)
    empty_key = sum(1 << (column * rules.height) for column in range(rules.columns))
    return save_qtable(path, rules, {empty_key: np.arange(5.0)}, {"episodes": 1})


def _rewrite(source: Path, target: Path, member: str, change: Any) -> Path:
    """``source`` copied to ``target`` with ``member``'s bytes replaced by ``change(bytes)``."""
    with zipfile.ZipFile(source) as archive, zipfile.ZipFile(target, "w") as out:
        for name in archive.namelist():
            data = archive.read(name)
            out.writestr(name, change(data) if name == member else data)
    return target


def _npy_meta(change: Any) -> Any:
    def rewrite(data: bytes) -> bytes:
        meta = json.loads(str(np.load(io.BytesIO(data))[()]))
        change(meta)
        buffer = io.BytesIO()
        np.save(buffer, np.array(json.dumps(meta)))
        return buffer.getvalue()

    return rewrite


@pytest.mark.parametrize("cut", [1, 3, 8, 40])
def test_a_truncated_q_array_is_named_damaged_not_a_numpy_buffer_error(tmp_path: Path, cut: int) -> None:
    from connect4_agents.qlearning.files import load_qtable

    good = _qtable(tmp_path / "good.npz")
    bad = _rewrite(good, tmp_path / "cut.npz", "q.npy", lambda data: data[:-cut])
    # a cut inside a value was numpy's "buffer size must be a multiple of element size"
    with pytest.raises(ValueError, match=r"cut\.npz: q\.npy is damaged or truncated: .* needs 40 bytes"):
        load_qtable(bad)
    header_cut = _rewrite(good, tmp_path / "header.npz", "q.npy", lambda data: data[:20])
    with pytest.raises(ValueError, match=r"header\.npz: q\.npy is damaged or truncated: its array header"):
        load_qtable(header_cut)
    assert load_qtable(good).q.tolist() == [[0.0, 1.0, 2.0, 3.0, 4.0]]


@pytest.mark.parametrize("version", [True, 1.0, "1"])
def test_a_q_table_version_must_be_the_integer_1(tmp_path: Path, version: object) -> None:
    from connect4_agents.qlearning.files import load_qtable

    change = _npy_meta(lambda meta: meta.update(version=version))
    bad = _rewrite(_qtable(tmp_path / "good.npz"), tmp_path / "bad.npz", "meta.npy", change)
    with pytest.raises(ValueError, match=f"format version {version!r}; this version reads version 1"):
        load_qtable(bad)  # True == 1: true was read as version 1


def test_a_q_table_folder_says_so(tmp_path: Path) -> None:
    from connect4_agents.qlearning.files import load_qtable

    with pytest.raises(FileNotFoundError, match=r"a folder; a Q-table is a \.npz file"):
        load_qtable(tmp_path)


@pytest.mark.parametrize("version", [True, 1.0])
def test_an_alphazero_model_version_must_be_the_integer_1(tmp_path: Path, version: object) -> None:
    importorskip("torch")
    from connect4_agents.alphazero.files import load_model, save_model
    from connect4_agents.alphazero.network import PolicyValueNet

    good = save_model(tmp_path / "good.zip", PolicyValueNet(4, 0), Rules(), {})

    def change(data: bytes) -> bytes:
        return json.dumps({**json.loads(data), "version": version}).encode()

    bad = _rewrite(good, tmp_path / "bad.zip", "model.json", change)
    with pytest.raises(ValueError, match=f"version {version!r}; this version reads version 1"):
        load_model(bad)
    assert load_model(good).rules == Rules()


# --- 5. a spec that needs its value --------------------------------------------------------------------------
@pytest.mark.parametrize("spec", ["text", "text:"])
def test_evaluate_text_says_what_a_text_spec_is(spec: str, capsys: pytest.CaptureFixture[str]) -> None:
    from connect4_agents.commands import evaluate

    assert evaluate.main([spec, "--no-progress", "--workers", "1"]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "text:<module>:<function>" in error, error
    assert "missing 1 required positional argument" not in error


def test_a_bare_name_that_needs_a_value_says_which_forms_it_takes() -> None:
    with pytest.raises(
        ValueError, match=r"agent spec 'text' needs a value .*: write text:<module>:<function>"
    ):
        resolve_opponent("text")  # it was TextPolicy.__init__()'s "missing 1 required positional argument"
    with pytest.raises(ValueError, match=r"'mcts:': the value after ':' is empty; write mcts:<playouts> or"):
        policy_from_spec("mcts:")


# --- 7. ASCII digits only in specs ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "named"),
    [
        ("mcts:\u0665", "ARABIC-INDIC DIGIT FIVE"),  # int() reads it as 5
        ("mcts:\uff15", "FULLWIDTH DIGIT FIVE"),
        ("mcts:0.\u0665s", "ARABIC-INDIC DIGIT FIVE"),
        pytest.param("alphazero:\u0665", "ARABIC-INDIC DIGIT FIVE", marks=needs("train", "torch")),
        ("mcts:\u00b2", "SUPERSCRIPT TWO"),
        ("mcts:5\u2003", "characters other than ASCII"),  # an em space, which int() strips
    ],
)
def test_spec_numbers_take_ascii_digits_only(spec: str, named: str) -> None:
    with pytest.raises(ValueError, match=f"agent spec {re.escape(repr(spec))}: .*{named}.*ASCII digits 0-9"):
        policy_from_spec(spec)


def test_ascii_counts_and_non_ascii_file_names_are_read_as_before(tmp_path: Path) -> None:
    assert policy_from_spec("mcts:5").playouts == 5
    assert policy_from_spec("mcts:0.5s").time_limit == 0.5
    missing = tmp_path / "table\u00e9.npz"
    with pytest.raises(
        FileNotFoundError, match="table\u00e9.npz"
    ):  # a file name, not a number: its own error
        policy_from_spec(f"qlearning:{missing}")


# --- 8. the SB3 VecEnv's set_attr ----------------------------------------------------------------------------
def test_sb3_set_attr_checks_the_setting_as_the_constructor_does() -> None:
    importorskip("stable_baselines3")
    from connect4_agents.mcts.agent import MCTSAgent
    from connect4_env.integrations.sb3 import make_sb3_vec_env

    venv = make_sb3_vec_env(2, opponent="random")  # with VecMonitor, which passes set_attr on
    venv.set_attr("opponent", "mcts:5")  # a spec is built and bound, as opponent= is
    assert isinstance(venv.get_attr("opponent")[0], MCTSAgent)
    venv.set_attr("agent_first", None, indices=[0, 1])
    assert venv.get_attr("agent_first") == [None, None]
    refused: list[tuple[tuple[Any, ...], type[Exception], str]] = [
        (("opponent", "nope"), ValueError, "unknown agent 'nope'"),
        (("opponent", 3), TypeError, "opponent must be an agent name"),
        (("agent_first", "yes"), TypeError, "agent_first must be True, False or None"),
        (("illegal_action", "retry"), ValueError, "illegal_action='retry' is not supported"),
        (("copy", 1), TypeError, "copy must be True or False"),
        (("rules", Rules(4, 4, 3)), AttributeError, "cannot set 'rules'; settable: opponent, agent_first"),
        (("_obs", None), AttributeError, "cannot set '_obs'"),
        (("spare", 1), AttributeError, "cannot set 'spare'"),
        ((3, 1), TypeError, "attr_name must be a str"),
        (("agent_first", False, [0]), ValueError, "the 2 games share their settings"),
        (("agent_first", False, 5), ValueError, "indices must be an integer in 0..1"),
    ]
    for args, error, message in refused:
        with pytest.raises(error, match=message):
            venv.set_attr(*args)
    assert isinstance(venv.get_attr("opponent")[0], MCTSAgent)  # nothing changed
    assert venv.get_attr("agent_first") == [None, None] and venv.get_attr("illegal_action")[0] == "lose"
    assert venv.reset().shape == (2, 6, 7, 2)
    venv.close()
