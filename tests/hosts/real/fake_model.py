"""A scripted model server on loopback, so real host programs can run a turn offline.

It speaks just enough of two streaming wire formats for a host to complete a turn:
the OpenAI Responses API (`POST …/responses`, server-sent events, as Codex uses it) and
the Anthropic Messages API (`POST …/v1/messages`, as Claude Code uses it). Every request
body is recorded so a test can check what the host sent to its model (tool lists, hook
context, tool results). The server binds 127.0.0.1 on a random port, answers a bounded
number of requests and shuts itself down after a fixed lifetime even if a test forgets to.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Event = dict[str, Any]
# A script turns one recorded request into the events of the streamed answer.
Script = Callable[["Request"], list[Event]]

MAX_REQUESTS = 64
LIFETIME_S = 240.0


@dataclass
class Request:
    """One request the host sent: its path and decoded JSON body (None when not JSON)."""

    method: str
    path: str
    body: Any
    headers: dict[str, str]


@dataclass
class FakeModel:
    """The running server: its base URL and what it received."""

    port: int
    requests: list[Request] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def model_requests(self, suffix: str) -> list[Request]:
        """The POSTs whose path (without query) ends with `suffix`."""
        return [
            r for r in self.requests if r.method == "POST" and r.path.split("?")[0].endswith(suffix)
        ]


def sse(events: list[Event]) -> bytes:
    """Server-sent events: `event: <type>` (when the event has one) then `data: <json>`."""
    out = []
    for ev in events:
        kind = f"event: {ev['type']}\n" if isinstance(ev.get("type"), str) else ""
        out.append(f"{kind}data: {json.dumps(ev)}\n\n")
    return "".join(out).encode()


# --- OpenAI Responses API (Codex) ---------------------------------------------------------


def responses_function_call(
    response_id: str, call_id: str, name: str, arguments: dict[str, Any]
) -> list[Event]:
    """A response whose only output is a call of tool `name` with `arguments`."""
    item = {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(arguments),
    }
    return [
        {"type": "response.created", "response": {"id": response_id}},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        _responses_completed(response_id),
    ]


def responses_message(response_id: str, text: str) -> list[Event]:
    """A response whose only output is an assistant message."""
    item = {
        "type": "message",
        "role": "assistant",
        "id": f"msg_{response_id}",
        "content": [{"type": "output_text", "text": text}],
    }
    return [
        {"type": "response.created", "response": {"id": response_id}},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        _responses_completed(response_id),
    ]


def _responses_completed(response_id: str) -> Event:
    usage = {
        "input_tokens": 1,
        "input_tokens_details": None,
        "output_tokens": 1,
        "output_tokens_details": None,
        "total_tokens": 2,
    }
    return {"type": "response.completed", "response": {"id": response_id, "usage": usage}}


# --- Anthropic Messages API (Claude Code) ---------------------------------------------------


def messages_text(message_id: str, model: str, text: str) -> list[Event]:
    """A streamed Messages API answer made of one text block."""
    usage = {"input_tokens": 1, "output_tokens": 1}
    return [
        {
            "type": "message_start",
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage,
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 1},
        },
        {"type": "message_stop"},
    ]


def messages_tool_use(
    message_id: str, model: str, name: str, arguments: dict[str, Any]
) -> list[Event]:
    """A streamed Messages API answer whose only block is a call of tool `name`."""
    usage = {"input_tokens": 1, "output_tokens": 1}
    block = {"type": "tool_use", "id": f"toolu_{message_id}", "name": name, "input": {}}
    delta = {"type": "input_json_delta", "partial_json": json.dumps(arguments)}
    return [
        {
            "type": "message_start",
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage,
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": block},
        {"type": "content_block_delta", "index": 0, "delta": delta},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 1},
        },
        {"type": "message_stop"},
    ]


APPROVAL_TOKEN = re.compile(r"eng1_[A-Za-z0-9_-]+")


def last_approval_token(request: Request) -> str | None:
    """The newest Engram approval token in what the host sent back (a tool's result)."""
    found = APPROVAL_TOKEN.findall(json.dumps(request.body))
    return found[-1] if found else None


def messages_json(message_id: str, model: str, text: str) -> dict[str, Any]:
    """The same answer, not streamed (for requests that ask without `stream`)."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


# --- Gemini API (Gemini CLI) ------------------------------------------------------------------


def gemini_text(text: str) -> list[Event]:
    """A streamed `streamGenerateContent?alt=sse` answer made of one text part."""
    return [
        {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}
            ],
            "usageMetadata": {
                "promptTokenCount": 1,
                "candidatesTokenCount": 1,
                "totalTokenCount": 2,
            },
        }
    ]


def gemini_function_call(name: str, arguments: dict[str, Any]) -> list[Event]:
    """A streamed Gemini answer whose only part is a call of function `name`."""
    part = {"functionCall": {"name": name, "args": arguments}}
    return [
        {
            "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}],
            "usageMetadata": {
                "promptTokenCount": 1,
                "candidatesTokenCount": 1,
                "totalTokenCount": 2,
            },
        }
    ]


# --- the server ------------------------------------------------------------------------------


def _handler(model: FakeModel, script: Script, lock: threading.Lock) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _record(self, method: str) -> Request:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            request = Request(
                method, self.path, body, {k.lower(): v for k, v in self.headers.items()}
            )
            with lock:
                model.requests.append(request)
                over = len(model.requests) > MAX_REQUESTS
            if over:
                self._send(429, "application/json", b'{"error": "request limit reached"}')
                raise _Done
            return request

        def _send(self, status: int, ctype: str, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            try:
                self._record("GET")
            except _Done:
                return
            # Model listings and the like: an empty, well-formed answer.
            self._send(200, "application/json", b'{"data": [], "object": "list"}')

        def do_POST(self) -> None:
            try:
                request = self._record("POST")
            except _Done:
                return
            events = script(request)
            streamed = not isinstance(request.body, dict) or request.body.get("stream", True)
            if len(events) == 1 and events[0].get("type") == "json":
                self._send(200, "application/json", json.dumps(events[0]["body"]).encode())
            elif streamed:
                self._send(200, "text/event-stream", sse(events))
            else:
                self._send(200, "application/json", json.dumps(events).encode())

    return Handler


class _Done(Exception):
    pass


@contextmanager
def serve(script: Script, lifetime_s: float = LIFETIME_S) -> Iterator[FakeModel]:
    """Run the server for the `with` block (and never longer than `lifetime_s`)."""
    lock = threading.Lock()
    model = FakeModel(port=0)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(model, script, lock))
    server.daemon_threads = True
    model.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1})
    thread.daemon = True
    thread.start()
    timer = threading.Timer(lifetime_s, server.shutdown)
    timer.daemon = True
    timer.start()
    try:
        yield model
    finally:
        timer.cancel()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
