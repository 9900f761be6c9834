"""Repair operator ``worker.fail_very_fast`` (worker): give up on any delegate after 8 s.

The functions below are transplanted into ``worker/rules.py`` as they are written here.
"""

from __future__ import annotations

from rsi.repairs._base import Operator


OPERATOR = Operator(
    name="worker.fail_very_fast",
    module="worker",
    causes=("concealed_failure",),
    summary="give up on any delegate after 8 s",
    source_module=__name__,
    params={
        "timeout_s": 8.0,
    },
    symptoms=("reported_failure",),
    family="timeout",
)
