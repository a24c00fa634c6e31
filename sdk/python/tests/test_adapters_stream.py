"""``ReplyStream.pipe``: a recorded model stream written to an answer, against a bare peer playing the hub."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from bare_peer import BarePeer
from hub_process import AGENT_KEY
from model_streams import aiter_of, anthropic_events, openai_chunks
from test_parts_peer import PartsPeer

from relay_hub_agent import RelayAgent, from_anthropic_stream, from_openai_chat_stream


@pytest.fixture
async def agent(bare_peer: BarePeer) -> AsyncIterator[RelayAgent]:
    a = RelayAgent(bare_peer.url, AGENT_KEY, "bot", backoff_base=0.02, backoff_cap=0.2)
    yield a
    await a.close()


def hub_parts(log: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The parts as the hub holds them after the logged events (text without index opens or extends a text part)."""
    parts: list[dict[str, Any]] = []
    for event, payload in log:
        if event == "part":
            parts.append(dict(payload["part"]))
        elif event == "update":
            parts[payload["index"]].update(payload["part"])
        elif event == "delta":
            index = payload.get("index")
            if index is None:
                if not parts or parts[-1]["type"] != "text":
                    parts.append({"type": "text", "text": ""})
                index = len(parts) - 1
            key = "inputText" if parts[index]["type"] == "tool" else "text"
            parts[index][key] = parts[index].get(key, "") + payload["text"]
    return parts


async def test_pipe_writes_the_tool_calls_after_the_text_the_bot_wrote_at_the_hubs_indexes(
    bare_peer: BarePeer, agent: RelayAgent
) -> None:
    hub_side = PartsPeer(bare_peer)
    await agent.connect()
    await asyncio.wait_for(bare_peer.connections.get(), 5)
    async with agent.stream("u") as s:
        await s.write("Checking both cities. ")
        built = await s.pipe(from_openai_chat_stream(aiter_of(openai_chunks("tool"))))
    held = hub_parts(hub_side.log)
    assert held[0] == {"type": "text", "text": "Checking both cities. "}
    assert held[1:] == built
    assert [(p["toolCallId"], p["state"], p["input"]) for p in held[1:]] == [
        ("call_Qx8mJ2rT5vLp9wNc3KdF6hYb", "input-available", {"city": "Paris", "unit": "celsius"}),
        ("call_7HbZk1Vw4sRt0yMe9PqL2nXa", "input-available", {"city": "Lyon", "unit": "celsius"}),
    ]
    # The arguments streamed as the model wrote them, each to its own call's index.
    assert {payload.get("index") for event, payload in hub_side.log if event == "delta"} == {None, 1, 2}


async def test_pipe_of_an_anthropic_stream(bare_peer: BarePeer, agent: RelayAgent) -> None:
    hub_side = PartsPeer(bare_peer)
    await agent.connect()
    await asyncio.wait_for(bare_peer.connections.get(), 5)
    async with agent.stream("u") as s:
        await s.pipe(from_anthropic_stream(anthropic_events("thinking-tool")))
    held = hub_parts(hub_side.log)
    assert [p["type"] for p in held] == ["reasoning", "text", "tool"]
    assert held[0]["text"].startswith("The user wants the weather in Paris")
    assert held[2]["input"] == {"city": "Paris", "unit": "celsius"}
