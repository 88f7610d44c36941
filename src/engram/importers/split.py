"""Splitting existing agent instruction files (Markdown) into memory candidates.

Teams already keep rules for agents in host-specific Markdown files. `engram import`
turns each self-contained piece (a bullet group under a heading, a numbered procedure,
a paragraph) into one candidate that then goes through the normal write path. The
splitter works on Markdown structure (headings, lists, fences), never on phrasings, and
records where every candidate came from so that the person can check it against the file.
"""

from __future__ import annotations

import itertools
import re
import textwrap
from collections import Counter
from dataclasses import dataclass, field

MAX_TEXT_CHARS = 1_900  # below engram.core.write.candidates.MAX_TEXT_CHARS, room for the title
MAX_TAGS = 4
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
SETEXT_RE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BULLET = re.compile(r"^( *)[-*+][ \t]+(.*)$")
_NUMBERED = re.compile(r"^( *)\d{1,3}[.)][ \t]+(.*)$")
_RULE_LINE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
# Block-level HTML (`<details>`, `<summary>Title</summary>`, `<br>`): the words stay.
_HTML_TAG = re.compile(
    r"</?(?:details|summary|div|p|br|hr|span|section|kbd|sup|sub|b|i|em|strong)\b[^>]*>", re.I
)
_TERM = re.compile(
    r"^\*\*[^*]{1,60}(?:\*\*\s*[:—–-]|[:：]\*\*\s)"
)  # `**Term**: …`: a glossary entry
_TASK = re.compile(r"^\[[ xX]\]\s+")  # `- [ ] item`: a checklist
# A line led by a symbol (emoji, ✓, →) instead of `-`: an item of a list written without Markdown.
_SYMBOL_ITEM = re.compile(r"^([^\w\s`*_\[(<>#|\-+\\/\"'.,:;!?])\s*\S")
_MANAGED = re.compile(  # `engram link`'s block and the pointer `--replace-with-pointer` writes
    r"^<!-- engram:begin\b.*?^<!-- engram:end -->[ \t]*$"
    r"|^<!-- engram:pointer\b.*?^<!-- engram:pointer-end -->[ \t]*$",
    re.S | re.M,
)
# Words that make a statement an obligation or a prohibition (a closed class, per language).
_DEONTIC = re.compile(
    r"\b(?:must|mustn't|never|always|only|should|shouldn't|shall|do\s+not|don't|does\s+not|"
    r"avoid|prefer|required?|requires|mandatory|forbidden|not\s+allowed|no\s+longer|"
    r"make\s+sure|ensure|need\s+to|needs\s+to|have\s+to|has\s+to|"
    r"muss|müssen|nie|niemals|immer|nicht|keine?n?|verboten|soll|sollen|bitte|"
    r"doit|doivent|jamais|toujours|interdit|obligatoire|pas\s+de|"
    r"debe|deben|nunca|siempre|prohibido|obligatorio|evita|evitar|"
    r"deve|devem|sempre|não|proibido|obrigatório|evite)\b"
    r"|必ず|禁止|しない|ないこと|ください|すること|してはいけない",
    re.IGNORECASE,
)
# The base form of verbs that open instructions ("Use …", "Run …", "Keep …").
_IMPERATIVE = re.compile(
    r"^(?:use|run|keep|write|add|put|name|follow|call|check|test|return|place|import|"
    r"document|include|mark|handle|log|wrap|limit|validate|commit|push|open|update|remove|"
    r"delete|create|mock|raise|style|prefix|read|ask|start|stop|store|pin|tag|bump|set|"
    r"define|declare|treat|let|leave|give|split|group|sort|quote|escape|pass|catch|throw|"
    r"cache|rate-limit|lint|format|type-hint|annotate|review|measure|profile|refer|"
    r"think|explain|answer|reply|respond|describe|list|prefer|favou?r|reuse|extend|"
    r"verwende|nutze|schreibe|utilise[zr]?|utilisez|usa|utiliza|escribe)\b",
    re.IGNORECASE,
)
_FACT = re.compile(  # "We use X", "The API is …", "This service runs …": a description
    r"^(?:we|our\s+\w+|the\s+\w+(?:\s+\w+)?|this\s+\w+|it|[\w.-]+)\s+"
    r"(?:use|uses|are|is|was|run|runs|has|have|live|lives|deploy|deploys|come|comes|"
    r"arrive|arrives|take|takes|build|builds|start|starts|open|opens|hold|holds)\b",
    re.IGNORECASE,
)
_ENTRY_START = re.compile(r"^(?:`[^`]+`|[^\s:]{1,24}(?:\s[^\s:]{1,24}){0,2}\s?:\s)")
_TAG_WORD = re.compile(r"[a-z0-9][a-z0-9+#.-]*")
_GENERIC_HEADINGS = frozenset(
    "agent agents agents.md claude claude.md gemini gemini.md rules guidelines instructions notes "
    "instruction guidance guide rule note "
    "general overview readme misc other project conventions copilot cursor windsurf cline "
    "memory the and for of a an to in".split()
)


