"""A streamed answer: start, coalesced deltas with backpressure, parts, end; stopped by the user."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

from . import _protocol
from ._connection import backoff_delay
from ._parts import PartWriter, ToolCall
from .errors import RelayAgentError, StreamStopped, ack_error, local_error
from .types import Approval, Message, StreamEnd, StreamStatus

if TYPE_CHECKING:
    from ._connection import Connection
    from .adapters import PartOp, PartOps

#: How often a delta refused with a retryable code (RATE_LIMITED, SERVER_UNAVAILABLE) is sent again.
DELTA_RETRIES = 6
#: The one ack code the SDK acts on by name: the hub has ended the stream, so it is not ended again.
#: Every other code is reported as the hub sent it, with ``retryable`` from the catalogue.
STREAM_NOT_FOUND: Final[_protocol.AckCode] = "STREAM_NOT_FOUND"


@dataclass
class _Text:
    """Text waiting for part ``index`` (``None``: the last part when it is text, else a new one)."""

    index: int | None
    pieces: list[str] = field(default_factory=list)


@dataclass
class _Change:
    """A ``stream:part`` or ``stream:update`` waiting to go, after the text written before it."""

    event: str
    payload: dict[str, Any]
    future: asyncio.Future[Mapping[str, Any]]


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def split_utf8(text: str, max_bytes: int) -> tuple[str, str]:
    """``text`` cut after at most ``max_bytes`` UTF-8 bytes, on a character boundary."""
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= max_bytes:
        return text, ""
    cut = max_bytes
    while cut > 0 and (raw[cut] & 0xC0) == 0x80:
        cut -= 1
    head = raw[:cut].decode("utf-8", "surrogatepass")
    return head, text[len(head) :]


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
        self._coalesce = coalesce_ms / 1000
        self._max_buffer = max(1, max_buffer_bytes)
        self._max_delta = max(4, max_delta_bytes)
        self._on_open = on_open
        self._on_close = on_close
        self._log = logger
        self.id: str | None = None
        self.ts: str | None = None
        #: The hub's receipt once the stream has ended.
        self.result: StreamEnd | None = None
        #: Set when the user asked to stop this answer.
        self.stop_event = asyncio.Event()
        self._generation = 0
        self._await_decision = await_decision
        self._pending: deque[_Text | _Change] = deque()
        #: The type of each part, as queued: where text written without an index lands.
        self._types: list[str] = []
        self._pending_bytes = 0
        self._pending_since: float | None = None
        self._space = asyncio.Event()
        self._space.set()
        self._wake = asyncio.Event()
        self._flusher: asyncio.Task[None] | None = None
        self._failure: RelayAgentError | None = None
        self._end_task: asyncio.Task[StreamEnd] | None = None
        self._deltas = 0

    @property
    def stopped(self) -> bool:
        """Whether the user asked to stop this answer."""
        return self.stop_event.is_set()

    @property
    def buffered_bytes(self) -> int:
        """UTF-8 bytes written but not yet handed to the hub."""
        return self._pending_bytes

    @property
    def deltas_sent(self) -> int:
        """How many ``stream:delta`` events the hub accepted for this stream."""
        return self._deltas

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
            ack = await self._conn.call(_protocol.STREAM_START, payload, self._ack_timeout)
            if not isinstance(ack, dict) or ack.get("ok") is not True:
                raise ack_error(ack.get("error") if isinstance(ack, dict) else None)
        except BaseException:
            self._on_close(self)
            raise
        self.id, self.ts = str(ack.get("id")), str(ack.get("ts"))
        self._generation = self._conn.generation
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
            self._failure = RelayAgentError("INVALID_PAYLOAD", f"part {index} was put at {ack.get('index')}", False)
            raise self._failure
        return index

    def _open(self, part: _protocol.MessagePart) -> int:
        """Opens a part now; its handle's calls raise if the hub refused it."""
        index, future = self._queue_part(part)
        future.add_done_callback(_retrieve)
        return index

    def _queue_part(self, part: _protocol.MessagePart) -> tuple[int, asyncio.Future[Mapping[str, Any]]]:
        future = self._queue(_protocol.STREAM_PART, {"id": self.id, "part": dict(part)})
        self._types.append(part["type"])
        return len(self._types) - 1, future

    async def _update(self, index: int, fields: Mapping[str, Any]) -> None:
        await self._queue(_protocol.STREAM_UPDATE, {"id": self.id, "index": index, "part": dict(fields)})

    def _decision(self, approval_id: str) -> asyncio.Future[Approval]:
        if self._await_decision is None:
            raise RuntimeError("this stream cannot wait for decisions")
        return self._await_decision(approval_id)

    def _queue(self, event: str, payload: dict[str, Any]) -> asyncio.Future[Mapping[str, Any]]:
        """Queues a change behind what was written; the future is its ack."""
        self._check_writable()
        future: asyncio.Future[Mapping[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending.append(_Change(event, payload, future))
        # What was written before goes now, so the change is not held behind the coalescing window.
        self._pending_since = float("-inf")
        self._wake.set()
        if self._flusher is None:
            self._flusher = asyncio.create_task(self._flush())
        return future

    async def _append(self, index: int | None, piece: str) -> None:
        if not isinstance(piece, str):
            raise TypeError(f"write() takes a str, not {type(piece).__name__}")
        self._check_writable()
        if not piece:
            return
        if index is None and (not self._types or self._types[-1] != "text"):
            self._types.append("text")
        tail = self._pending[-1] if self._pending else None
        if isinstance(tail, _Text) and tail.index == index:
            tail.pieces.append(piece)
        else:
            self._pending.append(_Text(index, [piece]))
        self._pending_bytes += utf8_len(piece)
        if self._pending_since is None:
            self._pending_since = asyncio.get_running_loop().time()
        if self._flusher is None:
            self._flusher = asyncio.create_task(self._flush())
        while self._pending_bytes >= self._max_buffer:
            self._space.clear()
            await self._space.wait()
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
        self._drop_pending(StreamStopped(f"stream {self.id} was stopped by the user"))
        self._space.set()
        self._wake.set()
        if self.id is not None:
            self._schedule_end(None, None, "cancelled")

    def _check_writable(self) -> None:
        if self.stopped:
            raise StreamStopped(f"stream {self.id} was stopped by the user")
        if self._failure is not None:
            raise self._failure
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
            self._end_task = asyncio.create_task(self._finish(text, data, status, parts))

    async def _finish(
        self,
        text: str | None,
        data: Mapping[str, Any] | None,
        status: StreamStatus,
        parts: Sequence[_protocol.MessagePart] | None = None,
    ) -> StreamEnd:
        try:
            self._wake.set()
            if self._flusher is not None:
                await asyncio.shield(self._flusher)
            failure = self._failure
            if failure is not None and status != "cancelled":
                status = "error"
            if failure is not None and (failure.code == STREAM_NOT_FOUND or not self._same_connection()):
                raise failure  # the hub has ended the stream already
            if not self._same_connection():
                raise local_error("DISCONNECTED", f"stream {self.id}: the connection it started on dropped")
            payload: dict[str, Any] = {"id": self.id, "status": status}
            if text is not None:
                payload["text"] = text
            if data is not None:
                payload["data"] = dict(data)
            if parts is not None:
                payload["parts"] = [dict(p) for p in parts]
            ack = await self._conn.call(_protocol.STREAM_END, payload, self._ack_timeout)
            if not isinstance(ack, dict) or ack.get("ok") is not True:
                raise ack_error(ack.get("error") if isinstance(ack, dict) else None)
            if failure is not None and status == "error":
                raise failure
            self.result = StreamEnd(str(ack.get("id", self.id)), str(ack.get("ts")), status)
            return self.result
        finally:
            self._on_close(self)

    def _same_connection(self) -> bool:
        return self._conn.connected and self._conn.generation == self._generation

    async def _flush(self) -> None:
        """Sends what is buffered as deltas, one at a time, each once the previous was acknowledged."""
        loop = asyncio.get_running_loop()
        try:
            while self._pending and not self.stopped and self._failure is None:
                since = self._pending_since if self._pending_since is not None else loop.time()
                wait = since + self._coalesce - loop.time()
                if wait > 0 and self._end_task is None:
                    self._wake.clear()
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(self._wake.wait(), wait)
                    continue
                item = self._take()
                if isinstance(item, _Change):
                    await self._send_change(item)
                else:
                    await self._send_delta(*item)
        except RelayAgentError as err:
            self._failure = err
        finally:
            self._flusher = None
            if self._failure is not None:
                self._drop_pending(self._failure)
            self._space.set()

    def _drop_pending(self, error: BaseException) -> None:
        for item in self._pending:
            if isinstance(item, _Change) and not item.future.done():
                item.future.set_exception(error)
        self._pending.clear()
        self._pending_bytes = 0

    def _take(self) -> _Change | tuple[int | None, str]:
        """The change at the front, or up to ``max_delta_bytes`` of the text at the front as one piece."""
        head = self._pending[0]
        if isinstance(head, _Change):
            self._pending.popleft()
            return head
        parts: list[str] = []
        budget = self._max_delta
        while head.pieces and budget > 0:
            piece = head.pieces[0]
            size = utf8_len(piece)
            if size <= budget:
                head.pieces.pop(0)
                parts.append(piece)
                budget -= size
                self._pending_bytes -= size
                continue
            first, rest = split_utf8(piece, budget)
            if not first:
                break
            parts.append(first)
            head.pieces[0] = rest
            self._pending_bytes -= size - utf8_len(rest)
            break
        if not head.pieces:
            self._pending.popleft()
        # What is left has waited long enough: it goes as soon as this delta is acknowledged.
        self._pending_since = None if not self._pending else float("-inf")
        if self._pending_bytes < self._max_buffer:
            self._space.set()
        return head.index, "".join(parts)

    async def _send_change(self, change: _Change) -> None:
        try:
            ack = await self._send(change.event, change.payload)
        except RelayAgentError as err:
            if not change.future.done():
                change.future.set_exception(err)
            raise
        if not change.future.done():
            change.future.set_result(ack)

    async def _send_delta(self, index: int | None, text: str) -> None:
        payload: dict[str, Any] = {"id": self.id, "text": text}
        if index is not None:
            payload["index"] = index
        await self._send(_protocol.STREAM_DELTA, payload)
        self._deltas += 1

    async def _send(self, event: str, payload: dict[str, Any]) -> Mapping[str, Any]:
        attempt = 0
        while True:
            if not self._same_connection():
                raise local_error("DISCONNECTED", f"stream {self.id}: the connection it started on dropped")
            ack = await self._conn.call(event, payload, self._ack_timeout)
            if isinstance(ack, dict) and ack.get("ok") is True:
                return ack
            error = ack_error(ack.get("error") if isinstance(ack, dict) else None)
            if self.stopped:
                return {}  # the stream ends `cancelled`; what was refused no longer matters
            # A refused delta changes nothing on the hub, so sending it again keeps the text whole.
            if not error.retryable or attempt >= DELTA_RETRIES:
                raise error
            await asyncio.sleep(backoff_delay(attempt, 0.05, 2.0))
            attempt += 1


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
