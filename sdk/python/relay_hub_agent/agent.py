"""RelayAgent: one runtime of a chat bot, connected to relay-hub."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections import OrderedDict
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Mapping
from contextvars import ContextVar
from types import TracebackType
from typing import Any, TypeVar

from . import _wire
from ._connection import Connection
from .errors import RelayAgentError, StreamStopped, ack_error, local_error
from .stream import ReplyStream
from .types import ActivityState, Feedback, Message, Sent, StreamEnd

MessageHandler = Callable[[Message], Awaitable[None]]
FeedbackHandler = Callable[[Feedback], Awaitable[None]]
#: Called with every error the agent reports: refused or failed connection attempts, a terminal
#: code, a handler that raised. May be a plain function or a coroutine function.
ErrorHandler = Callable[[BaseException], "Awaitable[None] | None"]
Hook = Callable[[], "Awaitable[None] | None"]
H = TypeVar("H", bound=Callable[..., Any])

_current_message: ContextVar[Message | None] = ContextVar("relay_hub_agent_message", default=None)


class _RecentIds:
    """The last ``size`` message ids handed to the handler, to drop redeliveries in bounded memory."""

    def __init__(self, size: int) -> None:
        self._size = max(1, size)
        self._ids: OrderedDict[str, None] = OrderedDict()

    def add(self, id_: str) -> bool:
        """Remembers ``id_``; False when it was already there."""
        if id_ in self._ids:
            self._ids.move_to_end(id_)
            return False
        self._ids[id_] = None
        if len(self._ids) > self._size:
            self._ids.popitem(last=False)
        return True

    def __len__(self) -> int:
        return len(self._ids)


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
        self._cancel_on_stop = cancel_on_stop
        self._log = logger or logging.getLogger("relay_hub_agent")
        self._handled = _RecentIds(dedupe_size)
        self._message_handler: MessageHandler | None = None
        self._feedback_handler: FeedbackHandler | None = None
        self._error_handler: ErrorHandler | None = None
        self._connect_hook: Hook | None = None
        self._disconnect_hook: Hook | None = None
        self._conn: Connection | None = None
        self._running: dict[str, tuple[Message, asyncio.Task[None]]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._streams: set[ReplyStream] = set()
        self._streams_by_id: dict[str, ReplyStream] = {}

    # Registration -------------------------------------------------------------------------------

    def on_message(self, handler: MessageHandler) -> MessageHandler:
        """Sets the handler of client messages (a decorator; a later one replaces it).

        The handler runs in its own task, so a slow answer does not hold up other users. Its
        message's :attr:`Message.stop_event` is set when the user stops the answer.
        """
        self._message_handler = handler
        return handler

    def on_feedback(self, handler: FeedbackHandler) -> FeedbackHandler:
        """Sets the handler of users' ratings of the bot's answers (a decorator).

        Example::

            @agent.on_feedback
            async def rated(feedback: Feedback) -> None:
                metrics.count(feedback.rating, message_id=feedback.id)
        """
        self._feedback_handler = handler
        return handler

    def on_error(self, handler: H) -> H:
        """Sets the handler of errors the agent reports (a decorator): refused or failed connection
        attempts (``retryable`` ones are retried), the terminal :class:`RelayAgentError` that
        stopped the agent, and exceptions of message and feedback handlers."""
        self._error_handler = handler
        return handler

    def on_connect(self, hook: H) -> H:
        """Sets a hook called after every successful handshake (a decorator)."""
        self._connect_hook = hook
        return hook

    def on_disconnect(self, hook: H) -> H:
        """Sets a hook called whenever an established connection ends (a decorator)."""
        self._disconnect_hook = hook
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
                handlers={
                    _wire.MESSAGE: self._on_message_event,
                    _wire.STOP: self._on_stop_event,
                    _wire.FEEDBACK: self._on_feedback_event,
                },
                on_connect=lambda: self._call_hook(self._connect_hook),
                on_disconnect=lambda: self._call_hook(self._disconnect_hook),
                on_error=self._on_connection_error,
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
        current = asyncio.current_task()
        running = [t for t in self._tasks if t is not current and not t.done()]
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)

    async def __aenter__(self) -> RelayAgent:
        await self.connect()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    # Sending ------------------------------------------------------------------------------------

    async def reply(
        self, to: str, text: str, data: Mapping[str, Any] | None = None, reply_to: str | None = None
    ) -> Sent:
        """Sends ``text`` to one client (every tab of it), or with ``to="*"`` to every client of the bot.

        Returns once the hub has written it to the conversation log, so a client that is offline now
        gets it when it comes back. Raises :class:`RelayAgentError`: ``PAYLOAD_TOO_LARGE`` and
        ``INVALID_PAYLOAD`` (not retryable), ``RATE_LIMITED`` and ``SERVER_UNAVAILABLE`` (retryable).

        Example::

            sent = await agent.reply(message.sender, "Hello!", reply_to=message.id)
            await agent.reply("*", "Maintenance at 18:00")  # every client of the bot
        """
        payload: dict[str, Any] = {"to": to, "text": _text(text)}
        if data is not None:
            payload["data"] = dict(data)
        if reply_to is not None:
            payload["replyTo"] = reply_to
        ack = await self._connection().call(_wire.REPLY, payload, self._ack_timeout)
        if not isinstance(ack, dict) or ack.get("ok") is not True:
            raise ack_error(ack.get("error") if isinstance(ack, dict) else None)
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
            message=_current_message.get(),
            ack_timeout=self._ack_timeout,
            coalesce_ms=self._coalesce_ms,
            max_buffer_bytes=self._max_buffer,
            max_delta_bytes=self._max_delta,
            on_open=self._stream_opened,
            on_close=self._stream_closed,
            logger=self._log,
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
                async for piece in _until_stopped(iterator, s.stop_event):
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
        ack = await self._connection().call(_wire.ACTIVITY, payload, self._ack_timeout)
        if not isinstance(ack, dict) or ack.get("ok") is not True:
            raise ack_error(ack.get("error") if isinstance(ack, dict) else None)

    async def debug(self, trace: Any, client_id: str | None = None) -> None:
        """Sends a trace (any JSON value) to the bot's admin clients; ``client_id`` labels the conversation.

        Example::

            await agent.debug({"prompt": prompt, "tokens": used}, client_id=message.sender)
        """
        payload: dict[str, Any] = {"trace": trace}
        if client_id is not None:
            payload["clientId"] = client_id
        ack = await self._connection().call(_wire.DEBUG, payload, self._ack_timeout)
        if not isinstance(ack, dict) or ack.get("ok") is not True:
            raise ack_error(ack.get("error") if isinstance(ack, dict) else None)

    # Events from the hub ------------------------------------------------------------------------

    async def _on_message_event(self, payload: Any) -> dict[str, bool]:
        message = Message.from_wire(payload)
        if message is None:
            self._log.warning("dropped a malformed message from the hub: %r", payload)
        elif self._handled.add(message.id) and self._message_handler is not None:
            self._spawn(self._run_handler(self._message_handler, message), message)
        # Acked on receipt whatever the handler does: the hub then acks the client.
        return {"ok": True}

    async def _on_stop_event(self, payload: Any) -> dict[str, bool]:
        if not isinstance(payload, dict):
            return {"ok": True}
        stream_id, message_id = payload.get("id"), payload.get("messageId")
        stream = self._streams_by_id.get(stream_id) if isinstance(stream_id, str) else None
        if stream is not None:
            stream._stop()
            message = stream.message
            if message is None and stream.reply_to is not None and stream.reply_to in self._running:
                message = self._running[stream.reply_to][0]
            if message is not None:
                self._stop_message(message)
        if isinstance(message_id, str):
            if message_id in self._running:
                self._stop_message(self._running[message_id][0])
            for s in list(self._streams):
                if s.reply_to == message_id or (s.message is not None and s.message.id == message_id):
                    s._stop()
        return {"ok": True}

    async def _on_feedback_event(self, payload: Any) -> dict[str, bool]:
        feedback = Feedback.from_wire(payload)
        if feedback is None:
            self._log.warning("dropped malformed feedback from the hub: %r", payload)
        elif self._feedback_handler is not None:
            self._spawn(self._run_handler(self._feedback_handler, feedback), None)
        return {"ok": True}

    def _stop_message(self, message: Message) -> None:
        if message.stopped:
            return
        message.stop_event.set()
        for s in list(self._streams):
            if s.message is message:
                s._stop()
        if self._cancel_on_stop and message.id in self._running:
            self._running[message.id][1].cancel()

    def _spawn(self, work: Awaitable[None], message: Message | None) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if message is not None:
            message_id = message.id
            self._running[message_id] = (message, task)
            task.add_done_callback(lambda _: self._running.pop(message_id, None))

    async def _run_handler(self, handler: Callable[[Any], Awaitable[None]], item: Message | Feedback) -> None:
        if isinstance(item, Message):
            _current_message.set(item)
        try:
            await handler(item)
        except asyncio.CancelledError:
            if not (isinstance(item, Message) and item.stopped):
                raise
        except StreamStopped:
            pass
        except Exception as err:
            self._log.exception("the %s handler raised for %s", type(item).__name__.lower(), item.id)
            self._report(err)

    # Internals ----------------------------------------------------------------------------------

    def _connection(self) -> Connection:
        if self._conn is None:
            raise local_error("CLOSED", "the agent is not connected: call connect() first")
        return self._conn

    def _stream_opened(self, stream: ReplyStream) -> None:
        self._streams.add(stream)
        if stream.id is not None:
            self._streams_by_id[stream.id] = stream

    def _stream_closed(self, stream: ReplyStream) -> None:
        self._streams.discard(stream)
        if stream.id is not None:
            self._streams_by_id.pop(stream.id, None)

    def _on_connection_error(self, error: RelayAgentError) -> None:
        if error.retryable:
            self._log.info("connection attempt failed, retrying: %s", error)
        else:
            self._log.error("stopped: %s", error)
        self._report(error)

    def _report(self, error: BaseException) -> None:
        if self._error_handler is None:
            return
        try:
            result = self._error_handler(error)
        except Exception:
            self._log.exception("the on_error handler raised")
            return
        if inspect.isawaitable(result):
            self._spawn(_logged(result, self._log, "on_error"), None)

    def _call_hook(self, hook: Hook | None) -> None:
        if hook is None:
            return
        try:
            result = hook()
        except Exception:
            self._log.exception("a connection hook raised")
            return
        if inspect.isawaitable(result):
            self._spawn(_logged(result, self._log, "connection"), None)


def _text(text: Any) -> str:
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    return text


async def _logged(work: Awaitable[Any], log: logging.Logger, what: str) -> None:
    try:
        await work
    except Exception:
        log.exception("the %s hook raised", what)


async def _until_stopped(iterator: AsyncIterator[str], stop: asyncio.Event) -> AsyncIterator[str]:
    """The pieces of ``iterator`` until ``stop`` is set, without waiting for the next piece then."""
    while not stop.is_set():
        next_piece = asyncio.ensure_future(iterator.__anext__())
        stopped = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait({next_piece, stopped}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            next_piece.cancel()
            raise
        finally:
            stopped.cancel()
        if not next_piece.done():
            next_piece.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration, Exception):
                await next_piece
            return
        try:
            piece = next_piece.result()
        except StopAsyncIteration:
            return
        yield piece
