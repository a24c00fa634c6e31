"""examples/openai-python-bot/bot.py as it is, against the fake OpenAI-compatible endpoint replaying
recorded streams (test/helpers/fake-openai.cjs) and a real hub. The ``openai`` package cannot be
installed here: ``tests/stand_ins/openai`` stands in for its streaming interface, over real HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from client_peer import ClientPeer
from hub_process import AGENT_KEY, HubProcess

ROOT = Path(__file__).resolve().parents[3]
BOT = ROOT / "examples" / "openai-python-bot" / "bot.py"
STAND_INS = Path(__file__).resolve().parent / "stand_ins"


async def start_fake_openai(delay_ms: int = 0) -> tuple[asyncio.subprocess.Process, str]:
    node = os.environ.get("NODE", "node")
    process = await asyncio.create_subprocess_exec(
        node,
        str(ROOT / "test" / "helpers" / "fake-openai.cjs"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "FAKE_OPENAI_DELAY_MS": str(delay_ms)},
    )
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), 10)
    return process, str(json.loads(line)["url"])


async def stop_process(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        process.terminate()
        await asyncio.wait_for(process.wait(), 10)


@pytest.fixture
async def example(hub: HubProcess, bot_id: str) -> AsyncIterator[Callable[[int], Awaitable[None]]]:
    """``await example(delay_ms)``: the fake endpoint and the example bot, connected to the hub as ``bot_id``."""
    processes: list[asyncio.subprocess.Process] = []

    async def start(delay_ms: int = 0) -> None:
        fake, url = await start_fake_openai(delay_ms)
        processes.append(fake)
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(STAND_INS), str(ROOT / "sdk" / "python")]),
            "RELAY_HUB_URL": hub.url,
            "AGENT_API_KEY": AGENT_KEY,
            "AGENT_ID": bot_id,
            "OPENAI_BASE_URL": url,
            "OPENAI_MODEL": "gpt-4o-mini",
        }
        bot = await asyncio.create_subprocess_exec(sys.executable, str(BOT), stdout=asyncio.subprocess.PIPE, env=env)
        processes.append(bot)
        assert bot.stdout is not None
        line = await asyncio.wait_for(bot.stdout.readline(), 15)
        assert line.decode().startswith(f"connected as {bot_id}"), line

    yield start
    for process in reversed(processes):
        await stop_process(process)


async def test_the_example_streams_reasoning_then_text(
    example: Callable[[int], Awaitable[None]], make_client: Callable[..., Awaitable[ClientPeer]], bot_id: str
) -> None:
    await example(0)
    tab = await make_client(bot_id, "u1")
    assert (await tab.send("reasoning"))["ok"] is True
    end = await tab.next("message:end", timeout=15)
    assert end["status"] == "complete"
    assert [part["type"] for part in end["parts"]] == ["reasoning", "text"]
    assert end["parts"][0]["text"].startswith("The user asks how many r's")
    assert end["text"] == 'There are **3** r\'s in "strawberry".'


async def test_the_example_streams_tool_calls_with_their_input(
    example: Callable[[int], Awaitable[None]], make_client: Callable[..., Awaitable[ClientPeer]], bot_id: str
) -> None:
    await example(0)
    tab = await make_client(bot_id, "u1")
    assert (await tab.send("tool"))["ok"] is True
    end = await tab.next("message:end", timeout=15)
    assert [(p["toolName"], p["state"], p["input"]) for p in end["parts"]] == [
        ("get_weather", "input-available", {"city": "Paris", "unit": "celsius"}),
        ("get_weather", "input-available", {"city": "Lyon", "unit": "celsius"}),
    ]


async def test_a_stop_ends_the_examples_answer_cancelled(
    example: Callable[[int], Awaitable[None]], make_client: Callable[..., Awaitable[ClientPeer]], bot_id: str
) -> None:
    await example(100)  # the recording replays slowly: 28 events, 100 ms apart
    tab = await make_client(bot_id, "u1")
    assert (await tab.send("text"))["ok"] is True
    start = await tab.next("message:start", timeout=15)
    await tab.next("message:delta", timeout=15)
    assert (await tab.call("stop", {"id": start["id"]}))["ok"] is True
    end = await tab.next("message:end", timeout=15)
    assert end["status"] == "cancelled"
    assert len(end["text"]) < len("Relay-hub keeps every tab in step: the answer streams to all of them, and a reload picks up where it left off.")
