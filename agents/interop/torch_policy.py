"""A torch network trained elsewhere as a policy (env side: `connect4_env.envs.gym_env`'s observations).

The network (CleanRL, Tianshou, your own loop) never plays a masked column.

Scripts such as CleanRL's ``ppo.py`` train on ``Connect4Flat-v0`` and sample from the raw logits, so their agents
sometimes drop a stone into a full column and lose. `TorchPolicy` wraps such a network: it builds the
observation the network was trained on from the planes every policy receives, runs the network, and takes the
best (or samples a) legal column. It then plays wherever a policy is asked for: ``Connect4-v0``'s opponent,
the batched env (through `TorchPolicy.act_batch`), the arena and tournaments.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from connect4_agents.base import NoLegalMoveError, RulesAware, mask_booleans, unpack
from connect4_env.rules import Rules
from connect4_env.validation import check_bool, check_choice, seeded_rng

__all__ = ["TorchPolicy", "OBSERVATIONS", "OUTPUTS"]

OBSERVATIONS = ("flat", "planes", "channels_first")
"""What the network reads, float32 with a leading batch dimension: ``"flat"`` is exactly ``Connect4Flat-v0``'s
observation, ``(batch, rows * columns * 2)``; ``"planes"`` is ``Connect4-v0``'s, ``(batch, rows, columns, 2)``;
``"channels_first"`` the same planes as ``(batch, 2, rows, columns)``, the layout torch's ``Conv2d`` expects."""

OUTPUTS = ("logits", "q")
"""What the network returns per column: ``"logits"`` (an actor: argmax, or a sample with ``deterministic=False``)
or ``"q"`` (action values: always the argmax)."""


