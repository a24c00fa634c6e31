"""What a real hub does not do on demand, against a bare Socket.IO peer: redeliveries, every error
code, silence, a dropped connection mid-ack, retryable refusals."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from bare_peer import BarePeer
from hub_process import AGENT_KEY

from relay_hub_agent import Message, RelayAgent, RelayAgentError
from relay_hub_agent._connection import backoff_delay


def _message(id_: str, text: str = "hi") -> dict[str, Any]:
    return {"id": id_, "ts": "2025-01-02T03:04:05.678Z", "agentId": "bot", "from": "u", "text": text}


def _agent(peer: BarePeer, **options: Any) -> RelayAgent:
    options.setdefault("backoff_base", 0.02)
    options.setdefault("backoff_cap", 0.2)
    return RelayAgent(peer.url, AGENT_KEY, "bot", **options)


async def test_every_delivery_is_acked_but_each_id_reaches_the_handler_once(bare_peer: BarePeer) -> None:
    agent = _agent(bare_peer)
    handled: list[str] = []
    done = asyncio.Event()

    @agent.on_message
    async def handle(message: Message) -> None:
        handled.append(message.id)
        if message.id == "m-2":
            done.set()

    try:
        await agent.connect()
        sid = await bare_peer.connections.get()
        acks = [await bare_peer.call(sid, "message", _message(i)) for i in ("m-1", "m-1", "m-2")]
        await asyncio.wait_for(done.wait(), 5)
        assert acks == [{"ok": True}] * 3
        assert handled == ["m-1", "m-2"]
    finally:
        await agent.close()


async def test_the_dedupe_memory_is_bounded_by_dedupe_size(bare_peer: BarePeer) -> None:
    agent = _agent(bare_peer, dedupe_size=2)
    handled: asyncio.Queue[str] = asyncio.Queue()

    @agent.on_message
    async def handle(message: Message) -> None:
        await handled.put(message.id)

    try:
        await agent.connect()
        sid = await bare_peer.connections.get()
        for id_ in ("a", "b", "b", "c", "a"):
            await bare_peer.call(sid, "message", _message(id_))
        got = [await asyncio.wait_for(handled.get(), 5) for _ in range(4)]
        # "a" was forgotten once "b" and "c" were remembered: only the last 2 ids are kept.
        assert got == ["a", "b", "c", "a"]
        assert handled.empty()
        assert len(agent._inbound.handled) == 2
    finally:
        await agent.close()


async def test_a_malformed_message_is_acked_and_not_handed_to_the_handler(bare_peer: BarePeer) -> None:
    agent = _agent(bare_peer)
    handled: asyncio.Queue[str] = asyncio.Queue()

    @agent.on_message
    async def handle(message: Message) -> None:
        await handled.put(message.id)

    try:
        await agent.connect()
        sid = await bare_peer.connections.get()
        assert await bare_peer.call(sid, "message", {"id": 7, "text": None}) == {"ok": True}
        assert await bare_peer.call(sid, "message", _message("good")) == {"ok": True}
        assert await asyncio.wait_for(handled.get(), 5) == "good"
    finally:
        await agent.close()


async def test_error_acks_are_retryable_as_the_protocol_catalogue_says(bare_peer: BarePeer) -> None:
    async def reply(sid: str, payload: dict[str, Any]) -> dict[str, Any]:
        code = payload["text"]
        return {"ok": False, "error": {"code": code, "message": f"refused: {code}"}}

    async def debug(sid: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"ok": False, "error": {"code": "RATE_LIMITED", "message": "slow down"}}

    bare_peer.on("reply", reply)
    bare_peer.on("debug", debug)
    agent = _agent(bare_peer)
    try:
        await agent.connect()
        for code, retryable in (
            ("SERVER_UNAVAILABLE", True),
            ("RATE_LIMITED", True),
            ("INVALID_PAYLOAD", False),
            ("PAYLOAD_TOO_LARGE", False),
            ("SOMETHING_NEW", False),
        ):
            with pytest.raises(RelayAgentError) as refused:
                await agent.reply("u", code)
            assert (refused.value.code, refused.value.retryable, str(refused.value)) == (code, retryable, f"refused: {code}")
        with pytest.raises(RelayAgentError) as trace_refused:
            await agent.debug("trace")
        assert (trace_refused.value.code, trace_refused.value.retryable) == ("RATE_LIMITED", True)
    finally:
        await agent.close()


async def test_a_hub_that_never_answers_gives_ack_timeout(bare_peer: BarePeer) -> None:
    never = asyncio.Event()

    async def reply(sid: str, payload: Any) -> Any:
        await never.wait()

    bare_peer.on("reply", reply)
    agent = _agent(bare_peer, ack_timeout=0.3)
    try:
        await agent.connect()
        with pytest.raises(RelayAgentError) as timed_out:
            await agent.reply("u", "hello?")
        assert (timed_out.value.code, timed_out.value.retryable) == ("ACK_TIMEOUT", True)
    finally:
        never.set()
        await agent.close()


async def test_a_connection_that_drops_before_the_ack_fails_the_call_with_disconnected_at_once(bare_peer: BarePeer) -> None:
    got_reply = asyncio.Event()

    async def reply(sid: str, payload: Any) -> Any:
        got_reply.set()
        await bare_peer.sio.disconnect(sid, namespace="/ws/agent")

    bare_peer.on("reply", reply)
    agent = _agent(bare_peer, ack_timeout=30)
    try:
        await agent.connect()
        pending = asyncio.create_task(agent.reply("u", "hello"))
        await got_reply.wait()
        with pytest.raises(RelayAgentError) as dropped:
            await asyncio.wait_for(pending, 5)  # not the 30 s ack timeout
        assert (dropped.value.code, dropped.value.retryable) == ("DISCONNECTED", True)
    finally:
        await agent.close()


async def test_retryable_refusals_are_retried_with_backoff_until_accepted(bare_peer: BarePeer) -> None:
    bare_peer.refuse = lambda n: {"code": "SERVER_SHUTTING_DOWN", "retryable": True} if n <= 3 else None
    agent = _agent(bare_peer)
    errors: list[BaseException] = []
    agent.on_error(errors.append)
    try:
        await asyncio.wait_for(agent.connect(), 10)
        assert agent.connected
        assert [(e.code, e.retryable) for e in errors if isinstance(e, RelayAgentError)] == [("SERVER_SHUTTING_DOWN", True)] * 3
        assert bare_peer.handshakes == [{"apiKey": AGENT_KEY, "agentId": "bot"}] * 4
    finally:
        await agent.close()


async def test_a_terminal_refusal_ends_the_retries(bare_peer: BarePeer) -> None:
    bare_peer.refuse = lambda n: {"code": "RATE_LIMITED", "retryable": True} if n == 1 else {"code": "AGENT_NOT_ALLOWED", "retryable": False}
    agent = _agent(bare_peer)
    try:
        with pytest.raises(RelayAgentError) as refused:
            await asyncio.wait_for(agent.connect(), 10)
        assert refused.value.code == "AGENT_NOT_ALLOWED"
        with pytest.raises(RelayAgentError, match="AGENT_NOT_ALLOWED"):
            await agent.wait_closed()
        assert len(bare_peer.handshakes) == 2
    finally:
        await agent.close()


async def test_a_session_closed_with_a_retryable_code_reconnects(bare_peer: BarePeer) -> None:
    agent = _agent(bare_peer)
    connects: asyncio.Queue[None] = asyncio.Queue()
    agent.on_connect(lambda: connects.put_nowait(None))
    try:
        await agent.connect()
        await connects.get()
        sid = await bare_peer.connections.get()
        await bare_peer.emit(sid, "session:closed", {"code": "RATE_LIMITED", "retryable": True})
        await bare_peer.sio.disconnect(sid, namespace="/ws/agent")
        await asyncio.wait_for(connects.get(), 5)
        assert agent.connected and agent.terminal_error is None
    finally:
        await agent.close()


async def test_connect_can_be_cancelled_and_then_stops_retrying() -> None:
    # Nothing listens on this port: every attempt fails below Socket.IO and is retried.
    agent = RelayAgent("http://127.0.0.1:9", AGENT_KEY, "bot", backoff_base=0.01, backoff_cap=0.05)
    errors: list[BaseException] = []
    agent.on_error(errors.append)
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(agent.connect(), 0.5)
    assert errors and all(isinstance(e, RelayAgentError) and e.code == "CONNECT_FAILED" and e.retryable for e in errors)
    await agent.wait_closed()  # returns: the loop ended with the cancellation
    assert not agent.connected


def test_backoff_is_full_jitter_below_an_exponential_bound_with_a_cap() -> None:
    for attempt, bound in ((0, 0.5), (1, 1.0), (3, 4.0), (10, 30.0), (1000, 30.0)):
        delays = [backoff_delay(attempt, 0.5, 30.0) for _ in range(2000)]
        assert all(0 <= d <= bound for d in delays)
        # Full jitter: spread over the whole range, not bunched near the bound.
        assert min(delays) < bound * 0.05 and max(delays) > bound * 0.95
