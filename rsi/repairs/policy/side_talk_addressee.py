"""Repair operator ``policy.side_talk_addressee`` (policy): ignore talk addressed to someone else: a side-talk cue (induced), a greeting to a named person, or a call to other people in the room, unless it names a domain word.

The functions below are transplanted into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import PolicyView, text
from rsi.repairs._base import Extend, Operator
from rsi.repairs._english import GREETINGS, INDEFINITE_PEOPLE


def _is_side_talk(view: PolicyView, p: dict) -> bool:
    """Talk addressed to someone else: a side-talk cue of the harness's list (induced from turns that
    were not for the assistant); a greeting to a named person before the first comma ("Hey <Name>,
    ..."); or a call to other people in the room (an indefinite pronoun); never with a domain word."""
    t = view.turn.text.strip()
    words = text.words(t)
    if not words or text.has_any(t, p["domain_words"]):
        return False
    if text.has_any(t, p["side_talk_cues"]):
        return True
    head = t.split(",", 1)[0].strip()
    head_words = text.words(head)
    raw = head.split()
    if "," in t and len(raw) == 2 and head_words[0] in p["greetings"] and raw[1][:1].isupper():
        return True
    return text.has_any(t, p["third_parties"])


OPERATOR = Operator(
    name="policy.side_talk_addressee",
    module="policy",
    causes=("extra_response", "extra_delegation"),
    summary="ignore talk addressed to someone else: a side-talk cue (induced), a greeting to a named person, or a call to other people in the room, unless it names a domain word",
    source_module=__name__,
    functions=("_is_side_talk",),
    params={
        "side_talk_cues": Extend(()),  # grown by induction
        "greetings": list(GREETINGS),
        "third_parties": list(INDEFINITE_PEOPLE),
    },
    symptoms=("no_task", "task_count", "responded_directly", "no_overlap"),
    family="addressee",
)
