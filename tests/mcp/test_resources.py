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
    from engram.core.store.roots import resolve_roots

    roots = resolve_roots(example_project)
    text = read(srv, "engram://memory/release-process")["result"]["contents"][0]["text"]
    expected = api.load(roots, api.LoadRequest(ids=["release-process"], count_usage=False)).text
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


def _uris(s) -> list[str]:
    return [r["uri"] for r in s.request("resources/list")["result"]["resources"]]


def test_R_WIRE_4_list_is_index_plus_most_used_then_the_unused(srv, example_project):
    from engram.core import api
    from engram.core.store.roots import resolve_roots

    all_ids = sorted(c["id"] for c in api.index_cards(resolve_roots(example_project)).data["cards"])
    assert len(all_ids) == 8
    first = _uris(srv)
    assert first == ["engram://index"] + [f"engram://memory/{i}" for i in all_ids]  # none used yet
    for mid, times in (("release-process", 3), ("api-error-format", 1), ("frontend-state", 2)):
        for _ in range(times):
            read(srv, f"engram://memory/{mid}")
    used = ["release-process", "frontend-state", "api-error-format"]
    rest = [i for i in all_ids if i not in used]
    assert _uris(srv) == ["engram://index"] + [f"engram://memory/{i}" for i in used + rest]
    resources = srv.request("resources/list")["result"]["resources"]
    assert "used 3 times" in resources[1]["description"]
    assert "not used yet" in resources[-1]["description"]
    config = example_project / ROOT / "config.json"
    cfg = json.loads(config.read_text()) if config.exists() else {}
    cfg["mcp"] = {"resource_limit": 2}
    config.write_text(json.dumps(cfg))
    assert _uris(srv) == ["engram://index", "engram://memory/release-process",
                          "engram://memory/frontend-state"]  # fmt: skip
    cfg["mcp"] = {"resource_limit": 5}
    config.write_text(json.dumps(cfg))
    assert _uris(srv)[1:] == [f"engram://memory/{i}" for i in (used + rest)[:5]]
    cfg["mcp"] = {"resource_limit": 0}
    config.write_text(json.dumps(cfg))
    assert _uris(srv) == ["engram://index"]


def test_R_WIRE_4_three_memories_one_used_lists_all_three(mcp, tmp_path, write_memory):
    from engram.core import api

    proj = tmp_path / "three"
    proj.mkdir()
    api.init(proj)
    for mid in ("alpha-fact", "beta-fact", "gamma-fact"):
        write_memory(proj / ROOT, "knowledge", mid, f"The {mid.split('-')[0]} fact")
    s = mcp(cwd=proj)
    s.initialize("2025-11-25")
    read(s, "engram://memory/gamma-fact")
    assert _uris(s) == ["engram://index", "engram://memory/gamma-fact",
                        "engram://memory/alpha-fact", "engram://memory/beta-fact"]  # fmt: skip
    for uri in _uris(s)[1:]:
        assert "error" not in read(s, uri)  # every listed memory can be read


def test_R_WIRE_4_default_limit_is_20(srv, example_project, write_memory):
    root = example_project / ROOT
    for i in range(25):
        write_memory(root, "knowledge", f"fact-{i:02d}", f"Fact number {i}")
    resources = srv.request("resources/list")["result"]["resources"]
    assert len(resources) == 1 + 20  # unused memories fill the list too
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