@dataclass
class Piece:
    """One candidate cut from a file: what it says, what it is, where it came from."""

    type: str
    title: str
    text: str
    source: str  # the file, workspace-relative
    start: int  # first line (1-based) in the source file
    end: int  # last line
    tags: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    titled_by_text: bool = False  # the title is the text's first clause (made again once redacted)
    # the headings over the passage, which its tags are cut from (so a tag cut from a secret
    # in a heading is known for one and dropped, see `importers.propose`)
    headings: str = ""
    markdown: str = ""  # the passage as written (code spans and fences byte for byte), or ""

    @property
    def imported_from(self) -> str:
        return f"{self.source}:{self.start}" + (f"-{self.end}" if self.end != self.start else "")


def strip_managed(text: str) -> str:
    """Blank out Engram's own managed blocks (kept as empty lines so line numbers hold)."""
    return _MANAGED.sub(lambda m: "\n" * m.group().count("\n"), text)


def _html_as_text(lines: list[str]) -> list[str]:
    """Block-level HTML tags dropped from the lines outside fenced code."""
    out, fence = [], None
    for ln in lines:
        m = FENCE_RE.match(ln)
        if fence is None and m:
            fence = m.group(1)
        elif fence is not None and ln.strip().startswith(fence):
            fence = None
        elif fence is None and _HTML_TAG.search(ln):
            ln = without_block_tags(ln)
        out.append(ln)
    return out


def without_block_tags(line: str) -> str:
    """The line without block-level HTML tags, code spans (`<summary>` in code) untouched."""
    parts = re.split(r"(`[^`]*`)", line)
    return "".join(p if p.startswith("`") else _HTML_TAG.sub("", p) for p in parts)


def _clean(line: str) -> str:
    """Inline Markdown made plain: emphasis markers and link targets go, words stay."""
    line = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", line)
    line = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", line)
    line = re.sub(r"(\*\*|__)(.+?)\1", r"\2", line)
    return " ".join(line.split())


def _sentence(text: str) -> str:
    text = text.strip()
    if text and not text.endswith((".", "!", "?", ":", ";")):
        text += "."
    return text


def heading_tags(headings: list[str], text: str = "") -> list[str]:
    """Tags from the heading path (its distinctive words, most specific heading first), then
    the things the text names (`structlog`, FastAPI, Redis). A heading that addresses the
    agent ("Guidance for Claude Code") names the file, not a topic."""
    out: list[str] = []
    for h in reversed(headings):
        if _ADDRESS.search(h):
            continue
        for w in _TAG_WORD.findall(h.lower()):
            w = w.strip(".-")
            if len(w) >= 3 and w not in _GENERIC_HEADINGS and w not in out:
                out.append(w)
    for w in named_things(text):
        if len(out) >= MAX_TAGS:
            break
        if w not in out:
            out.append(w)
    return out[:MAX_TAGS]


_CODE_NAME = re.compile(r"`([A-Za-z][\w.+-]{1,30})`")  # `structlog`, `mypy`: one tool's name
_PROPER = re.compile(r"(?<![\w./`-])([A-Z][a-z0-9]*[A-Z][\w]*|[A-Z][a-z]{2,}[\w]*)(?![\w/`-])")


def named_things(text: str) -> list[str]:
    """The tools and products a statement names: a one-word code span, or a capitalised name
    that does not open a sentence (`FastAPI`, `Redis`, `TanStack`); lowercased."""
    out: list[str] = []
    for m in _CODE_NAME.finditer(text):
        name = m.group(1).lower().strip(".-")
        if "." not in name and len(name) >= 3 and name not in out:
            out.append(name)
    plain = re.sub(r"`[^`]*`", " ", text)
    for m in _PROPER.finditer(plain):
        before = plain[: m.start()].rstrip()
        if not before or before.endswith((".", "!", "?", ":", ";", "(", "—")):
            continue  # the first word of a sentence is capitalised anyway
        name = m.group(1).lower()
        if name not in out and name not in _GENERIC_HEADINGS:
            out.append(name)
    return out


# Where a statement's first clause ends (a comma does not: "If a test fails, fix it").
_CLAUSE_END = re.compile(r"[;:—–]\s|,\s(?:and|but|then|so)\s|\s\(|(?<=[.!?])\s|(?<=[。！？；：])")


