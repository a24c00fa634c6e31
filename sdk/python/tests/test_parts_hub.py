"""Parts and approvals through a real hub, as a browser tab sees them: the Python SDK's part of the
same end-to-end test the Node SDKs have (test/integration/sdk-parts-hub.test.ts)."""

from __future__ import annotations

import asyncio
from typing import Any, Callable

import pytest

from relay_hub_agent import Approval, Message, RelayAgent, RelayAgentError

pytestmark = pytest.mark.streaming


def _changes(client: Any, stream_id: str) -> list[dict[str, Any]]:
    """The stream's message:delta and message:part events the tab got, in seq order."""
    events = [e for name in ("message:delta", "message:part") for e in client.pending(name) if e["id"] == stream_id]
    return sorted(events, key=lambda e: int(e["seq"]))


def _apply(parts: list[dict[str, Any]], change: dict[str, Any]) -> None:
    """What a tab does with one change (docs/parts.md)."""
    index = change["index"]
    if "part" in change:
        if index == len(parts):
            parts.append(change["part"])
        else:
            parts[index] = change["part"]
        return
    if index == len(parts):
        parts.append({"type": "text", "text": change["text"]})
    elif parts[index]["type"] == "tool":
        parts[index] = {**parts[index], "inputText": parts[index].get("inputText", "") + change["text"]}
    else:
        parts[index] = {**parts[index], "text": parts[index]["text"] + change["text"]}


async def test_a_stream_with_every_part_type_reaches_the_tab_in_order_nothing_doubled_or_skipped(
    make_agent: Callable[..., RelayAgent], make_client: Any, bot_id: str
) -> None:
    agent = make_agent(bot_id, coalesce_ms=5)
    done: asyncio.Queue[str] = asyncio.Queue()

    @agent.on_message
    async def answer(message: Message) -> None:
        async with agent.stream(message.sender, reply_to=message.id) as s:
            await s.write("Let me ")
            thinking = s.reasoning()
            await thinking.write("The user wants ")
            await thinking.write("the weather.")
            await s.write("check. ")
            call = s.tool("get_weather", tool_call_id="call_1", title="Weather in Paris")
            for piece in ('{"city":', '"Paris"}'):
                await call.write_input(piece)
            await call.input_available()
            await call.output({"celsius": 21})
            await s.write("It is 21 °C.")
            await s.source("https://example.com/paris", source_id="s1", title="Forecast")
            await s.file("https://example.com/map.png", "image/png")
            await s.data("forecast", {"days": [21, 23]}, id="f1")
            await s.suggest(["Tomorrow?"])
            assert s.id is not None
            await done.put(s.id)

    await agent.connect()
    client = await make_client(bot_id, "alice")
    await client.send("weather?")
    start = await client.next("message:start")
    assert await asyncio.wait_for(done.get(), 10) == start["id"]
    end = await client.next("message:end", timeout=10)

    expected = [
        {"type": "text", "text": "Let me "},
        {"type": "reasoning", "text": "The user wants the weather."},
        {"type": "text", "text": "check. "},
        {
            "type": "tool",
            "toolCallId": "call_1",
            "toolName": "get_weather",
            "title": "Weather in Paris",
            "state": "output-available",
            "inputText": '{"city":"Paris"}',
            "input": {"city": "Paris"},
            "output": {"celsius": 21},
        },
        {"type": "text", "text": "It is 21 °C."},
        {"type": "source", "sourceId": "s1", "url": "https://example.com/paris", "title": "Forecast"},
        {"type": "file", "url": "https://example.com/map.png", "mediaType": "image/png"},
        {"type": "data", "name": "forecast", "id": "f1", "data": {"days": [21, 23]}},
        {"type": "suggestions", "items": [{"text": "Tomorrow?"}]},
    ]
    assert (end["status"], end["text"], end["parts"]) == ("complete", "Let me check. It is 21 °C.", expected)
    # The tab's changes, applied in seq order to the start's snapshot, give the same parts: none doubled or skipped.
    changes = _changes(client, start["id"])
    assert [c["seq"] for c in changes] == list(range(start["seq"] + 1, start["seq"] + 1 + len(changes)))
    parts: list[dict[str, Any]] = list(start.get("parts") or ([{"type": "text", "text": start["text"]}] if start["text"] else []))
    for change in changes:
        _apply(parts, change)
    assert parts == expected


async def test_an_approval_given_on_the_tab_reaches_the_tool_call_and_on_approval_once(
    make_agent: Callable[..., RelayAgent], make_client: Any, bot_id: str
) -> None:
    agent = make_agent(bot_id)
    approvals: list[Approval] = []
    asked: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
    outcome: asyncio.Queue[bool] = asyncio.Queue()

    @agent.on_approval
    async def decided(approval: Approval) -> None:
        approvals.append(approval)

    @agent.on_message
    async def answer(message: Message) -> None:
        async with agent.stream(message.sender, reply_to=message.id) as s:
            call = s.tool("refund", tool_call_id="call_1")
            await call.input_available({"order": 42})
            assert s.id is not None
            await asked.put((s.id, await call.request_approval()))
            decision = await asyncio.wait_for(call.decision(), 10)
            await (call.output({"refunded": True}) if decision.approved else call.denied())
            await outcome.put(decision.approved)

    await agent.connect()
    client = await make_client(bot_id, "alice")
    await client.send("refund 42")
    stream_id, approval_id = await asyncio.wait_for(asked.get(), 10)
    ack = await client.call("approval", {"messageId": stream_id, "approvalId": approval_id, "approved": True})
    assert ack["ok"] is True and ack["decision"]["approved"] is True
    assert await asyncio.wait_for(outcome.get(), 10) is True
    end = await client.next("message:end", timeout=10)
    assert end["parts"][0]["state"] == "output-available"
    assert end["parts"][0]["approval"] == {"id": approval_id, "approved": True, "decidedBy": "alice", "ts": ack["decision"]["ts"]}
    assert [(a.id, a.approved, a.sender) for a in approvals] == [(approval_id, True, "alice")]


async def test_a_reply_with_parts_and_a_refused_part(make_agent: Callable[..., RelayAgent], make_client: Any, bot_id: str) -> None:
    agent = make_agent(bot_id)
    await agent.connect()
    client = await make_client(bot_id, "bob")
    parts: list[Any] = [{"type": "text", "text": "See "}, {"type": "source", "sourceId": "1", "url": "https://example.com/a"}]
    await agent.reply("bob", parts=parts)
    shown = await client.next("message")
    assert (shown["text"], shown["parts"]) == ("See ", parts)

    async with agent.stream("bob") as s:
        await s.write("before")
        with pytest.raises(RelayAgentError) as refused:
            await s.file("javascript:alert(1)", "text/html")
        assert refused.value.code == "INVALID_PAYLOAD"
        await s.end(status="cancelled")
    end = await client.next("message:end")
    assert (end["text"], end.get("parts")) == ("before", None)
    assert client.pending("message:part") == []
