"""Repair operator ``hold.early_single_progress`` (hold): give the one progress update earlier (after 5 s).

The functions below are transplanted into ``hold/rules.py`` as they are written here.
"""

from __future__ import annotations

from rsi.repairs._base import Operator


OPERATOR = Operator(
    name="hold.early_single_progress",
    module="hold",
    causes=("missing_progress",),
    summary="give the one progress update earlier (after 5 s)",
    source_module=__name__,
    params={
        "first_progress_s": 5.0,
    },
    symptoms=("progress_given",),
    family="threshold",
)
