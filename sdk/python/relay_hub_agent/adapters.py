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

import json
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, Union, cast

from ._protocol import MessagePart

if TYPE_CHECKING:
    from .stream import ReplyStream

#: A message part as the hub carries it (docs/python-sdk.md#model-stream-adapters).
Part = dict[str, Any]


@dataclass(frozen=True)
class OpenPart:
    """Opens a new part. ``slot`` numbers the parts one adapter opened, from 0 in order."""

    slot: int
    part: Mapping[str, Any]


@dataclass(frozen=True)
class AppendText:
    """Appends ``text`` to part ``slot``: a text or reasoning part's text, or a tool part's raw input JSON."""

    slot: int
    text: str


@dataclass(frozen=True)
class UpdatePart:
    """Merges ``fields`` into part ``slot`` (a tool call's input became available, or failed)."""

    slot: int
    fields: Mapping[str, Any]


#: One step of building an answer's parts.
PartOp = Union[OpenPart, AppendText, UpdatePart]


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


def _get(obj: Any, name: str) -> Any:
    """``obj[name]`` for a mapping, ``obj.name`` otherwise; ``None`` when absent."""
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _parse_input(raw: str) -> tuple[bool, Any]:
    """A tool call's arguments as JSON; an empty string is an empty object (a tool without parameters)."""
    if raw.strip() == "":
        return True, {}
    try:
        return True, json.loads(raw)
    except ValueError:
        return False, None


def _input_done(slot: int, raw: str) -> UpdatePart:
    ok, value = _parse_input(raw)
    if ok:
        return UpdatePart(slot, {"state": "input-available", "input": value})
    return UpdatePart(slot, {"state": "output-error", "errorText": f"the model's tool input is not valid JSON: {raw[:200]}"})


class _Translator(Protocol):
    def feed(self, chunk: Any) -> list[PartOp]: ...

    def close(self) -> list[PartOp]: ...


class PartOps:
    """The part operations of one model stream: iterate it (``for`` over a sync source, ``async for``
    over either). :attr:`finish_reason` is the model's reason for stopping once the stream is read."""

    def __init__(self, source: Iterable[Any] | AsyncIterable[Any], translator: _Translator) -> None:
        self._source = source
        self._translator = translator
        self._used = False

    @property
    def finish_reason(self) -> str | None:
        """``stop``, ``length``, ``tool_calls`` (OpenAI) or ``end_turn``, ``tool_use``… (Anthropic)."""
        reason = getattr(self._translator, "finish_reason", None)
        return reason if isinstance(reason, str) else None

    def _claim(self) -> None:
        if self._used:
            raise RuntimeError("a model stream can be read once")
        self._used = True

    def __iter__(self) -> Iterator[PartOp]:
        if not isinstance(self._source, Iterable):
            raise TypeError("this model stream is asynchronous: use `async for`")
        self._claim()
        for chunk in self._source:
            yield from self._translator.feed(chunk)
        yield from self._translator.close()

    async def __aiter__(self) -> AsyncIterator[PartOp]:
        self._claim()
        if isinstance(self._source, AsyncIterable):
            async for chunk in self._source:
                for op in self._translator.feed(chunk):
                    yield op
        else:
            for chunk in self._source:
                for op in self._translator.feed(chunk):
                    yield op
        for op in self._translator.close():
            yield op


@dataclass
class _OpenAITranslator:
    """Chat-completions chunks → part ops; only the first choice (``index`` 0) is read."""

    next_slot: int = 0
    #: The part text or reasoning deltas go to, while no other part came between.
    current: tuple[str, int] | None = None
    #: Tool calls by their ``index`` in the stream: [slot, raw arguments so far, input done].
    tools: dict[int, list[Any]] = field(default_factory=dict)
    finish_reason: str | None = None

    def _open(self, part: Part) -> OpenPart:
        op = OpenPart(self.next_slot, part)
        self.next_slot += 1
        return op

    def _text(self, kind: str, text: str) -> PartOp:
        if self.current is not None and self.current[0] == kind:
            return AppendText(self.current[1], text)
        op = self._open({"type": kind, "text": text})
        self.current = (kind, op.slot)
        return op

    def feed(self, chunk: Any) -> list[PartOp]:
        ops: list[PartOp] = []
        for choice in _get(chunk, "choices") or []:
            if (_get(choice, "index") or 0) != 0:
                continue
            delta = _get(choice, "delta")
            # DeepSeek, vLLM and LM Studio say reasoning_content; Ollama and OpenRouter say reasoning.
            reasoning = _get(delta, "reasoning_content") or _get(delta, "reasoning")
            if isinstance(reasoning, str) and reasoning:
                ops.append(self._text("reasoning", reasoning))
            content = _get(delta, "content")
            if isinstance(content, str) and content:
                ops.append(self._text("text", content))
            for position, call in enumerate(_get(delta, "tool_calls") or []):
                ops.extend(self._tool_delta(call, position))
            reason = _get(choice, "finish_reason")
            if isinstance(reason, str) and reason:
                self.finish_reason = reason
                ops.extend(self._finish_tools())
        return ops

    def _tool_delta(self, call: Any, position: int) -> list[PartOp]:
        index = _get(call, "index")
        key = index if isinstance(index, int) else position
        function = _get(call, "function")
        arguments = _get(function, "arguments")
        piece = arguments if isinstance(arguments, str) else ""
        entry = self.tools.get(key)
        if entry is None:
            call_id = _get(call, "id")
            name = _get(function, "name")
            part: Part = {
                "type": "tool",
                "toolCallId": call_id if isinstance(call_id, str) and call_id else f"call_{key}",
                "toolName": name if isinstance(name, str) and name else "unknown",
                "state": "input-streaming",
                "inputText": piece,
            }
            op = self._open(part)
            self.tools[key] = [op.slot, piece, False]
            self.current = None
            return [op]
        if not piece or entry[2]:
            return []
        entry[1] += piece
        return [AppendText(entry[0], piece)]

    def _finish_tools(self) -> list[PartOp]:
        ops: list[PartOp] = []
        for entry in self.tools.values():
            if not entry[2]:
                entry[2] = True
                ops.append(_input_done(entry[0], entry[1]))
        return ops

    def close(self) -> list[PartOp]:
        # A server that ends without a finish_reason still had complete tool calls.
        return self._finish_tools()


