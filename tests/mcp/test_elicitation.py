"""The approval dialog in both eras (engram-mcp.md §7, R-NOTE-3), raw JSON lines."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from mcp_wire import data_of, envelope, text_of

from engram.core import api
from engram.core.store.roots import create_layout, resolve_roots
from engram.mcp import elicitation as eli
from engram.mcp.protocol import Era, RpcError

ROOT = Path(".agents") / ".engram"
TWO = "\n".join(
    [
        "TYPE: knowledge | TEXT: The staging database is reset every Monday at dawn.",
        "TYPE: knowledge | TEXT: API errors use RFC 9457 problem details, listing fields in errors. | UPDATE: api-error-format",
    ]
)
FORM = {"elicitation": {"form": {}}}
SECRET_WORDS = ("staging database", "Monday", "RFC 9457")


def files(project: Path) -> dict[str, bytes]:
    root = project / ROOT
    return {
        str(p.relative_to(root)): p.read_bytes()
        for d in ("rules", "skills", "knowledge", "working", "archive")
        for p in (root / d).glob("*.md")
    }


def start(
    mcp,
    project,
    *args: str,
    version: str = "2025-11-25",
    caps: dict | None = None,
    env: dict | None = None,
):
    s = mcp(*args, cwd=project, env=env)
    s.initialize(version, FORM if caps is None else caps)
    return s


def begin(s, name: str, arguments: dict[str, Any]) -> int:
    rid = s.next_id()
    s.send(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
    )
    return rid


def server_request(s) -> dict[str, Any]:
    msg = s.recv()
    assert "method" in msg and "id" in msg, msg
    return msg


def answer(s, request: dict[str, Any], result: dict[str, Any]) -> None:
    s.send({"jsonrpc": "2.0", "id": request["id"], "result": result})


# ---------------------------------------------------------------- legacy dialog


def test_R_ELI_1_form_lists_numbers_verdicts_and_ids_never_text(mcp, example_project):
    s = start(mcp, example_project)
    rid = begin(s, "engram_save_session", {"text": TWO})
    req = server_request(s)
    assert req["method"] == "elicitation/create"
    params = req["params"]
    props = params["requestedSchema"]["properties"]
    assert props["candidate_1"]["type"] == "boolean"
    assert props["candidate_1"]["title"].startswith("1. ADD")
    assert props["candidate_2"]["title"].startswith("2. UPDATE api-error-format")
    assert props["scope"]["enum"] == ["workspace"]
    dumped = json.dumps(params)
    for word in SECRET_WORDS:
        assert word not in dumped
    answer(s, req, {"action": "cancel"})
    s.wait_for(rid)


def test_R_ELI_1_scope_both_can_be_narrowed_never_widened(mcp, example_project, tmp_path):
    glob = tmp_path / "global"
    create_layout(glob)
    env = {"ENGRAM_GLOBAL_DIR": str(glob)}
    s = start(mcp, example_project, env=env)
    rid = begin(
        s,
        "engram_save",
        {"type": "knowledge", "text": "Our wiki lives at the docs portal.", "scope": "both"},
    )
    req = server_request(s)
    assert req["params"]["requestedSchema"]["properties"]["scope"]["enum"] == [
        "both",
        "workspace",
        "global",
    ]
    answer(s, req, {"action": "accept", "content": {"candidate_1": True, "scope": "global"}})
    done = s.wait_for(rid)
    written = data_of(done)["written"]
    assert [w["scope"] for w in written] == ["global"], text_of(done)
    # a workspace-only proposal offers no wider scope, and a wider answer is refused
    rid = begin(
        s, "engram_save", {"type": "knowledge", "text": "Our chat lives in the team channel."}
    )
    req = server_request(s)
    assert req["params"]["requestedSchema"]["properties"]["scope"]["enum"] == ["workspace"]
    before = files(example_project)
    answer(s, req, {"action": "accept", "content": {"candidate_1": True, "scope": "both"}})
    refused = s.wait_for(rid)
    assert text_of(refused).startswith("nothing was saved")
    assert files(example_project) == before
    assert not list((glob / "knowledge").glob("*chat*"))


def test_R_ELI_2_accept_writes_exactly_the_selection_without_a_token(mcp, example_project):
    s = start(mcp, example_project)
    rid = begin(s, "engram_save_session", {"text": TWO})
    req = server_request(s)
    answer(
        s,
        req,
        {
            "action": "accept",
            "content": {"candidate_1": True, "candidate_2": False, "scope": "workspace"},
        },
    )
    done = s.wait_for(rid)
    assert done["result"]["isError"] is False, text_of(done)
    data = data_of(done)
    assert len(data["written"]) == 1 and data["written"][0]["verdict"] == "ADD"
    assert "approval_token" not in data and "token" not in text_of(done).lower()
    assert b"RFC 9457 problem details, listing" not in b"".join(files(example_project).values())


# ---------------------------------------------------------------- a possible duplicate

DUP_EXISTING = "TYPE: rule | TEXT: Run `pytest -q` before every commit\n"
DUP_NEW = "TYPE: rule | TEXT: Always run make lint and pytest -q before opening a pull request"
DUP_ID = "run-pytest-q-before-every-commit"


def _duplicate_dialog(mcp, project: Path, version: str = "2025-11-25"):
    api.save_session_force(resolve_roots(project), DUP_EXISTING)
    s = start(mcp, project, version=version)
    rid = begin(s, "engram_save_session", {"text": DUP_NEW})
    req = server_request(s)
    return s, rid, req


@pytest.mark.parametrize(
    ("choice", "added", "verdict"),
    [
        ("keep as new", 1, "ADD"),
        (f"update {DUP_ID}", 0, "UPDATE"),
        ("skip", 0, None),
    ],
)
def test_a_possible_duplicate_is_decided_in_the_dialog(
    mcp, example_project, choice, added, verdict
):
    s, rid, req = _duplicate_dialog(mcp, example_project)
    before = len(list((example_project / ROOT / "rules").glob("*.md")))
    field = req["params"]["requestedSchema"]["properties"]["candidate_1"]
    assert field["type"] == "string" and field["default"] == "skip"
    assert field["enum"] == ["skip", "keep as new", f"update {DUP_ID}"]
    assert DUP_ID in field["title"] and "make lint" not in json.dumps(req["params"])
    answer(s, req, {"action": "accept", "content": {"candidate_1": choice, "scope": "workspace"}})
    done = s.wait_for(rid)
    assert done["result"]["isError"] is False, text_of(done)
    data = data_of(done)
    assert data["deferred"] == [], text_of(done)  # never "deferred" after the person chose
    assert [w["verdict"] for w in data["written"]] == ([verdict] if verdict else [])
    assert len(list((example_project / ROOT / "rules").glob("*.md"))) == before + added
    if verdict is None:
        assert data["skipped"][0]["number"] == 1 and "skipped" in text_of(done)
    if verdict == "UPDATE":
        text = (example_project / ROOT / "rules" / f"{DUP_ID}.md").read_text()
        assert "make lint" in text and "revision: 2" in text


def test_a_possible_duplicate_in_a_2025_06_18_dialog_has_no_string_default(mcp, example_project):
    s, rid, req = _duplicate_dialog(mcp, example_project, version="2025-06-18")
    before = files(example_project)
    field = req["params"]["requestedSchema"]["properties"]["candidate_1"]
    assert "default" not in field and field["enum"][0] == "skip"
    answer(s, req, {"action": "accept", "content": {"candidate_1": "maybe", "scope": "workspace"}})
    refused = s.wait_for(rid)
    assert "must be answered with one of skip, keep as new" in text_of(refused)
    assert files(example_project) == before


def test_a_decline_faster_than_a_person_reads_is_reported_as_the_host_s():
    text, who = eli.declined_text(0.004)
    assert who == "host" and "without asking a person" in text and "4 ms" in text
    text, who = eli.declined_text(7.0)
    assert who == "person" and "the human" not in text
    assert eli.declined_text(None)[1] == "person"


def test_R_ELI_3_decline_revokes_the_proposal(mcp, example_project):
    s = start(mcp, example_project)
    before = files(example_project)
    rid = begin(s, "engram_save_session", {"text": TWO})
    answer(s, server_request(s), {"action": "decline"})
    done = s.wait_for(rid)
    assert text_of(done).startswith("nothing was saved")
    assert "approval_token" not in data_of(done)
    assert files(example_project) == before


def test_R_ELI_3_invalid_answer_revokes_too(mcp, example_project):
    s = start(mcp, example_project)
    before = files(example_project)
    for content in (
        {"candidate_1": "yes", "scope": "workspace"},
        {"candidate_1": False, "candidate_2": False, "scope": "workspace"},
        None,
    ):
        rid = begin(s, "engram_save_session", {"text": TWO})
        answer(s, server_request(s), {"action": "accept", "content": content})
        done = s.wait_for(rid)
        assert done["result"]["isError"] is True
        assert "invalid" in text_of(done) and "revoked" in text_of(done)
    assert files(example_project) == before


class FakeHost:
    """A host whose dialog answers with a fixed reply (in-process, for the token checks)."""

    def __init__(self, reply: Any) -> None:
        self.reply = reply
        self.elicitation = True
        self.sealer = eli.Sealer()
        self.asked: list[dict[str, Any]] = []

    def core(self, fn, *a, **kw):
        return fn(*a, **kw)

    def can_dialog(self, era: Era) -> bool:
        return True

    def ask(self, method, params, timeout):
        self.asked.append(params)
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


def _propose_then(project: Path, reply: Any):
    """Run engram_save_session's flow with a fake dialog; return (result, token)."""
    from engram.mcp import tools

    roots = resolve_roots(project)
    seen: dict[str, Any] = {}

    def propose():
        result = api.propose(roots, TWO, kind="save_session")
        seen["token"] = result.data["approval_token"]
        return result

    call = tools.Call(
        "engram_save_session", {"text": TWO}, Era("2025-11-25", False, FORM), {}, FakeHost(reply)
    )
    return tools.approval_flow(call, roots, "save", propose), seen["token"], roots


