"""Repair operator ``bundle.task_state_turns`` (policy): Policy delegates short turns that only make sense against the tasks (an answer while a task needs input, a question after a result, a refer-back after a task ended) unless the gate is sure they are chat; Intake restores a cancelled task a short turn points back at and treats a question about a delivered result as a refinement of it.

The functions below are transplanted into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

from rsi.repairs._base import Operator
from rsi.repairs.intake.follow_up_refines_result import _is_follow_up
from rsi.repairs.intake.restore_refer_back import _is_cancel, _is_restore
from rsi.repairs.policy.task_state_turns import _task_turn, _names_a_value, _is_control, _native


OPERATOR = Operator(
    name="bundle.task_state_turns",
    module="policy",
    causes=("missed_delegation",),
    summary="Policy delegates short turns that only make sense against the tasks (an answer while a task needs input, a question after a result, a refer-back after a task ended) unless the gate is sure they are chat; Intake restores a cancelled task a short turn points back at and treats a question about a delivered result as a refinement of it",
    source_module=__name__,
    functions=("_task_turn", "_names_a_value", "_is_control", "_native"),
    params={
        "gate_trust": 0.85,
        "gate_doubt": 0.75,
        "task_turn_max_words": 12,
        "question_openers": [
            "what", "what's", "whats", "which", "who", "whose", "where", "when", "why", "how", "how's", "is", "are",
            "was", "were", "does", "do", "did", "can", "could", "will", "would", "should", "has", "have", "and", "any",
        ],
        "refer_back_words": ["that", "it", "this", "that one", "the one", "back", "after all", "again"],
    },
    ranges={"gate_trust": [0.5, 1.0], "gate_doubt": [0.0, 1.0], "task_turn_max_words": [2, 40]},
    symptoms=("delivered", "never_heard"),
    family="bundle",
    prior=1.4,
    extra=(
        Operator(
            name="bundle.task_state_turns.intake",
            module="intake",
            causes=("missed_delegation",),
            summary="Intake side of bundle.task_state_turns",
            source_module=__name__,
            functions=("_is_cancel", "_is_restore", "_is_follow_up"),
            params={
                "restore_phrases": ["bring back", "bring it back", "bring that back", "un cancel", "uncancel", "after all"],
                "refer_back_words": ["that", "it", "this", "that one", "the one", "back", "again", "after all"],
                "cancel_negations": ["un cancel", "uncancel", "don't cancel", "do not cancel", "not cancel", "not to cancel"],
                "restore_max_words": 10,
                "follow_up_phrases": ["what about", "how about", "tell me", "and the", "again", "now", "latest", "changed"],
                "follow_up_max_words": 10,
            },
            ranges={"restore_max_words": [3, 40], "follow_up_max_words": [3, 40]},
        ),
    ),
)
