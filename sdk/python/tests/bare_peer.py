"""A bare Socket.IO server standing in for the hub, for what a real hub does not do on demand:
deliver one message id twice, answer with any error code, never answer, refuse and then accept."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import socketio  # type: ignore[import]
from aiohttp import web

AGENT_NAMESPACE = "/ws/agent"


class BarePeer:
    """python-socketio's AsyncServer on aiohttp, listening on 127.0.0.1 and a free port."""

    def __init__(self) -> None:
        self.sio = socketio.AsyncServer(async_mode="aiohttp", logger=False, engineio_logger=False)
        self.app = web.Application()
        self.sio.attach(self.app)
        self.runner = web.AppRunner(self.app)
        self.url = ""
        #: sids of the agent sockets that connected, in order.
        self.connections: asyncio.Queue[str] = asyncio.Queue()
        #: The auth objects of every handshake, refused ones included.
        self.handshakes: list[Any] = []
        self.refuse: Callable[[int], Any] | None = None

        async def connect(sid: str, environ: Any, auth: Any = None) -> None:
            self.handshakes.append(auth)
            refusal = self.refuse(len(self.handshakes)) if self.refuse is not None else None
            if refusal is not None:
                raise socketio.exceptions.ConnectionRefusedError(refusal["code"], refusal)
            await self.connections.put(sid)

        self.sio.on("connect", connect, namespace=AGENT_NAMESPACE)

    def on(self, event: str, handler: Callable[..., Awaitable[Any]]) -> None:
        """``handler(sid, payload)``; what it returns is the ack."""
        self.sio.on(event, handler, namespace=AGENT_NAMESPACE)

    async def call(self, sid: str, event: str, payload: Any, timeout: float = 5.0) -> Any:
        """Emits to the agent and returns its ack."""
        return await self.sio.call(event, payload, to=sid, namespace=AGENT_NAMESPACE, timeout=timeout)

    async def emit(self, sid: str, event: str, payload: Any) -> None:
        await self.sio.emit(event, payload, to=sid, namespace=AGENT_NAMESPACE)

    async def start(self) -> BarePeer:
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def close(self) -> None:
        if AGENT_NAMESPACE in self.sio.manager.rooms:
            for sid, _ in list(self.sio.manager.get_participants(AGENT_NAMESPACE, None)):
                await self.sio.disconnect(sid, namespace=AGENT_NAMESPACE)
        await self.runner.cleanup()
        # The Engine.IO server keeps a service task and ping timers that it never stops by itself.
        leftovers = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and _is_server_task(t)]
        for task in leftovers:
            task.cancel()
        await asyncio.gather(*leftovers, return_exceptions=True)


def _is_server_task(task: asyncio.Task[Any]) -> bool:
    code = getattr(task.get_coro(), "cr_code", None)
    filename = code.co_filename if code is not None else ""
    return "/engineio/asyncio_server" in filename or "/engineio/asyncio_socket" in filename or "/aiohttp/web_" in filename


class StreamingPeer:
    """The hub's side of streamed replies on a :class:`BarePeer`, recording what the agent sends.

    ``hold_deltas`` (an Event) keeps delta acks back until set, as a slow hub would; ``refuse``
    lists codes to answer the next deltas with, one per delta.
    """

    def __init__(self, peer: BarePeer) -> None:
        self.peer = peer
        self.starts: list[dict[str, Any]] = []
        self.deltas: list[dict[str, Any]] = []
        self.ends: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.activities: list[dict[str, Any]] = []
        self.hold_deltas: asyncio.Event | None = None
        self.refuse: list[str] = []
        self.delta_arrived = asyncio.Event()
        self._seq: dict[str, int] = {}

        async def start(sid: str, payload: dict[str, Any]) -> dict[str, Any]:
            self.starts.append(payload)
            id_ = f"stream-{len(self.starts)}"
            self._seq[id_] = 0
            return {"ok": True, "id": id_, "ts": "2025-01-02T03:04:05.678Z"}

        async def delta(sid: str, payload: dict[str, Any]) -> dict[str, Any]:
            self.delta_arrived.set()
            if self.hold_deltas is not None:
                await self.hold_deltas.wait()
            if self.refuse:
                code = self.refuse.pop(0)
                return {"ok": False, "error": {"code": code, "message": code}}
            self.deltas.append(payload)
            self._seq[payload["id"]] += 1
            return {"ok": True, "seq": self._seq[payload["id"]]}

        async def end(sid: str, payload: dict[str, Any]) -> dict[str, Any]:
            await self.ends.put(payload)
            return {"ok": True, "id": payload["id"], "ts": "2025-01-02T03:04:06.000Z"}

        async def activity(sid: str, payload: dict[str, Any]) -> dict[str, Any]:
            self.activities.append(payload)
            return {"ok": True}

        for event, handler in (("stream:start", start), ("stream:delta", delta), ("stream:end", end), ("activity", activity)):
            peer.on(event, handler)

    def text(self, stream_id: str) -> str:
        """The text the hub accumulated for a stream: its deltas, in order."""
        return "".join(d["text"] for d in self.deltas if d["id"] == stream_id)
