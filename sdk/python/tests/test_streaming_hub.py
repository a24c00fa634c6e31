"""Streamed replies, stop, activity and feedback through a real hub, as a browser sees them.

Marked `streaming`: skipped while the hub's dist/asyncapi.json has no `stream:start`, and run as
soon as it has (see conftest.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, Callable

import pytest

from relay_hub_agent import Feedback, Message, RelayAgent, StreamEnd

pytestmark = pytest.mark.streaming


async def _tokens(text: str, pause: float = 0.0) -> AsyncIterator[str]:
    for word in text.split(" "):
        yield word + " "
        if pause:
            await asyncio.sleep(pause)  # the pace of a model


async def _until_end(client: Any, stream_id: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The deltas of a stream as the tab got them, and its message:end."""
    end: dict[str, Any] = await client.next("message:end", timeout=15)
    assert end["id"] == stream_id
    # A socket gets a stream's events in order: every delta is queued before its end.
    deltas = [d for d in client.pending("message:delta") if d["id"] == stream_id]
    return deltas, end


async def test_an_async_generator_streams_to_the_user_and_ends_complete(
    make_agent: Callable[..., RelayAgent], make_client: Any, bot_id: str
) -> None:
    agent = make_agent(bot_id)
    results: asyncio.Queue[StreamEnd] = asyncio.Queue()

    @agent.on_message
    async def answer(message: Message) -> None:
        await results.put(
            await agent.stream_from(message.sender, _tokens("the quick brown fox", 0.04), reply_to=message.id)
        )

    await agent.connect()
    client = await make_client(bot_id, "alice")
    ack = await client.send("tell me")
    start = await client.next("message:start")
    assert (start["replyTo"], start["author"], start["agentId"]) == (ack["id"], "agent", bot_id)
    deltas, end = await _until_end(client, start["id"])
    result = await asyncio.wait_for(results.get(), 5)

    assert (end["status"], end["text"]) == ("complete", "the quick brown fox ")
    assert (result.id, result.status) == (start["id"], "complete")
    assert [d["seq"] for d in deltas] == list(range(1, len(deltas) + 1))
    assert start["text"] + "".join(d["text"] for d in deltas) == end["text"]
    assert len(deltas) > 1  # the pieces came apart in time, so they were not all coalesced


async def test_the_user_stops_a_stream_and_it_ends_cancelled(
    make_agent: Callable[..., RelayAgent], make_client: Any, bot_id: str
) -> None:
    agent = make_agent(bot_id)
    seen_stop: asyncio.Queue[bool] = asyncio.Queue()

    @agent.on_message
    async def answer(message: Message) -> None:
        async with agent.stream(message.sender, reply_to=message.id) as s:
            while True:
                await s.write("more ")
                await asyncio.sleep(0.02)
        await seen_stop.put(message.stopped and s.stopped)

    await agent.connect()
    client = await make_client(bot_id, "alice")
    await client.send("talk forever")
    start = await client.next("message:start")
    await client.next("message:delta")
    assert (await client.call("stop", {"id": start["id"]}))["ok"] is True
    _, end = await _until_end(client, start["id"])

    assert end["status"] == "cancelled"
    assert end["text"].startswith("more ")
    assert await asyncio.wait_for(seen_stop.get(), 5) is True


async def test_a_stop_before_the_stream_exists_reaches_the_handler(
    make_agent: Callable[..., RelayAgent], make_client: Any, bot_id: str
) -> None:
    agent = make_agent(bot_id)
    thinking = asyncio.Event()
    stopped: asyncio.Queue[str] = asyncio.Queue()

    @agent.on_message
    async def answer(message: Message) -> None:
        thinking.set()
        await message.stop_event.wait()
        await stopped.put(message.id)

    await agent.connect()
    client = await make_client(bot_id, "alice")
    ack = await client.send("think hard", client_message_id="cm-1")
    await asyncio.wait_for(thinking.wait(), 5)
    assert (await client.call("stop", {"clientMessageId": "cm-1"}))["ok"] is True
    assert await asyncio.wait_for(stopped.get(), 5) == ack["id"]


