"""Repair operator ``deliver.wait_for_turn_end`` (deliver): do not start while the user talks or right after an unfinished sentence.

The functions below are transplanted into ``deliver/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import DeliverChooseView
from rsi.repairs._base import Operator


def _should_wait(view: DeliverChooseView, p: dict) -> bool:
    """Never start while the user talks, nor right after an unfinished sentence."""
    if view.user_speaking:
        return True
    return not view.last_turn_final and view.silence_s < p["min_silence_s"]


OPERATOR = Operator(
    name="deliver.wait_for_turn_end",
    module="deliver",
    causes=("overlap", "takeover"),
    summary="do not start while the user talks or right after an unfinished sentence",
    source_module=__name__,
    functions=("_should_wait",),
    symptoms=("no_overlap", "no_takeover"),
    family="timing",
)
