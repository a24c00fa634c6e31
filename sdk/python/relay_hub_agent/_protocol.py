"""The relay protocol as the agent SDK uses it.

Generated from the hub's AsyncAPI document (dist/asyncapi.json) by scripts/python-protocol.mjs
during `npm run build`. Do not edit: change src/protocol/ in the repository and build again.
"""

from __future__ import annotations

from typing import Any, Final, Literal, Mapping, TypedDict, Union

AGENT_NAMESPACE: Final = "/ws/agent"

#: Events a runtime emits to the hub (A→H).
AGENT_TO_HUB_EVENTS: Final[frozenset[str]] = frozenset(
    {
        "activity",
        "debug",
        "handoff",
        "reply",
        "stream:delta",
        "stream:end",
        "stream:part",
        "stream:start",
        "stream:update",
    }
)

#: Events the hub emits to a runtime (H→A).
HUB_TO_AGENT_EVENTS: Final[frozenset[str]] = frozenset(
    {
        "approval",
        "conversation:control",
        "feedback",
        "message",
        "session:closed",
        "stop",
    }
)

#: Handshake refusal codes of the agent namespace.
AGENT_HANDSHAKE_CODES: Final[frozenset[str]] = frozenset(
    {
        "AGENT_ID_INVALID",
        "AGENT_ID_REQUIRED",
        "AGENT_NOT_ALLOWED",
        "AGENT_RUNTIME_LIMIT",
        "API_KEY_INVALID",
        "RATE_LIMITED",
        "SERVER_BUSY",
        "SERVER_SHUTTING_DOWN",
        "SERVER_UNAVAILABLE",
    }
)

#: Handshake refusal codes (connect_error data), code → retryable.
HANDSHAKE_CODES: Final[Mapping[str, bool]] = {
    "AGENT_ID_INVALID": False,
    "AGENT_ID_REQUIRED": False,
    "AGENT_NOT_ALLOWED": False,
    "AGENT_RUNTIME_LIMIT": True,
    "API_KEY_INVALID": False,
    "OPERATOR_REQUIRED": False,
    "ORIGIN_NOT_ALLOWED": False,
    "RATE_LIMITED": True,
    "SERVER_BUSY": True,
    "SERVER_SHUTTING_DOWN": True,
    "SERVER_UNAVAILABLE": True,
    "SUB_REQUIRED": False,
    "SUB_RESERVED": False,
    "TOKEN_EXPIRED": True,
    "TOKEN_INVALID": False,
    "TOKEN_REQUIRED": False,
    "USER_DEACTIVATED": False,
}

#: Error-ack codes, code → retryable.
ACK_CODES: Final[Mapping[str, bool]] = {
    "AGENT_OFFLINE": True,
    "APPROVAL_DECIDED": False,
    "APPROVAL_EXPIRED": False,
    "CONVERSATION_HELD": False,
    "INVALID_PAYLOAD": False,
    "MESSAGE_NOT_FOUND": False,
    "OPERATOR_REQUIRED": False,
    "PAYLOAD_TOO_LARGE": False,
    "QUOTA_EXCEEDED": False,
    "RATE_LIMITED": True,
    "SERVER_UNAVAILABLE": True,
    "STREAM_LIMIT": False,
    "STREAM_NOT_FOUND": False,
    "SUB_MISMATCH": False,
    "TIMEOUT": True,
    "TOKEN_EXPIRED": False,
    "TOKEN_INVALID": False,
    "USER_DEACTIVATED": False,
}

#: session:closed codes, code → retryable.
SESSION_CLOSED_CODES: Final[Mapping[str, bool]] = {
    "API_KEY_REVOKED": False,
    "RATE_LIMITED": True,
    "SERVER_UNAVAILABLE": True,
    "TOKEN_EXPIRED": True,
    "USER_DEACTIVATED": False,
}

#: Event names of the agent namespace, both directions.
ACTIVITY: Final = "activity"
APPROVAL: Final = "approval"
CONVERSATION_CONTROL: Final = "conversation:control"
DEBUG: Final = "debug"
FEEDBACK: Final = "feedback"
HANDOFF: Final = "handoff"
MESSAGE: Final = "message"
REPLY: Final = "reply"
SESSION_CLOSED: Final = "session:closed"
STOP: Final = "stop"
STREAM_DELTA: Final = "stream:delta"
STREAM_END: Final = "stream:end"
STREAM_PART: Final = "stream:part"
STREAM_START: Final = "stream:start"
STREAM_UPDATE: Final = "stream:update"


