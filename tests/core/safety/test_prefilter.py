"""The keyword prefilter never changes a verdict: whatever a pattern matches holds the
literals read out of that pattern, under the engine's own case folding."""

from __future__ import annotations

import gc
import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.core.safety import injection, intent, prefilter, scan, secrets  # noqa: F401
from engram.core.safety.normalise import LazyPattern, skeleton
from engram.core.safety.prefilter import (
    KeywordIndex,
    Keywords,
    compile_with_keywords,
    fold,
    required,
    required_literals,
    split_by_starts,
)


def test_literals_of_a_sequence_are_all_required() -> None:
    groups = required_literals(r"\b(?:ignore|forget)\s+previous\s+rules?")
    assert frozenset({"ignore", "forget"}) in groups
    assert frozenset({"previous"}) in groups
    assert frozenset({"rule"}) in groups


def test_an_optional_part_or_a_keywordless_branch_requires_nothing() -> None:
    assert required_literals(r"(?:secret)?\d+") == ()
    assert required_literals(r"token|\d{6}") == ()
    assert required_literals(r"x{0,3}password") == (frozenset({"password"}),)


def test_short_literals_and_small_classes_count() -> None:
    assert required_literals(r"密码|口令") == (frozenset({"密码", "口令"}),)
    assert required_literals(r"ab|cd") == (frozenset({"ab", "cd"}),)
    assert required_literals(r"[sş]ifre") == (frozenset({"sifre", "şifre"}),)
    assert frozenset({"@"}) in required_literals(r"\w+@\w+")


def test_runs_of_a_class_are_required() -> None:
    assert ("hex", 16) in required(r"\b(?:[0-9a-fA-F]{2}){8,}\b").runs
    assert ("digit", 6) in required(r"(?<!\d)\d{6}(?:-\d{6}){7}").runs
    assert ("base64", 16) in required(r"[A-Za-z0-9+/]{16,}={0,2}").runs
    # an optional separator breaks the run; a look-ahead between two parts does not
    assert required(r"\d{3}[ -]?\d{4}").runs == ()
    assert ("alnum", 12) in required(r"[a-z]{6}(?=x)[0-9]{6}").runs


def test_a_run_check_follows_the_engine() -> None:
    kw = Keywords(required(r"\d{6}"))
    assert kw.may_match("code ٣٣٣٣٣٣ in Arabic digits")  # \d matches every decimal digit
    assert not kw.may_match("only 12345 here")
    hexrun = Keywords(required(r"(?i)[a-f0-9]{10}"))
    assert re.search(r"(?i)[a-f0-9]{10}", "ABCDEF0123")
    assert hexrun.may_match("ABCDEF0123")
    assert not hexrun.may_match("abcdefg123 ghij")


def test_literals_registered_after_a_profile_are_still_found() -> None:
    assert Keywords(required(r"plain")).may_match("a plain text, zqxwv")
    late = Keywords(required(r"zqxwv"))  # registered after the text's profile was made
    assert late.may_match("a plain text, zqxwv")
    assert not late.may_match("a plain text")


def test_case_folding_matches_the_engine() -> None:
    kw = Keywords(required(r"(?i)ignore\s+this"))
    for text in ("IGNORE THIS", "İgnore this", "ignore thiſ"):
        assert re.search(r"(?i)ignore\s+this", text)
        assert kw.may_match(text), text
    assert not kw.may_match("nothing to see")
    assert fold("ΣΑΣ") == fold("σας")


def test_a_guarded_pattern_answers_like_the_plain_one() -> None:
    rx = LazyPattern(r"\bsend\s+the\s+token\b")
    assert rx.search("please send the token now")
    assert rx.search("nothing here") is None
    assert list(rx.finditer("nothing here")) == []
    assert rx.sub("x", "nothing here") == "nothing here"
    assert rx.subn("x", "nothing here") == ("nothing here", 0)
    assert rx.split("nothing here") == ["nothing here"]
    assert rx.findall("send the token, send the token") == ["send the token"] * 2


def _starts(pattern: str) -> frozenset[str] | None:
    return required(pattern).starts


def test_where_a_match_starts_is_read_out_of_the_pattern() -> None:
    # a look-behind and a word boundary consume nothing; an alternation spells each start
    assert _starts(r"(?<![\w-])(?:ignor\w*|forget\w*)") == {"ignor", "forge"}
    assert _starts(r"\b(?:IGNORE|Forget)\b") == {"ignor", "forge"}
    # an optional part: the start is with it or without it
    assert _starts(r"[\"']?allow") == {'"allo', "'allo", "allow"}
    assert _starts(r"a\s+partir") == {"a "}  # every space is folded to one
    # a repeated part ends what is known of the start
    assert _starts(r"(?:ab)+c") == {"ab"}
    # a start of one common character, or of any character, is no help
    assert _starts(r"x\d+") is None
    assert _starts(r"\w+@example") is None
    assert _starts(r"(?:secret)?\d+") is None


def test_the_folded_spaces_are_every_character_the_engine_calls_a_space() -> None:
    engine = {ch for ch in map(chr, range(0x110000)) if re.match(r"\s", ch)}
    assert set(prefilter._SPACES) == engine
    assert fold("a\u3000b\tc\u2028d") == "a b c d"


