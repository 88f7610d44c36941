"""Generate realistic Engram workspaces for speed benchmarks.

Memories are composed from vocabularies of a software project (areas, components, tools,
paths, numbers, reasons) so that topics, lengths, tags, triggers, roles and depends_on
vary the way they do in a real repository, without any sentence being repeated verbatim
across the workspace. Output is deterministic for a given (n, seed) and fast: 10,000
memories take a couple of seconds.

    python benchmarks/generate.py OUT_DIR --n 1000 [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from pathlib import Path

from engram.core.memory import Memory, render_memory
from engram.core.store.files import file_hash
from engram.core.store.layout import WORKSPACE_SUBDIR, Root
from engram.core.store.manifest import write_manifest
from engram.core.store.roots import create_layout

# area -> (components, domain nouns)
AREAS: dict[str, tuple[list[str], list[str]]] = {
    "billing": (["invoice service", "dunning worker", "tax engine", "pdf renderer"],
                ["invoice", "credit note", "subscription", "proration", "coupon", "tax rate"]),
    "payments": (["stripe adapter", "payout reconciler", "ledger writer", "refund service"],
                 ["charge", "refund", "payout", "dispute", "payment intent", "mandate"]),
    "auth": (["session store", "oauth server", "sso bridge", "token issuer"],
             ["session", "api key", "oauth scope", "password reset", "mfa enrolment", "saml assertion"]),
    "api": (["public gateway", "webhook dispatcher", "rate limiter", "openapi exporter"],
            ["endpoint", "webhook", "pagination cursor", "idempotency key", "error payload", "api version"]),
    "database": (["migration runner", "connection pool", "read replica", "backfill job"],
                 ["migration", "index", "foreign key", "partition", "enum column", "advisory lock"]),
    "frontend": (["dashboard shell", "invoice editor", "settings pages", "design system"],
                 ["component", "route", "form", "modal", "chart", "data table"]),
    "infra": (["helm chart", "terraform stack", "ingress controller", "node pool"],
              ["deployment", "load balancer", "certificate", "dns record", "autoscaler", "secret"]),
    "ci": (["main pipeline", "nightly workflow", "release workflow", "runner fleet"],
           ["job", "cache", "artifact", "matrix build", "required check", "workflow file"]),
    "observability": (["metrics exporter", "tracing collector", "log shipper", "alert manager"],
                      ["metric", "trace", "log line", "alert", "dashboard", "slo"]),
    "search": (["indexer", "query parser", "ranking service", "suggestion api"],
               ["search index", "synonym list", "ranking weight", "facet", "autocomplete", "reindex"]),
    "notifications": (["email sender", "sms gateway", "push service", "template store"],
                      ["email template", "sms", "push notification", "digest", "unsubscribe link", "bounce"]),
    "reporting": (["export worker", "report builder", "warehouse sync", "csv writer"],
                  ["export", "report", "warehouse table", "scheduled report", "csv file", "pivot"]),
    "i18n": (["translation pipeline", "locale loader", "formatter", "crowdin sync"],
             ["locale", "translation key", "plural rule", "date format", "currency format", "rtl layout"]),
    "security": (["secret scanner", "waf rules", "audit log", "dependency scanner"],
                 ["vulnerability", "audit event", "csp header", "cors origin", "encryption key", "pentest finding"]),
    "mobile": (["ios app", "android app", "push bridge", "offline cache"],
               ["deep link", "app release", "crash report", "feature screen", "offline sync", "app store build"]),
    "data": (["event pipeline", "dbt project", "feature store", "kafka topic"],
             ["event schema", "dbt model", "kafka consumer", "retention policy", "pii column", "backfill"]),
}  # fmt: skip

TOOLS = ["pytest", "ruff", "mypy", "alembic", "celery", "redis", "postgres", "kafka", "helm",
         "terraform", "argocd", "sentry", "grafana", "prometheus", "playwright", "vitest", "vite",
         "storybook", "docker", "k6", "stripe", "postmark", "launchdarkly", "crowdin", "dbt",
         "opentelemetry", "pgbouncer", "nginx", "cosign", "renovate"]  # fmt: skip
ROLES = ["frontend", "platform", "data", "security", "support", "mobile", "finance"]
TEAMS = ["core", "payments", "platform", "web", "growth", "data", "mobile", "security"]
VERBS = ["validate", "retry", "cache", "log", "version", "migrate", "paginate", "sign",
         "encrypt", "batch", "throttle", "index", "archive", "audit", "review", "document"]  # fmt: skip
EVENTS = ["a release", "merging to main", "the nightly run", "a schema change", "an incident",
          "the Thursday train", "a customer escalation", "the quarterly audit", "a rollout",
          "enabling the flag", "the first deploy", "closing the ticket"]  # fmt: skip
REASONS = ["otherwise retries create duplicates", "the old pods still read the previous shape",
           "support needs the request id to find it", "the warehouse sync reads it every hour",
           "customers integrate against it directly", "the auditors ask for it every year",
           "replicas lag by up to two seconds", "mobile clients cache it for a day",
           "the on-call engineer has no other context at night", "it keeps the bill predictable",
           "a partial failure would leave the ledger unbalanced", "rollbacks must stay possible",
           "the rate limiter counts every attempt", "translations arrive a week later",
           "the cache survives deploys", "tests run in parallel on CI"]  # fmt: skip
RULE_TEMPLATES = [
    "Every {noun} change in the {component} goes through `{path}` and is reviewed by @{team}, since {reason}.",
    "Never {verb} {a_noun} from a request handler of the {component}; enqueue it on the `{queue}` queue, because {reason}.",
    "{A_noun} in the {component} must be {verb}ed before {event}; {reason}.",
    "Keep {noun} handling inside `{path}`: the {component} is the only writer and {tool} checks it.",
    "Do not call {tool} directly from the {component} when handling {a_noun}; use the wrapper in `{path}`.",
    "{Noun} limits in the {component} are {num} per tenant; raising one needs a ticket for @{team} before {event}.",
    "Time out {tool} calls made for {a_noun} after {ms} ms and report the failure with the `{slug}` tag.",
    "Log every {noun} the {component} rejects with its id and reason code `{area}.{slug}.{code}`.",
]
FACT_TEMPLATES = [
    "The {component} stores each {noun} in `{table}`, keyed by tenant and id, with {tool} on top.",
    "{Tool} runs the {noun} checks for the {component}; results land in `{path}` after {event}.",
    "The {component} processes about {num} {nouns} per minute at peak and {big} on the last day of a month.",
    "{A_noun} older than {days} days is moved to cold storage by the `{queue}` worker of the {component}.",
    "Owners of the {component}: @{team}; escalate {noun} problems through #{area}-oncall after {event}.",
    "The {noun} format of the {component} changed in version {major}.{minor}; the old one is accepted until {event}.",
    "Local development starts the {component} with `make {area}-dev` on port {port}; {tool} is mocked there.",
    "Dashboards for {nouns} in the {component} are in grafana under `{area}/{slug}`, panel {code}.",
]
STEP_TEMPLATES = [
    "Run `make {area}-check` and fix what {tool} reports about the {noun} before opening the PR.",
    "Create the {noun} through `{path}` behind the feature flag `{area}.{slug}`, off by default.",
    "Ask @{team} to review the {component} part and link the {area_up}-{code} ticket in the description.",
    "Verify the {noun} on staging with {tool} and paste the output in the PR, since {reason}.",
    "Roll out to {num}% of tenants, watch the {component} dashboard for {days} minutes, then continue.",
    "Write the migration for `{table}` first and deploy it one release before the {component} code.",
    "Update `{path}` and regenerate the {noun} client with `make {area}-gen` before {event}.",
]
TITLE_TEMPLATES = {
    "rule": ["{Noun} changes in the {component}", "How we {verb} {nouns}", "{Noun} limits and ownership",
             "Rules for the {component}"],
    "skill": ["Adding {a_noun} to the {component}", "Rolling out a new {noun}", "Debugging {noun} failures",
              "Migrating {nouns} in the {component}"],
    "knowledge": ["How the {component} handles {nouns}", "Where {noun} data lives", "{Noun} volumes and owners",
                  "{Tool} in the {component}"],
}  # fmt: skip
TASK_TEMPLATES = [
    "fix the {noun} bug in the {component}",
    "add a new {noun} to the {component}",
    "why does the {component} {verb} every {noun} twice",
    "how do we {verb} {nouns} before {event}",
    "migrate the {noun} table for the {component}",
    "the {component} is slow when it processes {nouns}",
]  # fmt: skip


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _plural(noun: str) -> str:
    if noun.endswith(("s", "x", "sh", "ch")):
        return noun + "es"
    if noun.endswith("y") and noun[-2] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def _a(noun: str) -> str:
    return ("an " if noun[0] in "aeiou" else "a ") + noun


def _fill(template: str, rng: random.Random, area: str, component: str, noun: str) -> str:
    tool = rng.choice(TOOLS)
    values = {
        "area": area, "component": component, "noun": noun, "Noun": noun.capitalize(),
        "a_noun": _a(noun), "nouns": _plural(noun), "A_noun": _a(noun).capitalize(), "area_up": area.upper(),
        "code": rng.randrange(100, 10000), "ms": rng.choice([200, 500, 800, 1500, 3000, 10000]),
        "big": rng.choice(["twice that", "three times that", "ten times that", "about the same"]),
        "tool": tool, "Tool": tool.capitalize(), "verb": rng.choice(VERBS), "team": rng.choice(TEAMS),
        "event": rng.choice(EVENTS), "reason": rng.choice(REASONS),
        "queue": rng.choice(["default", "exports", "payments", "emails", area]),
        "path": f"app/{area}/{_slug(component).replace('-', '_')}/{_slug(noun).replace('-', '_')}.py",
        "table": f"{area}_{_slug(noun).replace('-', '_')}s", "slug": _slug(noun),
        "num": rng.choice([5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 5000]),
        "days": rng.choice([7, 14, 30, 90, 180, 365]), "port": rng.randrange(8000, 9000),
        "major": rng.randrange(1, 5), "minor": rng.randrange(0, 20),
    }  # fmt: skip
    return template.format(**values)


def _bullets(
    rng: random.Random, templates: list[str], n: int, area: str, component: str, used: set[str]
) -> list[str]:
    """`n` sentences from distinct templates, never one already used in the workspace."""
    out: list[str] = []
    for template in rng.sample(templates, n):
        for _ in range(6):
            text = _fill(template, rng, area, component, rng.choice(AREAS[area][1]))
            if text not in used:
                used.add(text)
                out.append(text)
                break
    return out


def _memory(i: int, rng: random.Random, by_area: dict[str, list[str]], used: set[str]) -> Memory:
    area = rng.choice(list(AREAS))
    components, nouns = AREAS[area]
    component, noun = rng.choice(components), rng.choice(nouns)
    mtype = rng.choices(("rule", "skill", "knowledge"), weights=(3, 2, 5))[0]
    title = _fill(rng.choice(TITLE_TEMPLATES[mtype]), rng, area, component, noun)
    templates = {"rule": RULE_TEMPLATES, "skill": STEP_TEMPLATES, "knowledge": FACT_TEMPLATES}[
        mtype
    ]
    # lengths vary: mostly short, some long
    n_bullets = min(len(templates), rng.choice((1, 2, 2, 3, 3, 3, 4, 5, 7)))
    bullets = _bullets(rng, templates, n_bullets, area, component, used)
    bullets.append(f"Reference: {area.upper()}-{1000 + i} ({rng.choice(REASONS)}).")
    mid = f"{area}-{_slug(noun)}-{_slug(component).split('-')[0]}-{i}"
    tags = sorted({area, _slug(noun), *rng.sample(TOOLS, rng.randrange(0, 3))})
    mem = Memory(
        id=mid, type=mtype, title=title, tags=tags,
        content="\n".join(f"- {b}" for b in bullets),
        confidence=rng.choice(("high", "high", "medium", "low")),
        source=rng.choice(("manual", "manual", "session", "note")), revision=rng.randrange(1, 6),
        created=f"2024-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
        updated=f"2025-{rng.randrange(1, 10):02d}-{rng.randrange(1, 29):02d}",
    )  # fmt: skip
    if rng.random() < 0.3:
        mem.triggers = [f"{rng.choice(VERBS)} {noun}", f"{noun} in the {component}"][
            : rng.randrange(1, 3)
        ]
    if rng.random() < 0.08:
        mem.role = [rng.choice(ROLES)]
    if mtype == "skill" and by_area[area] and rng.random() < 0.6:
        mem.depends_on = sorted(set(rng.sample(by_area[area], min(2, len(by_area[area])))))
        mem.level = rng.choice(("basic", "intermediate", "advanced"))
    if mtype == "rule":
        balanced = bullets[0] if bullets else f"Follow the {noun} conventions of the {component}."
        mem.variants = {
            "light": f"Prefer to follow the {noun} conventions of the {component}.",
            "balanced": balanced,
            "strict": f"Reviewers block any {component} change that breaks this: "
            f"{balanced[0].lower()}{balanced[1:]}",
        }
    return mem


def generate_workspace(path: Path, n: int, seed: int = 0) -> Path:
    """Write a workspace of `n` memories under `path` (the project folder) and return `path`.

    About 2% are working notes (half of them expired) and 1% are archived; committed files
    are recorded in hashes.json as `engram verify --accept` would.
    """
    if n < 1:
        raise ValueError("n must be at least 1")
    rng = random.Random(seed)
    root = Root(path / WORKSPACE_SUBDIR, "workspace")
    create_layout(root.path)
    by_area: dict[str, list[str]] = {a: [] for a in AREAS}
    hashes: dict[str, str] = {}
    used: set[str] = set()
    for i in range(n):
        mem = _memory(i, rng, by_area, used)
        roll = rng.random()
        if roll < 0.02:
            mem.tier, mem.objective = "working", f"finish the {mem.tags[0]} work"
            mem.valid_until = "2024-01-31" if roll < 0.01 else "2099-12-31"
            mem.depends_on = []
            sub = "working"
        elif roll < 0.03:
            mem.archived_reason = "superseded by a newer decision"
            sub = "archive"
        else:
            sub = {"rule": "rules", "skill": "skills", "knowledge": "knowledge"}[mem.type]
            if mem.type == "rule" and not mem.role:  # prerequisites every reader can see
                by_area[mem.id.split("-", 1)[0]].append(mem.id)
        data = render_memory(mem).encode("utf-8")
        rel = f"{sub}/{mem.id}.md"
        (root.path / rel).write_bytes(data)
        if sub != "working":
            hashes[rel] = file_hash(data)
    write_manifest(root, hashes)
    return path


def sample_tasks(k: int, seed: int = 0) -> list[str]:
    """Tasks phrased like the generated memories' topics (for timing loads)."""
    rng = random.Random(seed + 7919)
    out = []
    for _ in range(k):
        area = rng.choice(list(AREAS))
        components, nouns = AREAS[area]
        out.append(
            _fill(rng.choice(TASK_TEMPLATES), rng, area, rng.choice(components), rng.choice(nouns))
        )
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Generate a realistic Engram workspace.")
    p.add_argument("path", type=Path, help="project folder to create (.agents/.engram inside)")
    p.add_argument("--n", type=int, default=1000, help="number of memories (default 1000)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if (args.path / WORKSPACE_SUBDIR).exists():
        p.error(f"{args.path / WORKSPACE_SUBDIR} already exists; choose an empty folder")
    generate_workspace(args.path, args.n, args.seed)
    print(f"wrote {args.n} memories under {args.path / WORKSPACE_SUBDIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