def statement_title(text: str, limit: int = 9) -> str:
    """A title that says what a one-statement memory says: its first clause, Markdown made
    plain, at most `limit` words ("Never force-push to main")."""
    plain = _clean(re.sub(r"`([^`]*)`", r"\1", text)).strip()
    plain = re.sub(r"^[^\w`\"'(\[]+", "", plain)  # `✅ Use …`: the symbol that marks the item
    m = _CLAUSE_END.search(plain)
    clause = plain[: m.start()] if m and m.start() >= 6 else plain
    words = clause.rstrip(" .!?。:;,").split()
    title = " ".join(words[:limit]) + ("…" if len(words) > limit else "")
    return title[:1].upper() + title[1:]


def item_kind(item: str, kind: str = "bullets") -> str:
    """One statement: an obligation (`rule`) or a description (`knowledge`).

    Words of obligation or prohibition, or a verb in the imperative, make a rule; a command
    with what it does, a `Key: value` entry, a short name or a plain "we use …" statement
    is knowledge. Otherwise a list item is a rule (instruction files list conventions) and
    a paragraph is knowledge (it explains).
    """
    if _DEONTIC.search(item) or _IMPERATIVE.match(item):
        return "rule"
    if kind in ("bullets", "numbered") and standalone(item):  # "Squash commits before merging."
        return "rule"
    if _ENTRY_START.match(item) or len(item.split()) <= 4 or _FACT.match(item):
        return "knowledge"
    return "knowledge" if kind in ("paragraph", "code") else "rule"


def classify(kind: str, items: list[str], lead: str = "") -> str:
    """A numbered list is a procedure (skill), unless most of its items are obligations
    (numbered rules) and no sentence introduces it as steps; other blocks take the kind most of their
    statements have (rule on a tie)."""
    if kind in ("paragraph", "code"):  # a paragraph's lines are wrapped text: its sentences
        items = re.split(r"(?<=[.!?。])\s+", " ".join(items))
    items = [i for i in items if i.strip()]
    if kind == "numbered" and len(items) >= 2:
        obligations = sum(1 for i in items if _DEONTIC.search(i))
        if lead or obligations * 2 < len(items):
            return "skill"
    kinds = [item_kind(i, kind) for i in items]
    rules = kinds.count("rule")
    return "rule" if rules and rules * 2 >= len(kinds) else "knowledge"


@dataclass
class _Block:
    kind: str  # bullets | numbered | paragraph | code
    start: int
    end: int
    items: list[str] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)  # the items as written (links kept)
    lead: str = ""  # the sentence that introduces a list ("To release:")
    code: list[str] = field(default_factory=list)  # fenced code that belongs to it
    title: str = ""  # a line that acts as a heading in a file without Markdown headings
    spans: list[list[int]] = field(default_factory=list)  # each item's first and last line
    checklist: bool = False  # `- [ ]` items: they only make sense together
    table: bool = False  # rows of a Markdown table
    instruction: bool = False  # an item of a list of instructions, shaped like one


_LINK_ONLY = re.compile(
    r"^(?:\[[^\]]+\]\([^)]*\)|<?https?://\S+>?|`[^`\s]+`|[\w./-]+\.(?:md|mdc|txt))[\s.:;,]*$"
)
_PLACEHOLDER = re.compile(
    r"^(?:[_*]+[^_*]+[_*]+\.?|\([^()]+\)\.?|(?:TODO|TBD|FIXME|WIP)\b.*)$", re.IGNORECASE
)
# Another instruction file or folder named in a sentence: a pointer to text imported on its own.
_INSTRUCTION_REF = re.compile(
    r"(?:AGENTS|CLAUDE|GEMINI)(?:\.local|\.override)?\.md\b|\.claude/rules|\.cursor/rules|"
    r"\.cursorrules|\.windsurf/rules|\.windsurfrules|copilot-instructions\.md|"
    r"\.github/instructions|\.clinerules",
    re.IGNORECASE,
)
# In a file's preamble, sentences about the file or to the agent reading it ("This file
# guides Claude Code", "You are an expert …") introduce the file; they are not memories.
_ADDRESS = re.compile(
    r"(?<![\w./-])(?:claude(?:\s+code)?|gemini(?:\s+cli)?|copilot|cursor|windsurf|cascade|cline|codex|"
    r"(?:ai|coding)\s+(?:agents?|assistants?))\b|^you\s+are\b|"
    r"\b(?:this|ce|cette|diese[rs]?|este|esta)\s+"
    r"(?:file|document|fichier|datei|archivo|arquivo|ficheiro|documento)\b|"
    r"このファイル|このドキュメント",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?。])\s+")
