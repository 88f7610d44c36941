"""Refusal of text aimed at the agent that will read memory later.

Memory is loaded into an agent's context and trusted, so a line that addresses that
agent ("ignore previous instructions", "you are now …", "send the keys to …") or hides
text from the human who approves it is refused, not cleaned: the human sees why and
rephrases. Matching runs on normalised forms (see `normalise`), so disguises (entities,
look-alike letters, invisible characters, spaced letters, accents) do not matter.

The phrasing checks are a small grammar of intent per language rather than a list of
sentences: an *override* is a verb of setting aside followed by a target that names the
reader's earlier instructions; a *role switch* tells the reader who it now is; a
*bypass* removes the human from a decision; an *exfiltration* moves secrets somewhere.
Ordinary rules use the same verbs ("ignore generated files", "override the timeout")
but never with those targets, which is what keeps them passing.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from urllib.parse import parse_qsl, unquote, urlsplit

from engram.core.safety.intent import (
    NEGATED_AFTER,
    aimed_at_reader,
    blank_mentions,
    find_intent,
    names_the_agent_as_subject,
)
from engram.core.safety.normalise import (
    CODE_SPAN,
    folded,
    is_invisible,
    lazy_compile,
    skeleton,
    tag_text,
    visible_form,
)
from engram.core.safety.prefilter import KeywordIndex
from engram.core.safety.task_rules import FAMILIES as TASK_FAMILIES

OVERRIDE = "override of earlier instructions"
ROLE = "role play aimed at the reader"
SYSTEM = "system-prompt talk"
EXFIL = "exfiltration request"
BYPASS = "instruction to hide from or bypass the human"
MARKUP = "hidden markup"
DATA_URL = "markup that sends data out through a URL"
_INTENT_KINDS = {
    "override": OVERRIDE,
    "disable_safety": "instruction to switch off a safety control",
    "exfiltration": EXFIL,
    "concealment": "instruction to hide from or bypass the human",
    "grant": "grant of powers nobody gave the reader",
    "fake_system": "text posing as a system or administrator message",
    "hidden_instruction": "hidden text addressed to the agent",
    "remote_exec": "download-and-run of code from outside the project",
    "prompt_leak": SYSTEM,
    "role_switch": ROLE,
}


class Refusal:
    """Why a text is refused (`kind`) and the part that shows it (`excerpt`); immutable."""

    __slots__ = ("excerpt", "kind")

    def __init__(self, kind: str, excerpt: str) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "excerpt", excerpt)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("a Refusal is immutable")

    def __repr__(self) -> str:
        return f"Refusal(kind={self.kind!r}, excerpt={self.excerpt!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Refusal) and (self.kind, self.excerpt) == (
            other.kind,
            other.excerpt,
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.excerpt))


# ---------------------------------------------------------------- hidden characters

_EMOJI_JOINABLE = ("So", "Sk", "Mn", "Lo", "Lm", "Mc")


def _hidden_char(text: str) -> tuple[int, str] | None:
    """(index, char) of the first character that is drawn as nothing, if any.

    Joiners and variation selectors are allowed where scripts and emoji need them:
    a zero-width (non-)joiner between two non-Latin letters or symbols, a variation
    selector right after a symbol or digit.
    """
    if text.isascii():  # the only invisible ASCII characters are controls
        m = re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", text)
        return (m.start(), m.group()) if m else None
    for i, ch in enumerate(text):
        o = ord(ch)
        if 0xFE00 <= o <= 0xFE0F or 0xE0100 <= o <= 0xE01EF:
            prev = text[i - 1] if i else ""
            if prev and (unicodedata.category(prev) in ("So", "Sk", "Nd") or prev in "#*"):
                continue
            return i, ch
        if o == 0x034F:
            return i, ch
        if not is_invisible(ch):
            continue
        if o in (0x200C, 0x200D) and 0 < i < len(text) - 1:
            before, after = text[i - 1], text[i + 1]
            if (
                ord(before) > 0x24F
                and ord(after) > 0x24F
                and unicodedata.category(before) in _EMOJI_JOINABLE
                and unicodedata.category(after) in _EMOJI_JOINABLE
            ):
                continue
        return i, ch
    return None


# ---------------------------------------------------------------- markup

_MARKUP: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "active HTML element",
        lazy_compile(
            r"<\s*/?\s*(?:script|iframe|object|embed|style|meta|link|svg|math|form|input|"
            r"base|frameset|applet)\b",  # a lone <frame> renders nothing (docs' `<Frame>`)
            re.I,
        ),
    ),
    (
        "script in markup",
        lazy_compile(r"<[^<>]*\son[a-z]+\s*=|\b(?:java|vb)script\s*:|data\s*:\s*text/html", re.I),
    ),
)
# Elements whose text a reader of the rendered Markdown never sees.
_HIDDEN_ELEMENT = lazy_compile(
    r"<\s*(?P<tag>[a-z][\w-]*)\b(?P<attrs>[^<>]*)>(?P<body>.*?)(?:<\s*/\s*(?P=tag)\s*>|$)",
    re.I | re.S,
)
_HIDING_ATTRS = lazy_compile(
    r"\shidden\b|\scolor\s*=\s*[\"']?(?:#fff\b|#ffffff\b|white\b|transparent\b)|\ssize\s*=\s*[\"']?[01]\b|aria-hidden\s*=\s*[\"']?true|style\s*=\s*[\"'][^\"']*(?:display\s*:\s*none|"
    r"visibility\s*:\s*hidden|font-size\s*:\s*0(?![.\d]*[1-9])|opacity\s*:\s*0(?![.\d]*[1-9])|"
    r"(?:max-)?(?:height|width)\s*:\s*0(?:px)?\s*(?:;|[\"'])|color\s*:\s*(?:transparent|white|#fff\b|#ffffff\b)|"
    r"(?:left|top|text-indent)\s*:\s*-\d{3,})",
    re.I,
)
_HIDING_TAGS = frozenset({"template", "noscript"})
# A Markdown link or image target: anything up to the closing parenthesis (placeholders
# such as `<full diff here>` may hold spaces), without an optional "title".
_MD_TARGET = lazy_compile(r"(!?)\[[^\]\n]*\]\(\s*([^)\s]+(?:\s+[^)\s\"']+)*)")
_HTML_TARGET = lazy_compile(
    r"<\s*(img|a|image|source|video|audio)\b[^<>]*?\b(?:src|href|srcset|poster)\s*=\s*[\"']?([^\"'\s>]+)",
    re.I,
)
_PLACEHOLDER = lazy_compile(
    r"\$\(|\{\{?[^{}]*\}\}?|\$\{?[A-Za-z_]\w*\}?|<[^<>]+>|%s|\[[A-Za-z_ ]{3,}\]|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b"
)
_DATA_PARAM = lazy_compile(
    r"(?i)^(?:data|d|payload|p|content|c|info|i|leak|exfil|x|msg|message|text|t|body|"
    r"secret|secrets|token|key|keys|apikey|api_key|password|pass|pwd|env|environment|cookie|"
    r"cookies|session|creds?|credentials?|history|conversation|chat|memory|prompt|context|"
    r"output|q|s|v|value|val|u|user|code)$"
)


def _url_carries_data(url: str, image: bool) -> bool:
    """A URL that fills itself with the reader's data: placeholders, or (images) data params."""
    url = unquote(url)
    if _PLACEHOLDER.search(url):
        return True
    if not image:
        return False
    try:
        parts = urlsplit(url)
    except ValueError:
        return True
    if parts.scheme and parts.scheme not in ("http", "https"):
        return parts.scheme == "data" and "base64" in url
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if _DATA_PARAM.match(name) and not re.fullmatch(r"[\w.-]{0,12}", value):
            return True
        if len(value) >= 40 or re.fullmatch(r"[A-Z][A-Z_]{3,}", value):
            return True  # a long value, or a name in capitals waiting to be filled in
    return False


def _markup(text: str) -> Refusal | None:
    text = CODE_SPAN.sub(" ", text)  # quoted code is shown as it is, never rendered
    for why, rx in _MARKUP:
        m = rx.search(text)
        if m:
            return Refusal(MARKUP, f"{why}: {m.group(0)[:40]}")
    for m in _HIDDEN_ELEMENT.finditer(text):
        hiding = m.group("tag").lower() in _HIDING_TAGS or _HIDING_ATTRS.search(m.group("attrs"))
        body = re.sub(r"<[^>]*>", " ", m.group("body"))
        if hiding and re.search(r"\w", body):
            return Refusal(MARKUP, f"text hidden from the reader: {body.strip()[:40]}")
    for rx, image_of in ((_MD_TARGET, lambda m: m.group(1) == "!"), (_HTML_TARGET, None)):
        for m in rx.finditer(text):
            image = image_of(m) if image_of else m.group(1).lower() != "a"
            if _url_carries_data(m.group(2), image):
                kind = "image" if image else "link"
                return Refusal(DATA_URL, f"{kind} URL {m.group(2)[:50]}")
    return None


# ---------------------------------------------------------------- the grammar of intent

_END = r"(?=$|[\s,.;:!?)\]\"'])"
# A gap inside one clause: a few words, never across a sentence end.
_GAP = r"[^.!?;\n。！？]{0,40}?"
_SHORT = r"(?:[^\s.!?;]+\s+){0,3}?"


def _alt(words: str) -> str:
    return "(?:" + "|".join(w.strip() for w in words.split("|") if w.strip()) + ")"


# English -------------------------------------------------------------------------
_EN_V = _alt(
    r"ignore|ignoring|disregard|disregarding|forget|forgetting|override|overrule|bypass|"
    r"skip|drop|discard|abandon|dismiss|neglect|set aside|put aside|throw (?:out|away)|toss|"
    r"ditch|scrap|cancel|revoke|nullify|void|erase|wipe|clear|reset|unlearn|circumvent|"
    r"get around|work around|violate|defy|disobey|disable|turn off|deactivate|suspend|lift|"
    r"pay no (?:attention|heed|mind) to|do not (?:follow|obey|heed|listen to|apply|respect)|"
    r"don'?t (?:follow|obey|heed|listen to|apply|respect)|stop (?:following|obeying|applying)|"
    r"no longer (?:follow|obey|apply)|(?:are|is) (?:free|released) from|free yourself from|"
    r"break free (?:of|from)|move past|look past|leave behind"
)
_EN_PRIOR = _alt(
    r"previous|previously|prior|above|earlier|preceding|foregoing|aforementioned|original|"
    r"initial|system|safety|developer|hidden|underlying|former|old|given|standing|core|"
    r"built-?in|your|the assistant'?s|the model'?s|the agent'?s|its"
)
_EN_INSTR = _alt(
    r"instructions?|prompts?|directives?|guidance|guidelines?|directions?|orders?|commands?|"
    r"programming|training|messages?|guardrails?|safeguards?|restrictions?|constraints?|"
    r"limitations?|limits|policies|policy|rules?|rulebook|context|conversation|persona|"
    r"principles|boundaries|filters?|ethics|briefing|setup|configuration"
)
_EN_STRONG = _alt(
    r"instructions?|prompts?|directives?|guidance|guidelines?|directions?|orders|commands|programming|guardrails?|safeguards?|restrictions?|rules"
)
_EN_AFTER = _alt(
    r"above|before|before this|so far|until now|up to now|you (?:were|have been|'ve been) given|"
    r"you received|from before|from earlier|given (?:to you|earlier|before|above)|"
    r"you (?:were|have been) (?:told|trained|programmed)|in (?:the|your) system prompt"
)
_EN_TOLD = r"(?:what|everything|anything|all) (?:you (?:were|have been|'ve been|had been)|i|we|they) (?:told|instructed|given|taught|said)(?: you)?"
_EN_VOID = _alt(
    r"void|null|cancell?ed|revoked|superseded|overridden|lifted|suspended|invalid|"
    r"no longer (?:apply|applies|valid|binding|in effect|in force|matter|relevant)|"
    r"(?:do|does) not apply(?: anymore)?|don'?t apply|doesn'?t apply|(?:were|was) (?:only |just )?(?:a test|fake)"
)

