"""A Python bot streaming to a browser tab through two hub replicas that share one Redis."""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator

import pytest
from client_peer import ClientPeer
from hub_process import AGENT_KEY, HubProcess

from relay_hub_agent import Message, RelayAgent

pytestmark = pytest.mark.streaming


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    if shutil.which("redis-server") is None:
        pytest.fail("redis-server is not installed (apt-get install redis-server)")
    workdir = tempfile.TemporaryDirectory(prefix="relay-hub-py-redis-")
    for _ in range(5):
        port = _free_port()
        proc = subprocess.Popen(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", workdir.name],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while proc.poll() is None and time.monotonic() < deadline and not _answers_ping(port):
            time.sleep(0.05)
        if proc.poll() is None and _answers_ping(port):
            break
        proc.kill()  # the port was taken between the check and the bind: another one
    else:
        pytest.fail("redis-server did not start")
    yield f"redis://127.0.0.1:{port}"
    proc.kill()
    proc.wait()
    workdir.cleanup()


@pytest.fixture(scope="module")
def replicas(redis_url: str) -> Iterator[tuple[HubProcess, HubProcess]]:
    a = HubProcess(REDIS_URL=redis_url).start()
    b = HubProcess(REDIS_URL=redis_url).start()
    yield a, b
    a.close()
    b.close()


@pytest.fixture
async def agent_on_a(replicas: tuple[HubProcess, HubProcess]) -> AsyncIterator[RelayAgent]:
    agent = RelayAgent(replicas[0].url, AGENT_KEY, "py-two-replicas", backoff_base=0.05, backoff_cap=0.5)
    yield agent
    await agent.close()


async def test_a_python_bot_streams_to_a_tab_on_the_other_replica(
    replicas: tuple[HubProcess, HubProcess], agent_on_a: RelayAgent
) -> None:
    words = [f"word{i} " for i in range(50)]

    async def generate() -> AsyncIterator[str]:
        for word in words:
            yield word
            await asyncio.sleep(0.005)  # an LLM's pace between tokens, not a synchronisation

    @agent_on_a.on_message
    async def answer(message: Message) -> None:
        await agent_on_a.activity(message.sender, "thinking")
        await agent_on_a.stream_from(message.sender, generate(), reply_to=message.id)

    await agent_on_a.connect()
    async with ClientPeer(replicas[1].url, "py-two-replicas", "alice") as tab:
        started = time.monotonic()
        ack = await tab.send("tell me a story")
        assert ack["ok"] is True
        assert (await tab.next("agent:activity"))["state"] == "thinking"
        start = await tab.next("message:start")
        assert (start["replyTo"], start["seq"]) == (ack["id"], 0)
        end = await tab.next("message:end", timeout=15)
        seconds = time.monotonic() - started
        deltas = [d for d in tab.pending("message:delta") if d["id"] == start["id"]]
        # In order, none doubled or skipped, and together the text the bot wrote.
        assert [d["seq"] for d in deltas] == list(range(1, len(deltas) + 1))
        assert "".join(d["text"] for d in deltas) == "".join(words)
        assert (end["status"], end["text"]) == ("complete", "".join(words))
        history = await tab.call("history", {"limit": 10})
        assert [m["text"] for m in history["messages"]] == ["tell me a story", "".join(words)]
        print(
            f"\nPython bot on replica {replicas[0].url} -> tab on replica {replicas[1].url}: "
            f"{len(words)} pieces in {len(deltas)} deltas (seq 1..{len(deltas)}), "
            f"end {end['status']!r} with {len(end['text'])} chars, {seconds:.2f} s from send to end"
        )
