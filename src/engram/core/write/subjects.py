"""What a memory text is *about*: its named things, its values and its subject words.

Verdicts must never replace one fact by another that merely shares a sentence template
("Service svc-1 … port 8001" is not "Service svc-2 … port 8002"). So a text is read as
an ordered list of *units*: typed entities (identifiers, paths, URLs, hosts, code spans,
quoted strings, capitalised names, environment names; numbers, versions, times and
addresses as *values*) and stemmed content words, with polarity and change markers
kept aside. Two texts are compared unit by unit: what both say is the subject; what
only one says is a changed value (an update), a changed name (another fact, unless the
candidate says the value changed), or other wording (a possible duplicate).

Deterministic and dependency-light: the English Snowball stemmer is imported lazily,
only when a verdict is computed (the write path, never a hook). Other languages get
their function words, negations and change markers, and CJK text is read as character
bigrams.
"""

from __future__ import annotations

import re
import unicodedata
from difflib import SequenceMatcher
from functools import lru_cache
from itertools import pairwise
from typing import NamedTuple

from engram.core.words import ALL_FUNCTION_WORDS, FUNCTION_WORDS, SAME_WORDS, stem

# Kinds of unit. Values change while the subject stays; names pick the subject.
VALUE_KINDS = frozenset({"number", "version", "address", "time"})
IDENT_KINDS = frozenset({"code", "url", "email", "path", "dotted", "ident", "flag", "env"})
NAME_KINDS = frozenset(
    {"code", "url", "email", "quoted", "path", "dotted", "ident", "flag", "name", "env"}
)

# Words of direction and order say what a rule means ("before" vs "after" the deploy,
# scale "up" vs "down"): they are kept.
_KEPT = frozenset(
    """run runs set sets make makes get gets before after above below up down over under
    off out more most fewer less least first last only until since""".split()
)
STOPWORDS = ALL_FUNCTION_WORDS - _KEPT