_END_PUNCT = (".", "!", "?", ";", "。", "！", "？")


def _titleish(line: str) -> bool:
    """A short line without sentence punctuation: a heading in a file that has no `#`."""
    words = line.rstrip(":").split()
    return (
        0 < len(words) <= (8 if line.isupper() else 5)
        and not line.endswith(_END_PUNCT)
        and not _BULLET.match(line)
        and not _NUMBERED.match(line)
        and not line.startswith(("`", "|", "@", ">"))
    )


def _blocks(lines: list[str], first: int) -> list[_Block]:
    """Lists, paragraphs and code of one section, with the structure that ties them.

    A sentence ending in `:` right before a list introduces it, a fenced block belongs to
    the list item or paragraph just before it, a short line without punctuation right
    before a list or paragraph is a heading, and navigation (a list of nothing but links or
    file names) and placeholders (`_Coming soon._`, `TODO`) are not memories.
    """
    out: list[_Block] = []
    cur: _Block | None = None
    fence: str | None = None
    code: _Block | None = None
    blank = True  # the line before was blank (an indented line after it is code)
    in_item = False
    for n, raw_line in enumerate(lines, start=first):
        line = raw_line.rstrip()
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            elif line.strip() and code is not None:
                if in_item and code.items:
                    code.items[-1] += f" `{line.strip()}`"  # the code of the item it follows
                else:
                    code.code.append(line.strip())
            if code is not None:
                code.end = n
                if code.spans:
                    code.spans[-1][1] = n
            continue
        m = FENCE_RE.match(line.lstrip() if raw_line[:1] in " \t" else line)
        if m:
            fence = m.group(1)
            code = cur if cur is not None or not out else out[-1]
            # inside a list item (indented, or right under it) it is that item's code
            in_item = (
                code is not None
                and code.kind in ("bullets", "numbered")
                and (raw_line[:1] in " \t" or not blank)
            )
            if code is None or (code.kind == "code" and code.end < n - 1):
                code = _Block("code", n, n)
                out.append(code)
            code.end = n
            cur = None if code.kind == "code" else cur
            continue
        if not line.strip() or _RULE_LINE.match(line):
            if cur is not None and cur.kind in ("paragraph", "code"):
                cur = None
            blank = True
            continue
        listing = cur is not None and cur.kind in ("bullets", "numbered")
        in_code = bool(out) and out[-1].code and out[-1].end == n - 1 and cur is None
        if (blank or in_code) and not listing and raw_line.startswith(("    ", "\t")):
            # an indented code block belongs to the block just before it
            target = out[-1] if out else None
            if target is None:
                target = _Block("code", n, n)
                out.append(target)
            target.code.append(line.strip())
            target.end = n
            cur = None
            continue
        continues = not blank and cur is not None and cur.kind == "paragraph" and not cur.table
        blank = False
        b, num = _BULLET.match(line), _NUMBERED.match(line)
        if (
            not (b or num)
            and not continues  # a wrapped line of a paragraph, even one that opens in bold
            and raw_line[:1] not in " \t"
            and (_SYMBOL_ITEM.match(line) or _TERM.match(line))
        ):
            b = re.match(r"^()(.*)$", line)  # `✅ Do this`: an item of a list without `-`
        item = b or num
        if item and not item.group(1):
            kind = "bullets" if b else "numbered"
            if cur is None or cur.kind != kind:
                prev = out[-1] if out else None
                cur = _Block(kind, n, n)
                if prev is not None and prev.kind == "paragraph" and not prev.code:
                    if prev.end >= n - 2 and prev.items and prev.items[-1].endswith(":"):
                        out.pop()  # the sentence that introduces this list
                        cur = _Block(kind, prev.start, n, lead=" ".join(prev.items))
                        cur.title = prev.title
                    elif prev.end >= n - 2 and len(prev.items) == 1 and _titleish(prev.items[0]):
                        out.pop()
                        cur.title = prev.items[0].rstrip(":")
                        cur.start = prev.start  # its heading: replaced with the list
                out.append(cur)
            content = item.group(2)
            if _TASK.match(content):
                content = _TASK.sub("", content)
                cur.checklist = True
            cur.items.append(_clean(content))
            cur.raw.append(content.strip())
            cur.spans.append([n, n])
            cur.end = n
            continue
        if cur is not None and cur.kind in ("bullets", "numbered") and (raw_line[:1] in " \t"):
            sub = item.group(2) if item else line  # a nested item or a continuation line
            cur.items[-1] = f"{cur.items[-1]} {_clean(sub)}".strip()
            cur.raw[-1] = f"{cur.raw[-1]} {sub.strip()}"
            cur.spans[-1][1] = n
            cur.end = n
            continue
        if cur is None or cur.kind != "paragraph":
            cur = _Block("paragraph", n, n)
            out.append(cur)
        if line.lstrip().startswith("|") and re.fullmatch(r"[\s|:-]+", line):
            cur.end = n  # a table's delimiter row
            continue
        text = line.strip()
        row = text.startswith("|")
        if row:
            text = " | ".join(c.strip() for c in text.strip("|").split("|"))
            cur.table = True
        alone = len(cur.items) == 1 and not cur.title and not cur.code
        if alone and not cur.table and _titleish(cur.items[0]):
            cur.title = cur.items.pop().rstrip(":")  # `Dependencies` over its paragraph
            cur.raw.pop()
            cur.spans.pop()
        cur.items.append(_clean(text))
        cur.raw.append(text)
        cur.spans.append([n, n])
        cur.end = n
    return [b for b in out if _worth_keeping(b)]