async def test_a_burst_of_writes_is_coalesced_into_few_deltas(
    make_agent: Callable[..., RelayAgent], make_client: Any, bot_id: str
) -> None:
    agent = make_agent(bot_id)

    @agent.on_message
    async def answer(message: Message) -> None:
        async with agent.stream(message.sender) as s:
            for i in range(500):
                await s.write(f"{i} ")

    await agent.connect()
    client = await make_client(bot_id, "alice")
    await client.send("count")
    start = await client.next("message:start")
    deltas, end = await _until_end(client, start["id"])
    assert end["text"] == "".join(f"{i} " for i in range(500))
    assert 1 <= len(deltas) <= 3


async def test_a_writer_faster_than_the_hub_waits_with_bounded_memory(
    make_agent: Callable[..., RelayAgent], make_client: Any, bot_id: str
) -> None:
    agent = make_agent(bot_id, max_buffer_bytes=2048, max_delta_bytes=1024)
    most_buffered: asyncio.Queue[int] = asyncio.Queue()
    pieces = [f"{i:05d}" + "y" * 45 for i in range(2000)]  # 100 KB in 50-byte pieces

    @agent.on_message
    async def answer(message: Message) -> None:
        most = 0
        async with agent.stream(message.sender) as s:
            for piece in pieces:
                await s.write(piece)
                most = max(most, s.buffered_bytes)
        await most_buffered.put(most)

    await agent.connect()
    client = await make_client(bot_id, "alice")
    await client.send("a long one")
    start = await client.next("message:start")
    deltas, end = await _until_end(client, start["id"])
    assert end["text"] == "".join(pieces)
    assert await asyncio.wait_for(most_buffered.get(), 5) < 2048 + 50
    assert len(deltas) >= 100_000 // 1024


async def test_an_exception_in_the_block_ends_the_stream_error(
    make_agent: Callable[..., RelayAgent], make_client: Any, bot_id: str
) -> None:
    agent = make_agent(bot_id)
    errors: asyncio.Queue[BaseException] = asyncio.Queue()
    agent.on_error(errors.put_nowait)

    @agent.on_message
    async def answer(message: Message) -> None:
        async with agent.stream(message.sender) as s:
            await s.write("partial ")
            raise ConnectionError("the model went away")

    await agent.connect()
    client = await make_client(bot_id, "alice")
    await client.send("go")
    start = await client.next("message:start")
    _, end = await _until_end(client, start["id"])
    assert (end["status"], end["text"]) == ("error", "partial ")
    # The stream's end leaves before the exception reaches the handler's caller, which reports it.
    assert type(await asyncio.wait_for(errors.get(), 5)) is ConnectionError
    assert errors.empty()


async def test_activity_is_shown_to_the_user(make_agent: Callable[..., RelayAgent], make_client: Any, bot_id: str) -> None:
    agent = make_agent(bot_id)
    await agent.connect()
    client = await make_client(bot_id, "alice")
    await agent.activity("alice", "tool", label="Searching the docs")
    shown = await client.next("agent:activity")
    assert (shown["agentId"], shown["state"], shown["label"]) == (bot_id, "tool", "Searching the docs")


async def test_feedback_on_an_answer_reaches_the_bot(make_agent: Callable[..., RelayAgent], make_client: Any, bot_id: str) -> None:
    agent = make_agent(bot_id)
    got: asyncio.Queue[Feedback] = asyncio.Queue()

    @agent.on_feedback
    async def rated(feedback: Feedback) -> None:
        await got.put(feedback)

    await agent.connect()
    client = await make_client(bot_id, "alice")
    sent = await agent.reply("alice", "42")
    await client.next("message")
    assert (await client.call("feedback", {"id": sent.id, "rating": "down", "comment": "wrong"}))["ok"] is True
    assert await asyncio.wait_for(got.get(), 5) == Feedback(sent.id, "alice", "down", "wrong")