NEGATIONS = frozenset(
    """not no never don't dont doesn't doesnt isn't isnt aren't arent shouldn't shouldnt
    mustn't mustnt cannot can't cant won't wont avoid avoids stop stopped without disable
    disabled forbid forbidden forbids disallow disallowed nor none neither nothing nobody nowhere
    nunca jamás jamas ningún ninguna pas jamais aucun aucune sans nicht nie niemals kein
    keine keinen keinem keiner ohne não nao nenhum nenhuma sem non mai prohibited prohibit
    prohibits banned ban bans prohibido prohibida prohibidos proibido proibida interdit
    interdite interdits verboten untersagt vietato vietata""".split()
)
# Verbs that negate an instruction ("stop using X", "avoid X", "disable X") but in a fact
# describe what happened ("the lidar stopped sending frames").
VERB_NEGATIONS = frozenset("stop stopped stops avoid avoids without disable disabled".split())
ALWAYS_WORDS = frozenset("always siempre toujours immer sempre".split())
ANTONYMS = (
    ("always", "never"),
    ("enable", "disable"),
    ("enabled", "disabled"),
    ("allow", "forbid"),
    ("allow", "deny"),
    ("allowed", "forbidden"),
    ("required", "optional"),
    ("mandatory", "optional"),
    ("true", "false"),
    ("sync", "async"),
    ("fine", "forbidden"),
)
ANTONYM_WORDS = frozenset(w for pair in ANTONYMS for w in pair) - NEGATIONS
# CJK negation morphemes (Japanese ない/なく/ません/禁止, Chinese 不/别/勿/禁止/没有).
_CJK_NEGATION = re.compile(r"ない|なく|ません|禁止|不|别|勿|没有|無用")
# "Replaces what was said before": the words after the marker name what is replaced.
_REPLACE_AFTER = re.compile(
    r"\b(?:instead\s+of|rather\s+than|in\s+favou?r\s+of|in\s+place\s+of|in\s+lieu\s+of|"
    r"(?:migrat\w*|mov\w*|switch\w*)\s+(?:off|away\s+from|from)|get\s+rid\s+of|"
    r"stop\s+(?:using|\w+ing)|no\s+longer\s+use|phas\w*\s+out|retir\w*|"
    r"en\s+lugar\s+de|en\s+vez\s+de|au\s+lieu\s+de|plutôt\s+que|statt|anstatt|anstelle\s+von|"
    r"em\s+vez\s+de|ao\s+invés\s+de)\b\s*(?P<object>[^.;:,!?]{1,60})",
    re.IGNORECASE,
)
_REPLACE_BEFORE = re.compile(
    r"(?P<object>[^.;:,!?]{1,60}?)\s+(?:is|are|was|were|has\s+been|have\s+been)\s+"
    r"(?:replaced|superseded|deprecated|retired|dropped|removed)\b",
    re.IGNORECASE,
)
# "moved from Tuesdays to Thursdays": the value after "from" is the one replaced.
_REPLACE_FROM = re.compile(
    r"\b(?:chang|mov|switch|migrat|bump|upgrad|downgrad|rais|lower|increas|decreas|reduc|"
    r"went|go|goes)\w*\s+(?:[\w.-]+\s+){0,3}?from\s+(?P<object>[^.;:,!?]{1,40}?)\s+to\b",
    re.IGNORECASE,
)
_REPLACE_CJK = re.compile(r"(?P<object>[^、。,.]{1,20}?)(?:ではなく|而不是|代わりに|改为|改用)")
# "The value changed": the candidate states a new value for the same subject.
CHANGE_RE = re.compile(
    r"\b(?:now|currently|nowadays|changed|moved|switched|migrated|renamed|bumped|upgraded|"
    r"downgraded|raised|lowered|increased|decreased|reduced|scaled|updated|rotated|"
    r"replaced|retrained|extended|shortened|as\s+of|from\s+now\s+on|no\s+longer|anymore|"
    r"désormais|dorénavant|maintenant|ahora|actualmente|jetzt|nun|inzwischen|"
    r"mittlerweile|neuerdings|agora|atualmente)\b|現在|今は|変更|改为|现在",
    re.IGNORECASE,
)
# "One more, not instead": the candidate adds a fact next to the memory.
ADD_RE = re.compile(
    r"\b(?:also|too|as\s+well|additionally|in\s+addition|another|besides|además|también|"
    r"aussi|également|auch|ebenfalls|zusätzlich|também)\b|も同様|也",
    re.IGNORECASE,
)
# Words that carry no subject: change markers and fillers.
MARKER_WORDS = frozenset(
    """now currently nowadays changed moved switched migrated renamed bumped upgraded
    downgraded instead rather longer anymore favour favor scaled raised lowered
    increased decreased reduced updated désormais dorénavant maintenant ahora actualmente
    jetzt nun inzwischen mittlerweile neuerdings agora atualmente""".split()
)
FILLER_WORDS = frozenset(
    """please sure ensure remember important importantly that's thats it's really
    actually basically every everything everyone whenever etc like need needs needed
    must should shall want wants expect kept keep keeps""".split()
)
# Nouns whose number is a measured value, not the name of one of a series ("port 8443",
# "timeout 30" change; "aisle 12", "rev 4", "gate 3" name another thing).
ATTRIBUTE_WORDS = frozenset(
    """port ports timeout timeouts limit limits size ttl retention replicas replica workers
    threads depth shards interval version versions threshold quota budget max min maximum
    minimum capacity memory cpu cpus ram disk concurrency pool batch rate delay backoff retries
    attempts length width height count number weight percent percentage coverage score sla slo
    uptime latency cost price fee speed baud frequency every at least most than up down over
    under about approximately around only top first last""".split()
)
# After a number that names one of a series: the sentence goes on with a verb, a
# preposition or stops ("aisle 12 must …", "gate 3 at …"); a counted noun makes it a value.
_NUMBER_ENDS_NAME = re.compile(
    r"\s*(?:$|[.,;:!?()\]]|(?:must|should|shall|will|can|may|might|is|are|was|were|has|have|had|"
    r"needs?|in|at|on|near|for|of|to|with|and|or|but|uses?|runs?|prints?|gets?|keeps?|sends?|"
    r"stays?|goes|go|needs)\b)",
    re.IGNORECASE,
)
# Days and months are when something happens: values, not names ("Tuesdays" → "Wednesdays").
CALENDAR_WORDS = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays
    thursdays fridays saturdays sundays mon tue tues wed thu thur thurs fri sat sun january
    february march april may june july august september october november december jan feb mar
    apr jun jul aug sep sept oct nov dec lunes martes miércoles jueves viernes sábado domingo
    lundi mardi mercredi jeudi vendredi samedi dimanche montag dienstag mittwoch donnerstag
    freitag samstag sonntag segunda terça quarta quinta sexta sábado domingo""".split()
) - {"may", "march", "sat", "sun", "mar", "jun", "dec", "wed"}
ENV_NAMES = frozenset(
    """staging production prod dev development qa uat preprod sandbox canary demo""".split()
)
# Number words as values ("one" is left out: it is more often a pronoun than a count).
NUMBER_WORDS = {
    "zero": "0", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
    "twenty": "20", "thirty": "30", "forty": "40", "fifty": "50", "hundred": "100",
    "one": "1", "thirteen": "13", "fourteen": "14", "fifteen": "15", "sixteen": "16",
    "seventeen": "17", "eighteen": "18", "nineteen": "19", "sixty": "60", "seventy": "70",
    "eighty": "80", "ninety": "90", "thousand": "1000", "once": "1", "twice": "2",
    "deux": "2", "trois": "3", "quatre": "4", "cinq": "5", "sept": "7", "huit": "8",
    "neuf": "9", "dix": "10", "zwei": "2", "drei": "3", "vier": "4", "fünf": "5",
    "sechs": "6", "sieben": "7", "acht": "8", "neun": "9", "zehn": "10", "dos": "2",
    "tres": "3", "cuatro": "4", "cinco": "5", "seis": "6", "siete": "7", "ocho": "8",
    "nueve": "9", "diez": "10", "dois": "2", "duas": "2", "três": "3", "sete": "7",
    "oito": "8", "nove": "9", "dez": "10", "due": "2", "tre": "3", "quattro": "4",
    "sei": "6", "sette": "7", "otto": "8", "dieci": "10",
}  # fmt: skip
# Function words that tell a text's language, for the stemmer of that language.
_LANGUAGE_HINTS = {
    "french": frozenset("le la les des du et est sont une dans avec pour pas ne plus sur qui que jamais toujours aussi chaque".split()),
    "german": frozenset("der die das den dem des und ist sind nicht mit für von zu auf wird werden ein eine nie immer auch jede jeder".split()),
    "spanish": frozenset("el la los las del y es son una con por para que se no en nunca siempre también cada".split()),
    "portuguese": frozenset("o a os as do da dos das e é são um uma com por para que não em nunca sempre também cada".split()),
    "italian": frozenset("il lo la gli le del della e è sono un una con per che non di mai sempre anche ogni".split()),
}  # fmt: skip
# Units of measure, folded so "30 s" and "30 seconds" say the same.
UNIT_WORDS = {
    "s": "second", "sec": "second", "secs": "second", "seconds": "second",
    "ms": "millisecond", "milliseconds": "millisecond", "min": "minute", "mins": "minute",
    "minutes": "minute", "h": "hour", "hr": "hour", "hrs": "hour", "hours": "hour",
    "d": "day", "days": "day", "weeks": "week", "months": "month",
}  # fmt: skip
# Two words that stand for one (the second may be a function word).
PHRASES = {
    ("pull", "request"): "pr",
    ("pull", "requests"): "pr",
    ("merge", "request"): "pr",
    ("merge", "requests"): "pr",
    ("code", "review"): "review",
    ("check", "in"): "commit",
    ("checked", "in"): "commit",
    ("checked", "into"): "commit",
    ("check", "into"): "commit",
    ("set", "up"): "setup",
    ("sign", "in"): "auth",
    ("signing", "in"): "auth",
    ("log", "in"): "auth",
    ("time", "out"): "timeout",
    ("times", "out"): "timeout",
}

_TOKEN = re.compile(
    r"(?P<code>`[^`\n]+`)"
    r"|(?P<url>\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s<>\"'`]+)"
    r"|(?P<email>\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
    r"|(?P<quoted>\"[^\"\n]{1,120}\"|“[^”\n]{1,120}”|(?<![\w'])'[^'\n]{1,120}'(?![\w']))"
    r"|(?P<call>\b[A-Za-z_][\w.:]*\(\))"
    r"|(?P<address>\b\d{1,3}(?:\.\d{1,3}){3}(?:/\d{1,2})?(?::\d+)?\b)"
    r"|(?P<time>\b\d{1,2}:\d{2}(?::\d{2})?\b|\b\d{4}-\d{2}-\d{2}\b)"
    r"|(?P<path>(?:~|\.{1,2})?/?@?(?:[\w.+*-]+/)+[\w.+*-]*|(?<![\w/])/[\w.+-]+)"
    r"|(?P<version>(?:~>|[<>=^~]=?)?\s?\b[vV]?\d+(?:\.(?:\d+|x|\*))+(?:[-+][0-9A-Za-z.]+)?\b"
    r"|\b[vV]\d+\b)"
    r"|(?P<dotted>(?<![\w.])\.?[\w-]+(?:\.[\w-]+)+\b)"
    r"|(?P<handle>(?<![\w@])@[\w-]+)"
    r"|(?P<flag>(?<![\w-])--?[a-zA-Z][\w-]*)"
    r"|(?P<number>#?\b\d+(?:[.,]\d+)*(?:[a-zA-Z%]{1,3}\b)?%?)"
    r"|(?P<word>[\w][\w'’-]*)"
)
_PROCEDURE_HEAD = re.compile(
    r"\s*(?:to|how\s+to|in\s+order\s+to|para|pour|um|zum|zur|per|so\s+wird|so\s+werden|para\s+o|para\s+a)\s",
    re.IGNORECASE,
)
_VERSIONED = re.compile(r"^([a-z][a-z0-9-]*?[a-z])[-_:@]v?(\d+(?:\.\d+)+)$")
_EMPHASIS = re.compile(r"(?<![\w*_~])[*_~]{1,3}(?=[^\s*_~])|(?<=[^\s*_~])[*_~]{1,3}(?![\w*_~])")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2,}[a-z]")
_SQUASH = re.compile(r"[^\w]+|_")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
_LIST_MARKER = re.compile(r"(?:(?<=^)|(?<=[\s:;]))\d{1,2}[.)](?=\s)")
_SPLIT_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


class Unit(NamedTuple):
    """One comparable piece of a text."""

    kind: str  # "word" or one of VALUE_KINDS / NAME_KINDS
    key: str  # canonical form (stems, synonyms folded) used for matching
    raw: str  # as written (lowercase), for exact comparison
    shown: str  # as written, for explanations
    parts: tuple[str, ...] = ()  # stems of an identifier's words ("targetSdkVersion")


class Profile(NamedTuple):
    """Everything a comparison needs from one text."""

    units: tuple[Unit, ...]
    keys: tuple[str, ...]
    keyset: frozenset[str]
    raw_sorted: tuple[str, ...]
    mentions: frozenset[str]  # squashed words, stems, bigrams, trigrams and entities
    negated: bool
    flags: frozenset[str]  # antonym words present ("always", "enable" …)
    replaced: frozenset[str]  # keys of what the text says it replaces
    retired: frozenset[str]  # keys of what the text says is dropped, removed, deprecated
    changes: bool  # says a value changed ("now", "moved to", "bumped" …)
    adds: bool  # says it is one more ("also", "as well", "another" …)
    head: int  # how many units the first clause has (before ";", ":" or a full stop)
    normal: str
    prefixes: frozenset[str]  # leading parts (≥ 5 letters) of its words, for word families
    procedure: bool = False  # opens on the task it is for ("To cut a release: …")
    plainly_negated: bool = False  # negated by a word that only negates (not, never, no …)


def text_language(words: list[str]) -> str:
    """The language whose function words a text uses most; English unless another clearly wins."""
    counts = {lang: sum(w in hints for w in words) for lang, hints in _LANGUAGE_HINTS.items()}
    lang, best = max(counts.items(), key=lambda kv: kv[1])
    english = sum(w in FUNCTION_WORDS["english"] for w in words)
    return lang if best >= 2 and best > english else "english"


@lru_cache(maxsize=1)
def _synonyms() -> dict[str, str]:
    out: dict[str, str] = {}
    for group in SAME_WORDS:
        canon = stem(group[0])
        for w in group:
            out[w] = canon
            out[stem(w)] = canon
    return out


def canonical(word_stem: str) -> str:
    return _synonyms().get(word_stem, word_stem)


@lru_cache(maxsize=65536)
def squash(text: str) -> str:
    return _SQUASH.sub("", text.lower())


def _word_kind(tok: str, sentence_start: bool) -> str:
    bare = tok.strip("'-")
    lower = bare.lower()
    if lower in ENV_NAMES:
        return "env"
    if any(ch.isdigit() for ch in bare) and any(ch.isalpha() for ch in bare):
        return "ident"
    if "_" in bare:
        return "ident"
    if re.fullmatch(r"[A-Z]{2,}s", bare):
        return "acronyms"  # PRs, APIs, URLs
    if _CAMEL.search(bare):
        return "name" if bare[0].isupper() else "ident"
    if len(bare) >= 2 and bare.isupper() and bare.isalpha():
        return "name"  # an acronym: API, AWS, JSON
    if bare[:1].isupper() and not sentence_start:
        return "name"
    if "-" in bare and all(len(p) >= 2 for p in bare.split("-")):
        return "ident"  # nightly-backup, auth-service, new-checkout-flow
    return "word"


def _entity_key(kind: str, text: str) -> str:
    t = text.lower().strip()
    if kind in ("code", "quoted"):
        t = t.strip("`\"'“”").strip()
    if kind in ("url", "path", "dotted", "email"):
        t = t.rstrip(".,;:)!?")
    if kind == "number":
        t = t.lstrip("#").replace(",", "")
    if kind == "version":
        t = re.sub(r"\s+", "", t).lstrip("v")
    return t


def _parts(text: str) -> tuple[str, ...]:
    return tuple(
        canonical(stem(p.lower())) for p in _SPLIT_PARTS.findall(text) if len(p) > 1 or p.isdigit()
    )


# A memory is a few sentences; a hand-written giant is compared on its beginning only,
# so that one file cannot make every verdict slow.
MAX_COMPARED_CHARS = 4_000


def analyse(text: str) -> Profile:
    """Units, polarity and markers of one text (pure: same text, same profile)."""
    return _analyse(text[:MAX_COMPARED_CHARS])


def _is_start(text: str, pos: int) -> bool:
    before = text[max(0, pos - 64) : pos].rstrip()
    if not before:
        return pos < 64 or not text[:pos].strip()
    return before[-1] in ".!?:;(\"'" or before.endswith(("-", "*"))


_NOUN_NUMBER_WORD = re.compile(
    r"\b([a-z]{3,}) (" + "|".join(w for w in NUMBER_WORDS if w not in ("one", "once")) + r")\b"
)


def _noun_number(m: re.Match[str]) -> str:
    """A number word after a common noun, written as its digits (the digits' rules then say
    whether it names one of a series or is a value)."""
    noun = m.group(1)
    if noun in ATTRIBUTE_WORDS or noun in STOPWORDS:
        return m.group(0)
    return f"{noun} {NUMBER_WORDS[m.group(2)]}"


@lru_cache(maxsize=4096)
def _analyse(text: str) -> Profile:
    # Compatibility forms and invisible format characters are no difference in meaning
    # ("８４４３" is 8443; "svc\u200b-1" is svc-1).
    text = unicodedata.normalize("NFKC", text)
    if not text.isascii():
        text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    text = text.replace("’", "'").replace("\u00a0", " ")
    text = _EMPHASIS.sub("", text)  # _Never_ and **never** say never
    text = _NOUN_NUMBER_WORD.sub(_noun_number, text)  # "agent four" names agent 4
    if re.search(r"(?:^|[\s:;])1[.)]\s", text) and re.search(r"[\s:;]2[.)]\s", text):
        text = _LIST_MARKER.sub(" ", text)  # "1. bump 2. tag": list numbers are no values
    units: list[Unit] = []
    negations: list[int] = []  # token positions of negation words
    verb_negations: set[int] = set()  # of them, verbs that also describe events ("stopped")
    flags: set[str] = set()
    pending: list[str] = []  # consecutive capitalised words: one name ("GitHub Actions")
    words_seen: list[str] = []  # every lowercase word, for mentions
    stems_seen: list[str] = []
    language = text_language(re.findall(r"(?<![\w])[^\W\d_]{2,}(?![\w])", text.lower()))

    def flush() -> None:
        if pending:
            shown = " ".join(pending)
            lower = shown.lower()
            key = canonical(stem(lower)) if " " not in lower else lower
            units.append(Unit("name", key, lower, shown, _parts(shown)))
            pending.clear()

    def add_word(w: str, shown: str) -> None:
        if len(w) < 2 or w in STOPWORDS or w in MARKER_WORDS or w in FILLER_WORDS:
            return
        if w in NUMBER_WORDS:
            units.append(Unit("number", NUMBER_WORDS[w], NUMBER_WORDS[w], shown))
            return
        w = UNIT_WORDS.get(w, w)
        s = stem(w, language)
        stems_seen.append(s)
        units.append(Unit("word", canonical(s), s, shown))

    last_end = 0
    prev_lower = ""
    prev_at = -1  # token position (in its sentence) of the word in prev_lower
    prev_cased = ""
    sentence_i = 0  # position of the current token in its sentence
    head: int | None = None
    for i, m in enumerate(_TOKEN.finditer(text)):
        gap = text[last_end : m.start()]
        if head is None and units and re.search(r"[;:!?]|\.\s", gap):
            flush()
            head = len(units)
        sentence_i = 0 if re.search(r"[;:!?]|\.\s", gap) else sentence_i + (i > 0)
        kind = m.lastgroup or "word"
        tok = m.group()
        if pending and text[last_end : m.start()].strip():
            flush()  # names join across spaces only ("GitHub Actions", not "CI; Go")
        last_end = m.end()
        if kind != "word":
            flush()
            words_seen.extend(re.findall(r"\w+", tok.lower()))
            if kind == "handle":
                kind = "ident"
            elif kind == "call":  # unwrap(), os.path.join(): code
                kind = "code"
            key = _entity_key(kind, tok)
            if kind == "path" and "." not in key and key[:1] not in "/~.@" and key[-1:] != "/":
                parts = [p for p in key.split("/") if p]
                if 2 <= len(parts) <= 3 and all(p.isalpha() and len(p) <= 12 for p in parts):
                    for p in parts:  # "read/write", "CI/CD": words joined by a slash
                        add_word(p, p)
                    prev_lower = ""
                    continue
            vm = _VERSIONED.match(key) if kind == "dotted" else None
            numbered = (
                kind == "number"
                and key.isdigit()
                and prev_lower
                and prev_at > 0
                and prev_at == sentence_i - 1
                and prev_lower not in ATTRIBUTE_WORDS
                and prev_lower not in STOPWORDS
                and prev_cased == prev_lower  # a common noun, not a product ("Postgres 14")
                and _NUMBER_ENDS_NAME.match(text, m.end()) is not None
            )
            if numbered:
                # "aisle 12", "rev 4", "gate 3": the number may name which one. It stays a
                # value, marked with its noun; two texts that number the same noun
                # differently speak of two things (see `relate`).
                units.append(Unit("number", key, key, tok, (f"#{prev_lower}",)))
            elif vm:  # ubuntu-22.04: a named thing and its version (a value)
                units.append(Unit("ident", vm.group(1), vm.group(1), vm.group(1)))
                units.append(Unit("version", vm.group(2), vm.group(2), vm.group(2)))
            elif key:
                units.append(Unit(kind, key, key, tok))
            prev_lower = ""
            continue
        lower = tok.lower().strip("'-")
        if _CJK.search(lower):
            flush()
            _cjk_units(tok, units, words_seen)
            if _CJK_NEGATION.search(tok):
                negations.append(i)
            prev_lower = ""
            continue
        words_seen.extend(re.findall(r"\w+", lower))
        phrase = PHRASES.get((prev_lower, lower))
        if phrase:
            if units and units[-1].shown.lower() == prev_lower:
                units.pop()
            units.append(Unit("word", canonical(phrase), phrase, f"{prev_lower} {lower}"))
            prev_lower = ""
            continue
        prev_lower, prev_at, prev_cased = lower, sentence_i, tok.strip("'-")
        if lower in ("ne", "n") or (lower.startswith("n'") and len(lower) > 3):
            flush()  # French "ne … pas/jamais/aucun" is one negation; "ne … plus" has only "ne"
            if not re.match(
                r"(?:\s*[\w']+){0,3}?\s+(?:pas|jamais|aucun|aucune|rien|personne|guère)\b",
                text[m.end() :],
            ):
                negations.append(i)
            continue
        if lower in NEGATIONS or lower.endswith("n't"):
            flush()
            negations.append(i)
            if lower in VERB_NEGATIONS:
                verb_negations.add(i)
            continue
        if lower in ALWAYS_WORDS:
            flush()
            flags.add("always")
            continue
        if lower in ANTONYM_WORDS:
            flush()
            flags.add(lower)
            continue
        if lower in CALENDAR_WORDS:
            flush()
            day = lower[:-1] if lower.endswith("s") and lower[:-1] in CALENDAR_WORDS else lower
            units.append(Unit("time", day, day, tok))
            continue
        wk = _word_kind(tok, _is_start(text, m.start()))
        if wk == "acronyms":
            tok, wk = tok.strip("'-")[:-1], "name"
        if wk == "name":
            bare_tok = tok.strip("'-")
            # US, IT; and a single capital mid-sentence names a thing ("rev A", "plan B")
            acronym = (len(bare_tok) >= 2 and bare_tok.isupper()) or (
                len(bare_tok) == 1 and bare_tok.isupper() and bare_tok != "I"
            )
            if not acronym and (
                lower in STOPWORDS or lower in FILLER_WORDS or lower in MARKER_WORDS
            ):
                flush()
                continue
            pending.append(tok.strip("'-"))
            continue
        flush()
        if wk == "env":
            units.append(Unit("env", canonical(lower), lower, tok))
        elif wk == "ident" and (vm := _VERSIONED.match(lower)):
            # ubuntu-22.04, node@20.1: a named thing and its version (a value)
            units.append(Unit("ident", vm.group(1), vm.group(1), vm.group(1)))
            units.append(Unit("version", vm.group(2), vm.group(2), vm.group(2)))
        elif wk == "ident":
            hyphened = lower.split("-")
            if len(hyphened) > 1 and all(p.isalpha() for p in hyphened):
                key = "-".join(canonical(stem(p)) for p in hyphened)  # squash-merging
            else:
                key = lower
            units.append(Unit("ident", key, lower, tok, _parts(tok)))
        else:
            add_word(lower.replace("'", ""), tok)
    flush()
    mentions: set[str] = set()
    for u in units:
        mentions |= {u.key, squash(u.raw), squash(u.key), *u.parts}
        if u.parts:
            mentions.add("".join(u.parts))
    for seq in (words_seen, stems_seen):
        for n in (1, 2, 3):
            for j in range(len(seq) - n + 1):
                mentions.add("".join(seq[j : j + n]))
    # Double negation ("do not never") cancels; any other negation negates the text.
    adjacent = sum(1 for a, b in pairwise(negations) if b == a + 1)
    negated = len(negations) - 2 * adjacent > 0
    plain = [i for i in negations if i not in verb_negations]
    plainly_negated = len(plain) - 2 * sum(1 for a, b in pairwise(plain) if b == a + 1) > 0
    return Profile(
        units=tuple(units),
        keys=tuple(u.key for u in units),
        keyset=frozenset(u.key for u in units),
        raw_sorted=tuple(sorted(u.raw for u in units)),
        mentions=frozenset(mentions),
        negated=negated,
        flags=frozenset(flags),
        replaced=_replaced(text),
        retired=_retired(text),
        changes=bool(CHANGE_RE.search(text)),
        adds=bool(ADD_RE.search(text)),
        head=head if head is not None else len(units),
        normal=" ".join(re.findall(r"\w+", _LIST_MARKER.sub(" ", text).lower())),
        procedure=bool(_PROCEDURE_HEAD.match(text)) and head is not None,
        plainly_negated=plainly_negated,
        prefixes=frozenset(
            u.key[:n]
            for u in units
            if u.kind == "word"
            for n in range(max(_FAMILY_MIN, len(u.key) - _FAMILY_GAP), len(u.key))
        ),
    )


def _cjk_units(tok: str, units: list[Unit], words_seen: list[str]) -> None:
    """CJK runs as character bigrams (no spaces to split on); other runs as words."""
    pos = 0
    for run in _CJK.finditer(tok):
        if run.start() > pos:
            rest = tok[pos : run.start()].lower()
            units.append(Unit("name", rest, rest, tok[pos : run.start()]))
            words_seen.append(rest)
        chars = run.group()
        grams = [chars[k : k + 2] for k in range(max(1, len(chars) - 1))]
        for g in grams:
            units.append(Unit("word", g, g, g))
        words_seen.extend(grams)
        pos = run.end()
    if pos < len(tok):
        rest = tok[pos:].lower()
        units.append(Unit("name", rest, rest, tok[pos:]))
        words_seen.append(rest)


def _replaced(text: str) -> frozenset[str]:
    """Keys of the things a text says it replaces ("use uv instead of Poetry" → poetry)."""
    objects = [m.group("object") for m in _REPLACE_AFTER.finditer(text)]
    objects += [m.group("object") for m in _REPLACE_FROM.finditer(text)]
    objects += [m.group("object") for m in _REPLACE_CJK.finditer(text)]
    return _object_keys(objects)


def _retired(text: str) -> frozenset[str]:
    """Keys of the things a text says are gone ("tablet support was dropped" → tablet …)."""
    return _object_keys([m.group("object") for m in _REPLACE_BEFORE.finditer(text)])


def _object_keys(objects: list[str]) -> frozenset[str]:
    keys: set[str] = set()
    for obj in objects:
        if _CJK.search(obj):
            keys |= {obj[k : k + 2] for k in range(max(1, len(obj) - 1))}
            continue
        for u in _analyse_plain(obj):
            keys.add(u.key)
    return frozenset(keys)


def _analyse_plain(text: str) -> tuple[Unit, ...]:
    """Units of a fragment without the replacement markers (no recursion)."""
    words = [w for w in re.findall(r"[\w.+-]+", text.lower()) if w not in STOPWORDS and len(w) > 1]
    out: list[Unit] = []
    for w in words:
        if "-" in w and w.replace("-", "").isalpha():
            parts = _parts(w)
            out.append(Unit("ident", "-".join(parts), w, w, parts))
        out.append(Unit("word", canonical(stem(w)), w, w))
        out.append(Unit("name", canonical(stem(w)), w, w))
    return tuple(out)


def matched(u: Unit, other: Profile) -> bool:
    """Whether `other` says unit `u` too (case, dashes, word forms and spaces aside)."""
    if u.key in other.keyset or u.key in other.mentions:
        return True
    if squash(u.raw) in other.mentions or squash(u.key) in other.mentions:
        return True
    return (
        len(u.parts) > 1
        and all(len(p) > 1 for p in u.parts)
        and all(p in other.mentions for p in u.parts)
    )


class Relation(NamedTuple):
    """How a candidate relates to one memory."""

    # same | paraphrase | update | extends (all of it and more) | contradiction | replaces
    # | replaces_in_rule (only an instruction is replaced so) | different
    kind: str
    score: float  # share of the two texts' non-value units they have in common, 0..1
    certain: bool  # clearly about the same fact (a forced save may replace)
    why: str  # a short explanation for the preview


def similarity(a: Profile, b: Profile) -> float:
    """Jaccard overlap of canonical units: cheap and order-free (pre-filter, related)."""
    if not a.keyset or not b.keyset:
        return 0.0
    return len(a.keyset & b.keyset) / len(a.keyset | b.keyset)


def opposite(a: Profile, b: Profile, *, facts: bool = False) -> bool:
    """Whether the two texts have opposite polarity. Between two facts (`facts`), only a
    word that does nothing but negate counts: "stopped sending frames" is an event."""
    if (a.plainly_negated != b.plainly_negated) if facts else (a.negated != b.negated):
        return True
    return any(
        (x in a.flags and y in b.flags and x not in b.flags)
        or (y in a.flags and x in b.flags and y not in b.flags)
        for x, y in ANTONYMS
    )


_FAMILY_MIN, _FAMILY_GAP = 5, 4


def _family(key: str, other: Profile) -> bool:
    """Whether `other` has a word of the family of `key` that the stemmer kept apart
    (paramet/parameteris): one is the other plus at most four letters, the shorter ≥ 5."""
    if len(key) >= _FAMILY_MIN and key in other.prefixes:
        return True
    low = max(_FAMILY_MIN, len(key) - _FAMILY_GAP)
    return any(key[:n] in other.keyset for n in range(low, len(key)))


def _sibling(a: Unit, b: Unit) -> bool:
    """Two names of one series: svc-1/svc-2, staging/production, api-v1/api-v2."""
    if a.kind == "env" and b.kind == "env":
        return True
    la, lb = re.sub(r"\d+", "#", a.raw), re.sub(r"\d+", "#", b.raw)
    return la == lb and "#" in la


def _show(units: list[Unit]) -> str:
    return ", ".join(dict.fromkeys(u.shown.strip("`") for u in units))


def relate(cand: Profile, mem: Profile, *, steps: bool = False, facts: bool = False) -> Relation:
    """How `cand` relates to `mem`: the kind of change, and how sure that is.

    Only-in-one-text units decide: different names (in subject position, or of one
    series, or without a change marker) make another fact; different values with the
    same subject make an update; the same subject reversed is a contradiction; the same
    subject in other words is a paraphrase. When in doubt: different (an ADD loses
    nothing). The named rules of `RULES` are tried in order; the first that decides wins.
    """
    if cand.normal and cand.normal == mem.normal:
        return Relation("same", 1.0, True, "same text")
    # "Tablet support was dropped" reverses "the app supports tablets", like a negation.
    retires = any(
        (k in mem.keyset or k in mem.mentions) and k not in mem.retired for k in cand.retired
    )
    same_polarity = not opposite(cand, mem, facts=facts) and not retires
    if cand.units and cand.raw_sorted == mem.raw_sorted and same_polarity:
        # The same words in the same order; in another order they may say another thing
        # ("merge main into feature branches" / "merge feature branches into main",
        # "svc-1 calls svc-2" / "svc-2 calls svc-1") or the same in passive voice: shown,
        # never dropped.
        # Only formatting may differ for a NOOP: other function words ("do not" for
        # "don't", "the" dropped) make a possible duplicate, shown to the person.
        return Relation("paraphrase", 1.0, False, "the same words")
    pair = _Pair(cand, mem, steps, same_polarity)
    for rule in RULES:
        found = rule(pair)
        if found is not None:
            return found
    return Relation("different", pair.score, False, _why_different(pair.names_c, pair.names_m))


class _Pair:
    """What two texts share and what only one of them says, computed once for the rules."""

    def __init__(self, cand: Profile, mem: Profile, steps: bool, same_polarity: bool) -> None:
        self.cand, self.mem, self.steps, self.same_polarity = cand, mem, steps, same_polarity
        self.ok_c = ok_c = [_matched_in(u, mem) for u in cand.units]
        self.ok_m = ok_m = [_matched_in(u, cand) for u in mem.units]
        self.only_c = only_c = [u for u, ok in zip(cand.units, ok_c, strict=True) if not ok]
        self.only_m = only_m = [u for u, ok in zip(mem.units, ok_m, strict=True) if not ok]
        self.names_c = [u for u in only_c if u.kind in NAME_KINDS]
        self.names_m = [u for u in only_m if u.kind in NAME_KINDS]
        self.vals_c = [u for u in only_c if u.kind in VALUE_KINDS]
        self.vals_m = [u for u in only_m if u.kind in VALUE_KINDS]
        self.words_c = [u for u in only_c if u.kind == "word"]
        self.words_m = [u for u in only_m if u.kind == "word"]
        shared_m, n_m = _cover(mem.units, ok_m)
        shared_c, n_c = _cover(cand.units, ok_c)
        common_flags = len(cand.flags & mem.flags)  # "required" in both is shared subject
        shared_m, n_m = shared_m + common_flags, n_m + common_flags
        shared_c, n_c = shared_c + common_flags, n_c + common_flags
        self.shared_m, self.n_m = shared_m, n_m
        self.cover_m = shared_m / n_m if n_m else 0.0
        self.cover_c = shared_c / n_c if n_c else 0.0
        self.score = (shared_m + shared_c) / (n_m + n_c) if n_m + n_c else 0.0
        matched_names = any(
            o and u.kind in NAME_KINDS | VALUE_KINDS for u, o in zip(mem.units, ok_m, strict=True)
        )
        self.anchor = shared_m >= 2 or matched_names
        self.at_end = _at_end(cand.units, ok_c) and _at_end(mem.units, ok_m)
        # One unit swapped in an otherwise identical sentence is another subject ("the
        # orders table …" / "the events table …", "do not log request bodies" / "log request
        # headers"), unless it is a value or the candidate says what changed or is replaced.
        self.swapped = not self.vals_c and not self.vals_m and _swapped(cand, ok_c, mem, ok_m)
        # What both texts say they replace is agreement, not a reversal.
        self.replaces = any(
            (k in mem.keyset or k in mem.mentions) and k not in mem.replaced for k in cand.replaced
        )
        self.name_conflict = bool(self.names_c) and bool(self.names_m)
        # Whether the memory's subject (its first unit) is still there: "the logging cluster
        # …" is not updated by "the search cluster now …".
        self.subject_kept = bool(ok_m) and ok_m[0]

    def relation(self, kind: str, why: str, certain: bool = False) -> Relation:
        return Relation(kind, self.score, certain, why)


def _cover(units: tuple[Unit, ...], ok: list[bool]) -> tuple[int, int]:
    """(shared, all) of the units that are not values."""
    pairs = [(u, o) for u, o in zip(units, ok, strict=True) if u.kind not in VALUE_KINDS]
    return sum(o for _, o in pairs), len(pairs)


def _steps_changed(p: _Pair) -> Relation | None:
    """The same task with its steps changed: "To restore a snapshot: stop, run X, start" →
    "… stop, run Y --verify, start" updates the procedure (the task names the subject).
    (`steps`: both are skills, whose head names their task even without "To …:")"""
    c, m = p.cand, p.mem
    if (
        ((c.procedure and m.procedure) or (p.steps and c.head < len(c.units)))
        and c.head >= 2
        and c.keys[: c.head] == m.keys[: m.head]
        and p.same_polarity
        and p.cover_m >= 0.6
        and (p.only_c or p.only_m)
    ):
        return p.relation("update", f"steps changed: {_changed(p.only_m, p.only_c)}")
    return None


def _another_of_a_series(p: _Pair) -> Relation | None:
    """Names of one series (svc-1/svc-2, staging/production) are other facts; only a
    changed value at the end of both texts, said to have changed, moves along a series
    ("The APAC cluster moved to ap-southeast-2"). An environment that only one text names
    scopes it: "the timeout in staging is 10 s" is another fact than "the timeout is 30 s".
    (A reversal may name a new context: "never …; use trunk-based development".)"""
    names_c, names_m = p.names_c, p.names_m
    envs = any(a.kind == b.kind == "env" for a in names_c for b in names_m) or (
        p.same_polarity and any(u.kind == "env" for u in (*names_c, *names_m))
    )
    series = any(_sibling(a, b) for a in names_c for b in names_m) or any(
        a.parts and a.parts == b.parts for a in p.vals_c for b in p.vals_m
    )
    if envs or (series and not (p.cand.changes and p.at_end)):
        return p.relation("different", _why_different(names_c, names_m))
    return None


def _says_it_is_another(p: _Pair) -> Relation | None:
    """ "Sentry also monitors the Android app": another fact, said so."""
    if p.cand.adds:
        return p.relation("paraphrase" if not (p.only_c or p.only_m) else "different",
                          "says it is another one")  # fmt: skip
    return None


def _reversed_or_replaced(p: _Pair) -> Relation | None:
    """The same subject, reversed: a negation or antonym, or "X instead of <what mem says>"."""
    if not (
        (not p.same_polarity or p.replaces)
        and p.anchor
        and p.cover_m >= 0.5
        and (p.replaces or not (p.name_conflict or p.swapped))
        # "Use OpenSearch instead of Elasticsearch for search" does not replace "use
        # Elasticsearch for logs": with other words on both sides, most must be kept.
        and (
            not (p.replaces and p.same_polarity)
            or not (p.words_c and p.words_m)
            or p.cover_m >= 0.7
            or (p.cand.changes and p.subject_kept)
        )
        # A bare negation must keep most of the memory ("do not log request bodies" is
        # not reversed by "log request headers"); always/never or a replaced object may
        # reword more.
        and (
            p.replaces
            or p.same_polarity
            or (p.cover_m > 0.7 and not _substituted(p.mem, p.ok_m, p.cand, p.ok_c))
            or _flipped(p.cand, p.mem)
            or _head_shared(p.cand, p.ok_c)
        )
    ):
        return None
    if not p.same_polarity and p.vals_c:
        # "… is no longer 30 seconds; it is 60 seconds": a new value, said so.
        if p.cand.changes and not p.name_conflict:
            return p.relation("update", _changed(p.vals_m, p.vals_c))
        if p.vals_m:
            return p.relation("different", "other values")
    if p.replaces and p.same_polarity and p.vals_c and p.vals_m:
        return p.relation("update", _changed(p.vals_m, p.vals_c))
    if not p.same_polarity:
        sure = not p.only_c and not p.only_m  # the same words, reversed
        return p.relation("contradiction", "says the opposite", sure)
    # A fact keeps its subject first ("the logging cluster uses …" is not replaced by
    # "the search cluster uses X instead of …"); a rule starts with its verb.
    return p.relation("replaces" if p.subject_kept else "replaces_in_rule", "says it replaces this")


def _other_polarity(p: _Pair) -> Relation | None:
    """Opposite polarity that is no reversal of this memory: another subject."""
    return None if p.same_polarity else p.relation("different", "other subject")


def _one_unit_swapped(p: _Pair) -> Relation | None:
    if p.swapped and not p.cand.changes:
        return p.relation("different", _why_different(p.only_c, p.only_m))
    return None


def _other_names(p: _Pair) -> Relation | None:
    """Names only each text has: another fact, unless the candidate says the name in the
    value place changed ("the docs are now hosted on Netlify")."""
    if not (p.names_c and p.names_m):
        return None
    in_value_place = (
        _first_only(p.cand.units, p.ok_c, NAME_KINDS) > 0
        and _first_only(p.mem.units, p.ok_m, NAME_KINDS) > 0
    )
    if p.cand.changes and p.anchor and p.cover_m >= 0.5 and in_value_place and p.subject_kept:
        return p.relation("update", _changed(p.names_m, p.names_c))
    return p.relation("different", _why_different(p.names_c, p.names_m))


def _other_values(p: _Pair) -> Relation | None:
    """Values only each text has: the same fact with a new value, or another fact."""
    c, m = p.cand, p.mem
    if not (p.vals_c and p.vals_m):
        return None
    if (
        (not (p.words_c and p.words_m) or (c.changes and p.subject_kept))
        and (c.changes or len(p.vals_c) == len(p.vals_m) == 1)  # one value, or said so
        and p.anchor
        and p.cover_m >= (0.5 if c.changes else 0.6)
    ):
        # Certain: one value changed, nothing else, after at least two shared units
        # ("The billing service listens on port 8443" → "… port 9443").
        sure = (
            len(p.only_c) == len(p.vals_c) == 1
            and len(p.only_m) == len(p.vals_m) == 1
            and _first_only(c.units, p.ok_c, VALUE_KINDS) >= 2
            and _first_only(m.units, p.ok_m, VALUE_KINDS) >= 2
        )
        return p.relation("update", _changed(p.vals_m, p.vals_c), sure)
    if (
        not (p.words_c or p.words_m or p.names_c or p.names_m)
        and p.same_polarity
        and p.shared_m >= 2
        and p.cover_m >= 0.8
        # "Release 2.3 ships on …" / "Release 2.4 …": a value right at the start names it
        and _first_only(c.units, p.ok_c, VALUE_KINDS) >= 2
        and _first_only(m.units, p.ok_m, VALUE_KINDS) >= 2
    ):
        # Every word the same, only its values new ("patch windows are Tuesdays
        # 06:00–08:00" → "Wednesdays 05:00–07:00"): the one fact, with new values.
        return p.relation("update", _changed(p.vals_m, p.vals_c))
    return p.relation("different", "other values")


def _changed_words_at_the_end(p: _Pair) -> Relation | None:
    """Other words at the end of the same subject, said to have changed: an update."""
    if (
        p.words_c
        and p.words_m
        and p.cand.changes
        and p.anchor
        and p.cover_m >= 0.5
        and p.at_end
        and p.subject_kept
    ):
        return p.relation("update", _changed(p.words_m, p.words_c))
    return None


def _extends(p: _Pair) -> Relation | None:
    """Everything the memory says, in the same order, and more (a workflow with one more
    step): an update that keeps it all, under the same heading ("To deploy the docs: …" is
    another task than "To deploy: …")."""
    c, m = p.cand, p.mem
    if (
        not p.only_m
        and any(u.kind in NAME_KINDS | VALUE_KINDS for u in p.only_c)
        and p.n_m >= 3
        and p.cover_c >= 0.5
        and _in_order(m.keys, c.keys)
        and (c.head == len(p.ok_c) or all(p.ok_c[: c.head]))
        and (m.head == len(p.ok_m) or all(p.ok_m[: m.head]))
    ):
        return p.relation("extends", f"adds {_show(p.only_c)}")
    return None


def _new_names_out_of_order(p: _Pair) -> Relation | None:
    if p.names_c and not _in_order(p.mem.keys, p.cand.keys) and p.cover_c < 0.5:
        return p.relation("different", _why_different(p.names_c, p.names_m))
    return None


def _same_subject_in_other_words(p: _Pair) -> Relation | None:
    """A rewording names the same things: an identifier, path or URL only one text has
    ("react-dom" / "react") makes it another fact."""
    new_ids = [
        u
        for u, other in [*((u, p.mem) for u in p.names_c), *((u, p.cand) for u in p.names_m)]
        if u.kind in IDENT_KINDS
        and (u.kind != "ident" or any(part in other.mentions for part in u.parts))
    ]
    if p.anchor and p.score >= 0.5 and p.cover_m >= 0.5 and not new_ids:
        return p.relation("paraphrase", "same subject in other words")
    return None


RULES = (
    _steps_changed,
    _another_of_a_series,
    _says_it_is_another,
    _reversed_or_replaced,
    _other_polarity,
    _one_unit_swapped,
    _other_names,
    _other_values,
    _changed_words_at_the_end,
    _extends,
    _new_names_out_of_order,
    _same_subject_in_other_words,
)


def _substituted(a: Profile, ok_a: list[bool], b: Profile, ok_b: list[bool]) -> bool:
    """Whether something `a` says is put in place by something else in `b` (the same
    sentence about another object: "mock the database" / "mock the payment gateway")."""
    sm = SequenceMatcher(
        None,
        [u.key if o else f"\0a{i}" for i, (u, o) in enumerate(zip(a.units, ok_a, strict=True))],
        [u.key if o else f"\0b{i}" for i, (u, o) in enumerate(zip(b.units, ok_b, strict=True))],
        autojunk=False,
    )
    opcodes = sm.get_opcodes()
    return any(
        tag == "replace" and 0 < k < len(opcodes) - 1 for k, (tag, *_rest) in enumerate(opcodes)
    )


def _head_shared(p: Profile, ok: list[bool]) -> bool:
    """Whether the first clause says only what the other text says ("X is no longer Y; …")."""
    head = ok[: p.head]
    return len(head) >= 2 and sum(head) / len(head) >= 0.75


_POSITIVE = frozenset({"always", "fine", "allowed", "allow", "enable", "enabled", "required",
                       "mandatory"})  # fmt: skip


def _flipped(a: Profile, b: Profile) -> bool:
    """An explicit flip: always/never, enable/disable, fine/forbidden …, not just a "not"."""
    if a.negated != b.negated:
        pos = b.flags if a.negated else a.flags
        if pos & _POSITIVE:
            return True
    return any(
        (x in a.flags and y in b.flags) or (y in a.flags and x in b.flags)
        for x, y in ANTONYMS
        if x != y
    )


def _matched_in(u: Unit, other: Profile) -> bool:
    if matched(u, other):
        return True
    if u.kind == "word":
        return _family(u.key, other)
    return False


def _first_only(units: tuple[Unit, ...], ok: list[bool], kinds: frozenset[str]) -> int:
    """How many shared units come before the first unshared one of `kinds`."""
    seen = 0
    for u, o in zip(units, ok, strict=True):
        if o:
            seen += 1
        elif u.kind in kinds:
            return seen
    return seen


def _swapped(a: Profile, ok_a: list[bool], b: Profile, ok_b: list[bool]) -> bool:
    """One block of up to three units put in place of another in the same sentence (a
    template: "build artifacts are uploaded to GCS" / "test reports are uploaded to GCS")."""
    only_a = [u for u, o in zip(a.units, ok_a, strict=True) if not o]
    only_b = [u for u, o in zip(b.units, ok_b, strict=True) if not o]
    if not (1 <= len(only_a) <= 3 and 1 <= len(only_b) <= 3) or not _same_frame(a, ok_a, b, ok_b):
        return False
    ia = [i for i, o in enumerate(ok_a) if not o]
    ib = [i for i, o in enumerate(ok_b) if not o]
    contiguous = ia[-1] - ia[0] == len(ia) - 1 and ib[-1] - ib[0] == len(ib) - 1
    return contiguous and sum(ok_a[: ia[0]]) == sum(ok_b[: ib[0]])


def _same_frame(a: Profile, ok_a: list[bool], b: Profile, ok_b: list[bool]) -> bool:
    """Whether the shared units are written the same and in the same order (a template)."""
    ra = [u.raw for u, o in zip(a.units, ok_a, strict=True) if o]
    rb = [u.raw for u, o in zip(b.units, ok_b, strict=True) if o]
    return ra == rb and len(ra) >= 1


def _at_end(units: tuple[Unit, ...], ok: list[bool]) -> bool:
    """Whether nothing shared follows the first unshared unit (the changed value ends it)."""
    first = next((i for i, o in enumerate(ok) if not o), len(ok))
    return not any(ok[first:])


def _in_order(small: tuple[str, ...], big: tuple[str, ...]) -> bool:
    sm = SequenceMatcher(None, small, big, autojunk=False)
    return sum(b.size for b in sm.get_matching_blocks()) == len(small)


def _why_different(names_c: list[Unit], names_m: list[Unit]) -> str:
    if names_c and names_m:
        return f"names {_show(names_c)}, not {_show(names_m)}"
    if names_c:
        return f"also names {_show(names_c)}"
    if names_m:
        return f"does not name {_show(names_m)}"
    return "other subject"


def _changed(old: list[Unit], new: list[Unit]) -> str:
    return f"{_show(old)} → {_show(new)}" if old else f"now {_show(new)}"
