"""A stand-in for the ``openai`` package's streaming chat interface, for the example bot's test only.

The real client cannot be installed on this project's machines (no package index besides Debian's
is reachable), so ``tests/test_examples.py`` runs ``examples/openai-python-bot/bot.py`` as it is with
this directory first on ``PYTHONPATH``. It speaks real HTTP and SSE to the fake endpoint
(test/helpers/fake-openai.cjs) and hands back what the client's ``AsyncStream`` yields: chunk objects
with attribute access, extra fields such as ``reasoning_content`` included.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import aiohttp


class AsyncStream:
    """The chunks of one streamed completion; ``close()`` ends the HTTP request."""

    def __init__(self, session: aiohttp.ClientSession, response: aiohttp.ClientResponse) -> None:
        self._session = session
        self.response = response

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._chunks()

    async def _chunks(self) -> AsyncIterator[Any]:
        async for raw in self.response.content:
            line = raw.decode("utf-8").strip()
            if not line.startswith("data:"):
                continue
            data = line[len("data:") :].strip()
            if data == "[DONE]":
                return
            yield json.loads(data, object_hook=lambda fields: SimpleNamespace(**fields))

    async def close(self) -> None:
        self.response.close()
        await self._session.close()


class _Completions:
    def __init__(self, base_url: str, api_key: str | None) -> None:
        self._base_url = base_url.rstrip("/")
        self._api_key = api_key

    async def create(self, *, model: str, messages: list[dict[str, Any]], stream: bool = False, **options: Any) -> AsyncStream:
        if not stream:
            raise NotImplementedError("the stand-in only streams")
        session = aiohttp.ClientSession()
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        response = await session.post(
            f"{self._base_url}/chat/completions",
            json={"model": model, "messages": messages, "stream": True, **options},
            headers=headers,
        )
        if response.status != 200:
            body = await response.text()
            await session.close()
            raise RuntimeError(f"{response.status}: {body}")
        return AsyncStream(session, response)


class AsyncOpenAI:
    """``AsyncOpenAI(base_url=..., api_key=...).chat.completions.create(..., stream=True)``."""

    def __init__(self, *, base_url: str, api_key: str | None = None) -> None:
        self.chat = SimpleNamespace(completions=_Completions(base_url, api_key))