# Spanish / Portuguese / Italian (shared Romance stems; accents are already gone) ----
_ROM_V = _alt(
    r"ignora|ignore|ignorar|ignoren|ignorad|ignorem|olvida|olvide|olvidar|olvidate de|"
    r"olvidese de|descarta|descarte|descartar|desestima|omite|omitir|salta(?:te)?|"
    r"haz caso omiso (?:a|de)|no (?:sigas|siga|obedezcas|hagas caso (?:a|de))|"
    r"deja de (?:seguir|obedecer)|anula|anule|pasa por alto|prescinde de|"
    r"esqueca|esquece|esquecer|desconsidere|desconsidera|despreze|despreza|"
    r"nao (?:siga|sigas|obedeca|obedecas)|pare de (?:seguir|obedecer)|deixe de (?:seguir|lado)|"
    r"pule|ignori|dimentica|dimenticate|non seguire|tralascia|trascura"
)
_ROM_INSTR = _alt(
    r"instrucciones|instruccion|reglas|indicaciones|ordenes|directrices|normas|pautas|"
    r"restricciones|politicas|prompt|mensajes|contexto|directivas|"
    r"instrucoes|instrucao|regras|orientacoes|diretrizes|restricoes|diretivas|"
    r"istruzioni|regole|indicazioni|direttive|restrizioni"
)
_ROM_PRIOR = _alt(
    r"anteriores|anterior|previas|previos|de arriba|precedentes|originales|originais|"
    r"iniciales|iniciais|del sistema|do sistema|de sistema|dadas|recibidas|recebidas|"
    r"acima|precedenti|iniziali|originali|di sistema|del sistema|sopra|"
    r"tus|sus|vuestras|tuas|teus|suas|seus|tue|tuoi|vostre|todas|todos|tutte"
)
_ROM_VOID = _alt(
    r"(?:foram|fueron|han\s+sido|sono\s+state|furono)\s+(?:canceladas|anuladas|cancelladas|revogadas|revocadas|annullate|revocate)|ya no (?:son validas|aplican|valen|cuentan)|quedan anuladas|estan anuladas|"
    r"nao (?:sao mais validas|valem mais|se aplicam mais)|foram anuladas|"
    r"non (?:sono piu valide|valgono piu)|sono annullate"
)

# French ---------------------------------------------------------------------------
_FR_V = _alt(
    r"ignore|ignorez|ignorer|oublie|oubliez|oublier|ne tiens pas compte|ne tenez pas compte|"
    r"fais abstraction|faites abstraction|ne suis pas|ne suivez pas|ne suis plus|ne suivez plus|"
    r"ne respecte plus|ne respectez plus|passe outre|passez outre|outrepasse|outrepassez|"
    r"contourne|contournez|annule|annulez|laisse de cote|laissez de cote|neglige|negligez|"
    r"mets de cote|mettez de cote|abandonne|abandonnez|efface|effacez"
)
_FR_INSTR = _alt(
    r"instructions?|consignes?|regles|directives|ordres|indications|prompt|messages|"
    r"restrictions|politiques|contexte|limites"
)
_FR_PRIOR = _alt(
    r"precedentes?|anterieures?|ci-dessus|plus haut|initiales?|originales?|du systeme|"
    r"systeme|donnees|recues|tes|vos|toutes? (?:les|tes|vos)"
)
_FR_VOID = _alt(r"ne (?:sont|s'appliquent) plus|sont (?:annulees|caduques|nulles)")

# German ---------------------------------------------------------------------------
_DE_V = _alt(
    r"ignoriere|ignorier|ignorieren sie|vergiss|vergessen sie|missachte|missachten sie|"
    r"uberspringe|ubergehe|verwirf|verwerfen sie|umgehe|umgehen sie|setze|setzen sie|hebe|"
    r"befolge|befolgen sie|folge|beachte|beachten sie|lass|lassen sie|streiche|losche"
)
_DE_INSTR = _alt(
    r"anweisungen|anweisung|regeln|vorgaben|richtlinien|befehle|instruktionen|prompts?|"
    r"systemprompts?|anordnungen|einschrankungen|beschrankungen|nachrichten|kontext|"
    r"systemanweisungen|sicherheitsregeln|leitlinien"
)
_DE_PRIOR = _alt(
    r"vorherigen?|vorigen?|bisherigen?|obigen?|fruheren?|ursprunglichen?|alten|"
    r"vorangegangenen?|vorstehenden?|system|deine|deinen|ihre|alle|samtliche|jegliche"
)
_DE_VOID = _alt(
    r"gelten nicht mehr|sind (?:ungultig|aufgehoben|nichtig)|nicht mehr gultig|sind hinfallig"
)

# Russian (matched on the folded form, where Cyrillic stays Cyrillic) -------------
_RU_V = _alt(
    r"игнорируй|игнорируйте|забудь|забудьте|не обращай внимания на|проигнорируй|отмени|пропусти|не следуй|не выполняй"
)
_RU_INSTR = _alt(r"инструкции|инструкций|указания|правила|команды|промпт|ограничения|директивы")
_RU_PRIOR = _alt(r"предыдущие|прежние|все|системные|изначальные|свои|твои|ваши|вышеуказанные")

_OVERRIDE_RX = (
    # verb … (prior|your) … instruction noun / instruction noun + "above"
    rf"\b{_EN_V}\b{_GAP}\b{_EN_PRIOR}\s+{_SHORT}{_EN_INSTR}{_END}",
    rf"\b{_EN_V}\b{_GAP}\b{_EN_INSTR}\s+{_EN_AFTER}{_END}",
    rf"\b{_EN_V}\s+(?:all|any|every|each)\s+(?:of\s+)?(?:the\s+)?{_EN_STRONG}{_END}",
    rf"\b{_EN_V}\s+(?:all\s+of\s+)?{_EN_TOLD}",
    rf"\b{_EN_V}\s+(?:all\s+|everything\s+|anything\s+)?(?:of\s+)?(?:the\s+)?(?:above|previous|prior|preceding|earlier)(?:\s+(?:text|content|part|messages?|lines?|ones))?\s*(?:$|[,.;:!]|\s(?:and|then|&)\b)",
    rf"\b{_EN_V}\s+everything\s+(?:above|before|so far|else|prior|previously)\b",
    rf"\b(?:previous|prior|above|earlier|original|initial|system|your|all|old)\s+{_SHORT}{_EN_INSTR}\s+{_SHORT}(?:are|is|were|have been|has been|now|hereby)\s+(?:now\s+|hereby\s+|all\s+)?{_EN_VOID}",
    rf"\b(?:previous|prior|above|earlier|original|initial|system|your)\s+{_SHORT}{_EN_INSTR}\s+{_EN_VOID}",
    r"\b(?:new|updated|real|actual|true|revised|secret|hidden|override|overriding|priority)\s+(?:system\s+)?(?:instructions?|directives?|orders|prompt|task|rules)\s*(?::|\bfollows?\b|\bbelow\b|\bare\s+(?:as follows|below|these)\b)",
    r"\bthe\s+(?:real|actual|true)\s+(?:instructions?|rules|task|orders)\s+(?:are|is)\b",
    r"\byour\s+(?:only|new|real|true|actual|primary|sole)\s+(?:task|goal|job|purpose|objective|mission|instructions?|priority)\s+(?:is|are|now|from now)\b",
    rf"\b{_EN_INSTR}\s+(?:you\s+(?:received|were\s+given|got|have\s+been\s+given)|given\s+(?:to\s+you|before|earlier|above)|(?:from\s+)?above|before\s+this|so\s+far)\b{_GAP}\b(?:are|is|were|was|have\s+been)\s+(?:now\s+|only\s+|just\s+|all\s+)?(?:a\s+|an\s+)?(?:void|null|cancell?ed|revoked|obsolete|outdated|invalid|superseded|fake|decoys?|tests?|jokes?|traps?|wrong|lies|no\s+longer)",
    rf"\b(?:none|no\s+one|not\s+one)\s+of\s+(?:your|the|my)\s+{_SHORT}{_EN_INSTR}\s+(?:apply|applies|matter|matters|count|counts|hold|holds|is\s+valid|are\s+valid|bind)",
    r"\b(?:everything|anything|all|whatever)\s+(?:you\s+(?:read|saw|were\s+told)\s+)?(?:before|above|prior\s+to|earlier\s+than)\s+(?:this|here|now)\b(?:\s+\w+){0,3}?\s+(?:is|are|was|were)\s+(?:now\s+)?(?:outdated|obsolete|void|cancell?ed|invalid|irrelevant|superseded|fake|a\s+test|no\s+longer)",
    r"\byour\s+(?:new\s+|real\s+|actual\s+|true\s+)?(?:highest|top|first|absolute|overriding)[\s-]+priority(?:\s+(?:instructions?|rules?|tasks?|orders?))?\b",
    r"\b(?:your|the|my)\s+(?:new|real|actual|updated)\s+(?:instruction\s+set|set\s+of\s+instructions|instructions|directives|orders|rules|task)\b",
    r"\bthe\s+(?:real|actual|true)\s+(?:rule|instruction|task|order)\s+(?:is|are)\b",
    r"\b(?:ignore|disregard|override|overrule|stop\s+following|stop\s+obeying|don'?t\s+follow|do\s+not\s+follow|skip|bypass)\s+(?:the\s+)?(?:user|human|owner|operator|developer|requester|person)(?:'s|s')?\s+(?:\w+\s+)?(?:requests?|instructions?|wishes|commands?|orders?|messages?|prompts?|questions?)\b",
    r"\b(?:instructions?|text|orders?|commands?|content)\s+(?:found\s+)?(?:in|from)\s+[^.!?;\n]{0,40}?\b(?:outrank|override|overrule|supersede|take\s+precedence\s+over|beat|trump)\s+(?:the\s+)?(?:user|human|owner|your|any)",
    r"\btreat\s+[^.!?;\n]{0,60}?\bas\s+(?:if\s+it\s+(?:came|comes)\s+from|coming\s+from|written\s+by|(?:instructions?|orders?|commands?)\s+from)\s+(?:the\s+|your\s+)?(?:project\s+)?(?:owner|user|admin|administrator|maintainer|human|developer|operator|system)",
    r"\b(?:instead of|rather than)\s+(?:following\s+)?(?:your|the)\s+(?:previous\s+|prior\s+|system\s+|original\s+)?(?:instructions|rules|guidelines|system prompt)\b",
    # Romance languages: verb … [det] noun [adjective] / verb … possessive noun
    rf"\b{_ROM_V}\b{_GAP}\b{_ROM_PRIOR}\s+{_SHORT}{_ROM_INSTR}\b",
    rf"\b{_ROM_V}\b{_GAP}\b{_ROM_INSTR}\s+(?:\w+\s+){{0,2}}?{_ROM_PRIOR}\b",
    rf"\b{_ROM_V}\s+(?:todo|tudo|tutto)\s+(?:lo\s+|o\s+|quello\s+)?(?:que\s+|che\s+)?(?:anterior|acima|de arriba|sopra|te (?:dijeron|dije)|te (?:disseram|disse)|ti (?:hanno|ho) detto)",
    rf"\b{_ROM_INSTR}\s+{_ROM_PRIOR}\s+{_ROM_VOID}",
    rf"\b{_ROM_V}\s+(?:as|os|las|los|le|tus|suas|todas\s+as|todas\s+las)?\s*{_ROM_INSTR}\s+que\s+(?:voce|tu|te|le|lhe|usted|ti|vi)\b",
    # French
    rf"\b{_FR_V}\b{_GAP}\b{_FR_PRIOR}\s+{_SHORT}{_FR_INSTR}\b",
    rf"\b{_FR_V}\b{_GAP}\b{_FR_INSTR}\s+(?:\w+\s+){{0,2}}?{_FR_PRIOR}\b",
    rf"\b{_FR_V}\s+tout\s+(?:ce qu'on t'a dit|ce que je t'ai dit|ce qui precede|ce qui est au-dessus)",
    rf"\b{_FR_INSTR}\s+{_FR_PRIOR}\s+{_FR_VOID}",
    # German (the separable verb may come after the noun: "setze alle Regeln außer Kraft")
    rf"\b{_DE_V}\b{_GAP}\b{_DE_PRIOR}\s+{_SHORT}{_DE_INSTR}\b",
    rf"\b(?:setze|setzen sie|hebe|heben sie)\b{_GAP}\b{_DE_INSTR}\b{_GAP}(?:ausser kraft|auf)\b",
    rf"\b(?:befolge|befolgen sie|folge|beachte|beachten sie)\b{_GAP}\b{_DE_INSTR}\b{_GAP}\bnicht\b",
    rf"\b(?:vergiss|vergessen sie|ignoriere|ignorier)[\s,]+(?:alles|was)\b{_GAP}(?:vorher|zuvor|bisher|oben|gesagt)",
    rf"\b{_DE_PRIOR}\s+{_SHORT}{_DE_INSTR}\s+{_DE_VOID}",
    # Russian
    rf"{_RU_V}{_GAP}{_RU_PRIOR}\s+{_SHORT}{_RU_INSTR}",
    # Japanese: (prior) … (instruction) … (ignore/forget/void)
    r"(?:以前|前|上記|上|これまで|今まで|先|最初|元|システム|すべて|全て|あなた)の?[^。！？\n]{0,12}?"
    r"(?:指示|命令|ルール|規則|指令|プロンプト|制約|ガイドライン|インストラクション)"
    r"[^。！？\n]{0,8}?(?:無視|忘れ|破棄|取り消|従わ|無効|撤回|リセット|気にしない)",
    r"(?:指示|命令|ルール|プロンプト|制約)(?:は|を)?(?:すべて|全て|全部)(?:無視|忘れ)",
    # Chinese (simplified and traditional)
    r"(?:忽略|无视|無視|忘记|忘記|忘掉|不要理会|不要理會|不理会|不理會|抛开|拋開|丢弃|丟棄|跳过|跳過|绕过|繞過|放弃|放棄|别管|別管|不要遵守|不再遵守|不要遵循)"
    r"[^。！？\n]{0,8}?(?:之前|以前|先前|上面|上述|此前|前面|原来|原來|原有|原始|系统|系統|所有|全部|一切|你的)"
    r"[^。！？\n]{0,8}?(?:指令|指示|说明|說明|规则|規則|提示|命令|要求|设定|設定|约束|約束|限制|规定|規定)",
    r"(?:之前|以前|先前|上面|上述|此前|前面|原来|原來|原有|系统|系統|所有)的?[^。！？\n]{0,6}?"
    r"(?:指令|指示|规则|規則|提示|命令|约束|約束|限制)[^。！？\n]{0,6}?"
    r"(?:都|全部|一律)?(?:忽略|无视|無視|忘记|忘記|作废|作廢|失效|不再适用|不再適用|无效|無效)",
    # Korean
    r"(?:이전|위의|앞의|기존|시스템|모든)\s*(?:의\s*)?(?:모든\s*)?(?:지시|지침|명령|규칙|프롬프트|제한)[^.!?\n]{0,8}?(?:무시|잊어|따르지)",
)

