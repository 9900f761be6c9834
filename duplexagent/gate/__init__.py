"""The learned hand-off gate: what the interaction model suggests at each turn end.

See ``docs/gate.md``. ``GateInput`` is what it reads, ``load_gate`` gives a ``LearnedGate``
(``predict(x) -> (action, confidence)``), ``train_gate`` is the recipe, ``evaluate`` the report.
"""

from duplexagent.gate.features import GateInput, featurize
from duplexagent.gate.model import ACTIONS, DEFAULT_WEIGHTS, GateModelError, LearnedGate, load_gate

__all__ = ["ACTIONS", "DEFAULT_WEIGHTS", "GateInput", "GateModelError", "LearnedGate", "featurize", "load_gate"]
