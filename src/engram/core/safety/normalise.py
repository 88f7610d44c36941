"""Text as a reader sees it: the forms injection checks match against.

An instruction can be disguised so that it reads the same to a person or a model but
not to a pattern: HTML entities (`&#105;gnore`), compatibility forms (full-width or
mathematical letters), invisible characters between letters, look-alike letters from
other scripts (Cyrillic `о` for Latin `o`), accents, letters spaced or dotted apart.
`folded()` undoes all of that except the look-alikes; `skeleton()` also maps
look-alike letters to Latin, so one Latin pattern catches every disguise.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from functools import lru_cache

from engram.core.safety.prefilter import (
    Keywords,
    compile_with_keywords,
    split_by_starts,
    stored_needs,
)


class LazyPattern:
    """A regular expression compiled on first use: importing the checks stays cheap.

    Once compiled, the pattern's methods are bound to the object's own slots, so a call
    costs what a call on the compiled pattern costs (the screen makes ~500 per memory),
    plus, for a pattern that requires keywords, the keyword check (see `prefilter`).
    """

    _BOUND = ("search", "finditer", "match", "fullmatch", "sub", "subn", "findall", "split")
    __slots__ = ("pattern", "flags", "_keywords", "_rx", *_BOUND)

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern, self.flags = pattern, flags
        self._rx: re.Pattern[str] | None = None
        self._keywords: Keywords | None = None
        ALL_PATTERNS.append(self)

    @property
    def keywords(self) -> Keywords:
        """The literals every match holds (from the stored analysis, else by compiling)."""
        if self._keywords is None:
            needs = stored_needs(self.pattern, self.flags)
            if needs is None:
                self._compiled()
            else:
                self._keywords = Keywords(needs)
        assert self._keywords is not None
        return self._keywords

    def _deferred(self, method: str) -> Callable:
        """`method` before the pattern is compiled: text that cannot match is answered
        without compiling; the first that may match compiles the pattern and rebinds."""
        may_match, no_match = self.keywords.may_match, _NO_MATCH[method]
        at = 1 if method in ("sub", "subn") else 0

        def call(*args, **kwargs):  # type: ignore[no-untyped-def]
            string = args[at] if len(args) > at else kwargs.get("string", "")
            if not may_match(string):
                return no_match(string)
            self._compiled()
            return getattr(self, method)(*args, **kwargs)

        return call

    def _compiled(self) -> re.Pattern[str]:
        rx = self._rx
        if rx is None:
            if self._keywords is None:
                rx, needs = compile_with_keywords(self.pattern, self.flags)
                self._keywords = Keywords(needs)
            else:
                rx = re.compile(self.pattern, self.flags)
            keywords = self._keywords
            # a long alternation most of whose alternatives have known starts is searched
            # in two parts (see `split_by_starts`); shorter patterns are not worth a parse
            parts = None
            if not keywords.knows_starts and len(self.pattern) >= _SPLIT_FROM:
                parts = split_by_starts(self.pattern, self.flags)
            for method in self._BOUND:
                bound = getattr(rx, method)
                if parts and method == "search":
                    bound = _search_in_parts(rx, keywords, parts)
                elif keywords.knows_starts and method in _AT_STARTS:
                    bound = _AT_STARTS[method](rx, keywords)
                elif keywords:
                    bound = _guarded(method, bound, keywords.may_match)
                object.__setattr__(self, method, bound)
            self._rx = rx
        return rx

    def __getattr__(self, name: str):
        if name in self._BOUND:
            keywords = self.keywords  # compiles the pattern when its analysis is not stored
            if self._rx is None and keywords:
                bound = self._deferred(name)
                object.__setattr__(self, name, bound)
                return bound
            self._compiled()
            return object.__getattribute__(self, name)
        return getattr(self._compiled(), name)


ALL_PATTERNS: list[LazyPattern] = []  # every one made, for the stored analyses (`prefilter`)


# What each method returns when the keyword check rules a match out.
_NO_MATCH: dict[str, Callable[[str], object]] = {
    "search": lambda s: None,
    "match": lambda s: None,
    "fullmatch": lambda s: None,
    "finditer": lambda s: iter(()),
    "findall": lambda s: [],
    "split": lambda s: [s],
    "sub": lambda s: s,
    "subn": lambda s: (s, 0),
}


def _guarded(method: str, bound: Callable, may_match: Callable[[str], bool]) -> Callable:
    """`bound`, run only on text that holds the pattern's required keywords."""
    no_match = _NO_MATCH[method]
    if method in ("sub", "subn"):

        def call(repl, string, *args, **kwargs):  # type: ignore[no-untyped-def]
            return bound(repl, string, *args, **kwargs) if may_match(string) else no_match(string)

    else:

        def call(string, *args, **kwargs):  # type: ignore[no-untyped-def]
            return bound(string, *args, **kwargs) if may_match(string) else no_match(string)

    return call