def test_R_ELI_3_later_commit_fails_with_the_declined_reason(example_project):
    from engram.core.errors import EngramError

    for reply in (
        {"action": "decline"},
        {"action": "accept", "content": {"candidate_1": 3, "scope": "workspace"}},
    ):
        result, token, roots = _propose_then(example_project, reply)
        assert result.text.startswith("nothing was saved")
        with pytest.raises(EngramError, match="approval was declined in the approval dialog"):
            api.commit(roots, token, "all")


def test_R_ELI_4_cancel_falls_back_to_the_token(mcp, example_project):
    s = start(mcp, example_project)
    rid = begin(s, "engram_save_session", {"text": TWO})
    answer(s, server_request(s), {"action": "cancel"})
    done = s.wait_for(rid)
    text = text_of(done)
    assert text.startswith("nothing was saved")
    token = data_of(done)["approval_token"]
    assert token in text and "Verdict: ADD" in text
    commit = s.call("engram_commit", {"approval_token": token, "approve": [1]})
    assert commit["result"]["isError"] is False, text_of(commit)


def test_R_ELI_4_client_error_falls_back_to_the_token(mcp, example_project):
    s = start(mcp, example_project)
    rid = begin(s, "engram_save", {"type": "knowledge", "text": "Backups run nightly at two."})
    req = server_request(s)
    s.send(
        {"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32603, "message": "dialog crashed"}}
    )
    done = s.wait_for(rid)
    assert text_of(done).startswith("nothing was saved")
    assert data_of(done)["approval_token"] in text_of(done)


def test_R_ELI_4_timeout_falls_back_to_the_token(mcp, example_project):
    s = start(mcp, example_project, env={eli.DIALOG_TIMEOUT_ENV: "1"})
    t0 = time.monotonic()
    rid = begin(s, "engram_save", {"type": "knowledge", "text": "Backups run nightly at two."})
    req = server_request(s)
    done = s.wait_for(rid, timeout=20)
    assert time.monotonic() - t0 >= 1
    assert text_of(done).startswith(
        "nothing was saved (the approval dialog got no answer within 1 s)"
    )
    assert data_of(done)["approval_token"] in text_of(done)
    cancelled = [m for m in s.aside if m.get("method") == "notifications/cancelled"]
    assert cancelled and cancelled[0]["params"]["requestId"] == req["id"]
    answer(
        s, req, {"action": "accept", "content": {"candidate_1": True, "scope": "workspace"}}
    )  # too late: ignored
    assert s.request("ping")["result"] == {}
    assert eli.dialog_timeout() == 60.0  # the default


def test_R_ELI_4_stdin_keeps_being_read_while_the_dialog_waits(mcp, example_project):
    s = start(mcp, example_project)
    rid = begin(s, "engram_save", {"type": "knowledge", "text": "Backups run nightly at two."})
    req = server_request(s)
    assert s.request("ping")["result"] == {}
    assert s.call("engram_search", {"query": "release"})["result"]["isError"] is False
    answer(s, req, {"action": "cancel"})
    assert text_of(s.wait_for(rid)).startswith("nothing was saved")


@pytest.mark.parametrize(("version", "has_mode"), [("2025-06-18", False), ("2025-11-25", True)])
def test_R_ELI_5_legacy_clients_get_elicitation_create(mcp, example_project, version, has_mode):
    s = start(mcp, example_project, version=version, caps={"elicitation": {}})
    rid = begin(s, "engram_save", {"type": "knowledge", "text": "Backups run nightly at two."})
    req = server_request(s)
    assert req["method"] == "elicitation/create"
    assert isinstance(req["id"], int)
    assert ("mode" in req["params"]) is has_mode
    scope = req["params"]["requestedSchema"]["properties"]["scope"]
    assert ("default" in scope) is has_mode  # 2025-06-18 strings have no default
    assert "default" in req["params"]["requestedSchema"]["properties"]["candidate_1"]
    answer(s, req, {"action": "cancel"})
    s.wait_for(rid)


@pytest.mark.parametrize(
    ("version", "caps", "args"),
    [
        ("2025-03-26", FORM, ()),  # elicitation does not exist in that version
        ("2025-11-25", {}, ()),  # no capability declared
        ("2025-11-25", {"elicitation": {"url": {}}}, ()),  # URL mode only
        ("2025-11-25", FORM, ("--no-elicitation",)),  # R-INS-5
    ],
)
def test_R_ELI_7_without_the_capability_the_token_flow_is_unchanged(
    mcp, example_project, version, caps, args
):
    s = start(mcp, example_project, *args, version=version, caps=caps)
    resp = s.call("engram_save", {"type": "knowledge", "text": "Backups run nightly at two."})
    token = resp["result"].get("structuredContent", {}).get("data", {}).get("approval_token")
    assert "Approval token:" in text_of(resp)
    assert not text_of(resp).startswith("nothing was saved")
    assert s.aside == []  # no elicitation/create was sent
    if token:
        assert token in text_of(resp)


def test_R_INS_5_no_elicitation_keeps_the_token_flow_in_both_eras(mcp, example_project):
    s = mcp("--no-elicitation", cwd=example_project)
    resp = s.request(
        "tools/call",
        {
            "_meta": envelope(FORM),
            "name": "engram_save",
            "arguments": {"type": "knowledge", "text": "Backups run nightly at two."},
        },
    )
    assert resp["result"]["resultType"] == "complete"
    assert data_of(resp)["approval_token"] in text_of(resp)


# ---------------------------------------------------------------- modern input_required


def modern_call(
    s, name: str, arguments: dict[str, Any], caps: dict | None = None, **extra: Any
) -> dict[str, Any]:
    return s.request(
        "tools/call",
        {
            "_meta": envelope(FORM if caps is None else caps),
            "name": name,
            "arguments": arguments,
            **extra,
        },
    )


SAVE = {"type": "knowledge", "text": "Backups run nightly at two."}


def test_R_ELI_6_input_required_then_retry_with_the_answer(mcp, example_project):
    s = mcp(cwd=example_project)
    first = modern_call(s, "engram_save", SAVE)["result"]
    assert first["resultType"] == "input_required"
    assert "ttlMs" not in first
    req = first["inputRequests"]["approval"]
    assert req["method"] == "elicitation/create" and req["params"]["mode"] == "form"
    assert "Backups" not in json.dumps(req)
    state = first["requestState"]
    assert "Backups" not in state and "approval_token" not in state
    before = files(example_project)
    done = modern_call(
        s,
        "engram_save",
        SAVE,
        requestState=state,
        inputResponses={
            "approval": {"action": "accept", "content": {"candidate_1": True, "scope": "workspace"}}
        },
    )
    assert done["result"]["resultType"] == "complete"
    assert done["result"]["isError"] is False, text_of(done)
    assert len(files(example_project)) == len(before) + 1
    # replaying the same state writes nothing and is refused
    replay = modern_call(
        s,
        "engram_save",
        SAVE,
        requestState=state,
        inputResponses={
            "approval": {"action": "accept", "content": {"candidate_1": True, "scope": "workspace"}}
        },
    )
    assert replay["error"]["code"] == -32602
    assert len(files(example_project)) == len(before) + 1


def _fresh_state(s) -> str:
    return modern_call(s, "engram_save", SAVE)["result"]["requestState"]


ACCEPT = {"approval": {"action": "accept", "content": {"candidate_1": True, "scope": "workspace"}}}


def test_R_ELI_6_forged_mismatched_or_restarted_states_are_refused(mcp, example_project):
    s = mcp(cwd=example_project)
    before = files(example_project)
    state = _fresh_state(s)
    head, body, tag = state.split(".")
    flipped = body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1]
    for bad in (f"{head}.{flipped}.{tag}", "v1.abc.def", "nonsense", "", 42, state + "x"):
        resp = modern_call(s, "engram_save", SAVE, requestState=bad, inputResponses=ACCEPT)
        assert resp["error"]["code"] == -32602, bad
        assert resp["error"]["data"] == {"reason": "invalid_request_state"}
    # bound to the tool and to the arguments
    assert (
        modern_call(
            s,
            "engram_save",
            {**SAVE, "text": "Backups run at three."},
            requestState=state,
            inputResponses=ACCEPT,
        )["error"]["code"]
        == -32602
    )
    assert (
        modern_call(
            s,
            "engram_note",
            {"text": "x", "objective": "y"},
            requestState=state,
            inputResponses=ACCEPT,
        )["error"]["code"]
        == -32602
    )
    # a restart invalidates open states
    s2 = mcp(cwd=example_project)
    assert (
        modern_call(s2, "engram_save", SAVE, requestState=state, inputResponses=ACCEPT)["error"][
            "code"
        ]
        == -32602
    )
    assert files(example_project) == before
    # the genuine state still works once
    ok = modern_call(s, "engram_save", SAVE, requestState=state, inputResponses=ACCEPT)
    assert ok["result"]["isError"] is False


