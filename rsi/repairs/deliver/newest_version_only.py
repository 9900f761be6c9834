"""Repair operator ``deliver.newest_version_only`` (deliver): speak only the newest version of a task; no progress chatter once its answer or failure is ready.

The functions below are transplanted into ``deliver/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import DeliverChooseView, SpeakOption
from rsi.repairs._base import Operator


def _speakable(view: DeliverChooseView, p: dict) -> list[SpeakOption]:
    """What may be said now: known kinds, newest version per task, no chatter about a task whose answer is here."""
    opts = [o for o in view.options if o.kind in p["speak_kinds"]]
    newest: dict[str, int] = {}
    for o in opts:
        if o.task_id is not None and o.version is not None:
            newest[o.task_id] = max(newest.get(o.task_id, o.version), o.version)
    opts = [o for o in opts if o.task_id is None or o.version is None or o.version >= newest[o.task_id]]
    answered = {o.task_id for o in opts if o.kind in ("answer", "failure")}
    return [o for o in opts if not (o.kind in ("ack", "progress", "status") and o.task_id in answered)]


OPERATOR = Operator(
    name="deliver.newest_version_only",
    module="deliver",
    causes=("stale_delivery",),
    summary="speak only the newest version of a task; no progress chatter once its answer or failure is ready",
    source_module=__name__,
    functions=("_speakable",),
    symptoms=("never_heard", "delivered"),
    family="versioning",
)
