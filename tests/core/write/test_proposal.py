"""One proposal schema: what is stored reads back identically, and a stored entry of the
wrong shape is refused with what was wrong (by the commit, `engram pending`, the page)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.core import api
from engram.core.errors import ApprovalError
from engram.core.store import pending as pending_file
from engram.core.store.roots import resolve_roots
from engram.core.write.proposal import Proposal, ProposalFormatError
from engram.ui import views

LINES = (
    "TYPE: rule | TEXT: Pin the Python version in CI. | TRIGGERS: bump python; ci python\n"
    "TYPE: skill | TEXT: To release: tag, build, upload. | CONTEXT: release week\n"
)


def stored(project: Path, token: str) -> dict:
    path = project / ".agents/.engram/pending-approvals.json"
    return json.loads(path.read_text())["entries"][pending_file.token_hash(token)]


def test_a_stored_proposal_reads_back_as_it_was_written(project: Path) -> None:
    roots = resolve_roots(project)
    api.commit(roots, api.propose(roots, "TYPE: rule | TEXT: Run ruff before pushing.").data[
        "approval_token"], "all")  # fmt: skip
    token = api.propose(
        roots, LINES + "TYPE: rule | TEXT: Run ruff before pushing, always.\n"
    ).data["approval_token"]
    raw = stored(project, token)["proposal"]
    proposal = Proposal.from_json(raw)
    assert proposal.to_json() == raw  # nothing dropped, nothing added, same JSON
    first, second = proposal.candidates[:2]
    assert first.triggers == ("bump python", "ci python") and first.verdict.kind == "ADD"
    assert second.context == "release week" and second.type == "skill"
    assert proposal.scopes == ("workspace",) and proposal.expires_at > 0


def test_the_preview_the_page_and_pending_read_the_same_candidates(project: Path) -> None:
    roots = resolve_roots(project)
    result = api.propose(roots, LINES)
    page = views.proposals(roots)["proposals"]
    listed = api.waiting_proposals(roots)
    assert len(page) == len(listed) == 1
    ids = [c["id"] for c in result.data["candidates"]]
    assert [c["id"] for c in page[0]["candidates"]] == ids
    assert [c.id for c in listed[0].proposal.candidates] == ids
    assert page[0]["candidates"][0]["triggers"] == ["bump python", "ci python"]


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda p: p.update(candidates="everything"), "candidates is str, not list"),
        (lambda p: p["candidates"][0].update(number="1"), "number is str, not int"),
        (lambda p: p["candidates"][0]["verdict"].update(kind="DELETE"), "verdict 'DELETE'"),
        (lambda p: p["candidates"][0].update(triggers=[1]), "triggers holds something other"),
        (lambda p: p["candidates"][0].update(depends_on="x"), "depends_on is str"),
    ],
)
def test_a_stored_entry_of_the_wrong_shape_is_refused_by_every_reader(
    project: Path, edit, says: str
) -> None:
    roots = resolve_roots(project)
    token = api.propose(roots, LINES).data["approval_token"]
    path = project / ".agents/.engram/pending-approvals.json"
    data = json.loads(path.read_text())
    entry = data["entries"][pending_file.token_hash(token)]
    edit(entry["proposal"])
    with pytest.raises(ProposalFormatError, match=says):
        Proposal.from_json(entry["proposal"])
    # signed again with the token and the user's key, as only Engram could: both integrity
    # checks pass, the shape check still refuses it and nothing is written
    key = pending_file.token_hash(token)
    entry["mac"] = pending_file.proposal_mac(token, entry["proposal"])
    signature = pending_file.user_mac(key, entry)
    if signature is not None:
        entry["user_mac"] = signature
    path.write_text(json.dumps(data))
    with pytest.raises(ApprovalError, match="cannot be read") as err:
        api.commit(roots, token, "all")
    assert err.value.code == "approval.tampered"
    assert not list((project / ".agents/.engram/rules").glob("*.md"))
    listed = api.waiting_proposals(roots)
    assert listed[0].proposal is None and "cannot be read" in listed[0].problem
    assert views.proposals(roots)["proposals"] == []
