"""Repair operator ``deliver.yield_unless_backchannel`` (deliver): keep speaking through a short backchannel, yield to anything else.

The functions below are transplanted into ``deliver/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import DeliverSpeechView, text
from rsi.repairs._base import Extend, Operator


def _should_yield(view: DeliverSpeechView, p: dict) -> bool:
    """Yield to a real barge-in; keep speaking through a short backchannel: a few words, said briefly,
    every one of them in the harness's backchannel list (grown by induction)."""
    words = text.words(view.user_text.replace("-", " "))
    if not words:
        return False  # nothing understood yet: the next check decides
    short = len(words) <= p["backchannel_max_words"] and view.user_speaking_s <= p["backchannel_max_s"]
    return not (short and all(w in p["backchannels"] for w in words))


OPERATOR = Operator(
    name="deliver.yield_unless_backchannel",
    module="deliver",
    causes=("false_yield", "not_yielded"),
    summary="keep speaking through a short backchannel, yield to anything else",
    source_module=__name__,
    functions=("_should_yield",),
    params={
        "backchannels": Extend(()),
        "backchannel_max_words": 3,
        "backchannel_max_s": 1.5,
    },
    ranges={"backchannel_max_words": [1, 6], "backchannel_max_s": [0.2, 5.0]},
    symptoms=("kept_speaking", "delivered"),
    family="backchannel",
)
