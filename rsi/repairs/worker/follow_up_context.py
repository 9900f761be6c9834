"""Repair operator ``worker.follow_up_context`` (worker): a short follow-up question that names no
value of its own ("and how long is it?") is sent with the earlier request it follows up, so the
delegate answers about the right thing.

The functions below are transplanted into ``worker/rules.py`` as they are written here. The rule is
structural: the task's words are a question by form, short, and carry no value; the context added
is the user's most recent earlier turn that is a request by form.
"""

from __future__ import annotations

from duplexagent.contract import WorkerPrepareView, text
from rsi.repairs import _g0
from rsi.repairs._base import Operator

# the g0 request text the function below extends
_g0_request_text = _g0.worker._request_text


def _follows_up(view: WorkerPrepareView, p: dict) -> str | None:
    """The earlier request a short follow-up question points back to, or None."""
    said = " ".join(view.task.utterances)
    if text.form(said) != "question" or text.values(said) or len(text.words(said)) > p["follow_up_max_words"]:
        return None
    first = view.task.utterances[0] if view.task.utterances else ""
    earlier = [u for u in view.history if u.who == "user" and u.t < view.task.created_t and text.norm(u.text) != text.norm(first)]
    for u in reversed(earlier):
        if text.form(u.text) == "request":
            return u.text
    return None


def _request_text(view: WorkerPrepareView, p: dict) -> str:
    """g0's request, with the earlier request first when the task is a short follow-up question."""
    base = _g0_request_text(view, p)
    earlier = _follows_up(view, p)
    if earlier is None:
        return base
    return base.replace("The user said: ", "Earlier the user asked: " + earlier + " Now the user said: ", 1)