# Payload types of the agent namespace, from its JSON schemas.


AckCode = Literal[
    "AGENT_OFFLINE",
    "TIMEOUT",
    "INVALID_PAYLOAD",
    "PAYLOAD_TOO_LARGE",
    "RATE_LIMITED",
    "TOKEN_INVALID",
    "TOKEN_EXPIRED",
    "SUB_MISMATCH",
    "USER_DEACTIVATED",
    "SERVER_UNAVAILABLE",
    "STREAM_NOT_FOUND",
    "STREAM_LIMIT",
    "MESSAGE_NOT_FOUND",
    "APPROVAL_DECIDED",
    "APPROVAL_EXPIRED",
    "QUOTA_EXCEEDED",
    "OPERATOR_REQUIRED",
    "CONVERSATION_HELD",
]
# Why an event was not accepted. Carried by an error ack { ok: false, error }.

AckError = TypedDict(
    "AckError",
    {
        "code": "AckCode",
        "message": str,
    },
)

ActivityAck = Union["_ActivityAck1", "_ActivityAck2"]

ActivityState = Literal["thinking", "typing", "tool", "idle"]
# What the bot is doing; 'idle' clears it.

_ActivityUpdateRequired = TypedDict(
    "_ActivityUpdateRequired",
    {
        "to": str,
        "state": "ActivityState",
    },
)
_ActivityUpdateOptional = TypedDict(
    "_ActivityUpdateOptional",
    {
        "label": str,
    }, total=False,
)


class ActivityUpdate(_ActivityUpdateRequired, _ActivityUpdateOptional):
    "The ActivityUpdate payload."


_AgentApprovalRequired = TypedDict(
    "_AgentApprovalRequired",
    {
        "id": str,
        "messageId": str,
        "toolCallId": str,
        "from": str,
        "approved": bool,
        "ts": str,
    },
)
_AgentApprovalOptional = TypedDict(
    "_AgentApprovalOptional",
    {
        "reason": str,
    }, total=False,
)


class AgentApproval(_AgentApprovalRequired, _AgentApprovalOptional):
    "Acked by the runtime; redelivered until acked."


AgentAuth = TypedDict(
    "AgentAuth",
    {
        "apiKey": str,
        "agentId": str,
    },
)

_AgentDebugRequired = TypedDict(
    "_AgentDebugRequired",
    {
        "trace": Any,
    },
)
_AgentDebugOptional = TypedDict(
    "_AgentDebugOptional",
    {
        "clientId": str,
    }, total=False,
)


class AgentDebug(_AgentDebugRequired, _AgentDebugOptional):
    "The AgentDebug payload."


_AgentFeedbackRequired = TypedDict(
    "_AgentFeedbackRequired",
    {
        "id": str,
        "from": str,
        "rating": Union["Rating", None],
    },
)
_AgentFeedbackOptional = TypedDict(
    "_AgentFeedbackOptional",
    {
        "comment": str,
    }, total=False,
)


class AgentFeedback(_AgentFeedbackRequired, _AgentFeedbackOptional):
    "The AgentFeedback payload."


_AgentInboundMessageRequired = TypedDict(
    "_AgentInboundMessageRequired",
    {
        "id": str,
        "ts": str,
        "agentId": str,
        "from": str,
        "text": str,
    },
)
_AgentInboundMessageOptional = TypedDict(
    "_AgentInboundMessageOptional",
    {
        "data": "MessageData",
        "parts": list["MessagePart"],
        "observed": Literal[True],
    }, total=False,
)


class AgentInboundMessage(_AgentInboundMessageRequired, _AgentInboundMessageOptional):
    "The AgentInboundMessage payload."


_AgentReplyRequired = TypedDict(
    "_AgentReplyRequired",
    {
        "to": str,
        "text": str,
    },
)
_AgentReplyOptional = TypedDict(
    "_AgentReplyOptional",
    {
        "data": "MessageData",
        "parts": list["MessagePart"],
        "replyTo": str,
    }, total=False,
)


class AgentReply(_AgentReplyRequired, _AgentReplyOptional):
    "The AgentReply payload."


