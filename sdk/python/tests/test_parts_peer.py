"""The SDK's side of parts and approvals, against a bare peer playing the hub: the order of what
leaves, the indices the SDK counts, decisions handed over once and acked after their handler."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from bare_peer import BarePeer, StreamingPeer
from hub_process import AGENT_KEY

from relay_hub_agent import Approval, RelayAgent, RelayAgentError


class PartsPeer(StreamingPeer):
    """A :class:`StreamingPeer` that also takes ``stream:part`` and ``stream:update``, logging every
    stream event in arrival order; ``refuse_part`` answers parts of that type with INVALID_PAYLOAD."""

    def __init__(self, peer: BarePeer) -> None:
        super().__init__(peer)
        self.log: list[tuple[str, dict[str, Any]]] = []
        self.refuse_part: str | None = None
        #: The type of each part of each stream, as the hub counts them.
        self.types: dict[str, list[str]] = {}
        original_delta = peer.sio.handlers["/ws/agent"]["stream:delta"]

        async def delta(sid: str, payload: dict[str, Any]) -> Any:
            self.log.append(("delta", payload))
            types = self.types.setdefault(payload["id"], [])
            if "index" not in payload and (not types or types[-1] != "text"):
                types.append("text")
            return await original_delta(sid, payload)

        async def part(sid: str, payload: dict[str, Any]) -> dict[str, Any]:
            if payload["part"]["type"] == self.refuse_part:
                return {"ok": False, "error": {"code": "INVALID_PAYLOAD", "message": "parts[0].url: not http(s)"}}
            self.log.append(("part", payload))
            types = self.types.setdefault(payload["id"], [])
            types.append(payload["part"]["type"])
            return {"ok": True, "seq": len(self.log), "index": len(types) - 1}

        async def update(sid: str, payload: dict[str, Any]) -> dict[str, Any]:
            self.log.append(("update", payload))
            return {"ok": True, "seq": len(self.log)}

        for event, handler in (("stream:delta", delta), ("stream:part", part), ("stream:update", update)):
            peer.on(event, handler)


@pytest.fixture
def hub_side(bare_peer: BarePeer) -> PartsPeer:
    return PartsPeer(bare_peer)


@pytest.fixture
async def agent(bare_peer: BarePeer) -> AsyncIterator[RelayAgent]:
    a = RelayAgent(bare_peer.url, AGENT_KEY, "bot", backoff_base=0.02, backoff_cap=0.2)
    yield a
    await a.close()


async def _connect(peer: BarePeer, agent: RelayAgent) -> str:
    await agent.connect()
    return await asyncio.wait_for(peer.connections.get(), 5)


async def test_parts_leave_in_the_order_they_were_made_behind_the_text_written_before(
    bare_peer: BarePeer, hub_side: PartsPeer, agent: RelayAgent
) -> None:
    agent._coalesce_ms = 200  # text would wait; a part sends it first
    await _connect(bare_peer, agent)
    async with agent.stream("u") as s:
        await s.write("Let me ")
        thinking = s.reasoning()
        await thinking.write("weather ")
        await thinking.write("in Paris")
        await s.write("check.")
        call = s.tool("get_weather", tool_call_id="call_1", title="Weather")
        await call.write_input('{"city":')
        await call.write_input(' "Paris"}')
        await call.input_available()
        await call.output({"celsius": 21})
        assert await s.source("https://example.com/paris", source_id="s1", title="Forecast") == 4
        assert await s.file("https://example.com/map.png", "image/png", filename="map.png") == 5
        assert await s.data("forecast", {"days": [21]}, id="f1") == 6
        assert await s.suggest(["Tomorrow?", {"text": "Rome", "value": "weather in Rome"}]) == 7
    assert (thinking.index, call.index) == (1, 3)
    assert [(kind, {k: v for k, v in p.items() if k != "id"}) for kind, p in hub_side.log] == [
        ("delta", {"text": "Let me "}),
        ("part", {"part": {"type": "reasoning", "text": ""}}),
        ("delta", {"text": "weather in Paris", "index": 1}),
        ("delta", {"text": "check."}),
        ("part", {"part": {"type": "tool", "toolCallId": "call_1", "toolName": "get_weather", "state": "input-streaming", "title": "Weather"}}),
        ("delta", {"text": '{"city": "Paris"}', "index": 3}),
        ("update", {"index": 3, "part": {"state": "input-available", "input": {"city": "Paris"}}}),
        ("update", {"index": 3, "part": {"state": "output-available", "output": {"celsius": 21}}}),
        ("part", {"part": {"type": "source", "sourceId": "s1", "url": "https://example.com/paris", "title": "Forecast"}}),
        ("part", {"part": {"type": "file", "url": "https://example.com/map.png", "mediaType": "image/png", "filename": "map.png"}}),
        ("part", {"part": {"type": "data", "name": "forecast", "data": {"days": [21]}, "id": "f1"}}),
        ("part", {"part": {"type": "suggestions", "items": [{"text": "Tomorrow?"}, {"text": "Rome", "value": "weather in Rome"}]}}),
    ]
    assert (await hub_side.ends.get())["status"] == "complete"


async def test_a_decision_reaches_the_tool_call_and_the_handler_once_and_is_acked_after_the_handler(
    bare_peer: BarePeer, hub_side: PartsPeer, agent: RelayAgent
) -> None:
    sid = await _connect(bare_peer, agent)
    seen: list[Approval] = []
    release = asyncio.Event()

    @agent.on_approval
    async def decided(approval: Approval) -> None:
        seen.append(approval)
        await release.wait()

    async with agent.stream("u") as s:
        call = s.tool("refund")
        await call.input_available({"order": 42})
        approval_id = await call.request_approval()
        assert hub_side.log[-1][1]["part"] == {"state": "approval-requested", "approval": {"id": approval_id}}
        wire = {"id": approval_id, "messageId": s.id, "toolCallId": call.tool_call_id, "from": "u", "approved": True, "ts": "2025-01-02T03:04:05.678Z"}
        first = asyncio.ensure_future(bare_peer.call(sid, "approval", wire))
        decision = await asyncio.wait_for(call.decision(), 5)
        assert (decision.id, decision.approved, decision.sender) == (approval_id, True, "u")
        again = asyncio.ensure_future(bare_peer.call(sid, "approval", wire))
        await asyncio.sleep(0.1)  # room for a wrong early ack to arrive; the assertion is that none did
        assert not first.done() and not again.done()
        release.set()
        assert await first == {"ok": True}
        assert await again == {"ok": True}
        assert await bare_peer.call(sid, "approval", wire) == {"ok": True}
        await call.output({"refunded": True})
    assert len(seen) == 1


async def test_a_refused_part_fails_the_stream_with_its_code(bare_peer: BarePeer, hub_side: PartsPeer, agent: RelayAgent) -> None:
    await _connect(bare_peer, agent)
    hub_side.refuse_part = "file"
    s = await agent.stream("u").start()
    await s.write("before")
    with pytest.raises(RelayAgentError) as refused:
        await s.file("javascript:alert(1)", "text/html")
    assert (refused.value.code, refused.value.retryable) == ("INVALID_PAYLOAD", False)
    with pytest.raises(RelayAgentError) as later:
        await s.write("after")
    assert later.value is refused.value
    # The stream still ends (status error), and end() raises the failure, as after a refused delta.
    with pytest.raises(RelayAgentError) as ended:
        await s.end()
    assert ended.value is refused.value
    assert (await hub_side.ends.get())["status"] == "error"
    assert [kind for kind, _ in hub_side.log] == ["delta"]


async def test_input_that_is_not_json_is_refused_before_anything_is_sent(
    bare_peer: BarePeer, hub_side: PartsPeer, agent: RelayAgent
) -> None:
    await _connect(bare_peer, agent)
    async with agent.stream("u") as s:
        call = s.tool("search")
        await call.write_input('{"q": ')
        with pytest.raises(RelayAgentError) as bad:
            await call.input_available()
        assert bad.value.code == "INVALID_PAYLOAD"
        with pytest.raises(RelayAgentError):
            await call.decision()
    assert [kind for kind, _ in hub_side.log] == ["part", "delta"]


async def test_end_sends_parts_that_replace_what_was_streamed(bare_peer: BarePeer, hub_side: PartsPeer, agent: RelayAgent) -> None:
    await _connect(bare_peer, agent)
    s = await agent.stream("u").start()
    await s.write("draft")
    parts: list[Any] = [{"type": "text", "text": "Final."}, {"type": "source", "sourceId": "1", "url": "https://example.com"}]
    await s.end(parts=parts)
    assert await hub_side.ends.get() == {"id": s.id, "status": "complete", "parts": parts}
