"""The SDK's side of streamed replies, stop, activity and feedback, against a bare peer playing the
hub's part of the streaming contract: these run whatever the hub has merged."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from bare_peer import BarePeer, StreamingPeer
from hub_process import AGENT_KEY

from relay_hub_agent import Feedback, Message, RelayAgent, RelayAgentError, StreamEnd


def _message(id_: str, text: str = "hi", sender: str = "u") -> dict[str, Any]:
    return {"id": id_, "ts": "2025-01-02T03:04:05.678Z", "agentId": "bot", "from": sender, "text": text}


@pytest.fixture
def hub_side(bare_peer: BarePeer) -> StreamingPeer:
    return StreamingPeer(bare_peer)


async def _connect(peer: BarePeer, agent: RelayAgent) -> str:
    await agent.connect()
    return await asyncio.wait_for(peer.connections.get(), 5)


@pytest.fixture
async def agent(bare_peer: BarePeer) -> AsyncIterator[RelayAgent]:
    a = RelayAgent(bare_peer.url, AGENT_KEY, "bot", backoff_base=0.02, backoff_cap=0.2)
    yield a
    await a.close()


async def test_writes_within_the_coalescing_window_go_out_as_one_delta(
    bare_peer: BarePeer, hub_side: StreamingPeer, agent: RelayAgent
) -> None:
    await _connect(bare_peer, agent)
    async with agent.stream("u", reply_to="m-1", data={"model": "x"}) as s:
        for i in range(100):
            await s.write(f"{i},")
    assert isinstance(s.result, StreamEnd) and s.result.status == "complete"
    assert hub_side.starts == [{"to": "u", "replyTo": "m-1", "data": {"model": "x"}}]
    assert hub_side.text("stream-1") == "".join(f"{i}," for i in range(100))
    assert len(hub_side.deltas) == 1
    assert s.deltas_sent == 1
    assert await hub_side.ends.get() == {"id": "stream-1", "status": "complete"}


async def test_writes_further_apart_than_the_window_go_out_one_delta_each(
    bare_peer: BarePeer, hub_side: StreamingPeer, agent: RelayAgent
) -> None:
    agent._coalesce_ms = 5
    await _connect(bare_peer, agent)
    async with agent.stream("u") as s:
        for piece in ("one ", "two ", "three"):
            await s.write(piece)
            await asyncio.sleep(0.05)  # the pace of a slow model, ten times the window
    assert [d["text"] for d in hub_side.deltas] == ["one ", "two ", "three"]


async def test_a_writer_that_outpaces_the_hub_waits_instead_of_buffering_without_bound(
    bare_peer: BarePeer, hub_side: StreamingPeer, agent: RelayAgent
) -> None:
    agent._max_buffer = 1000
    agent._max_delta = 300
    hub_side.hold_deltas = asyncio.Event()
    await _connect(bare_peer, agent)
    pieces = [f"{i:04d}" + "x" * 96 for i in range(200)]  # 20 KB in 100-byte pieces
    most_buffered = 0

    async with agent.stream("u") as s:

        async def produce() -> None:
            nonlocal most_buffered
            for piece in pieces:
                await s.write(piece)
                most_buffered = max(most_buffered, s.buffered_bytes)

        writer = asyncio.create_task(produce())
        await asyncio.wait_for(hub_side.delta_arrived.wait(), 5)
        # The hub holds its ack: the writer is stuck once its buffer is full, one delta in flight.
        while s.buffered_bytes < 1000:
            await asyncio.sleep(0)
        await asyncio.sleep(0.05)
        assert not writer.done()
        assert s.buffered_bytes < 1000 + 100
        assert hub_side.deltas == []  # the first delta is still awaiting its ack
        hub_side.hold_deltas.set()
        await asyncio.wait_for(writer, 10)

    assert most_buffered < 1000 + 100
    assert hub_side.text("stream-1") == "".join(pieces)
    assert all(len(d["text"].encode()) <= 300 for d in hub_side.deltas)


async def test_a_stop_of_the_stream_ends_it_cancelled_and_reaches_the_handler(
    bare_peer: BarePeer, hub_side: StreamingPeer, agent: RelayAgent
) -> None:
    streaming = asyncio.Event()
    after_block: asyncio.Queue[tuple[bool, bool]] = asyncio.Queue()

    @agent.on_message
    async def answer(message: Message) -> None:
        async with agent.stream(message.sender, reply_to=message.id) as s:
            await s.write("Once upon a time")
            streaming.set()
            while True:  # an endless answer, only a stop ends it
                await s.write(".")
                await asyncio.sleep(0.01)
        await after_block.put((message.stopped, s.stopped))

    sid = await _connect(bare_peer, agent)
    await bare_peer.call(sid, "message", _message("m-1"))
    await asyncio.wait_for(streaming.wait(), 5)
    await asyncio.wait_for(hub_side.delta_arrived.wait(), 5)
    await bare_peer.call(sid, "stop", {"id": "stream-1", "from": "u"})

    assert await asyncio.wait_for(hub_side.ends.get(), 5) == {"id": "stream-1", "status": "cancelled"}
    assert await asyncio.wait_for(after_block.get(), 5) == (True, True)
    assert hub_side.text("stream-1").startswith("Once upon a time")
    assert hub_side.ends.empty()


async def test_a_stop_of_the_users_message_works_before_the_stream_exists(
    bare_peer: BarePeer, hub_side: StreamingPeer, agent: RelayAgent
) -> None:
    thinking = asyncio.Event()
    outcome: asyncio.Queue[str] = asyncio.Queue()

    @agent.on_message
    async def answer(message: Message) -> None:
        thinking.set()
        await message.stop_event.wait()  # e.g. checked between tool calls
        await outcome.put(f"stopped {message.id}")

    sid = await _connect(bare_peer, agent)
    await bare_peer.call(sid, "message", _message("m-7"))
    await asyncio.wait_for(thinking.wait(), 5)
    await bare_peer.call(sid, "stop", {"messageId": "m-7", "from": "u"})
    assert await asyncio.wait_for(outcome.get(), 5) == "stopped m-7"
    assert hub_side.starts == []


async def test_cancel_on_stop_cancels_the_handler_where_it_waits_and_ends_its_stream_cancelled(
    bare_peer: BarePeer, hub_side: StreamingPeer
) -> None:
    agent = RelayAgent(bare_peer.url, AGENT_KEY, "bot", cancel_on_stop=True)
    waiting = asyncio.Event()
    cancelled = asyncio.Event()
    errors: list[BaseException] = []
    agent.on_error(errors.append)

    @agent.on_message
    async def answer(message: Message) -> None:
        async with agent.stream(message.sender) as s:
            await s.write("Let me think")
            waiting.set()
            try:
                await asyncio.Event().wait()  # a model call that never returns
            except asyncio.CancelledError:
                cancelled.set()
                raise

    try:
        sid = await _connect(bare_peer, agent)
        await bare_peer.call(sid, "message", _message("m-2"))
        await asyncio.wait_for(waiting.wait(), 5)
        await bare_peer.call(sid, "stop", {"messageId": "m-2", "from": "u"})
        assert (await asyncio.wait_for(hub_side.ends.get(), 5))["status"] == "cancelled"
        await asyncio.wait_for(cancelled.wait(), 5)
        assert errors == []  # a stopped handler's cancellation is not an error
    finally:
        await agent.close()


async def _pieces(items: list[str], closed: list[bool], fail: bool = False, endless: bool = False) -> AsyncIterator[str]:
    try:
        for item in items:
            yield item
        if fail:
            raise RuntimeError("the model failed")
        while endless:
            yield "."
            await asyncio.sleep(0.01)
    finally:
        closed.append(True)


async def test_stream_from_pipes_an_async_generator_and_ends_complete(
    bare_peer: BarePeer, hub_side: StreamingPeer, agent: RelayAgent
) -> None:
    await _connect(bare_peer, agent)
    closed: list[bool] = []
    result = await agent.stream_from("u", _pieces(["Hel", "lo", " world"], closed), reply_to="m-3")
    assert (result.id, result.status) == ("stream-1", "complete")
    assert hub_side.text("stream-1") == "Hello world"
    assert closed == [True]


async def test_stream_from_a_failing_iterable_ends_error_and_raises(
    bare_peer: BarePeer, hub_side: StreamingPeer, agent: RelayAgent
) -> None:
    await _connect(bare_peer, agent)
    with pytest.raises(RuntimeError, match="the model failed"):
        await agent.stream_from("u", _pieces(["partial"], [], fail=True))
    assert await hub_side.ends.get() == {"id": "stream-1", "status": "error"}
    assert hub_side.text("stream-1") == "partial"


async def test_stream_from_stopped_closes_the_iterable_and_ends_cancelled(
    bare_peer: BarePeer, hub_side: StreamingPeer, agent: RelayAgent
) -> None:
    results: asyncio.Queue[StreamEnd] = asyncio.Queue()
    closed: list[bool] = []

    @agent.on_message
    async def answer(message: Message) -> None:
        await results.put(await agent.stream_from(message.sender, _pieces(["a"], closed, endless=True), reply_to=message.id))

    sid = await _connect(bare_peer, agent)
    await bare_peer.call(sid, "message", _message("m-4"))
    await asyncio.wait_for(hub_side.delta_arrived.wait(), 5)
    await bare_peer.call(sid, "stop", {"messageId": "m-4", "from": "u"})
    result = await asyncio.wait_for(results.get(), 5)
    assert result.status == "cancelled"
    assert closed == [True]
    assert (await hub_side.ends.get())["status"] == "cancelled"


async def test_a_delta_refused_with_a_retryable_code_is_sent_again_and_nothing_is_doubled(
    bare_peer: BarePeer, hub_side: StreamingPeer, agent: RelayAgent
) -> None:
    hub_side.refuse = ["RATE_LIMITED", "SERVER_UNAVAILABLE"]
    await _connect(bare_peer, agent)
    async with agent.stream("u") as s:
        await s.write("exactly once")
    assert hub_side.text("stream-1") == "exactly once"
    assert len(hub_side.deltas) == 1


async def test_a_delta_refused_for_good_fails_the_writer_and_ends_the_stream_error(
    bare_peer: BarePeer, hub_side: StreamingPeer, agent: RelayAgent
) -> None:
    hub_side.refuse = ["PAYLOAD_TOO_LARGE"]
    await _connect(bare_peer, agent)
    with pytest.raises(RelayAgentError) as refused:
        async with agent.stream("u") as s:
            await s.write("too much")
            while True:
                await s.write("more")
                await asyncio.sleep(0.01)
    assert (refused.value.code, refused.value.retryable) == ("PAYLOAD_TOO_LARGE", False)
    assert await hub_side.ends.get() == {"id": "stream-1", "status": "error"}


async def test_a_stream_the_hub_no_longer_knows_is_not_ended_again(
    bare_peer: BarePeer, hub_side: StreamingPeer, agent: RelayAgent
) -> None:
    hub_side.refuse = ["STREAM_NOT_FOUND"]
    await _connect(bare_peer, agent)
    with pytest.raises(RelayAgentError) as gone:
        async with agent.stream("u") as s:
            await s.write("after the hub's timeout")
    assert (gone.value.code, gone.value.retryable) == ("STREAM_NOT_FOUND", False)
    assert hub_side.ends.empty()


async def test_a_stream_dies_with_its_connection(bare_peer: BarePeer, hub_side: StreamingPeer, agent: RelayAgent) -> None:
    reconnected: asyncio.Queue[None] = asyncio.Queue()
    sid = await _connect(bare_peer, agent)
    agent.on_connect(lambda: reconnected.put_nowait(None))
    with pytest.raises(RelayAgentError) as interrupted:
        async with agent.stream("u") as s:
            await s.write("before the drop")
            await bare_peer.sio.disconnect(sid, namespace="/ws/agent")
            await asyncio.wait_for(reconnected.get(), 5)
            await s.write("after it")
            await s.end()
    assert interrupted.value.code == "DISCONNECTED"
    assert hub_side.ends.empty()  # the hub ends an interrupted stream itself


async def test_end_may_replace_the_text_and_returns_the_receipt(
    bare_peer: BarePeer, hub_side: StreamingPeer, agent: RelayAgent
) -> None:
    await _connect(bare_peer, agent)
    s = await agent.stream("u").start()
    await s.write("draft")
    result = await s.end(text="final answer", data={"sources": 2})
    assert (result.id, result.ts, result.status) == ("stream-1", "2025-01-02T03:04:06.000Z", "complete")
    assert await hub_side.ends.get() == {"id": "stream-1", "status": "complete", "text": "final answer", "data": {"sources": 2}}
    assert hub_side.text("stream-1") == "draft"  # sent before the end
    assert await s.end() is result
    with pytest.raises(RuntimeError):
        await s.write("late")


async def test_activity_is_sent_with_its_label(bare_peer: BarePeer, hub_side: StreamingPeer, agent: RelayAgent) -> None:
    await _connect(bare_peer, agent)
    await agent.activity("u", "thinking")
    await agent.activity("u", "tool", label="Searching the docs")
    assert hub_side.activities == [{"to": "u", "state": "thinking"}, {"to": "u", "state": "tool", "label": "Searching the docs"}]


async def test_feedback_reaches_the_feedback_handler_typed(bare_peer: BarePeer, agent: RelayAgent) -> None:
    got: asyncio.Queue[Feedback] = asyncio.Queue()

    @agent.on_feedback
    async def rated(feedback: Feedback) -> None:
        await got.put(feedback)

    sid = await _connect(bare_peer, agent)
    await bare_peer.emit(sid, "feedback", {"id": "r-1", "from": "u", "rating": "up", "comment": "great"})
    await bare_peer.emit(sid, "feedback", {"id": "r-1", "from": "u", "rating": "sideways"})  # malformed: dropped
    await bare_peer.emit(sid, "feedback", {"id": "r-1", "from": "u", "rating": None})
    assert await asyncio.wait_for(got.get(), 5) == Feedback("r-1", "u", "up", "great")
    assert await asyncio.wait_for(got.get(), 5) == Feedback("r-1", "u", None, None)


async def test_an_unknown_stop_is_ignored(bare_peer: BarePeer, agent: RelayAgent) -> None:
    sid = await _connect(bare_peer, agent)
    assert await bare_peer.call(sid, "stop", {"id": "nope", "from": "u"}) == {"ok": True}
    assert await bare_peer.call(sid, "stop", {"messageId": "nope", "from": "u"}) == {"ok": True}
    assert agent.connected
