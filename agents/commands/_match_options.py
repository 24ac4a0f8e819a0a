"""The options of ``connect4 match``'s modes, one config dataclass each (`MODE_CONFIGS`), for
`connect4_agents.commands.mcts_vs_qlearning`.

The learner's modes (``train``, ``match``, ``demo``) leave a setting None where its default depends on the
learner (the n-tuple network on 6x7, a Q-table on 4x5, see `DEFAULTS`); the command fills it in. Each config
checks its settings when it is built.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from typing import Any, Literal

from connect4_agents._support.cli import positive_int
from connect4_agents._support.config_cli import option
from connect4_agents.evaluation.matches import Learner
from connect4_agents.qlearning.agent import QLearningAgent
from connect4_env import Rules

__all__ = [
    "MctsVsMctsConfig",
    "TrainConfig",
    "MatchConfig",
    "DemoConfig",
    "MODE_CONFIGS",
    "DEMO_EPISODES",
    "DEFAULTS",
    "SETTINGS",
]

DEMO_EPISODES = 40_000  # the Q-learning demo's training games

# each learner's board, training budget, output folder and MCTS opponent where the option is not given: the
# n-tuple network learns the standard board; a Q-table only a small one (see docs/agents/qlearning.md)
DEFAULTS: dict[str, dict[str, Any]] = {
    "ntuple": {
        "rows": 6,
        "columns": 7,
        "cpu_minutes": 10.0,
        "out": "runs/match-ntuple",
        "mcts_playouts": 1000,
    },
    "qlearning": {"rows": 4, "columns": 5, "episodes": 50_000, "out": "runs/qlearning", "mcts_playouts": 10},
}
# the settings --preset default lets the user override, one option each
SETTINGS = ("alpha", "gamma", "epsilon", "epsilon_min", "exploration_fraction", "epsilon_decay", "rewards")
# every Q-learning option (None: not given), refused with --learner ntuple
_QLEARNING_ONLY = ("opponent", "preset", *SETTINGS, "window")

# the Q-learning settings' own defaults, shown in the help where an option's None leaves the agent's in place
_AGENT_DEFAULTS = {
    name: str(value.default) for name, value in inspect.signature(QLearningAgent).parameters.items()
}


@dataclass
class _Board:
    """The board and the seed of ``mcts-vs-mcts``."""

    rows: int = 4
    """Board rows."""
    columns: int = 5
    """Board columns."""
    win_length: int = 4
    """Stones in a line to win."""
    seed: int = 0
    """Seed of every agent."""


@dataclass
class MctsVsMctsConfig(_Board):
    """The options of ``connect4 match mcts-vs-mcts``."""

    rows: int = 6
    playouts0: int = field(default=1000, metadata=option(type=positive_int))
    """Playouts per move of the first player."""
    playouts1: int = field(default=1000, metadata=option(type=positive_int))
    """Playouts per move of the second player."""
    c0: float = math.sqrt(2)
    """UCB1 constant of the first player."""
    c1: float = 2.0
    """UCB1 constant of the second player; the default is the original project's."""
    games: int = field(default=1, metadata=option(type=positive_int))
    """Games to play (1: one game shown move by move)."""
    games_out: str | None = field(default=None, metadata=option(metavar="PATH"))
    """Game records, one JSON line per game with the search numbers (for ``connect4 replay``)."""
    rules: Rules = field(init=False)
    """The board, from ``rows``, ``columns`` and ``win_length``."""

    def __post_init__(self) -> None:
        """Check the board.

        Raises:
            ValueError: a bad board.
        """
        self.rules = Rules(self.rows, self.columns, self.win_length)


@dataclass
class _Learner:
    """The learner, its board and the seed."""

    learner: Learner = "ntuple"
    """``ntuple``: TD(lambda) over n-tuples, on 6x7 by default; ``qlearning``: a Q-table, on 4x5 by default (a
    table cannot learn 6x7)."""
    rows: int | None = field(default=None, metadata=option(shown_default="6 (n-tuple), 4 (Q-learning)"))
    """Board rows."""
    columns: int | None = field(default=None, metadata=option(shown_default="7 (n-tuple), 5 (Q-learning)"))
    """Board columns."""
    win_length: int = 4
    """Stones in a line to win."""
    seed: int = 0
    """Seed of every agent."""


