"""A streamed answer: start, coalesced deltas with backpressure, parts, end; stopped by the user."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

from . import _protocol
from ._outbox import Outbox
from ._parts import PartWriter, ToolCall
from .errors import RelayAgentError, StreamStopped, local_error
from .types import Approval, Message, StreamEnd, StreamStatus

if TYPE_CHECKING:
    from ._connection import Connection
    from .adapters import PartOp, PartOps

#: The one ack code the SDK acts on by name: the hub has ended the stream, so it is not ended again.
#: Every other code is reported as the hub sent it, with ``retryable`` from the catalogue.
STREAM_NOT_FOUND: Final[_protocol.AckCode] = "STREAM_NOT_FOUND"


class ReplyStream:
    """One streamed answer to one user; create it with :meth:`RelayAgent.stream`.

    Writes made within ``coalesce_ms`` of each other go to the hub as one delta, one delta at a
    time: the next leaves when the hub acknowledged the previous one, and what is written meanwhile
    joins it. A writer that outpaces the hub waits in :meth:`write` once ``max_buffer_bytes`` are
    waiting, so memory stays bounded whatever the source's pace.

    When the user stops the answer (H→A ``stop``), :attr:`stop_event` is set, the SDK ends the stream
    ``cancelled`` at once, and further :meth:`write` calls raise :class:`StreamStopped`, which the
    ``async with`` block swallows.

    Example::

        async with agent.stream(message.sender, reply_to=message.id) as s:
            async for token in llm.generate(message.text):
                await s.write(token)
        # left normally: `complete`; by an exception: `error`; stopped by the user: `cancelled`
    """

    def __init__(
        self,
        conn: Connection,
        *,
        to: str,
        reply_to: str | None,
        data: Mapping[str, Any] | None,
        message: Message | None,
        ack_timeout: float,
        coalesce_ms: float,
        max_buffer_bytes: int,
        max_delta_bytes: int,
        on_open: Callable[[ReplyStream], None],
        on_close: Callable[[ReplyStream], None],
        logger: logging.Logger,
        await_decision: Callable[[str], asyncio.Future[Approval]] | None = None,
    ) -> None:
        self.to = to
        self.reply_to = reply_to
        #: The message whose handler started this stream, if any; a stop of one stops the other.
        self.message = message
        self._data = dict(data) if data is not None else None
        self._conn = conn
        self._ack_timeout = ack_timeout
        self._on_open = on_open
        self._on_close = on_close
        self._log = logger
        self.id: str | None = None
        self.ts: str | None = None
        #: The hub's receipt once the stream has ended.
        self.result: StreamEnd | None = None
        #: Set when the user asked to stop this answer.
        self.stop_event = asyncio.Event()
        self._await_decision = await_decision
        self._outbox = Outbox(
            conn,
            stop_event=self.stop_event,
            ack_timeout=ack_timeout,
            coalesce_ms=coalesce_ms,
            max_buffer_bytes=max_buffer_bytes,
            max_delta_bytes=max_delta_bytes,
        )
        self._end_task: asyncio.Task[StreamEnd] | None = None

    @property
    def stopped(self) -> bool:
        """Whether the user asked to stop this answer."""
        return self.stop_event.is_set()

    @property
    def buffered_bytes(self) -> int:
        """UTF-8 bytes written but not yet handed to the hub."""
        return self._outbox.buffered_bytes

    @property
    def deltas_sent(self) -> int:
        """How many ``stream:delta`` events the hub accepted for this stream."""
        return self._outbox.deltas

    async def start(self) -> ReplyStream:
        """Opens the stream (``stream:start``); :attr:`id` is the answer's message id from then on."""
        if self.id is not None:
            return self
        payload: dict[str, Any] = {"to": self.to}
        if self.reply_to is not None:
            payload["replyTo"] = self.reply_to
        if self._data is not None:
            payload["data"] = self._data
        self._on_open(self)
        try:
            ack = await self._conn.request(_protocol.STREAM_START, payload, self._ack_timeout)
        except BaseException:
            self._on_close(self)
            raise
        self.id, self.ts = str(ack.get("id")), str(ack.get("ts"))
        self._outbox.open(self.id)
        self._on_open(self)
        if self.stopped:
            self._schedule_end(None, None, "cancelled")
        return self

    async def write(self, piece: str) -> None:
        """Appends ``piece`` to the answer.

        Returns at once while less than ``max_buffer_bytes`` wait to be sent; otherwise waits for
        the hub. Raises :class:`StreamStopped` once the user stopped the answer, and the
        :class:`RelayAgentError` of a delta the hub refused (``PAYLOAD_TOO_LARGE`` past the stream's
        size limit, ``STREAM_NOT_FOUND`` when the hub ended it, ``DISCONNECTED``).
        """
        await self._append(None, piece)

    async def pipe(self, ops: PartOps | AsyncIterable[PartOp] | Iterable[PartOp]) -> list[dict[str, Any]]:
        """Writes a model stream's part operations to this answer as they come; returns the parts built.

        Example::

            response = await openai.chat.completions.create(model=model, messages=messages, stream=True)
            async with agent.stream(message.sender, reply_to=message.id) as s:
                await s.pipe(from_openai_chat_stream(response))
        """
        from .adapters import StreamSink, pipe_parts

        return await pipe_parts(ops, StreamSink(self))

    def reasoning(self, text: str = "") -> PartWriter:
        """Opens a reasoning part (shown collapsed); write to it with the returned writer.

        Text written with :meth:`write` afterwards goes to a new text part below it.

        Example::

            thinking = s.reasoning()
            await thinking.write("The user asks about the weather.")
        """
        return PartWriter(self, self._open({"type": "reasoning", "text": text}))

    def tool(self, tool_name: str, *, tool_call_id: str | None = None, title: str | None = None) -> ToolCall:
        """Opens a tool call in state ``input-streaming``; see :class:`ToolCall`."""
        call_id = tool_call_id or str(uuid.uuid4())
        part: _protocol.ToolPart = {"type": "tool", "toolCallId": call_id, "toolName": tool_name, "state": "input-streaming"}
        if title is not None:
            part["title"] = title
        return ToolCall(self, self._open(part), call_id)

    async def source(
        self,
        url: str | None = None,
        *,
        source_id: str | None = None,
        title: str | None = None,
        media_type: str | None = None,
        filename: str | None = None,
    ) -> int:
        """Adds a cited source; returns its index once the hub holds it."""
        part: _protocol.SourcePart = {"type": "source", "sourceId": source_id or str(uuid.uuid4())}
        for key, value in (("url", url), ("title", title), ("mediaType", media_type), ("filename", filename)):
            if value is not None:
                part[key] = value  # type: ignore[literal-required]
        return await self.part(part)

    async def file(self, url: str, media_type: str, *, filename: str | None = None, size: int | None = None) -> int:
        """Adds a file (``url`` http: or https:); an image shows as a preview."""
        part: _protocol.FilePart = {"type": "file", "url": url, "mediaType": media_type}
        if filename is not None:
            part["filename"] = filename
        if size is not None:
            part["size"] = size
        return await self.part(part)

    async def data(self, name: str, data: Any, *, id: str | None = None) -> int:
        """Adds structured data for the integrator's renderer of ``name``."""
        part: _protocol.DataPart = {"type": "data", "name": name, "data": data}
        if id is not None:
            part["id"] = id
        return await self.part(part)

    async def suggest(self, items: Sequence[str | _protocol.Suggestion]) -> int:
        """Adds quick replies (at most 10); a str is shown and sent as is."""
        suggestions: list[_protocol.Suggestion] = [{"text": i} if isinstance(i, str) else i for i in items]
        return await self.part({"type": "suggestions", "items": suggestions})

    async def part(self, part: _protocol.MessagePart) -> int:
        """Adds any part (the methods above are shorthands); returns its index once the hub holds it.

        Raises the :class:`RelayAgentError` of a refused part (``INVALID_PAYLOAD``,
        ``PAYLOAD_TOO_LARGE``); the stream then fails as after a refused delta, since the indices
        of later changes would no longer match the hub's.
        """
        index, future = self._queue_part(part)
        ack = await future
        if ack.get("index", index) != index:
            failure = RelayAgentError("INVALID_PAYLOAD", f"part {index} was put at {ack.get('index')}", False)
            self._outbox.failure = failure
            raise failure
        return index

    def _open(self, part: _protocol.MessagePart) -> int:
        """Opens a part now; its handle's calls raise if the hub refused it."""
        index, future = self._queue_part(part)
        future.add_done_callback(_retrieve)
        return index

    def _queue_part(self, part: _protocol.MessagePart) -> tuple[int, asyncio.Future[Mapping[str, Any]]]:
        self._check_writable()
        return self._outbox.add_part(part)

    async def _update(self, index: int, fields: Mapping[str, Any]) -> None:
        self._check_writable()
        await self._outbox.update(index, fields)

    def _decision(self, approval_id: str) -> asyncio.Future[Approval]:
        if self._await_decision is None:
            raise RuntimeError("this stream cannot wait for decisions")
        return self._await_decision(approval_id)

    async def _append(self, index: int | None, piece: str) -> None:
        if not isinstance(piece, str):
            raise TypeError(f"write() takes a str, not {type(piece).__name__}")
        self._check_writable()
        if not piece:
            return
        self._outbox.add_text(index, piece)
        while self._outbox.full:
            await self._outbox.space()
            self._check_writable()

    async def end(
        self,
        text: str | None = None,
        data: Mapping[str, Any] | None = None,
        status: StreamStatus = "complete",
        *,
        parts: Sequence[_protocol.MessagePart] | None = None,
    ) -> StreamEnd:
        """Sends what is buffered, then ends the stream (``stream:end``); returns the hub's receipt.

        ``text`` (and ``parts``), when given, replace what accumulated (a bot may correct itself). Once
        stopped, the stream has ended ``cancelled`` whatever ``status`` says. Calling it again
        returns the same receipt.
        """
        if self.id is None:
            raise RuntimeError("the stream was not started")
        self._schedule_end(text, data, status, parts)
        assert self._end_task is not None
        return await asyncio.shield(self._end_task)

    async def __aenter__(self) -> ReplyStream:
        return await self.start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        if exc is None:
            await self.end()
            return False
        try:
            await self.end(status="cancelled" if self.stopped else "error")
        except Exception as err:
            self._log.warning("stream %s: ending it after %r failed: %r", self.id, exc, err)
        return isinstance(exc, StreamStopped)

    def _stop(self) -> None:
        """The user asked to stop: drop what waits, end ``cancelled`` now."""
        if self.stopped:
            return
        self.stop_event.set()
        self._outbox.drop(StreamStopped(f"stream {self.id} was stopped by the user"))
        if self.id is not None:
            self._schedule_end(None, None, "cancelled")

    def _check_writable(self) -> None:
        if self.stopped:
            raise StreamStopped(f"stream {self.id} was stopped by the user")
        if self._outbox.failure is not None:
            raise self._outbox.failure
        if self.id is None:
            raise RuntimeError("the stream was not started: use `async with agent.stream(...)` or `await s.start()`")
        if self._end_task is not None:
            raise RuntimeError("the stream has ended")

    def _schedule_end(
        self,
        text: str | None,
        data: Mapping[str, Any] | None,
        status: StreamStatus,
        parts: Sequence[_protocol.MessagePart] | None = None,
    ) -> None:
        if self._end_task is None:
            if self.stopped:
                text, data, status, parts = None, None, "cancelled", None
            self._outbox.close()
            self._end_task = asyncio.create_task(self._finish(text, data, status, parts))

    async def _finish(
        self,
        text: str | None,
        data: Mapping[str, Any] | None,
        status: StreamStatus,
        parts: Sequence[_protocol.MessagePart] | None = None,
    ) -> StreamEnd:
        try:
            await self._outbox.drain()
            failure = self._outbox.failure
            if failure is not None and status != "cancelled":
                status = "error"
            if failure is not None and (failure.code == STREAM_NOT_FOUND or not self._outbox.same_connection()):
                raise failure  # the hub has ended the stream already
            if not self._outbox.same_connection():
                raise local_error("DISCONNECTED", f"stream {self.id}: the connection it started on dropped")
            payload: dict[str, Any] = {"id": self.id, "status": status}
            if text is not None:
                payload["text"] = text
            if data is not None:
                payload["data"] = dict(data)
            if parts is not None:
                payload["parts"] = [dict(p) for p in parts]
            ack = await self._conn.request(_protocol.STREAM_END, payload, self._ack_timeout)
            if failure is not None and status == "error":
                raise failure
            self.result = StreamEnd(str(ack.get("id", self.id)), str(ack.get("ts")), status)
            return self.result
        finally:
            self._on_close(self)


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Marks a failure of a part opened without awaiting as seen: the handle's calls raise it."""
    if not task.cancelled():
        task.exception()


async def until_stopped(iterator: AsyncIterator[str], stop: asyncio.Event) -> AsyncIterator[str]:
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
