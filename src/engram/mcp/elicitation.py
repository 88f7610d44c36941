"""The approval dialog: forms, answer checking, and the sealed `requestState` of 2026-07-28.

The dialog shows candidate numbers, verdicts and ids, never memory text (R-ELI-1). In the
stateless era the proposal travels inside `requestState`: compressed, encrypted and sealed
with keys that live only in this process, so a client can neither read the approval token
nor forge, alter or reuse a state, and a restart invalidates every open state (R-ELI-6).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
import zlib
from dataclasses import dataclass
from typing import Any

from engram.core.errors import ApprovalError, EngramError
from engram.mcp.protocol import INVALID_PARAMS, RpcError

DIALOG_TIMEOUT_S = 60.0  # R-ELI-4: an unanswered legacy dialog falls back to the token
DIALOG_TIMEOUT_ENV = "ENGRAM_MCP_DIALOG_TIMEOUT"  # seconds; for slow humans and for tests
STATE_TTL_S = 600.0  # an open input_required state lives ten minutes
STATE_VERSION = "v1"
INPUT_KEY = "approval"  # the one key of our inputRequests / inputResponses
CANDIDATE_PREFIX = "candidate_"
NOTHING_SAVED = "nothing was saved"
DECLINED_REASON = "approval was declined in the approval dialog"
# A decline this fast was not read by a person: the host answered the dialog by itself.
UNASKED_DECLINE_S = 0.5
KEEP_NEW, SKIP = "keep as new", "skip"


def dialog_timeout() -> float:
    """The dialog wait: 60 s unless $ENGRAM_MCP_DIALOG_TIMEOUT holds a positive number."""
    import os

    try:
        value = float(os.environ.get(DIALOG_TIMEOUT_ENV, ""))
    except ValueError:
        return DIALOG_TIMEOUT_S
    return value if 0 < value <= 3600 else DIALOG_TIMEOUT_S


def token_survives(exc: BaseException) -> bool:
    """Whether a commit that failed after the human accepted left its token working.

    The commit spends a token only together with its write (`engram.core.write.commit`), so a
    commit refused or rolled back (a link, a full disk, a held lock) wrote nothing and
    the token still commits once the cause is fixed; the dialog then hands the token
    flow back instead of losing the approval. A token that is spent, expired, revoked
    or being finished by the next command does not survive.
    """

    if not isinstance(exc, EngramError) or isinstance(exc, ApprovalError):
        return False
    return exc.code != "commit.interrupted"


class InvalidAnswer(ValueError):
    """An accepted dialog whose content does not fit the form (revokes the proposal)."""


# ---------------------------------------------------------------- forms


@dataclass(frozen=True)
class Form:
    """What the dialog asks: message and requestedSchema, plus what a valid answer may hold."""

    kind: str  # "save" | "note"
    message: str
    schema: dict[str, Any]
    numbers: tuple[int, ...] = ()
    scopes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "message": self.message,
            "schema": self.schema,
            "numbers": list(self.numbers),
            "scopes": list(self.scopes),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Form:
        return cls(d["kind"], d["message"], d["schema"], tuple(d["numbers"]), tuple(d["scopes"]))

    def params(self, with_mode: bool) -> dict[str, Any]:
        """`elicitation/create` params. `mode` and string defaults exist from 2025-11-25 on."""
        schema = self.schema
        if not with_mode:  # 2025-06-18: only booleans may carry a default
            props = {
                name: {k: v for k, v in prop.items() if k != "default" or prop["type"] == "boolean"}
                for name, prop in schema["properties"].items()
            }
            schema = {**schema, "properties": props}
        p: dict[str, Any] = {"message": self.message, "requestedSchema": schema}
        return {"mode": "form", **p} if with_mode else p


def _candidate_label(c: dict[str, Any]) -> str:
    verdict = str(c.get("verdict") or "ADD").strip()
    mid = str(c.get("id") or "").strip()
    label = f"{c.get('number')}. {verdict}"
    if mid and mid not in verdict.split():
        label += f" {mid}"
    mtype = str(c.get("type") or "").strip()
    return f"{label} ({mtype})" if mtype else label


def _candidate_description(c: dict[str, Any]) -> str:
    """The triggers the person approves with the memory (phrases that will route to it).

    The memory text itself is never in the form (R-ELI-1): the host shows the preview.
    """
    triggers = [str(t) for t in c.get("triggers") or [] if isinstance(t, str)]
    return "Triggers: " + "; ".join(triggers) if triggers else ""


def _wanted_by_default(c: dict[str, Any]) -> bool:
    return not str(c.get("verdict") or "").upper().startswith("NOOP")


def _duplicate_of(c: dict[str, Any]) -> dict[str, Any] | None:
    """The memory a candidate may repeat, when the proposal defers it for a person's choice."""
    dup = c.get("duplicate_of")
    if isinstance(dup, dict) and isinstance(dup.get("id"), str) and dup["id"]:
        return dup
    return None


