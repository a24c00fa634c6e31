"""Anthropic messages stream events as part operations (docs/python-sdk.md#model-stream-adapters)."""

from __future__ import annotations

from collections.abc import AsyncIterable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ._ops import AppendText, OpenPart, Part, PartOp, PartOps, get_field, input_done


@dataclass
class AnthropicTranslator:
    """Anthropic messages stream events → part ops, one part per content block."""

    next_slot: int = 0
    #: Content blocks by their ``index``: [slot, kind, raw tool input so far, input done].
    blocks: dict[int, list[Any]] = field(default_factory=dict)
    finish_reason: str | None = None

    def feed(self, event: Any) -> list[PartOp]:
        kind = get_field(event, "type")
        if kind == "content_block_start":
            return self._start(get_field(event, "index"), get_field(event, "content_block"))
        if kind == "content_block_delta":
            return self._delta(get_field(event, "index"), get_field(event, "delta"))
        if kind == "content_block_stop":
            block = self.blocks.get(get_field(event, "index"))
            if block is not None and block[1] == "tool" and block[3] is False:
                block[3] = True
                return [input_done(block[0], block[2])]
            return []
        if kind == "message_delta":
            reason = get_field(get_field(event, "delta"), "stop_reason")
            if isinstance(reason, str):
                self.finish_reason = reason
        # message_start, message_stop, ping, and the Anthropic client's own derived events (text,
        # thinking, input_json, citation, signature), which repeat the raw deltas: nothing to add.
        return []

    def _start(self, index: Any, block: Any) -> list[PartOp]:
        if not isinstance(index, int):
            return []
        block_type = get_field(block, "type")
        part: Part
        if block_type == "text":
            text = get_field(block, "text")
            part = {"type": "text", "text": text if isinstance(text, str) else ""}
            kind = "text"
        elif block_type == "thinking":
            text = get_field(block, "thinking")
            part = {"type": "reasoning", "text": text if isinstance(text, str) else ""}
            kind = "reasoning"
        elif block_type in ("tool_use", "server_tool_use"):
            call_id, name = get_field(block, "id"), get_field(block, "name")
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
        delta_type = get_field(delta, "type")
        if delta_type == "text_delta":
            piece = get_field(delta, "text")
        elif delta_type == "thinking_delta":
            piece = get_field(delta, "thinking")
        elif delta_type == "input_json_delta":
            piece = get_field(delta, "partial_json")
            if isinstance(piece, str) and piece:
                block[2] += piece
        elif delta_type == "citations_delta":
            return self._citation(get_field(delta, "citation"))
        else:
            return []  # signature_delta: the thinking block's signature, for the API, not a reader
        if not isinstance(piece, str) or not piece:
            return []
        return [AppendText(block[0], piece)]

    def _citation(self, citation: Any) -> list[PartOp]:
        url = get_field(citation, "url")
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            return []  # document citations carry no URL the hub could show
        slot = self.next_slot
        self.next_slot += 1
        part: Part = {"type": "source", "sourceId": f"src_{slot}", "url": url}
        title = get_field(citation, "title")
        if isinstance(title, str) and title:
            part["title"] = title
        return [OpenPart(slot, part)]

    def close(self) -> list[PartOp]:
        ops: list[PartOp] = []
        for block in self.blocks.values():
            if block[1] == "tool" and block[3] is False:
                block[3] = True
                ops.append(input_done(block[0], block[2]))
        return ops


def from_anthropic_stream(events: Iterable[Any] | AsyncIterable[Any]) -> PartOps:
    """The part operations of an Anthropic messages stream (raw events).

    A ``text`` block becomes a ``text`` part, a ``thinking`` block a ``reasoning`` part, a ``tool_use``
    block a ``tool`` part whose raw input grows with ``input_json_delta`` and becomes
    ``input-available`` at ``content_block_stop``; a web citation becomes a ``source`` part.
    """
    return PartOps(events, AnthropicTranslator())
