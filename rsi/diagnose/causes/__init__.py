"""The cause detectors of :mod:`rsi.diagnose`, one file per concern.

| file | causes |
|---|---|
| `routing.py` | perception, missed_delegation, extra_delegation, extra_response, takeover |
| `intake.py` | wrong_task_binding, missed_cancel/refine/replace/restore/reset, duplicate_task, merged_batch, guessed_missing_info, missed_question, stale_plan |
| `delivery.py` | stale_delivery, concealed_failure, undelivered, wrong_answer |
| `timing.py` | missing_progress, silent_wait, overlap, not_yielded, false_yield |
| `memory.py` | false_saved, memory_drift, memory_loss |

Root-cause detectors (perception .. missed_question) compare the ground truth with the harness's
decisions and only fire when a failed check is one the mistake can explain; symptom detectors
(stale_delivery .. wrong_answer) start from a failed check and walk back through the decisions to
the module that went wrong. Each registers itself with ``@detector`` (:mod:`rsi.diagnose._detectors`);
a new concern file is imported here.
"""

from rsi.diagnose.causes import delivery, intake, memory, routing, timing

__all__ = ["delivery", "intake", "memory", "routing", "timing"]
