"""Monte Carlo tree search: the compiled UCT agent with MCTS-Solver
([`MCTSAgent`][connect4_agents.mcts.agent.MCTSAgent]), its
[`SearchResult`][connect4_agents.mcts.result.SearchResult], and the evaluator-driven PUCT search
(`connect4_agents.mcts.puct`).
"""

from __future__ import annotations

from connect4_agents.mcts.agent import MCTSAgent
from connect4_agents.mcts.evaluators import Evaluator, RolloutEvaluator, UniformEvaluator
from connect4_agents.mcts.puct import Node, PUCTResult, PUCTSearch
from connect4_agents.mcts.result import SearchResult, ucb1

__all__ = [
    "MCTSAgent",
    "SearchResult",
    "ucb1",
    "Evaluator",
    "UniformEvaluator",
    "RolloutEvaluator",
    "Node",
    "PUCTSearch",
    "PUCTResult",
]
