"""The `propose` prompt (R-WIRE-3) carries the whole proposal protocol."""

from __future__ import annotations

import re

from mcp_wire import envelope

from engram.core.write.candidates import parse_candidates
from engram.mcp.prompts import PROTOCOL


def test_R_WIRE_3_the_propose_prompt_and_the_enrich_prompt(mcp):
    s = mcp()
    s.initialize()
    prompts = s.request("prompts/list")["result"]["prompts"]
    assert [p["name"] for p in prompts] == ["propose", "enrich"]
    got = s.request("prompts/get", {"name": "propose"})["result"]
    assert got["messages"][0]["role"] == "user"
    assert got["messages"][0]["content"]["text"] == PROTOCOL
    modern = s.request("prompts/get", {"_meta": envelope(), "name": "propose"})["result"]
    assert modern["messages"] == got["messages"]


def test_R_WIRE_3_unknown_prompt_is_invalid_params(mcp):
    s = mcp()
    s.initialize()
    assert s.request("prompts/get", {"name": "nope"})["error"]["code"] == -32602


def test_R_WIRE_3_protocol_covers_format_approval_and_force():
    # the candidate lines in the prompt are accepted by the parser as written
    examples = [line.strip() for line in PROTOCOL.splitlines() if line.strip().startswith("TYPE:")]
    assert len(examples) == 4
    assert len(parse_candidates("\n".join(examples))) == 4
    for words in (
        "approve all",
        "approve 1,3",
        "Never call engram_commit before the human has approved",
        "Verdict",
        "nothing was saved",
    ):
        assert words in PROTOCOL


def test_R_FORCE_1_force_rule_in_the_prompt():
    assert "/engram save-session --force" in PROTOCOL
    assert "/engram ss -f" in PROTOCOL
    assert "engram save-session --query-level 50 --force" in PROTOCOL
    assert (
        "MCP commit through\nengram_commit" in PROTOCOL
        or "MCP commit through engram_commit" in PROTOCOL
    )


def test_the_enrich_prompt_lists_memories_without_triggers_and_the_line_to_propose(
    mcp, example_project
):
    s = mcp(cwd=example_project)
    s.initialize()
    text = s.request("prompts/get", {"name": "enrich"})["result"]["messages"][0]["content"]["text"]
    assert "Memories without triggers" in text
    assert "TYPE: rule | UPDATE: <id> | TRIGGERS:" in text
    listed = re.findall(r"^- ([a-z0-9-]+) \(", text, re.MULTILINE)
    assert listed
    # the model's answer goes through the normal proposal: nothing is written before approval
    line = f"TYPE: rule | UPDATE: {listed[0]} | TRIGGERS: first phrase; second phrase"
    out = s.call("engram_save_session", {"text": line})
    assert out["result"]["isError"] is False, out
    assert "adds triggers only" in out["result"]["content"][0]["text"]
