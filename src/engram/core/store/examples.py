"""A small example memory set for `engram init --example` (a demo workspace)."""

from __future__ import annotations

# (type, id, title, tags, triggers, depends_on, bullets, variants)
EXAMPLES: list[tuple[str, str, str, list[str], list[str], list[str], list[str], tuple[str, str, str] | None]] = [
    ("rule", "run-tests-before-release", "Run the full test suite before a release",
     ["release", "testing"], ["cut a release"], [],
     ["Run `make test` on a clean checkout before tagging.", "A red CI run blocks the release."],
     ("Prefer a green test run before tagging.", "Run the full test suite before every release.",
      "Never tag a release without a green full test run on a clean checkout.")),
    ("rule", "changelog-entry-required", "Every user-visible change gets a changelog entry",
     ["release", "changelog", "docs"], [], [],
     ["Add a line under `## Unreleased` in CHANGELOG.md.", "Name the user-visible effect, not the code change."],
     ("Mention user-visible changes in CHANGELOG.md.", "Add a CHANGELOG.md entry for every user-visible change.",
      "No user-visible change merges without a CHANGELOG.md entry.")),
    ("skill", "release-process", "How to cut a release",
     ["release", "versioning"], ["release", "publish a version"], ["run-tests-before-release", "changelog-entry-required"],
     ["1. Run the tests.", "2. Move `## Unreleased` in CHANGELOG.md to the new version.",
      "3. Bump the version in pyproject.toml.", "4. Tag `vX.Y.Z` and push the tag; CI publishes."], None),
    ("knowledge", "database-migrations", "Database migrations live in migrations/ and run with alembic",
     ["database", "migrations", "alembic"], [], [],
     ["Create one with `alembic revision --autogenerate -m 'msg'`.", "Never edit a migration that was merged; add a new one."], None),
    ("rule", "no-secrets-in-logs", "Never log secrets or personal data",
     ["logging", "security"], [], [],
     ["Use the `redact()` helper for tokens, passwords and emails.", "Log user ids, never emails."],
     ("Avoid logging sensitive values.", "Never log secrets or personal data; redact them.",
      "Any log line with a secret or personal data is a release blocker.")),
    ("knowledge", "api-error-format", "API errors use RFC 9457 problem details",
     ["api", "errors", "http"], [], [],
     ["Return `application/problem+json` with `type`, `title`, `status`, `detail`.", "Validation errors list fields in `errors`."], None),
    ("skill", "fix-flaky-test", "How to deal with a flaky test",
     ["testing", "flaky", "ci"], ["flaky test"], [],
     ["Reproduce with `pytest -p no:randomly --count 50 path::test`.", "Fix the cause (time, order, network); never add blind retries.",
      "Quarantine only with an issue link and an owner."], None),
    ("knowledge", "frontend-state", "Frontend state lives in one store per page",
     ["frontend", "react", "state"], [], [],
     ["Pages own a store created with `createPageStore()`.", "Components read with selectors; no prop drilling beyond two levels."], None),
]  # fmt: skip
