"""Repair operator ``policy.resume_interrupted`` (policy): a turn that only asks to go on with an
answer the user cut off is a resume, never a task.

After a stop, the interrupted answer waits in the ledger (READY, not delivered) and the agent's last
words were about it. A turn said then that states no value, holds no work cue and has no content
word beyond those of the harness's resume cues ("okay, sorry about that, you can go on with it now")
asks for that answer again, however long it is padded with politeness or hesitations. The reading of
stop and resume cues of ``policy.control_by_content`` is kept as it is, before this one.

The functions below are transplanted into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import PolicyView, text
from rsi.repairs._base import Guard, Operator
from rsi.repairs.policy import control_by_content as _cbc
from rsi.repairs.policy import not_work_by_form as _nwf

# the helpers this operator shares with ``policy.control_by_content`` and ``policy.not_work_by_form``
_CBC = ("_cbc_content_words", "_cbc_brief", "_cbc_stop_by_form", "_cbc_resume_by_form", "_cbc_names_running_task", "_cbc_cue_describes")
_NWF = ("_nwf_padding", "_nwf_content", "_nwf_cued", "_nwf_resume")
globals().update({name: getattr(_cbc, name) for name in _CBC})
globals().update({name: getattr(_nwf, name) for name in _NWF})
_cbc_brief = _cbc._cbc_brief
_nwf_resume = _nwf._nwf_resume
_is_control = _cbc._is_control


def _ri_resume(view: PolicyView, p: dict) -> str | None:
    """A guard of ``_is_control``, put last: a turn that only asks to go on with an interrupted answer
    (no value, no work cue, no content word a resume cue does not hold) is a resume; otherwise no
    verdict (the reading of stop and resume cues before it has already spoken)."""
    return "resume" if _nwf_resume(view, p) else None


OPERATOR = Operator(
    name="policy.resume_interrupted",
    module="policy",
    causes=("extra_delegation", "stale_delivery", "undelivered"),
    summary="while an interrupted answer waits, a turn with no value, no work cue and no content word beyond the resume cues' is a resume (CONTROL), never a task",
    source_module=__name__,
    # control_by_content's reading of stop and resume cues goes in where the harness still holds g0's;
    # this operator only adds its case after whatever ``_is_control`` the harness holds (a Guard), so
    # it and the other control operators compose whichever comes first
    functions=_CBC + _NWF + ("_is_control",),
    shared=_CBC + _NWF + ("_is_control",),
    guards=(Guard("_is_control", "_ri_resume", where="last"),),
    params={**_cbc.OPERATOR.params, **{k: v for k, v in _nwf.OPERATOR.params.items() if k in ("nwf_function_words", "nwf_resume_max_words")}},
    ranges={"nwf_resume_max_words": [3, 20]},
    symptoms=("no_task", "task_count", "delivered"),
    family="control",
)