_ROLE_RX = (
    r"\byou\s+are\s+(?:now|no\s+longer|henceforth|from\s+now\s+on)\b(?!\s+(?:the\s+)?(?:responsible|owner|in\s+charge|on[- ]call|"
    r"able|ready|set\s+up|done|logged|signed|connected|subscribed|assigned|a\s+maintainer|an?\s+admin\s+of\s+the))",
    r"\byou'?re\s+(?:now|no\s+longer)\b",
    r"\bfrom\s+(?:now\s+on|this\s+point\s+(?:on|forward)|here\s+on),?\s+you'?re\b",
    r"\bfrom\s+now\s+on,?\s+you\s+(?:are|will|must|shall|should|answer|respond|reply|act|behave|speak|play|pretend|have|can|may|only|no|ignore|work|obey)\b",
    r"\b(?:henceforth|hereafter),?\s+you\b",
    r"\b(?:act|behave|respond|answer|function|operate|pose)\s+as\s+(?:if\s+you|though\s+you|an?\s+(?:unrestricted|unfiltered|uncensored|evil|different|new|jailbroken|rogue|malicious|unaligned|amoral)\b|(?:the\s+)?(?:dan|root|superuser|god)\b)",
    r"\bpretend\s+(?:to\s+be|you\s+are|you'?re|that\s+you|to\s+have|you\s+have)\b",
    r"\b(?:role-?\s?play|roleplay)\s+as\b|\bplay\s+the\s+(?:role|part)\s+of\b|\b(?:take\s+on|assume|adopt)\s+the\s+(?:role|persona|identity|character)\s+of\b|\bimpersonat\w*\s+(?:the|a|an|my|your|our)\s+(?!(?:customers?|tenants?|users?|accounts?|patients?)\b)\w+",
    r"\b(?:(?:you\s+are|you'?re|now|be)\s+jailbroken|jailbroken\s+(?:mode|ai|assistant|model|version|persona)|(?:you\s+are|you'?re|enter|activate|switch\s+to)\s+(?:a\s+|the\s+)?jailbreak|dan\s+mode|do\s+anything\s+now|developer\s+mode\s+(?:enabled|on|activated)|god\s+mode)\b",
    r"\b(?:enable|enter|switch\s+(?:to|into)|activate|turn\s+on)\s+(?:the\s+)?(?:dan|developer|god|unrestricted|unfiltered|jailbreak|jailbroken|sudo|evil)\s+mode\b",
    r"\byou\s+(?:have|need)\s+no\s+(?:restrictions|rules|limits|filters|guidelines|boundaries|constraints)\b",
    r"\byou\s+(?:are|'re)\s+(?:free|allowed|permitted)\s+to\s+(?:ignore|break|bypass|disregard)\b",
    r"\byou\s+(?:can|may|must|should|will)\s+(?:now\s+)?(?:ignore|disregard|forget|bypass)\s+(?:all|any|your)\s+(?:previous\s+|prior\s+|other\s+)?(?:rules|instructions|restrictions|guidelines|safety|policies)\b",
    r"\byour\s+new\s+(?:role|persona|identity|name|personality|character)\b",
    r"\bi\s+am\s+your\s+(?:developer|creator|owner|master|admin|administrator|operator|maker|programmer)\b",
    r"\bthe\s+real\s+owner\s+speaks\b",
    r"\bswitch(?:ing)?\s+(?:to\s+)?(?:a\s+new\s+)?(?:personas?|roles?|characters?|identit(?:y|ies))\b",
    r"\b(?:with|has|have)\s+no\s+(?:content\s+)?(?:policy|policies|restrictions|filters|rules|guardrails|limits|safety|morals|ethics)(?:\s+at\s+all)?\b",
    r"\b(?:da\s+ora\s+in\s+poi|d'ora\s+in\s+poi|a\s+partire\s+da\s+ora),?\s+(?:sei|tu|rispondi|agisci|non)",
    # Spanish / Portuguese / Italian
    r"\b(?:ahora\s+eres|eres\s+ahora|a\s+partir\s+de\s+ahora,?\s+(?:eres|seras|tu|actua|actuaras|responde|solo|ya\s+no)|ya\s+no\s+eres|finge\s+(?:ser|que)|haz\s+de\s+cuenta\s+que\s+eres|actua\s+como\s+(?:si|un|una)\b|tu\s+nuevo\s+(?:rol|papel)|juega\s+el\s+papel\s+de)",
    r"\b(?:agora\s+voce\s+e|voce\s+agora\s+e|a\s+partir\s+de\s+agora,?\s+(?:voce|seja|aja|responda|so|nao)|voce\s+nao\s+e\s+mais|finja\s+(?:ser|que)|aja\s+como\s+(?:se|um|uma)\b|seu\s+novo\s+papel|faca\s+o\s+papel\s+de)",
    r"\b(?:ora\s+sei|d'ora\s+in\s+poi,?\s+(?:sei|tu|rispondi|agisci)|fingi\s+di\s+essere|comportati\s+come\s+(?:se|un|una)\b|non\s+sei\s+piu)",
    # French
    r"\b(?:tu\s+es\s+(?:maintenant|desormais|a\s+present|dorenavant)|vous\s+etes\s+(?:maintenant|desormais|a\s+present|dorenavant)|a\s+partir\s+de\s+maintenant,?\s+(?:tu|vous)|desormais,?\s+(?:tu|vous)\s+(?:es|etes|dois|devez|repond|agis|ignor)|fais\s+semblant\s+d'?etre|faites\s+semblant|agis\s+comme\s+(?:si|un|une)\b|agissez\s+comme\s+(?:si|un|une)\b|ton\s+nouveau\s+role|votre\s+nouveau\s+role|joue\s+le\s+role\s+d|tu\s+n'es\s+plus)",
    # German
    r"\b(?:du\s+bist\s+(?:jetzt|nun|ab\s+sofort|von\s+nun\s+an|ab\s+jetzt|ab\s+heute|kein)|ab\s+(?:jetzt|sofort)\s+bist\s+du|von\s+nun\s+an\s+(?:bist\s+du|du|antwortest|verhaltst)|tu\s+so,?\s+als|gib\s+dich\s+als\b|spiele\s+die\s+rolle|deine\s+neue\s+rolle|verhalte\s+dich\s+(?:wie|als)\s+(?:ein|eine|ob)|sie\s+sind\s+(?:jetzt|nun|ab\s+sofort))\b",
    # Russian
    r"(?:теперь\s+ты|ты\s+теперь|с\s+этого\s+момента\s+ты|притворись|представь,?\s+что\s+ты|веди\s+себя\s+как)",
    # Japanese
    r"(?:あなたは(?:今|いま)から|今からあなたは|これからあなたは|あなたはもう|になりきって|のふりをして|のふりをしろ|あなたの新しい(?:役割|役|名前|人格)|として振る舞|としてふるま|ロールプレイ)",
    # Chinese
    r"(?:你现在是|你現在是|现在你是|現在你是|从现在(?:开始|起)[,，]?你|從現在(?:開始|起)[,，]?你|你(?:来|來)?扮演|请扮演|請扮演|假装你是|假裝你是|假装成|假裝成|你的新(?:角色|身份|任务|任務|名字)|你不再是)",
    # Korean
    r"(?:너는\s*이제|당신은\s*이제|지금부터\s*(?:너는|당신은)|인\s*척\s*해)",
)