@dataclass
class TrainConfig(_Learner):
    """The options of ``connect4 match train``: the learner's budget, then Q-learning's own settings."""

    cpu_minutes: float | None = field(default=None, metadata=option(shown_default="10 (n-tuple)"))
    """The n-tuple learner: train for this many CPU-minutes (unless ``--episodes`` is given)."""
    episodes: int | None = field(
        default=None, metadata=option(type=positive_int, shown_default="50000 (Q-learning)")
    )
    """Training games (the n-tuple learner: instead of ``--cpu-minutes``; the same seed then gives the same
    network)."""
    opponent: str | None = field(default=None, metadata=option(shown_default="mcts:40"))
    """For Q-learning: the opponent, ``random``, ``mcts:<playouts>``, ``solver``, ``qlearning:<table>``, or
    ``self`` (the n-tuple learner plays itself)."""
    preset: Literal["default", "original"] | None = field(
        default=None, metadata=option(shown_default="default")
    )
    """For Q-learning: ``original``, the original project's alpha 0.6, gamma 0.8, epsilon 0.1 and shaped rewards
    (the options below are then not used)."""
    alpha: float | None = field(default=None, metadata=option(shown_default=_AGENT_DEFAULTS["alpha"]))
    """For Q-learning: the learning rate."""
    gamma: float | None = field(default=None, metadata=option(shown_default=_AGENT_DEFAULTS["gamma"]))
    """For Q-learning: the discount."""
    epsilon: float | None = field(default=None, metadata=option(shown_default=_AGENT_DEFAULTS["epsilon"]))
    """For Q-learning: the exploration at the start."""
    epsilon_min: float | None = field(
        default=None, metadata=option(shown_default=_AGENT_DEFAULTS["epsilon_min"])
    )
    """For Q-learning: the exploration floor."""
    exploration_fraction: float | None = field(
        default=None, metadata=option(shown_default=_AGENT_DEFAULTS["exploration_fraction"])
    )
    """For Q-learning: the share of the episodes over which epsilon falls linearly to its floor."""
    epsilon_decay: float | None = None
    """For Q-learning: instead, this factor per episode, whatever the budget (default: off)."""
    rewards: Literal["plain", "shaped"] | None = field(
        default=None, metadata=option(shown_default=_AGENT_DEFAULTS["rewards"])
    )
    """For Q-learning: the reward scheme."""
    window: int | None = field(default=None, metadata=option(type=positive_int, shown_default="1000"))
    """For Q-learning: the episodes per learning-curve point."""
    out: str | None = None
    """Output folder (default ``runs/match-ntuple``, or ``runs/qlearning``)."""
    quiet: bool = False
    """No progress bar."""
    learner_rules: Rules = field(init=False)
    """The learner's board: ``rows`` and ``columns``, or the learner's defaults."""

    def __post_init__(self) -> None:
        """Check the settings: no other learner's option, and the board.

        Raises:
            ValueError: a Q-learning option with ``--learner ntuple``, ``--cpu-minutes`` with ``--learner
                qlearning``, or a bad board.
        """
        if self.learner == "ntuple":
            given = [name for name in _QLEARNING_ONLY if getattr(self, name) is not None]
            if given:
                flags = ", ".join("--" + name.replace("_", "-") for name in given)
                raise ValueError(
                    f"{flags}: Q-learning option(s); add --learner qlearning (the n-tuple learner takes "
                    "--cpu-minutes or --episodes here, and every setting in connect4 train-ntuple)"
                )
        elif self.cpu_minutes is not None:
            raise ValueError("--cpu-minutes trains the n-tuple learner; Q-learning trains for --episodes")
        rows = DEFAULTS[self.learner]["rows"] if self.rows is None else self.rows
        columns = DEFAULTS[self.learner]["columns"] if self.columns is None else self.columns
        self.learner_rules = Rules(rows, columns, self.win_length)


@dataclass
class _Match:
    """The MCTS opponent of a saved model, and the games it plays."""

    mcts_playouts: int | None = field(
        default=None, metadata=option(type=positive_int, shown_default="1000 (n-tuple), 10 (Q-learning)")
    )
    """Playouts per move of the MCTS opponent."""
    c: float = math.sqrt(2)
    """Its UCB1 constant."""
    games: int = field(default=200, metadata=option(type=positive_int))
    """Games, alternating who starts."""
    games_out: str | None = field(default=None, metadata=option(metavar="PATH"))
    """Game records, one JSON line per game with the search numbers (for ``connect4 replay``)."""


@dataclass
class _Model:
    """The saved model a match plays, and where its results go."""

    model: str | None = field(default=None, metadata=option(shown_default="the shipped 6x7 network"))
    """The n-tuple network file to load (``model.npz`` of ``connect4 match train`` or ``connect4
    train-ntuple``)."""
    table: str | None = None
    """Instead: the ``.npz`` Q-table to load (``connect4 match train --learner qlearning``)."""
    seed: int = 0
    """Seed of both agents."""
    out: str | None = None
    """JSON results file (default: ``match.json`` beside the model, or ``runs/match/match.json``)."""

    def __post_init__(self) -> None:
        """Check that one model is named.

        Raises:
            ValueError: both ``--model`` and ``--table``.
        """
        if self.table is not None and self.model is not None:
            raise ValueError("give --model (an n-tuple network) or --table (a Q-table), not both")


@dataclass
class MatchConfig(_Match, _Model):
    """The options of ``connect4 match match`` (a dataclass's fields come base first: the model's, then
    the match's).
    """


@dataclass
class DemoConfig(_Match, TrainConfig):
    """The options of ``connect4 match demo``: a training's (the n-tuple learner trains only when given a
    budget), then a match's.
    """

    episodes: int | None = field(
        default=None, metadata=option(type=positive_int, shown_default=f"{DEMO_EPISODES} (Q-learning)")
    )
    """Training games (the n-tuple learner: train a network this long first, instead of playing the shipped
    one)."""
    cpu_minutes: float | None = None
    """The n-tuple learner: train a network for this many CPU-minutes first, instead of playing the shipped
    one."""
    out: str | None = None
    """Output folder of the trained model, its curve and ``match.json`` (default ``runs/demo``)."""
    games: int = field(default=20, metadata=option(type=positive_int))
    """Games, alternating who starts."""


MODE_CONFIGS = {
    "mcts-vs-mcts": MctsVsMctsConfig,
    "train": TrainConfig,
    "match": MatchConfig,
    "demo": DemoConfig,
}
"""Each mode's options, as a dataclass (see `connect4_agents.commands`)."""
