"""The session engine: one discrete-event loop per conversation.

It plays the user side of a scenario, runs the simulated interaction model (turn ends by
silence, playback with receipts, interruption), calls the six harness modules at the right
moments, validates every decision against the ledger, runs the delegation pool, and writes the
trace. Same scenario + same seed gives byte-identical traces.

- ``user``: the user's turns as the simulator plays them (``UserSide``, mixed into ``Session``);
- ``memory``: what Memory shows a module, takes from a turn, and writes to the store (``MemorySide``);
- ``hooks``: how a hook is called, held to its deadline, validated, and falls back (``HookCaller``);
- ``session``: ``Session``: the ledger, delegation, delivery and playback, composing the others.
"""

from duplexagent.engine.hooks import HookCaller, _call_with_deadline
from duplexagent.engine.memory import MemorySide
from duplexagent.engine.session import (
    DEFAULT_TIMEOUT_S,
    HISTORY_LEN,
    PLAN_CHECK_S,
    PLAN_DELAY_S,
    PLAN_WAIT_S,
    DirectReply,
    InteractionModel,
    Session,
    _Announcement,
    _Speech,
    run_session,
)
from duplexagent.engine.user import BARGE_CHECKS_S, UserSide, _segments_from_audio, _TurnState

__all__ = ["DirectReply", "InteractionModel", "Session", "run_session"]
