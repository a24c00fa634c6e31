"""Typed errors of the agent SDK.

Every failure the hub reports carries a ``code`` from the protocol's catalogues and whether trying
again may succeed (``retryable``), exactly as the hub's catalogue says. The SDK adds a few codes of
its own for what happens on this side of the wire (:data:`LOCAL_CODES`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from . import _protocol

#: Codes the SDK raises itself, code → retryable. None of them is a hub code.
LOCAL_CODES: Final[Mapping[str, bool]] = {
    # The hub did not answer an event within ``ack_timeout``; it may or may not have applied it.
    "ACK_TIMEOUT": True,
    # The connection dropped before the hub answered, or was down for the whole ``ack_timeout``.
    "DISCONNECTED": True,
    # ``close()`` was called: the agent sends nothing more.
    "CLOSED": False,
    # A connection attempt failed below Socket.IO (refused, a proxy's error, a draining replica).
    "CONNECT_FAILED": True,
}


class RelayAgentError(Exception):
    """A refused handshake, a session the hub closed, an error ack, or a local failure.

    Attributes:
        code: The hub's code (``API_KEY_INVALID``, ``PAYLOAD_TOO_LARGE``, ``API_KEY_REVOKED``…) or
            one of :data:`LOCAL_CODES`.
        retryable: Whether sending again (or connecting again) may succeed.

    Example::

        try:
            await agent.reply("user-1", text)
        except RelayAgentError as err:
            if not err.retryable:
                raise
            await asyncio.sleep(1)  # RATE_LIMITED, SERVER_UNAVAILABLE: send again later
    """

    def __init__(self, code: str, message: str | None = None, retryable: bool = False) -> None:
        super().__init__(message or code)
        self.code = code
        self.retryable = retryable

    def __repr__(self) -> str:
        return f"RelayAgentError(code={self.code!r}, retryable={self.retryable!r}, message={str(self)!r})"


class ConversationHeld(RelayAgentError):
    """A reply, a stream or a handoff refused because an operator holds the conversation (docs/handoff.md).

    Nothing was delivered. The user's messages meanwhile come with ``observed=True``.

    Example::

        try:
            await agent.reply(message.sender, answer)
        except ConversationHeld:
            pass  # a person answers this user now
    """


class StreamStopped(Exception):
    """Raised by :meth:`ReplyStream.write` once the user stopped the answer.

    It is not an error: leaving the ``async with agent.stream(...)`` block with it ends the stream
    ``cancelled`` and the exception goes no further, so a generation loop simply stops.
    """


def ack_error(error: Any) -> RelayAgentError:
    """The error of an error ack ``{ ok: false, error: { code, message } }``, retryable as the catalogue says."""
    code = str(error.get("code", "INVALID_ACK")) if isinstance(error, dict) else "INVALID_ACK"
    message = error.get("message") if isinstance(error, dict) else None
    if code == "CONVERSATION_HELD":
        return ConversationHeld(code, message if isinstance(message, str) else code, False)
    return RelayAgentError(code, message if isinstance(message, str) else code, _protocol.ACK_CODES.get(code, False))


def local_error(code: str, message: str) -> RelayAgentError:
    """One of the SDK's own errors, retryable as :data:`LOCAL_CODES` says."""
    return RelayAgentError(code, message, LOCAL_CODES[code])