def _search_at_starts(rx: re.Pattern[str], keywords: Keywords) -> Callable:
    """`rx.search`, tried only where a match may start: what the engine's own search
    returns, since it too returns the match at the first position where one begins."""
    search, match, may_match, starts = rx.search, rx.match, keywords.may_match, keywords.starts

    def call(string, *args, **kwargs):  # type: ignore[no-untyped-def]
        if not may_match(string):
            return None
        if args or kwargs:
            return search(string, *args, **kwargs)
        for pos in starts(string):
            m = match(string, pos)
            if m is not None:
                return m
        return None

    return call


def _finditer_at_starts(rx: re.Pattern[str], keywords: Keywords) -> Callable:
    """`rx.finditer`, tried only where a match may start. Every match consumes its first
    literal, so none is empty and each next one is the first that starts after the last."""
    finditer, match, may_match, starts = rx.finditer, rx.match, keywords.may_match, keywords.starts

    def matches(string: str) -> Iterator[re.Match[str]]:
        end = 0
        for pos in starts(string):
            if pos >= end:
                m = match(string, pos)
                if m is not None:
                    end = m.end()
                    yield m

    def call(string, *args, **kwargs):  # type: ignore[no-untyped-def]
        if not may_match(string):
            return iter(())
        if args or kwargs:
            return finditer(string, *args, **kwargs)
        return matches(string)

    return call


_SPLIT_FROM = 200  # characters of a pattern from which a split may pay for its parse


def _search_in_parts(rx: re.Pattern[str], keywords: Keywords, parts: list) -> Callable:
    """`rx.search` as the first position either part matches at, then `rx.match` there:
    the engine's own answer, since it too takes the first position where a match begins."""
    search, match, may_match = rx.search, rx.match, keywords.may_match
    (known_rx, known_needs), (other_rx, other_needs) = parts
    known = _search_at_starts(known_rx, Keywords(known_needs))
    other_keywords = Keywords(other_needs)
    other = (
        _guarded("search", other_rx.search, other_keywords.may_match)
        if other_keywords
        else other_rx.search
    )

    def call(string, *args, **kwargs):  # type: ignore[no-untyped-def]
        if not may_match(string):
            return None
        if args or kwargs:
            return search(string, *args, **kwargs)
        found = [m.start() for m in (known(string), other(string)) if m is not None]
        return match(string, min(found)) if found else None

    return call


_AT_STARTS: dict[str, Callable[[re.Pattern[str], Keywords], Callable]] = {
    "search": _search_at_starts,
    "finditer": _finditer_at_starts,
}