def test_R_ELI_6_state_is_bound_to_the_workspace_and_expires(example_project, tmp_path):
    from engram.mcp import tools

    other = tmp_path / "other"
    other.mkdir()
    api.init(other)
    host = FakeHost(None)
    era = Era("2026-07-28", True, FORM)
    roots = resolve_roots(example_project)
    call = tools.Call("engram_save", SAVE, era, {}, host)
    first = tools.run_save(call, roots)
    state = first["requestState"]
    retry = {"requestState": state, "inputResponses": ACCEPT}
    with pytest.raises(RpcError) as exc:
        tools.run_save(tools.Call("engram_save", SAVE, era, retry, host), resolve_roots(other))
    assert exc.value.code == -32602
    expired = host.sealer.seal({"m": "tools/call"}, ttl=-1)
    with pytest.raises(RpcError):
        host.sealer.open(expired, spend=False)
    done = tools.run_save(tools.Call("engram_save", SAVE, era, retry, host), roots)
    assert done.ok and done.data["written"]


def test_R_ELI_6_decline_cancel_and_missing_answers(mcp, example_project):
    s = mcp(cwd=example_project)
    before = files(example_project)
    declined = modern_call(
        s,
        "engram_save",
        SAVE,
        requestState=_fresh_state(s),
        inputResponses={"approval": {"action": "decline"}},
    )
    assert text_of(declined).startswith("nothing was saved")
    cancelled = modern_call(
        s,
        "engram_save",
        SAVE,
        requestState=_fresh_state(s),
        inputResponses={"approval": {"action": "cancel"}},
    )
    token = data_of(cancelled)["approval_token"]
    assert text_of(cancelled).startswith("nothing was saved") and token in text_of(cancelled)
    again = modern_call(s, "engram_save", SAVE, requestState=_fresh_state(s), inputResponses={})
    assert again["result"]["resultType"] == "input_required"
    for bad in ({"approval": None}, {"approval": 3}, {"approval": {"action": "maybe"}}, []):
        resp = modern_call(s, "engram_save", SAVE, requestState=_fresh_state(s), inputResponses=bad)
        assert resp["error"]["code"] == -32602, bad
    assert files(example_project) == before
    assert (
        s.call("engram_commit", {"approval_token": token, "approve": "all"}, _meta=envelope())[
            "result"
        ]["isError"]
        is False
    )