def _choice_field(c: dict[str, Any], dup: dict[str, Any]) -> dict[str, Any]:
    """A possible duplicate: keep it as new, update the memory it may repeat, or skip it."""
    options = [SKIP, KEEP_NEW]
    if dup.get("type") == c.get("type"):
        options.append(f"update {dup['id']}")
    return {
        "type": "string",
        "title": f"{c['number']}. possible duplicate of {dup['id']} ({c.get('type')})",
        "description": (
            f"{KEEP_NEW}: write it beside {dup['id']}; update: replace {dup['id']} with it "
            "(the old revision is kept); skip: leave it out"
        ),
        "enum": options,
        "default": SKIP,
    }


def save_form(data: dict[str, Any]) -> Form:
    """One checkbox per candidate (number, verdict, id) and a scope that can only narrow.

    A possible duplicate gets a choice instead (keep as new / update / skip), so accepting
    the dialog never ends in "deferred" with nothing the person could do about it.
    """
    candidates = [c for c in data.get("candidates") or [] if isinstance(c.get("number"), int)]
    props: dict[str, Any] = {}
    for c in candidates:
        dup = _duplicate_of(c)
        field = (
            _choice_field(c, dup)
            if dup
            else {"type": "boolean", "title": _candidate_label(c), "default": _wanted_by_default(c)}
        )
        shown = _candidate_description(c)
        if shown:
            field["description"] = f"{shown} · {field['description']}" if dup else shown
        props[f"{CANDIDATE_PREFIX}{c['number']}"] = field
    scopes = [s for s in data.get("scopes") or ["workspace"] if isinstance(s, str)]
    options = ["both", *scopes] if len(scopes) > 1 else scopes
    props["scope"] = {
        "type": "string",
        "title": "Save to",
        "description": "both can be narrowed to one scope; a scope cannot be added",
        "enum": options,
        "default": options[0],
    }
    n = len(candidates)
    message = (
        f"Engram: save {n} proposed memor{'y' if n == 1 else 'ies'}? "
        "Tick the candidates to write; untick to leave one out."
    )
    schema = {"type": "object", "properties": props, "required": ["scope"]}
    return Form("save", message, schema, tuple(c["number"] for c in candidates), tuple(options))


def note_form(data: dict[str, Any]) -> Form:
    """One yes/cancel question for a working-tier note (R-NOTE-3)."""
    cands = data.get("candidates") or [{}]
    mid = data.get("id") or cands[0].get("id") or "note"
    until = data.get("valid_until")
    message = (
        f"Engram: save the working note {mid}" + (f" (kept until {until})" if until else "") + "?"
    )
    schema = {
        "type": "object",
        "properties": {"save": {"type": "boolean", "title": "Save this note", "default": True}},
        "required": ["save"],
    }
    return Form("note", message, schema)


@dataclass(frozen=True)
class Answer:
    """An accepted dialog: ticked candidates, choices for possible duplicates, the scope."""

    selected: list[int]
    choices: dict[int, str]  # number → new | update | skip (engram.core.write.commit)
    scope: str | None  # None = as proposed


def read_answer(form: Form, content: Any) -> Answer:
    """What the person chose in an accepted dialog; anything off the form is invalid."""
    if not isinstance(content, dict):
        raise InvalidAnswer("the dialog answer has no form content")
    if form.kind == "note":
        if content.get("save", True) is not True:
            raise InvalidAnswer("the note was not confirmed")
        return Answer([], {}, None)
    selected: list[int] = []
    choices: dict[int, str] = {}
    props = form.schema.get("properties") or {}
    for n in form.numbers:
        field_name = f"{CANDIDATE_PREFIX}{n}"
        spec = props.get(field_name) or {}
        if spec.get("type") == "string":  # a possible duplicate's choice
            value = content.get(field_name, SKIP)  # 2025-06-18 forms carry no string default
            if value not in spec.get("enum", ()):
                raise InvalidAnswer(
                    f"candidate {n} must be answered with one of {', '.join(spec['enum'])}"
                )
            choices[n] = "new" if value == KEEP_NEW else "skip" if value == SKIP else "update"
            continue
        value = content.get(field_name, True)
        if not isinstance(value, bool):
            raise InvalidAnswer(f"candidate {n} must be answered with true or false")
        if value:
            selected.append(n)
    if form.scopes and "scope" not in content:  # required in the form: a real dialog sends it
        raise InvalidAnswer("the dialog answer has no save scope (a required field)")
    scope = content.get("scope", form.scopes[0] if form.scopes else None)
    if scope not in form.scopes:
        raise InvalidAnswer(f"save scope {scope!r} is not one of {', '.join(form.scopes)}")
    if not selected and not choices:
        raise InvalidAnswer("no candidate was selected")
    return Answer(selected, choices, None if scope == "both" else scope)


