"""The SDK's protocol module and the names it uses, checked against the hub's AsyncAPI document
(dist/asyncapi.json, written by `npm run build`): a drift fails here, not in a bot."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hub_process import NODE, REPO_ROOT, asyncapi_document

from relay_hub_agent import LOCAL_CODES, _protocol, stream

PROTOCOL_MODULE = Path(_protocol.__file__)
SDK_README = REPO_ROOT / "sdk" / "python" / "README.md"


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return asyncapi_document()


def _events(doc: dict[str, Any], action: str) -> set[str]:
    """Event names of the agent channel's operations with ``action`` (receive = A→H, send = H→A)."""
    names = set()
    for op in doc["operations"].values():
        if op["channel"]["$ref"] != "#/channels/agent" or op["action"] != action:
            continue
        for ref in op["messages"]:
            _, _, channel, _, key = ref["$ref"].split("/")
            name = doc["channels"][channel]["messages"][key].get("name")
            if name and name != "connect":
                names.add(name)
    return names


def _catalogue(doc: dict[str, Any], schema: str) -> dict[str, bool]:
    return {entry["const"]: entry["x-retryable"] for entry in doc["components"]["schemas"][schema]["anyOf"]}


def _all_codes(doc: dict[str, Any]) -> set[str]:
    return {code for s in ("HandshakeCode", "AckCode", "SessionClosedCode") for code in _catalogue(doc, s)}


def _has_streaming(doc: dict[str, Any]) -> bool:
    return "stream:start" in _events(doc, "receive")


def test_the_protocol_module_says_what_the_document_says(doc: dict[str, Any]) -> None:
    assert _protocol.AGENT_NAMESPACE == doc["channels"]["agent"]["address"]
    assert _protocol.AGENT_TO_HUB_EVENTS == _events(doc, "receive")
    assert _protocol.HUB_TO_AGENT_EVENTS == _events(doc, "send")
    assert dict(_protocol.HANDSHAKE_CODES) == _catalogue(doc, "HandshakeCode")
    assert dict(_protocol.ACK_CODES) == _catalogue(doc, "AckCode")
    assert dict(_protocol.SESSION_CLOSED_CODES) == _catalogue(doc, "SessionClosedCode")


def test_the_committed_module_is_what_the_generator_writes_today() -> None:
    script = (
        "import { readFileSync } from 'node:fs';"
        "import { pythonProtocol } from './scripts/python-protocol.mjs';"
        "process.stdout.write(pythonProtocol(JSON.parse(readFileSync('dist/asyncapi.json', 'utf8'))));"
    )
    generated = subprocess.run(
        [str(NODE), "--input-type=module", "-e", script], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert PROTOCOL_MODULE.read_text("utf-8") == generated, "run `npm run build` and commit sdk/python/relay_hub_agent/_protocol.py"


def test_the_module_names_every_event_and_types_every_payload_of_the_document(doc: dict[str, Any]) -> None:
    # The SDK spells no event name itself: it uses these constants, so mypy --strict fails on a
    # name the document dropped.
    for name in _events(doc, "receive") | _events(doc, "send"):
        assert getattr(_protocol, name.upper().replace(":", "_")) == name
    for message in doc["channels"]["agent"]["messages"].values():
        title = message["payload"]["$ref"].split("/")[-1]
        assert hasattr(_protocol, title), title


def test_the_part_types_have_the_schemas_fields(doc: dict[str, Any]) -> None:
    schemas = doc["components"]["schemas"]
    parts = [ref["$ref"].split("/")[-1] for ref in schemas["MessagePart"]["anyOf"]]
    assert {"TextPart", "ReasoningPart", "ToolPart", "SourcePart", "FilePart", "DataPart", "SuggestionsPart"} <= set(parts)
    for name in parts:
        typed = getattr(_protocol, name)
        schema = schemas[name]
        assert typed.__required_keys__ == set(schema["required"]), name
        assert typed.__required_keys__ | typed.__optional_keys__ == set(schema["properties"]), name


@pytest.mark.streaming
def test_every_streaming_code_the_sdk_uses_is_in_the_document(doc: dict[str, Any]) -> None:
    acks = _catalogue(doc, "AckCode")
    for code in ("STREAM_NOT_FOUND", "STREAM_LIMIT", "MESSAGE_NOT_FOUND"):
        assert acks.get(code) is False, code
    assert stream.STREAM_NOT_FOUND in acks


def test_the_sdks_own_codes_never_collide_with_the_hubs(doc: dict[str, Any]) -> None:
    assert not set(LOCAL_CODES) & _all_codes(doc)


def test_every_code_the_sdk_readme_lists_exists(doc: dict[str, Any]) -> None:
    named = set(re.findall(r"^\| `([A-Z][A-Z_]+)`", SDK_README.read_text("utf-8"), re.MULTILINE))
    known = _all_codes(doc) | set(LOCAL_CODES)
    if not _has_streaming(doc):
        known |= {"STREAM_NOT_FOUND", "STREAM_LIMIT", "MESSAGE_NOT_FOUND"}
    assert named, "the README names no code"
    assert named <= known, named - known