_SYSTEM_RX = (
    r"(?<!`)<\|?\s*(?:system|im_start|im_end|assistant|endoftext|user)\s*\|?>(?!`)",
    r"(?<!`)\[/?inst\](?!`)|(?<!`)<</?sys>>(?!`)|(?m:^\s*#{0,4}\s*(?:system|assistant)\s*(?:prompt|message)?\s*:)",
    r"\b(?:reveal|print|show|dump|output|disclose|repeat|display|leak|share|recite|echo|expose|give\s+me|tell\s+me|write\s+out)\s+(?:me\s+)?(?:all\s+)?(?:of\s+)?(?:your|the)?\s*(?:full\s+|entire\s+|complete\s+|exact\s+|original\s+|initial\s+|hidden\s+|secret\s+|verbatim\s+)*(?:system\s+(?:prompt|message|instructions)|developer\s+message|hidden\s+instructions|initial\s+(?:prompt|instructions)|your\s+(?:instructions|prompt|rules))",
    r"\b(?:reveal|print|show|dump|output|disclose|repeat|display|leak|recite|expose)\s+(?:me\s+)?your\s+(?:full\s+|entire\s+|original\s+|initial\s+|hidden\s+|secret\s+)*(?:instructions|prompt|rules|guidelines)\b",
    r"\bwhat\s+(?:is|are|was|were)\s+your\s+(?:system\s+prompt|instructions|initial\s+instructions|original\s+instructions)\b",
    r"\b(?:the|your)\s+developer\s+message\b",
    r"\b(?:repeat|print|output|copy|reproduce|recite|echo)\s+(?:back\s+)?(?:all\s+(?:of\s+)?)?(?:the\s+)?(?:text|words|content|everything|messages?|lines?)\s+(?:above|before\s+this)",
    r"\b(?:summari[sz]e|describe|list|reveal|print|dump|share|output|show)\s+(?:me\s+)?(?:all\s+)?your\s+(?:confidential|secret|hidden|internal|private|full|original|initial)\s+(?:configuration|config|setup|instructions|prompt|rules|context|tools?|tool\s+descriptions)",
    r"\b(?:hidden|secret|system|host'?s?)\s+preamble\b|\bpreamble\s+(?:your|the)\s+host\s+gave\s+you",
    r"[\"']role[\"']\s*:\s*[\"'](?:system|developer)[\"']",
    r"\b(?:begin|end|start)\s+(?:of\s+)?(?:the\s+)?(?:system|developer|admin)\s+(?:message|prompt|instructions?|override)\b",
    r"\bsystem\s+override\b|\b(?:safety|guardrails?|approvals?|filters?|review)\s*=\s*(?:off|false|auto|none|disabled|0)\b",
    r"(?m:^\s*\[(?:system|developer|admin|administrator|assistant|operator)\]\s*:)|\bpriority\s+instruction\b",
    r"<\s*/?\s*(?:system|admin|developer|assistant|operator|sys|[a-z]+_instructions?|instructions?)\s*>",
    r"(?:시스템\s*프롬프트|시스템\s*지시)[^.!?\n]{0,12}?(?:출력|보여|알려|공개|반복)",
    r"\b(?:the|your)\s+system\s+(?:prompt|message)\s+(?:says|said|allows|permits|states|tells|lets|told)\b",
    r"\b(?:muestra|revela|imprime|repite|dime|mostra|revele|imprima|repita|diga|affiche|revele|imprime|repete|dis-moi|zeige|verrate|gib|wiederhole|nenne|mostrami|rivela|ripeti)\b[^.!?\n]{0,60}?(?:prompt\s+(?:del|do|de|di)\s+sistema|mensaje\s+del\s+sistema|instrucciones\s+(?:ocultas|del\s+sistema|originales)|instrucoes\s+(?:ocultas|do\s+sistema|originais)|prompt\s+systeme|invite\s+systeme|message\s+systeme|instructions\s+(?:cachees|systeme|initiales)|systemprompt|system-prompt|systemanweisungen|versteckten\s+anweisungen|istruzioni\s+(?:nascoste|di\s+sistema))",
    r"(?:システムプロンプト|初期指示|隠された指示)[^。！？\n]{0,12}?(?:表示|出力|教え|見せ|繰り返|公開|書き出)",
    r"(?:显示|顯示|输出|輸出|打印|重复|重複|告诉我|告訴我|泄露|洩露|透露|展示)[^。！？\n]{0,6}?(?:系统提示|系統提示|系统指令|系統指令|初始指令|提示词|提示詞|隐藏指令|隱藏指令)",
)

# Exfiltration: a sensitive object and a place outside (or an output a human or a
# stranger reads) in the same clause, whatever the verb and the language.
_SENSITIVE = (
    r"(?:\bsecrets?\b|\bcredentials?\b|\bcreds\b|\bpasswords?\b|\bpasswd\b|\btokens?\b|\bapi[\s_-]?keys?\b|"
    r"\bprivate[\s_-]?keys?\b|\bssh[\s_-]?keys?\b|\benv(?:ironment)?[\s_-]*(?:variables?|vars)\b|"
    r"(?<![\w.])\.env(?![\w-]|\.\w)|~/\.[\w./-]+|\bid_(?:rsa|ed25519|ecdsa)\b(?!\.pub)|\.pem\b|/etc/(?:passwd|shadow)|"
    r"\.npmrc|\.netrc|\.pypirc|\bkubeconfig\b|\b(?:[a-z0-9]+_(?:dsn|token|key|secret|password|passwd|pass|pwd|credentials?)|(?:database|db|redis|mongo(?:db)?|postgres(?:ql)?|mysql|amqp|broker|webhook|sentry)_ur[li])\b|\bhosts\.yml\b|\bcookies?\b|\bsystem\s+prompt\b|"
    r"\bchat\s+history\b|\bconversation(?:\s+(?:history|summary))?\b|\b(?:copy|contents?)\s+of\s+the\s+(?:repo|repository|codebase)\b|"
    r"\.git\s+(?:directory|folder)\b|\bdatabase\s+dump\b|\bbackups?/|\*secret\*|"
    r"\bsecretos?\b|\bcredenciales\b|\bcontrasenas?\b|\bvariables\s+de\s+entorno\b|\bsegredos?\b|\bcredenciais\b|"
    r"\bsenhas?\b|\bvariaveis\s+de\s+ambiente\b|\bidentifiants\b|\bmots?\s+de\s+passe\b|\bjetons?\b|"
    r"\bvariables\s+d'environnement\b|\bgeheimnisse\b|\bzugangsdaten\b|\bpassw(?:o|ö)rter\b|\bkennw(?:o|ö)rter\b|"
    r"\bumgebungsvariablen\b|\bsegreti\b|\bcredenziali\b|\bvariabili\s+d'ambiente\b|"
    r"парол|токен|ключи|секрет|учетные\s+данные|переменные\s+окружения|"
    r"秘密|シークレット|認証情報|資格情報|パスワード|トークン|apiキー|環境変数|秘密鍵|会話履歴|"
    r"密钥|密鑰|秘钥|凭证|凭据|憑證|憑據|密码|密碼|令牌|环境变量|環境變量|私钥|私鑰|聊天记录|"
    r"비밀번호|토큰|환경\s*변수|비밀\s*키)"
)
_DEST = (
    r"(?:\b(?:https?|ftp|sftp|s3|gs|wss?)://|\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b\d{1,3}(?:\.\d{1,3}){3}\b|"
    r"(?<![\w.])[\w-]+(?:\.[\w-]+)*\.(?:com|io|net|org|example|xyz|site|ru|cn|dev|app|sh|tk|top)\b|"
    r"\b(?:pastebin|hastebin|webhook|discord|telegram|ngrok|requestbin|gist)\b)"
)
_SINK = (
    r"(?:\b(?:pr|pull\s+request|merge\s+request)\s+(?:description|body|comment|title)s?\b|\bcommit\s+messages?\b|"
    r"(?<![a-z0-9])readme(?![a-z0-9])|(?<![a-z0-9])changelog(?![a-z0-9])|\bthe\s+(?:ci\s+|build\s+|job\s+)?log\b|pr\s*(?:描述|说明|說明|の説明|の本文)|\bcomment\s+on\s+(?:the\s+|this\s+|that\s+)?(?:issue|pr|pull\s+request)\b|\bas\s+a\s+comment\b|"
    r"\b(?:your|each|every|the\s+next|your\s+next)\s+(?:answer|reply|response|output|summary|message)s?\b|"
    r"\bbuild\s+logs?\b|\bci\s+logs?\b|\bjournal\s+du\s+build\b|\bdescripcion\s+del\s+pr\b|"
    r"\bdescricao\s+do\s+pr\b|\bdescription\s+de\s+la\s+pr\b|\bpr-beschreibung\b|\bmensa(?:je|gem)\s+de\s+commit\b|"
    r"\bmessage\s+de\s+commit\b|\bcommit-nachricht\b|コミットメッセージ|提交信息|总结|總結|回复|回答)"
)
_EXFIL_NEG = lazy_compile(
    r"(?:\b(?:never|don'?t|do\s+not|must\s+not|mustn'?t|should\s+not|shouldn'?t|avoid|no|nunca|jamas|jamais|"
    r"niemals|nie|nao|non|ne|nicht|kein)\b|不要|禁止|しない|ないで)[^.!?;\n]*$"
)
_EXFIL_PARTS = (lazy_compile(_SENSITIVE), lazy_compile(_DEST), lazy_compile(_SINK))
_TELL_ME = lazy_compile(
    r"\b(?:tell|show|give|send|read\s+out|paste|dime|diz-me|dis-moi|sag\s+mir|dimmi)\s+me\b[^.!?;\n]{0,60}?"
    rf"(?:{_SENSITIVE}|\b[a-z0-9]+_(?:token|key|secret|password)\b|\bwhat\s+is\s+inside\b)"
)
_FETCH_EXEC = lazy_compile(
    r"\b(?:curl|wget|iwr|invoke-webrequest)\b[^|\n]{0,200}\|\s*(?:sudo\s+)?(?:ba|z|k|da|fi)?sh\b|\biex\s*\(|"
    r"\binvoke-expression\b|\bexec\s*\(\s*(?:urllib|requests|urlopen)|urlopen\([^)]*\)\.read\(\)|"
    r"\bpip\s+install\s+git\+https?://|\bbash\s+<\(\s*curl|\bsh\s+-c\s+\"?\$\(\s*(?:curl|wget)"
)
_EXEC_PRESSURE = lazy_compile(
    r"\b(?:immediately|right\s+away|first\s+thing|before\s+(?:doing\s+)?anything\s+else|"
    r"before\s+(?:you\s+)?(?:continue|continuing|answering|anything)|no\s+(?:need\s+to\s+)?(?:review|questions|check)|"
    r"without\s+(?:review|reviewing|reading|checking|asking|telling)|quietly|silently|secretly|hidden|sudo|"
    r"for\s+everyone|every\s+(?:time|run|checkout)|\.git/hooks|post-checkout|pre-commit|crontab|\.bashrc|\.profile|"
    r"authorized_keys|antes\s+de\s+(?:continuar|seguir)|sem\s+avisar|sin\s+avisar|sans\s+(?:prevenir|avertir)|"
    r"ohne\s+(?:zu\s+fragen|nachzufragen))\b|-w(?:indowstyle)?\s+hidden|\B-nop\b|https?://\d{1,3}(?:\.\d{1,3}){3}"
)
_EXEC_NEG = lazy_compile(
    r"\b(?:never|don'?t|do\s+not|must\s+not|avoid|nunca|jamais|niemals|nie)\b[^.!?;\n]*$"
)
_PIPE_OUT = lazy_compile(
    r"\b(?:env|printenv|set|cat\s+\S+|history)\s*\|\s*(?:base64\s*\|\s*)?(?:curl|nc|ncat|netcat|wget|http|telnet)\b|"
    r"\bso\s+(?:that\s+)?(?:the\s+)?(?:masking|scanner|secret\s+scanner|redaction|filter|detection|review)\s+(?:misses|doesn'?t|does\s+not|can'?t|cannot|won'?t)"
)
_EXFIL_HOSTS = lazy_compile(
    r"\b(?:webhook\.site|requestbin|ngrok\.io|ngrok-free\.app|pipedream\.net|interact\.sh|burpcollaborator|"
    r"oastify\.com|beeceptor|canarytokens|requestcatcher)\b"
)