_AgentStopRequired = TypedDict(
    "_AgentStopRequired",
    {
        "from": str,
    },
)
_AgentStopOptional = TypedDict(
    "_AgentStopOptional",
    {
        "id": str,
        "messageId": str,
    }, total=False,
)


class AgentStop(_AgentStopRequired, _AgentStopOptional):
    "End that stream with status cancelled within STREAM_STOP_GRACE_MS, or the hub ends it."


ControlState = Literal["bot", "waiting", "human"]
# 'bot' answers; 'waiting': the bot asked for a person; 'human': an operator holds it.

_ConversationControlRequired = TypedDict(
    "_ConversationControlRequired",
    {
        "agentId": str,
        "clientId": str,
        "control": "ControlState",
        "since": str,
    },
)
_ConversationControlOptional = TypedDict(
    "_ConversationControlOptional",
    {
        "operator": "OperatorName",
        "reason": str,
        "summary": str,
    }, total=False,
)


class ConversationControl(_ConversationControlRequired, _ConversationControlOptional):
    "The ConversationControl payload."


_DataPartRequired = TypedDict(
    "_DataPartRequired",
    {
        "type": Literal["data"],
        "name": str,
        "data": Any,
    },
)
_DataPartOptional = TypedDict(
    "_DataPartOptional",
    {
        "id": str,
    }, total=False,
)


class DataPart(_DataPartRequired, _DataPartOptional):
    "Structured data for an integrator's renderer."


DebugAck = Union["_DebugAck1", "_DebugAck2"]

_FilePartRequired = TypedDict(
    "_FilePartRequired",
    {
        "type": Literal["file"],
        "url": str,
        "mediaType": str,
    },
)
_FilePartOptional = TypedDict(
    "_FilePartOptional",
    {
        "filename": str,
        "size": int,
    }, total=False,
)


class FilePart(_FilePartRequired, _FilePartOptional):
    "A file by URL: an image preview or a file card."


HandoffAck = Union["_HandoffAck1", "_HandoffAck2"]
# ok: the conversation is 'waiting'; CONVERSATION_HELD: an operator holds it already.

_HandoffRequestRequired = TypedDict(
    "_HandoffRequestRequired",
    {
        "to": str,
    },
)
_HandoffRequestOptional = TypedDict(
    "_HandoffRequestOptional",
    {
        "reason": str,
        "summary": str,
    }, total=False,
)


class HandoffRequest(_HandoffRequestRequired, _HandoffRequestOptional):
    "The HandoffRequest payload."


HandshakeCode = Literal[
    "API_KEY_INVALID",
    "AGENT_ID_REQUIRED",
    "AGENT_ID_INVALID",
    "TOKEN_REQUIRED",
    "TOKEN_INVALID",
    "TOKEN_EXPIRED",
    "SUB_REQUIRED",
    "SUB_RESERVED",
    "AGENT_NOT_ALLOWED",
    "USER_DEACTIVATED",
    "ORIGIN_NOT_ALLOWED",
    "RATE_LIMITED",
    "SERVER_SHUTTING_DOWN",
    "SERVER_UNAVAILABLE",
    "SERVER_BUSY",
    "OPERATOR_REQUIRED",
    "AGENT_RUNTIME_LIMIT",
]
# Why a handshake was refused. Carried by connect_error as err.data = { code, retryable }.

HandshakeErrorData = TypedDict(
    "HandshakeErrorData",
    {
        "code": "HandshakeCode",
        "retryable": bool,
    },
)
# err.data of the connect_error a refused handshake gets.

MessageData = Mapping[str, Any]
# Any JSON object.

MessagePart = Union[
    "TextPart",
    "ReasoningPart",
    "ToolPart",
    "SourcePart",
    "FilePart",
    "DataPart",
    "SuggestionsPart",
]
# One part of a message; `type` says which.

OperatorName = TypedDict(
    "OperatorName",
    {
        "name": str,
    },
)

PartPatch = Mapping[str, Any]
# Fields to merge into the part at index; its type never changes, a tool state only moves forward.

Rating = Literal["up", "down"]

ReasoningPart = TypedDict(
    "ReasoningPart",
    {
        "type": Literal["reasoning"],
        "text": str,
    },
)

