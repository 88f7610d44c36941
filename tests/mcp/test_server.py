"""The stdio loop under hostile input: a hypothesis fuzz of the JSON-RPC layer, and EOF."""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp_wire import META_CAPS, META_VERSION

TOOLS = ["engram_load", "engram_save", "engram_commit", "engram_note", "engram_status", "engram_x"]
METHODS = [
    "initialize", "ping", "tools/list", "tools/call", "resources/list", "resources/read",
    "resources/templates/list", "prompts/list", "prompts/get", "server/discover",
    "notifications/initialized", "notifications/cancelled", "logging/setLevel", *TOOLS,
]  # fmt: skip

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=40)
)
json_values = st.recursive(
    scalars,
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=10), c, max_size=4),
    max_leaves=15,
)
ids = (
    st.integers(-(2**40), 2**40)
    | st.text(max_size=20)
    | st.none()
    | st.booleans()
    | st.floats(allow_nan=False)
    | st.just({"a": 1})
)
metas = st.one_of(
    st.just({}),
    st.fixed_dictionaries(
        {META_VERSION: st.sampled_from(["2026-07-28", "2025-11-25", "x"]) | json_values}
    ),
    st.fixed_dictionaries(
        {META_VERSION: st.just("2026-07-28"), META_CAPS: json_values | st.just({"elicitation": {}})}
    ),
    json_values,
)
params = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {
            "name": st.sampled_from(TOOLS) | st.text(max_size=10),
            "arguments": json_values
            | st.dictionaries(
                st.sampled_from(
                    [
                        "query",
                        "id",
                        "text",
                        "budget_tokens",
                        "approval_token",
                        "approve",
                        "mode",
                        "roles",
                    ]
                ),
                json_values,
                max_size=3,
            ),
        },
        optional={
            "_meta": metas,
            "requestState": json_values,
            "inputResponses": json_values,
            "uri": st.text(max_size=40) | st.just("engram://memory/../x"),
        },
    ),
)
messages = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "2.0", "1.0"]) | json_values,
        "id": ids,
        "method": st.sampled_from(METHODS) | st.text(max_size=20) | json_values,
        "params": params,
        "result": json_values,
        "error": json_values,
    },
)


def _encoded(value: Any) -> bytes:
    return json.dumps(value).encode("utf-8")


lines = st.one_of(
    messages.map(_encoded),
    st.lists(messages, max_size=3).map(_encoded),
    json_values.map(_encoded),
    st.binary(max_size=200),
    st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.integers(10_000, 300_000).map(
        lambda n: b'{"jsonrpc":"2.0","id":7,"method":"' + b"m" * n + b'"}'
    ),
    st.integers(10_000, 300_000).map(
        lambda n: (
            b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"engram_load","arguments":{"query":"'
            + b"q" * n
            + b'"}}}'
        )
    ),
    st.integers(500, 200_000).map(lambda d: b"[" * d + b"]" * d),
    st.integers(500, 50_000).map(
        lambda d: (
            b'{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":' + b"[" * d + b"]" * d + b"}}"
        )
    ),
    st.just(b'{"jsonrpc":"2.0","id":10,"method":"ping","params":{"s":"\\ud800"}}'),
    st.just(b'{"jsonrpc":"2.0","id":"\\udfff","method":"tools/list"}'),
)


def expected(line: bytes) -> tuple[bool, Any]:
    """(an answer is required, the id it must carry) for one line."""
    stripped = line.strip()
    if not stripped:
        return False, None
    try:
        msg = json.loads(stripped.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return True, None
    if not isinstance(msg, dict):
        return False, None
    rid = msg.get("id")
    valid = isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool))
    if "id" in msg and valid and msg.get("jsonrpc") == "2.0" and isinstance(msg.get("method"), str):
        return True, rid
    return False, None


def test_fuzz_json_rpc_layer_never_dies_and_answers_every_request(mcp, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    srv = mcp("--no-elicitation", cwd=empty)
    sentinels = itertools.count()

    @settings(
        max_examples=300, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(line=lines)
    def check(line: bytes) -> None:
        line = line.replace(b"\n", b" ").replace(b"\r", b" ")
        must_answer, rid = expected(line)
        deep = line.count(b"[") > 500
        sentinel = f"sentinel-{next(sentinels)}"
        srv.send_raw(line)
        srv.send_raw(_encoded({"jsonrpc": "2.0", "id": sentinel, "method": "ping"}))
        seen_sentinel, seen_answer = False, not must_answer
        deadline = time.monotonic() + 10
        while not (seen_sentinel and seen_answer):
            msg = srv.recv(
                timeout=max(0.01, deadline - time.monotonic())
            )  # a non-JSON line raises here
            for m in msg if isinstance(msg, list) else [msg]:
                assert m["jsonrpc"] == "2.0"
                assert ("result" in m) != ("error" in m)
                if m.get("id") == sentinel:
                    seen_sentinel = True
                elif must_answer and m.get("id") == rid:
                    seen_answer = True
                elif deep and m.get("id") is None and m.get("error", {}).get("code") == -32700:
                    seen_answer = (
                        True  # nesting near the recursion limit: either parser may give up
                    )
        assert srv.proc.poll() is None

    check()
    code, _ = srv.close()
    assert code == 0
    for raw in srv.raw_stdout:
        json.loads(raw)


def test_exits_cleanly_on_eof_and_answers_what_was_asked(mcp):
    srv = mcp()
    srv.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
    code, err = srv.close()
    assert code == 0
    assert [json.loads(x)["id"] for x in srv.raw_stdout] == [1]
    assert "Traceback" not in err


def test_eof_during_a_dialog_ends_the_call_without_a_write(mcp, example_project):
    from pathlib import Path

    root = example_project / Path(".agents") / ".engram"
    before = sorted(p.name for p in (root / "knowledge").glob("*.md"))
    srv = mcp(cwd=example_project)
    srv.initialize("2025-11-25", {"elicitation": {}})
    srv.send(
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {
                "name": "engram_save",
                "arguments": {"type": "knowledge", "text": "Backups run nightly at two."},
            },
        }
    )
    assert srv.recv()["method"] == "elicitation/create"
    started = time.monotonic()
    code, _ = srv.close()
    assert code == 0 and time.monotonic() - started < 15
    assert sorted(p.name for p in (root / "knowledge").glob("*.md")) == before
