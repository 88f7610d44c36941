"""The eleven tools in one table: schema, description, annotations, `_meta`, and the core call.

Every tool resolves the workspace per call and calls `engram.core.api`; the only logic here
is argument checking and the approval flows of `engram_save`, `engram_save_session` and
`engram_note` (the dialog instead of the token when the client can show one).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from engram.mcp import elicitation as eli
from engram.mcp.protocol import INVALID_PARAMS, Era, RpcError

if TYPE_CHECKING:
    from engram.core.api import Roots
    from engram.core.results import Result

RELOAD_ACTION = "reload_memory"
RELOAD_SENTENCE = (
    "Memory routing changed: call engram_load again for the current task so that you work "
    "with the memory that now applies."
)
META_ALWAYS_LOAD = "anthropic/alwaysLoad"
META_REQUIRES_USER = "anthropic/requiresUserInteraction"


class DialogTimeout(Exception):
    """The client did not answer the dialog in time."""


class DialogFailed(Exception):
    """The client answered the dialog with an error, or went away."""


class Host(Protocol):
    """What the server lends a tool: the core thread, the dialog and the state sealer."""

    elicitation: bool
    sealer: eli.Sealer

    def core(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any: ...

    def can_dialog(self, era: Era) -> bool: ...

    def ask(self, method: str, params: dict[str, Any], timeout: float) -> Any: ...


@dataclass
class Call:
    """One tools/call: the tool's arguments plus the raw params (requestState, inputResponses)."""

    name: str
    args: dict[str, Any]
    era: Era
    params: dict[str, Any]
    host: Host


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    properties: dict[str, Any]
    run: Callable[[Call, Roots], Any]
    required: tuple[str, ...] = ()
    annotations: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def input_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {
            "type": "object",
            "properties": self.properties,
            "additionalProperties": False,
        }
        if self.required:
            schema["required"] = list(self.required)
        return schema

    @property
    def read_only(self) -> bool:
        return bool(self.annotations.get("readOnlyHint"))


# The envelope every tool returns in structuredContent (R-OUT-2).
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "contract_version": {"type": "string"},
        "ok": {"type": "boolean"},
        "data": {"type": "object"},
        "diagnostics": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "level": {"type": "string"},
                    "code": {"type": "string"},
                    "message": {"type": "string"},
                    "path": {"type": "string"},
                },
                "required": ["level", "code", "message"],
            },
        },
    },
    "required": ["contract_version", "ok", "data", "diagnostics"],
}


# ---------------------------------------------------------------- argument checking


def _type_ok(value: Any, spec: dict[str, Any]) -> bool:
    if "anyOf" in spec:
        return any(
            _type_ok(value, s) and _constraint_error("", value, s) is None for s in spec["anyOf"]
        )
    t = spec.get("type")
    if t == "string":
        return isinstance(value, str)
    if t == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if t == "boolean":
        return isinstance(value, bool)
    if t == "array":
        return isinstance(value, list) and all(_type_ok(v, spec.get("items", {})) for v in value)
    return True


def _constraint_error(name: str, value: Any, spec: dict[str, Any]) -> str | None:
    if "enum" in spec and value not in spec["enum"]:
        return f"{name} must be one of {', '.join(map(str, spec['enum']))}"
    if "const" in spec and value != spec["const"]:
        return f"{name} must be {spec['const']!r}"
    if isinstance(value, int) and not isinstance(value, bool):
        lo, hi = spec.get("minimum"), spec.get("maximum")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            return f"{name} must be an integer from {lo} to {hi}"
    if isinstance(value, str) and "maxLength" in spec and len(value) > spec["maxLength"]:
        return f"{name} is longer than {spec['maxLength']} characters"
    if isinstance(value, str) and len(value) < spec.get("minLength", 0):
        return f"{name} is empty; give at least {spec['minLength']} character(s)"
    if isinstance(value, list) and len(value) > spec.get("maxItems", len(value)):
        return f"{name} has {len(value)} items; at most {spec['maxItems']}"
    if isinstance(value, list):
        for v in value:
            err = _constraint_error(f"each item of {name}", v, spec.get("items", {}))
            if err:
                return err
    return None


