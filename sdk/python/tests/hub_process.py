"""A real relay-hub process for the tests: `dist/main.js` of this repository, as `npm start` runs it."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[3]
NODE = REPO_ROOT / "node_modules" / ".bin" / "node"
MAIN = REPO_ROOT / "dist" / "main.js"
ASYNCAPI = REPO_ROOT / "dist" / "asyncapi.json"

JWT_SECRET = "python-sdk-test-secret-long-enough-for-hs256!!"
ADMIN_JWT_SECRET = "python-sdk-admin-secret-apart-from-the-chat-one!!"
AGENT_KEY = "python-sdk-agent-key-0123456789"
#: Kept small so the limit tests need little data; deltas of the SDK stay far below it.
MAX_MESSAGE_BYTES = 32768

_LISTENING = re.compile(r"listening on (http://[^\"\s]+)")


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def mint_token(claims: dict[str, Any], secret: str = JWT_SECRET, expires_in: int = 3600) -> str:
    """An HS256 JWT, as an integrator's backend signs one (no PyJWT needed)."""
    now = int(time.time())
    body = {"iat": now, "exp": now + expires_in, **claims}
    signing_input = f"{_b64(json.dumps({'alg': 'HS256', 'typ': 'JWT'}).encode())}.{_b64(json.dumps(body).encode())}"
    signature = hmac.new(secret.encode(), signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{_b64(signature)}"


def admin_token() -> str:
    """A REST admin token (roles ADMIN, signed with the admin secret), as `npm run token -- --admin` makes."""
    return mint_token({"sub": "root", "roles": ["ADMIN"]}, ADMIN_JWT_SECRET)


def asyncapi_document() -> dict[str, Any]:
    if not ASYNCAPI.exists():
        raise RuntimeError(f"{ASYNCAPI} is missing: run `npm run build` in {REPO_ROOT} first")
    doc: dict[str, Any] = json.loads(ASYNCAPI.read_text("utf-8"))
    return doc


def agent_event_names(doc: dict[str, Any]) -> set[str]:
    """Names of the messages of the agent channel (events both ways, the handshake's included)."""
    return {m["name"] for m in doc["channels"]["agent"]["messages"].values() if "name" in m}


def hub_has_streaming() -> bool:
    return ASYNCAPI.exists() and "stream:start" in agent_event_names(asyncapi_document())


class HubProcess:
    """`node dist/main.js` with test secrets; `url` once it answers /health/ready."""

    def __init__(self, port: int = 0, **env: str) -> None:
        self.port = port
        self.env = env
        self.url = ""
        self.lines: list[str] = []
        self._proc: subprocess.Popen[str] | None = None
        self._reader = threading.Thread()
        self._tmp = tempfile.TemporaryDirectory(prefix="relay-hub-py-")

    def start(self, timeout: float = 30.0) -> HubProcess:
        if not MAIN.exists():
            raise RuntimeError(f"{MAIN} is missing: run `npm run build` in {REPO_ROOT} first")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("REDIS_", "JWT_", "AGENT_"))}
        env.update(
            NODE_ENV="test",
            HOST="127.0.0.1",
            PORT=str(self.port),
            LOG_LEVEL="info",
            JWT_SECRET=JWT_SECRET,
            ADMIN_JWT_SECRET=ADMIN_JWT_SECRET,
            AGENT_API_KEYS=AGENT_KEY,
            DEMO_ENABLED="false",
            MAX_MESSAGE_BYTES=str(MAX_MESSAGE_BYTES),
            OPENAPI_SPEC_FILE=str(Path(self._tmp.name) / "openapi.json"),
            ASYNCAPI_SPEC_FILE=str(Path(self._tmp.name) / "asyncapi.json"),
        )
        env.update(self.env)
        self.lines = []
        listening = threading.Event()
        self._proc = subprocess.Popen(
            [str(NODE), str(MAIN)],
            cwd=REPO_ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

        def read(proc: subprocess.Popen[str]) -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                self.lines.append(line.rstrip("\n"))
                match = _LISTENING.search(line)
                if match and not listening.is_set():
                    self.url = match.group(1)
                    listening.set()

        self._reader = threading.Thread(target=read, args=(self._proc,), daemon=True)
        self._reader.start()
        deadline = time.monotonic() + timeout
        while not listening.wait(0.05):
            if self._proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the hub did not start:\n" + "\n".join(self.lines))
        self.port = int(self.url.rsplit(":", 1)[1])
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/health/ready", timeout=2) as res:
                    if res.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the hub never became ready:\n" + "\n".join(self.lines))
            time.sleep(0.05)

    def stop(self) -> None:
        """SIGTERM (the hub drains and exits), SIGKILL if it takes more than 10 s."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._reader.join(5)
        if proc.stdout is not None:
            proc.stdout.close()

    def close(self) -> None:
        self.stop()
        self._tmp.cleanup()
