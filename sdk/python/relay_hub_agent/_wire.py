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
CONVERSATION_CONTROL: Final = "conversation:control"

# A→H
REPLY: Final = "reply"
DEBUG: Final = "debug"
STREAM_START: Final = "stream:start"
STREAM_DELTA: Final = "stream:delta"
STREAM_END: Final = "stream:end"
ACTIVITY: Final = "activity"
HANDOFF: Final = "handoff"

#: Events of streamed replies, stop, activity and feedback.
STREAMING_EVENTS: Final = frozenset({STOP, FEEDBACK, STREAM_START, STREAM_DELTA, STREAM_END, ACTIVITY})
HUB_TO_AGENT: Final = frozenset({MESSAGE, SESSION_CLOSED, STOP, FEEDBACK, CONVERSATION_CONTROL})
AGENT_TO_HUB: Final = frozenset({REPLY, DEBUG, STREAM_START, STREAM_DELTA, STREAM_END, ACTIVITY, HANDOFF})

#: The ack code of a reply or stream refused because an operator holds the conversation (docs/handoff.md).
CONVERSATION_HELD: Final = "CONVERSATION_HELD"

#: The one ack code the SDK acts on by name: the hub has ended the stream, so it is not ended again.
#: Every other code is reported as the hub sent it, with ``retryable`` from the catalogue.
STREAM_NOT_FOUND: Final = "STREAM_NOT_FOUND"
