"""A streamed answer: start, coalesced deltas with backpressure, end; stopped by the user."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

from . import _wire
from ._connection import backoff_delay
from .errors import RelayAgentError, StreamStopped, ack_error, local_error
from .types import Message, StreamEnd, StreamStatus

if TYPE_CHECKING:
    from ._connection import Connection

#: How often a delta refused with a retryable code (RATE_LIMITED, SERVER_UNAVAILABLE) is sent again.
DELTA_RETRIES = 6


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
        self._pending: deque[str] = deque()
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
            ack = await self._conn.call(_wire.STREAM_START, payload, self._ack_timeout)
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
        if not isinstance(piece, str):
            raise TypeError(f"write() takes a str, not {type(piece).__name__}")
        self._check_writable()
        if not piece:
            return
        self._pending.append(piece)
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
        self, text: str | None = None, data: Mapping[str, Any] | None = None, status: StreamStatus = "complete"
    ) -> StreamEnd:
        """Sends what is buffered, then ends the stream (``stream:end``); returns the hub's receipt.

        ``text``, when given, replaces the accumulated text (a bot may correct itself). Once
        stopped, the stream has ended ``cancelled`` whatever ``status`` says. Calling it again
        returns the same receipt.
        """
        if self.id is None:
            raise RuntimeError("the stream was not started")
        self._schedule_end(text, data, status)
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
        self._pending.clear()
        self._pending_bytes = 0
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

    def _schedule_end(self, text: str | None, data: Mapping[str, Any] | None, status: StreamStatus) -> None:
        if self._end_task is None:
            if self.stopped:
                text, data, status = None, None, "cancelled"
            self._end_task = asyncio.create_task(self._finish(text, data, status))

    async def _finish(self, text: str | None, data: Mapping[str, Any] | None, status: StreamStatus) -> StreamEnd:
        try:
            self._wake.set()
            if self._flusher is not None:
                await asyncio.shield(self._flusher)
            failure = self._failure
            if failure is not None and status != "cancelled":
                status = "error"
            if failure is not None and (failure.code == _wire.STREAM_NOT_FOUND or not self._same_connection()):
                raise failure  # the hub has ended the stream already
            if not self._same_connection():
                raise local_error("DISCONNECTED", f"stream {self.id}: the connection it started on dropped")
            payload: dict[str, Any] = {"id": self.id, "status": status}
            if text is not None:
                payload["text"] = text
            if data is not None:
                payload["data"] = dict(data)
            ack = await self._conn.call(_wire.STREAM_END, payload, self._ack_timeout)
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
                await self._send_delta(self._take())
        except RelayAgentError as err:
            self._failure = err
        finally:
            self._flusher = None
            self._space.set()

    def _take(self) -> str:
        """Up to ``max_delta_bytes`` of the buffer, as one piece."""
        parts: list[str] = []
        budget = self._max_delta
        while self._pending and budget > 0:
            piece = self._pending[0]
            size = utf8_len(piece)
            if size <= budget:
                self._pending.popleft()
                parts.append(piece)
                budget -= size
                self._pending_bytes -= size
                continue
            head, rest = split_utf8(piece, budget)
            if not head:
                break
            parts.append(head)
            self._pending[0] = rest
            self._pending_bytes -= size - utf8_len(rest)
            break
        # What is left has waited long enough: it goes as soon as this delta is acknowledged.
        self._pending_since = None if not self._pending else float("-inf")
        if self._pending_bytes < self._max_buffer:
            self._space.set()
        return "".join(parts)

    async def _send_delta(self, text: str) -> None:
        attempt = 0
        while True:
            if not self._same_connection():
                raise local_error("DISCONNECTED", f"stream {self.id}: the connection it started on dropped")
            ack = await self._conn.call(_wire.STREAM_DELTA, {"id": self.id, "text": text}, self._ack_timeout)
            if isinstance(ack, dict) and ack.get("ok") is True:
                self._deltas += 1
                return
            error = ack_error(ack.get("error") if isinstance(ack, dict) else None)
            if self.stopped:
                return  # the stream ends `cancelled`; what was refused no longer matters
            # A refused delta changes nothing on the hub, so sending it again keeps the text whole.
            if not error.retryable or attempt >= DELTA_RETRIES:
                raise error
            await asyncio.sleep(backoff_delay(attempt, 0.05, 2.0))
            attempt += 1


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