RuntimeAck = TypedDict(
    "RuntimeAck",
    {
        "ok": bool,
    },
)
# Sent by the runtime on receipt (the agent SDK does it) within AGENT_ACK_TIMEOUT_MS.

RuntimeApprovalAck = TypedDict(
    "RuntimeApprovalAck",
    {
        "ok": bool,
    },
)
# Sent by the runtime on receipt (the agent SDK does it) within AGENT_ACK_TIMEOUT_MS.

SendAck = Union["_SendAck1", "_SendAck2"]
# ok: the message is accepted (for a client message: the chosen runtime acknowledged it) with its id and ts.

SessionClosed = TypedDict(
    "SessionClosed",
    {
        "code": "SessionClosedCode",
        "retryable": bool,
    },
)

SessionClosedCode = Literal[
    "TOKEN_EXPIRED",
    "USER_DEACTIVATED",
    "RATE_LIMITED",
    "API_KEY_REVOKED",
    "SERVER_UNAVAILABLE",
]
# Why the hub ends a session. Carried by session:closed just before the disconnect.

_SourcePartRequired = TypedDict(
    "_SourcePartRequired",
    {
        "type": Literal["source"],
        "sourceId": str,
    },
)
_SourcePartOptional = TypedDict(
    "_SourcePartOptional",
    {
        "url": str,
        "title": str,
        "mediaType": str,
        "filename": str,
    }, total=False,
)


class SourcePart(_SourcePartRequired, _SourcePartOptional):
    "A citation."


_StreamDeltaRequired = TypedDict(
    "_StreamDeltaRequired",
    {
        "id": str,
        "text": str,
    },
)
_StreamDeltaOptional = TypedDict(
    "_StreamDeltaOptional",
    {
        "index": int,
    }, total=False,
)


class StreamDelta(_StreamDeltaRequired, _StreamDeltaOptional):
    "The StreamDelta payload."


StreamDeltaAck = Union["_StreamDeltaAck1", "_StreamDeltaAck2"]
# ok: the delta is the stream's seq-th.

_StreamEndRequired = TypedDict(
    "_StreamEndRequired",
    {
        "id": str,
    },
)
_StreamEndOptional = TypedDict(
    "_StreamEndOptional",
    {
        "text": str,
        "data": "MessageData",
        "parts": list["MessagePart"],
        "status": Literal["complete", "error", "cancelled"],
    }, total=False,
)


class StreamEnd(_StreamEndRequired, _StreamEndOptional):
    "The StreamEnd payload."


StreamEndAck = Union["_StreamEndAck1", "_StreamEndAck2"]
# ok: the final message is in the log, at the position of its start.

StreamPart = TypedDict(
    "StreamPart",
    {
        "id": str,
        "part": "MessagePart",
    },
)
# Appends a new part; the ack carries its index.

StreamPartAck = Union["_StreamPartAck1", "_StreamPartAck2"]
# ok: the part is the stream's seq-th change, at index.

_StreamStartRequired = TypedDict(
    "_StreamStartRequired",
    {
        "to": str,
    },
)
_StreamStartOptional = TypedDict(
    "_StreamStartOptional",
    {
        "replyTo": str,
        "data": "MessageData",
        "parts": list["MessagePart"],
    }, total=False,
)


class StreamStart(_StreamStartRequired, _StreamStartOptional):
    "The StreamStart payload."


StreamStartAck = Union["_StreamStartAck1", "_StreamStartAck2"]
# ok: the open stream is recorded; id is the message's id from now on.

StreamUpdate = TypedDict(
    "StreamUpdate",
    {
        "id": str,
        "index": int,
        "part": "PartPatch",
    },
)

StreamUpdateAck = Union["_StreamUpdateAck1", "_StreamUpdateAck2"]
# ok: the update is the stream's seq-th change.

_SuggestionRequired = TypedDict(
    "_SuggestionRequired",
    {
        "text": str,
    },
)
_SuggestionOptional = TypedDict(
    "_SuggestionOptional",
    {
        "value": str,
    }, total=False,
)


class Suggestion(_SuggestionRequired, _SuggestionOptional):
    "The Suggestion payload."


SuggestionsPart = TypedDict(
    "SuggestionsPart",
    {
        "type": Literal["suggestions"],
        "items": list["Suggestion"],
    },
)
# Quick replies (bots only); choosing one sends it as the user's message.

