"""Repair operator ``worker.fail_fast_timeout`` (worker): give up on a silent delegate after 42 s so the failure can be reported before the user leaves.

The functions below are transplanted into ``worker/rules.py`` as they are written here.
"""

from __future__ import annotations

from rsi.repairs._base import Operator


OPERATOR = Operator(
    name="worker.fail_fast_timeout",
    module="worker",
    causes=("concealed_failure",),
    summary="give up on a silent delegate after 42 s so the failure can be reported before the user leaves",
    source_module=__name__,
    params={
        "timeout_s": 42.0,
    },
    symptoms=("reported_failure",),
    family="timeout",
)
