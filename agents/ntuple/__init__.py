"""TD(lambda) over n-tuple networks: afterstate values learned by self-play, the Q-learning family on 6x7.

[`NTupleAgent`][connect4_agents.ntuple.agent.NTupleAgent] plays a network (the spec ``ntuple``: the shipped
6x7 one; ``ntuple:PATH``: a file); [`NTupleTrainer`][connect4_agents.ntuple.train.NTupleTrainer] trains one;
``connect4 train-ntuple`` runs a whole training (`connect4_agents.ntuple.run`).
"""

from connect4_agents.ntuple.agent import NTupleAgent
from connect4_agents.ntuple.network import NTupleNetwork
from connect4_agents.ntuple.train import LearnerSettings, NTupleTrainer

__all__ = ["NTupleAgent", "NTupleNetwork", "NTupleTrainer", "LearnerSettings"]
