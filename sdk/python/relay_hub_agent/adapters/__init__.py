"""Model-stream adapters: an LLM client's streamed chunks as the hub's message parts.

``from_openai_chat_stream(chunks)`` reads a chat-completions stream (the ``openai`` client's
``client.chat.completions.create(..., stream=True)``, or any OpenAI-compatible server: Ollama, vLLM,
LM Studio, DeepSeek) and ``from_anthropic_stream(events)`` an Anthropic messages stream
(``client.messages.create(..., stream=True)``). Both are duck-typed: a chunk may be the client's
object (attribute access) or the decoded JSON (``dict``), and neither library is imported. Both
take a sync or an async iterable and yield :data:`PartOp` values: open a part, append text to a
part, update a part. :func:`pipe_parts` applies them to a :class:`PartSink` (a streamed answer);
:func:`collect_parts` folds them into a finished ``parts`` list. The mapping tables are in
docs/python-sdk.md#model-stream-adapters.

Example::

    response = await openai.chat.completions.create(model=model, messages=messages, stream=True)
    parts = collect_parts(await to_list(from_openai_chat_stream(response)))
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, cast

from .._protocol import MessagePart
from ._anthropic import from_anthropic_stream
from ._openai import from_openai_chat_stream
from ._ops import AppendText, OpenPart, Part, PartOp, PartOps, UpdatePart

if TYPE_CHECKING:
    from ..stream import ReplyStream

__all__ = [
    "AppendText",
    "OpenPart",
    "Part",
    "PartOp",
    "PartOps",
    "PartSink",
    "StreamSink",
    "UpdatePart",
    "collect_parts",
    "from_anthropic_stream",
    "from_openai_chat_stream",
    "pipe_parts",
]


class PartSink(Protocol):
    """Where :func:`pipe_parts` writes: a streamed answer that can open, append to and update parts."""

    async def open_part(self, part: Mapping[str, Any]) -> int:
        """Appends ``part``; returns its index in the message."""
        ...

    async def append_text(self, index: int, text: str) -> None:
        """Appends ``text`` to part ``index``."""
        ...

    async def update_part(self, index: int, fields: Mapping[str, Any]) -> None:
        """Merges ``fields`` into part ``index``."""
        ...


def _apply(parts: list[Part], op: PartOp) -> None:
    if isinstance(op, OpenPart):
        if op.slot != len(parts):
            raise ValueError(f"part {op.slot} opened out of order")
        parts.append(dict(op.part))
        return
    part = parts[op.slot]
    if isinstance(op, AppendText):
        key = "inputText" if part.get("type") == "tool" else "text"
        part[key] = str(part.get(key, "")) + op.text
    else:
        part.update(op.fields)


def collect_parts(ops: Iterable[PartOp]) -> list[Part]:
    """The finished parts that ``ops`` build, in order (for a reply sent at once, or a test)."""
    parts: list[Part] = []
    for op in ops:
        _apply(parts, op)
    return parts


async def pipe_parts(ops: PartOps | AsyncIterable[PartOp] | Iterable[PartOp], sink: PartSink) -> list[Part]:
    """Applies ``ops`` to ``sink`` as they come; returns the parts as built.

    Slots become the indexes the sink returns, so the adapter's parts may follow parts the bot wrote
    itself in the same answer.
    """
    parts: list[Part] = []
    indexes: list[int] = []

    async def apply(op: PartOp) -> None:
        if isinstance(op, OpenPart):
            indexes.append(await sink.open_part(op.part))
        elif isinstance(op, AppendText):
            await sink.append_text(indexes[op.slot], op.text)
        else:
            await sink.update_part(indexes[op.slot], op.fields)
        _apply(parts, op)

    if isinstance(ops, AsyncIterable):
        async for op in ops:
            await apply(op)
    else:
        for op in ops:
            await apply(op)
    return parts


class StreamSink:
    """A :class:`ReplyStream` as a :class:`PartSink`: what ``await stream.pipe(ops)`` writes to."""

    def __init__(self, stream: ReplyStream) -> None:
        self._stream = stream

    async def open_part(self, part: Mapping[str, Any]) -> int:
        # The protocol's part types check the adapters' parts at the hub, which refuses a bad one.
        return await self._stream.part(cast(MessagePart, dict(part)))

    async def append_text(self, index: int, text: str) -> None:
        await self._stream._append(index, text)

    async def update_part(self, index: int, fields: Mapping[str, Any]) -> None:
        await self._stream._update(index, fields)
