"""Connecting, staying connected and stopping: terminal codes, revoked keys, a hub restart."""

from __future__ import annotations

import asyncio
from typing import Any, Callable

import aiohttp
import pytest
from hub_process import HubProcess, admin_token

from relay_hub_agent import Message, RelayAgent, RelayAgentError


async def test_a_wrong_key_fails_connect_with_a_terminal_typed_error(make_agent: Callable[..., RelayAgent], bot_id: str) -> None:
    agent = make_agent(bot_id, api_key="wrong")
    errors: list[BaseException] = []
    agent.on_error(errors.append)

    with pytest.raises(RelayAgentError) as refused:
        await agent.connect()

    assert (refused.value.code, refused.value.retryable) == ("API_KEY_INVALID", False)
    assert errors == [refused.value]
    assert not agent.connected
    assert agent.terminal_error is refused.value
    with pytest.raises(RelayAgentError, match="API_KEY_INVALID"):
        await agent.wait_closed()


async def test_a_bad_agent_id_is_terminal_too(make_agent: Callable[..., RelayAgent]) -> None:
    with pytest.raises(RelayAgentError) as refused:
        await make_agent("not a valid id!").connect()
    assert (refused.value.code, refused.value.retryable) == ("AGENT_ID_INVALID", False)


async def _create_key(url: str, agent_ids: list[str]) -> dict[str, Any]:
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {admin_token()}"}) as http:
        body = {"name": "python runtime", "scopes": ["agent:connect"], "agentIds": agent_ids}
        async with http.post(f"{url}/api-keys", json=body) as res:
            assert res.status == 201, await res.text()
            created: dict[str, Any] = (await res.json())["data"]
            return created


async def test_a_managed_key_for_another_bot_is_refused_agent_not_allowed(
    hub: HubProcess, make_agent: Callable[..., RelayAgent], bot_id: str
) -> None:
    key = await _create_key(hub.url, [f"{bot_id}-other"])
    with pytest.raises(RelayAgentError) as refused:
        await make_agent(bot_id, api_key=key["key"]).connect()
    assert (refused.value.code, refused.value.retryable) == ("AGENT_NOT_ALLOWED", False)


async def test_a_revoked_key_stops_the_agent_with_api_key_revoked(
    hub: HubProcess, make_agent: Callable[..., RelayAgent], make_client: Any, bot_id: str
) -> None:
    key = await _create_key(hub.url, [bot_id])
    agent = make_agent(bot_id, api_key=key["key"])
    errors: list[BaseException] = []
    agent.on_error(errors.append)
    await agent.connect()
    client = await make_client(bot_id, "alice")
    sent = await agent.reply("alice", "served with a managed key")
    assert (await client.next("message"))["id"] == sent.id

    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {admin_token()}"}) as http:
        async with http.delete(f"{hub.url}/api-keys/{key['id']}") as res:
            assert res.status == 200, await res.text()

    with pytest.raises(RelayAgentError) as stopped:
        await asyncio.wait_for(agent.wait_closed(), 10)
    assert (stopped.value.code, stopped.value.retryable) == ("API_KEY_REVOKED", False)
    assert errors == [stopped.value]
    assert not agent.connected
    # It stopped for good: sending now fails at once instead of waiting for a reconnection.
    with pytest.raises(RelayAgentError) as closed:
        await agent.reply("alice", "still there?")
    assert closed.value.code == "CLOSED"


async def test_the_agent_reconnects_by_itself_after_the_hub_restarts(bot_id: str, make_client: Any) -> None:
    hub = await asyncio.to_thread(HubProcess().start)
    agent = RelayAgent(hub.url, "python-sdk-agent-key-0123456789", bot_id, backoff_base=0.05, backoff_cap=0.5)
    connects: asyncio.Queue[None] = asyncio.Queue()
    disconnects: asyncio.Queue[None] = asyncio.Queue()
    errors: list[BaseException] = []
    agent.on_connect(lambda: connects.put_nowait(None))
    agent.on_disconnect(lambda: disconnects.put_nowait(None))
    agent.on_error(errors.append)

    @agent.on_message
    async def echo(message: Message) -> None:
        await agent.reply(message.sender, f"echo: {message.text}")

    try:
        await agent.connect()
        await asyncio.wait_for(connects.get(), 5)
        await asyncio.to_thread(hub.stop)
        await asyncio.wait_for(disconnects.get(), 10)
        assert not agent.connected
        await asyncio.to_thread(hub.start)  # the same port, a fresh process

        await asyncio.wait_for(connects.get(), 15)
        assert agent.connected
        client = await make_client(bot_id, "alice", url=hub.url)
        assert (await client.send("are you back?"))["ok"] is True
        assert (await client.next("message"))["text"] == "echo: are you back?"
        # Attempts while the hub was down failed and were retried; none was terminal.
        assert all(isinstance(e, RelayAgentError) and e.retryable for e in errors)
    finally:
        await agent.close()
        await asyncio.to_thread(hub.close)