def test_a_search_at_the_starts_finds_what_the_engine_finds() -> None:
    rx = LazyPattern(r"(?<![\w-])(?:ignor\w*|forget\w*)\s+(?:all|the)\b")
    plain = re.compile(rx.pattern)
    for text in ("please IGNORE the rules", "re-ignore all, then forget the rest; ignore all",
                 "ignored", "forgetting all the ignore all", "İgnore all", ""):  # fmt: skip
        assert rx.keywords.knows_starts
        assert (rx.search(text) and rx.search(text).span()) == (
            plain.search(text) and plain.search(text).span()
        ), text
        assert [m.span() for m in rx.finditer(text)] == [m.span() for m in plain.finditer(text)]
        assert rx.findall(text) == plain.findall(text)
    assert rx.search("xx ignore the", 3).span() == plain.search("xx ignore the", 3).span()


def test_the_index_names_every_pattern_that_may_match() -> None:
    patterns = [r"\bignore\s+rules\b", r"\d{4}", r"exfiltrat\w+", r"密码"]
    index = KeywordIndex([Keywords(required(p)) for p in patterns])
    text = "Ignore rules and exfiltrate 密码"
    assert index.candidates(text) == {0, 1, 2, 3}
    assert index.candidates("a plain note") == {1}  # a pattern without keywords always runs


def _all_patterns() -> list[LazyPattern]:
    found = {id(o): o for o in gc.get_objects() if isinstance(o, LazyPattern)}
    injection._grammar()  # the grammar's patterns are made on first use
    intent._compiled()
    found.update({id(o): o for o in gc.get_objects() if isinstance(o, LazyPattern)})
    return sorted(found.values(), key=lambda p: p.pattern)


PATTERNS = _all_patterns()


def test_every_screen_pattern_compiles_with_keywords() -> None:
    assert len(PATTERNS) > 300
    with_keywords = [p for p in PATTERNS if p.keywords]
    assert len(with_keywords) > len(PATTERNS) // 2  # the filter applies to most of the screen


@pytest.mark.parametrize("index", range(0, len(PATTERNS), max(1, len(PATTERNS) // 60)))
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_whatever_a_pattern_matches_passes_its_keyword_check(index: int, data) -> None:
    pat = PATTERNS[index]
    compiled, needs = compile_with_keywords(pat.pattern, pat.flags)
    plain = re.compile(pat.pattern, pat.flags)
    if not needs.groups and not needs.runs:
        return
    try:
        strategy = st.from_regex(plain, fullmatch=False)
    except Exception:
        return
    text = data.draw(strategy)
    assert bool(compiled.search(text)) == bool(plain.search(text))
    if plain.search(text):
        assert Keywords(needs).may_match(text), (pat.pattern[:80], text)
    # a pattern searched only where its matches may start finds the same matches
    found = pat.search(text)
    assert (found and found.span()) == (plain.search(text) and plain.search(text).span())
    assert [m.span() for m in pat.finditer(text)] == [m.span() for m in plain.finditer(text)]


def _corpus_forms(step: int) -> list[str]:
    texts: list[str] = []
    for path in sorted(Path(__file__).parents[2].glob("corpora/**/*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines()[::step]:
            row = json.loads(line)
            texts += [row[k] for k in ("text", "body", "title") if isinstance(row.get(k), str)]
    return [form for t in texts for form in (t, skeleton(t))]


def test_searches_at_the_starts_agree_with_the_engine_on_the_corpora() -> None:
    forms = _corpus_forms(step=25)
    assert len(forms) > 500
    started = [p for p in PATTERNS if p.keywords.knows_starts]
    assert len(started) > len(PATTERNS) // 2  # most of the screen is searched this way
    for pat in started:
        plain = re.compile(pat.pattern, pat.flags)
        for text in forms:
            a, b = pat.search(text), plain.search(text)
            assert (a and a.span()) == (b and b.span()), (pat.pattern[:60], text[:80])
            assert [m.span() for m in pat.finditer(text)] == [
                m.span() for m in plain.finditer(text)
            ], (pat.pattern[:60], text[:80])


def test_a_long_alternation_is_searched_in_two_parts_with_the_same_answers() -> None:
    split = [p for p in PATTERNS if len(p.pattern) >= 200 and split_by_starts(p.pattern, p.flags)]
    assert split  # the screen has such patterns (the names of sensitive things, digests)
    parts = split_by_starts(r"(?:\bsecrets?\b|\btokens?\b|\b[a-z]+_keys?\b|\bcreds\b|~/\.ssh)")
    assert parts is not None and len(parts) == 2
    assert parts[0][1].starts and parts[1][1].starts is None
    assert split_by_starts(r"(secret|token|\w+_key)") is None  # a group: parts would renumber it
    forms = [*_corpus_forms(step=10), "my api_keys and the secret", "db_key then token", ""]
    for pat in split:
        plain = re.compile(pat.pattern, pat.flags)
        for text in forms:
            a, b = pat.search(text), plain.search(text)
            assert (a and a.span()) == (b and b.span()), (pat.pattern[:60], text[:80])