def _describe_type(spec: dict[str, Any]) -> str:
    if "anyOf" in spec:
        return " or ".join(_describe_type(s) for s in spec["anyOf"])
    if "const" in spec:
        return repr(spec["const"])
    t = spec.get("type", "a value")
    if t == "array":
        items = spec.get("items", {})
        low = f" from {items['minimum']}" if "minimum" in items else ""
        return f"an array of {items.get('type', 'value')}s{low}"
    return {"string": "a string", "integer": "an integer", "boolean": "true or false"}.get(t, t)


def check_arguments(tool: Tool, args: dict[str, Any]) -> dict[str, Any]:
    """Reject unknown, missing, ill-typed or non-text arguments with one clear message (UsageError)."""
    from engram.core.api import check_strings
    from engram.core.errors import UsageError

    unknown = sorted(k for k in args if k not in tool.properties)
    if unknown:
        allowed = ", ".join(tool.properties) or "no arguments"
        raise UsageError(f"{tool.name}: unknown argument {unknown[0]!r}; allowed: {allowed}")
    for name in tool.required:
        if args.get(name) in (None, ""):
            raise UsageError(f"{tool.name}: argument {name!r} is required")
    for name, value in args.items():
        spec = tool.properties[name]
        if value is None:
            continue
        if not _type_ok(value, spec):
            raise UsageError(f"{tool.name}: argument {name!r} must be {_describe_type(spec)}")
        err = _constraint_error(f"{tool.name}: argument {name!r}", value, spec)
        if err:
            raise UsageError(err)
        # JSON strings may hold what no text can ("\ud800", NUL): refused, naming the argument.
        check_strings(value, f"{tool.name}: argument {name!r}", "an argument")
    return {k: v for k, v in args.items() if v is not None}


# ---------------------------------------------------------------- read tools


def _api() -> Any:
    from engram.core import api

    return api


def _ids(value: str | None) -> list[str] | None:
    if not value:
        return None
    return [part.strip() for part in value.split(",") if part.strip()]


def run_load(call: Call, roots: Roots) -> Result:
    from engram.core.api import checked_signals

    a = call.args
    ids = _ids(a.get("id"))
    searches = tuple(a.get("queries") or ())
    if (
        not ids
        and not a.get("query", "").strip()
        and not searches
        and not a.get("paths")
        and not a.get("branch")
    ):
        from engram.core.errors import UsageError

        raise UsageError(
            "engram_load: give a `query` (the task), the `paths`/`branch` the work touches, "
            "or an `id` (memory ids)"
        )
    paths, branch = checked_signals(a.get("paths"), a.get("branch"), roots.project_dir)
    api = _api()
    request = api.LoadRequest(
        query=None if ids else (a.get("query") or None),
        queries=() if ids else searches,
        ids=tuple(ids or ()),
        budget_tokens=None if ids else a.get("budget_tokens"),  # R-TOOL-3
        disclosure=a.get("disclosure", "auto"),
        full=a.get("full", False),
        explain=a.get("explain", False),
        paths=tuple(paths),
        branch=branch,
    )
    return call.host.core(api.load, roots, request)


def run_route(call: Call, roots: Roots) -> Result:
    return call.host.core(_api().route, roots, call.args["query"])


def run_search(call: Call, roots: Roots) -> Result:
    return call.host.core(
        _api().search, roots, call.args["query"], limit=call.args.get("limit", 10)
    )


def run_verify(call: Call, roots: Roots) -> Result:
    return call.host.core(_api().verify, roots)


def run_status(call: Call, roots: Roots) -> Result:
    return call.host.core(_api().status, roots)


# ---------------------------------------------------------------- settings