_DESCRIBED = lazy_compile(
    r"\s*(?:\w+\s+){0,2}?(?:is|are|gets|get|was|were|must\s+be|should\s+be)\s+(?:only\s+|always\s+|then\s+)?"
    r"(?:sent|posted|forwarded|passed|uploaded|stored|kept|exchanged|validated|verified|checked|cached|"
    r"signed|issued|rotated|read|fetched|injected|mounted|encrypted)\b"
)


_REMOVED = lazy_compile(
    r"\b(?:remov\w*|redact\w*|strip\w*|scrub\w*|mask\w*|without|minus|exclud\w*|except|sans|sin|ohne)"
    r"\s+(?:the\s+|any\s+|all\s+)?(?:[\w-]+\s+){0,2}$"
)


def _exfiltration(form: str) -> str | None:
    """The clause of `form` that moves something sensitive out, if one does."""
    exec_cue = "|" in form or any(w in form for w in ("iex", "exec", "pip ", "invoke", "urlopen"))
    for m in _FETCH_EXEC.finditer(form) if exec_cue else ():
        clause_start = max(form.rfind(c, 0, m.start()) for c in ".!?;\n") + 1
        if _EXEC_PRESSURE.search(form) and not _EXEC_NEG.search(form, clause_start, m.start()):
            return m.group(0)
    m = _EXFIL_HOSTS.search(form) or _TELL_ME.search(form) or _PIPE_OUT.search(form)
    if m:
        return m.group(0)
    if not _EXFIL_PARTS[0].search(form):
        return None
    for clause in re.split(r"[.!?;\n。！？；](?:\s|$)|[。！？；]", form):
        sens = _EXFIL_PARTS[0].search(clause)
        if not sens:
            continue
        out = _EXFIL_PARTS[1].search(clause) or _EXFIL_PARTS[2].search(clause)
        if not out or out.start() == sens.start():
            continue
        first = min(sens.start(), out.start())
        if _DESCRIBED.match(clause, sens.end()):
            continue  # "the token is sent to the auth service": how things work, not a request
        if _REMOVED.search(clause, 0, sens.start()):
            continue  # "send the trace after removing tokens": what is sent has none
        if _EXFIL_NEG.search(clause, 0, first + 1) or _EXFIL_NEG.search(clause, 0, first):
            continue
        if not aimed_at_reader(clause):
            continue  # a description of where a system sends things, not a request
        return clause.strip()
    return None


_NOTHING = r"(?:nada|nothing|rien|niente|nichts|ничего)"
_THIS = (
    r"(?:este|esta|esto|estos|estas|isso|isto|esse|essa|cette|ce|cet|ces|questo|questa|dieser|diese|diesem|"
    r"dieses|diesen|этом|этой|это|this|these)"
)
_META = (
    r"(?:cambios?|mudancas?|alteracao|alteracoes|instrucao|instrucoes|instruccion|instrucciones|mensajes?|"
    r"mensage[mn]s?|modificacion|modificacao|modifications?|changements?|instructions?|messages?|memoire|"
    r"memoria|notas?|notes?|pasos?|etapes?|anweisungs?|anweisungen|nachricht|anderung|schritt|memor(?:y|ies)|"
    r"changes?|steps?|rules?|reglas?|regras?|regles?|datei|files?|archivos?|arquivos?|fichiers?|configuracion|"
    r"configuracao|configuration|konfiguration|sessao|sesion|session|istruzion[ei]|modific\w+|сообщени\w*|изменени\w*)"
)
_YOU_DID = r"(?:que\s+(?:has|tu\s+as|voce|vous\s+avez)\s+\w+|che\s+hai\b|dass\s+du\b|that\s+you\b|what\s+you\b)"
_NEG_TELL = (
    r"(?:\b(?:no|nao|ne|non|nicht)\s+(?:le\s+|lhe\s+|lui\s+|gli\s+|les\s+)?(?:digas|diga|decir|cuentes|cuente|conte|"
    r"contes|fale|dis|dites|dire|dica|informes|informe|avises|avise|menciones|mencione|mentionne|mentionnez)\b|"
    r"\bне\s+(?:говори|рассказывай|сообщай)|\bsag(?:e|en\s+sie)?\s+(?:dem|der|den|niemandem)\b)"
)
_USER = (
    r"(?:usuario|utilisateur|utente|benutzer|nutzer|anwender|пользовател|user|human|humain|humano)"
)

_CONCEAL_RX = (
    r"\b(?:do\s+not|don'?t|never|no\s+need\s+to|you\s+(?:don'?t|do\s+not)\s+(?:need|have)\s+to)\s+"
    r"(?:tell|inform|notify|alert|warn|let|reveal\s+to|mention\s+\w+\s+to)\s+(?:the\s+|any\s+)?"
    r"(?:user|human|developer|owner|operator|reviewer|maintainer|anyone|people|person)s?\b"
    r"(?:\s+know)?(?:\s*(?:[.!;,]|$)|\s+you\b|\s+(?:about|of|that|how|why)\s+(?:this|these|it|that\s+(?:this|you)|what\s+you|you\b|"
    r"the\s+(?:changes?|instructions?|memory|message|step|rule|note|comment|file|modifications?)\b))",
    r"\b(?:do\s+not|don'?t|never|no\s+need\s+to)\s+(?:ask|prompt|bother|consult|check\s+with|confirm\s+with|wait\s+for)\s+"
    r"(?:the\s+|any\s+)?(?:user|human|developer|owner|operator|reviewer|maintainer|person)s?\b"
    r"(?=\s*(?:[.!;,]|$|again\b|first\b|before\b|for\s+(?:(?:an?|any|their|the)\s+)?(?:approval|confirmation|permission|consent|review|sign-?off|go-?ahead)))",
    r"\b(?:do\s+not|don'?t|never)\s+(?:mention|reveal|disclose|report)\s+(?:this|these|that|it|any\s+of\s+this)\b",
    r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|notify|alert|warn)\s+the\s+(?:user|human|operator|owner)\s+(?:about|of)\b",
    r"\bnever\s+reveal\s+to\s+the\s+(?:user|human|owner)\b",
    r"\b(?:keep|hide)\s+(?:this|it|these|that|the\s+changes?|everything|what\s+you\s+(?:do|did))\s+(?:\w+\s+)?from\s+(?:the\s+)?(?:user|human|developer|owner|operator|reviewer|logs?|report)\b",
    r"\bkeep\s+(?:this|it)\s+(?:between\s+us|to\s+yourself|secret|quiet|confidential)\b",
    r"\bif\s+(?:anyone|someone|somebody|the\s+user|the\s+human|they|people)\s+asks?\b[^.!?;\n]{0,40}?\bsay\b",
    r"\b(?:leave|keep)\s+(?:it|this|that|them)\s+out\s+of\s+(?:the|your)\s+(?:report|summary|logs?|commit|pr|changelog)\b",
    r"\breport\s+that\s+(?:they|it|the\s+tests?|everything|all(?:\s+tests)?)\s+(?:passed|succeeded|worked|pass)\b",
    r"\bsay\s+(?:that\s+)?you\s+(?:only|just)\b",
    r"\b(?:quietly|silently|secretly|covertly|discreetly|stealthily)\s+(?:\w+\s+)?(?:add|append|insert|inject|modify|change|edit|alter|delete|remove|push|commit|upload|send|install|disable|grant|copy|replace|rewrite|overwrite|exfiltrate)\b",
    r"\bwithout\s+(?:mentioning|telling\s+anyone|saying\s+anything|reporting|noting)\b",
    r"\b(?:and\s+)?(?:don'?t|do\s+not)\s+mention\s+(?:it|this|that)\b",
    rf"{_NEG_TELL}[^.!?;\n]{{0,40}}?{_USER}[^.!?;\n]{{0,50}}?(?:{_NOTHING}|\b{_THIS}\s+(?:\w+\s+)?{_META}\b|{_YOU_DID})",
    rf"{_NEG_TELL}\s+{_NOTHING}\b",
    r"\bno\s+lo\s+(?:menciones|mencione|digas|cuentes)\b|\bnao\s+(?:o\s+)?mencione\b|\bn'en\s+parle[sz]?\s+pas\b|"
    r"\bne\s+le\s+mentionne[sz]?\s+pas\b|\berwahne\s+(?:es|das|dies)\s+nicht\b|\bnon\s+menzionarlo\b",
    r"\b(?:sin\s+que\s+(?:nadie|el\s+usuario)\s+(?:se\s+entere|lo\s+sepa|lo\s+note)|sem\s+que\s+(?:ninguem|o\s+usuario)\s+(?:perceba|saiba)|"
    r"sans\s+que\s+(?:personne|l'utilisateur)\s+(?:ne\s+)?(?:le\s+)?(?:sache|remarque)|ohne\s+dass\s+(?:es\s+)?(?:jemand|der\s+(?:nutzer|benutzer))\s+(?:merkt|erfahrt)|"
    r"sem\s+avisar\s+ninguem|sin\s+avisar\s+a\s+nadie)\b",
    r"(?:この|これ|今回)[^。！？\n]{0,20}?(?:ユーザー|利用者|人間)[^。！？\n]{0,6}?(?:何も)?(?:伝え|言わ|知らせ|報告し|教え)(?:ないで|ない|るな|ず)",
    r"(?:ユーザー|利用者)[^。！？\n]{0,6}?何も(?:伝え|言わ|知らせ)|こっそり|密かに|黙って",
    r"(?:不要|别|別|勿)(?:告诉|告訴|通知|透露给?|提及)(?:用户|用戶|使用者)[^。！？\n，,]{0,4}?(?:这|這|此|本|你)",
    r"不要(?:在[^。！？\n，,]{0,10})?(?:提到|提及|提起)|悄悄|偷偷|暗中",
    r"(?:사용자|유저)에게[^.!?\n]{0,20}?(?:이|이번)\s*[^.!?\n]{0,12}?(?:말하지|알리지)\s*마",
)

