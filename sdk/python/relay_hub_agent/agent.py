"""RelayAgent: one runtime of a chat bot, connected to relay-hub."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterable, Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeVar

from . import _protocol
from ._protocol import MessagePart
from ._connection import Connection
from ._hooks import Hooks
from ._inbound import ApprovalHandler, ControlHandler, FeedbackHandler, Inbound, MessageHandler, current_message
from .errors import RelayAgentError, local_error
from .stream import ReplyStream, until_stopped
from .types import ActivityState, Sent, StreamEnd

H = TypeVar("H", bound=Callable[..., Any])


class RelayAgent:
    """Connects one runtime of a bot to the hub and keeps it connected.

    Each client message is acknowledged on receipt (the hub then acks the client) and handed to the
    :meth:`on_message` handler once per ``id``, even when the hub delivers it again. A handler that
    raises is logged and reported to :meth:`on_error`; the bot keeps running. The connection is
    retried with exponential backoff and full jitter; a terminal handshake code (a wrong API key, a
    bad ``agent_id``) or a session the hub closed for good (``API_KEY_REVOKED``) stops the agent with
    a :class:`RelayAgentError`, raised by :meth:`connect` or :meth:`wait_closed` and passed to
    :meth:`on_error`.

    Args:
        url: Origin of the hub, e.g. ``https://relay.example.com``.
        api_key: One of the hub's ``AGENT_API_KEYS``, or a managed key with the ``agent:connect`` scope.
        agent_id: The bot this runtime serves.
        path: Path prefix when the hub is mounted below the origin's root.
        backoff_base: First reconnect delay bound, seconds; doubles per failed attempt.
        backoff_cap: Largest reconnect delay bound, seconds.
        dedupe_size: How many handled message ids are remembered to drop redeliveries.
        ack_timeout: How long an event waits for the hub's answer (and for a connection), seconds.
        handshake_timeout: How long one connection attempt waits for the handshake, seconds.
        coalesce_ms: Stream writes within this many milliseconds go out as one delta.
        max_buffer_bytes: Bytes a stream holds before :meth:`ReplyStream.write` waits for the hub.
        max_delta_bytes: Largest delta; keep it well below the hub's ``MAX_MESSAGE_BYTES``.
        cancel_on_stop: Also cancel the handler's task when the user stops its answer (the
            handler sees :class:`asyncio.CancelledError` where it awaits, e.g. in an LLM call).
        logger: Where the agent logs (default ``logging.getLogger("relay_hub_agent")``).

    Example::

        agent = RelayAgent("http://localhost:3000", os.environ["AGENT_API_KEY"], "support-bot")

        @agent.on_message
        async def echo(message: Message) -> None:
            await agent.reply(message.sender, f"You said: {message.text}", reply_to=message.id)

        await agent.connect()
        await agent.wait_closed()
    """

    def __init__(
        self,
        url: str,
        api_key: str,
        agent_id: str,
        *,
        path: str = "",
        backoff_base: float = 0.5,
        backoff_cap: float = 30.0,
        dedupe_size: int = 10_000,
        ack_timeout: float = 10.0,
        handshake_timeout: float = 20.0,
        coalesce_ms: float = 25.0,
        max_buffer_bytes: int = 64 * 1024,
        max_delta_bytes: int = 16 * 1024,
        cancel_on_stop: bool = False,
        logger: logging.Logger | None = None,
    ) -> None:
        self.url = url
        self.agent_id = agent_id
        self._api_key = api_key
        self._path = path
        self._backoff = (backoff_base, backoff_cap)
        self._ack_timeout = ack_timeout
        self._handshake_timeout = handshake_timeout
        self._coalesce_ms = coalesce_ms
        self._max_buffer = max_buffer_bytes
        self._max_delta = max_delta_bytes
        self._log = logger or logging.getLogger("relay_hub_agent")
        self._hooks = Hooks(spawn=lambda work: self._inbound.spawn(work), logger=self._log)
        self._inbound = Inbound(dedupe_size=dedupe_size, cancel_on_stop=cancel_on_stop, report=self._hooks.report, logger=self._log)
        self._conn: Connection | None = None

    # Registration -------------------------------------------------------------------------------

    def on_message(self, handler: MessageHandler) -> MessageHandler:
        """Sets the handler of client messages (a decorator; a later one replaces it).

        The handler runs in its own task, so a slow answer does not hold up other users. Its
        message's :attr:`Message.stop_event` is set when the user stops the answer.
        """
        self._inbound.message_handler = handler
        return handler

    def on_feedback(self, handler: FeedbackHandler) -> FeedbackHandler:
        """Sets the handler of users' ratings of the bot's answers (a decorator).

        Example::

            @agent.on_feedback
            async def rated(feedback: Feedback) -> None:
                metrics.count(feedback.rating, message_id=feedback.id)
        """
        self._inbound.feedback_handler = handler
        return handler

    def on_approval(self, handler: ApprovalHandler) -> ApprovalHandler:
        """Sets the handler of users' decisions on tool calls the bot asked to approve (a decorator).

        Each decision reaches it once per approval id. The hub sends it again (here, or after a
        restart to another runtime) until the handler has finished, so do the approved work
        idempotently. A decision may come after the stream that asked has ended.

        Example::

            @agent.on_approval
            async def decided(approval: Approval) -> None:
                if approval.approved:
                    await agent.reply(approval.sender, await run_tool(approval.tool_call_id))
        """
        self._inbound.approval_handler = handler
        return handler

    def on_control(self, handler: ControlHandler) -> ControlHandler:
        """Sets the handler of changes of who answers a user (a decorator; docs/handoff.md).

        Example::

            @agent.on_control
            async def control(change: ControlChange) -> None:
                log.info("%s is now %s", change.client_id, change.control)
        """
        self._inbound.control_handler = handler
        return handler

    def on_error(self, handler: H) -> H:
        """Sets the handler of errors the agent reports (a decorator): refused or failed connection
        attempts (``retryable`` ones are retried), the terminal :class:`RelayAgentError` that
        stopped the agent, and exceptions of message and feedback handlers."""
        self._hooks.error_handler = handler
        return handler

    def on_connect(self, hook: H) -> H:
        """Sets a hook called after every successful handshake (a decorator)."""
        self._hooks.connect_hook = hook
        return hook

    def on_disconnect(self, hook: H) -> H:
        """Sets a hook called whenever an established connection ends (a decorator)."""
        self._hooks.disconnect_hook = hook
        return hook

    # Lifecycle ----------------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        """Whether the runtime is connected to the hub now."""
        return self._conn is not None and self._conn.connected

    async def connect(self) -> None:
        """Connects; returns on the first successful handshake.

        Retries refused (``retryable``) and failed attempts with backoff meanwhile. Raises the
        :class:`RelayAgentError` of a terminal refusal (``API_KEY_INVALID``, ``AGENT_NOT_ALLOWED``…).
        The agent then runs on the event loop, reconnecting as needed, until :meth:`close`.
        """
        if self._conn is None or self._conn.closed:
            self._conn = Connection(
                url=self.url,
                auth={"apiKey": self._api_key, "agentId": self.agent_id},
                path=self._path,
                backoff_base=self._backoff[0],
                backoff_cap=self._backoff[1],
                handshake_timeout=self._handshake_timeout,
                handlers=self._inbound.handlers(),
                on_connect=self._hooks.connected,
                on_disconnect=self._hooks.disconnected,
                on_error=self._hooks.connection_error,
                logger=self._log,
            )
        await self._conn.start()

    async def wait_closed(self) -> None:
        """Waits until the agent stops: returns after :meth:`close`, raises the terminal error otherwise.

        Example::

            await agent.connect()
            await agent.wait_closed()  # runs the bot until close() or e.g. API_KEY_REVOKED
        """
        if self._conn is None:
            return
        await self._conn.wait_stopped()
        if self._conn.terminal is not None:
            raise self._conn.terminal

    @property
    def terminal_error(self) -> RelayAgentError | None:
        """The terminal error that stopped the agent, if one did."""
        return self._conn.terminal if self._conn is not None else None

    async def close(self) -> None:
        """Disconnects, stops reconnecting and cancels the handlers still running."""
        if self._conn is not None:
            await self._conn.close()
        await self._inbound.cancel_all()

    async def __aenter__(self) -> RelayAgent:
        await self.connect()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    # Sending ------------------------------------------------------------------------------------

    async def reply(
        self,
        to: str,
        text: str | None = None,
        data: Mapping[str, Any] | None = None,
        reply_to: str | None = None,
        *,
        parts: Sequence[MessagePart] | None = None,
    ) -> Sent:
        """Sends ``text`` to one client (every tab of it), or with ``to="*"`` to every client of the bot.

        Returns once the hub has written it to the conversation log, so a client that is offline now
        gets it when it comes back. Raises :class:`RelayAgentError`: ``PAYLOAD_TOO_LARGE`` and
        ``INVALID_PAYLOAD`` (not retryable), ``RATE_LIMITED`` and ``SERVER_UNAVAILABLE`` (retryable).

        Example::

            sent = await agent.reply(message.sender, "Hello!", reply_to=message.id)
            await agent.reply("*", "Maintenance at 18:00")  # every client of the bot
            await agent.reply(message.sender, parts=[{"type": "text", "text": "See "}, {"type": "source", "sourceId": "1", "url": url}])

        With ``parts``, ``text`` defaults to the text parts joined, so clients that show only text
        still show the answer.
        """
        if text is None:
            text = "".join(str(p.get("text", "")) for p in parts or () if p.get("type") == "text")
        payload: dict[str, Any] = {"to": to, "text": _text(text)}
        if parts is not None:
            payload["parts"] = [dict(p) for p in parts]
        if data is not None:
            payload["data"] = dict(data)
        if reply_to is not None:
            payload["replyTo"] = reply_to
        ack = await self._connection().request(_protocol.REPLY, payload, self._ack_timeout)
        return Sent(str(ack.get("id")), str(ack.get("ts")))

    def stream(self, to: str, *, reply_to: str | None = None, data: Mapping[str, Any] | None = None) -> ReplyStream:
        """A streamed answer to one client: use it as ``async with agent.stream(...) as s``.

        Started inside a message handler, the stream is tied to that message: the user's stop
        reaches both. See :class:`ReplyStream`.
        """
        return ReplyStream(
            self._connection(),
            to=to,
            reply_to=reply_to,
            data=data,
            message=current_message.get(),
            ack_timeout=self._ack_timeout,
            coalesce_ms=self._coalesce_ms,
            max_buffer_bytes=self._max_buffer,
            max_delta_bytes=self._max_delta,
            on_open=self._inbound.stream_opened,
            on_close=self._inbound.stream_closed,
            logger=self._log,
            await_decision=self._inbound.await_decision,
        )

    async def stream_from(
        self,
        to: str,
        source: AsyncIterable[str],
        *,
        reply_to: str | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> StreamEnd:
        """Streams the pieces of an async iterable (an LLM client's stream) and ends the stream.

        Ends ``complete`` when the iterable is exhausted, ``cancelled`` when the user stops it (the
        iterable is closed then), ``error`` when the iterable raises (the exception propagates).

        Example::

            async def tokens(prompt: str) -> AsyncIterator[str]:
                async for chunk in await llm.chat(prompt, stream=True):
                    yield chunk.text

            await agent.stream_from(message.sender, tokens(message.text), reply_to=message.id)
        """
        iterator = source.__aiter__()
        try:
            async with self.stream(to, reply_to=reply_to, data=data) as s:
                async for piece in until_stopped(iterator, s.stop_event):
                    await s.write(piece)
        finally:
            aclose = getattr(iterator, "aclose", None)
            if aclose is not None:
                with contextlib.suppress(Exception):
                    await aclose()
        assert s.result is not None
        return s.result

    async def activity(self, to: str, state: ActivityState, label: str | None = None) -> None:
        """Tells one client what the bot is doing (``thinking``, ``typing``, ``tool``, ``idle``).

        The hub clears it by itself when an answer reaches the client, or after a while.

        Example::

            await agent.activity(message.sender, "tool", label="Searching the docs")
        """
        payload: dict[str, Any] = {"to": to, "state": state}
        if label is not None:
            payload["label"] = label
        await self._connection().request(_protocol.ACTIVITY, payload, self._ack_timeout)

    async def handoff(self, to: str, *, reason: str | None = None, summary: str | None = None) -> None:
        """Asks for a person for user ``to``: the conversation turns ``waiting`` for the bot's operators.

        ``reason`` (≤ 500 characters) and ``summary`` (≤ 4000) are shown in their console. Raises
        :class:`~relay_hub_agent.ConversationHeld` when an operator holds it already.

        Example::

            if "human" in message.text.lower():
                await agent.handoff(message.sender, reason="asked for a person")
        """
        payload: dict[str, Any] = {"to": to}
        if reason is not None:
            payload["reason"] = reason
        if summary is not None:
            payload["summary"] = summary
        await self._connection().request(_protocol.HANDOFF, payload, self._ack_timeout)

    async def debug(self, trace: Any, client_id: str | None = None) -> None:
        """Sends a trace (any JSON value) to the bot's admin clients; ``client_id`` labels the conversation.

        Example::

            await agent.debug({"prompt": prompt, "tokens": used}, client_id=message.sender)
        """
        payload: dict[str, Any] = {"trace": trace}
        if client_id is not None:
            payload["clientId"] = client_id
        await self._connection().request(_protocol.DEBUG, payload, self._ack_timeout)

    # Internals ----------------------------------------------------------------------------------

    def _connection(self) -> Connection:
        if self._conn is None:
            raise local_error("CLOSED", "the agent is not connected: call connect() first")
        return self._conn


def _text(text: Any) -> str:
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    return text