@dataclass
class _AnthropicTranslator:
    """Anthropic messages stream events → part ops, one part per content block."""

    next_slot: int = 0
    #: Content blocks by their ``index``: [slot, kind, raw tool input so far, input done].
    blocks: dict[int, list[Any]] = field(default_factory=dict)
    finish_reason: str | None = None

    def feed(self, event: Any) -> list[PartOp]:
        kind = _get(event, "type")
        if kind == "content_block_start":
            return self._start(_get(event, "index"), _get(event, "content_block"))
        if kind == "content_block_delta":
            return self._delta(_get(event, "index"), _get(event, "delta"))
        if kind == "content_block_stop":
            block = self.blocks.get(_get(event, "index"))
            if block is not None and block[1] == "tool" and block[3] is False:
                block[3] = True
                return [_input_done(block[0], block[2])]
            return []
        if kind == "message_delta":
            reason = _get(_get(event, "delta"), "stop_reason")
            if isinstance(reason, str):
                self.finish_reason = reason
        # message_start, message_stop, ping, and the Anthropic client's own derived events (text,
        # thinking, input_json, citation, signature), which repeat the raw deltas: nothing to add.
        return []

    def _start(self, index: Any, block: Any) -> list[PartOp]:
        if not isinstance(index, int):
            return []
        block_type = _get(block, "type")
        part: Part
        if block_type == "text":
            text = _get(block, "text")
            part = {"type": "text", "text": text if isinstance(text, str) else ""}
            kind = "text"
        elif block_type == "thinking":
            text = _get(block, "thinking")
            part = {"type": "reasoning", "text": text if isinstance(text, str) else ""}
            kind = "reasoning"
        elif block_type in ("tool_use", "server_tool_use"):
            call_id, name = _get(block, "id"), _get(block, "name")
            part = {
                "type": "tool",
                "toolCallId": call_id if isinstance(call_id, str) and call_id else f"toolu_{index}",
                "toolName": name if isinstance(name, str) and name else "unknown",
                "state": "input-streaming",
                "inputText": "",
            }
            kind = "tool"
        else:
            # redacted_thinking (encrypted, nothing to show) and server tool results: no part.
            return []
        slot = self.next_slot
        self.next_slot += 1
        self.blocks[index] = [slot, kind, "", False]
        return [OpenPart(slot, part)]

    def _delta(self, index: Any, delta: Any) -> list[PartOp]:
        block = self.blocks.get(index) if isinstance(index, int) else None
        if block is None:
            return []
        delta_type = _get(delta, "type")
        if delta_type == "text_delta":
            piece = _get(delta, "text")
        elif delta_type == "thinking_delta":
            piece = _get(delta, "thinking")
        elif delta_type == "input_json_delta":
            piece = _get(delta, "partial_json")
            if isinstance(piece, str) and piece:
                block[2] += piece
        elif delta_type == "citations_delta":
            return self._citation(_get(delta, "citation"))
        else:
            return []  # signature_delta: the thinking block's signature, for the API, not a reader
        if not isinstance(piece, str) or not piece:
            return []
        return [AppendText(block[0], piece)]

    def _citation(self, citation: Any) -> list[PartOp]:
        url = _get(citation, "url")
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            return []  # document citations carry no URL the hub could show
        slot = self.next_slot
        self.next_slot += 1
        part: Part = {"type": "source", "sourceId": f"src_{slot}", "url": url}
        title = _get(citation, "title")
        if isinstance(title, str) and title:
            part["title"] = title
        return [OpenPart(slot, part)]

    def close(self) -> list[PartOp]:
        ops: list[PartOp] = []
        for block in self.blocks.values():
            if block[1] == "tool" and block[3] is False:
                block[3] = True
                ops.append(_input_done(block[0], block[2]))
        return ops


def from_openai_chat_stream(chunks: Iterable[Any] | AsyncIterable[Any]) -> PartOps:
    """The part operations of an OpenAI chat-completions stream.

    ``delta.content`` becomes a ``text`` part, ``delta.reasoning_content`` (or ``delta.reasoning``) a
    ``reasoning`` part, and each ``delta.tool_calls`` entry, by its ``index``, a ``tool`` part whose raw
    input grows with the argument deltas and becomes ``input-available`` (parsed JSON) when the choice
    finishes, or ``output-error`` when the arguments are not JSON.
    """
    return PartOps(chunks, _OpenAITranslator())


def from_anthropic_stream(events: Iterable[Any] | AsyncIterable[Any]) -> PartOps:
    """The part operations of an Anthropic messages stream (raw events).

    A ``text`` block becomes a ``text`` part, a ``thinking`` block a ``reasoning`` part, a ``tool_use``
    block a ``tool`` part whose raw input grows with ``input_json_delta`` and becomes
    ``input-available`` at ``content_block_stop``; a web citation becomes a ``source`` part.
    """
    return PartOps(events, _AnthropicTranslator())


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
