"""Repair operator ``bundle.requests_to_intake`` (policy + intake): Policy sends a request by form
said while a task is in the ledger (or just ended) to Intake, and Intake reads it against the
ledger's state: after a cancel, a turn naming nothing new restores the task; after a delivered
answer, a request or question naming nothing new refines it.

The Policy half alone only moves such turns to an Intake that cannot place them; the two help
together (``policy.requests_while_tasks`` + ``intake.back_to_a_task``).
"""

from __future__ import annotations

from dataclasses import replace

from rsi.repairs.intake.back_to_a_task import OPERATOR as _INTAKE
from rsi.repairs.policy.requests_while_tasks import OPERATOR as _POLICY

OPERATOR = replace(
    _POLICY,
    name="bundle.requests_to_intake",
    causes=("missed_delegation", "missed_restore"),
    summary="Policy sends a request by form said while a task is in the ledger (or just ended) to Intake; Intake restores a cancelled task a turn naming nothing new wants back and refines a delivered one a question naming nothing new asks about",
    family="bundle",
    prior=1.5,
    extra=(replace(_INTAKE, name="bundle.requests_to_intake.intake"),),
)
