"""OpenAI chat-completions chunks as part operations (docs/python-sdk.md#model-stream-adapters)."""

from __future__ import annotations

from collections.abc import AsyncIterable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ._ops import AppendText, OpenPart, Part, PartOp, PartOps, get_field, input_done


@dataclass
class OpenAITranslator:
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
        for choice in get_field(chunk, "choices") or []:
            if (get_field(choice, "index") or 0) != 0:
                continue
            delta = get_field(choice, "delta")
            # DeepSeek, vLLM and LM Studio say reasoning_content; Ollama and OpenRouter say reasoning.
            reasoning = get_field(delta, "reasoning_content") or get_field(delta, "reasoning")
            if isinstance(reasoning, str) and reasoning:
                ops.append(self._text("reasoning", reasoning))
            content = get_field(delta, "content")
            if isinstance(content, str) and content:
                ops.append(self._text("text", content))
            for position, call in enumerate(get_field(delta, "tool_calls") or []):
                ops.extend(self._tool_delta(call, position))
            reason = get_field(choice, "finish_reason")
            if isinstance(reason, str) and reason:
                self.finish_reason = reason
                ops.extend(self._finish_tools())
        return ops

    def _tool_delta(self, call: Any, position: int) -> list[PartOp]:
        index = get_field(call, "index")
        key = index if isinstance(index, int) else position
        function = get_field(call, "function")
        arguments = get_field(function, "arguments")
        piece = arguments if isinstance(arguments, str) else ""
        entry = self.tools.get(key)
        if entry is None:
            call_id = get_field(call, "id")
            name = get_field(function, "name")
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
                ops.append(input_done(entry[0], entry[1]))
        return ops

    def close(self) -> list[PartOp]:
        # A server that ends without a finish_reason still had complete tool calls.
        return self._finish_tools()


def from_openai_chat_stream(chunks: Iterable[Any] | AsyncIterable[Any]) -> PartOps:
    """The part operations of an OpenAI chat-completions stream.

    ``delta.content`` becomes a ``text`` part, ``delta.reasoning_content`` (or ``delta.reasoning``) a
    ``reasoning`` part, and each ``delta.tool_calls`` entry, by its ``index``, a ``tool`` part whose raw
    input grows with the argument deltas and becomes ``input-available`` (parsed JSON) when the choice
    finishes, or ``output-error`` when the arguments are not JSON.
    """
    return PartOps(chunks, OpenAITranslator())
