"""Both protocol eras on the wire (engram-mcp.md §2, §3, §10), raw JSON lines."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_wire import MODERN, envelope, text_of

from engram.mcp import protocol as p
from engram.mcp.server import INSTRUCTIONS

LEGACY = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]


@pytest.mark.parametrize("version", LEGACY)
def test_R_PROTO_1_initialize_echoes_a_known_legacy_version(mcp, version):
    srv = mcp()
    resp = srv.initialize(version)
    assert resp["result"]["protocolVersion"] == version


@pytest.mark.parametrize("asked", ["2026-07-28", "1999-01-01", "2025-11-26", "", 20250618, None])
def test_R_PROTO_1_unknown_version_is_never_echoed(mcp, asked):
    srv = mcp()
    resp = srv.request(
        "initialize",
        {"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    )
    assert resp["result"]["protocolVersion"] == "2025-11-25"


def test_R_PROTO_2_modern_requests_are_served_without_a_handshake(mcp, example_project: Path):
    srv = mcp(cwd=example_project)
    tools = srv.request("tools/list", {"_meta": envelope()})
    assert {t["name"] for t in tools["result"]["tools"]} >= {"engram_load", "engram_commit"}
    load = srv.request(
        "tools/call",
        {"_meta": envelope(), "name": "engram_load", "arguments": {"query": "cut a release"}},
    )
    assert load["result"]["isError"] is False
    assert (
        "run-tests-before-release" in load["result"]["structuredContent"]["data"]["selected_keys"]
    )
    prompts = srv.request("prompts/list", {"_meta": envelope()})
    assert prompts["result"]["prompts"][0]["name"] == "propose"
    res = srv.request("resources/read", {"_meta": envelope(), "uri": "engram://index"})
    assert "release-process" in res["result"]["contents"][0]["text"]


def test_R_PROTO_2_meta_without_the_version_key_stays_legacy(mcp):
    srv = mcp()
    srv.initialize("2025-06-18")
    resp = srv.request("tools/list", {"_meta": {"progressToken": 3}})
    assert "resultType" not in resp["result"]
    resp = srv.request("ping", {"_meta": {}})
    assert resp["result"] == {}


def test_R_PROTO_3_missing_client_capabilities_is_invalid_params(mcp):
    srv = mcp()
    resp = srv.request("tools/list", {"_meta": {p.META_PROTOCOL_VERSION: MODERN}})
    assert resp["error"]["code"] == -32602
    assert p.META_CLIENT_CAPABILITIES in resp["error"]["message"]
    bad_caps = srv.request(
        "tools/list", {"_meta": {p.META_PROTOCOL_VERSION: MODERN, p.META_CLIENT_CAPABILITIES: 5}}
    )
    assert bad_caps["error"]["code"] == -32602
    bad_version = srv.request(
        "tools/list", {"_meta": {p.META_PROTOCOL_VERSION: 2026, p.META_CLIENT_CAPABILITIES: {}}}
    )
    assert bad_version["error"]["code"] == -32602


@pytest.mark.parametrize(
    "method",
    ["tools/list", "prompts/list", "resources/list", "resources/templates/list", "server/discover"],
)
def test_R_PROTO_4_list_results_carry_result_type_and_cache_hints(mcp, method):
    srv = mcp()
    result = srv.request(method, {"_meta": envelope()})["result"]
    assert result["resultType"] == "complete"
    assert isinstance(result["ttlMs"], int) and result["ttlMs"] >= 0
    assert result["cacheScope"] in ("public", "private")
    assert result["_meta"][p.META_SERVER_INFO]["name"] == "engram"


def test_R_PROTO_4_call_and_read_results_are_complete(mcp, example_project):
    srv = mcp(cwd=example_project)
    call = srv.request(
        "tools/call", {"_meta": envelope(), "name": "engram_status", "arguments": {}}
    )["result"]
    assert call["resultType"] == "complete"
    assert "ttlMs" not in call
    read = srv.request("resources/read", {"_meta": envelope(), "uri": "engram://index"})["result"]
    assert read["resultType"] == "complete"
    assert read["cacheScope"] == "private" and read["ttlMs"] == 0
    prompt = srv.request("prompts/get", {"_meta": envelope(), "name": "propose"})["result"]
    assert prompt["resultType"] == "complete"


@pytest.mark.parametrize("asked", ["1900-01-01", "2025-11-25", "2027-01-01"])
def test_R_PROTO_5_unsupported_modern_version(mcp, asked):
    srv = mcp()
    discover = srv.request("server/discover", {"_meta": envelope()})["result"]
    resp = srv.request("tools/list", {"_meta": envelope(version=asked)})
    assert resp["error"]["code"] == -32022
    assert resp["error"]["data"]["requested"] == asked
    assert resp["error"]["data"]["supported"] == discover["supportedVersions"] == [MODERN]


@pytest.mark.parametrize(
    "method", ["ping", "initialize", "engram_load", "engram_status", "logging/setLevel", "nope"]
)
def test_R_PROTO_6_removed_methods_answer_method_not_found(mcp, method):
    srv = mcp()
    resp = srv.request(
        method, {"_meta": envelope(), "protocolVersion": "2025-11-25", "capabilities": {}}
    )
    assert resp["error"]["code"] == -32601


def test_R_PROTO_7_stdout_carries_only_json_rpc_lines(mcp, example_project):
    srv = mcp("--no-such-option", cwd=example_project)
    srv.initialize()
    srv.request("tools/list")
    srv.call("engram_load", {"query": "release"})
    srv.call("engram_load", {"query": 42})
    srv.send_raw(b"{not json")
    srv.request("resources/read", {"uri": "engram://memory/../../etc/passwd"})
    srv.request("ping")
    code, err = srv.close()
    assert code == 0
    assert srv.raw_stdout, "the server answered"
    for line in srv.raw_stdout:
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        msg = json.loads(line)
        assert msg["jsonrpc"] == "2.0"
    assert "--no-such-option" in err  # the note went to stderr


def test_R_PROTO_7_era_is_decided_per_message(mcp):
    srv = mcp()
    assert srv.request("server/discover", {"_meta": envelope()})["result"]["supportedVersions"] == [
        MODERN
    ]
    assert srv.initialize("2025-06-18")["result"]["protocolVersion"] == "2025-06-18"
    assert "resultType" not in srv.request("tools/list")["result"]
    assert srv.request("tools/list", {"_meta": envelope()})["result"]["resultType"] == "complete"


def test_R_INS_1_same_short_instructions_in_both_eras(mcp):
    srv = mcp()
    legacy = srv.initialize()["result"]["instructions"]
    modern = srv.request("server/discover", {"_meta": envelope()})["result"]["instructions"]
    assert legacy == modern == INSTRUCTIONS  # no memory here: the instructions alone
    assert len(legacy) <= 512
    for needed in ("engram_load", "engram_commit", "human", "rules", "decisions"):
        assert needed in legacy


def test_R_INS_1_the_instructions_end_with_the_map_within_512_characters(mcp, example_project):
    engram = Path(sys.executable).with_name("engram")
    subprocess.run([str(engram), "rebuild-index"], cwd=example_project, check=True,
                   capture_output=True, timeout=60)  # fmt: skip
    srv = mcp(cwd=example_project)
    legacy = srv.initialize()["result"]["instructions"]
    modern = srv.request("server/discover", {"_meta": envelope()})["result"]["instructions"]
    assert legacy == modern and legacy.startswith(INSTRUCTIONS)
    assert len(legacy) <= 512
    assert re.search(r"Memories: \d+; tags: [a-z0-9-]+ \d+", legacy), legacy


def test_the_handshake_builds_no_index(mcp, example_project):
    cache = example_project / ".agents/.engram/cache"
    for f in cache.glob("index.sqlite*"):
        f.unlink()
    srv = mcp(cwd=example_project)
    assert srv.initialize()["result"]["instructions"] == INSTRUCTIONS  # no index: no map
    assert not list(cache.glob("index.sqlite*"))


def test_R_INS_2_always_load_marks_engram_load(mcp):
    plain = {
        t["name"]: t for t in mcp().request("tools/list", {"_meta": envelope()})["result"]["tools"]
    }
    assert "anthropic/alwaysLoad" not in plain["engram_load"].get("_meta", {})
    srv = mcp("--always-load")
    srv.initialize()
    marked = {t["name"]: t for t in srv.request("tools/list")["result"]["tools"]}
    assert marked["engram_load"]["_meta"]["anthropic/alwaysLoad"] is True
    assert "anthropic/alwaysLoad" not in marked["engram_search"].get("_meta", {})


def test_R_INS_6_unknown_option_is_ignored_with_a_note(mcp):
    srv = mcp("--frobnicate", "--always-load")
    assert srv.initialize()["result"]["serverInfo"]["name"] == "engram"
    tools = {t["name"]: t for t in srv.request("tools/list")["result"]["tools"]}
    assert tools["engram_load"]["_meta"]["anthropic/alwaysLoad"] is True
    _, err = srv.close()
    assert "ignoring unknown option '--frobnicate'" in err


def test_R_WIRE_1_standard_handshake_and_ping(mcp, example_project):
    srv = mcp(cwd=example_project)
    init = srv.initialize("2025-11-25")["result"]
    assert set(init["capabilities"]) >= {"tools", "resources", "prompts"}
    assert init["serverInfo"] == {"name": "engram", "version": init["serverInfo"]["version"]}
    assert srv.request("ping", rid="123") == {"jsonrpc": "2.0", "id": "123", "result": {}}
    assert srv.request("ping", rid=0)["id"] == 0  # ids start at 0 in some clients
    names = [t["name"] for t in srv.request("tools/list")["result"]["tools"]]
    assert len(names) == 11
    assert srv.call("engram_status")["result"]["isError"] is False


def test_R_WIRE_5_malformed_json_gets_parse_error_and_server_keeps_running(mcp):
    srv = mcp()
    for bad in (b"{", b'{"jsonrpc":"2.0","id":1,', b"\xff\xfe\x00garbage", b"[1,2", b"nul"):
        srv.send_raw(bad)
        assert srv.recv() == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": "Parse error"},
        }
    assert srv.request("ping")["result"] == {}


def test_R_WIRE_5_invalid_requests_get_invalid_request(mcp):
    srv = mcp()
    for bad, rid in (
        ([], None),
        ("just a string", None),
        ({"jsonrpc": "1.0", "id": 7, "method": "ping"}, 7),
        ({"jsonrpc": "2.0", "id": 8, "method": 12}, 8),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None),
    ):
        srv.send(bad)
        resp = srv.recv()
        assert resp["id"] == rid and resp["error"]["code"] == -32600, bad
    resp = srv.request("tools/list", rid="x")
    assert resp["id"] == "x"


def test_R_WIRE_6_notifications_get_no_response(mcp):
    srv = mcp()
    srv.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    srv.send({"jsonrpc": "2.0", "method": "tools/list"})
    srv.send({"jsonrpc": "2.0", "method": "no/such/method"})
    srv.send({"jsonrpc": "2.0", "method": "ping", "params": {"_meta": envelope()}})
    resp = srv.request("ping", rid="after")
    assert resp["id"] == "after"
    assert srv.aside == []


def test_R_WIRE_7_bare_tool_method_returns_plain_text(mcp, example_project):
    srv = mcp(cwd=example_project)
    srv.initialize()
    resp = srv.request("engram_load", {"query": "cut a release"})
    assert isinstance(resp["result"], str)
    assert "run-tests-before-release" in resp["result"]
    bad = srv.request("engram_load", {"budget_tokens": "many"})
    assert bad["error"]["code"] == -32602
    assert "budget_tokens" in bad["error"]["message"]


def test_batches_are_answered_as_one_array(mcp):
    srv = mcp()
    srv.send(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "prompts/list"},
        ]
    )
    batch = srv.recv()
    assert isinstance(batch, list) and [r["id"] for r in batch] == [1, 2]


def test_unknown_tool_is_invalid_params(mcp):
    srv = mcp()
    srv.initialize()
    resp = srv.call("engram_fly")
    assert resp["error"]["code"] == -32602 and "engram_fly" in resp["error"]["message"]
    resp = srv.request("tools/call", {"name": "engram_status", "arguments": [1]})
    assert resp["error"]["code"] == -32602


def test_no_workspace_is_a_tool_error_with_the_clear_message(mcp, tmp_path, example_project):
    empty = tmp_path / "empty"
    empty.mkdir()
    srv = mcp(cwd=empty)
    srv.initialize()
    resp = srv.call("engram_load", {"query": "release"})
    assert resp["result"]["isError"] is True
    assert "engram init" in text_of(resp)
    assert resp["result"]["structuredContent"]["ok"] is False
    # the workspace is resolved per call: ENGRAM_WORKSPACE is honoured at start, and a
    # workspace created after start is seen
    srv2 = mcp(cwd=empty, env={"ENGRAM_WORKSPACE": str(example_project)})
    srv2.initialize()
    assert srv2.call("engram_load", {"query": "release"})["result"]["isError"] is False
    from engram.core import api

    api.init(empty)
    assert srv.call("engram_status")["result"]["isError"] is False
