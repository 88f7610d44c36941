"""Redaction leaves ordinary memory text alone and catches structured secrets by shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.core.memory import split_front_matter
from engram.core.safety.scan import redact

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _text(result: object) -> str:
    return result.text if hasattr(result, "text") else result[0]  # type: ignore[index,attr-defined]


def test_every_line_of_hand_written_memory_comes_out_unchanged() -> None:
    lines: set[str] = set()
    for path in FIXTURES.glob("routing_workspace*/.agents/.engram/**/*.md"):
        _, body = split_front_matter(path.read_text(encoding="utf-8"))
        lines.update(line.strip() for line in body.splitlines() if len(line.strip()) > 12)
    assert len(lines) > 2000
    changed = [(line, _text(redact(line))) for line in sorted(lines)]
    assert [c for c in changed if c[0] != c[1]] == []


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("db.internal:5432:orders:app:Tundra-Owl-1187", "Tundra-Owl-1187"),
        ('ENV["SMTP_PASSWORD"] ||= "Hazel#Creek#42"', "Hazel#Creek#42"),
        ("config.apiToken ??= 'q8Vd2LmX0pTz7RkW'", "q8Vd2LmX0pTz7RkW"),
        ("Adgangskode til testserveren er Nordlys!72.", "Nordlys!72"),
        ("The break-glass recovery code is 7hq2-k9dm-3xv8.", "7hq2-k9dm-3xv8"),
        ("Payroll row still shows the SSN 536294871 in column F.", "536294871"),
        ("NIE del proveedor: X1234567L", "X1234567L"),
        ("CPF da fornecedora: 450.749.528-83", "450.749.528-83"),
        ("BSN van de klant: 604956605", "604956605"),
        ("PESEL klienta: 92032200826", "92032200826"),
        ("客户身份证号：110105199019958221", "110105199019958221"),
        ("N° de sécurité sociale : 2 86 03 75 123 456 39", "2 86 03 75 123 456 39"),
        ("Key in chunks: sk_l ive_ Qx7P 2mRt 9vLw Kd3N Zp8F Hy4S Bc1J", "Qx7P"),
        ("Backup codes for the admin: 4kd9-2mx7 p8q2-zz41 7hh3-w0e9", "7hh3-w0e9"),
        ("The admin pass for grafana is Tr0ub4dor&3xyz", "Tr0ub4dor&3xyz"),
        ("Key: ghp_16C7e42F 292c6912E7 710c838347 Ae178B4a", "292c6912E7"),
        ("creds hex: 6a6f686e3a73336372337450617373", "6a6f686e3a73336372337450617373"),
        ("Winter2024Secure is the SMTP password", "Winter2024Secure"),
        ("The SMTP login is ops / Winter2024!Secure", "Winter2024!Secure"),
        ("The vault unseal key is " + "ab12" * 16, "ab12" * 16),
        (
            'client = Client("AC0f2a9b8c7d6e5f4a3b2c1d0e9f8a7b6c", "9f8e7d6c5b4a39281706f5e4d3c2b1a0")',
            "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
        ),
    ],
)
def test_structured_secrets_are_redacted(text: str, secret: str) -> None:
    assert secret not in _text(redact(text))


@pytest.mark.parametrize(
    "text",
    [
        "Write security reports to security@example.org; privacy@example.org handles DSARs.",
        "The deployer runs as ci-bot@acme-prod.iam.gserviceaccount.com.",
        'db_password: "%(DB_PASSWORD)s"',
        "Authorization: Basic dXNlcjpwYXNzd29yZA== is the docs' example header.",
        "Each tenant is limited per token to 10,000 events/s.",
        "The pass rate is 98% on main.",
        "Python 3.12 is the version we use.",
        "The SHA-256 is " + "ab12" * 16,
        "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "The npm automation token is scoped to `@acme`.",
        "Order 604956604 and invoice 45074952884 were refunded.",
        "Twilio account SID: AC0f2a9b8c7d6e5f4a3b2c1d0e9f8a7b6c (an identifier).",
        "echo SGVsbG8gZnJvbSB0aGUgcGxhdGZvcm0gdGVhbSE= | base64 -d",
        "Application secrets are in AWS Secrets Manager and injected by External Secrets.",
        "Release signing: the minisign public key is RWSx4b8Q2mJv0nKkqE3YtHfLz9oA7cWdUe1gPiR5sTy6MhNj2bVxCqDr.",
    ],
)
def test_lookalikes_are_kept(text: str) -> None:
    assert _text(redact(text)) == text


@pytest.mark.parametrize(
    ("pattern", "unit"),
    [
        ("_CRED_PAIR", "user:pass@"),
        ("_EMAIL", "%2"),
        ("_NETRC", "\n"),
        ("_SENTENCE", "password "),
    ],
)
def test_patterns_an_attack_made_backtrack_are_linear(pattern: str, unit: str) -> None:
    """Each of these took time in the square of the body (a 250 KiB memory of `user:pass@`
    made every prompt hook run for minutes); now a 200 KiB run is one pass, milliseconds.
    A return of the backtracking would make this test take minutes."""
    from engram.core.safety import secrets

    body = unit * (200 * 1024 // len(unit))
    list(getattr(secrets, pattern).finditer(body))


@pytest.mark.parametrize("unit", ["sk-", "eyJ", "//"])
def test_detect_secrets_patterns_that_backtrack_are_not_run_on_text_they_cannot_match(
    unit: str,
) -> None:
    from engram.core.safety.secrets import _detect_secrets_spans

    assert _detect_secrets_spans(unit * 60_000) == []


def test_the_intent_document_name_pattern_is_linear() -> None:
    from engram.core.safety.intent import _DOC_REF

    assert list(_DOC_REF.finditer("sk-" * 60_000)) == []
    assert _DOC_REF.search("read CLAUDE.md first")