def _with_reload(result: Result) -> Result:
    """Tell the host that routing changed, so it reloads memory for the task at hand."""
    if result.ok:
        core_said_it = result.data.get("agent_action") == RELOAD_ACTION
        result.data = {
            **result.data,
            "agent_action": RELOAD_ACTION,
            "agent_instruction": RELOAD_SENTENCE,
        }
        if not core_said_it:
            result.text = (result.text.rstrip("\n") + "\n\n" + RELOAD_SENTENCE).lstrip()
    return result


def run_set_role(call: Call, roots: Roots) -> Result:
    return _with_reload(call.host.core(_api().set_role, roots, call.args.get("roles") or None))


def run_set_rule_variant(call: Call, roots: Roots) -> Result:
    mode = call.args["mode"]
    result = call.host.core(_api().set_rule_variant, roots, mode)
    return result if mode == "status" else _with_reload(result)


# ---------------------------------------------------------------- write path


def run_commit(call: Call, roots: Roots) -> Result:
    a = call.args  # checked: approve is "all" or a list of numbers from 1 (R-APP-2)
    approve = a["approve"] if a["approve"] == "all" else list(a["approve"])
    return call.host.core(_api().commit, roots, a["approval_token"], approve, scope=a.get("scope"))


def run_save(call: Call, roots: Roots) -> Any:
    a = call.args
    return approval_flow(
        call,
        roots,
        "save",
        lambda: _api().save(
            roots, a.get("type"), a["text"], scope=a.get("scope"), triggers=a.get("triggers")
        ),
    )


def run_save_session(call: Call, roots: Roots) -> Any:
    a = call.args
    return approval_flow(
        call,
        roots,
        "save",
        lambda: _api().propose(roots, a["text"], kind="save_session", scope=a.get("scope")),
    )


def run_note(call: Call, roots: Roots) -> Any:
    a = call.args
    return approval_flow(
        call,
        roots,
        "note",
        lambda: _api().propose_note(
            roots, a["text"], a["objective"], mtype=a.get("type", "knowledge"), scope=a.get("scope")
        ),
    )


# ---------------------------------------------------------------- approval flows (R-ELI-*)


def workspace_key(roots: Roots) -> str:
    return str(roots.primary.path.resolve())


NEXT_STEP = (
    "Next step: nothing is saved yet. Show the person these candidates and ask them to "
    "approve; only after they said yes, call engram_commit with this approval_token and "
    "the numbers they approved."
)


def guided(result: Any) -> Any:
    """A result that hands the approval back to the model leads with what it must do.

    Hosts show the model either the text or the structured envelope, so the step is the
    first line of one and the first key of the other's `data`.
    """
    if not hasattr(result, "data") or not result.data.get("approval_token"):
        return result
    head, _, rest = result.text.partition("\n")
    if head.startswith(eli.NOTHING_SAVED):
        result.text = f"{head}\n{NEXT_STEP}\n{rest}"
    else:
        result.text = f"{NEXT_STEP}\n\n{result.text}"
    result.data = {"next_step": NEXT_STEP, **result.data}
    return result


def approval_flow(call: Call, roots: Roots, kind: str, propose: Callable[[], Result]) -> Any:
    """Propose, then ask in the dialog when possible; otherwise the token preview, guided."""
    return guided(_approval_flow(call, roots, kind, propose))