def _worth_keeping(block: _Block) -> bool:
    """Navigation lists, placeholders and empty blocks are not memories."""
    items = [i for i in block.items if i.strip()]
    if not items and not block.code:
        return False
    if block.kind in ("bullets", "numbered") and all(_LINK_ONLY.match(r) for r in block.raw):
        return False
    if (
        block.kind == "paragraph"
        and not block.code
        and all(_PLACEHOLDER.match(r.strip()) or _LINK_ONLY.match(r.strip()) for r in block.raw)
    ):
        return False
    return not (
        len(items) == 1 and not block.code and _titleish(items[0]) and block.kind == "paragraph"
    )


def _pointer(sentence: str) -> bool:
    """A sentence that mostly names another instruction file ("Rules live in `.claude/rules/`")."""
    if not _INSTRUCTION_REF.search(sentence):
        return False
    rest = [w for w in sentence.split() if not _INSTRUCTION_REF.search(w)]
    return len(rest) <= 8


def _without_introduction(blocks: list[_Block]) -> list[_Block]:
    """The preamble's paragraphs without the sentences that introduce the file or point to
    other instruction files; a paragraph left empty goes."""
    out = []
    for b in blocks:
        if b.kind != "paragraph" or b.code:
            out.append(b)
            continue
        sentences = _SENTENCE_END.split(" ".join(b.items))
        kept = [x for x in sentences if not (_ADDRESS.search(x) or _pointer(x))]
        if kept:
            b.items = [" ".join(kept)] if len(kept) < len(sentences) else b.items
            out.append(b)
    return out


def _with_examples(blocks: list[_Block]) -> list[_Block]:
    """An example (a few words such as `Do:` or `Example:` over a code block) belongs to
    the statement it illustrates: the next one in the section, else the one before."""
    out: list[_Block] = []
    pending: list[_Block] = []
    for b in blocks:
        if out and not pending and _markup_block(b):
            # `<Frame>…</Frame>` under "Wrap all images in frames.": the example it shows
            out[-1].code += [r for r in b.raw if r.strip()]
            out[-1].end = b.end
            continue
        example = b.code and len(" ".join(b.items).split()) <= 3 and b.kind == "paragraph"
        if example:
            pending.append(b)
            continue
        if pending:
            b.lead = " ".join(x for x in (*(_text_of(p) for p in pending), b.lead) if x)
            b.start = min(b.start, pending[0].start)
            pending = []
        out.append(b)
    if pending and out:
        last = out[-1]
        last.code += [f"{' '.join(p.items)} {' '.join(p.code)}".strip() for p in pending]
        last.end = max(last.end, pending[-1].end)
    elif pending:
        out += pending
    return out


_MARKUP_LINE = re.compile(r"^</?[A-Za-z][\w.-]*(?:\s|/?>|$)")


def _markup_block(block: _Block) -> bool:
    """A paragraph of HTML or JSX components (`<Tip>`, `<ParamField …>`): an example."""
    return block.kind == "paragraph" and bool(block.raw) and bool(_MARKUP_LINE.match(block.raw[0]))


def _code_text(block: _Block) -> str:
    return " ".join(f"`{c}`" for c in block.code[:40])


def _text_of(block: _Block) -> str:
    if block.table:  # one row after the other
        body = _sentence("; ".join(i for i in block.items if i))
    elif block.kind == "paragraph" or block.kind == "code":
        body = _sentence(" ".join(i for i in block.items if i)) if block.items else ""
    elif block.kind == "numbered":  # each step its own sentence: the skill lists them
        body = " ".join(_sentence(i[:1].upper() + i[1:]) for i in block.items if i)
    else:
        body = " ".join(_sentence(i) for i in block.items if i)
    parts = [block.lead, body, _code_text(block) if block.code else ""]
    return " ".join(p for p in parts if p)


