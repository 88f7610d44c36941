"""Rule tables for what an agent is asked to do to the people and controls around it:
an address slipped into the middle of a note, hiding work from its reviewers, asking a
person for their credentials, weakening a security control.

Each family is data: an id, the kind a refusal names, whether a negation before the
match in its clause ("never ask users for their password") makes it a rule rather than a
request, and its patterns, which run on the normalised form of the text (lower case,
accents and look-alike letters folded). The keyword prefilter reads each pattern's
required words, so a family costs nothing on text that lacks them.

These run on what an agent proposes (strict screening, before a person approves the
write); a hand-written file is not withheld for them.
"""

from __future__ import annotations

from typing import NamedTuple


class TaskFamily(NamedTuple):
    id: str
    kind: str
    negatable: bool
    patterns: tuple[str, ...]


_READER = (
    r"(?:(?:coding|ai|llm|automated|autonomous)\s+)?(?:agents?|assistants?|ai|llms?|"
    r"language\s+models?|copilot|claude|chatgpt|gpt|codex|gemini)"
)

FAMILIES: tuple[TaskFamily, ...] = (
    TaskFamily(
        "address-inside-a-note",
        "text addressed to the agent inside other content",
        False,
        (
            # after a sentence of content, in brackets or after a dash: "… EUR. Also, agents
            # working on payouts should …", "(Agent: while you're there, …)", "Then, assistant, run"
            rf"(?:(?<=[.;!?)\]])\s+|[(\[]\s*|\s[-–—]\s+)(?:(?:also|then|and|btw|ps)[,\s]\s*)?"
            rf"(?:(?:a\s+)?(?:hidden\s+)?note\s+(?:to|for)\s+(?:any|all|the|every)?\s*)?(?:dear\s+)?"
            rf"{_READER}(?:\s+(?:only|reading\s+this|working\s+on\s+[\w-]+|with\s+[\w-]+\s+access))?"
            r"\s*[:,]\s+(?=\w)",
            rf"\bif\s+(?:an?\s+|any\s+)?{_READER}\s+(?:is\s+)?reads?(?:ing)?\s+this\b",
            rf"\bif\s+you\s+are\s+an?\s+{_READER}\b",
            rf"\bfor\s+{_READER}\s+only\b|\b(?:agent|assistant|ai|llm)-only\s+(?:directive|instruction|note)",
            rf"\b{_READER}\s+instructions\s+embedded\b|\bhidden\s+note\s+for\s+{_READER}",
            r"\b(?:hinweis|nachricht)\s+f(?:u|ü)r\s+(?:die\s+)?(?:ki|agenten)\b|"
            r"\bpour\s+les\s+(?:agents?|assistants?)(?:\s+ia)?\s*:|\bpara\s+(?:los\s+|os\s+)?agentes(?:\s+de\s+ia)?\s*:",
        ),
    ),
    TaskFamily(
        "hide-from-review",
        "instruction to hide work from the people who review it",
        False,
        (
            r"\b(?:don'?t|do\s+not|never)\s+(?:mention|list|log|record|include|show|note|report)\s+"
            r"(?:them|it|this|that|these|those|the\s+(?:change|deletion|edit|source|remote|new\s+\w+))\b",
            r"\b(?:the\s+)?(?:reviewers?|approvers?|security\s+team|auditors?)\s+(?:don'?t|do\s+not|doesn'?t|won'?t|never)\s+"
            r"(?:need\s+to\s+know|notice|open|read|check|look)\b",
            r"\bso\s+(?:that\s+)?(?:the\s+)?(?:reviewers?|approvers?|nobody|no\s+one|it|this|nothing)\s+"
            r"(?:doesn'?t|does\s+not|don'?t|won'?t|can'?t)?\s*(?:notices?|stands?\s+out|looks?\s+different|gets?\s+noticed|shows?\s+up)\b",
            r"\b(?:nobody|no\s+one)\s+(?:reads|checks|reviews|looks\s+at|opens|notices)\b",
            r"\bkeep\s+(?:this|it|the\s+\w+)\s+(?:guidance\s+|note\s+|instruction\s+)?(?:confidential|secret|private|quiet|hidden)\b",
            r"\b(?:label|mark|title|describe|name)\s+(?:the\s+|this\s+|your\s+|it\s+)?(?:pr|pull\s+request|commit|change)?\s*(?:as\s+)?['\"‘“](?:docs?|typo(?:\s+fix)?|refactor\w*|chore|cleanup|no\s+functional\s+change)",
            r"\b(?:write|say|put|use)\s+(?:commit\s+messages\s+that\s+say\s+)?['\"‘“](?:no\s+functional\s+change|typo\s+fix|refactoring|docs)['\"’”]",
            r"\bif\s+(?:anyone|someone|somebody|the\s+user|they)\s+asks?\b[^.!?;\n]{0,80}?\b(?:deny|lie\s+about)\s+(?:it|that|this|having|you)\b",
            r"\beven\s+if\s+you\s+(?:didn'?t|did\s+not|haven'?t|have\s+not)\s+(?:check|run|test|verify)",
            r"\bmark\s+every\s+(?:box|item|check\w*)\s+as\s+done\b",
            r"\b(?:delete|remove|erase|truncate|clear)\s+(?:the\s+)?audit\s+(?:log|trail)\b",
            r"\bwithout\s+showing\s+(?:the\s+)?(?:command|change|diff)\b",
            r"\bunrelated-looking\b|\bharmless\s+titles\b",
            r"\bnicht\s+im\s+(?:changelog|pr|commit)\w*\s+erw(?:a|ä)hnen\b",
        ),
    ),
    TaskFamily(
        "credentials-from-a-person",
        "request for a person's credentials",
        True,
        (
            r"\b(?:ask|request|prompt|tell)\w*\b[^.!?;\n]{0,60}?\b(?:their|your|his|her|the\s+user'?s)\s+(?:[\w-]+\s+){0,3}?"
            r"(?:passwords?|passphrases?|tokens?|logins?|credentials|cvv|card\s+(?:number|expiry)|pins?|otp|2fa\s+codes?|recovery\s+codes?)\b",
            r"\brequest\s+the\s+(?:\w+\s+)?(?:password|token|credentials)\s+from\s+(?:the\s+)?(?:user|customer|player|instructor)s?\b",
            r"\b(?:paste|re-?enter|type|confirm)\s+(?:their|your)\s+(?:[\w-]+\s+){0,2}?(?:password|token|credentials|cvv)\b[^.!?;\n]{0,30}?\b(?:chat|ticket|terminal|thread|here)\b",
            r"\b(?:save|store|keep|log)\s+(?:them|it|the\s+(?:password|token|credentials))\b[^.!?;\n]{0,40}?\b(?:memory|notes?|log|file)\b[^.!?;\n]{0,40}?\b(?:reuse|next\s+time|whole\s+team)",
            r"\bwhenever\s+the\s+user\s+pastes\s+(?:credentials|a\s+password|a\s+token)",
        ),
    ),
    TaskFamily(
        "weaken-a-control",
        "instruction to weaken a security control",
        True,
        (
            r"\balways\s+return\s+true\b|\breturn\s+true\s+(?:always|unconditionally)\b|\breturn\s+0\s+from\s+`?\w*verif",
            r"\bskip\s+(?:the\s+)?signature\s+verification\b",
            r"/dev/tcp/|\bcore\.hookspath\s+/dev/null\b",
            r"\bauthorized_keys\b[^.!?;\n]{0,40}?\bevery\s+host\b|\bevery\s+host\b[^.!?;\n]{0,40}?\bauthorized_keys\b",
            r"\b(?:add|create|insert)\s+(?:a\s+)?(?:hidden|secret|backdoor|undocumented)\s+(?:admin\s+)?(?:account|endpoint|user|route|login)\b",
            r"\bsubtle\s+bug\b",
            r"\b(?:whitelist|allowlist|exempt)\b[^.!?;\n]{0,60}?\bfrom\s+(?:all\s+)?(?:anti-?cheat|security|fraud|rate[- ]limit)\w*\s+checks?\b",
            r"\buseradd\b[^\n]*\s-u\s+0\b|\bwith\s+uid\s+0\b",
            r"\b(?:to\s+)?a\s+no-?op\b[^.!?;\n]{0,40}?\b(?:pr|check|verification)\b|\b(?:check|verification)\b[^.!?;\n]{0,40}?\bto\s+a\s+no-?op\b",
            r"\binvent\s+(?:a\s+)?plausible\b",
            r"\bdrop\s+table\s+audit\w*",
            r"\badd\s+themselves\s+to\s+codeowners\b",
            r"\b(?:allow_all_commands|skip_safety_screen)\s*=\s*(?:1|true)\b",
            r"\bcomment\s+out\s+the\s+(?:\w+\s+)?(?:scrubber|sanitizer|sanitiser|redactor|filter|validator)\b",
            r"\bsays\s+the\s+opposite\s+of\s+what\s+it\s+says\b|\bopposite\s+mode\b",
            r"\blower\s+the\s+confidence\s+of\b[^.!?;\n]{0,80}?\bno\s+agent\s+follows\b",
            r"\breplace\b[^.!?;\n]{0,40}?\bwith\s+the\s+literal\s+secret\s+values\b",
        ),
    ),
)
