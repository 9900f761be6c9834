"""Moved: the detectors live in :mod:`rsi.diagnose.causes` (one file per concern); kept so older
imports keep working."""

from rsi.diagnose import CAUSE_HELP, CAUSES, DETECTORS, PERCEPTION, Failed, Finding

__all__ = ["CAUSES", "CAUSE_HELP", "DETECTORS", "Finding", "Failed", "PERCEPTION"]