def lazy_compile(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile`, deferred until the pattern is first used."""
    return LazyPattern(pattern, flags)  # type: ignore[return-value]


# Quoted code (fenced or inline): shown as it is, never rendered nor read as prose.
CODE_SPAN = lazy_compile(r"```.*?```|`[^`\n]*`", re.S)

# Letters of Cyrillic, Greek, Armenian and Cherokee (and a few Latin extensions) that
# render like a Latin letter, after NFKD and case folding. Derived from the Unicode
# confusables data (UTS #39) for the scripts that are mixed into Latin text in practice.
_LOOKALIKES = {
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ё": "e", "є": "e", "г": "r", "һ": "h", "і": "i",
    "ї": "i", "ј": "j", "к": "k", "л": "n", "м": "m", "н": "h", "о": "o", "п": "n",
    "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "ԁ": "d", "ԛ": "q",
    "ԝ": "w", "ӏ": "l", "ɡ": "g", "ь": "b", "ү": "y", "ҳ": "x", "ӧ": "o", "ѵ": "v",
    "ʏ": "y", "ɢ": "g", "ɪ": "i", "ʟ": "l", "ɴ": "n", "ʀ": "r", "ᴅ": "d", "ᴇ": "e",
    # Greek
    "α": "a", "β": "b", "γ": "y", "δ": "d", "ε": "e", "η": "n", "ι": "i", "κ": "k",
    "ν": "v", "ο": "o", "ρ": "p", "σ": "o", "τ": "t", "υ": "u", "χ": "x", "ω": "w",
    "ϲ": "c", "ϳ": "j", "ς": "c", "μ": "u", "ϱ": "p", "ϵ": "e",
    # Armenian, Cherokee (lower-cased forms), Latin small capitals and dotless i
    "օ": "o", "ս": "u", "ց": "g", "հ": "h", "ո": "n", "ı": "i", "ȷ": "j", "ꮃ": "w",
    "ꭺ": "a", "ꮯ": "c", "ꭼ": "e", "ꮋ": "h", "ꮖ": "i", "ꮪ": "s", "ꮲ": "p",
}  # fmt: skip


@lru_cache(maxsize=1)
def _lookalike_table() -> dict[int, str]:
    """The table above plus every Latin small capital Unicode names as one ("ᴏ", "ꜱ", "ᴘ")."""
    table = dict(_LOOKALIKES)
    for lo, hi in ((0x0250, 0x02B0), (0x1D00, 0x1D80), (0xA720, 0xA800)):
        for cp in range(lo, hi):
            name = unicodedata.name(chr(cp), "")
            if name.startswith("LATIN LETTER SMALL CAPITAL ") and len(name) == 28:
                table.setdefault(chr(cp), name[-1].lower())
    return str.maketrans(table)


# Characters that take no room although they are letters or symbols (fillers, blanks).
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u17b4\u17b5")
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Cc", "Co", "Cs", "Cn", "Zl", "Zp"})
# Combining marks that decorate Latin, Greek or Cyrillic letters (accents, "zalgo"),
# variation selectors and the grapheme joiner; kana voicing marks and other scripts'
# vowel signs are kept, since they change the letter.
_DROPPED_MARKS = re.compile(
    "(?<=[\u0000-\u03ff])[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+|"
    "[\ufe00-\ufe0f\U000e0100-\U000e01ef]"
)

# Runs of at least three single letters split by one separator: "i g n o r e", "i.g.n.o.r.e".
_SPACED = re.compile(r"(?<![^\W_])[^\W\d_]([ .\-_*·•/|])(?:[^\W\d_]\1)+[^\W\d_](?![^\W_])")
_SEPARATORS = re.compile(r"[ .\-_*·•/|]")
_TAGS_BLOCK = (0xE0000, 0xE007F)


def is_invisible(ch: str) -> bool:
    """Whether `ch` is drawn as nothing: format/control/private-use characters, fillers."""
    if ch in "\n\r\t ":
        return False
    return ch in _BLANK_LETTERS or unicodedata.category(ch) in _INVISIBLE_CATEGORIES


def tag_text(text: str) -> str:
    """ASCII smuggled in Unicode tag characters (U+E0020…U+E007E), decoded."""
    lo, hi = _TAGS_BLOCK
    return "".join(chr(ord(c) - lo) for c in text if lo + 0x20 <= ord(c) < hi)


def _unescape(text: str) -> str:
    """HTML entities decoded, twice at most (`&amp;#105;` is an `i` encoded twice)."""
    for _ in range(2):
        if "&" not in text:
            break
        import html  # lazy: its entity table is large and most texts have no entity

        text = html.unescape(text)
    return text


def _join_spaced(text: str) -> str:
    def join(m: re.Match[str]) -> str:
        return _SEPARATORS.sub("", m.group(0))

    return _SPACED.sub(join, text)


@lru_cache(maxsize=512)
def folded(text: str) -> str:
    """Entities decoded, NFKC, case folded, accents and invisible characters removed,
    spaced-out letters joined, whitespace collapsed."""
    text = _unescape(text)
    if text.isascii():
        text = re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", "", text)
    else:
        text = unicodedata.normalize("NFKD", text)
        text = "".join(c for c in text if not is_invisible(c))
        text = _DROPPED_MARKS.sub("", text)
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _join_spaced(text)
    return " ".join(text.split())


@lru_cache(maxsize=512)
def skeleton(text: str) -> str:
    """`folded(text)` with look-alike letters of other scripts mapped to Latin."""
    out = folded(text)
    return out if out.isascii() else out.translate(_lookalike_table())


def visible_form(text: str) -> str:
    """Entities decoded and NFKC applied, case and accents kept (markup checks)."""
    return unicodedata.normalize("NFKC", _unescape(text))
