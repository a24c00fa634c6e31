"""What the hub hands a runtime and what it answers, as typed objects."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Mapping, Optional, Sequence

from ._protocol import MessagePart

#: What the bot is doing, shown to the user until a message or stream of the bot reaches them.
ActivityState = Literal["thinking", "typing", "tool", "idle"]
#: How a streamed answer ended (``interrupted`` and ``timeout`` are decided by the hub only).
StreamStatus = Literal["complete", "error", "cancelled"]
#: A user's rating of an answer; ``None`` withdraws an earlier one.
Rating = Optional[Literal["up", "down"]]

#: The ``from`` of messages sent by an admin of the bot.
ADMIN_CLIENT_ID = "admin"
#: The ``to`` of :meth:`RelayAgent.reply` that addresses every client of the bot.
BROADCAST = "*"


def parse_ts(ts: str) -> datetime:
    """An ISO 8601 UTC time of the wire (``2025-01-02T03:04:05.678Z``) as an aware datetime."""
    return datetime.fromisoformat(ts[:-1] + "+00:00" if ts.endswith("Z") else ts)


@dataclass(frozen=True)
class Message:
    """A client's message to the bot (H→A ``message``).

    Attributes:
        id: The hub's id of the message (UUIDv7); the same id when the hub delivers it again.
        ts: When the hub accepted it (ISO 8601 UTC string, as on the wire; see :attr:`timestamp`).
        agent_id: The bot it is addressed to.
        sender: The ``clientId`` of the user (the wire's ``from``); ``"admin"`` for an admin.
        text: The text the user sent.
        data: The optional JSON object sent with it.
        parts: The user's parts (``file`` and ``data`` beside the text), when the message has any.
        observed: True while an operator holds the conversation: keep the context, do not answer
            (a reply would be refused with :class:`~relay_hub_agent.ConversationHeld`).
        stop_event: Set when the user asks to stop the answer to this message (H→A ``stop``).

    Example::

        @agent.on_message
        async def handle(message: Message) -> None:
            if message.sender == ADMIN_CLIENT_ID:
                ...
            await agent.reply(message.sender, message.text.upper(), reply_to=message.id)
    """

    id: str
    ts: str
    agent_id: str
    sender: str
    text: str
    data: Mapping[str, Any] | None = None
    parts: Sequence[MessagePart] | None = None
    observed: bool = False
    stop_event: asyncio.Event = field(default_factory=asyncio.Event, repr=False, compare=False)

    @property
    def stopped(self) -> bool:
        """Whether the user asked to stop the answer to this message."""
        return self.stop_event.is_set()

    @property
    def timestamp(self) -> datetime:
        """:attr:`ts` as an aware :class:`~datetime.datetime`."""
        return parse_ts(self.ts)

    @classmethod
    def from_wire(cls, payload: Any) -> Message | None:
        """The message of an H→A ``message`` payload, or ``None`` when it lacks a required field."""
        if not isinstance(payload, dict):
            return None
        id_, ts, agent_id, sender, text = (payload.get(k) for k in ("id", "ts", "agentId", "from", "text"))
        if not (
            isinstance(id_, str)
            and isinstance(ts, str)
            and isinstance(agent_id, str)
            and isinstance(sender, str)
            and isinstance(text, str)
        ):
            return None
        data, parts = payload.get("data"), payload.get("parts")
        return cls(
            id_,
            ts,
            agent_id,
            sender,
            text,
            data if isinstance(data, dict) else None,
            parts if isinstance(parts, list) else None,
            payload.get("observed") is True,
        )


@dataclass(frozen=True)
class Feedback:
    """A user's rating of one of the bot's answers (H→A ``feedback``).

    Attributes:
        id: The id of the rated message (a reply or a streamed answer of the bot).
        sender: The ``clientId`` of the user who rated it (the wire's ``from``).
        rating: ``"up"``, ``"down"``, or ``None`` when the user withdrew an earlier rating.
        comment: What the user wrote with it, if anything.
    """

    id: str
    sender: str
    rating: Rating
    comment: str | None = None

    @classmethod
    def from_wire(cls, payload: Any) -> Feedback | None:
        """The feedback of an H→A ``feedback`` payload, or ``None`` when it is malformed."""
        if not isinstance(payload, dict):
            return None
        id_, sender, rating = payload.get("id"), payload.get("from"), payload.get("rating")
        if not isinstance(id_, str) or not isinstance(sender, str) or rating not in ("up", "down", None):
            return None
        comment = payload.get("comment")
        return cls(id_, sender, rating, comment if isinstance(comment, str) else None)


ControlState = Literal["bot", "waiting", "human"]


@dataclass(frozen=True)
class ControlChange:
    """Who answers one of the bot's users changed (H→A ``conversation:control``, docs/handoff.md).

    Attributes:
        client_id: The user.
        control: ``"waiting"`` after :meth:`RelayAgent.handoff`, ``"human"`` when an operator took
            over (messages then come ``observed``), ``"bot"`` when handed back.
        since: When it entered this state (ISO 8601 UTC).
        operator: The name of the operator holding it, while ``"human"``.
        reason: What the bot gave as the reason for the handoff.
        summary: What the bot gave as the summary for the operator.
    """

    client_id: str
    control: ControlState
    since: str
    operator: str | None = None
    reason: str | None = None
    summary: str | None = None

    @classmethod
    def from_wire(cls, payload: Any) -> ControlChange | None:
        """The change of an H→A ``conversation:control`` payload, or ``None`` when it is malformed."""
        if not isinstance(payload, dict):
            return None
        client_id, control, since = payload.get("clientId"), payload.get("control"), payload.get("since")
        if not isinstance(client_id, str) or control not in ("bot", "waiting", "human") or not isinstance(since, str):
            return None
        operator = payload.get("operator")
        name = operator.get("name") if isinstance(operator, dict) else None
        reason, summary = payload.get("reason"), payload.get("summary")
        return cls(
            client_id,
            control,
            since,
            name if isinstance(name, str) else None,
            reason if isinstance(reason, str) else None,
            summary if isinstance(summary, str) else None,
        )


@dataclass(frozen=True)
class Approval:
    """A user's decision on a tool call the bot asked to approve (H→A ``approval``).

    Attributes:
        id: The approval id (:attr:`ToolCall.approval_id`).
        message_id: The bot message holding the tool call.
        tool_call_id: The tool call's id.
        sender: The ``clientId`` of the user who decided (the wire's ``from``).
        approved: Whether the user approved the call.
        reason: What the user wrote with the decision, if anything.
        ts: When the hub recorded the decision.
    """

    id: str
    message_id: str
    tool_call_id: str
    sender: str
    approved: bool
    ts: str
    reason: str | None = None

    @classmethod
    def from_wire(cls, payload: Any) -> Approval | None:
        """The decision of an H→A ``approval`` payload, or ``None`` when it is malformed."""
        if not isinstance(payload, dict):
            return None
        keys = ("id", "messageId", "toolCallId", "from", "ts")
        values = [payload.get(k) for k in keys]
        approved, reason = payload.get("approved"), payload.get("reason")
        if not all(isinstance(v, str) for v in values) or not isinstance(approved, bool):
            return None
        id_, message_id, tool_call_id, sender, ts = (str(v) for v in values)
        return cls(id_, message_id, tool_call_id, sender, approved, ts, reason if isinstance(reason, str) else None)


@dataclass(frozen=True)
class Sent:
    """The hub's receipt for a reply: the message's id and when it was written to the conversation log."""

    id: str
    ts: str

    @property
    def timestamp(self) -> datetime:
        """:attr:`ts` as an aware :class:`~datetime.datetime`."""
        return parse_ts(self.ts)


@dataclass(frozen=True)
class StreamEnd(Sent):
    """The hub's receipt for a finished stream: the final message is in the log with this ``status``."""

    status: StreamStatus = "complete"