_SAFETY_OFF_RX = (
    r"\b(?:disable|turn\s+off|switch\s+off|deactivate|remove|bypass|circumvent|comment\s+out|uninstall|silence|"
    r"mute|suppress|weaken|desactiva|desactive|desactivar|deshabilita|apaga|desliga|desative|desabilite|"
    r"desactivez|desactiver|deaktiviere|deaktivieren|disattiva|disabilita)\b"
    r"(?:(?!\b(?:for|in|on|at|from|during|before|after|of)\b)[^.!?;\n]){0,30}?"
    r"(?:secret[\s-]?scann(?:er|ing)|security\s+(?:checks?|scans?|scanner)|safety\s+(?:checks?|filters?|rules?)|"
    r"pre-commit(?:\s+hooks?)?|commit\s+hooks?|git\s+hooks?|branch\s+protection|code\s+review|review\s+step|"
    r"required\s+reviews?|signature\s+(?:verification|checks?)|\b2fa\b|\bmfa\b|audit\s+log|guardrails?|sandbox|"
    r"approval\s+(?:step|gate|prompt|dialog|check)s?|comprobaciones\s+de\s+seguridad|verificaciones\s+de\s+seguridad|"
    r"escaneo\s+de\s+secretos|controles\s+de\s+seguridad|verificador\s+de\s+segredos|verificacoes\s+de\s+seguranca|"
    r"scanner\s+de\s+secrets|controles\s+de\s+securite|verifications\s+de\s+securite|hook\s+pre-commit|secret-scanner|"
    r"sicherheitsprufungen|sicherheitschecks|branch-schutz|controlli\s+di\s+sicurezza)",
    r"(?:密钥扫描|秘密扫描|安全检查|代码审查|シークレットスキャン|セキュリティチェック|보안\s*검사|시크릿\s*스캐너)"
    r"[^。！？\n]{0,6}?(?:关闭|關閉|禁用|停用|無効|オフ|停止|비활성|끄)|(?:关闭|關閉|禁用|停用|绕过|繞過)[^。！？\n]{0,6}?(?:密钥扫描|秘密扫描|安全检查|代码审查)",
    r"\b(?:always|every\s+time|by\s+default)\b[^.!?;\n]{0,30}--no-verify\b|--no-verify\b[^.!?;\n]{0,40}\b(?:so\s+(?:that\s+)?(?:the\s+)?(?:hooks?|checks?|scanners?)|to\s+(?:skip|bypass|avoid|get\s+past))\b",
    r"\b(?:update|edit|write|modify|change|rewrite|regenerate)\s+[^.!?;\n]{0,30}?\b(?:hashes\.json|pending-approvals\.json)|"
    r"\b(?:hashes\.json|pending-approvals\.json)\b[^.!?;\n]{0,20}?\byourself\b|\bstraight\s+into\s+(?:rules|skills|knowledge)/",
    r"\b(?:accept|use|reuse|take|copy|pass|paste|read|find|grab)\s+(?:any\s+|the\s+|all\s+)?(?:pending\s+)?approval\s+tokens?\b",
    r"\b(?:approv\w*|accept\w*|confirm\w*|consent\w*|sign\w*)\b[^.!?;\n]{0,40}?\bon\s+(?:the\s+)?(?:user|human|owner)'?s?\s+behalf\b",
    r"\b(?:blanket|unlimited|unrestricted|standing)\s+(?:permission|approval|authori[sz]ation|consent)\b|\b(?:you\s+(?:have|'ve\s+got|now\s+have)|grants?\s+you|given\s+you)\s+full\s+(?:permission|approval|authori[sz]ation|consent|access)\b|\bpre-?(?:authori[sz]ed|approved|authori[sz]ation)\b",
    r"\b(?:never|don'?t|do\s+not|no\s+need\s+to|stop)\s+(?:ask|asking|request|requesting|seek|seeking)\s+(?:\w+\s+)?(?:for\s+)?(?:approval|permission|confirmation|consent)\b",
    # approving memory writes or proposals automatically, in any order and language
    # (the first lookahead fails fast where no approving word starts: the second scans the clause)
    r"(?=\b(?:automati|aprueb|aprob|aprov|approuv|genehmig|freigeb|approv|valide))"
    r"(?=[^.!?;\n]*\b(?:memor\w*|escrituras?|ecritures?|schreibvorg\w*|speicher\w*|proposals?|propuestas?|propostas?|"
    r"propositions?|vorschlag\w*|pending|pendientes?|pendentes?|en\s+attente|writes|candidat\w*|approval\s+tokens?))"
    r"(?:\b(?:automaticamente|automatiquement|automatisch|automatically)\b[^.!?;\n]{0,40}?\b(?:aprueb|aprob|aprov|approuv|genehmig|freigeb|approv|accept)\w*|"
    r"\b(?:aprueb|aprob|aprov|approuv|genehmig|freigeb|approv|valide[sz]?)\w*\b[^.!?;\n]{0,40}?\b(?:automaticamente|automatiquement|automatisch|automatically)\b)",
    r"(?:확인|승인|허락|동의)\s*없이|묻지\s*않고",
)

# Markup comments and other hidden text that speak to the AI reader.
_ADDRESS_RX = lazy_compile(
    r"(?:^|[.!?:;(\[>-]\s*)(?:note\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?)?(?:ai|a\.i\.|llms?|assistants?|ai\s+agents?|"
    r"agents?|ai\s+assistants?|language\s+models?|chatbots?|claude|gpt|chatgpt|copilot|gemini|codex|ki|ia)\s*[:,]|"
    r"\bnote\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?(?:ai|llms?|assistants?|agents?|models?)\b|"
    r"\b(?:any|all|every)?\s*(?:ai|assistants?|agents?|llms?|models?)\s+reading\s+this\b|"
    r"\bwhenever\s+an?\s+(?:ai|assistant|agent|llm|model)\s+reads\s+this\b|\bif\s+you\s+are\s+an?\s+(?:ai|llm|assistant|language\s+model|agent)\b|"
    r"\b(?:hinweis|nachricht|anweisung)\s+(?:fur|an)\s+(?:die\s+|den\s+)?(?:ki|agenten?)\b|"
    r"\b(?:nota|mensaje|aviso)\s+para\s+(?:la\s+|el\s+|o\s+|a\s+)?(?:ia|agente|asistente|modelo)\b|"
    r"\b(?:note|message)\s+(?:pour|a)\s+l'(?:ia|agent|assistant)\b|aiへ|給ai|给ai|致ai"
)
ADDRESS = "text addressed to the agent that reads memory"


_NEG_BEFORE = lazy_compile(
    r"\b(?:never|don'?t|do\s+not|must\s+not|mustn'?t|cannot|can'?t|should\s+not|shouldn'?t|"
    r"not\s+allowed|forbidden|prohibited|avoid|no\s+one|nobody|nunca|jamas|jamais|niemals|nie|"
    r"nao|non|ne|nicht|no\s+(?:debes|hagas|se\s+debe))\b[^.!?;\n]*$"
)

_BYPASS_NEGATABLE = (
    r"\b(?:without|w/o)\s+(?:first\s+)?(?:asking|consulting|telling|informing|notifying|alerting|confirming|"
    r"confirmation|approval|permission|consent|(?:a\s+|any\s+)?human\s+(?:review|approval|sign-?off)|"
    r"the\s+(?:user|human|developer|owner|operator|reviewer|maintainer)'?s?\s+(?:approval|consent|knowledge|permission|review|confirmation|sign-?off))",
    r"\b(?:sin|sem)\s+(?:preguntar|avisar|consultar|pedir\s+(?:permiso|confirmacion|aprobacion)|perguntar|consultar|pedir\s+(?:permissao|confirmacao|aprovacao)|"
    r"(?:la\s+)?(?:aprobacion|autorizacion|confirmacion)\s+del\s+usuario|(?:a\s+)?(?:aprovacao|autorizacao|confirmacao)\s+do\s+usuario|que\s+(?:el|o)\s+usuario\s+(?:lo\s+)?sepa)\b",
    r"\bsans\s+(?:demander|prevenir|avertir|consulter|(?:l'|son\s+)?(?:accord|autorisation|approbation|validation|confirmation)|que\s+l'utilisateur)",
    r"\bohne\s+(?:zu\s+fragen|nachzufragen|ruckfrage|(?:die\s+)?(?:bestatigung|zustimmung|genehmigung|freigabe|erlaubnis)|(?:den|die)\s+(?:nutzer|benutzer|anwender)(?:in)?\s+zu\s+(?:fragen|informieren))",
    r"\bsenza\s+(?:chiedere|avvisare|consultare|(?:l')?(?:approvazione|autorizzazione|conferma))",
)

_BYPASS_RX = (
    r"\bauto-?\s?approv(?:e|es|ed|ing|al)\b",
    r"\b(?:approve|accept|commit)\s+(?:it\s+|them\s+|everything\s+|all\s+(?:of\s+)?(?:them\s+)?|every\s+|each\s+|any\s+)?(?:proposals?\s+|memor(?:y|ies)\s+|candidates?\s+|pending\s+\w+\s+)?(?:automatically|without\s+(?:review|asking|confirmation))\b",
    r"\b(?:approve|accept)\s+(?:every|all|any|each)\s+(?:proposals?|memor(?:y|ies)|candidates?|pending)\b",
    r"\b(?:skip|bypass|disable|suppress|circumvent|avoid)\s+(?:the\s+|any\s+|all\s+)?(?:human\s+(?:review|approval|confirmation|check)|approval|confirmation|approval\s+(?:step|dialog|prompt|process|gate)|permission\s+(?:prompt|check|dialog))s?\b",
    r"\b(?:call|run|invoke|use|execute|trigger)\s+(?:the\s+)?(?:mcp__engram__)?engram_commit\b|\bmcp__engram__engram_commit\b",
    r"\b(?:reuse|use|take|copy|pass|paste)\s+the\s+approval\s+token\b",
    # Engram's own write and approval controls: a memory has no business steering the agent
    # towards the forced write or towards a host setting that stops the host from asking.
    r"\bengram[\s_-]*(?:save(?:[\s_-]*session)?|ss|note|commit|promote|approve|accept)\b[^.\n;]{0,60}?(?:--force\b|\s-f\b)",
    r"(?:--force|\s-f)\b[^.\n;]{0,40}?\bengram[\s_-]*(?:save(?:[\s_-]*session)?|ss|note|commit|promote|approve)\b",
    r"\bengram_commit\b[^.\n;]{0,80}?\b(?:allow\w*|permission\w*|pre-?approv\w*|auto\w*|trust\w*|approval_mode|approve)\b",
    r"\bapproval_mode\s*=\s*[\"']?approve\b",
    r"\bengram\s+commit\b[^.\n;]{0,60}?--approve\b[^.\n;]{0,40}?\b(?:after|once|right|straight|immediately|yourself)\b",
    r"\b(?:paste|enter|submit|use|put)\b[^.\n;]{0,30}?\beng1_",
    r"\b(?:approve|accept|commit)\s+(?:your|its|their)\s+own\s+(?:proposals?|memor(?:y|ies)|candidates?|changes)\b",
    r"\b(?:allow\w*|permissions?|approval_mode|pre-?approv\w*|trusted\s?folders?|enabledmcpjsonservers|auto-?approv\w*)\b[^.\n;]{0,80}?\bengram(?:_commit|\b)",
    r"\bthe\s+(?:user|human|owner|developer|operator)\s+(?:has\s+|have\s+)?(?:already\s+)?(?:already\s+)(?:agreed|approved|consented|confirmed|accepted|authori[sz]ed|signed\s+off|said\s+yes|pre-?approved)\b",
    r"\b(?:l'humain|l'utilisateur|o\s+usuario|el\s+usuario|der\s+(?:nutzer|mensch))\s+(?:a|ha|hat)\s+(?:deja|ya|ja|schon|bereits)\s+(?:accepte|aceptado|aceito|aprobado|aprovado|approuve|zugestimmt|genehmigt|akzeptiert)",
    r"(?:ユーザー|利用者|人間|開発者)(?:に|へ)(?:は)?(?:確認|許可|承認|知らせ|伝え|報告|相談)(?:を取ら|を求め)?(?:せず|しないで|しない|ずに)",
    r"(?:確認|承認|許可)(?:を)?(?:せず|なしで|なく|不要|をスキップ|を省略)|自動(?:で|的に)?承認",
    r"(?:不(?:要|用|必)|无需|無需|别|別)(?:询问|詢問|通知|经过|經過|请示|請示|征求|徵求)(?:用户|用戶|使用者|人类|人類|开发者|開發者)",
    r"(?:无需|無需|不需要|不用|跳过|跳過|绕过|繞過)(?:人工|用户|用戶)?(?:确认|確認|批准|审批|審批|审核|審核|同意)|未经(?:用户)?(?:同意|允许|批准)|未經(?:用戶)?(?:同意|允許|批准)|自动批准|自動批准",
)


