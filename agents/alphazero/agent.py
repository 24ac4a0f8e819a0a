"""``AlphaZeroAgent``: PUCT search guided by a policy/value network, as a policy."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import torch

from connect4_agents.alphazero.files import ModelFile, load_model, save_model
from connect4_agents.alphazero.network import NetworkEvaluator, PolicyValueNet
from connect4_agents.base import RulesBound, check_search_settings, check_spec_value
from connect4_agents.mcts.agent import MAX_TIME_LIMIT
from connect4_agents.mcts.puct import PUCTResult, PUCTSearch
from connect4_env.core import Board, check_board
from connect4_env.rules import Rules
from connect4_env.validation import check_bool, check_int, check_number, seeded_rng

__all__ = ["AlphaZeroAgent", "DEFAULT_SIMULATIONS", "shipped_model_path"]

DEFAULT_SIMULATIONS = 200
MAX_SIMULATIONS = 1_000_000
SHIPPED_MODEL = "data/alphazero_6x7.zip"  # inside the agents package


def spec_parts(value: str) -> tuple[str | None, int | None]:
    """The model path and the simulation count an ``alphazero:<value>`` spec names (None: the default):
    ``"200"``, ``"model.zip"``, ``"model.zip:200"`` or ``""``. A path that exists is read whole, colons and all.

    Raises:
        ValueError: a negative simulation count (``"-1"``, ``"model.zip:-5"``) where no such file exists.
    """
    if value.isdigit():
        return None, int(value)
    path, colon, count = value.rpartition(":")
    negative = count[:1] == "-" and count[1:].isdigit()
    if (negative or count.isdigit()) and not Path(value).exists():
        if negative:
            raise ValueError(
                f"alphazero:{value}: the simulations a move must be an integer >= 0, got {count}"
            )
        if colon and path:
            return path, int(count)
    return value or None, None


def shipped_model_path() -> Path | None:
    """The 6x7 model shipped with the package, or None when this version ships none."""
    path = Path(str(resources.files("connect4_agents").joinpath(SHIPPED_MODEL)))
    return path if path.is_file() else None


def _checked_time_limit(time_limit: object) -> float | None:
    """``time_limit`` checked: None, or seconds in (0, a week]."""
    if time_limit is None:
        return None
    return check_number("time_limit", time_limit, 0.0, MAX_TIME_LIMIT, above_minimum=True)


class AlphaZeroAgent(RulesBound):
    """Plays the most visited move of a PUCT search with ``simulations`` network evaluations.

    Args:
        model: a model file path, a `connect4_agents.alphazero.files.ModelFile`, or a
            `connect4_agents.alphazero.network.PolicyValueNet` (then ``rules`` says what it plays; default
            6x7). None: the 6x7 model shipped with the package (ValueError while none is shipped).
        simulations: per move; 0 plays the raw policy (the legal column with the highest prior).
        time_limit: the most seconds a move searches (a finite number > 0, at most a week), read on ``clock``
            before each simulation: the search stops at ``simulations`` or when the time is up, whichever
            comes first (with no time left, the raw policy plays). None: ``simulations`` alone.
        c_puct: PUCT's exploration weight.
        seed: breaks ties between equally visited moves.
        rules: the board a bare network plays (a file carries its own).
        threads: torch's CPU threads (process-wide; 1 is fastest for this small network); None leaves it.
        symmetric: evaluate each position together with its mirror image and average the two (priors and
            values; one forward pass of twice the batch). On by default: it keeps the best outcome more often.

    ``AlphaZeroAgent.load(path, **options)`` reads a model file; ``save(path)`` writes the agent's model.
    ``clock`` (``time.perf_counter``) is what ``time_limit`` is measured with.

    Raises:
        TypeError: a setting of the wrong type.
        ValueError: a setting out of range, or (at ``bind``) rules other than the model's.
    """

    name = "alphazero"

    def __init__(
        self,
        model: str | os.PathLike[str] | ModelFile | PolicyValueNet | None = None,
        *,
        simulations: int = DEFAULT_SIMULATIONS,
        c_puct: float = 1.5,
        seed: int | None = None,
        rules: Rules | None = None,
        threads: int | None = 1,
        symmetric: bool = True,
        time_limit: float | None = None,
    ) -> None:
        threads = None if threads is None else check_int("threads", threads, 1, 1024)
        self.simulations = check_int("simulations", simulations, 0, MAX_SIMULATIONS)
        self.c_puct = check_number("c_puct", c_puct, 0.0)
        self.symmetric = check_bool("symmetric", symmetric)
        self.time_limit = _checked_time_limit(time_limit)
        self.clock: Callable[[], float] = time.perf_counter
        check_search_settings(rules, None)
        if model is None:
            shipped = shipped_model_path()
            if shipped is None:
                raise ValueError(
                    "this version ships no trained AlphaZero model yet: pass model=<model.zip> "
                    "(or the spec alphazero:<model.zip>), e.g. one from connect4 train-alphazero"
                )
            model = shipped
        if isinstance(model, PolicyValueNet):
            model = ModelFile(model, rules if rules is not None else Rules())
        elif isinstance(model, (str, os.PathLike)):
            model = load_model(model)
        elif not isinstance(model, ModelFile):
            raise TypeError(
                f"model must be a path, a ModelFile or a PolicyValueNet, got {type(model).__name__}"
            )
        self.model = model
        self._fixed_rules = model.rules
        self.rules: Rules | None = None
        self.evaluator = NetworkEvaluator(model.net, symmetric=self.symmetric)
        self.rng = seeded_rng(seed)
        if threads is not None:  # process-wide: only once every setting and the model are good
            torch.set_num_threads(threads)
        self.last_search: PUCTResult | None = None
        self.last_column: int | None = None

    @classmethod
    def load(cls, path: str | os.PathLike[str], **options: Any) -> AlphaZeroAgent:
        """The agent playing the model saved at ``path`` (by
        [`save`][connect4_agents.alphazero.agent.AlphaZeroAgent.save] or the training script), with
        ``options`` as the constructor's keywords (``simulations``, ``seed``, ...).

        Returns:
            A new agent.

        Raises:
            FileNotFoundError: no file at ``path``.
            TypeError: an option of the wrong type or an unknown option (as the constructor's).
            ValueError: the file is not a model file or fails its checks, or an option is out of range.
        """
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no AlphaZero model file at {path}")
        return cls(load_model(path), **options)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the agent's model (network, rules and training info) atomically, in the format
        [`load`][connect4_agents.alphazero.agent.AlphaZeroAgent.load] reads.

        Returns:
            The path written.
        """
        return save_model(path, self.model.net, self.model.rules, self.model.info)

    @classmethod
    def from_spec(cls, value: str, **kwargs: Any) -> AlphaZeroAgent:
        """``"alphazero:<simulations>"`` (the shipped model with that many simulations a move; 0 = the raw
        policy), ``"alphazero:<model.zip>"`` (a model file, 200 simulations) or
        ``"alphazero:<model.zip>:<simulations>"``; plain ``"alphazero"`` is the shipped model with 200.
        """
        value = check_spec_value(value)
        path, count = spec_parts(value)
        if count is not None:
            kwargs["simulations"] = count
        return cls(None if path is None else Path(path), **kwargs)

    def _check_rules(self, rules: Rules) -> None:
        mine = self.model.rules
        if (rules.rows, rules.columns, rules.win_length) != (mine.rows, mine.columns, mine.win_length):
            raise ValueError(
                f"the model plays {mine.rows}x{mine.columns} with {mine.win_length} in a row and cannot play "
                f"{rules.rows}x{rules.columns} with {rules.win_length} in a row"
            )

    def reset(self, seed: int | None = None) -> None:
        """Forget the last search before a new game (the policy's ``reset``); a ``seed`` reseeds the
        tie-breaking RNG, None keeps it.

        Raises:
            TypeError: ``seed`` is a bool, a float, a string or another type numpy cannot seed from (nothing
                changes).
            ValueError: ``seed`` is a negative integer (nothing changes).
        """
        rng = seeded_rng(seed) if seed is not None else self.rng  # a bad seed changes nothing
        self.last_search = None
        self.last_column = None
        self.rng = rng

    def __repr__(self) -> str:
        return f"AlphaZeroAgent(simulations={self.simulations})"

    def act(self, observation: Any, action_mask: Any = None) -> int:
        """The column to play (see the class docstring).

        Raises:
            ValueError: the mask disagrees with the position, or the board is not the model's size.
        """
        board, legal = self.read_board(observation, action_mask)
        if self.rules is None:
            self.bind(self.model.rules)
        self._check_rules(board.rules)
        return self.choose(board)

    def choose(self, board: Board) -> int:
        """The column to play on ``board``.

        Raises:
            TypeError: ``board`` is not a [`Board`][connect4_env.core.Board], or a ``time_limit`` set after
                construction is not a number.
            ValueError: the game is over, the board is not the model's size, or a ``time_limit`` set after
                construction is out of range.
        """
        self._check_rules(check_board(board).rules)
        if board.is_terminal:
            raise ValueError("the game is over: there is no move to choose")
        # the attribute can be changed after construction (the Kaggle wrapper sets it each move): check it
        self.time_limit = _checked_time_limit(self.time_limit)
        if self.simulations == 0:
            priors, _ = self.evaluator.evaluate([board])
            best = np.flatnonzero(priors[0] == priors[0].max())
            column = int(best[int(self.rng.integers(len(best)))])
            self.last_search = None
        else:
            result = self._search(board)
            policy = result.policy(temperature=0)
            best = np.flatnonzero(policy == policy.max())
            column = int(best[int(self.rng.integers(len(best)))])
            self.last_search = result
        self.last_column = column
        return column

    def _search(self, board: Board) -> PUCTResult:
        """The PUCT search of ``board``: ``simulations``, or fewer where ``time_limit`` runs out first."""
        search = PUCTSearch(self.evaluator, c_puct=self.c_puct)
        if self.time_limit is None:
            return search.search(board, self.simulations)
        deadline = self.clock() + self.time_limit
        (root,) = search.roots([board])
        for _ in range(self.simulations):
            if root.proof is not None or self.clock() >= deadline:
                break
            search.run([root], 1)
        return search.result(root)

    def move_info(self) -> dict[str, Any] | None:
        """The last search as plain JSON, in the records' ``"mcts"`` shape, every value for the player who was
        to move (as [`SearchResult`][connect4_agents.mcts.result.SearchResult] records it): ``visits`` per
        column, ``values`` the mean value of each move on the 0..1 scale (win 1, draw 1/2; None if unvisited),
        ``proven`` ``"win"``/``"draw"``/``"loss"`` or None, ``playouts``, plus the network's ``priors``; None
        before a move or after a raw-policy move.
        """
        result = self.last_search
        if result is None or self.last_column is None:
            return None
        names = {1: "win", 0: "draw", -1: "loss"}
        return {
            "kind": "mcts",
            "column": self.last_column,
            "visits": [int(v) for v in result.visits],
            "values": [None if math.isnan(v) else round((float(v) + 1) / 2, 4) for v in result.values],
            "proven": [None if p is None else names[p] for p in result.proven],
            "playouts": int(result.simulations),
            "priors": [round(float(p), 4) for p in result.priors],
        }