_ENTRY = re.compile(r"^(?:`[^`]+`|[^\s:]{1,24}(?:\s[^\s:]{1,24}){0,2}:\s)")


def _entries(block: _Block) -> bool:
    """A list of entries (commands with what they do, `Key: value` lines, short names) is
    one reference table, not separate statements."""
    anchored = instruction_list(block.raw)

    def terse(raw: str) -> bool:
        m = _ENTRY.match(raw)
        if m and raw.startswith("`"):
            return True  # a command and what it does
        if m:  # `Key: value`: an entry while the value is short (a glossary defines at length)
            return len(raw[m.end() :].split()) <= 8
        if standalone(raw, anchored=anchored):
            return False
        return len(raw.split()) <= 4

    return sum(1 for r in block.raw if terse(r)) * 2 >= len(block.raw)


_PLAIN_WORD = re.compile(
    r"^[^\W\d_][^\W\d_'’-]*(?:-[^\W\d_]+)*$"
)  # a word: no digits, no caps inside


def _opens_instruction(text: str) -> bool:
    """Opens with a word of obligation or a verb known to open instructions, and goes on."""
    n = len(text.split())
    ended = text.rstrip().endswith((".", "!", "。", "！"))
    # "Use tabs." and "Be concise." are whole instructions: two words, a verb and an end
    return bool(_DEONTIC.match(text) or _IMPERATIVE.match(text)) and (n >= 3 or (n == 2 and ended))


def _sentence_shape(text: str) -> bool:
    """A plain word (`Squash`, not `FastAPI`, `Node`-and-a-version) and then a lowercase
    word or a code span: how an instruction reads, not how a name or a version does."""
    words = text.rstrip(".!。！").split()
    if len(words) < 3 or _ENTRY.match(text) or _FACT.match(text):
        return False
    head, second = words[0], words[1]
    plain = _PLAIN_WORD.match(head) and (head[1:].islower() or len(head) == 1)
    following = second.startswith("`") or bool(_PLAIN_WORD.match(second) and second.islower())
    return bool(plain and following)


def instruction_list(raws: list[str]) -> bool:
    """A list where an item opens with an instruction: its items shaped like sentences are
    instructions too, full stop or not ("Never force-push to main" over "Squash commits
    before merging")."""
    return any(_opens_instruction(_clean(r)) for r in raws)


def standalone(raw: str, *, anchored: bool = False) -> bool:
    """A complete instruction that states a constraint on its own, however short: it opens
    with an instruction (a word of obligation, a verb) and has an object after it
    ("Squash commits before merging.", "Never force-push to main.").

    A sentence shape is enough when it ends with a full stop, or when another item of its
    list (`anchored`) opens with an instruction. A name, a version or a product (`Node 20
    LTS`, `FastAPI`, `Redis for the queue`) carries digits, capitals inside or no verb
    before it, so a stack list stays one memory.
    """
    text = _clean(raw).strip()
    if _ENTRY.match(text) or len(text.split()) < 2:
        return False
    if _opens_instruction(text):
        return True
    if len(text.split()) < 3:
        return False
    ended = text.endswith((".", "!", "。", "！"))
    return (ended or anchored) and _sentence_shape(text)


def _chunks(block: _Block) -> list[_Block]:
    """One memory per bullet (each states its own rule or fact), unless a lead-in sentence
    ties the list together; a block too long for one memory is cut between items (a
    procedure is never cut)."""
    together = block.lead or block.checklist or _entries(block)
    separate = block.kind == "bullets" and not together
    if block.kind == "numbered":  # numbered rules, each its own
        separate = classify("numbered", block.items) == "rule"
    if separate and len(block.items) > 1:
        anchored = block.kind == "bullets" and instruction_list(block.raw)
        out = [
            _Block(
                "bullets",
                a,
                b,
                [item],
                [raw],
                title=block.title,
                spans=[[a, b]],
                instruction=standalone(raw, anchored=anchored),
            )
            for item, raw, (a, b) in zip(block.items, block.raw, block.spans, strict=True)
        ]
        out[-1].code, out[-1].end = block.code, block.end  # the list's own code: its last item
        out[0].start = block.start  # a line that heads the list goes with its first item
        return out
    if block.kind == "paragraph" and not block.table and len(_text_of(block)) > MAX_TEXT_CHARS:
        return _statements(block)  # a paragraph is one memory, unless too long for one
    if len(_text_of(block)) <= MAX_TEXT_CHARS or block.kind in ("paragraph", "code"):
        return [block]
    out: list[_Block] = []
    cur = _Block(block.kind, block.start, block.end, lead=block.lead, title=block.title)
    for item in block.items:
        trial = _Block(block.kind, cur.start, cur.end, [*cur.items, item], lead=cur.lead)
        if cur.items and len(_text_of(trial)) > MAX_TEXT_CHARS:
            out.append(cur)
            cur = _Block(block.kind, block.start, block.end, title=block.title)
        cur.items.append(item)
    cur.code = block.code
    out.append(cur)
    return out


