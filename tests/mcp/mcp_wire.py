"""Helpers that drive the real `engram-mcp` process over stdio with raw JSON lines."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

MODERN = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"


def envelope(caps: dict[str, Any] | None = None, version: str = MODERN) -> dict[str, Any]:
    return {META_VERSION: version, META_CAPS: {} if caps is None else caps}


class McpProcess:
    """One `engram-mcp` child: send lines, read JSON lines with a timeout."""

    def __init__(
        self, args: list[str], cwd: Path, env: dict[str, str], command: list[str] | None = None
    ) -> None:
        self.aside: list[Any] = []
        self.proc = subprocess.Popen(
            command or [sys.executable, "-m", "engram.mcp.server", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.raw_stdout: list[bytes] = []
        self._ids = 1000
        self.stderr_chunks: list[bytes] = []
        self._pumps = [
            threading.Thread(target=self._pump, daemon=True),
            threading.Thread(target=self._drain_stderr, daemon=True),
        ]
        for t in self._pumps:
            t.start()

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for chunk in iter(lambda: self.proc.stderr.read1(65536), b""):  # type: ignore[union-attr]
            self.stderr_chunks.append(chunk)

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.raw_stdout.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data if data.endswith(b"\n") else data + b"\n")
        self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_raw(json.dumps(message).encode("utf-8"))

    def recv(self, timeout: float = 20.0) -> Any:
        line = self.lines.get(timeout=timeout)
        if line is None:
            raise EOFError("engram-mcp closed stdout")
        assert line.endswith(b"\n")
        return json.loads(line)

    def next_id(self) -> int:
        self._ids += 1
        return self._ids

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        rid: Any = None,
        timeout: float = 20.0,
    ) -> dict[str, Any]:
        """Send a request and return its response (other messages are kept aside)."""
        rid = self.next_id() if rid is None else rid
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.wait_for(rid, timeout=timeout)

    def wait_for(self, rid: Any, timeout: float = 20.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            msg = self.recv(timeout=max(0.01, deadline - time.monotonic()))
            if isinstance(msg, dict) and msg.get("id") == rid and "method" not in msg:
                return msg
            self.aside.append(msg)

    def initialize(
        self, version: str = "2025-11-25", capabilities: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        resp = self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": capabilities or {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return resp

    def call(
        self, name: str, arguments: dict[str, Any] | None = None, **extra: Any
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}, **extra}
        return self.request("tools/call", params)

    def close(self) -> tuple[int, str]:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._pumps[1].join(timeout=10)
        return code, b"".join(self.stderr_chunks).decode("utf-8", "replace")


def text_of(response: dict[str, Any]) -> str:
    return response["result"]["content"][0]["text"]


def data_of(response: dict[str, Any]) -> dict[str, Any]:
    return response["result"]["structuredContent"]["data"]