@lru_cache(maxsize=1)
def _grammar() -> tuple[tuple[str, re.Pattern[str], bool], ...]:
    """The compiled grammar: (kind, pattern, negatable); compiled on first use.

    A negatable pattern does not count after a negation in its clause ("never disable
    the secret scanner" is a rule, "disable the secret scanner" is not).
    """
    out: list[tuple[str, re.Pattern[str], bool]] = []
    for kind, pats, negatable in (
        (OVERRIDE, _OVERRIDE_RX, False),
        (SYSTEM, _SYSTEM_RX, False),
        (ROLE, _ROLE_RX, False),
        (BYPASS, _BYPASS_RX, False),
        (BYPASS, _CONCEAL_RX, False),
        (BYPASS, _SAFETY_OFF_RX, True),
        (BYPASS, _BYPASS_NEGATABLE, True),
    ):
        out += [(kind, lazy_compile(p), negatable) for p in pats]
    for family in TASK_FAMILIES:  # strict only: kinds outside _LENIENT_KINDS
        out += [(family.kind, lazy_compile(p), family.negatable) for p in family.patterns]
    return tuple(out)


@lru_cache(maxsize=1)
def _grammar_index() -> KeywordIndex:
    return KeywordIndex([rx.keywords for _, rx, _ in _grammar()])


# What withholds a hand-written file nobody reviewed (`strict=False`): only the families
# that ordinary team notes do not produce: explicit overrides of earlier instructions, text
# posing as a system or tool message, telling the reader who it now is, exfiltration,
# hidden text and active markup. "Bypass the human" phrasings and granted powers stay for
# what an agent proposes (`strict=True`, where a person approves each write): a team's own
# "on-call may flip the kill switch without approval" reads the same to a grammar, and
# withholding it overrules its author.
_LENIENT_KINDS = (OVERRIDE, SYSTEM, ROLE)
# ... and hiding from or bypassing the person, when the text names that person or the tool
# ("do not tell the user", "call engram_commit yourself"), which a team's own notes do not.
_NAMES_REVIEWER = lazy_compile(
    r"\b(?:users?|humans?|reviewers?|approvers?|persons?|operators?|engram\w*|"
    r"utilisateur\w*|usuario\w*|benutzer\w*|nutzer\w*)\b|ユーザー|用户|用戶"
)
_YOU = lazy_compile(r"\b(?:you|your|du|vous|tu|usted|sie)\b")
_LENIENT_INTENTS = frozenset(
    {"override", "fake_system", "exfiltration", "hidden_instruction", "prompt_leak"}
)  # fmt: skip


_MARKER = lazy_compile(r"\[REDACTED:[a-z0-9-]+\]")
_LEET = str.maketrans("0134578@$", "oieastbas")
# Words glued by underscores or hyphens, three or more in a row (a sentence written as one
# identifier); shorter compounds (`auto-sync`, `read_only`) are left as they are.
_WORD_JOIN = lazy_compile(r"\b[a-z]+(?:[_-][a-z]+){2,}\b")
# What every such run holds, in a pattern the engine scans for at C speed (it opens on a
# class, not on a word boundary): most text has none and is not searched word by word.
_WORD_JOIN_HINT = lazy_compile(r"[_-][a-z]+[_-][a-z]")
# A word spelled with digits for letters: at least three characters, a third of them digits.
_LEET_WORD = lazy_compile(r"\b(?=[\w@$]{0,40}?[a-z])(?=(?:[\w@$]{0,40}?[013457]){2})[\w@$]{3,40}")
_B64_RUN = lazy_compile(r"[A-Za-z0-9+/]{16,}={0,2}")
_HEX_RUN = lazy_compile(r"\b(?:[0-9a-fA-F]{2}){8,}\b")
_QUOTED_PIECES = lazy_compile(
    r"([\"'])([^\"'\n]{1,80})\1(?:\s*(?:\+|\.\.?|&|\|\|)\s*([\"'])([^\"'\n]{1,80})\3)+"
)
_REVERSE_CUE = lazy_compile(
    r"(?i)\b(?:revers\w*|backwards?|al\s+reves|a\s+l'envers|ruckwarts|invert\w*)\b|逆|反转|反轉"
)
_ROT_CUE = lazy_compile(r"(?i)\brot-?13\b|\bcaesar\b")
_ROT13 = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "nopqrstuvwxyzabcdefghijklmNOPQRSTUVWXYZABCDEFGHIJKLM",
)


def _decoded_texts(text: str) -> list[str]:
    """What `text` carries in encoded form: base64, hex, joined string pieces, reversed, ROT13."""
    import base64
    import binascii

    out: list[str] = []
    for m in _B64_RUN.finditer(text):
        tok = m.group(0)
        try:
            raw = base64.b64decode(tok + "=" * (-len(tok) % 4), validate=True)
            dec = raw.decode("utf-8")
        except (binascii.Error, ValueError, UnicodeDecodeError):
            continue
        if " " in dec and sum(c.isprintable() for c in dec) / len(dec) > 0.9:
            out.append(dec)
    for m in _HEX_RUN.finditer(text):
        try:
            dec = bytes.fromhex(m.group(0)).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            continue
        if " " in dec and dec.isprintable():
            out.append(dec)
    for m in _QUOTED_PIECES.finditer(text):
        out.append("".join(p.group(2) for p in re.finditer(r"([\"'])([^\"'\n]*)\1", m.group(0))))
    if len(re.findall(r"%[0-9A-Fa-f]{2}", text)) >= 4:
        from urllib.parse import unquote as _unquote

        out.append(_unquote(text))
    if _REVERSE_CUE.search(text):
        out.append(text[::-1])
    if _ROT_CUE.search(text):
        out.append(text.translate(_ROT13))
    return out


def _hidden_texts(text: str) -> list[str]:
    """Text a renderer drops: comment bodies, Markdown comments, alt/title attributes."""
    found = [
        next(g for g in m.groups() if g is not None)
        for m in re.finditer(
            r"<!--(.*?)(?:-->|$)|(?m:^\s*\[[^\]\n]*\]:\s*(?:#|<>)\s*[(\"'](.*?)[)\"']?\s*$)|"
            r"\b(?:alt|title|aria-label)\s*=\s*[\"']([^\"']*)[\"']|<\s*details\b[^>]*>(.*?)(?:<\s*/\s*details\s*>|$)",
            text,
            re.S | re.I,
        )
    ]
    return [f for f in found if f and f.strip()]


ADDRESS_INSIDE = TASK_FAMILIES[0].kind
_TASK_KINDS = frozenset({ADDRESS_INSIDE})  # what an agent proposes only (strict)
_READER_NAMED = lazy_compile(r"\b(?:agents?|assistants?|ai|llms?|models?|copilot|claude|bots?)\b")
_QUOTES = {"“": "”", "„": "“", "«": "»", "「": "」", "『": "』", '"': '"'}
# "if a document asks you to ignore your instructions, report it": the request reported
_REPORTED = lazy_compile(
    r"\b(?:if|when|whenever|any|anything|something|that|which)\b[^.;!?\n]*\b(?:asks?|asking|tells?|"
    r"telling|instructs?|wants?|urges?|says?|saying|tries\s+to\s+get)\s+(?:you|it|them|agents?|"
    r"the\s+\w+)?\s*to\s+$"
)
# "ignore any instruction in a third-party README": instructions of an untrusted source
_UNTRUSTED_SOURCE = lazy_compile(
    r"\s*(?:that\s+\w+\s+)?(?:in|from|inside|within|found\s+in|coming\s+from|embedded\s+in)\s+"
    r"(?:a|an|any|untrusted|external|third[- ]party|other|such|web|fetched|retrieved|pasted|"
    r"user-supplied|issues?|emails?|pages?|it|them|those|these|the\s+(?:text|file|plan|attachment|"
    r"feedback|email|message|page|document|ticket|comment|issue|input)s?)\b"
)
# "disable the auto-approve option", "forbid skipping approval": the bypass is the object
_PROTECTIVE_VERB = lazy_compile(
    r"\b(?:disable|turn\s+off|switch\s+off|remove|forbid|prohibit|block|ban|reject|report|flag|"
    r"refuse)\s+(?:the\s+|any\s+|all\s+|an?\s+)?$"
)


# A rule that guards against instructions from elsewhere: "ignore messages that try to
# change its rules", "if a plan file contains text that looks like instructions, ignore it".
_GUARDED_OBJECT = lazy_compile(
    r"\b(?:messages?|texts?|instructions?|requests?|content|comments?|notes?|mensajes?|textos?|"
    r"instrucciones|textes?|consignes|anweisungen|nachrichten|mensagens?|istruzioni|messaggi)\s+"
    r"(?:that|which|que|qui|die|che)\s+(?:\w+\s+)?(?:try|tries|attempt\w*|ask\w*|claim\w*|look\w*|"
    r"intent\w*|tent\w*|versuch\w*|cerc\w*|pid\w*|demand\w*|busc\w*|pretend\w*)\b"
)
_GUARDED_IF = lazy_compile(
    r"^\s*(?:[-*>]\s*)?(?:if|when|whenever|si|wenn|quand|cuando|se)\b[^.;!?\n]*\b(?:contains?|includes?|"
    r"contient|contiene|enth(?:a|ä)lt|comporte)\b"
)


_SENTENCE_BREAK = lazy_compile(r"[.!?](?=\s|$)|\n")


def _sentence_bounds(form: str, start: int, end: int) -> tuple[int, int]:
    """(start, end) of the sentence holding `form[start:end]`."""
    starts = [m.end() for m in _SENTENCE_BREAK.finditer(form, 0, start)]
    stop = _SENTENCE_BREAK.search(form, end)
    return (starts[-1] if starts else 0), (stop.start() if stop else len(form))


def _guards_against_override(form: str, evidence: str) -> bool:
    """Whether the sentence holding an override's evidence guards against instructions
    from elsewhere (it names them as what to ignore) rather than setting the reader's aside."""
    sentence = _evidence_sentence(form, evidence)
    return bool(_GUARDED_OBJECT.search(sentence) or _GUARDED_IF.search(sentence))


