"""Learning agents, one file per algorithm (CleanRL's one-file layout, github.com/vwxyzjn/cleanrl).

- :mod:`mpsched.agents.edar`: EdAR's DQN scheduler (edar.txt), offline + online learning.

Checkpoints are safetensors weights plus a JSON description (:mod:`mpsched.agents.checkpoint`),
never pickle.
"""