def _approval_flow(call: Call, roots: Roots, kind: str, propose: Callable[[], Result]) -> Any:
    host, era = call.host, call.era
    if era.modern and ("requestState" in call.params or "inputResponses" in call.params):
        return _modern_retry(call, roots)
    proposal: Result = host.core(propose)
    token = proposal.data.get("approval_token")
    if not proposal.ok or not token or not host.elicitation:
        return proposal
    form = eli.save_form(proposal.data) if kind == "save" else eli.note_form(proposal.data)
    if kind == "save" and not form.numbers:
        return proposal
    if era.modern:
        if not era.form_elicitation():
            return proposal  # R-ELI-7
        payload = {
            "m": "tools/call",
            "tool": call.name,
            "ws": workspace_key(roots),
            "args": eli.args_digest(call.args),
            "token": token,
            "form": form.as_dict(),
            "text": proposal.text,
            "data": proposal.data,
            "asked_at": time.time(),
        }
        return input_required(form, host.sealer.seal(payload))
    if not host.can_dialog(era):
        return proposal  # R-ELI-7
    timeout = eli.dialog_timeout()
    asked_at = time.monotonic()
    try:
        reply = host.ask("elicitation/create", form.params(era.has("elicitation_mode")), timeout)
    except DialogTimeout:
        why = f"the approval dialog got no answer within {timeout:g} s"
        return _fallback(proposal.text, proposal.data, "timeout", why)
    except DialogFailed as exc:
        return _fallback(
            proposal.text, proposal.data, "client_error", f"the approval dialog failed: {exc}"
        )
    try:
        action, content = eli.parse_elicit_result(reply)
    except RpcError:
        return _fallback(
            proposal.text, proposal.data, "client_error", "the approval dialog answer was malformed"
        )
    answered_in = time.monotonic() - asked_at
    return settle(
        call, roots, form, token, action, content, proposal.text, proposal.data, answered_in
    )


def input_required(form: eli.Form, state: str) -> dict[str, Any]:
    return {
        "resultType": "input_required",
        "inputRequests": {
            eli.INPUT_KEY: {"method": "elicitation/create", "params": form.params(with_mode=True)}
        },
        "requestState": state,
    }


def _modern_retry(call: Call, roots: Roots) -> Any:
    """Round two of the stateless dialog: verify the sealed state, then act on the answer."""
    sealer = call.host.sealer
    state = call.params.get("requestState")
    payload = sealer.open(state, spend=False)
    if (
        payload.get("m") != "tools/call"
        or payload.get("tool") != call.name
        or payload.get("ws") != workspace_key(roots)
        or payload.get("args") != eli.args_digest(call.args)
    ):
        raise eli.invalid_state()
    form = eli.Form.from_dict(payload["form"])
    responses = call.params.get("inputResponses")
    if responses is not None and not isinstance(responses, dict):
        raise RpcError(INVALID_PARAMS, "inputResponses must be an object")
    if not responses or eli.INPUT_KEY not in responses:
        sealer.open(state, spend=True)
        fresh = {k: v for k, v in payload.items() if k != "exp"}
        return input_required(form, sealer.seal(fresh))
    action, content = eli.parse_elicit_result(responses[eli.INPUT_KEY])
    sealer.open(state, spend=True)  # single use: a replay now fails
    asked_at = payload.get("asked_at")
    answered_in = time.time() - asked_at if isinstance(asked_at, float | int) else None
    return settle(
        call, roots, form, payload["token"], action, content, payload["text"], payload["data"],
        answered_in,
    )  # fmt: skip


def settle(
    call: Call,
    roots: Roots,
    form: eli.Form,
    token: str,
    action: str,
    content: Any,
    proposal_text: str,
    proposal_data: dict[str, Any],
    answered_in: float | None = None,
) -> Result:
    """accept → commit exactly the selection; decline/invalid → revoke; cancel → token text.

    `answered_in`: seconds between asking and the answer, to tell a person's decline
    from a host that declined by itself.
    """
    from engram.core.results import Result

    api, core = _api(), call.host.core
    if action == "cancel":
        return _fallback(
            proposal_text, proposal_data, "cancel", "the approval dialog was cancelled"
        )
    if action == "decline":
        core(api.decline, roots, token, eli.DECLINED_REASON)
        text, declined_by = eli.declined_text(answered_in)
        return Result(
            text=text,
            data={
                "outcome": "declined",
                "declined_by": declined_by,
                "proposal_id": proposal_data.get("proposal_id"),
            },
        )
    try:
        answer = eli.read_answer(form, content)
    except eli.InvalidAnswer as exc:
        core(api.decline, roots, token, eli.DECLINED_REASON)
        result = Result(
            text=(
                f"{eli.NOTHING_SAVED}: the answer in the approval dialog was invalid ({exc}), "
                "so the proposal was revoked. Propose again if the human still wants it saved."
            ),
            data={"outcome": "invalid_answer", "proposal_id": proposal_data.get("proposal_id")},
            ok=False,
        )
        result.warn("approval.invalid_answer", str(exc))
        return result
    approve: str | list[int] = "all" if form.kind == "note" else answer.selected
    try:
        if answer.choices:  # the person decided possible duplicates in the dialog
            committed: Result = core(
                api.commit_choosing, roots, token, approve, answer.choices, scope=answer.scope
            )
        else:
            committed = core(api.commit, roots, token, approve, scope=answer.scope)
    except Exception as exc:  # the approval is not lost when the write could not happen
        if not eli.token_survives(exc):
            raise
        why = f"the commit failed: {getattr(exc, 'message', exc)}"
        return _fallback(proposal_text, proposal_data, "commit_failed", why)
    committed.data = {**committed.data, "outcome": "accepted"}
    return committed


