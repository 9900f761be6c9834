"""Repair operator ``policy.side_talk_addressee`` (policy): ignore talk addressed to someone else (a vocative, a call to other people, 'be right there').

The functions below are transplanted into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import text
from rsi.repairs._base import Operator


def _is_side_talk(view: PolicyView, p: dict) -> bool:
    """Talk addressed to someone else: a vocative that is not the assistant, or a call to other people."""
    t = view.turn.text.strip()
    words = text.words(t)
    if not words:
        return False
    head = t.split(",", 1)[0].strip()
    head_words = text.words(head)
    # "Honey, ...", "Kids, ...": a family or group address before the first comma
    if "," in t and 1 <= len(head_words) <= 2 and head_words[-1] in p["addressees"]:
        return True
    # "Hey Sam, ...": a greeting to a named person who is not the assistant
    raw = head.split()
    if len(raw) == 2 and head_words[0] in ("hey", "hi", "hello") and raw[1][:1].isupper() and head_words[1] not in p["assistant_names"]:
        return True
    # calls to other people in the room ("can somebody ...", "did anyone ...")
    if text.has_any(t, p["third_parties"]) and not text.has_any(t, p["domain_words"]):
        return True
    # telling someone you are coming / busy
    return text.has_any(t, p["away_phrases"]) and not text.has_any(t, p["domain_words"])


OPERATOR = Operator(
    name="policy.side_talk_addressee",
    module="policy",
    causes=("extra_response", "extra_delegation"),
    summary="ignore talk addressed to someone else (a vocative, a call to other people, 'be right there')",
    source_module=__name__,
    functions=("_is_side_talk",),
    params={
        "not_vocatives": [
            "okay", "ok", "so", "well", "right", "yes", "yeah", "no", "oh", "um", "uh", "hmm", "wait", "sorry",
            "actually", "hey", "hi", "hello", "please", "thanks", "also", "and", "then", "first", "second", "two",
            "alright", "fine", "great", "sure", "look", "listen", "one", "just", "hang", "hold", "stop", "never",
            "forget", "scratch", "let's", "let", "remember", "but", "i", "the", "in", "for", "on", "next",
        ],
        "addressees": ["honey", "sweetie", "darling", "dear", "kids", "guys", "dad", "mum", "babe", "buddy", "everyone"],
        "assistant_names": ["assistant", "there", "you"],
        "third_parties": ["somebody", "someone", "anybody", "anyone", "everybody"],
        "away_phrases": ["be there in", "in a minute"],
    },
    symptoms=("no_task", "task_count", "responded_directly", "no_overlap"),
    family="addressee",
)
