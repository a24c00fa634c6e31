"""The recorded model streams of test/fixtures/model-streams, read as a client library would see them."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

FIXTURES = Path(__file__).resolve().parents[3] / "test" / "fixtures" / "model-streams"


def sse_events(path: Path) -> list[tuple[str | None, str]]:
    """The (event name, data) pairs of a recorded server-sent-event stream."""
    events: list[tuple[str | None, str]] = []
    for block in path.read_text(encoding="utf-8").split("\n\n"):
        name: str | None = None
        data: list[str] = []
        for line in block.splitlines():
            if line.startswith("event:"):
                name = line[len("event:") :].strip()
            elif line.startswith("data:"):
                data.append(line[len("data:") :].lstrip())
        if data:
            events.append((name, "\n".join(data)))
    return events


def openai_chunks(name: str) -> list[dict[str, Any]]:
    """The JSON chunks of recording ``openai/<name>.sse`` (the final ``[DONE]`` left out, as clients do)."""
    return [json.loads(data) for _, data in sse_events(FIXTURES / "openai" / f"{name}.sse") if data != "[DONE]"]


def anthropic_events(name: str) -> list[dict[str, Any]]:
    """The JSON events of recording ``anthropic/<name>.sse``."""
    return [json.loads(data) for _, data in sse_events(FIXTURES / "anthropic" / f"{name}.sse")]


def as_objects(value: Any) -> Any:
    """``value`` with every dict turned into an object with attributes, as the client libraries return."""
    if isinstance(value, dict):
        return SimpleNamespace(**{key: as_objects(item) for key, item in value.items()})
    if isinstance(value, list):
        return [as_objects(item) for item in value]
    return value


async def aiter_of(items: Iterable[Any]) -> AsyncIterator[Any]:
    """``items`` as an async iterator, as the async clients stream them."""
    for item in items:
        yield item
