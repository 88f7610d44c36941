"""The official MCP Python SDK client against the real server, in both eras."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp import Client, StdioServerParameters  # the `mcp` test extra (2.3+)
from mcp import types as mt

MODES = ["legacy", "2026-07-28"]
ROOT = Path(".agents") / ".engram"


def params(project: Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "engram.mcp.server", *args],
        env=dict(os.environ),
        cwd=str(project),
    )


def knowledge(project: Path) -> set[str]:
    return {p.stem for p in (project / ROOT / "knowledge").glob("*.md")}


def run(fn: Any) -> Any:
    return anyio.run(fn)


@pytest.mark.parametrize("mode", MODES)
def test_sdk_lists_tools_loads_reads_and_prompts(example_project, mode):
    async def main() -> None:
        async with Client(params(example_project, "--always-load"), mode=mode) as client:
            if mode == "legacy":
                instructions = client.instructions
            else:  # a pinned version skips the probe; ask for discover explicitly
                instructions = (await client.session.send_discover(mode))["instructions"]
            assert instructions and "engram_commit" in instructions
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert len(tools) == 11
            assert tools["engram_load"].annotations.read_only_hint is True
            assert (tools["engram_load"].meta or {}).get("anthropic/alwaysLoad") is True
            result = await client.call_tool("engram_load", {"query": "cut a release"})
            assert result.is_error is False
            assert "run-tests-before-release" in result.content[0].text
            assert "run-tests-before-release" in result.structured_content["data"]["selected_keys"]
            resource = await client.read_resource("engram://memory/release-process")
            assert "How to cut a release" in resource.contents[0].text
            listed = await client.list_resources()
            assert str(listed.resources[0].uri) == "engram://index"
            prompt = await client.get_prompt("propose")
            assert "engram_commit" in prompt.messages[0].content.text

    run(main)


@pytest.mark.parametrize("mode", MODES)
def test_sdk_elicitation_accept_writes_the_selection(example_project, mode):
    asked: list[Any] = []

    async def accept(ctx: Any, p: Any) -> mt.ElicitResult:
        asked.append(p)
        return mt.ElicitResult(action="accept", content={"candidate_1": True, "scope": "workspace"})

    before = knowledge(example_project)

    async def main() -> None:
        async with Client(
            params(example_project), mode=mode, elicitation_callback=accept
        ) as client:
            result = await client.call_tool(
                "engram_save", {"type": "knowledge", "text": "Backups run nightly at two."}
            )
            assert result.is_error is False, result.content[0].text
            assert "approval_token" not in result.structured_content["data"]

    run(main)
    assert len(asked) == 1
    assert "Backups" not in str(asked[0])
    assert len(knowledge(example_project) - before) == 1


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_sdk_elicitation_decline_and_cancel_write_nothing(example_project, mode, action):
    async def answer(ctx: Any, p: Any) -> mt.ElicitResult:
        return mt.ElicitResult(action=action)

    before = knowledge(example_project)

    async def main() -> None:
        async with Client(
            params(example_project), mode=mode, elicitation_callback=answer
        ) as client:
            result = await client.call_tool(
                "engram_save", {"type": "knowledge", "text": "Backups run nightly at two."}
            )
            text = result.content[0].text
            assert text.startswith("nothing was saved")
            token = result.structured_content["data"].get("approval_token")
            assert (token is not None) is (action == "cancel")
            note = await client.call_tool(
                "engram_note", {"text": "Uploads fail on slow disks.", "objective": "flaky upload"}
            )
            assert note.content[0].text.startswith("nothing was saved")

    run(main)
    assert knowledge(example_project) == before
    assert not list((example_project / ROOT / "working").glob("*.md"))


def test_sdk_without_a_callback_gets_the_token_flow(example_project):
    async def main() -> None:
        for mode in MODES:
            async with Client(params(example_project), mode=mode) as client:
                result = await client.call_tool(
                    "engram_save", {"type": "knowledge", "text": "Backups run nightly at two."}
                )
                token = result.structured_content["data"]["approval_token"]
                done = await client.call_tool(
                    "engram_commit", {"approval_token": token, "approve": "all"}
                )
                assert done.is_error is False, done.content[0].text

    run(main)


def test_sdk_auto_mode_probes_discover(example_project):
    async def main() -> None:
        async with Client(params(example_project)) as client:
            assert client.protocol_version == "2026-07-28"
            assert (await client.call_tool("engram_status", {})).is_error is False

    run(main)
