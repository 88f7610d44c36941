"""A minimal client of `codex app-server`, the JSON-RPC interface Codex's rich clients use.

Unlike `codex exec` (no person to ask, so a call that needs approval is refused), the app
server asks its client: it sends a request and waits for the person's answer. This client
runs one turn and answers every request Codex sends with `answer`, recording them all.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

TURN_TIMEOUT_S = 90.0


@dataclass
class Turn:
    """What Codex sent during the turn: its requests to the person and its notifications."""

    requests: list[dict[str, Any]] = field(default_factory=list)
    notifications: list[dict[str, Any]] = field(default_factory=list)

    def items(self, kind: str) -> list[dict[str, Any]]:
        """The completed items of one type (e.g. `mcpToolCall`)."""
        return [
            n["params"]["item"]
            for n in self.notifications
            if n.get("method") == "item/completed" and n["params"]["item"].get("type") == kind
        ]


def _pump(stream: IO[str], lines: queue.Queue[str]) -> None:
    """Hand each line Codex writes to the test (an empty string at the end)."""
    for line in stream:
        lines.put(line)
    lines.put("")


def _turn_over(message: dict[str, Any]) -> bool:
    """The turn ended: `turn/completed`, or the thread went back to idle after it ran."""
    if message["method"] == "turn/completed":
        return True
    status = message.get("params", {}).get("status")
    return message["method"] == "thread/status/changed" and status == {"type": "idle"}


def run_turn(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    prompt: str,
    answer: dict[str, Any],
    stderr: Any = subprocess.DEVNULL,
) -> Turn:
    """Start the app server, run one turn in `cwd` with on-request approvals, then stop it."""
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        bufsize=1,
    )
    assert proc.stdin is not None and proc.stdout is not None
    turn = Turn()

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()

    try:
        send(
            {
                "id": 1,
                "method": "initialize",
                "params": {"clientInfo": {"name": "engram-tests", "version": "1"}},
            }
        )
        lines: queue.Queue[str] = queue.Queue()
        reader = threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True)
        reader.start()
        deadline = time.monotonic() + TURN_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1.0)
            except queue.Empty:
                continue
            if not line:
                break
            message = json.loads(line)
            if message.get("id") == 1 and "result" in message:
                send({"method": "initialized"})
                thread = {"cwd": str(cwd), "approvalPolicy": "on-request"}
                send({"id": 2, "method": "thread/start", "params": thread})
            elif message.get("id") == 2 and "result" in message:
                thread_id = message["result"]["thread"]["id"]
                text = [{"type": "text", "text": prompt}]
                send(
                    {
                        "id": 3,
                        "method": "turn/start",
                        "params": {"threadId": thread_id, "input": text},
                    }
                )
            elif "method" in message and "id" in message:  # Codex asks its client
                turn.requests.append(message)
                send({"id": message["id"], "result": answer})
            elif "method" in message:
                turn.notifications.append(message)
                started = any(n["method"] == "turn/started" for n in turn.notifications)
                if started and _turn_over(message):
                    return turn
            elif "error" in message:
                raise AssertionError(f"codex app-server: {message['error']}")
        seen = [n.get("method") for n in turn.notifications][-8:]
        raise AssertionError(f"codex app-server: the turn did not complete (last: {seen})")
    finally:
        proc.kill()
        proc.wait(timeout=10)
