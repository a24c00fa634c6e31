"""What the agent tells the bot's own code about itself: the errors it reports (``on_error``) and its
connections (``on_connect``, ``on_disconnect``). A handler may be a plain or a coroutine function;
one that raises is logged and never stops the agent."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from .errors import RelayAgentError

#: Called with every error the agent reports: refused or failed connection attempts, a terminal
#: code, a handler that raised. May be a plain function or a coroutine function.
ErrorHandler = Callable[[BaseException], "Awaitable[None] | None"]
Hook = Callable[[], "Awaitable[None] | None"]


class Hooks:
    """The agent's error handler and connection hooks; ``spawn`` runs what a coroutine one returns
    in a task the agent cancels when it closes."""

    def __init__(self, *, spawn: Callable[[Awaitable[Any]], object], logger: logging.Logger) -> None:
        self.error_handler: ErrorHandler | None = None
        self.connect_hook: Hook | None = None
        self.disconnect_hook: Hook | None = None
        self._spawn = spawn
        self._log = logger

    def report(self, error: BaseException) -> None:
        """Hands ``error`` to the error handler, if there is one."""
        if self.error_handler is None:
            return
        try:
            result = self.error_handler(error)
        except Exception:
            self._log.exception("the on_error handler raised")
            return
        if inspect.isawaitable(result):
            self._spawn(_logged(result, self._log, "on_error"))

    def connection_error(self, error: RelayAgentError) -> None:
        """A refused or failed connection attempt: retried when ``retryable``, else the agent stopped."""
        if error.retryable:
            self._log.info("connection attempt failed, retrying: %s", error)
        else:
            self._log.error("stopped: %s", error)
        self.report(error)

    def connected(self) -> None:
        self._call(self.connect_hook)

    def disconnected(self) -> None:
        self._call(self.disconnect_hook)

    def _call(self, hook: Hook | None) -> None:
        if hook is None:
            return
        try:
            result = hook()
        except Exception:
            self._log.exception("a connection hook raised")
            return
        if inspect.isawaitable(result):
            self._spawn(_logged(result, self._log, "connection"))


async def _logged(work: Awaitable[Any], log: logging.Logger, what: str) -> None:
    try:
        await work
    except Exception:
        log.exception("the %s hook raised", what)
