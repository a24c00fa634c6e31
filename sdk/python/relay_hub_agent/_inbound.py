"""What the hub sends a runtime: messages (acked, deduplicated, handed to the handler in a task of
their own), stops (routed to the message and the streams they concern), feedback, and decisions on
approvals (deduplicated, acked once their handler finished)."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

from . import _protocol
from ._connection import EventHandler
from .errors import StreamStopped
from .stream import ReplyStream
from .types import Approval, ControlChange, Feedback, Message

MessageHandler = Callable[[Message], Awaitable[None]]
FeedbackHandler = Callable[[Feedback], Awaitable[None]]
ApprovalHandler = Callable[[Approval], Awaitable[None]]
ControlHandler = Callable[[ControlChange], Awaitable[None]]

#: The message whose handler is running in this task, so a stream it starts is tied to it.
current_message: ContextVar[Message | None] = ContextVar("relay_hub_agent_message", default=None)


class RecentIds:
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


class Inbound:
    """Dispatches H→A events to the agent's handlers and keeps track of what is running."""

    def __init__(
        self, *, dedupe_size: int, cancel_on_stop: bool, report: Callable[[BaseException], None], logger: logging.Logger
    ) -> None:
        self.handled = RecentIds(dedupe_size)
        self.message_handler: MessageHandler | None = None
        self.feedback_handler: FeedbackHandler | None = None
        self.approval_handler: ApprovalHandler | None = None
        #: Approvals whose handler runs: a redelivery is acked when it finishes, not before.
        self._deciding: dict[str, asyncio.Task[Any]] = {}
        #: Decisions awaited by a tool call of this runtime (:meth:`ToolCall.decision`).
        self._awaited: dict[str, asyncio.Future[Approval]] = {}
        self.control_handler: ControlHandler | None = None
        self._cancel_on_stop = cancel_on_stop
        self._report = report
        self._log = logger
        self._running: dict[str, tuple[Message, asyncio.Task[None]]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._streams: set[ReplyStream] = set()
        self._streams_by_id: dict[str, ReplyStream] = {}

    def handlers(self) -> dict[str, EventHandler]:
        return {
            _protocol.MESSAGE: self._on_message,
            _protocol.STOP: self._on_stop,
            _protocol.FEEDBACK: self._on_feedback,
            _protocol.APPROVAL: self._on_approval,
            _protocol.CONVERSATION_CONTROL: self._on_control,
        }

    def await_decision(self, approval_id: str) -> asyncio.Future[Approval]:
        """The decision on ``approval_id`` as this runtime receives it."""
        future = self._awaited.get(approval_id)
        if future is None:
            future = self._awaited[approval_id] = asyncio.get_running_loop().create_future()
        return future

    def spawn(self, work: Awaitable[Any], message: Message | None = None) -> asyncio.Task[Any]:
        """Runs ``work`` in a task of its own, kept until it ends (and cancelled by :meth:`cancel_all`)."""
        task: asyncio.Task[Any] = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if message is not None:
            message_id = message.id
            self._running[message_id] = (message, task)
            task.add_done_callback(lambda _: self._running.pop(message_id, None))
        return task

    async def cancel_all(self) -> None:
        """Cancels the handlers still running (but not the task calling this) and waits for them."""
        current = asyncio.current_task()
        running = [t for t in self._tasks if t is not current and not t.done()]
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)

    def stream_opened(self, stream: ReplyStream) -> None:
        self._streams.add(stream)
        if stream.id is not None:
            self._streams_by_id[stream.id] = stream

    def stream_closed(self, stream: ReplyStream) -> None:
        self._streams.discard(stream)
        if stream.id is not None:
            self._streams_by_id.pop(stream.id, None)

    async def _on_message(self, payload: Any) -> dict[str, bool]:
        message = Message.from_wire(payload)
        if message is None:
            self._log.warning("dropped a malformed message from the hub: %r", payload)
        elif self.handled.add(message.id) and self.message_handler is not None:
            self.spawn(self._run(self.message_handler, message), message)
        # Acked on receipt whatever the handler does: the hub then acks the client.
        return {"ok": True}

    async def _on_stop(self, payload: Any) -> dict[str, bool]:
        if not isinstance(payload, dict):
            return {"ok": True}
        stream_id, message_id = payload.get("id"), payload.get("messageId")
        stream = self._streams_by_id.get(stream_id) if isinstance(stream_id, str) else None
        if stream is not None:
            stream._stop()
            message = stream.message
            if message is None and stream.reply_to in self._running:
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

    async def _on_feedback(self, payload: Any) -> dict[str, bool]:
        feedback = Feedback.from_wire(payload)
        if feedback is None:
            self._log.warning("dropped malformed feedback from the hub: %r", payload)
        elif self.feedback_handler is not None:
            self.spawn(self._run(self.feedback_handler, feedback))
        return {"ok": True}

    async def _on_approval(self, payload: Any) -> dict[str, bool]:
        approval = Approval.from_wire(payload)
        if approval is None:
            self._log.warning("dropped a malformed approval from the hub: %r", payload)
            return {"ok": True}
        running = self._deciding.get(approval.id)
        if running is None and self.handled.add(approval.id):
            waiter = self._awaited.pop(approval.id, None)
            if waiter is not None and not waiter.done():
                waiter.set_result(approval)
            if self.approval_handler is not None:
                approval_id = approval.id
                running = self._deciding[approval_id] = self.spawn(self._run(self.approval_handler, approval))
                running.add_done_callback(lambda _: self._deciding.pop(approval_id, None))
        if running is not None:
            # Acked once the handler finished: a runtime that dies meanwhile gets it again.
            await asyncio.wait({running})
        return {"ok": True}

    async def _on_control(self, payload: Any) -> dict[str, bool]:
        change = ControlChange.from_wire(payload)
        if change is None:
            self._log.warning("dropped a malformed conversation:control from the hub: %r", payload)
        elif self.control_handler is not None:
            self.spawn(self._run(self.control_handler, change))
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

    async def _run(self, handler: Callable[[Any], Awaitable[None] | None], item: Message | Feedback | Approval | ControlChange) -> None:
        if isinstance(item, Message):
            current_message.set(item)
        try:
            result = handler(item)
            if inspect.isawaitable(result):  # a plain function works too
                await result
        except asyncio.CancelledError:
            # A handler cancelled because its user stopped the answer ends normally.
            if not (isinstance(item, Message) and item.stopped):
                raise
        except StreamStopped:
            pass
        except Exception as err:
            about = item.client_id if isinstance(item, ControlChange) else item.id
            self._log.exception("the %s handler raised for %s", type(item).__name__.lower(), about)
            self._report(err)
