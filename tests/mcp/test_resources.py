"""Memories as resources (R-WIRE-2, R-WIRE-4) and path safety in engram://memory/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp_wire import envelope

ROOT = Path(".agents") / ".engram"


@pytest.fixture
def srv(mcp, example_project):
    s = mcp(cwd=example_project)
    s.initialize("2025-11-25")
    return s


def read(s, uri: str, modern: bool = False) -> dict:
    params = {"uri": uri}
    if modern:
        params["_meta"] = envelope()
    return s.request("resources/read", params)


def test_R_WIRE_2_index_lists_one_line_cards(srv):
    contents = read(srv, "engram://index")["result"]["contents"]
    assert contents[0]["uri"] == "engram://index"
    lines = [line for line in contents[0]["text"].splitlines() if line.strip()]
    assert len(lines) == 8
    assert any("release-process" in line and "How to cut a release" in line for line in lines)


def test_R_WIRE_2_memory_resource_reads_the_load_id_body_and_counts(srv, example_project):
    from engram.core import api
    from engram.core.roots import resolve_roots

    roots = resolve_roots(example_project)
    text = read(srv, "engram://memory/release-process")["result"]["contents"][0]["text"]
    expected = api.load(roots, ids=["release-process"], count_usage=False).text
    assert text == expected
    used = {m["id"]: m["uses"] for m in api.most_used(roots, 10)}
    assert used.get("release-process") == 1
    read(srv, "engram://memory/release-process")
    assert {m["id"]: m["uses"] for m in api.most_used(roots, 10)}["release-process"] == 2


def test_R_WIRE_2_template_is_listed(srv):
    templates = srv.request("resources/templates/list")["result"]["resourceTemplates"]
    assert templates[0]["uriTemplate"] == "engram://memory/{id}"


@pytest.mark.parametrize(
    "uri",
    [
        "engram://memory/../config",
        "engram://memory/..%2F..%2Fetc%2Fpasswd",
        "engram://memory/../../../../etc/passwd",
        "engram://memory/rules/run-tests-before-release",
        "engram://memory/Release-Process",
        "engram://memory/",
        "engram://memory/release-process/",
        "file:///etc/passwd",
        "engram://index/../memory/x",
        "engram://memory/no-such-memory",
    ],
)
def test_R_WIRE_2_path_traversal_and_unknown_ids_are_not_found(srv, mcp, example_project, uri):
    legacy = read(srv, uri)
    assert legacy["error"]["code"] == -32002
    assert legacy["error"]["data"] == {"uri": uri}
    assert "root:" not in json.dumps(legacy)
    modern = read(mcp(cwd=example_project), uri, modern=True)
    assert modern["error"]["code"] == -32602


def test_R_WIRE_4_list_is_index_plus_most_used(srv, example_project):
    first = srv.request("resources/list")["result"]["resources"]
    assert [r["uri"] for r in first] == ["engram://index"]  # nothing used yet
    for mid, times in (("release-process", 3), ("api-error-format", 1), ("frontend-state", 2)):
        for _ in range(times):
            read(srv, f"engram://memory/{mid}")
    uris = [r["uri"] for r in srv.request("resources/list")["result"]["resources"]]
    assert uris == [
        "engram://index",
        "engram://memory/release-process",
        "engram://memory/frontend-state",
        "engram://memory/api-error-format",
    ]
    config = example_project / ROOT / "config.json"
    cfg = json.loads(config.read_text()) if config.exists() else {}
    cfg["mcp"] = {"resource_limit": 2}
    config.write_text(json.dumps(cfg))
    assert len(srv.request("resources/list")["result"]["resources"]) == 3
    cfg["mcp"] = {"resource_limit": 0}
    config.write_text(json.dumps(cfg))
    assert len(srv.request("resources/list")["result"]["resources"]) == 1


def test_R_WIRE_4_default_limit_is_20(srv, example_project, write_memory):
    root = example_project / ROOT
    for i in range(25):
        write_memory(root, "knowledge", f"fact-{i:02d}", f"Fact number {i}")
    for i in range(25):
        read(srv, f"engram://memory/fact-{i:02d}")
    resources = srv.request("resources/list")["result"]["resources"]
    assert len(resources) == 1 + 20


def test_resources_without_a_workspace(mcp, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    s = mcp(cwd=empty)
    s.initialize()
    assert [r["uri"] for r in s.request("resources/list")["result"]["resources"]] == [
        "engram://index"
    ]
    resp = read(s, "engram://index")
    assert resp["error"]["code"] == -32002 and "engram init" in resp["error"]["message"]
