"""Learning agents, one file per algorithm (architecture §7: CleanRL's one-file layout).

- :mod:`mpsched.agents.edar`: EdAR's DQN scheduler (edar.txt), offline + online learning.

Checkpoints are safetensors weights plus a JSON description (:mod:`mpsched.agents.checkpoint`),
never pickle.
"""