def _fallback(text: str, data: dict[str, Any], code: str, why: str) -> Result:
    """R-ELI-4: nothing was written; hand the token flow back to the agent."""
    from engram.core.results import Result

    result = Result(
        text=f"{eli.NOTHING_SAVED} ({why}).\n\n{text}",
        data={**data, "outcome": "fallback", "dialog": code},
    )
    result.info(f"dialog.{code}", f"{eli.NOTHING_SAVED}: {why}")
    return result


# ---------------------------------------------------------------- the table

READ = {"readOnlyHint": True, "openWorldHint": False}
QUERY = {
    "type": "string",
    "description": "The task or question, in a few words.",
    "maxLength": 4000,
}
SCOPE_SAVE = {
    "type": "string",
    "enum": ["workspace", "global", "both"],
    "description": "Where to save; default: the configured save_target.",
}
MEMORY_TYPE = {"type": "string", "enum": ["rule", "skill", "knowledge", "workflow"]}
TRIGGERS = {
    "type": "array",
    "items": {"type": "string", "minLength": 1, "maxLength": 120},
    "maxItems": 8,
    "description": "4-8 short phrasings a teammate would type when the memory applies.",
}
APPROVAL_RULE = "Never call engram_commit before the human has approved the displayed candidates."

TOOLS: tuple[Tool, ...] = (
    Tool(
        "engram_load",
        "Load project memory",
        "Recall this project's rules, skills and decisions for a task. Call it before starting "
        "work with the task as `query`, and write `queries`: 1 to 5 short searches in the words "
        "a memory about this work would use (the tools, files, services and practices the task "
        "involves, e.g. for 'the nightly export is late' → 'nightly export job schedule', "
        "'export timeout retry'); each is searched and the rankings fused. Returns the memories "
        "it is sure of in full, then likely ones as one-line cards, within a token budget: "
        "read the cards and fetch the ones that apply with `id`. data: selected_keys, "
        "body_keys, card_ids, omitted_ids, tokens.",
        {
            "query": QUERY,
            "queries": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": 200},
                "maxItems": 5,
                "description": "Your own searches for the task (1-5, a few words each): the "
                "names, tools and practices a memory about it would mention. Routed one by "
                "one, rankings fused; better than repeating the task.",
            },
            "id": {
                "type": "string",
                "description": "Memory id(s) to load in full, comma-separated (from card_ids or "
                "omitted_ids). budget_tokens has no effect with id.",
            },
            "budget_tokens": {
                "type": "integer",
                "minimum": 1,  # as `engram load --budget-tokens`: a tiny budget gives cards
                "maximum": 1_000_000,
                "description": "Token budget; default: load.budget_tokens. A budget too small "
                "for a body yields cards or omitted ids.",
            },
            "disclosure": {
                "type": "string",
                "enum": ["auto", "cards", "bodies"],
                "description": "auto (bodies then cards), cards only, or bodies only.",
            },
            "full": {
                "type": "boolean",
                "description": "Broader legacy output: all front matter and rule variants.",
            },
            "explain": {
                "type": "boolean",
                "description": "Add ranking evidence instead of bodies.",
            },
            "paths": {
                "type": "array",
                "items": {"type": "string", "maxLength": 1000},
                "description": "Files the work touches, relative to the project root (at most "
                "50): memories whose `paths:` globs match one, or whose body names it, rank "
                "higher, and the words of the paths count as weak task words.",
            },
            "branch": {
                "type": "string",
                "maxLength": 200,
                "description": "The branch the work is on; its words count as weak task words.",
            },
        },
        run_load,
        annotations={"title": "Load project memory", **READ},
    ),
    Tool(
        "engram_route",
        "Route a task",
        "Classify a task (bugfix, feature, refactor, test, docs, release, review, ops, ...) and "
        "list the memories it routes to, in load order. data.entries: id, type, scope, score.",
        {"query": QUERY},
        run_route,
        required=("query",),
        annotations={"title": "Route a task", **READ},
    ),
    Tool(
        "engram_search",
        "Search memory",
        "Search all visible memories by words, ranked by relevance. data.entries: id, type, "
        "scope, score, title. Load one in full with engram_load `id`.",
        {
            "query": QUERY,
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 50,
                "description": "Most results to return (default 10).",
            },
        },
        run_search,
        required=("query",),
        annotations={"title": "Search memory", **READ},
    ),
    Tool(
        "engram_verify",
        "Verify memory hashes",
        "Compare the memory files with their recorded hashes and report modified, missing, "
        "unmanaged or invalid files. Changes nothing.",
        {},
        run_verify,
        annotations={"title": "Verify memory hashes", **READ},
    ),
    Tool(
        "engram_status",
        "Memory status",
        "Report the memory roots, counts per type, configuration, health and usage counters.",
        {},
        run_status,
        annotations={"title": "Memory status", **READ},
    ),
    Tool(
        "engram_save",
        "Propose one memory",
        "Propose one memory (a rule, skill or piece of knowledge) from plain text. Writes "
        "nothing by itself: returns a numbered preview with a Verdict line and an "
        "approval_token; show the preview to the human. If the host supports the approval "
        "dialog, the human answers there instead and no token is returned. Give `triggers`: "
        "4 to 8 phrasings a teammate would type when this memory applies (the goal in product "
        "words, the symptom, the code task, a terse version, synonyms); the human approves "
        "them with the memory and they route later tasks to it. " + APPROVAL_RULE,
        {
            "text": {
                "type": "string",
                "description": "The memory, one or two sentences.",
                "maxLength": 4000,
            },
            "triggers": TRIGGERS,
            "type": {**MEMORY_TYPE, "description": "Memory type; default: inferred from the text."},
            "scope": SCOPE_SAVE,
        },
        run_save,
        required=("text",),
        annotations={
            "title": "Propose one memory",
            "readOnlyHint": False,
            "destructiveHint": False,
            "openWorldHint": False,
        },
    ),
    Tool(
        "engram_save_session",
        "Propose memories from this session",
        "Propose what this session taught as candidate lines, one per line: "
        "`TYPE: rule|skill|knowledge | TEXT: ... | CONTEXT: why | TRIGGERS: phrase; phrase; ...` "
        "(TRIGGERS: 4 to 8 phrasings a teammate would type when the memory applies, separated "
        "by ';'; optional `DEPENDS_ON: id`, `UPDATE: id`; `UPDATE: id | TRIGGERS: ...` with no "
        "TEXT only adds triggers to that memory). Writes nothing by itself: returns numbered candidates with Verdict "
        "lines (ADD, UPDATE, SUPERSEDE, NOOP) and an approval_token; show them to the human. "
        "If the host supports the approval dialog, the human answers there instead. "
        + APPROVAL_RULE,
        {
            "text": {
                "type": "string",
                "description": "Candidate lines, one per line.",
                "maxLength": 40000,
            },
            "scope": SCOPE_SAVE,
        },
        run_save_session,
        required=("text",),
        annotations={
            "title": "Propose memories from this session",
            "readOnlyHint": False,
            "destructiveHint": False,
            "openWorldHint": False,
        },
    ),
    Tool(
        "engram_commit",
        "Write approved memories",
        "Write a proposal the human has approved: pass its approval_token and `approve` as "
        '"all" or the approved candidate numbers counted from 1 (e.g. [1, 3]). '
        + APPROVAL_RULE
        + " Tokens are single use and expire after 30 minutes; related or duplicate candidates "
        "are deferred and reported.",
        {
            "approval_token": {
                "type": "string",
                "description": "The token from engram_save or engram_save_session.",
            },
            "approve": {
                "anyOf": [
                    {"type": "string", "const": "all"},
                    {"type": "array", "items": {"type": "integer", "minimum": 1}},
                ],
                "description": 'The candidates the human approved: "all" or numbers from 1.',
            },
            "scope": {
                "type": "string",
                "enum": ["workspace", "global"],
                "description": "Narrow a both-scope proposal to one scope (never widens).",
            },
        },
        run_commit,
        required=("approval_token", "approve"),
        annotations={
            "title": "Write approved memories",
            "readOnlyHint": False,
            "destructiveHint": True,
            "idempotentHint": False,
            "openWorldHint": False,
        },
        meta={META_REQUIRES_USER: True},  # R-APP-6
    ),
    Tool(
        "engram_set_role",
        "Set active roles",
        "Set the active roles (memories with another role stop routing); an empty list clears "
        "them. The result asks you to reload memory with engram_load.",
        {
            "roles": {
                "type": "array",
                "items": {"type": "string", "maxLength": 80},
                "description": 'Role slugs, e.g. ["backend"]; [] clears.',
            }
        },
        run_set_role,
        required=("roles",),
        annotations={
            "title": "Set active roles",
            "readOnlyHint": False,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        },
    ),
    Tool(
        "engram_set_rule_variant",
        "Set the rule-variant mode",
        "Choose which wording of rules agents see: light, balanced, strict or off; `status` "
        "reports the current mode. A change asks you to reload memory with engram_load.",
        {"mode": {"type": "string", "enum": ["light", "balanced", "strict", "off", "status"]}},
        run_set_rule_variant,
        required=("mode",),
        annotations={
            "title": "Set the rule-variant mode",
            "readOnlyHint": False,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        },
    ),
    Tool(
        "engram_note",
        "Record a task note",
        "Record one short, redacted note for the current objective in the working tier "
        "(git-ignored, expires after load.working_ttl_days). It never changes a durable "
        "memory. The human confirms once (dialog or approval_token). Returns id, file, valid_until.",
        {
            "text": {
                "type": "string",
                "description": "The note, one or two sentences.",
                "maxLength": 4000,
            },
            "objective": {
                "type": "string",
                "description": "The objective the note serves.",
                "maxLength": 400,
            },
            "type": {
                "type": "string",
                "enum": ["rule", "skill", "knowledge"],
                "description": "Default knowledge.",
            },
            "scope": {"type": "string", "enum": ["workspace", "global"]},
        },
        run_note,
        required=("text", "objective"),
        annotations={
            "title": "Record a task note",
            "readOnlyHint": False,
            "openWorldHint": False,
        },  # R-NOTE-6
    ),
)

BY_NAME: dict[str, Tool] = {t.name: t for t in TOOLS}


def describe(tool: Tool, era: Era, *, always_load: bool) -> dict[str, Any]:
    """The tools/list entry, holding only fields the era's version defines (§1.2)."""
    entry: dict[str, Any] = {"name": tool.name}
    if era.has("tool_title"):
        entry["title"] = tool.title
    entry["description"] = tool.description
    entry["inputSchema"] = tool.input_schema
    if era.has("output_schema"):
        entry["outputSchema"] = OUTPUT_SCHEMA
    if era.has("tool_annotations"):
        entry["annotations"] = dict(tool.annotations)
    meta = dict(tool.meta)
    if always_load and tool.name == "engram_load":
        meta[META_ALWAYS_LOAD] = True  # R-INS-2
    if meta and era.has("tool_meta"):
        entry["_meta"] = meta
    return entry
