"""What a streamed answer wrote and the hub has not acknowledged yet, on its way to the hub: text
coalesced into deltas, parts and updates in the order written, within a byte bound, one event at a
time, retried when refused with a retryable code."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import _protocol
from ._connection import backoff_delay
from .errors import RelayAgentError, ack_error, local_error

if TYPE_CHECKING:
    from ._connection import Connection

#: How often a delta refused with a retryable code (RATE_LIMITED, SERVER_UNAVAILABLE) is sent again.
DELTA_RETRIES = 6


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


class Outbox:
    """The outgoing side of one :class:`ReplyStream` (whose docstring tells the coalescing and the
    bound); the stream checks that it may still write before it queues anything here."""

    def __init__(
        self,
        conn: Connection,
        *,
        stop_event: asyncio.Event,
        ack_timeout: float,
        coalesce_ms: float,
        max_buffer_bytes: int,
        max_delta_bytes: int,
    ) -> None:
        self._conn = conn
        #: The stream's: once the user stopped the answer, nothing more is sent.
        self._stop_event = stop_event
        self._ack_timeout = ack_timeout
        self._coalesce = coalesce_ms / 1000
        self._max_buffer = max(1, max_buffer_bytes)
        self._max_delta = max(4, max_delta_bytes)
        self._stream_id: str | None = None
        self._generation = 0
        #: Why sending stopped: a refused event, or a part the hub put at another index. Once set,
        #: nothing more is sent and what waits fails with it.
        self.failure: RelayAgentError | None = None
        #: How many ``stream:delta`` events the hub accepted.
        self.deltas = 0
        self._pending: deque[_Text | _Change] = deque()
        #: The type of each part, as queued: where text written without an index lands.
        self._types: list[str] = []
        self._pending_bytes = 0
        self._pending_since: float | None = None
        self._space = asyncio.Event()
        self._space.set()
        self._wake = asyncio.Event()
        self._flusher: asyncio.Task[None] | None = None
        self._closing = False

    @property
    def buffered_bytes(self) -> int:
        """UTF-8 bytes written but not yet handed to the hub."""
        return self._pending_bytes

    @property
    def full(self) -> bool:
        """Whether ``max_buffer_bytes`` wait: a writer waits for :meth:`space` then."""
        return self._pending_bytes >= self._max_buffer

    def open(self, stream_id: str) -> None:
        """The hub started the stream on the connection as it is now; its events go there only."""
        self._stream_id = stream_id
        self._generation = self._conn.generation

    def same_connection(self) -> bool:
        """Whether the connection the stream started on is still up."""
        return self._conn.connected and self._conn.generation == self._generation

    def add_text(self, index: int | None, piece: str) -> None:
        """Queues a non-empty ``piece`` for part ``index`` (``None``: the text part at the end)."""
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
        self._start_flusher()

    async def space(self) -> None:
        """Waits until a delta made room below ``max_buffer_bytes``, or sending stopped."""
        self._space.clear()
        await self._space.wait()

    def add_part(self, part: _protocol.MessagePart) -> tuple[int, asyncio.Future[Mapping[str, Any]]]:
        """Queues a ``stream:part``: the part's index, and a future of the hub's ack."""
        future = self._queue(_protocol.STREAM_PART, {"id": self._stream_id, "part": dict(part)})
        self._types.append(part["type"])
        return len(self._types) - 1, future

    def update(self, index: int, fields: Mapping[str, Any]) -> asyncio.Future[Mapping[str, Any]]:
        """Queues a ``stream:update`` of part ``index``; the future is its ack."""
        return self._queue(_protocol.STREAM_UPDATE, {"id": self._stream_id, "index": index, "part": dict(fields)})

    def drop(self, error: BaseException) -> None:
        """The user stopped the answer: what waits fails with ``error``, and a waiting writer wakes."""
        self._drop_pending(error)
        self._space.set()
        self._wake.set()

    def close(self) -> None:
        """Nothing more will be written: what waits goes without waiting out the coalescing window."""
        self._closing = True

    async def drain(self) -> None:
        """Waits until everything queued was sent, or sending stopped (see :attr:`failure`)."""
        self._wake.set()
        if self._flusher is not None:
            await asyncio.shield(self._flusher)

    def _queue(self, event: str, payload: dict[str, Any]) -> asyncio.Future[Mapping[str, Any]]:
        future: asyncio.Future[Mapping[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending.append(_Change(event, payload, future))
        # What was written before goes now, so the change is not held behind the coalescing window.
        self._pending_since = float("-inf")
        self._wake.set()
        self._start_flusher()
        return future

    def _start_flusher(self) -> None:
        if self._flusher is None:
            self._flusher = asyncio.create_task(self._flush())

    async def _flush(self) -> None:
        """Sends what is buffered as deltas, one at a time, each once the previous was acknowledged."""
        loop = asyncio.get_running_loop()
        try:
            while self._pending and not self._stop_event.is_set() and self.failure is None:
                since = self._pending_since if self._pending_since is not None else loop.time()
                wait = since + self._coalesce - loop.time()
                if wait > 0 and not self._closing:
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
            self.failure = err
        finally:
            self._flusher = None
            if self.failure is not None:
                self._drop_pending(self.failure)
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
        payload: dict[str, Any] = {"id": self._stream_id, "text": text}
        if index is not None:
            payload["index"] = index
        await self._send(_protocol.STREAM_DELTA, payload)
        self.deltas += 1

    async def _send(self, event: str, payload: dict[str, Any]) -> Mapping[str, Any]:
        attempt = 0
        while True:
            if not self.same_connection():
                raise local_error("DISCONNECTED", f"stream {self._stream_id}: the connection it started on dropped")
            # `call`, not `request`: only the hub's refusals are retried here, never a local
            # ACK_TIMEOUT or DISCONNECTED, after which the hub may have the delta already.
            ack = await self._conn.call(event, payload, self._ack_timeout)
            if isinstance(ack, dict) and ack.get("ok") is True:
                return ack
            error = ack_error(ack.get("error") if isinstance(ack, dict) else None)
            if self._stop_event.is_set():
                return {}  # the stream ends `cancelled`; what was refused no longer matters
            # A refused delta changes nothing on the hub, so sending it again keeps the text whole.
            if not error.retryable or attempt >= DELTA_RETRIES:
                raise error
            await asyncio.sleep(backoff_delay(attempt, 0.05, 2.0))
            attempt += 1
