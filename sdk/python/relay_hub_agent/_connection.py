"""One agent runtime's connection to the hub: handshake, reconnect loop, acks.

Each attempt gets a fresh Socket.IO client (websocket only, no reconnection of its own), so no state
of a dead connection leaks into the next one; this loop owns retrying, with exponential backoff and
full jitter, and stops on a terminal code.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import aiohttp
import socketio  # type: ignore[import]

from . import _protocol
from .errors import RelayAgentError, ack_error, local_error

#: A handler of an H→A event; what it returns is the ack when the hub asked for one.
EventHandler = Callable[[Any], Awaitable[Any]]


def backoff_delay(attempt: int, base: float, cap: float) -> float:
    """Full jitter: uniform in ``[0, min(cap, base · 2^attempt)]`` seconds."""
    return random.uniform(0, min(cap, base * 2 ** min(attempt, 32)))


def handshake_error(data: Any) -> RelayAgentError:
    """The error of a refused handshake (``connect_error``), retryable as the hub said."""
    detail = data.get("data") if isinstance(data, dict) else None
    if isinstance(detail, dict) and isinstance(detail.get("code"), str):
        code: str = detail["code"]
        retryable = detail.get("retryable")
        if not isinstance(retryable, bool):
            retryable = _protocol.HANDSHAKE_CODES.get(code, True)
        return RelayAgentError(code, f"handshake refused: {code}", retryable)
    # Refused before the Socket.IO handshake (connection limits, a draining replica): retry.
    message = data.get("message") if isinstance(data, dict) else data
    return local_error("CONNECT_FAILED", f"connection failed: {message}")


class Connection:
    """Keeps one runtime connected; see :class:`relay_hub_agent.RelayAgent` for the behaviour."""

    def __init__(
        self,
        *,
        url: str,
        auth: Mapping[str, str],
        path: str,
        backoff_base: float,
        backoff_cap: float,
        handshake_timeout: float,
        handlers: Mapping[str, EventHandler],
        on_connect: Callable[[], None],
        on_disconnect: Callable[[], None],
        on_error: Callable[[RelayAgentError], None],
        logger: logging.Logger,
    ) -> None:
        self._url = url.rstrip("/")
        self._auth = dict(auth)
        self._socketio_path = f"{path.strip('/')}/socket.io".lstrip("/")
        self._backoff = (backoff_base, backoff_cap)
        self._handshake_timeout = handshake_timeout
        self._handlers = handlers
        self._on_connect = on_connect
        self._on_disconnect = on_disconnect
        self._on_error = on_error
        self._log = logger
        self._client: Any = None
        self._connected = asyncio.Event()
        self._closing = asyncio.Event()
        self._pending: set[asyncio.Future[Any]] = set()
        self._task: asyncio.Task[None] | None = None
        self._first: asyncio.Future[None] | None = None
        self.terminal: RelayAgentError | None = None
        #: Counts successful handshakes; a stream belongs to the connection it started on.
        self.generation = 0

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    @property
    def closed(self) -> bool:
        return self._closing.is_set()

    async def start(self) -> None:
        """Starts the loop; returns on the first handshake, raises a terminal refusal."""
        if self._task is None:
            self._first = asyncio.get_running_loop().create_future()
            self._task = asyncio.create_task(self._run(), name="relay-hub-agent connection")
        assert self._first is not None
        try:
            await asyncio.shield(self._first)
        except asyncio.CancelledError:
            await self.close()
            raise

    async def close(self) -> None:
        """Disconnects, stops retrying, fails pending acks with ``CLOSED``."""
        self._closing.set()
        if self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.disconnect()
        if self._task is not None and self._task is not asyncio.current_task():
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._fail_pending(local_error("CLOSED", "the agent was closed"))
        self._settle_first(local_error("CLOSED", "the agent was closed before it connected"))

    async def wait_stopped(self) -> None:
        """Returns once the loop ended (close() or a terminal code)."""
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(self._task)

    async def call(self, event: str, payload: Mapping[str, Any], timeout: float) -> Any:
        """Sends and returns the hub's ack.

        Waits up to ``timeout`` for a connection first (as a Socket.IO client buffers while it
        reconnects). Raises ``CLOSED``, ``DISCONNECTED`` (the connection dropped before the ack) or
        ``ACK_TIMEOUT``.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        if self.closed:
            raise local_error("CLOSED", "the agent was closed")
        if not self.connected:
            try:
                await asyncio.wait_for(self._wait_connected(), timeout)
            except asyncio.TimeoutError:
                raise local_error("DISCONNECTED", f"{event}: not connected to the hub within {timeout}s") from None
        future: asyncio.Future[Any] = loop.create_future()

        def on_ack(*args: Any) -> None:
            if not future.done():
                future.set_result(args[0] if args else None)

        client = self._client
        if client is None or not self.connected:
            raise local_error("DISCONNECTED", f"{event}: the connection to the hub dropped")
        self._pending.add(future)
        try:
            try:
                await client.emit(event, dict(payload), namespace=_protocol.AGENT_NAMESPACE, callback=on_ack)
            except socketio.exceptions.SocketIOError as exc:  # the namespace went away meanwhile
                raise local_error("DISCONNECTED", f"{event}: {exc}") from None
            return await asyncio.wait_for(asyncio.shield(future), max(0.0, deadline - loop.time()))
        except asyncio.TimeoutError:
            raise local_error("ACK_TIMEOUT", f"{event}: no answer from the hub within {timeout}s") from None
        finally:
            self._pending.discard(future)
            if not future.done():
                future.cancel()

    async def request(self, event: str, payload: Mapping[str, Any], timeout: float) -> dict[str, Any]:
        """Sends as :meth:`call` does and returns the hub's ack when it says ``ok``; raises the
        hub's refusal as a :class:`RelayAgentError` otherwise."""
        ack = await self.call(event, payload, timeout)
        if not isinstance(ack, dict) or ack.get("ok") is not True:
            raise ack_error(ack.get("error") if isinstance(ack, dict) else None)
        return ack

    async def _wait_connected(self) -> None:
        while not self.connected:
            if self.closed:
                raise local_error("CLOSED", "the agent was closed")
            closing = asyncio.create_task(self._closing.wait())
            connected = asyncio.create_task(self._connected.wait())
            try:
                await asyncio.wait({closing, connected}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                closing.cancel()
                connected.cancel()

    async def _run(self) -> None:
        attempt = 0
        try:
            while not self.closed:
                if await self._attempt():
                    attempt = 0
                if self.terminal is not None or self.closed:
                    break
                delay = backoff_delay(attempt, *self._backoff)
                attempt += 1
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._closing.wait(), delay)
        finally:
            self._closing.set()
            if self.terminal is not None:
                self._settle_first(self.terminal)

    async def _attempt(self) -> bool:
        """One connection, from handshake to disconnect. True when the handshake succeeded."""
        loop = asyncio.get_running_loop()
        outcome: asyncio.Future[RelayAgentError | None] = loop.create_future()
        gone = asyncio.Event()
        http = aiohttp.ClientSession()
        client = socketio.AsyncClient(reconnection=False, handle_sigint=False, http_session=http)
        ns = _protocol.AGENT_NAMESPACE

        def settle(result: RelayAgentError | None) -> None:
            if not outcome.done():
                outcome.set_result(result)

        async def on_connect() -> None:
            settle(None)

        async def on_connect_error(data: Any = None) -> None:
            settle(handshake_error(data))

        async def on_session_closed(info: Any) -> None:
            code = info.get("code") if isinstance(info, dict) else None
            if not isinstance(code, str):
                return
            retryable = info.get("retryable")
            if not isinstance(retryable, bool):
                retryable = _protocol.SESSION_CLOSED_CODES.get(code, True)
            self._log.warning("session closed by the hub: %s (retryable: %s)", code, retryable)
            if not retryable:
                # The hub will not take this session back (API_KEY_REVOKED): retrying would be refused.
                self.terminal = RelayAgentError(code, f"session closed by the hub: {code}", False)
                gone.set()

        # The engine's disconnect is the one signal that always comes, whether or not the namespace
        # had connected; wrap the Socket.IO client's own handler so both run.
        socketio_on_eio_disconnect = client._handle_eio_disconnect

        async def on_eio_disconnect(*args: Any) -> None:
            try:
                await socketio_on_eio_disconnect(*args)
            finally:
                gone.set()
                settle(local_error("DISCONNECTED", "the connection closed during the handshake"))

        client.eio.on("disconnect", on_eio_disconnect)
        client.on("connect", on_connect, namespace=ns)
        client.on("connect_error", on_connect_error, namespace=ns)
        client.on(_protocol.SESSION_CLOSED, on_session_closed, namespace=ns)
        for event, handler in self._handlers.items():
            client.on(event, handler, namespace=ns)

        self._client = client
        try:
            try:
                await client.connect(
                    self._url,
                    auth=self._auth,
                    transports=["websocket"],
                    namespaces=[ns],
                    socketio_path=self._socketio_path,
                    wait=False,
                )
                error = await asyncio.wait_for(asyncio.shield(outcome), self._handshake_timeout)
            except asyncio.TimeoutError:
                error = local_error("CONNECT_FAILED", f"no handshake answer within {self._handshake_timeout}s")
            except socketio.exceptions.ConnectionError as exc:
                error = local_error("CONNECT_FAILED", f"connection failed: {exc}")
            if error is not None:
                if not error.retryable:
                    self.terminal = error
                self._on_error(error)
                return False
            if self.closed:
                return True
            self.generation += 1
            self._connected.set()
            self._settle_first(None)
            self._on_connect()
            closing = asyncio.create_task(self._closing.wait())
            dropped = asyncio.create_task(gone.wait())
            try:
                await asyncio.wait({closing, dropped}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                closing.cancel()
                dropped.cancel()
            self._connected.clear()
            self._fail_pending(local_error("DISCONNECTED", "the connection to the hub dropped before its answer"))
            self._on_disconnect()
            if self.terminal is not None:
                self._on_error(self.terminal)
            return True
        finally:
            self._connected.clear()
            self._client = None
            with contextlib.suppress(Exception):
                await client.disconnect()
            await http.close()

    def _fail_pending(self, error: RelayAgentError) -> None:
        for future in list(self._pending):
            if not future.done():
                future.set_exception(error)
        self._pending.clear()

    def _settle_first(self, error: RelayAgentError | None) -> None:
        if self._first is not None and not self._first.done():
            if error is None:
                self._first.set_result(None)
            else:
                self._first.set_exception(error)
                self._first.exception()  # nobody may be waiting any more (connect() was cancelled)