class TorchPolicy(RulesAware):
    """A torch network as a policy: the action mask is applied before the argmax or the sample.

    Args:
        model: the network, any callable from a float32 tensor to per-column scores (a ``torch.nn.Module``
            is put in eval mode). Its output is a tensor of shape ``(batch, columns)``, or a tuple or list
            whose first item is that tensor (Tianshou's nets return ``(logits, state)``).
        observation: ``"flat"``, ``"planes"`` or ``"channels_first"`` (see `OBSERVATIONS`).
        output: ``"logits"`` or ``"q"`` (see `OUTPUTS`).
        forward: called instead of ``model`` with the observation tensor, for a network whose scores come
            from a part of it: ``forward=agent.actor`` for a CleanRL ``Agent``, which has no ``forward`` of
            its own. ``model`` still sets the device and is put in eval mode.
        deterministic: True: the best legal column; False: a column sampled from the softmax of the legal
            logits (``output="logits"`` only), seeded by ``seed`` and ``reset(seed=...)``.
        device: where observations are sent; None: the device of the model's first parameter (CPU for a
            model without parameters).
        seed: seeds the sampling.

    Every call runs under ``torch.no_grad()``; ties go to the leftmost column. ``bind(rules)`` (which every
    env, the arena and the commands call) runs the network once on an empty board of that size and raises
    ``ValueError`` if it cannot take it or does not answer one score per column.

    Raises:
        TypeError: ``model`` or ``forward`` is not callable, ``deterministic`` is not a bool, ``device`` is
            not a string or ``torch.device``, or ``seed`` is a type numpy cannot seed from.
        ValueError: an unknown ``observation`` or ``output``, ``deterministic=False`` with ``output="q"``, a
            ``device`` name torch does not know, or a negative ``seed``.
    """

    uses_observations = True

    def __init__(
        self,
        model: Any,
        *,
        observation: str = "flat",
        output: str = "logits",
        forward: Callable[[Any], Any] | None = None,
        deterministic: bool = True,
        device: Any = None,
        seed: int | None = None,
    ) -> None:
        import torch

        if not callable(model):
            raise TypeError(
                f"model must be a torch network (a callable such as a torch.nn.Module), got "
                f"{type(model).__name__}"
            )
        if forward is not None and not callable(forward):
            raise TypeError(f"forward must be a callable of the observation tensor or None, got {forward!r}")
        self.observation = check_choice("observation", observation, OBSERVATIONS)
        self.output = check_choice("output", output, OUTPUTS)
        self.deterministic = check_bool("deterministic", deterministic)
        if not deterministic and output == "q":
            raise ValueError("deterministic=False samples from logits; output='q' always takes the argmax")
        if device is None:
            parameter = next(iter(model.parameters()), None) if isinstance(model, torch.nn.Module) else None
            device = torch.device("cpu") if parameter is None else parameter.device
        elif not isinstance(device, (str, torch.device)):
            raise TypeError(f"device must be a string such as 'cpu' or a torch.device, got {device!r}")
        try:
            self.device = torch.device(device)
        except RuntimeError as error:  # torch's own message for an unknown name, e.g. 'gpu'
            raise ValueError(
                f"device {device!r} is not a torch device such as 'cpu' or 'cuda:0' ({error})"
            ) from None
        if isinstance(model, torch.nn.Module):
            model.eval()  # dropout off, batch norm on its running statistics
        self.model = model
        self.forward = model if forward is None else forward
        self.rng = seeded_rng(seed)

    def __repr__(self) -> str:
        return f"TorchPolicy({type(self.model).__name__}, observation={self.observation!r}, output={self.output!r})"

    def reset(self, seed: int | None = None) -> None:
        """Before a game: reseed the sampling when ``seed`` is given."""
        if seed is not None:
            self.rng = seeded_rng(seed)

    def _check_rules(self, rules: Rules) -> None:
        planes = np.zeros((1, rules.rows, rules.columns, 2), dtype=np.int8)
        try:
            self.scores(planes)
        except ValueError as error:
            raise ValueError(
                f"the network cannot play a {rules.rows}x{rules.columns} board: {error}"
            ) from None
        except RuntimeError as error:
            # torch's own shape errors, such as "mat1 and mat2 shapes cannot be multiplied"
            raise ValueError(
                f"the network cannot take a {rules.rows}x{rules.columns} board's {self.observation!r} observation "
                f"of shape {self.encode(planes).shape}: {error}"
            ) from None

    def encode(self, planes: np.ndarray) -> np.ndarray:
        """The float32 array the network reads, from int8 planes ``(batch, rows, columns, 2)``.

        Raises:
            ValueError: ``planes`` do not have that shape.
        """
        planes = np.asarray(planes)
        if planes.ndim != 4 or planes.shape[-1] != 2:
            raise ValueError(f"observations must have shape (batch, rows, columns, 2), got {planes.shape}")
        if self.observation == "flat":  # as Connect4Flat-v0: float32, then flattened row by row
            return planes.astype(np.float32).reshape(planes.shape[0], -1)
        if self.observation == "channels_first":
            return np.ascontiguousarray(planes.transpose(0, 3, 1, 2), dtype=np.float32)
        return planes.astype(np.float32)

    def scores(self, planes: np.ndarray) -> np.ndarray:
        """The network's scores, float64 ``(batch, columns)``, for int8 planes ``(batch, rows, columns, 2)``.

        Raises:
            TypeError: the network returned neither a tensor/array nor a tuple starting with one.
            ValueError: the output's shape is not ``(batch, columns)``, or it holds NaN.
        """
        import torch

        planes = np.asarray(planes)
        inputs = self.encode(planes)
        with torch.no_grad():
            result = self.forward(torch.from_numpy(inputs).to(self.device))
        if isinstance(result, (tuple, list)) and result:
            result = result[0]  # Tianshou: (logits, hidden state)
        if isinstance(result, torch.Tensor):
            values = result.detach().to("cpu", torch.float64).numpy()
        elif isinstance(result, np.ndarray) and np.issubdtype(result.dtype, np.number):
            values = result.astype(np.float64)
        else:
            raise TypeError(
                f"the network returned {type(result).__name__}; it must return a tensor of shape "
                f"(batch, columns) or a tuple whose first item is one (pass forward= to pick it)"
            )
        expected = (planes.shape[0], planes.shape[2])
        if values.shape != expected:
            raise ValueError(
                f"the network returned scores of shape {tuple(values.shape)} for observations of shape "
                f"{tuple(inputs.shape)}; expected {expected}: (batch, columns)"
            )
        if np.isnan(values).any():
            row = int(np.flatnonzero(np.isnan(values).any(axis=1))[0])
            raise ValueError(
                f"the network returned NaN scores {values[row].tolist()} (row {row} of the batch)"
            )
        return values

    def act_batch(self, observations: Any, action_masks: Any) -> np.ndarray:
        """One legal column per game for ``observations`` ``(batch, rows, columns, 2)`` and ``action_masks``
        ``(batch, columns)``; returns an int64 array (the batched env calls this).

        Where a game's planes show a position (0s and 1s, no cell taken twice, no stone above an empty cell, the
        mover with as many stones as the opponent or one fewer), its mask must allow exactly the columns that
        are not full, as every policy of ours checks: a mask that lies is refused rather than trusted into a
        full column. Planes that show no position (a network fed other inputs) are taken with their mask as
        they are.

        Raises:
            ValueError: shapes that do not fit, a mask that disagrees with its game's position (naming both),
                NaN scores, or every legal column scored -inf (or +inf when sampling).
            NoLegalMoveError: a mask allows no column.
            TypeError: see `scores`.
        """
        observations = np.asarray(observations)
        masks = np.asarray(action_masks)
        if observations.ndim != 4 or masks.shape != observations.shape[:1] + observations.shape[2:3]:
            raise ValueError(
                f"observations {observations.shape} and action_masks {masks.shape} must have shapes "
                f"(batch, rows, columns, 2) and (batch, columns)"
            )
        if observations.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        legal = mask_booleans(masks, "action_masks")
        if not legal.any(axis=1).all():
            row = int(np.flatnonzero(~legal.any(axis=1))[0])
            raise NoLegalMoveError(f"no legal move: action_mask {masks[row].tolist()} allows no column")
        _check_masks(observations, legal, masks)
        scores = np.where(legal, self.scores(observations), -np.inf)
        best = scores.max(axis=1)
        bad = np.isneginf(best) | (np.isposinf(best) & (not self.deterministic))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"the network scores the legal columns {np.flatnonzero(legal[row]).tolist()} as "
                f"{scores[row][legal[row]].tolist()}: no column to pick"
            )
        if self.deterministic:
            return scores.argmax(axis=1)
        probabilities = np.exp(scores - best[:, None])  # exactly 0 on masked columns
        probabilities /= probabilities.sum(axis=1, keepdims=True)
        return np.array([self.rng.choice(len(p), p=p) for p in probabilities], dtype=np.int64)

    def act(self, observation: Any, action_mask: Any = None) -> int:
        """A legal column for one position (planes and mask, or PettingZoo's dict).

        Raises:
            ValueError: as `act_batch`: a shape that does not fit, a mask that disagrees with the position, NaN
                scores, or every legal column scored -inf.
            NoLegalMoveError: the mask allows no column.
            TypeError: see `scores`.
        """
        planes, mask = unpack(observation, action_mask)
        planes = np.asarray(planes)
        if planes.ndim != 3:
            raise ValueError(f"observation must have shape (rows, columns, 2), got {planes.shape}")
        return int(self.act_batch(planes[None], np.asarray(mask)[None])[0])


