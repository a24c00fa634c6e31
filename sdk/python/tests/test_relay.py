"""Relaying through a real hub: echo, broadcast, debug, a failing handler, payload limits."""

from __future__ import annotations

import asyncio
import logging
from datetime import timezone
from typing import Any, Callable

import pytest
from hub_process import MAX_MESSAGE_BYTES

from relay_hub_agent import Message, RelayAgent, RelayAgentError, Sent


async def test_echo_bot_answers_with_typed_messages(make_agent: Callable[..., RelayAgent], make_client: Any, bot_id: str) -> None:
    agent = make_agent(bot_id)
    received: list[Message] = []
    sent: asyncio.Queue[Sent] = asyncio.Queue()

    @agent.on_message
    async def echo(message: Message) -> None:
        received.append(message)
        await sent.put(await agent.reply(message.sender, f"echo: {message.text}", data={"n": 1}, reply_to=message.id))

    await agent.connect()
    assert agent.connected
    client = await make_client(bot_id, "alice")
    ack = await client.send("hello", data={"lang": "en"})
    assert ack["ok"] is True
    reply = await client.next("message")

    assert reply["text"] == "echo: hello"
    assert reply["replyTo"] == ack["id"]
    assert reply["data"] == {"n": 1}
    [message] = received
    assert (message.id, message.ts, message.agent_id, message.sender, message.text) == (
        ack["id"],
        ack["ts"],
        bot_id,
        "alice",
        "hello",
    )
    assert message.data == {"lang": "en"}
    assert message.timestamp.tzinfo == timezone.utc
    assert not message.stopped
    receipt = await asyncio.wait_for(sent.get(), 5)
    assert (receipt.id, receipt.ts) == (reply["id"], reply["ts"])


async def test_reply_to_star_reaches_every_client_of_the_bot(
    make_agent: Callable[..., RelayAgent], make_client: Any, bot_id: str
) -> None:
    agent = make_agent(bot_id)
    await agent.connect()
    alice = await make_client(bot_id, "alice")
    bob = await make_client(bot_id, "bob")
    other_bot = await make_client(f"{bot_id}-other", "carol")

    sent = await agent.reply("*", "maintenance at 18:00")

    for client in (alice, bob):
        message = await client.next("message")
        assert (message["id"], message["text"]) == (sent.id, "maintenance at 18:00")
    # The other bot's client got nothing: the next thing it sees is its own bot's broadcast.
    other = make_agent(f"{bot_id}-other")
    await other.connect()
    other_sent = await other.reply("*", "other")
    assert (await other_bot.next("message"))["id"] == other_sent.id


async def test_debug_reaches_admin_clients_only(make_agent: Callable[..., RelayAgent], make_client: Any, bot_id: str) -> None:
    agent = make_agent(bot_id)
    await agent.connect()
    admin = await make_client(bot_id, "root", roles=["ADMIN"])
    user = await make_client(bot_id, "alice")

    await agent.debug({"prompt": "…", "tokens": 12}, client_id="alice")

    trace = await admin.next("debug")
    assert trace["agentId"] == bot_id and trace["clientId"] == "alice"
    assert trace["trace"] == {"prompt": "…", "tokens": 12}
    # The user's tab gets the next reply, and never saw the trace.
    sent = await agent.reply("alice", "after the trace")
    assert (await user.next("message"))["id"] == sent.id
    assert user.pending("debug") == []


async def test_a_handler_that_raises_is_logged_the_message_still_acked_and_the_bot_keeps_running(
    make_agent: Callable[..., RelayAgent], make_client: Any, bot_id: str, caplog: pytest.LogCaptureFixture
) -> None:
    agent = make_agent(bot_id)
    errors: list[BaseException] = []
    agent.on_error(errors.append)

    @agent.on_message
    async def handle(message: Message) -> None:
        if message.text == "boom":
            raise ValueError("the model is down")
        await agent.reply(message.sender, f"echo: {message.text}")

    await agent.connect()
    client = await make_client(bot_id, "alice")
    with caplog.at_level(logging.ERROR, logger="relay_hub_agent"):
        boom = await client.send("boom")
        after = await client.send("still there?")

    assert boom["ok"] is True and after["ok"] is True
    assert (await client.next("message"))["text"] == "echo: still there?"
    assert [type(e) for e in errors] == [ValueError]
    [record] = [r for r in caplog.records if r.exc_info]
    assert boom["id"] in record.getMessage()
    assert agent.connected


async def test_a_reply_over_max_message_bytes_is_refused_with_a_typed_error_and_nothing_is_delivered(
    make_agent: Callable[..., RelayAgent], make_client: Any, bot_id: str
) -> None:
    agent = make_agent(bot_id)
    await agent.connect()
    client = await make_client(bot_id, "alice")

    with pytest.raises(RelayAgentError) as too_large:
        await agent.reply("alice", "x" * (MAX_MESSAGE_BYTES + 1))
    assert (too_large.value.code, too_large.value.retryable) == ("PAYLOAD_TOO_LARGE", False)
    with pytest.raises(RelayAgentError) as data_too_large:
        await agent.reply("alice", "small", data={"blob": "y" * MAX_MESSAGE_BYTES})
    assert data_too_large.value.code == "PAYLOAD_TOO_LARGE"
    with pytest.raises(RelayAgentError) as trace_too_large:
        await agent.debug("z" * (MAX_MESSAGE_BYTES + 1))
    assert trace_too_large.value.code == "PAYLOAD_TOO_LARGE"
    with pytest.raises(RelayAgentError) as invalid:
        await agent.reply("", "to nobody")
    assert (invalid.value.code, invalid.value.retryable) == ("INVALID_PAYLOAD", False)

    # Nothing of the refused replies reached the client, and the connection is still usable.
    sent = await agent.reply("alice", "x" * MAX_MESSAGE_BYTES)
    assert (await client.next("message"))["id"] == sent.id
    assert client.pending("message") == []
    assert agent.connected


async def test_arguments_that_are_not_text_are_refused_before_sending(make_agent: Callable[..., RelayAgent], bot_id: str) -> None:
    agent = make_agent(bot_id)
    await agent.connect()
    with pytest.raises(TypeError):
        await agent.reply("alice", 42)  # type: ignore[arg-type]


async def test_the_agent_serves_several_users_at_once(make_agent: Callable[..., RelayAgent], make_client: Any, bot_id: str) -> None:
    agent = make_agent(bot_id)
    gate = asyncio.Event()

    @agent.on_message
    async def slow_for_alice(message: Message) -> None:
        if message.sender == "alice":
            await gate.wait()  # alice's answer takes long; bob must not wait for it
        await agent.reply(message.sender, f"hi {message.sender}")

    await agent.connect()
    alice = await make_client(bot_id, "alice")
    bob = await make_client(bot_id, "bob")
    await alice.send("question")
    await bob.send("question")
    assert (await bob.next("message"))["text"] == "hi bob"
    gate.set()
    assert (await alice.next("message"))["text"] == "hi alice"