def test_R_ELI_7_modern_client_without_elicitation_gets_the_token(mcp, example_project):
    s = mcp(cwd=example_project)
    resp = modern_call(s, "engram_save", SAVE, caps={})
    assert resp["result"]["resultType"] == "complete"
    assert data_of(resp)["approval_token"] in text_of(resp)


# ---------------------------------------------------------------- notes (R-NOTE-3)

NOTE = {
    "text": "The flaky upload test fails on slow disks.",
    "objective": "fix the flaky upload test",
}


def test_R_NOTE_3_one_yes_cancel_question_in_the_legacy_dialog(mcp, example_project):
    s = start(mcp, example_project)
    rid = begin(s, "engram_note", NOTE)
    req = server_request(s)
    props = req["params"]["requestedSchema"]["properties"]
    assert list(props) == ["save"] and props["save"]["type"] == "boolean"
    answer(s, req, {"action": "accept", "content": {"save": True}})
    done = data_of(s.wait_for(rid))
    assert {"id", "file", "valid_until"} <= set(done)
    assert Path(done["file"]).parent.name == "working"
    for reply in ({"action": "decline"}, {"action": "cancel"}):
        before = files(example_project)
        rid = begin(s, "engram_note", {**NOTE, "text": "Another observation about uploads."})
        answer(s, server_request(s), reply)
        out = s.wait_for(rid)
        assert text_of(out).startswith("nothing was saved")
        assert files(example_project) == before


