"""Repair operator ``intake.dedupe_by_values`` (intake): a request of the type of a task still in hand that shares a content word and states no new value is that task again: status, not a new task.

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from rsi.repairs._base import Operator
from rsi.repairs.intake.task_state_reading import (
    _slot_like,
    _refers_back,
    _is_question,
    _cancel_cue,
    _clauses,
    _sentences,
    _request_form,
    _content,
    _type_reading,
    _replacement_op,
    _swap_by_structure,
    _new_op,
    interpret,
    _is_duplicate,
)


OPERATOR = Operator(
    name="intake.dedupe_by_values",
    module="intake",
    causes=("duplicate_task",),
    summary="a request of the type of a task still in hand that shares a content word and states no new value is that task again: status, not a new task",
    source_module=__name__,
    functions=(
        "_slot_like", "_refers_back", "_is_question", "_cancel_cue", "_clauses", "_sentences", "_request_form",
        "_content", "_type_reading", "_replacement_op", "_swap_by_structure", "_new_op", "interpret", "_is_duplicate",
    ),
    params={
        "reference_words": [
            "that", "it", "this", "that one", "this one", "the request", "the task", "the one", "the last one",
            "my last", "the earlier",
        ],
        "question_words": [
            "what", "what's", "whats", "which", "who", "whose", "where", "when", "why", "how", "how's", "is", "are",
            "was", "were", "does", "do", "did", "can", "could", "will", "would", "should", "has", "have", "and", "any",
        ],
        "cancel_verbs": [
            "cancel", "drop", "kill", "abort", "stop", "scrap", "scratch", "forget", "nix", "skip", "ditch", "halt",
            "quit", "call off", "call it off", "never mind", "nevermind",
        ],
        "cancel_particles": ["call off", "hold off"],
        "additive_words": ["also", "and", "plus", "another", "more", "too", "as well", "meanwhile", "while"],
        "lead_in_max_words": 6,
        "negators": ["not", "no", "don't", "dont", "doesn't", "never", "no longer"],
        "needs_words": ["need", "needed", "want", "wanted", "necessary"],
        "change_of_mind": ["instead", "rather", "else", "different", "new", "actually", "no wait"],
        "cancel_negations": ["un cancel", "uncancel", "don't cancel", "do not cancel", "not cancel", "not to cancel"],
        "refine_max_words": 12,
        "status_max_words": 9,
        "discourse_words": [
            "so", "okay", "ok", "right", "well", "oh", "um", "uh", "er", "erm", "hmm", "ah", "hey", "and", "also",
            "then", "now", "just", "actually", "please",
        ],
        "request_min_words": 4,
        "request_openers": [
            "can", "could", "would", "will", "please", "i", "i'd", "i'm", "we", "help", "tell", "give", "get", "put",
            "add", "set", "make", "let's", "lets", "find", "look", "pull", "check", "send", "write", "do", "work",
            "what", "walk", "boil", "sum", "compose", "program", "draft", "order", "buy", "translate", "compare",
            "suggest", "recommend", "calculate", "search", "teach", "book", "reserve", "schedule", "explain",
            "summarize", "code", "what's", "how", "how's", "why", "which", "where", "when", "who", "is", "are", "does",
            "any",
        ],
        "change_words": ["use", "change", "switch", "swap", "make it", "make that", "go with", "instead", "rather", "prefer"],
        "correction_markers": ["no wait", "i mean", "i meant", "no no", "uh no", "or rather"],
        "bind_stopwords": [
            "the", "a", "an", "to", "for", "of", "in", "on", "at", "and", "me", "my", "you", "can", "could", "please",
            "that", "this", "it", "is", "what", "how", "i", "like", "want", "need", "some", "with", "about", "be",
            "just", "sure", "again", "also", "there", "here", "them", "your", "from", "into", "would", "will", "know",
        ],
    },
    ranges={"refine_max_words": [3, 40], "status_max_words": [2, 30], "lead_in_max_words": [1, 20]},
    symptoms=("task_count",),
    family="structure",
)