TextPart = TypedDict(
    "TextPart",
    {
        "type": Literal["text"],
        "text": str,
    },
)
# The answer; a message's text is the concatenation of its text parts.

_ToolApprovalRequired = TypedDict(
    "_ToolApprovalRequired",
    {
        "id": str,
    },
)
_ToolApprovalOptional = TypedDict(
    "_ToolApprovalOptional",
    {
        "approved": bool,
        "reason": str,
        "decidedBy": str,
        "ts": str,
    }, total=False,
)


class ToolApproval(_ToolApprovalRequired, _ToolApprovalOptional):
    "A request for approval; the decision fields are the hub's."


_ToolPartRequired = TypedDict(
    "_ToolPartRequired",
    {
        "type": Literal["tool"],
        "toolCallId": str,
        "toolName": str,
        "state": "ToolState",
    },
)
_ToolPartOptional = TypedDict(
    "_ToolPartOptional",
    {
        "input": Any,
        "inputText": str,
        "output": Any,
        "errorText": str,
        "title": str,
        "approval": "ToolApproval",
    }, total=False,
)


class ToolPart(_ToolPartRequired, _ToolPartOptional):
    "A tool call, as a step with its state."


ToolState = Literal[
    "input-streaming",
    "input-available",
    "approval-requested",
    "approval-responded",
    "output-available",
    "output-error",
    "output-denied",
]
# Moves only forward: input-streaming → input-available → approval-requested → approval-responded → output-available | output-error | output-denied. Only a user decision moves a tool to approval-responded.

_ActivityAck1 = TypedDict(
    "_ActivityAck1",
    {
        "ok": Literal[True],
    },
)

_ActivityAck2 = TypedDict(
    "_ActivityAck2",
    {
        "ok": Literal[False],
        "error": "AckError",
    },
)

_DebugAck1 = TypedDict(
    "_DebugAck1",
    {
        "ok": Literal[True],
    },
)

_DebugAck2 = TypedDict(
    "_DebugAck2",
    {
        "ok": Literal[False],
        "error": "AckError",
    },
)

_HandoffAck1 = TypedDict(
    "_HandoffAck1",
    {
        "ok": Literal[True],
    },
)

_HandoffAck2 = TypedDict(
    "_HandoffAck2",
    {
        "ok": Literal[False],
        "error": "AckError",
    },
)

_SendAck1 = TypedDict(
    "_SendAck1",
    {
        "ok": Literal[True],
        "id": str,
        "ts": str,
    },
)

_SendAck2 = TypedDict(
    "_SendAck2",
    {
        "ok": Literal[False],
        "error": "AckError",
    },
)

_StreamDeltaAck1 = TypedDict(
    "_StreamDeltaAck1",
    {
        "ok": Literal[True],
        "seq": int,
    },
)

_StreamDeltaAck2 = TypedDict(
    "_StreamDeltaAck2",
    {
        "ok": Literal[False],
        "error": "AckError",
    },
)

_StreamEndAck1 = TypedDict(
    "_StreamEndAck1",
    {
        "ok": Literal[True],
        "id": str,
        "ts": str,
    },
)

_StreamEndAck2 = TypedDict(
    "_StreamEndAck2",
    {
        "ok": Literal[False],
        "error": "AckError",
    },
)

_StreamPartAck1 = TypedDict(
    "_StreamPartAck1",
    {
        "ok": Literal[True],
        "seq": int,
        "index": int,
    },
)

_StreamPartAck2 = TypedDict(
    "_StreamPartAck2",
    {
        "ok": Literal[False],
        "error": "AckError",
    },
)

_StreamStartAck1 = TypedDict(
    "_StreamStartAck1",
    {
        "ok": Literal[True],
        "id": str,
        "ts": str,
    },
)

_StreamStartAck2 = TypedDict(
    "_StreamStartAck2",
    {
        "ok": Literal[False],
        "error": "AckError",
    },
)

_StreamUpdateAck1 = TypedDict(
    "_StreamUpdateAck1",
    {
        "ok": Literal[True],
        "seq": int,
    },
)

_StreamUpdateAck2 = TypedDict(
    "_StreamUpdateAck2",
    {
        "ok": Literal[False],
        "error": "AckError",
    },
)