def test_R_NOTE_3_timeout_writes_nothing(mcp, example_project):
    s = start(mcp, example_project, env={eli.DIALOG_TIMEOUT_ENV: "0.5"})
    before = files(example_project)
    rid = begin(s, "engram_note", NOTE)
    server_request(s)
    out = s.wait_for(rid)
    assert text_of(out).startswith("nothing was saved")
    assert files(example_project) == before


def test_R_NOTE_3_input_required_retry_for_notes(mcp, example_project):
    s = mcp(cwd=example_project)
    first = modern_call(s, "engram_note", NOTE)["result"]
    assert first["resultType"] == "input_required"
    done = modern_call(
        s,
        "engram_note",
        NOTE,
        requestState=first["requestState"],
        inputResponses={"approval": {"action": "accept", "content": {"save": True}}},
    )
    assert Path(data_of(done)["file"]).exists()


def test_an_accept_without_the_required_scope_is_invalid() -> None:
    import pytest as _pytest

    from engram.mcp.elicitation import Answer, Form, InvalidAnswer, read_answer

    form = Form("save", "Save?", {}, numbers=(1, 2), scopes=("workspace",))
    with _pytest.raises(InvalidAnswer, match="scope"):
        read_answer(form, {})
    assert read_answer(form, {"scope": "workspace", "candidate_2": False}) == Answer(
        [1], {}, "workspace"
    )


def test_the_dialog_shows_the_triggers_approved_with_a_memory_but_never_its_text() -> None:
    data = {
        "scopes": ["workspace"],
        "candidates": [
            {"number": 1, "type": "rule", "id": "smoke-tests", "verdict": "ADD",
             "text": "Run the smoke tests after every deploy.",
             "triggers": ["is prod healthy", "after a release"]},
            {"number": 2, "type": "rule", "id": "lint", "verdict": "ADD", "text": "Lint first."},
        ],
    }  # fmt: skip
    props = eli.save_form(data).schema["properties"]
    assert props["candidate_1"]["description"] == "Triggers: is prod healthy; after a release"
    assert "description" not in props["candidate_2"]
    assert "smoke tests after" not in json.dumps(props)  # R-ELI-1
