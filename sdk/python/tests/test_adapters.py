"""The model-stream adapters against recorded OpenAI and Anthropic streams (test/fixtures/model-streams)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from model_streams import aiter_of, anthropic_events, as_objects, openai_chunks

from relay_hub_agent import (
    AppendText,
    OpenPart,
    PartOp,
    UpdatePart,
    collect_parts,
    from_anthropic_stream,
    from_openai_chat_stream,
    pipe_parts,
)

TEXT = "Relay-hub keeps every tab in step: the answer streams to all of them, and a reload picks up where it left off."
REASONING = (
    'The user asks how many r\'s are in "strawberry". s-t-r-a-w-b-e-r-r-y: positions 3, 8, 9. That is 3.'
)


def test_openai_text_is_one_text_part() -> None:
    ops = from_openai_chat_stream(openai_chunks("text"))
    assert collect_parts(ops) == [{"type": "text", "text": TEXT}]
    assert ops.finish_reason == "stop"


async def test_openai_reasoning_content_then_content_as_client_objects() -> None:
    ops = from_openai_chat_stream(aiter_of(as_objects(openai_chunks("reasoning"))))
    collected = [op async for op in ops]
    assert collect_parts(collected) == [
        {"type": "reasoning", "text": REASONING},
        {"type": "text", "text": 'There are **3** r\'s in "strawberry".'},
    ]
    # Each delta after the first of its part is an append: the parts grow as the model writes.
    assert [type(op).__name__ for op in collected].count("OpenPart") == 2
    assert sum(isinstance(op, AppendText) for op in collected) == 34 - 1 + 11 - 1


def test_openai_tool_calls_by_index_stream_their_input_then_make_it_available() -> None:
    ops = list(from_openai_chat_stream(openai_chunks("tool")))
    assert ops[0] == OpenPart(
        0,
        {
            "type": "tool",
            "toolCallId": "call_Qx8mJ2rT5vLp9wNc3KdF6hYb",
            "toolName": "get_weather",
            "state": "input-streaming",
            "inputText": "",
        },
    )
    # The argument deltas are the raw JSON as the model wrote it, appended to the right call.
    assert "".join(op.text for op in ops if isinstance(op, AppendText) and op.slot == 0) == '{"city":"Paris","unit":"celsius"}'
    assert "".join(op.text for op in ops if isinstance(op, AppendText) and op.slot == 1) == '{"city":"Lyon","unit":"celsius"}'
    assert ops[-2:] == [
        UpdatePart(0, {"state": "input-available", "input": {"city": "Paris", "unit": "celsius"}}),
        UpdatePart(1, {"state": "input-available", "input": {"city": "Lyon", "unit": "celsius"}}),
    ]
    parts = collect_parts(ops)
    assert [(p["toolCallId"], p["state"], p["input"]) for p in parts] == [
        ("call_Qx8mJ2rT5vLp9wNc3KdF6hYb", "input-available", {"city": "Paris", "unit": "celsius"}),
        ("call_7HbZk1Vw4sRt0yMe9PqL2nXa", "input-available", {"city": "Lyon", "unit": "celsius"}),
    ]


def test_openai_tool_arguments_that_are_not_json_end_the_call_in_error() -> None:
    chunks = [
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "f", "arguments": '{"a":'}}]}}]},
        # a server that stops without a finish_reason: the calls still end
    ]
    ops = list(from_openai_chat_stream(chunks))
    assert ops[-1] == UpdatePart(0, {"state": "output-error", "errorText": 'the model\'s tool input is not valid JSON: {"a":'})


def test_openai_other_choices_and_empty_deltas_add_nothing() -> None:
    chunks: list[dict[str, Any]] = [
        {"choices": [{"index": 1, "delta": {"content": "the second choice"}}]},
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "", "reasoning_content": None}}]},
        {"choices": [], "usage": {"total_tokens": 3}},
        {"choices": [{"index": 0, "delta": {"content": "only"}, "finish_reason": "length"}]},
    ]
    ops = from_openai_chat_stream(chunks)
    assert collect_parts(ops) == [{"type": "text", "text": "only"}]
    assert ops.finish_reason == "length"


def test_openai_ollama_reasoning_field_is_read_too() -> None:
    chunks = [{"choices": [{"index": 0, "delta": {"reasoning": "hmm"}}]}, {"choices": [{"index": 0, "delta": {"content": "ok"}}]}]
    assert collect_parts(from_openai_chat_stream(chunks)) == [{"type": "reasoning", "text": "hmm"}, {"type": "text", "text": "ok"}]


async def test_anthropic_thinking_text_and_tool_use() -> None:
    ops = from_anthropic_stream(aiter_of(as_objects(anthropic_events("thinking-tool"))))
    collected = [op async for op in ops]
    assert collect_parts(collected) == [
        {
            "type": "reasoning",
            "text": "The user wants the weather in Paris. I should call get_weather with city Paris and celsius, since they are in Europe.",
        },
        {"type": "text", "text": "I'll check the current weather in Paris for you."},
        {
            "type": "tool",
            "toolCallId": "toolu_01A9s8dF7gH6jK5lZ4xC3vBn",
            "toolName": "get_weather",
            "state": "input-available",
            "inputText": '{"city": "Paris", "unit": "celsius"}',
            "input": {"city": "Paris", "unit": "celsius"},
        },
    ]
    # The tool's input became available at its block's stop, before the message ended.
    assert collected[-1] == UpdatePart(2, {"state": "input-available", "input": {"city": "Paris", "unit": "celsius"}})
    assert ops.finish_reason == "tool_use"


def test_anthropic_tool_without_input_gets_an_empty_object_and_pings_add_nothing() -> None:
    parts = collect_parts(from_anthropic_stream(anthropic_events("text-empty-tool")))
    assert parts[0] == {"type": "text", "text": "Hello! How can I help you today?"}
    assert parts[1]["state"] == "input-available" and parts[1]["input"] == {}


def test_anthropic_client_derived_events_are_not_counted_twice() -> None:
    # The Anthropic client's MessageStream adds `text`/`thinking`/`input_json` events beside the raw ones.
    events: list[dict[str, Any]] = []
    for event in anthropic_events("text-empty-tool"):
        events.append(event)
        if event["type"] == "content_block_delta" and event["delta"]["type"] == "text_delta":
            events.append({"type": "text", "text": event["delta"]["text"], "snapshot": "…"})
    assert collect_parts(from_anthropic_stream(events))[0]["text"] == "Hello! How can I help you today?"


def test_anthropic_web_citation_becomes_a_source_and_redacted_thinking_nothing() -> None:
    events = [
        {"type": "content_block_start", "index": 0, "content_block": {"type": "redacted_thinking", "data": "EmwKAhgB…"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Paris is the capital."}},
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {
                "type": "citations_delta",
                "citation": {"type": "web_search_result_location", "url": "https://en.wikipedia.org/wiki/Paris", "title": "Paris", "cited_text": "…"},
            },
        },
        {"type": "content_block_delta", "index": 1, "delta": {"type": "citations_delta", "citation": {"type": "char_location", "document_index": 0}}},
        {"type": "content_block_stop", "index": 1},
    ]
    assert collect_parts(from_anthropic_stream(events)) == [
        {"type": "text", "text": "Paris is the capital."},
        {"type": "source", "sourceId": "src_1", "url": "https://en.wikipedia.org/wiki/Paris", "title": "Paris"},
    ]


class RecordingSink:
    """A streamed answer that already holds one part the bot wrote itself."""

    def __init__(self) -> None:
        self.parts: list[dict[str, Any]] = [{"type": "text", "text": "Let me look. "}]
        self.calls: list[tuple[str, int]] = []

    async def open_part(self, part: Mapping[str, Any]) -> int:
        self.parts.append(dict(part))
        self.calls.append(("open", len(self.parts) - 1))
        return len(self.parts) - 1

    async def append_text(self, index: int, text: str) -> None:
        key = "inputText" if self.parts[index]["type"] == "tool" else "text"
        self.parts[index][key] += text
        self.calls.append(("append", index))

    async def update_part(self, index: int, fields: Mapping[str, Any]) -> None:
        self.parts[index].update(fields)
        self.calls.append(("update", index))


async def test_pipe_parts_maps_slots_to_the_sinks_indexes() -> None:
    sink = RecordingSink()
    built = await pipe_parts(from_openai_chat_stream(aiter_of(openai_chunks("tool"))), sink)
    assert sink.parts[1:] == built
    assert sink.parts[2]["input"] == {"city": "Lyon", "unit": "celsius"}
    assert sink.calls[0] == ("open", 1) and ("update", 2) in sink.calls


async def test_a_model_stream_is_read_once_and_an_async_one_only_asynchronously() -> None:
    ops = from_openai_chat_stream(aiter_of(openai_chunks("text")))
    with pytest.raises(TypeError, match="async for"):
        list(ops)
    again = from_openai_chat_stream(openai_chunks("text"))
    first: list[PartOp] = list(again)
    assert first
    with pytest.raises(RuntimeError, match="read once"):
        list(again)
