"""A browser-side peer of the hub: python-socketio's AsyncClient on /ws/client with a JWT."""

from __future__ import annotations

import asyncio
import uuid
from collections import defaultdict
from typing import Any

import aiohttp
import socketio  # type: ignore[import]

from hub_process import mint_token

CLIENT_NAMESPACE = "/ws/client"


class ClientPeer:
    """One browser tab of user ``sub`` chatting with bot ``agent_id``; every event it gets is queued by name."""

    def __init__(self, url: str, agent_id: str, sub: str, **claims: Any) -> None:
        self.url = url
        self.agent_id = agent_id
        self.sub = sub
        self.claims = claims
        self.events: defaultdict[str, asyncio.Queue[Any]] = defaultdict(asyncio.Queue)
        self.http: aiohttp.ClientSession | None = None
        self.sio = socketio.AsyncClient(reconnection=False, handle_sigint=False)

        async def any_event(event: str, *args: Any) -> None:
            await self.events[event].put(args[0] if args else None)

        self.sio.on("*", any_event, namespace=CLIENT_NAMESPACE)

    async def connect(self) -> ClientPeer:
        token = mint_token({"sub": self.sub, **self.claims})
        # Our own HTTP session, closed by close() even when the hub ended the connection first.
        self.http = self.sio.eio.http = aiohttp.ClientSession()
        await self.sio.connect(
            self.url,
            auth={"token": token, "agentId": self.agent_id},
            transports=["websocket"],
            namespaces=[CLIENT_NAMESPACE],
            wait_timeout=5,
        )
        return self

    async def next(self, event: str, timeout: float = 5.0) -> Any:
        """The next ``event`` payload this tab got (waits up to ``timeout``)."""
        return await asyncio.wait_for(self.events[event].get(), timeout)

    def pending(self, event: str) -> list[Any]:
        """The ``event`` payloads received and not yet taken."""
        queue = self.events[event]
        out = []
        while not queue.empty():
            out.append(queue.get_nowait())
        return out

    async def call(self, event: str, payload: Any, timeout: float = 10.0) -> Any:
        return await self.sio.call(event, payload, namespace=CLIENT_NAMESPACE, timeout=timeout)

    async def send(self, text: str, client_message_id: str | None = None, **extra: Any) -> Any:
        """C→H ``message``; returns the hub's ack."""
        payload = {"clientMessageId": client_message_id or uuid.uuid4().hex, "text": text, **extra}
        return await self.call("message", payload)

    async def close(self) -> None:
        await self.sio.disconnect()
        if self.http is not None:
            await self.http.close()

    async def __aenter__(self) -> ClientPeer:
        return await self.connect()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
