"""Repair operator ``deliver.yield_when_long`` (deliver): yield only after the user has spoken for 0.8 s.

The functions below are transplanted into ``deliver/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import DeliverSpeechView
from rsi.repairs._base import Operator


def _should_yield(view: DeliverSpeechView, p: dict) -> bool:
    """Yield only once the user has talked for a while: short sounds are backchannels."""
    return view.user_speaking_s >= p["barge_in_min_s"]


OPERATOR = Operator(
    name="deliver.yield_when_long",
    module="deliver",
    causes=("false_yield",),
    summary="yield only after the user has spoken for 0.8 s",
    source_module=__name__,
    functions=("_should_yield",),
    params={
        "barge_in_min_s": 0.8,
    },
    ranges={"barge_in_min_s": [0.1, 5.0]},
    symptoms=("kept_speaking", "yielded"),
    family="timing",
)
