"""Human handoff through a real hub (docs/handoff.md): handoff, control changes, observed messages, ConversationHeld."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from typing import Any, Callable

import pytest
from hub_process import ADMIN_JWT_SECRET, HubProcess, mint_token

from relay_hub_agent import ControlChange, ConversationHeld, Message, RelayAgent, RelayAgentError


def _post(hub: HubProcess, path: str, token: str) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(f"{hub.url}{path}", method="POST", headers={"authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


async def test_handoff_takeover_observed_and_hand_back(
    hub: HubProcess, make_agent: Callable[..., RelayAgent], make_client: Any, bot_id: str
) -> None:
    agent = make_agent(bot_id)
    changes: asyncio.Queue[ControlChange] = asyncio.Queue()
    messages: asyncio.Queue[Message] = asyncio.Queue()

    @agent.on_control
    async def control(change: ControlChange) -> None:
        await changes.put(change)

    @agent.on_message
    async def handle(message: Message) -> None:
        await messages.put(message)

    await agent.connect()
    client = await make_client(bot_id, "alice")
    await agent.handoff("alice", reason="refund", summary="wants money back")
    waiting = await asyncio.wait_for(changes.get(), 5)
    assert (waiting.client_id, waiting.control, waiting.reason, waiting.summary) == ("alice", "waiting", "refund", "wants money back")

    operator = mint_token({"sub": "ana", "name": "Ana", "roles": ["OPERATOR"], "agentIds": [bot_id]}, ADMIN_JWT_SECRET)
    status, _ = await asyncio.to_thread(_post, hub, f"/agents/{bot_id}/conversations/alice/takeover", operator)
    assert status == 200
    held = await asyncio.wait_for(changes.get(), 5)
    assert (held.control, held.operator) == ("human", "Ana")

    with pytest.raises(ConversationHeld) as refused:
        await agent.reply("alice", "I can help")
    assert refused.value.code == "CONVERSATION_HELD" and not refused.value.retryable
    assert isinstance(refused.value, RelayAgentError)
    with pytest.raises(ConversationHeld):
        async with agent.stream("alice") as s:
            await s.write("never")
    with pytest.raises(ConversationHeld):
        await agent.handoff("alice")

    await client.send("hello?")
    observed = await asyncio.wait_for(messages.get(), 5)
    assert (observed.text, observed.observed) == ("hello?", True)

    status, _ = await asyncio.to_thread(_post, hub, f"/agents/{bot_id}/conversations/alice/release", operator)
    assert status == 200
    back = await asyncio.wait_for(changes.get(), 5)
    assert (back.control, back.operator) == ("bot", None)
    await agent.reply("alice", "back")
    await client.send("thanks")
    answered = await asyncio.wait_for(messages.get(), 5)
    assert (answered.text, answered.observed) == ("thanks", False)