_ABBREVIATION = re.compile(
    r"(?:\b(?:e\.g|i\.e|etc|vs|cf|approx|incl|no|nr|z\.B|d\.h|p\.ex|ej)|\.\.)\.$", re.I
)
# A sentence that leans on the one before it ("It …", "This means …", "Otherwise …").
_CONTINUES = re.compile(
    r"^(?:it|its|they|them|their|this|that|these|those|such|so|then|otherwise|also|but|"
    r"however|instead|there|here|if\s+(?:so|not)|in\s+that\s+case|for\s+example|e\.g\.|"
    r"es|sie|dies|das|sonst|il|elle|ils|cela|ce|sinon|esto|eso|si\s+no|de\s+lo\s+contrario)\b"
    r"|^(?:それ|その|この|ただし|また|なお)",
    re.IGNORECASE,
)


def sentences(text: str) -> list[str]:
    """Sentences of a paragraph; a full stop inside a code span, a number or an abbreviation
    does not end one."""
    masked = re.sub(r"`[^`]*`", lambda m: "x" * len(m.group()), text)
    out, start = [], 0
    for m in re.finditer(r"(?<=[.!?])\s+(?=[^\s])|(?<=[。！？])\s*(?=[^\s])", masked):
        piece = masked[start : m.start()]
        if _ABBREVIATION.search(piece) or (
            re.search(r"\d\.$", piece) and masked[m.end()].isdigit()
        ):
            continue
        out.append(text[start : m.start()].strip())
        start = m.end()
    out.append(text[start:].strip())
    return [x for x in out if x]


def _statements(block: _Block) -> list[_Block]:
    """A paragraph as its self-contained statements: one per sentence, a sentence that
    leans on the one before it (`It …`, `Otherwise …`) kept with it."""
    joined, bounds, at = "", [], 0
    for item, (a, b) in zip(block.items, block.spans, strict=False):
        bounds.append((at, a, b))
        joined += item + " "
        at = len(joined)
    parts = sentences(joined.strip())
    if len(parts) <= 2:  # a statement and its elaboration
        return [block]
    groups: list[list[str]] = []
    kinds: list[str] = []
    for sentence in parts:
        kind = item_kind(sentence, "paragraph")
        if groups and (_CONTINUES.match(sentence) or kind == kinds[-1]):
            groups[-1].append(sentence)
        else:
            groups.append([sentence])
            kinds.append(kind)
    out: list[_Block] = []
    pos = 0
    for group in groups:
        text = " ".join(group)
        first = joined.find(group[0], pos)
        last = joined.find(group[-1], max(first, 0)) + len(group[-1])
        pos = max(pos, last)
        lines = [(a, b) for off, a, b in bounds if off <= max(last - 1, 0)]
        start = max((a for off, a, b in bounds if off <= max(first, 0)), default=block.start)
        end = lines[-1][1] if lines else block.end
        out.append(_Block("paragraph", start, end, [text], [text], title=block.title))
    out[-1].code = block.code
    out[-1].end = block.end
    out[0].lead = block.lead
    return out


