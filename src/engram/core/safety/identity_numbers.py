"""Personal identity numbers of many countries, found by their name and proven by their
check digits (python-stdnum): a number is redacted only where the text names it and the
number passes its scheme's own validation.

The table is data: each python-stdnum module of a personal identity number, with the
names that scheme goes by (from the module's own description, plus the name a person
writes in that country's script where the description lacks it). A module is imported
only when a text names its number, so an ordinary memory costs one keyword search.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from functools import cache, lru_cache
from typing import Any

from engram.core.safety.normalise import lazy_compile

Span = tuple[int, int, str]

# (python-stdnum module, the names of its number). The names come first from the module's
# docstring (`tests/core/safety/test_identity_numbers.py` keeps them in step with it).
# Schemes whose validation accepts most numbers of their length (Argentina's DNI, Peru's
# CUI, Pakistan's CNIC, the US SSN: no check digit) are left out: their name alone would
# decide, and a phone number after "DNI 12345678Z, mobile" is not an identity number.
IDENTITY_NUMBERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ar.cuit", ("CUIT", "CUIL", "Código Único de Identificación Tributaria")),
    ("au.tfn", ("TFN", "Tax File Number")),
    ("at.vnr", ("VNR", "SVNR", "VSNR", "Versicherungsnummer")),
    ("be.ssn", ("INSZ", "NISS", "SSN")),
    ("be.nn", ("NN", "RRN", "Rijksregisternummer", "Registre national", "Nationaal nummer")),
    ("bg.egn", ("EGN", "ЕГН", "Единен граждански номер")),
    ("br.cpf", ("CPF", "Cadastro de Pessoas Físicas")),
    ("ca.bc_phn", ("BC PHN",)),
    ("ca.sin", ("SIN",)),
    ("ch.ssn", ("Swiss social security number", "Sozialversicherungsnummer", "AHV")),
    ("cn.ric", ("RIC", "Resident Identity Card", "身份证", "身份證")),
    ("cl.rut", ("RUT", "RUN", "Rol Único Tributario", "Rol Único Nacional")),
    ("co.nit", ("NIT", "Número De Identificación Tributaria")),
    ("cu.ni", ("Número de identidad",)),
    ("cz.rc", ("RČ", "Rodné číslo")),
    ("de.idnr", ("IdNr", "Steuerliche Identifikationsnummer", "Steuer-ID")),
    ("dk.cpr", ("CPR", "personnummer")),
    ("do.cedula", ("Cedula", "Cédula")),
    ("ec.ci", ("CI", "Cédula de identidad", "Cédula", "Cédula de ciudadanía")),
    ("ee.ik", ("Isikukood",)),
    ("es.dni", ("DNI", "Documento Nacional de Identidad")),
    ("es.nie", ("NIE", "Número de Identificación de Extranjero")),
    ("fi.hetu", ("HETU", "Henkilötunnus")),
    ("fr.nir", ("NIR",)),
    ("gr.amka", ("AMKA", "ΑΜΚΑ", "Αριθμός Μητρώου Κοινωνικής Ασφάλισης")),
    ("hr.oib", ("OIB", "Osobni identifikacijski broj")),
    ("id.nik", ("NIK", "Nomor Induk Kependudukan")),
    ("ie.pps", ("PPS", "Personal Public Service Number")),
    ("il.idnr", ("Identity Number", "Mispar Zehut", "מספר זהות", "תעודת זהות", "teudat zehut")),
    ("in_.aadhaar", ("Aadhaar", "आधार")),
    ("in_.epic", ("EPIC", "Electoral Photo Identity Card", "Voter ID")),
    ("in_.vid", ("VID",)),
    ("it.codicefiscale", ("Codice Fiscale",)),
    ("is_.kennitala", ("Kennitala",)),
    ("jp.in_", ("個人番号", "マイナンバー", "My Number")),
    ("ke.pin", ("PIN",)),
    ("kr.rrn", ("RRN", "주민등록번호", "Resident Registration Number")),
    ("lt.asmens", ("Asmens kodas",)),
    ("lv.pvn", ("PVN", "Personas kods")),
    ("mu.nid", ("ID number",)),
    ("mx.curp", ("CURP", "Clave Única de Registro de Población")),
    ("my.nric", ("NRIC", "MyKad")),
    ("nl.bsn", ("BSN", "Burgerservicenummer")),
    ("nz.ird", ("IRD number",)),
    ("no.fodselsnummer", ("Fødselsnummer", "fodselsnummer")),
    ("pl.nip", ("NIP", "Numer Identyfikacji Podatkowej")),
    ("pl.pesel", ("PESEL",)),
    ("pt.nif", ("NIF", "Número de identificação fiscal", "Contribuinte")),
    ("pt.cc", ("CC", "Número de Cartão de Cidadão", "Cartão de Cidadão")),
    ("ro.cnp", ("CNP", "Cod Numeric Personal")),
    ("ru.inn", ("ИНН", "INN")),
    ("se.personnummer", ("Personnummer",)),
    ("si.emso", ("EMŠO", "EMSO", "JMBG", "ЈМБГ", "Enotna matična številka občana")),
    ("sk.rc", ("RČ", "Rodné číslo")),
    ("th.pin", ("PIN", "เลขประจำตัวประชาชน", "บัตรประชาชน")),
    ("tr.tckimlik", ("T.C. Kimlik", "TC Kimlik", "Kimlik No", "TCKN")),
    ("ua.rntrc", ("РНОКПП", "RNTRC", "ІПН")),
    ("za.idnr", ("ID number", "South African ID")),
)


def _digits(value: str) -> list[int]:
    return [int(c) for c in value if c.isdigit()]


def _taj_is_valid(value: str) -> bool:
    """Hungarian TAJ: nine digits, the last one the sum of the first eight weighted 3, 7, …
    modulo 10."""
    d = _digits(value)
    return len(d) == 9 and sum(x * (3, 7)[i % 2] for i, x in enumerate(d[:8])) % 10 == d[8]


def _melli_is_valid(value: str) -> bool:
    """Iranian national code: ten digits, the last one a modulo-11 check of the others
    weighted 10 down to 2."""
    d = _digits(value)
    if len(d) != 10 or len(set(d)) == 1:
        return False
    r = sum(x * (10 - i) for i, x in enumerate(d[:9])) % 11
    return d[9] == (r if r < 2 else 11 - r)


def _clabe_is_valid(value: str) -> bool:
    """Mexican CLABE: eighteen digits, the last one the complement to 10 of the first
    seventeen weighted 3, 7, 1, … modulo 10."""
    d = _digits(value)
    return (
        len(d) == 18
        and (10 - sum(x * (3, 7, 1)[i % 3] for i, x in enumerate(d[:17])) % 10) % 10 == d[17]
    )


# Schemes python-stdnum does not have: (key, kind, the names of the number, its check).
CHECKED_NUMBERS: tuple[tuple[str, str, tuple[str, ...], Callable[[str], bool]], ...] = (
    (
        "hu.taj",
        "national-id",
        ("TAJ", "TAJ szám", "Társadalombiztosítási Azonosító Jel"),
        _taj_is_valid,
    ),
    (
        "ir.melli",
        "national-id",
        ("کد ملی", "کارت ملی", "Melli code", "national code"),
        _melli_is_valid,
    ),
    ("mx.clabe", "bank-account", ("CLABE",), _clabe_is_valid),
)
_CHECKS = {key: (kind, check) for key, kind, _names, check in CHECKED_NUMBERS}

_NAMES = sorted(
    {n for _, names in IDENTITY_NUMBERS for n in names}
    | {n for _, _kind, names, _check in CHECKED_NUMBERS for n in names},
    key=lambda n: (-len(n), n),
)
# An acronym is matched as written ("SIN 046 454 286", not Spanish "sin 247 …"); a name
# in words in any case.
_LABEL = lazy_compile(
    r"(?<!\w)(?:"
    + "|".join(re.escape(n) if n == n.upper() else f"(?i:{re.escape(n)})" for n in _NAMES)
    + r")(?!\w)"
)
# What may follow a name before its number ("No:", "number", "szám", a colon, brackets).
_GAP = 40
_WORDS = lazy_compile(r"[^\W\d_]+")
_CANDIDATE = lazy_compile(r"(?<![\w-])[0-9A-Z](?:[0-9A-Z]|[ .\-/](?=[0-9A-Z])){5,24}(?![\w-])")


@lru_cache(maxsize=1)
def _modules_by_name() -> dict[str, tuple[str, ...]]:
    by_name: dict[str, list[str]] = {}
    for module, names in IDENTITY_NUMBERS:
        for name in names:
            by_name.setdefault(name.casefold(), []).append(module)
    for key, _kind, names, _check in CHECKED_NUMBERS:
        for name in names:
            by_name.setdefault(name.casefold(), []).append(key)
    return {name: tuple(modules) for name, modules in by_name.items()}


@cache
def _module(name: str) -> Any:
    try:
        return importlib.import_module(f"stdnum.{name}")
    except ImportError:  # a python-stdnum without this scheme
        return None


def _valid(modules: tuple[str, ...], value: str) -> str:
    """The kind of the first scheme whose check `value` passes, or ""."""
    for name in modules:
        if name in _CHECKS:
            kind, check = _CHECKS[name]
            if check(value):
                return kind
            continue
        module = _module(name)
        try:
            if module is not None and module.is_valid(value):
                return "national-id"
        except Exception:  # a validator that trips on odd input rejects it
            continue
    return ""


def identity_number_spans(text: str) -> list[Span]:
    """(start, end, kind) of each number a text names and that passes its check (kind
    'national-id', or 'bank-account' for a CLABE)."""
    out: list[Span] = []
    by_name = _modules_by_name()
    for label in _LABEL.finditer(text):
        modules = by_name.get(label.group(0).casefold())
        if not modules:
            continue
        line_end = text.find("\n", label.end())
        window_end = min(label.end() + _GAP, line_end if line_end >= 0 else len(text))
        for m in _CANDIDATE.finditer(text, label.end(), window_end + 25):
            if m.start() > window_end:
                break
            if sum(c.isdigit() for c in m.group(0)) < 6:
                continue
            if len(label.group(0)) <= 3 and len(_WORDS.findall(text, label.end(), m.start())) > 2:
                break  # a short name ("CI", "PIN") counts only right before its number
            value = m.group(0)
            # the number may run into a following word: shrink it at each separator
            cuts = [len(value)] + [i for i in range(len(value) - 1, 5, -1) if value[i] in " ./-"]
            for cut in cuts:
                kind = _valid(modules, value[:cut])
                if kind:
                    out.append((m.start(), m.start() + cut, kind))
                    break
            break  # only the number right after the name is that number
    return out
