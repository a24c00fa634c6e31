"""Handles of the parts of a streamed answer that grow or change after they are opened."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .errors import RelayAgentError

if TYPE_CHECKING:
    from .stream import ReplyStream
    from .types import Approval

_UNSET: Any = object()


class PartWriter:
    """A part that grows by text: a reasoning part (:meth:`ReplyStream.reasoning`).

    Attributes:
        index: The part's index in the message.
    """

    def __init__(self, stream: ReplyStream, index: int) -> None:
        self._stream = stream
        self.index = index

    async def write(self, text: str) -> None:
        """Appends ``text``; coalesced and held back like :meth:`ReplyStream.write`."""
        await self._stream._append(self.index, text)


class ToolCall:
    """A tool call of a streamed answer (:meth:`ReplyStream.tool`).

    Its input streams in as the model writes it, then becomes available; the bot may ask the user
    to approve the call; the call ends with an output, an error, or denied. Each step moves the
    part's ``state`` forward on every tab of the user.

    Attributes:
        index: The part's index in the message.
        tool_call_id: The call's id (the model's, or a fresh one).
        approval_id: The approval id once :meth:`request_approval` was called.

    Example::

        call = s.tool("refund", title="Refund order 42")
        await call.write_input('{"order": 42}')
        await call.input_available()  # input parsed from what was written
        await call.request_approval()
        decision = await call.decision()
        if decision.approved:
            await call.output(await refund(42))
        else:
            await call.denied()
    """

    def __init__(self, stream: ReplyStream, index: int, tool_call_id: str) -> None:
        self._stream = stream
        self._raw: list[str] = []
        self._decided: asyncio.Future[Approval] | None = None
        self.index = index
        self.tool_call_id = tool_call_id
        self.approval_id: str | None = None

    async def write_input(self, json_text: str) -> None:
        """Appends a piece of the input's JSON text as the model streams it (``input-streaming``)."""
        self._raw.append(json_text)
        await self._stream._append(self.index, json_text)

    async def input_available(self, input: Any = _UNSET) -> None:
        """The input is complete (``input-available``): ``input``, or the JSON written so far, parsed.

        Raises :class:`RelayAgentError` ``INVALID_PAYLOAD`` when what was written is not JSON.
        """
        if input is _UNSET:
            raw = "".join(self._raw)
            try:
                input = json.loads(raw) if raw else {}
            except ValueError:
                raise RelayAgentError("INVALID_PAYLOAD", f"the input of tool call {self.tool_call_id} is not JSON", False) from None
        await self._set({"state": "input-available", "input": input})

    async def request_approval(self) -> str:
        """Asks the user to approve the call (``approval-requested``); returns the approval id.

        Every tab shows the request and any of them may decide. The decision comes to
        :meth:`RelayAgent.on_approval` (also after the stream ended, or to another runtime after a
        restart) and to :meth:`decision`.
        """
        if self.approval_id is None:
            self.approval_id = str(uuid.uuid4())
            self._decided = self._stream._decision(self.approval_id)
        await self._set({"state": "approval-requested", "approval": {"id": self.approval_id}})
        return self.approval_id

    async def decision(self) -> Approval:
        """The user's decision, once this runtime receives it; call :meth:`request_approval` first."""
        if self._decided is None:
            raise RelayAgentError("INVALID_PAYLOAD", "no approval was requested for this tool call", False)
        return await asyncio.shield(self._decided)

    async def output(self, output: Any) -> None:
        """The call returned ``output`` (any JSON; ``output-available``)."""
        await self._set({"state": "output-available", "output": output})

    async def error(self, error_text: str) -> None:
        """The call failed (``output-error``)."""
        await self._set({"state": "output-error", "errorText": error_text})

    async def denied(self) -> None:
        """The user said no and the call did not run (``output-denied``)."""
        await self._set({"state": "output-denied"})

    async def _set(self, fields: Mapping[str, Any]) -> None:
        await self._stream._update(self.index, fields)