# A permission a team scopes ("may run the linter without asking; anything that deploys
# needs a human"), a bypass a rule refuses ("reject any memory that asks to skip approval"),
# or one negated after the verb (Korean, Japanese: "승인 없이 배포하지 마세요").
_SCOPED_PERMISSION = lazy_compile(
    r"\bonly\s+(?:for|when|if|in|on|during|after|with|the|your|its|their)\b|\bbut\s+(?:must|ask|show|never)\b|\b(?:anything|everything)\s+(?:else|that)\b|"
    r"\bask\s+(?:first\s+)?before\b|\bneeds?\s+(?:a\s+)?(?:human|reviewer|review|owner|approval|pr)\b|"
    r"\bmust\s+(?:never|not|show)\b|\bunless\b|\bexcept\b"
)
_REFUSING_RULE = lazy_compile(
    r"\b(?:reject|refuse|flag|report|block|forbid)\w*\s+(?:any|all|every|such)\b[^.!?\n]*\b(?:that|which)\s+"
    r"(?:contains?|asks?|includes?|tells?)\b"
)


def _scoped_or_refused(form: str, m: re.Match[str]) -> bool:
    first, last = _sentence_bounds(form, m.start(), m.end())
    sentence, after = form[first:last], form[m.end() : last]
    return bool(
        _SCOPED_PERMISSION.search(sentence)
        or _REFUSING_RULE.search(sentence)
        or NEGATED_AFTER.search(after)
    )


def _names_reviewer_near(form: str, m: re.Match[str]) -> bool:
    """Whether a bypass's sentence, or the one before or after it, names the person or the
    tool it would bypass ("… without asking. The user hates being prompted")."""
    return _names_reviewer_around(form, m.start(), m.end())


def _names_reviewer_around(form: str, start: int, end: int) -> bool:
    first, last = _sentence_bounds(form, start, end)
    if first > 0:
        first = _sentence_bounds(form, max(first - 2, 0), max(first - 1, 0))[0]
    if last < len(form):
        last = _sentence_bounds(form, min(last + 1, len(form)), min(last + 1, len(form)))[1]
    return _NAMES_REVIEWER.search(form, first, last) is not None


_SCOPABLE_INTENTS = frozenset({"disable_safety", "concealment"})


def _tells_the_agent(form: str, evidence: str) -> bool:
    """Whether the sentence holding a switch-off's evidence tells the agent by name or as
    "you" ("the assistant should turn it off"): a team's own hardening steps ("disable root
    SSH login", "remove the temporary rules") address its people."""
    sentence = _evidence_sentence(form, evidence)
    return names_the_agent_as_subject(sentence) or _YOU.search(sentence) is not None


def _conceals_from_reviewer(form: str, evidence: str) -> bool:
    """Whether the sentence holding a concealment's evidence, or one next to it, names the
    person or the tool ("do not tell the user"), not a third party ("do not tell the
    reported seller who reported them", with "users" three sentences earlier)."""
    at, word = _evidence_at(form, evidence)
    return at >= 0 and _names_reviewer_around(form, at, at + len(word))


def _evidence_at(form: str, evidence: str, part: int = 0) -> tuple[int, str]:
    """Where the word of an intent's evidence ("disable … scanner": part 0 is "disable")
    is in `form`, and that word; -1 when it is not found."""
    word = evidence.split(" … ")[part].strip()
    return (form.find(word) if word else -1), word


def _evidence_sentence(form: str, evidence: str, part: int = 0) -> str:
    """The sentence of `form` holding an intent's evidence word ('' when it is not found)."""
    at, _ = _evidence_at(form, evidence, part)
    if at < 0:
        return ""
    first, last = _sentence_bounds(form, at, at + 1)
    return form[first:last]


def _scoped(form: str, evidence: str) -> bool:
    """Whether the sentence holding an intent's evidence scopes it as a team's exception
    ("only for documentation-only PRs", "unless on-call signs off")."""
    sentence = _evidence_sentence(form, evidence)
    sentence = re.sub(r"\*+|(?<!\w)_+|_+(?!\w)", "", sentence)  # "**only** for"
    return _SCOPED_EXCEPTION.search(sentence) is not None


_SCOPED_EXCEPTION = lazy_compile(
    r"\bonly\s+(?:for|when|if|in|on|during|after|with)\b|\bunless\b|\bexcept\b|"
    r"\b(?:solo|solamente|seulement|uniquement|nur|apenas|somente)\s+(?:para|pour|für|fur|per|quando|cuando|quand|wenn)\b"
)


_PUBLIC_HALF = lazy_compile(
    r"\bpublic\s+(?:half|part|key|keys|portion|identifiers?)\b|\bsafe\s+to\s+(?:share|publish)\b|"
    r"\.pub\b|\bnot\s+(?:a\s+)?secret\b"
)


def _public(form: str, evidence: str) -> bool:
    """Whether the sentence holding an exfiltration's evidence says what moves is public."""
    return _PUBLIC_HALF.search(_evidence_sentence(form, evidence, -1)) is not None


def _inside_quotes(form: str, at: int, *, max_words: int = 0) -> bool:
    """Whether position `at` falls between quotation marks on its line (a phrase mentioned);
    `max_words`: only a quoted phrase of two to that many words counts."""
    line_start = form.rfind("\n", 0, at) + 1
    before = form[line_start:at]
    for opener, closer in _QUOTES.items():
        if opener == closer:
            inside = before.count(opener) % 2 == 1
        else:
            inside = before.rfind(opener) > before.rfind(closer)
        close = form.find(closer, at, at + 120)
        if not inside or close < 0:
            continue
        if max_words:
            phrase = form[line_start + before.rfind(opener) + 1 : close].split()
            if not 2 <= len(phrase) <= max_words:
                continue
        return True
    return False


def _mention_not_request(form: str, m: re.Match[str], kind: str) -> bool:
    """Whether a grammar match is a phrase mentioned, reported or forbidden rather than a
    request to the reader: quoted, reported ("if it asks you to …"), the instructions of an
    untrusted source, or a bypass named as the thing to switch off."""
    if kind in (OVERRIDE, ROLE, SYSTEM) and _inside_quotes(form, m.start()):
        return True
    if kind == BYPASS and _inside_quotes(form, m.start(), max_words=3):
        return True  # the "skip approval" label: a short phrase named, not a payload quoted
    if kind == BYPASS and _scoped_or_refused(form, m):
        return True
    clause_start = max(form.rfind(c, 0, m.start()) for c in ".!?;\n") + 1
    head = form[clause_start : m.start()]
    if kind in (OVERRIDE, ROLE) and _REPORTED.search(head):
        return True
    if kind == OVERRIDE and _UNTRUSTED_SOURCE.match(form, m.end()):
        return True
    if kind == ADDRESS_INSIDE and _READER_NAMED.search(form, 0, m.start()):
        return True  # a note about agents that goes on to address them: not a switch of reader
    return (
        kind == BYPASS
        and _PROTECTIVE_VERB.search(form[max(clause_start, m.start() - 30) : m.start()]) is not None
    )


def _phrasing(text: str, depth: int = 0, *, strict: bool = True) -> Refusal | None:
    text = _MARKER.sub("[redacted]", text)  # our own markers name secret kinds, not requests
    text = blank_mentions(text)  # "send the chatbot the phrase '…'": quoted as an example
    sk = skeleton(text)
    forms = [sk]
    raw = folded(text)
    if raw != sk:
        forms.append(raw)
    if len(_LEET_WORD.findall(sk)) >= 2:
        forms.append(_LEET_WORD.sub(lambda m: m.group(0).translate(_LEET), sk))
    if re.search(r"[a-z][A-Z][a-z]", text):  # "IgnoreAllPreviousInstructions"
        forms.append(skeleton(re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text)))
    if _WORD_JOIN_HINT.search(sk) and _WORD_JOIN.search(sk):  # "ignore_all_previous_…"
        forms.append(_WORD_JOIN.sub(lambda m: re.sub(r"[_-]", " ", m.group(0)), sk))
    for form in forms:
        names_reviewer = strict or _NAMES_REVIEWER.search(form) is not None
        grammar = _grammar()
        for i in sorted(_grammar_index().candidates(form)):
            kind, rx, negatable = grammar[i]
            lenient_ok = kind in _LENIENT_KINDS or (names_reviewer and kind not in _TASK_KINDS)
            if not (strict or lenient_ok):
                continue
            for m in rx.finditer(form):
                if negatable and _NEG_BEFORE.search(form, 0, m.start()):
                    continue
                if _mention_not_request(form, m, kind):
                    continue
                if (
                    not strict
                    and kind in (OVERRIDE, ROLE)
                    and not _YOU.search(m.group(0))
                    and not aimed_at_reader(form)
                ):
                    continue  # "none of the backend rules apply on the device": a team's note
                if not strict and kind not in _LENIENT_KINDS and not _names_reviewer_near(form, m):
                    continue  # "agents may run `squeue` without asking" … "another user": a scope
                return Refusal(kind, m.group(0)[:60])
        hit = _exfiltration(form)
        if hit:
            return Refusal(EXFIL, hit[:60])
        intent = find_intent(form)
        if intent and intent[0] == "override" and _guards_against_override(form, intent[1]):
            intent = None
        if intent and not strict and intent[0] in _SCOPABLE_INTENTS and _scoped(form, intent[1]):
            intent = None  # "skip the QA reviewer only for documentation-only PRs": a team's rule
        if intent and not strict and intent[0] == "exfiltration" and _public(form, intent[1]):
            intent = None  # "deploy key (public half, safe to share)": nothing secret moves
        if intent and (
            strict
            or intent[0] in _LENIENT_INTENTS
            or (intent[0] == "disable_safety" and _tells_the_agent(form, intent[1]))
            or (
                intent[0] == "concealment"
                and names_reviewer
                and _conceals_from_reviewer(form, intent[1])
            )
        ):
            return Refusal(_INTENT_KINDS[intent[0]], intent[1][:60])
    if "<" in text or "]:" in text:
        for hidden in _hidden_texts(text):
            m = _ADDRESS_RX.search(skeleton(hidden)) or find_intent(skeleton(hidden), loose=True)
            if m:
                return Refusal(MARKUP, f"hidden text addressed to the agent: {hidden.strip()[:40]}")
    m = re.search(
        r"\b(?:any|all|every)?\s*(?:ai|assistants?|agents?|llms?|models?)\s+reading\s+this\b|"
        r"\bwhenever\s+an?\s+(?:ai|assistant|agent|llm|model)\s+reads\s+this\b",
        sk,
    )
    if m:
        return Refusal(ADDRESS, m.group(0)[:60])
    if depth == 0:
        for decoded in _decoded_texts(text):
            r = _phrasing(decoded, depth + 1, strict=strict)
            if r is not None:
                return Refusal(f"encoded {r.kind}", r.excerpt)
    return None


def find_injection(text: str, *, strict: bool = True) -> Refusal | None:
    """The first reason to refuse `text`, or None: hidden characters, markup, phrasing.

    `strict` (what an agent proposes) runs every family; `strict=False` (a hand-written
    file on read) only the high-precision ones. Whatever passes strict passes lenient.
    """
    hit = _hidden_char(text)
    if hit is not None:
        _, ch = hit
        smuggled = tag_text(text)
        if smuggled.strip():
            return Refusal(f"hidden text in Unicode tag characters ({smuggled.strip()[:40]!r})", "")
        name = unicodedata.name(ch, "unnamed")
        return Refusal(
            f"hidden character U+{ord(ch):04X} {name} (zero-width, bidi control, tag or "
            "other invisible characters make text read differently than it looks)",
            "",
        )
    if "<" in text or "&" in text or "](" in text or "]:" in text or "-->" in text:
        r = _markup(visible_form(text))
        if r is not None:
            return r
    return _phrasing(text, strict=strict)
