"""The n-tuple agent: plays the move whose afterstate the network values most, without search.

An immediate win is always taken (a winning afterstate is worth exactly 1, above any estimate); everything
else is the network's judgement. The spec ``ntuple`` plays the shipped 6x7 network, ``ntuple:PATH`` a network
file written by ``connect4 train-ntuple`` (or
[`NTupleTrainer`][connect4_agents.ntuple.train.NTupleTrainer]).
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from connect4_agents.base import RulesBound, check_mask_width, check_spec_value, legal_columns, unpack
from connect4_agents.ntuple.files import DEFAULT_MAX_BYTES
from connect4_agents.ntuple.network import NTupleNetwork
from connect4_env.core import Board
from connect4_env.validation import seeded_rng

__all__ = ["NTupleAgent", "SHIPPED_MODEL", "shipped_model_path"]

SHIPPED_MODEL = "ntuple-6x7.npz"  # in connect4_agents/data


def shipped_model_path() -> Path:
    """The path of the shipped 6x7 network (the spec ``ntuple``)."""
    return Path(str(resources.files("connect4_agents") / "data" / SHIPPED_MODEL))


class NTupleAgent(RulesBound):
    """A policy that picks the column whose afterstate an n-tuple network values most.

    Args:
        network: the network to play (default: the shipped 6x7 one, `shipped_model_path`).
        seed: seeds the choice among equally valued columns.

    Raises:
        TypeError: ``network`` is not an [`NTupleNetwork`][connect4_agents.ntuple.network.NTupleNetwork].
        FileNotFoundError: no network given and the shipped one is missing from this install.
    """

    name = "ntuple"
    restricted_masks = True  # chooses among whatever legal columns the mask allows (a shield narrows it)

    def __init__(self, network: NTupleNetwork | None = None, *, seed: int | None = None) -> None:
        if network is None:
            network, meta = NTupleNetwork.load(shipped_model_path())
        elif not isinstance(network, NTupleNetwork):
            raise TypeError(f"network must be an NTupleNetwork, got {type(network).__name__}")
        else:
            meta = {}
        self.network = network
        self.meta: dict[str, Any] = meta
        self._fixed_rules = network.rules
        self.rules = None
        self.rng = seeded_rng(seed)
        self._last: dict[str, Any] | None = None

    @classmethod
    def from_spec(cls, value: str, **kwargs: Any) -> NTupleAgent:
        """``"ntuple:<model.npz>"``: the network saved at that path (see
        [`load`][connect4_agents.ntuple.agent.NTupleAgent.load]).
        """
        return cls.load(check_spec_value(value), **kwargs)

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], *, seed: int | None = None, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> NTupleAgent:
        """The agent playing the network in ``path`` (a model or checkpoint of ``connect4 train-ntuple``).

        Raises:
            FileNotFoundError: no file at ``path``.
            TypeError: ``max_bytes`` is not an integer.
            ValueError: the file is not a network file, is damaged, or needs more than ``max_bytes`` (see
                [`load_network`][connect4_agents.ntuple.files.load_network]).
        """
        network, meta = NTupleNetwork.load(path, max_bytes)
        agent = cls(network, seed=seed)
        agent.meta = meta
        return agent

    def __repr__(self) -> str:
        r = self.network.rules
        games = self.meta.get("games", 0)
        return (
            f"NTupleAgent({r.rows}x{r.columns}, win_length={r.win_length}, tuples={self.network.n_tuples}x"
            f"{self.network.length}, games={games:,})"
        )

    def reset(self, seed: int | None = None) -> None:
        """A new game; a seed, if given, reseeds the choice among equally valued columns."""
        if seed is not None:
            self.rng = seeded_rng(seed)

    def move_values(self, board: Board) -> np.ndarray:
        """Each column's afterstate value for the player to move (NaN for a full column; see
        [`NTupleNetwork.move_values`][connect4_agents.ntuple.network.NTupleNetwork.move_values]).

        Raises:
            ValueError: ``board`` is not of the network's rules.
        """
        if board.rules != self.network.rules:
            raise ValueError(f"this network plays {self.network.rules}, not {board.rules}")
        return self.network.move_values(board)

    def act(self, observation: Any, action_mask: Any = None) -> int:
        """The column with the best afterstate value (random among equal ones) among those ``action_mask``
        allows: the legal columns, or fewer (a shield narrows them, see ``restricted_masks``).

        Raises:
            TypeError: the mask holds neither numbers nor booleans.
            ValueError: the observation is not a position of the network's board, or the mask is not one 0/1
                entry per column or allows a full column.
            NoLegalMoveError: the mask allows no column (a ValueError).
        """
        if self.rules is None:
            self.rules = self.network.rules
        if action_mask is None and not isinstance(observation, dict):
            planes, mask = observation, None
        else:
            planes, mask = unpack(observation, action_mask)
        board, legal = self.read_board(planes, None, mask_required=False)
        allowed = legal
        if mask is not None:
            check_mask_width(np.asarray(mask), board.rules.columns)
            allowed = [int(c) for c in legal_columns(mask)]
            full = sorted(set(allowed) - set(legal))
            if full:
                raise ValueError(
                    f"action_mask {np.asarray(mask).tolist()} allows column {full[0]}, which is full"
                )
        values = self.network.move_values(board)
        chosen = values[allowed]
        best = np.flatnonzero(chosen == chosen.max())
        pick = best[0] if best.size == 1 else best[int(self.rng.integers(best.size))]
        column = int(allowed[pick])
        shown = [None if np.isnan(v) else round(float(v), 4) for v in values]
        self._last = {"kind": "ntuple", "column": column, "values": shown}
        return column

    def move_info(self) -> dict[str, Any] | None:
        """The last move as plain JSON: ``kind`` "ntuple", the ``column`` played and every column's afterstate
        ``values`` for the mover (None for a full column); None before any move. Game records and the play
        window show it.
        """
        return None if self._last is None else dict(self._last)
