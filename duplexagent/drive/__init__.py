"""``duplexagent drive``: play scenarios against a running system over a live protocol and grade what it did.

The user side is the scenario's script (:class:`ScriptedUser`); event-relative turns resolve
against the events the system actually sends. The observable trace is written per conversation
(docs/formats.md) and graded as ``sim score`` grades it. Protocols and clocks: docs/live.md.
"""

from duplexagent.drive._drive import DriveError, DriveResult, drive_directory, drive_scenario
from duplexagent.drive._user import ScriptedUser, UserSpeech

__all__ = ["DriveError", "DriveResult", "ScriptedUser", "UserSpeech", "drive_directory", "drive_scenario"]