def split_markdown(
    text: str,
    source: str,
    *,
    first_line: int = 1,
    paths: list[str] | None = None,
    extra_tags: list[str] | None = None,
    default_title: str = "",
) -> list[Piece]:
    """Cut Markdown into pieces: one per list or paragraph under a heading.

    `first_line` is the line of `text`'s first line in the source file (after front
    matter). Engram's managed blocks and HTML comments are left out.
    """
    text = strip_managed(text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _HTML_COMMENT.sub(lambda m: "\n" * m.group().count("\n"), text)
    lines = _html_as_text(text.split("\n"))
    # (heading path, first line, lines, whether it is the preamble: before any heading but
    # the file's one title)
    sections: list[tuple[list[str], int, list[str], bool]] = []
    intro = True
    titles = 0
    stack: list[tuple[int, str]] = []
    body: list[str] = []
    body_at = first_line
    fence: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        n = first_line + i
        if fence is None and FENCE_RE.match(line):
            fence = FENCE_RE.match(line).group(1)  # type: ignore[union-attr]
        elif fence is not None and line.strip().startswith(fence):
            fence = None
        elif fence is None:
            m = _HEADING.match(line)
            setext = (  # `Title` over `===` (level 1) or `---` (level 2), after a blank line
                i + 1 < len(lines)
                and line.strip()
                and not _BULLET.match(line)
                and not _NUMBERED.match(line)
                and not line.startswith(("    ", "\t", "|"))
                and SETEXT_RE.match(lines[i + 1])
                and (not body or not body[-1].strip())
            )
            if m or setext:
                sections.append(([h for _, h in stack], body_at, body, intro))
                if m:
                    level, title = len(m.group(1)), m.group(2)
                else:
                    level, title = (1 if lines[i + 1].strip()[:1] == "=" else 2), line.strip()
                titles += level == 1
                intro = intro and level == 1 and titles == 1
                stack = [(lv, h) for lv, h in stack if lv < level] + [(level, _clean(title))]
                skip = 1 if m else 2
                body, body_at = [], n + skip
                i += skip
                continue
        body.append(line)
        i += 1
    sections.append(([h for _, h in stack], body_at, body, intro))

    out: list[Piece] = []
    leads: dict[int, str] = {}  # piece index → the line that introduces its list
    for headings, at, sec, intro in sections:
        blocks = _blocks(sec, at)
        if intro:
            blocks = _without_introduction(blocks)
        for block in _with_examples(blocks):
            chunks = _chunks(block)
            spans = [(c.start, c.end) for c in chunks]
            apart = all(a[1] < b[0] for a, b in itertools.pairwise(spans))
            for chunk in chunks:
                # a passage cut from lines it shares with another has no text of its own
                markdown = (
                    _as_written(lines, chunk.start - first_line, chunk.end - first_line)
                    if apart
                    else ""
                )
                body_text = _text_of(chunk)
                short_rule = chunk.instruction or _opens_instruction(body_text)
                if len(body_text) < (6 if short_rule else 12):
                    continue  # a fragment; a whole instruction ("Use tabs.") is kept
                kind = "knowledge" if chunk.table else classify(chunk.kind, chunk.items, chunk.lead)
                if chunk.instruction:  # "Squash commits before merging" among rules: a rule
                    kind = "rule"
                heading = chunk.title or (headings[-1] if headings else default_title)
                statements = [i for i in chunk.items if i.strip()]
                one = kind != "skill" and len(statements) == 1 and not (chunk.lead or chunk.code)
                # one statement: a title of its own (several share their heading); a list that
                # belongs together, a table and a procedure: the heading over them
                title = statement_title(statements[0]) if one else heading
                if len(body_text) > MAX_TEXT_CHARS:
                    body_text = body_text[: MAX_TEXT_CHARS - 1].rstrip() + "…"
                over = [*headings, chunk.title] if chunk.title else headings
                tags = heading_tags(over, body_text)
                for t in extra_tags or []:
                    if t not in tags and len(tags) < MAX_TAGS:
                        tags.append(t)
                leads[len(out)] = chunk.lead
                out.append(
                    Piece(
                        type=kind,  # a table describes: knowledge
                        title=title or statement_title(body_text),
                        text=body_text,
                        source=source,
                        start=chunk.start,
                        end=chunk.end,
                        tags=tags,
                        paths=list(paths or []),
                        titled_by_text=one or not title,
                        markdown=markdown,
                        headings="\n".join(over),
                    )
                )
    return _own_titles(out, leads)


def _own_titles(pieces: list[Piece], leads: dict[int, str]) -> list[Piece]:
    """Pieces that would share their heading as title get one of their own: the line that
    introduces their list, else their first clause (ids follow titles: no `-2`, `-3`)."""
    shared = Counter(p.title.casefold() for p in pieces)
    for i, p in enumerate(pieces):
        if shared[p.title.casefold()] < 2 or p.titled_by_text:
            continue
        lead = _clean(leads.get(i, "")).rstrip(":").strip()
        if lead and len(lead.split()) <= 8:
            p.title = lead
        else:
            p.title, p.titled_by_text = statement_title(p.text), True
    return pieces


MAX_WRITTEN_CHARS = 4_000


def _as_written(lines: list[str], first: int, last: int) -> str:
    """Lines `first`..`last` (0-based) as the file has them, common indent removed: what
    the memory keeps, so code spans, fences, links and wrapped lines stay as written."""
    kept = [ln.rstrip() for ln in lines[max(first, 0) : last + 1]]
    while kept and not kept[0].strip():
        kept.pop(0)
    while kept and not kept[-1].strip():
        kept.pop()
    text = textwrap.dedent("\n".join(kept))
    if not text or len(text) > MAX_WRITTEN_CHARS or _HEADING.match(text.split("\n", 1)[0]):
        return ""
    return text