def declined_text(answered_in: float | None) -> tuple[str, str]:
    """What a decline means for the model, and who declined ("person" or "host").

    The dialog cannot tell who pressed decline; a decline faster than anyone can read the
    form came from the host itself (a host with no one to show it to), and saying "the
    human declined" then would put words in the person's mouth.
    """
    if answered_in is not None and answered_in < UNASKED_DECLINE_S:
        return (
            f"{NOTHING_SAVED}: the host declined the approval dialog without asking a person "
            f"(it answered in {answered_in * 1000:.0f} ms), so the proposal was revoked. Do not "
            "call engram_commit for it. Tell the person nothing was saved and that this host "
            "did not show them the dialog; if they want it saved, they can run `engram save` "
            "(or `engram pending` to approve a new proposal) in a terminal.",
            "host",
        )
    return (
        f"{NOTHING_SAVED}: the approval dialog was declined, so the proposal was revoked. "
        "Do not call engram_commit for it.",
        "person",
    )


def parse_elicit_result(value: Any) -> tuple[str, Any]:
    """(action, content) of an ElicitResult; anything else is a malformed answer."""
    if not isinstance(value, dict) or value.get("action") not in ("accept", "decline", "cancel"):
        raise RpcError(
            INVALID_PARAMS,
            "inputResponses.approval must be an elicitation result with action "
            "accept, decline or cancel",
        )
    return value["action"], value.get("content")


# ---------------------------------------------------------------- sealed request state


def args_digest(arguments: Any) -> str:
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Sealer:
    """Encrypt-then-MAC with per-process keys: HMAC-SHA256 in counter mode, HMAC-SHA256 tag.

    States are single use: a nonce that has been opened for an answer is remembered until
    its state would have expired anyway.
    """

    def __init__(self, key: bytes | None = None) -> None:
        master = key or secrets.token_bytes(32)
        self._enc = hmac.new(master, b"engram-mcp state encryption", hashlib.sha256).digest()
        self._mac = hmac.new(master, b"engram-mcp state authentication", hashlib.sha256).digest()
        self._spent: dict[bytes, float] = {}
        self._lock = threading.Lock()

    def _stream(self, nonce: bytes, n: int) -> bytes:
        out = bytearray()
        counter = 0
        while len(out) < n:
            block = nonce + counter.to_bytes(8, "big")
            out += hmac.new(self._enc, block, hashlib.sha256).digest()
            counter += 1
        return bytes(out[:n])

    def seal(self, payload: dict[str, Any], ttl: float = STATE_TTL_S) -> str:
        body = dict(payload, exp=time.time() + ttl)
        plain = zlib.compress(json.dumps(body, separators=(",", ":")).encode("utf-8"))
        nonce = secrets.token_bytes(16)
        cipher = bytes(a ^ b for a, b in zip(plain, self._stream(nonce, len(plain)), strict=True))
        head = f"{STATE_VERSION}.{_b64(nonce + cipher)}"
        tag = hmac.new(self._mac, head.encode("ascii"), hashlib.sha256).digest()
        return f"{head}.{_b64(tag)}"

    def open(self, state: Any, *, spend: bool) -> dict[str, Any]:
        """The payload of a genuine, unexpired, unspent state; otherwise -32602."""
        try:
            if not isinstance(state, str) or len(state) > 1_000_000:
                raise ValueError("not a state string")
            version, body, tag = state.split(".")
            if version != STATE_VERSION:
                raise ValueError("unknown state version")
            want = hmac.new(self._mac, f"{version}.{body}".encode("ascii"), hashlib.sha256)
            if not hmac.compare_digest(want.digest(), _unb64(tag)):
                raise ValueError("bad seal")
            raw = _unb64(body)
            nonce, cipher = raw[:16], raw[16:]
            plain = bytes(
                a ^ b for a, b in zip(cipher, self._stream(nonce, len(cipher)), strict=True)
            )
            payload = json.loads(zlib.decompress(plain))
            if not isinstance(payload, dict) or not isinstance(payload.get("exp"), float | int):
                raise ValueError("bad payload")
        except (ValueError, UnicodeError, zlib.error) as exc:
            raise invalid_state() from exc
        now = time.time()
        if payload["exp"] < now:
            raise invalid_state()
        with self._lock:
            self._spent = {k: v for k, v in self._spent.items() if v >= now}
            if nonce in self._spent:
                raise invalid_state()
            if spend:
                self._spent[nonce] = float(payload["exp"])
        return payload


def invalid_state() -> RpcError:
    """One answer for every bad state, so a prober learns nothing about why."""
    return RpcError(
        INVALID_PARAMS, "Invalid or expired requestState", {"reason": "invalid_request_state"}
    )
