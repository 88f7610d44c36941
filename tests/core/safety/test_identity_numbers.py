"""Identity numbers: redacted where the text names the number and its check digits hold."""

from __future__ import annotations

import importlib

import pytest

from engram.core.safety.identity_numbers import (
    CHECKED_NUMBERS,
    IDENTITY_NUMBERS,
    identity_number_spans,
)
from engram.core.safety.scan import redact


def test_each_scheme_is_named_as_its_library_module_names_it() -> None:
    for module, names in IDENTITY_NUMBERS:
        described = importlib.import_module(f"stdnum.{module}").__doc__.splitlines()[0]
        assert any(name in described for name in names), (module, described)


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("T.C. Kimlik No: 27688654882", "27688654882"),
        ("Aadhaar: 2833 4722 2755 for the contractor", "2833 4722 2755"),
        ("เลขประจำตัวประชาชน 8-6814-86805-94-9", "8-6814-86805-94-9"),
        ("ЕГН на служителя: 9911092733", "9911092733"),
        ("Kennitala: 050175-1469", "050175-1469"),
        ("Asmens kodas: 36407044950", "36407044950"),
        ("CURP: TORG991118MDFLTH72", "TORG991118MDFLTH72"),
        ("Cédula de identidad: 2423891163", "2423891163"),
        ("OIB zaposlenika: 33392005961", "33392005961"),
        ("Rijksregisternummer 85.07.30-033.28", "85.07.30-033.28"),
        ("RUT: 76.086.428-5", "76.086.428-5"),
        ("Personas kods: 161175-19997", "161175-19997"),
        ("주민등록번호 971013-9019902", "971013-9019902"),
        ("ИНН 7707083893", "7707083893"),
    ],
)
def test_a_named_number_with_its_check_is_redacted(text: str, number: str) -> None:
    red = redact(text)
    assert number not in red.text and "national-id" in red.kinds
    assert [text[s:e] for s, e, _ in identity_number_spans(text)] == [number]


@pytest.mark.parametrize(
    "text",
    [
        "Order 27688654882 shipped on Tuesday.",  # a valid number nobody named
        "T.C. Kimlik No: 27688654883",  # its check digit is wrong
        "DNI 12345678Z, mobile +34 612 345 219",  # only the number after the name is that number
        "The CI pipeline runs job 2423891163 nightly.",
    ],
)
def test_an_unnamed_or_unchecked_number_is_not_an_identity_number(text: str) -> None:
    spans = identity_number_spans(text)
    assert all(text[s:e] == "12345678Z" for s, e, _ in spans), spans


@pytest.mark.parametrize(
    ("text", "number", "kind"),
    [
        ("TAJ szám: 342 366 712", "342 366 712", "national-id"),
        ("کد ملی: 7684268465", "7684268465", "national-id"),
        ("CUIT del proveedor: 34-68535606-8", "34-68535606-8", "national-id"),
        ("NIP (osoba fizyczna): 082-276-54-44", "082-276-54-44", "national-id"),
        ("Cédula de ciudadanía: 1730472345", "1730472345", "national-id"),
        ("CLABE interbancaria 326502014620168493", "326502014620168493", "bank-account"),
    ],
)
def test_schemes_python_stdnum_lacks_are_checked_by_their_own_digits(
    text: str, number: str, kind: str
) -> None:
    spans = identity_number_spans(text)
    assert [(text[s:e], k) for s, e, k in spans] == [(number, kind)]
    # one digit changed: the check fails and the number stays
    wrong = number[:-1] + str((int(number[-1]) + 1) % 10)
    assert identity_number_spans(text.replace(number, wrong)) == []


def test_each_checked_scheme_has_names_and_a_kind() -> None:
    for key, kind, names, check in CHECKED_NUMBERS:
        assert names and kind in ("national-id", "bank-account") and callable(check), key
