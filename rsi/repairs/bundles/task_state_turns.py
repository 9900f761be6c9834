"""Repair operator ``bundle.task_state_turns`` (policy): Policy delegates short turns that only make sense against the tasks (an answer while a task needs input, a question after a result, a refer-back after a task ended) unless the gate is sure they are chat; Intake restores a cancelled task a short turn points back at and treats a question about a delivered result as a refinement of it.

The functions below are transplanted into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

from rsi.repairs._base import Extend, Operator
from rsi.repairs._english import NEGATORS, QUESTION_WORDS, REFERENCE
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
        "question_openers": list(QUESTION_WORDS),
        "refer_back_words": list(REFERENCE),
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
                "restore_phrases": Extend(()),  # the harness's restore cues, grown by induction
                "refer_back_words": list(REFERENCE),
                "negators": list(NEGATORS),
                "restore_max_words": 10,
                "follow_up_phrases": Extend(()),
                "follow_up_max_words": 10,
            },
            ranges={"restore_max_words": [3, 40], "follow_up_max_words": [3, 40]},
        ),
    ),
)
