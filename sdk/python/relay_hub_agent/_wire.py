"""The event names the SDK emits and handles on the agent namespace.

The test suite checks every name here against the hub's AsyncAPI document (the streaming ones once
the document has them), so a renamed or removed event fails the tests rather than the bot.
"""

from __future__ import annotations

from typing import Final

# H→A
MESSAGE: Final = "message"
SESSION_CLOSED: Final = "session:closed"
STOP: Final = "stop"
FEEDBACK: Final = "feedback"

# A→H
REPLY: Final = "reply"
DEBUG: Final = "debug"
STREAM_START: Final = "stream:start"
STREAM_DELTA: Final = "stream:delta"
STREAM_END: Final = "stream:end"
ACTIVITY: Final = "activity"

#: Events of streamed replies, stop and activity (README, "Streamed replies").
STREAMING_EVENTS: Final = frozenset({STOP, FEEDBACK, STREAM_START, STREAM_DELTA, STREAM_END, ACTIVITY})
HUB_TO_AGENT: Final = frozenset({MESSAGE, SESSION_CLOSED, STOP, FEEDBACK})
AGENT_TO_HUB: Final = frozenset({REPLY, DEBUG, STREAM_START, STREAM_DELTA, STREAM_END, ACTIVITY})

#: Ack codes the SDK decides on by name (the rest it reports as the hub sent them).
STREAM_NOT_FOUND: Final = "STREAM_NOT_FOUND"
USED_ACK_CODES: Final = frozenset({"PAYLOAD_TOO_LARGE", "RATE_LIMITED", "SERVER_UNAVAILABLE", STREAM_NOT_FOUND})
#: session:closed codes the SDK names in its documentation and tests.
USED_SESSION_CLOSED_CODES: Final = frozenset({"API_KEY_REVOKED"})
