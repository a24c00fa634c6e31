"""The relay protocol as the agent SDK uses it.

Generated from the hub's AsyncAPI document (dist/asyncapi.json) by scripts/python-protocol.mjs
during `npm run build`. Do not edit: change src/protocol/ in the repository and build again.
"""

from __future__ import annotations

from typing import Final, Mapping

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
        "stream:start",
    }
)

#: Events the hub emits to a runtime (H→A).
HUB_TO_AGENT_EVENTS: Final[frozenset[str]] = frozenset(
    {
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
    "CONVERSATION_HELD": False,
    "INVALID_PAYLOAD": False,
    "MESSAGE_NOT_FOUND": False,
    "PAYLOAD_TOO_LARGE": False,
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