def _check_masks(planes: np.ndarray, legal: np.ndarray, masks: np.ndarray) -> None:
    """ValueError for the first game whose planes show a position and whose mask is not its open columns."""
    binary = np.asarray(np.isin(planes, (0, 1)).all(axis=(1, 2, 3)))
    if not binary.any():
        return
    stones = np.where(binary[:, None, None, None], planes, 0).astype(np.int64)
    occupied = stones.sum(axis=3)  # (batch, rows, columns): 2 where a cell is taken twice
    own, opponent = stones[..., 0].sum(axis=(1, 2)), stones[..., 1].sum(axis=(1, 2))
    shows_position = (
        binary
        & (occupied <= 1).all(axis=(1, 2))
        & ~(occupied[:, :-1] > occupied[:, 1:]).any(axis=(1, 2))  # row 0 is the top: no stone on air
        & ((own == opponent) | (own + 1 == opponent))
    )
    open_columns = occupied[:, 0] == 0
    wrong = shows_position & (legal != open_columns).any(axis=1)
    if wrong.any():
        row = int(np.flatnonzero(wrong)[0])
        where = f" (game {row} of the batch)" if len(planes) > 1 else ""
        full = np.flatnonzero(legal[row] & ~open_columns[row]).tolist()
        raise ValueError(
            f"action_mask {masks[row].tolist()} does not match the position's legal columns "
            f"{np.flatnonzero(open_columns[row]).tolist()}{where}"
            + (f": it allows the full column(s) {full}" if full else "")
        )
