"""The part operations the model-stream adapters yield, and what the adapters share: reading a
chunk's fields whatever its shape, a tool call's input once complete."""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, Union

#: A message part as the hub carries it (docs/python-sdk.md#model-stream-adapters).
Part = dict[str, Any]


@dataclass(frozen=True)
class OpenPart:
    """Opens a new part. ``slot`` numbers the parts one adapter opened, from 0 in order."""

    slot: int
    part: Mapping[str, Any]


@dataclass(frozen=True)
class AppendText:
    """Appends ``text`` to part ``slot``: a text or reasoning part's text, or a tool part's raw input JSON."""

    slot: int
    text: str


@dataclass(frozen=True)
class UpdatePart:
    """Merges ``fields`` into part ``slot`` (a tool call's input became available, or failed)."""

    slot: int
    fields: Mapping[str, Any]


#: One step of building an answer's parts.
PartOp = Union[OpenPart, AppendText, UpdatePart]


def get_field(obj: Any, name: str) -> Any:
    """``obj[name]`` for a mapping, ``obj.name`` otherwise; ``None`` when absent."""
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def parse_input(raw: str) -> tuple[bool, Any]:
    """A tool call's arguments as JSON; an empty string is an empty object (a tool without parameters)."""
    if raw.strip() == "":
        return True, {}
    try:
        return True, json.loads(raw)
    except ValueError:
        return False, None


def input_done(slot: int, raw: str) -> UpdatePart:
    """What ends a tool call's streamed input: the input parsed, or an error when it is not JSON."""
    ok, value = parse_input(raw)
    if ok:
        return UpdatePart(slot, {"state": "input-available", "input": value})
    return UpdatePart(slot, {"state": "output-error", "errorText": f"the model's tool input is not valid JSON: {raw[:200]}"})


class Translator(Protocol):
    """One provider's mapping (``_openai.py``, ``_anthropic.py``): the ops of each chunk, then those
    of the stream's end; its ``finish_reason`` attribute, when set, is :attr:`PartOps.finish_reason`."""

    def feed(self, chunk: Any) -> list[PartOp]: ...

    def close(self) -> list[PartOp]: ...


class PartOps:
    """The part operations of one model stream: iterate it (``for`` over a sync source, ``async for``
    over either). :attr:`finish_reason` is the model's reason for stopping once the stream is read."""

    def __init__(self, source: Iterable[Any] | AsyncIterable[Any], translator: Translator) -> None:
        self._source = source
        self._translator = translator
        self._used = False

    @property
    def finish_reason(self) -> str | None:
        """``stop``, ``length``, ``tool_calls`` (OpenAI) or ``end_turn``, ``tool_use``… (Anthropic)."""
        reason = getattr(self._translator, "finish_reason", None)
        return reason if isinstance(reason, str) else None

    def _claim(self) -> None:
        if self._used:
            raise RuntimeError("a model stream can be read once")
        self._used = True

    def __iter__(self) -> Iterator[PartOp]:
        if not isinstance(self._source, Iterable):
            raise TypeError("this model stream is asynchronous: use `async for`")
        self._claim()
        for chunk in self._source:
            yield from self._translator.feed(chunk)
        yield from self._translator.close()

    async def __aiter__(self) -> AsyncIterator[PartOp]:
        self._claim()
        if isinstance(self._source, AsyncIterable):
            async for chunk in self._source:
                for op in self._translator.feed(chunk):
                    yield op
        else:
            for chunk in self._source:
                for op in self._translator.feed(chunk):
                    yield op
        for op in self._translator.close():
            yield op
