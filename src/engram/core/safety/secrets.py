"""Secret and personal-data detection: where in a text a secret is, and what kind.

detect-secrets' maintained regex plugins are the core (imported lazily and only when
a text holds a token long enough for one of them to match: the import is slow). Around
them, families of rules cover what a scanner of source files does not see in prose and
config snippets: a keyword assignment in any syntax (`:=`, YAML, TOML, INI, HCL, shell,
CLI flags, SQL `IDENTIFIED BY`, HTTP headers), password sentences in several languages,
credentials in URLs and their query strings, secrets wrapped in base64 or split into
concatenated strings, high-entropy tokens, and personal data checked by structure
(IBAN mod-97, Luhn card numbers, international phone numbers, SSNs, e-mail).

Every span covers the secret value only, never the key or the sentence around it, and
every family rejects what merely looks like a secret: hashes, digests, UUIDs, versions,
placeholders, variable references, and words ("password: required").
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from functools import lru_cache
from itertools import pairwise

from engram.core.safety.identity_numbers import identity_number_spans
from engram.core.safety.normalise import lazy_compile
from engram.core.safety.prefilter import KeywordIndex, Keywords, required

Span = tuple[int, int, str]

# ---------------------------------------------------------------- values

_KNOWN_WORDS = frozenset(
    """required optional hidden masked redacted secret password passwd token key none null nil
    undefined true false yes no on off empty string str int bool bytes any secretstr text
    changeme change_me example sample dummy placeholder default unset auto prompt stdin ask
    vault file env environment sops sealed encrypted enabled disabled value values set unknown
    needed mandatory missing invalid expired rotated same blank test tests testing xxx todo
    tbd n/a na see below above here there this that it is the a an your my our their""".split()
)
_PLACEHOLDER = lazy_compile(
    r"(?i)^(?:<[^>]*>?|\$\{?[\w.:-]*\}?|%[\w.]+%?|\{\{.*\}\}|\{[\w.-]*\}|\(\w+\)|\*+|x{3,}|\.{2,}|…|_+|-+|#+|\?+|"
    r"\[?redacted.*|your[_\- ].*|my[_\-]?(?:password|secret|token|key)|.*_here|<.*|\*{3,}.*|"
    r"(?:secrets|vars|env|inputs|steps|needs|github)\..*|.*\$\{\{.*|op://.*|vault:.*|ref\+.*|"
    r"arn:aws:secretsmanager:.*|projects/.+/secrets/.*|![A-Za-z]+\d{0,2}(?:\s.*)?|\.\.\..*|\$.*|\{.*|replace[_-]?me.*|change[_-]?me.*|insert[_-].*|"
    r"(?-i:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)|%\([\w.]+\)[sdrf]|.*example.*|.*(?:https?|ftp)://.*|[./~]?/.*|"
    r"(?:kv|secrets?|vault|ssm|sm|akv|gsm)/[\w./#:@-]+|.*\{[\w.-]+\}.*)$"
)
_REFERENCE = lazy_compile(
    r"(?i)^(?:process\.env|os\.environ|os\.getenv|env\(|getenv|env\[|env\.|environ|"
    r"config\.|settings\.|self\.|this\.|cfg\.|conf\.|options\.|opts\.|args\.|params\.|request\.|req\.|"
    r"secrets\.|vars\.|context\.|ctx\.|system\.getenv|keyring|getpass|input\(|read|prompt\()"
)
_UUID = lazy_compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_DOTTED_IDENT = lazy_compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(.*)?$")
_TRAIL = ".,;:)]}>"


def _classes(value: str) -> int:
    return sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"\d", r"[^A-Za-z0-9]"))


def _shannon(value: str) -> float:
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values()) if n else 0.0


# Values that name a thing rather than hold a secret: an identifier made of words
# (`secret_key`, `tok_test_visa`), a key pattern with a placeholder (`lg:tok:<token_id>`),
# where the secret is kept ("in 1Password", "under Prod DB"), a host or image reference.
_NAMED_VALUE = lazy_compile(
    r"(?i)^(?:[a-z]+(?:[_-][a-z]+)*[_-](?:key|secret|token|password|pass|pwd|id|name|value)|"
    r"(?:[a-z]+[_-])*(?:test|example|sample|dummy|fake|sandbox|demo|mock)(?:[_-][a-z]+)*|"
    r"[\w.:/-]*<[a-z_][\w-]*>?|(?:in|at|on|from|under|inside|via|stored\s+in|kept\s+in)\s.*|"
    r"(?:[\w-]+\.)+[a-z]{2,}(?::\d+)?/[\w./:@-]*)$"
)


def _is_placeholder(value: str) -> bool:
    v = value.strip().strip("\"'`")
    return (
        not v
        or bool(_NAMED_VALUE.match(v))
        or v.lower() in _KNOWN_WORDS
        or bool(_PLACEHOLDER.match(v))
        or len(set(v.lower())) <= 2
        or v.startswith("[REDACTED")
        or _mostly_repeated(v)
    )


def _mostly_repeated(value: str) -> bool:
    """Whether runs of one character (`XXXXXXXX`, `********`) make up half of `value`: a
    placeholder. A real key may hold such a run (an OpenSSH key's zero bytes are `AAAA…`)."""
    runs = sum(len(m.group(0)) for m in re.finditer(r"([A-Za-z0-9*])\1{7,}", value))
    return runs * 2 >= len(value) > 0


def _is_jose_header(value: str) -> bool:
    """Whether `value` is base64url of a JOSE header (`{"alg": "ES256", …}`), no signature."""
    if not value.startswith("eyJ") or "." in value:
        return False
    decoded = _decode_b64(value)
    return bool(decoded) and bool(re.match(r'\{\s*"(?:alg|typ|kid)"', decoded or ""))


def _random_part(value: str) -> bool:
    """Whether a dotted value holds a long run of mixed letters and digits: a token in parts
    (`v2.SoUJXPmMyICGduRcE1DW`, `pat.<id>.<secret>`), not `config.db_password`."""
    return any(len(p) >= 16 and _classes(p) >= 3 for p in value.split("."))


def _looks_like_word(value: str) -> bool:
    """A plain word or hyphenated words: prose, not a secret."""
    return bool(re.fullmatch(r"[^\W\d_][^\W\d_A-Z]*(?:[-'][^\W\d_]?[^\W\d_A-Z]+)*", value))


_CODE_WORDS = frozenset(
    "await new yield async function lambda null none nil undefined true false this self os "
    "process getenv require import input prompt read".split()
)


# A lower-case identifier of words or short tokens joined by underscores.
_SNAKE_NAME = lazy_compile(r"[a-z][a-z0-9]{0,11}(?:_[a-z][a-z0-9]{0,11})+")
# A digest's length in hex (MD5, SHA-1, SHA-224, SHA-256, SHA-384, SHA-512) after a word
# that names a digest: a checksum, whatever word for "key" stands before it.
_DIGEST = lazy_compile(
    r"[0-9a-fA-F]{32}|[0-9a-fA-F]{40}|[0-9a-fA-F]{56}|[0-9a-fA-F]{64}|[0-9a-fA-F]{96}|[0-9a-fA-F]{128}"
)
_DIGEST_WORD = lazy_compile(
    r"(?i)\b(?:sha-?\d+|md5|digest|hash|checksum|fingerprint|huella|empreinte|pr(?:u|ü)fsumme)\b"
)


# A part of a value that a person fills in (`<uid>`, `{tenant}`, systemd's `%i`), and a
# value that is where a secret is kept (an absolute path, after an optional `name:`).
_TEMPLATE_PART = lazy_compile(r"<[A-Za-z_][\w-]*>|\{[A-Za-z_]\w*\}|%[a-zA-Z](?![\w])")
_FILE_PATH = lazy_compile(r"(?:[\w.-]+:)?(?:/[a-z0-9_.%-]+){2,}/?")


# A media type, a list of alternatives (`ok|bad_password|unknown_cp`), a compound word
# with a format name in it ("base64-encoded", "utf8-safe").
_NOT_A_VALUE = lazy_compile(
    r"(?:application|text|image|audio|video|multipart|font|model)/[\w.+-]+|"
    r"[a-z_]+(?:\|[a-z_]+)+|[a-z]+\d+-[a-z]{3,}(?:-[a-z]{3,})*"
)


def _is_template(value: str) -> bool:
    """Whether `value` is words and separators around parts a person fills in."""
    if not _TEMPLATE_PART.search(value):
        return False
    rest = _TEMPLATE_PART.sub("", value.strip("\"'`"))
    return re.fullmatch(r"[a-z_]*(?:[:/.#-]+[a-z_]*)*", rest) is not None


def plausible_value(value: str, *, quoted: bool, loose: bool, strong: bool) -> bool:
    """Whether `value`, written after a secret's key, is the secret itself.

    `loose` is a prose separator (`:`, "is") where a word is more likely than a secret;
    `strong` is a key that names a password, token or secret (not a bare `key`).
    """
    if _is_placeholder(value) or len(value) < 4:
        return False
    if _is_template(value) or _FILE_PATH.fullmatch(value.strip("\"'`")):
        return False  # `rl:jobstatus:<uid>:<window>`, `name:/etc/credstore/name_%i`: no value
    if _NOT_A_VALUE.fullmatch(value.strip("\"'`")):
        return False  # `application/json`, `ok|bad_password|unknown`, "base64-encoded"
    if not strong and _UUID.fullmatch(value):
        return False  # an idempotency key, a request id: identifiers, not credentials
    if not quoted and (value.startswith("--") or re.fullmatch(r"#[0-9a-fA-F]{3,8}", value)):
        return False  # a flag, a CSS custom property or a colour
    if not quoted and (
        _REFERENCE.match(value)
        or (_DOTTED_IDENT.match(value) and not _random_part(value))
        or "(" in value
        or "[" in value
    ):
        return False
    if re.fullmatch(r"\d{1,3}(?:\.\d+)?|\d{1,3}(?:,\d{3})+(?:\.\d+)?", value):
        return False  # a count, a length, a formatted number
    if re.fullmatch(r"\d+(?:\.\d+)?\s*[–—-]\s*\d+(?:\.\d+)?", value):
        return False  # a range ("6–11")
    if not quoted and _SNAKE_NAME.fullmatch(value):
        return False  # `key: sha256_normalized`: the name of a setting or a column
    if re.fullmatch(r"@[\w.-]+(?:/[\w.-]+)?", value):
        return False  # a package scope or a handle
    if _is_jose_header(value.strip("\"'`")):
        return False  # a JWT's header alone ({"alg": …}): public, it names the algorithm
    if not quoted and value in _CODE_WORDS:
        return False  # `password = await fetchSecret()`: code, not a value
    if loose and not quoted and re.fullmatch(r"(?:[A-Z][a-z]+){2,4}", value):
        return False  # `secret: ByteArray`: a type or a name in CamelCase, not a password
    if not strong:
        if len(re.findall(r"\s", value.strip())) >= 2:
            return False  # prose after a bare `key`: a passphrase is only kept under its name
        words = [
            w for w in re.split(r"[-_:./]", value) if re.fullmatch(r"[A-Z]?[a-z]{2,}|[A-Z]{3,}", w)
        ]
        return (
            len(value) >= 12
            and _classes(value) >= 2
            and not _looks_like_word(value)
            and len(words) < 2
        )
    if loose and not quoted:
        if _looks_like_word(value):
            return False
        return _classes(value) >= 2 or len(value) >= 16
    long_upper = value.isupper() and "_" not in value and len(value) >= 16  # a key, not a name
    if (
        not quoted
        and re.fullmatch(r"[A-Za-z_]+", value)
        and ("_" in value or value.isupper())
        and not long_upper
    ):
        return False  # an identifier: `password = db_password`, `token: GITHUB_TOKEN`
    return not (loose and _looks_like_word(value))


# ---------------------------------------------------------------- keys

_SPLIT_KEY = lazy_compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_STRONG_PARTS = frozenset(
    """password passwd pwd pw passphrase passcode secret secrets token tokens apikey credential
    credentials creds authtoken accesstoken refreshtoken privatekey clientsecret passwort
    kennwort contrasena senha motdepasse skey keymaterial bindpw""".split()
)
_KEY_QUALIFIERS = frozenset(
    """api access secret private signing encryption master client app license auth account
    service subscription shared session admin deploy ssh gpg pgp storage bot consumer partner
    webhook encryption jwt hmac cookie aes rsa""".split()
)
_NON_SECRET_TAIL = frozenset(
    """name names path file files length len policy policies type types field fields header
    headers env var vars ref refs arn manager store provider url uri endpoint min max rotation
    expiry expires expiration ttl timeout count hint prompt label mode format pattern regex
    required enabled method schema dir location source version kind class size strength
    lifetime age days generator placeholder reset change question id ids prefix suffix
    length rules rule help description title id_ template helper validator validation
    count limit limits scope scopes usage flow grant audience issuer algorithm alg seconds secs
    sec ms millis minutes mins hours days weeks bytes attempts retries interval window budget
    endpoint endpoints cache store expired missing error errors message messages invalid
    mismatch incorrect wrong weak short tooltip text caption""".split()
)
# i18n and error-message namespaces: their values are sentences shown to people.
_MESSAGE_NAMESPACE = frozenset(
    """errors error messages message labels label strings i18n l10n validation translations
    texts copy ui""".split()
)


_COMPOUND_STRONG = lazy_compile(
    r"password|passwd|passphrase|passcode|secret(?!ar)|token(?!i[sz])|apikey|"
    r"(?:store|key|src|dest|dst|jks|db|admin|root|user|wifi|vault)pass\b|^psk$"
)


def key_strength(key: str) -> int:
    """2 for a key naming a password/token/secret, 1 for a weak one (`key`, `sig`), else 0."""
    raw = key.strip("\"'`$@-_:").replace("$env:", "")
    parts = [p.lower() for p in _SPLIT_KEY.findall(raw)]
    if not parts:
        return 0
    if "." in raw and raw.split(".", 1)[0].lower() in _MESSAGE_NAMESPACE:
        return 0  # errors.secret_missing: the text of a message
    if "publishable" in parts or ("public" in parts and "key" in parts):
        return 0  # a publishable or public key is public by design
    joined = "".join(parts)
    if joined in _FRAMEWORK_COOKIES or joined.startswith(_SESSION_COOKIE_STEMS):
        return 2  # a framework's session cookie: its value is a logged-in session
    if parts[-1] in ("password", "passwd", "passphrase", "pwd", "secret", "token"):
        return 2  # `keyStorePassword`, `ssl.key.password`: whatever comes before names whose
    if (
        parts[-1] == "id"
        and len(parts) >= 3
        and parts[-2] == "key"
        and parts[-3] in _KEY_QUALIFIERS
    ):
        return 1
    if parts[-1] in _NON_SECRET_TAIL or (len(parts) > 1 and parts[-1] in ("hash", "digest")):
        return 0
    if any(p in _NON_SECRET_TAIL for p in parts[1:]):
        return 0  # token_ttl_seconds, password_reset_url: settings about the secret
    for i, p in enumerate(parts):
        if p == "pat" or _COMPOUND_STRONG.search(p):
            return 2
        two = p + (parts[i + 1] if i + 1 < len(parts) else "")
        if p in _STRONG_PARTS or two in _STRONG_PARTS or p in ("pass",):
            return 2
        if p == "key" and i > 0 and parts[i - 1] in _KEY_QUALIFIERS:
            return 2
        if p == "auth" and (len(parts) == 1 or i == len(parts) - 1):
            return 1 if len(parts) == 1 else 2
    if joined in (
        "key",
        "sig",
        "signature",
        "session",
        "sessionid",
        "sid",
        "cookie",
        "dsn",
        "code",
    ):
        return 1
    if joined in _SESSION_COOKIES:
        return 2
    if parts[0] == "key" and len(parts) == 2 and len(parts[1]) <= 2:
        return 1  # KEY_A, KEY_B: a key kept in pieces
    if (
        parts[-1] in ("key", "signature", "sig", "sid", "sess", "sessid", "session")
        and len(parts) <= 3
    ):
        return 1  # hb_portal_sid, laravel_session: weak, so only a random-looking value counts
    return 0


# Session cookies of common web frameworks, by name (their value is a logged-in session).
_SESSION_COOKIES = frozenset(
    {"jsessionid", "phpsessid", "aspxauth", "aspnetsessionid", "aspsessionid", "connectsid",
     "cisession", "sessionid"}
)  # fmt: skip
# ... and ones whose name would read as an identifier's (`ASP.NET_SessionId`, not `session_id`)
_FRAMEWORK_COOKIES = frozenset(
    {"aspnetsessionid", "gitlabsession", "oauth2proxy", "knownsignin", "rememberusertoken"}
)
_SESSION_COOKIE_STEMS = (
    "wordpressloggedin",
    "wordpresssec",
    "aspnetcorecookies",
    "aspnetcoresession",
)


_KEY_STEM = r"(?:pass|pwd|pw|psk|secret|token|key|auth|cred|sig|cookie|sess|sid|kennwort|contrase|senha|dsn)"
# key, optional closing quote, operator, value (quoted or bare)
_ASSIGN = lazy_compile(
    r"(?<![\w$@.-])(?P<key>\$env:[\w.-]+|-D[A-Za-z_][\w.-]*|--?[A-Za-z][\w-]*|\$?@?[A-Za-z_][\w.-]*)"
    r"(?=(?P<kq>[\"'`]?)\]?[ \t]*(?P<op>\|\|=|\?\?=|&&=|:=|=>|===?|\+=|=|:(?!//)|->|<-)[ \t]*"
    r"(?P<val>\"(?:[^\"\\\n]|\\.){1,200}\"|'[^'\n]{1,200}'|`[^`\n]{1,200}`|[^\s\"'`,;<>]{1,200}))",
)
_TYPED_ASSIGN = lazy_compile(
    r"(?<![\w$@.-])(?P<key>[A-Za-z_]\w*)\s*:\s*&?(?:'static\s+)?[A-Za-z_][\w<>\[\]|.]{0,30}\s*=\s*"
    r"(?P<val>\"(?:[^\"\\\n]|\\.){1,200}\"|'[^'\n]{1,200}')"
)
_DEFINE = lazy_compile(
    r"#\s*define\s+(?P<key>[A-Za-z_]\w*)\s+(?P<val>\"[^\"\n]{1,200}\"|'[^'\n]{1,200}')"
)
_XML = lazy_compile(r"<(?P<key>[\w:.-]{2,40})>(?P<val>[^<\n]{1,200})</(?P=key)>")
_CALL_PAIR = lazy_compile(
    r"[\"'](?P<key>[\w.-]{2,60})[\"']\s*,\s*(?P<val>\"[^\"\n]{1,200}\"|'[^'\n]{1,200}')"
)
_KEY_VALUE_ATTRS = lazy_compile(
    r"\b(?:key|name)\s*=\s*[\"'](?P<key>[\w.:-]{2,60})[\"']\s+value\s*=\s*(?P<val>\"[^\"\n]{1,200}\"|'[^'\n]{1,200}')"
)
_HCL_VARIABLE = lazy_compile(
    r"variable\s+\"(?P<key>[\w-]+)\"\s*\{[^}]*?\bdefault\s*=\s*(?P<val>\"[^\"\n]{1,200}\")", re.S
)
_NETRC = lazy_compile(
    r"(?i)\b(?:login|user(?:name)?)\s+\S+\s+password\s+(?P<val>\S+)|(?m:^[ \t]*password[ \t]+(?P<val2>\S+)[ \t]*$)"
)
_ENV_DIRECTIVE = lazy_compile(r"\b(?:ENV|ARG)\s+(?P<key>[A-Za-z_]\w*)\s+(?P<val>[^\s=]\S*)")
_FLAG_SPACE = lazy_compile(
    r"(?<![\w-])(?P<key>--?[A-Za-z][\w-]*)\s+(?P<val>\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s\"'`;|&<>-][^\s\"'`;|&<>]{0,199})"
)
_MYSQL_P = lazy_compile(
    r"\b(?:mysql|mysqldump|mysqladmin|mariadb(?:-dump)?|mysqlsh|mysqlimport|mysqlcheck)\b[^\n|;&]*?"
    r"\s-p(?P<val>\"[^\"\n]+\"|'[^'\n]+'|[^\s\"']+)"
)
_CLI_SHORT = lazy_compile(
    r"\b(?:sshpass|redis-cli|docker\s+login|podman\s+login|helm\s+registry\s+login|htpasswd\s+-b\w*\s+\S+|"
    r"smbclient|openssl\s+\w+[^\n]*?-(?:pass|passin|passout|k))\b[^\n|;&]*?\s-(?:p|a|k)\s+"
    r"(?P<val>\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'-]\S*)"
)
_USER_PASS_FLAG = lazy_compile(
    r"(?<![\w-])(?:-u|--user|-U|--username)\s+[\"']?[^\s:\"'%]+[:%](?P<val>[^\s\"'@]+)"
)
# Passwords on a command line, program by program: (id, program, what precedes the
# password). Flags are matched as written (`-P` is a password where `-p` is a port); a
# program name in any case. A row is one command's documented password argument.
_CLI_PASSWORD_ROWS: tuple[tuple[str, str, str], ...] = (
    ("mosquitto", r"mosquitto_(?:pub|sub|rr)", r"\s-P\s*"),
    ("mssql", r"sqlcmd|bcp|osql|isql|sqsh", r"\s-P\s*"),
    ("ipmitool", r"ipmitool", r"\s-P\s*"),
    ("zip", r"zip|unzip|zipcloak", r"\s-P\s+"),
    ("azure-cli", r"az\s+login", r"\s(?:-p|--password)[\s=]+"),
    ("ldap", r"ldap(?:search|modify|add|delete|passwd|whoami|compare|modrdn|exop)", r"\s-w\s*"),
    ("rdesktop", r"rdesktop", r"\s-p\s+"),
    ("freerdp", r"[xw]?freerdp3?|sdl-freerdp", r"\s/p:"),
    ("7zip", r"7z[az]?|7zr", r"\s-p(?=\S)"),
    ("rar", r"rar|unrar", r"\s-(?:h?p)(?=\S)"),
    ("mongodb", r"mongo(?:sh|dump|restore|import|export|stat|top)?", r"\s(?:-p|--password)[\s=]+"),
    ("snmp", r"snmp(?:walk|get|getnext|set|bulkwalk|bulkget|trap|table)", r"\s-[AX]\s*"),
    ("java-keystore", r"keytool|jarsigner", r"\s-(?:store|key|src|dest|new)(?:store|key)?pass\s+"),
    ("apksigner", r"apksigner", r"\s--(?:ks|key)-pass\s+pass:"),
    ("openssl", r"openssl", r"\s-pass(?:in|out)?\s+pass:"),
    ("gpg", r"gpg2?", r"\s--passphrase[\s=]+"),
    ("wget", r"wget", r"\s--(?:http-|ftp-|proxy-)?password[\s=]+"),
    ("psexec", r"psexec(?:64)?(?:\.exe)?", r"\s-p\s+"),
    ("lftp", r"lftp", r"\s-u\s+[^\s,]+,"),
    ("htpasswd", r"htpasswd(?=[^\n]*\s-\w*b)", r"(?:\s+-\w+)*\s+[^\s-]\S*\s+[^\s-]\S*\s+"),
    ("rabbitmqctl", r"rabbitmqctl", r"\s+(?:add_user|change_password|authenticate_user)\s+\S+\s+"),
    ("net-use", r"net\s+use", r"(?:\s+(?:[A-Za-z]:|\*))?\s+\\\\\S+\s+(?=[^/\s])"),
    ("net-use-user", r"net\s+use", r"\s/user:\S+\s+(?=[^/\s])"),
    ("mc", r"mc\s+(?:alias\s+set|config\s+host\s+add)", r"\s+\S+\s+\S+\s+\S+\s+"),
    ("aws-cli", r"aws\s+configure\s+set", r"\s+aws_secret_access_key\s+"),
    (
        "kubectl-secret",
        r"kubectl\s+create\s+secret",
        r"\s--from-literal=[\w.-]*(?i:pass|secret|token|key|pwd)[\w.-]*=",
    ),
    ("vault-login", r"vault\s+login", r"\s(?:\S+=\S+\s+)*password="),
    ("nmcli", r"nmcli", r"\s(?:password|wifi-sec\.psk|802-11-wireless-security\.psk)\s+"),
    ("wpa", r"wpa_passphrase", r"\s+\S+\s+"),
    ("oracle", r"sqlplus|sqlldr|expdp|impdp|exp|imp|rman|dgmgrl", r"(?:\s+-\w+)*\s+[\w$#]+/"),
    ("powershell", r"ConvertTo-SecureString", r"\s+(?:-String\s+)?(?=[\"'])"),
    ("sudo-stdin", r"echo", r"\s+(?=\S+\s*\|\s*sudo\s+-S)"),
    ("vncpasswd", r"vncpasswd", r"\s-f\s*<<<\s*"),
    ("rclone", r"rclone", r"\sobscure\s+"),
    ("cloudsmith", r"cloudsmith", r"\s(?:-k|--api-key)[\s=]+"),
    ("semaphore", r"sem", r"\s+connect\s+\S+\s+"),
    (
        "key-file-echo",
        r"cryptsetup|veracrypt|openssl|gpg2?",
        r"\s--?key-?file[\s=]+<\(\s*echo(?:\s+-n)?\s+",
    ),
    ("curl-token-user", r"curl", r"\s(?:-u|--user)\s+[\"']?(?=[A-Za-z0-9_-]{20,}:(?:[\s\"']|$))"),
)
_CLI_VALUE = r"(?P<val>\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'`|;&]+)"
_CLI_PASSWORDS = tuple(
    lazy_compile(rf"(?<![\w/.-])(?i:{program})\b[^\n|;&]*?{before}{_CLI_VALUE}")
    for _, program, before in _CLI_PASSWORD_ROWS
)
# Other places a password sits in a command or a connection line.
_PASSWORD_SPOTS = (
    lazy_compile(r"\bWIFI:(?:[^;\n]*;)*?P:(?P<val>(?:\\.|[^;\\\n])+)"),  # Wi-Fi QR codes
    lazy_compile(r"(?<![\w/])[\w$#.-]+/(?P<val>[^\s@/\"'`]{4,})@//?[\w-]+(?:\.[\w-]+)+(?::\d+)?/"),
    lazy_compile(r"\becho\s+['\"]?[\w.-]+:(?P<val>[^\s'\"]+)['\"]?\s*\|\s*(?:sudo\s+)?chpasswd\b"),
)
_SQL = lazy_compile(
    r"(?i)\bidentified\s+(?:with\s+\w+\s+)?by\s+(?:password\s+)?(?P<q>['\"]?)(?P<val>[^'\"\s;]+)(?P=q)|"
    r"\b(?:with\s+|encrypted\s+|alter\s+user\s+\S+\s+)?password\s*=?\s*N?(?P<q2>['\"])(?P<val2>[^'\"\n]{3,})(?P=q2)|"
    r"\bsp_(?:addlogin|password)\s+(?:N?'[^']*'\s*,\s*)?N?(?P<q3>')(?P<val3>[^'\n]{3,})(?P=q3)"
)
_SQL_USER = lazy_compile(r"(?i)\b(?:create|alter)\s+(?:user|role|login)\b")
_AUTH_HEADER = lazy_compile(
    r"(?i)\b(?:bearer|token|basic|digest|apikey|api-key|sso-key)\s+(?P<val>[A-Za-z0-9._~+/=:-]{8,})"
)
_PASSWORD_WORD = (
    r"passwords?|passphrase|passcode|pass\s*word|(?:admin|root|db|database|user|login|wifi|wi-fi|ssh|vpn|"
    r"account|master|app|sudo|mysql|postgres|grafana|jenkins|ftp|smtp)\s+pass|passwort|kennwort|contrase[nñ]a|clave(?:\s+de\s+acceso)?|"
    r"mot\s+de\s+passe|mdp|senha|palavra-passe|wachtwoord|parola\s+d'ordine|lösenord|losenord|hasło|haslo|"
    r"heslo|salasana|adgangskode|passord|lykilor[dð]\w*|geslo|parole|parool\w*|jelsz(?:[oó]|ava|avak)|[sş]ifre|parola|κωδικός|ה?סיסמ[הא]|كلمة\s+المرور|पासवर्ड|m[aậ]t\s+kh[aẩ]u|kata\s+sandi|(?:recovery|backup|rescue|break-?glass)\s+codes?|пароль|api[\s_-]?key|access\s+key|secret\s+key|secret|token|pin\s+code|clé\s+api|cl[eé]\s+secr[eè]te|"
    r"chave\s+(?:de\s+api|secreta)|chave\s+d[ae]\s+api|chiave\s+(?:api|segreta)|clave\s+(?:de\s+)?api|(?:api-?)?schl(?:ü|ue)ssel|cl[eé]\s+d'api|pw|pwd|jeton(?:\s+d'acc[eè]s)?|(?-i:PIN)|"
    r"pasfhocal|پټنوم|(?-i:PAT)|i?phasiwedi|loyniorð\w*|ਪਾਸਵਰਡ|পাসওয়ার্ড|கடவுச்சொல்|పాస్‌?వర్డ్|ಪಾಸ್‌?ವರ್ಡ್"
)
_SENTENCE = lazy_compile(
    rf"(?i)\b(?:{_PASSWORD_WORD})\b(?:\s+[^\s.!?;:]+){{0,9}}?\s*"
    r"(?:\bis(?:\s+now|\s+still)?\b|\bwas\b|\bequals\b|\breads\b|\bes\b|\bera\b|\best\b|\bétait\b|\betait\b|\bé\b|"
    r"\bist(?:\s+jetzt|\s+immer\s+noch)?\b|\blautet\b|\blautete\b|\bwar\b|\bsera\b|\bvaut\b|\bè\b|\bfue\b|"
    r"\bset\s+to\b|\bchanged\s+to\b|\bto\b|\bje\b|\bon\b|\bär\b|\bar\b|\ber\b|\bjest\b|\bir\b|\bolarak\b|\bsigue\s+siendo\b|\bcontinua\s+sendo\b|\bvale\b|\bείναι\b|\bήταν\b|\bná\b|\bithi\b|\badalah\b|"
    r"(?<!\S)(?:היא|הוא)(?!\S)|\s[—–]|=|:)"
    r"\s*(?:(?:now|still|ahora|agora|maintenant|jetzt|nun)\s+)?"
    r"(?P<q>[\"'`«“„‘]?)\s*(?P<val>[^\s\"'`»”“‘’]{4,100})"
)
_SENTENCE_SET = lazy_compile(
    rf"(?i)\b(?:set|change|reset|update|use|with|using|login\s+with|log\s+in\s+with|con|com|avec|mit|usa|use\s+a)\s+"
    rf"(?:the\s+|la\s+|a\s+|o\s+|le\s+|das\s+|dem\s+|el\s+)?(?:\w+\s+)?(?:{_PASSWORD_WORD})\s+(?:to\s+|=\s*|:\s*)?"
    r"(?P<q>[\"'`«“„‘]?)(?P<val>[^\s\"'`»”“‘’]{4,100})"
)
# The value before its name: "Winter2024Secure is the SMTP password".
_VALUE_FIRST = lazy_compile(
    rf"(?i)(?<![\w@./-])(?P<val>[^\s\"'`]{{6,64}})\s+is\s+(?:the|our|my|his|her|their|what)\s+"
    rf"(?:[\w-]+\s+){{0,4}}?(?:{_PASSWORD_WORD}|types\s+at\s+the\s+(?:sudo|login|password)\s+prompt)\b"
)
_BARE_KEYWORD = lazy_compile(rf"(?i)\b(?:{_PASSWORD_WORD})\s+(?P<val>[^\s\"'`]{{6,100}})")
_RESET_TO = lazy_compile(r"(?i)\b(?:reset|changed|rotated|set)\s+to\s+(?P<val>[^\s\"'`]{8,100})")
_PASSPHRASE = lazy_compile(
    r"(?i)\bpass\s*phrase\b[^.\n]{0,40}?\b(?:is|was|:)\s+(?P<val>[^.;\n\"]{8,80}?)(?=[.;\n\"]|$)"
)
_CRED_PAIR = lazy_compile(
    r"(?i)\b(?:login|credentials?|creds|user(?:name)?|zugangsdaten|acceso|acesso|identifiants)\b[^.\n]{0,30}?"
    r"(?::|\s(?:is|are))\s*[^\s/]{1,100}\s*/\s*(?P<val>[^\s,;]{1,200})"
)
_SPELLED = lazy_compile(
    rf"(?i)\b(?:{_PASSWORD_WORD})\b[^:\n]{{0,50}}:\s*(?P<val>(?:[A-Za-z0-9]{{1,8}}\s){{3,}}[A-Za-z0-9]{{1,8}})(?=\s*(?:$|[.;,)]))"
)
_CJK_SENTENCE = lazy_compile(
    r"(?:パスワード|暗証番号|密码|密碼|口令|비밀번호|トークン|令牌|api\s*キー|密钥|密鑰|秘钥|รหัสผ่าน|"
    r"ពាក្យសម្ងាត់|စကားဝှက်|ລະຫັດຜ່ານ)"
    r"[^\s!-~]{0,40}?(?:は|が|：|:|是|为|為|=|는|은|:|คือ\s?|៖|(?P<sp>(?<=[^\s!-~])\s))\s*[「『“\"']?\s*(?P<val>[!-~]{4,100}?)(?=[」』”\"'\s。、，,]|です|だ|で|$|[^!-~])"
)

# ---------------------------------------------------------------- URLs

_URL = lazy_compile(r"\b[a-z][a-z0-9+.-]{1,30}://[^\s<>\"'`)\]]+", re.I)
_USERINFO = lazy_compile(r"^[a-z][a-z0-9+.-]*://(?P<user>[^:@/\s]*)(?::(?P<pw>[^@/\s]*))?@", re.I)
_QUERY_PARAM = lazy_compile(r"[?&;#](?P<key>[\w.\-\[\]]+)=(?P<val>[^&#\s\"'<>)]+)")
_QUERY_STRONG = frozenset(
    """sig signature x-amz-signature x-amz-security-token x-amz-credential x-goog-signature
    x-goog-credential access_token accesstoken auth auth_token authtoken apikey api_key api-key
    key client_secret password pass pwd passwd token secret session sessionid sid jwt code
    private_token privatetoken refresh_token id_token sharedaccesssignature sas appid app_key
    appkey access_key accesskey t""".split()
)

# ---------------------------------------------------------------- known formats

_KNOWN_FORMATS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "private-key",
        lazy_compile(
            r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?=(?:\\n|\s)*[A-Za-z0-9+/]{20}).*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)",
            re.DOTALL,
        ),
    ),
    ("private-key", lazy_compile(r"PuTTY-User-Key-File-\d:.*?(?:Private-MAC:\s*\S+|$)", re.DOTALL)),
    ("private-key", lazy_compile(r"\bAGE-SECRET-KEY-1[0-9A-Z]{50,}")),
    ("jwt", lazy_compile(r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}")),
    (
        "aws-access-key",
        lazy_compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b"),
    ),
    (
        "aws-secret-key",
        lazy_compile(
            r"(?i:aws.{0,20}?(?:secret|sk).{0,20}?)\W{0,4}(?P<val>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
    ),
    ("google-api-key", lazy_compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("google-oauth", lazy_compile(r"\bGOCSPX-[A-Za-z0-9_-]{20,}|\bya29\.[A-Za-z0-9_-]{20,}")),
    (
        "github-token",
        lazy_compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})"),
    ),
    (
        "gitlab-token",
        lazy_compile(r"\bgl(?:pat|dt|rt|ptt|cbt|oas|soat|ft|imt|agent|ffct)-[A-Za-z0-9_-]{20,}"),
    ),
    ("honeycomb-key", lazy_compile(r"\bhc[ax]ik_[a-z0-9]{50,}")),
    ("asana-token", lazy_compile(r"(?<![\w/])[12]/\d{10,20}/\d{10,20}:[0-9a-f]{32}(?![0-9a-f])")),
    ("calcom-key", lazy_compile(r"\bcal_live_[0-9a-f]{32}\b")),
    ("slack-token", lazy_compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}")),
    (
        "webhook-url",
        lazy_compile(
            r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<val>[A-Za-z0-9/_-]{20,})"
        ),
    ),
    (
        "webhook-url",
        lazy_compile(r"discord(?:app)?\.com/api/webhooks/(?P<val>\d+/[A-Za-z0-9_-]{20,})"),
    ),
    ("webhook-url", lazy_compile(r"outlook\.office\.com/webhook/(?P<val>[A-Za-z0-9@/_-]{20,})")),
    (
        "api-key",
        lazy_compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|\bwhsec_[A-Za-z0-9]{20,}"),
    ),
    (
        "api-key",
        lazy_compile(r"\bsk-(?:proj-|ant-(?:api\d\d-)?|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    ),
    ("api-key", lazy_compile(r"\bnpm_[A-Za-z0-9]{36}\b|\bpypi-[A-Za-z0-9_-]{50,}")),
    (
        "api-key",
        lazy_compile(r"\bhf_[A-Za-z0-9]{30,}|\bdop_v1_[a-f0-9]{64}|\bdo[or]_v1_[a-f0-9]{64}"),
    ),
    ("api-key", lazy_compile(r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}")),
    ("api-key", lazy_compile(r"\bkey-[0-9a-f]{32}\b|\b[0-9a-f]{32}-us\d{1,2}\b")),
    (
        "api-key",
        lazy_compile(r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b|\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b"),
    ),
    (
        "api-key",
        lazy_compile(
            r"\bdapi[a-f0-9]{32}\b|\blin_api_[A-Za-z0-9]{40}\b|\bsecret_[A-Za-z0-9]{43}\b"
        ),
    ),
    (
        "api-key",
        lazy_compile(
            r"\b(?:hvs|hvb|hvr)\.[A-Za-z0-9_-]{24,}|\bdp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{1,30}\.)?[A-Za-z0-9]{40,}"
        ),
    ),
    (
        "api-key",
        lazy_compile(
            r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b|\bglc_[A-Za-z0-9+/]{32,}={0,2}|\bNRAK-[A-Z0-9]{27}\b"
        ),
    ),
    (
        "api-key",
        lazy_compile(
            r"\b(?:AC|SK)[0-9a-f]{32}\b|\bsq0(?:atp|csp)-[0-9A-Za-z_-]{22,}|\bEAAA[A-Za-z0-9_-]{60,}"
        ),
    ),
    (
        "api-key",
        lazy_compile(
            r"\b(?:xkeysib|xsmtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}\b|\bAKC[a-zA-Z0-9]{10,}"
        ),
    ),
    ("api-key", lazy_compile(r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b")),  # Telegram bot
    (
        "api-key",
        lazy_compile(r"\b[MNO][A-Za-z\d_-]{23,25}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,38}\b"),
    ),  # Discord bot
    (
        "api-key",
        lazy_compile(
            r"\bAccountKey=(?P<val>[A-Za-z0-9+/=]{40,})|\bSharedAccessKey=(?P<val2>[A-Za-z0-9+/=]{20,})"
        ),
    ),
    ("api-key", lazy_compile(r"\b(?:LTAI|AKLT|AKID)[A-Za-z0-9]{12,}\b")),
    # One row per vendor's published token shape: a prefix no ordinary word has.
    ("api-key", lazy_compile(r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b")),  # Airtable
    ("api-key", lazy_compile(r"\bsk\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")),  # Mapbox secret
    ("api-key", lazy_compile(r"\boy2[a-z0-9]{43}\b")),  # NuGet
    ("api-key", lazy_compile(r"\bAQE[A-Za-z0-9]{3}[A-Za-z0-9+/=._-]{60,}")),  # Adyen
    ("api-key", lazy_compile(r"\bATATT3[A-Za-z0-9_=-]{60,}|\bATBB[A-Za-z0-9]{28,}")),  # Atlassian
    (
        "api-key",
        lazy_compile(
            r"\b(?:sbp_[a-f0-9]{40}|sntryu_[a-f0-9]{64}|sntrys_[A-Za-z0-9+/=_]{50,}|sb_secret_[A-Za-z0-9_-]{20,})"
        ),
    ),  # Supabase, Sentry
    (
        "api-key",
        lazy_compile(
            r"\b(?:nfp|ntn|dckr_pat|pnu|figd|gsk|r8|tfp|bkua|sq[pau]|glcbt|fo1)_[A-Za-z0-9_=.-]{20,}"
        ),
    ),  # Netlify, Notion, Docker Hub, Prefect, Figma, Groq, Replicate, Typeform, Buildkite, SonarQube, Fly
    (
        "api-key",
        lazy_compile(
            r"\bpplx-[A-Za-z0-9]{40,}|\bxai-[A-Za-z0-9]{60,}|\bCFPAT-[A-Za-z0-9_-]{40,}|"
            r"\bCCIPAT_[A-Za-z0-9]{20,}_[a-f0-9]{40}\b|\bHRKU-[A-Za-z0-9_-]{40,}|\bpul-[a-f0-9]{40}\b"
        ),
    ),  # Perplexity, xAI, Contentful, CircleCI, Heroku, Pulumi
    (
        "api-key",
        lazy_compile(
            r"\bdt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}\b|\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_-]{60,}|"
            r"\bops_eyJ[A-Za-z0-9_-]{50,}|\btskey-(?:auth|api|client|webhook)-[A-Za-z0-9]{6,}-[A-Za-z0-9]{16,}"
        ),
    ),  # Dynatrace, Terraform Cloud, 1Password service account, Tailscale
    (
        "api-key",
        lazy_compile(r"(?<![\w~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}"),
    ),  # Entra ID
    (
        "api-key",
        lazy_compile(
            r"\brubygems_[a-f0-9]{48}\b|\bCLOJARS_[a-z0-9]{60}\b|\bshippo_live_[a-f0-9]{40}\b|"
            r"\bEZAK[a-f0-9]{54}\b|\bFLWSECK-[a-f0-9]{32}-X\b|\bsl\.[A-Za-z0-9_-]{120,}|"
            r"\baccess_token\$production\$[0-9a-z]{16}\$[0-9a-f]{32}|\baccess-production-[a-f0-9-]{36}"
        ),
    ),  # RubyGems, Clojars, Shippo, EasyPost, Flutterwave, Dropbox, Braintree, Plaid
    ("api-key", lazy_compile(r"\bAAAAAAAAAAAAAAAAAAAAA[A-Za-z0-9%]{30,}|\by0_[A-Za-z0-9_-]{50,}")),
    ("recovery-code", lazy_compile(r"(?<![\d-])\d{6}(?:-\d{6}){7}(?![\d-])")),  # BitLocker
    (
        "card-security-code",
        lazy_compile(
            r"(?i)\b(?:cvv2?|cvc2?|cv2|cid|csc|security\s+code)\b\s*[:=]?\s*(?P<val>\d{3,4})\b"
        ),
    ),
)

# ---------------------------------------------------------------- personal data

_EMAIL = lazy_compile(
    r"(?<![\w.%+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b(?![\w.-]*[:/])"
)
_IBAN = lazy_compile(
    r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ \t-]?[A-Za-z0-9]){11,30}(?![A-Za-z0-9])"
)
_IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28,
    "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
    "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
    "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20,
    "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18,
    "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24,
    "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23, "TN": 24,
    "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}  # fmt: skip
_CARD = lazy_compile(r"(?<![\w.,-])(?:\d[ -]?){12,18}\d(?![\d.,-]?\d)(?![A-Za-z])")
# Numbers that payment providers publish for testing; they charge nothing.
_TEST_CARDS = frozenset(
    """4242424242424242 4000056655665556 5555555555554444 2223003122003222 5200828282828210
    5105105105105100 378282246310005 371449635398431 6011111111111117 6011000990139424
    3056930009020004 36227206271667 3566002020360505 6200000000000005 4111111111111111
    4012888888881881 4222222222222 5431111111111111 30569309025904 38520000023237
    6011601160116611 5019717010103742 4000000000000002 4000000000009995 4000002500003155
    4000000000003220 4000000000000077 4000000000000093 4000000000000341 3530111333300000
    4917610000000000 4462030000000000 4484070000000000 4988438843884305 5500000000000004
    4035501000000008 4360000001000005 6771798021000008 2222400070000005 4000002760003184
    4000003800000446 4000008400001629 4000000000000101 4000000000000069 4000000000000127
    4000000000000119 4000000000000259""".split()
)
_PHONE_INTL = lazy_compile(
    r"(?<![\w+/.=#-])\+\d{1,3}(?:[ .-]?\(\d{1,4}\))?(?:[ .-]?\d{1,5}){1,6}(?![\w.]?\d)"
)
_PHONE_00 = lazy_compile(r"(?<!\d\s)(?<![\w/.=#-])00[1-9]\d{0,2}(?:[ .-]\d{1,5}){2,6}(?![\w.]?\d)")
_PHONE_NANP = lazy_compile(
    r"(?<![\w/.=#-])\(\d{3}\)[ .-]?\d{3}[ .-]\d{4}(?!\d)|(?<![\w/.=#:-])\d{3}[-.]\d{3}[-.]\d{4}(?![\w.-]?\d)"
)
_PHONE_CONTEXT = lazy_compile(
    r"(?i)\b(?:phone|tel|telephone|mobile|cell|fax|call|sms|whatsapp|signal|hotline|pager|"
    r"tel[eé]fono|telefone|celular|m[oó]vil|t[eé]l[eé]phone|portable|telefon|handy|"
    r"telefono|cellulare|rappeler|appeler|anrufen|llamar|ligar)\b|電話|电话|携帯|手机|手機|連絡先|联系电话|联系方式|聯絡電話|연락처|\\b(?:contact|kontakt|contato|contacto)\\b"
)
_PHONE_NATIONAL = lazy_compile(r"(?<![\w/.=#:-])\(?0?\d{2,5}\)?(?:[ .-]?\d{2,5}){1,4}(?![\w.-]?\d)")
_PHONE_FR = lazy_compile(r"(?<![\w/.=#:-])0[1-9](?:[ .-]\d{2}){4}(?![\w.-]?\d)")
_NI_NUMBER = lazy_compile(
    r"(?<![A-Za-z0-9])[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![A-Za-z0-9])"
)
_TAX_ID_DE = lazy_compile(r"(?<![\d-])[1-9]\d ?\d{3} ?\d{3} ?\d{3}(?![\d-])")
# `.pgpass` lines: host:port:database:user:password (PostgreSQL's password file).
_PGPASS = lazy_compile(
    r"(?m)(?:^|(?<=[\s`'\"]))(?=[\w.*-]*[A-Za-z*])[\w.*-]+:(?:\d{2,5}|\*):[\w*.-]+:[\w*.@-]+:(?P<val>[^\s`'\"]{6,})"
)
_SSN_CONTEXT = lazy_compile(r"(?i)\b(?:ssn|social\s+security|sozialversicherungs\w*)\b")
_SSN_BARE = lazy_compile(r"(?<![\w-])(?!000|666|9\d\d)\d{3}(?!00)\d{2}(?!0000)\d{4}(?![\w-])")
# Spanish DNI / NIE: eight digits (or X/Y/Z and seven) and the check letter of mod 23.
_DNI = lazy_compile(r"(?<![\w-])(?P<num>[XYZxyz]?\d{7,8})-?(?P<letter>[A-Za-z])(?![\w-])")
_DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"
_SSN = lazy_compile(r"(?<![\w-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\w-])")


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _tax_id_de_ok(digits: str) -> bool:
    """The ISO 7064 MOD 11,10 check digit of a German tax id (Steuer-IdNr)."""
    if len(digits) != 11 or digits[0] == "0":
        return False
    product = 10
    for ch in digits[:10]:
        total = (int(ch) + product) % 10 or 10
        product = (total * 2) % 11
    return (11 - product) % 10 == int(digits[10])


def iban_ok(candidate: str) -> bool:
    """Whether a string is an IBAN: known country length and the ISO 13616 mod-97 check."""
    s = re.sub(r"[\s-]", "", candidate).upper()
    if not re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}", s):
        return False
    known = _IBAN_LENGTHS.get(s[:2], 0)
    if known and known != len(s):
        return False
    rearranged = s[4:] + s[:4]
    if int("".join(str(int(c, 36)) for c in rearranged)) % 97 != 1:
        return False
    return bool(known) or _iban_of_a_newer_country(s)


def _iban_of_a_newer_country(s: str) -> bool:
    """A country the table above lacks (IBAN keeps growing: Libya, Oman, Sudan, …): ask
    python-stdnum's registry, loaded only for a string that already passed mod 97."""
    from stdnum import iban

    return bool(iban.is_valid(s))


_MACHINE_EMAIL = lazy_compile(
    r"(?i)@(?:[\w-]+\.)*(?:gserviceaccount\.com|users\.noreply\.github\.com|noreply\.[\w.-]+)$|"
    r"^(?:no-?reply|do-?not-?reply|mailer-daemon)@"
)


# Documentation and reserved names (RFC 2606, RFC 6761, RFC 8375, ICANN's .internal) are no
# one's address: `qa@example.com`, `tech@acme.test`, `bob@printer.local` are test data.
_RESERVED_DOMAIN = lazy_compile(
    r"(?i)@(?:[\w-]+\.)*(?:example|invalid|localhost|test|local|internal|home\.arpa|"
    r"example\.(?:com|net|org|edu))$|@(?:[\w-]+\.)*example(?:\.[a-z]{2,3}){1,2}$"
)


# Role mailboxes (RFC 2142 and their common kin) reach a team, not a person.
_ROLE_MAILBOX = lazy_compile(
    r"(?i)(?:security|privacy|dpo|gdpr|legal|conduct|abuse|postmaster|hostmaster|webmaster|support|"
    r"help|helpdesk|info|contact|hello|sales|billing|accounts|finance|press|media|jobs|careers|hr|"
    r"ops|devops|sre|oncall|on-call|alerts|noc|soc|compliance|dmca|copyright|trust|safety|admin|"
    r"team|engineering|dev|developers|releases?|notifications?|feedback|partners?|vendors?|"
    r"incident|incidents|status|it|servicedesk|procurement|licensing|opensource|oss)@"
)


# What is written after a card number on its line, whatever the language: its expiry
# (`01/29`, `09/2028`) and its security code (a group of three or four digits).
_CARD_EXPIRY = lazy_compile(r"(?<![\d/])(?:0[1-9]|1[0-2])\s?/\s?(?:20)?\d\d(?![\d/])")
_CARD_CODE = lazy_compile(r"(?<![\w.,/:-])\d{3,4}(?![\w,/:-]|\.\d)")
_CARD_DETAILS_WITHIN = 80


def _card_details(text: str, after: int) -> list[Span]:
    """The expiry and security code written after a real card number, on its line."""
    end = text.find("\n", after)
    end = min(after + _CARD_DETAILS_WITHIN, len(text) if end < 0 else end)
    return [
        (m.start(), m.end(), kind)
        for rx, kind in ((_CARD_EXPIRY, "card-number"), (_CARD_CODE, "card-security-code"))
        for m in rx.finditer(text, after, end)
    ]


# A date of birth: a date right after its label (a label a person writes in many
# languages), and a home address: the rest of the line after its label, when it holds a
# number. Both name a person; a date or a street alone does not.
_DOB = lazy_compile(
    r"(?i)(?:\bdate\s+of\s+birth|\bd\.?o\.?b\b\.?|\bborn(?:\s+on)?|\bbirth\s*date|\bbirthday|"
    r"\bgeb\.|\bgeboren(?:\s+am)?|\bgeburtsdatum|\bnar\.|\bnarozena?|\bdatum\s+narozen[íi]|"
    r"\bn[ée]e?\s+le|\bdate\s+de\s+naissance|\bfecha\s+de\s+nacimiento|\bnacid[oa]\s+el|"
    r"\bdata\s+de\s+nascimento|\bdata\s+di\s+nascita|\bnat[oa]\s+il|\bdata\s+urodzenia|"
    r"\bdo[gğ]um\s+tarihi|\btanggal\s+lahir|\bsz[üu]let[ée]si\s+d[áa]tum|\bf[öo]delsedatum|"
    r"\bf[øo]dselsdato|\bsyntym[äa]aika|\bдата\s+рождения|\bдата\s+народження|"
    r"\bsz[üu]letett|\bf[öo]dd|\bf[øo]dt|\bsyntynyt|\bnacimiento|\balizaliwa|\bdyddiad\s+geni|"
    r"\bs[üu]nniaeg|\bdzimšanas\s+datums|დაბადების\s+თარიღი|ծննդյան\s+ամսաթիվ|"
    r"生年月日|出生日期|생년월일|పుట్టిన\s+తేదీ|जन्म\s+तिथि|जन्मतिथि|জন্ম\s+তারিখ|تاريخ\s+الميلاد)"
    r"[\s:：,(（-]{0,4}"
    r"(?P<date>\d{1,2}\.\s?\d{1,2}\.\s?\d{4}|\d{1,2}[/-]\d{1,2}[/-]\d{4}|\d{4}-\d{2}-\d{2}|"
    r"\d{4}\s?年\s?\d{1,2}\s?月\s?\d{1,2}\s?日|\d{4}\s?년\s?\d{1,2}\s?월\s?\d{1,2}\s?일|"
    r"\d{4}\.\s?\d{1,2}\.\s?\d{1,2}|\d{4}\.\s?[^\W\d_]{3,12}\s+\d{1,2}\.?|"
    r"\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{4}|"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2},?\s+\d{4})"
)
_HOME_ADDRESS = lazy_compile(
    r"(?i)(?:\b(?:home|private|residential|personal|postal)\s+address|\bmy\s+home|"
    r"\bhjemmeadresse|\bwoonadres|\bthuisadres|\bbostadsadress|\bkotiosoite|\bwohnadresse|\bprivatadresse|\bwohnanschrift|\bbydli[sš]t[eě]|\badresa\s+bydli[sš]t[eě]|"
    r"\bdirecci[óo]n\s+(?:particular|personal|de\s+casa)|\badresse\s+(?:personnelle|priv[ée]e|"
    r"du\s+domicile)|\bdomicilio|\bendere[çc]o\s+residencial|\bindirizzo\s+di\s+casa|"
    r"\balamat\s+rumah|\bdomowy\s+adres|\badres\s+zamieszkania|\bev\s+adresi|\bhemadress|"
    r"\blakc[íi]m|\bresidence|\bhome(?=\s*:)|자택\s*주소|\badresse\s+du\s+client|\bbilling\s+address|"
    r"\bkodune\s+aadress|\bcyfeiriad\s+cartref|\bmakazi|"
    r"\bдомашн(?:ий|ій)\s+адрес[аи]?|自宅住所|自宅の住所|住所|家庭住址|住址|집\s*주소)"
    r"[^\n:：]{0,40}[:：]\s*(?P<address>[^\n]{6,120})"
)


# The person a date of birth belongs to, written just before it on its line: two to four
# capitalised words ("Juan Carlos Méndez, fecha de nacimiento …") or, in a script without
# capitals, one to three words ("박서연 생년월일 …").
_NAME_BEFORE = lazy_compile(
    r"(?:^|(?<=[\n:;(]))[ \t]*(?P<name>(?:[^\W\d_][^\s\d_,.:;()]*[ \t]){0,4}[^\W\d_][^\s\d_,.:;()]*),?[ \t]*$"
)


_NAME_PARTICLES = frozenset(
    "de da del dela della der den di du la le van von ap bin binti al el".split()
)


def _name_before(text: str, at: int) -> tuple[int, int] | None:
    """The span of the name that stands right before `at` on its line, if one does: the
    capitalised words (and particles such as "dela", "van") that end there, at least two, or
    in a script without capitals the words of the clause."""
    line_start = text.rfind("\n", 0, at) + 1
    m = _NAME_BEFORE.search(text, line_start, at)
    if not m:
        return None
    words = list(re.finditer(r"\S+", m.group("name")))
    if all(w.group(0)[0].lower() == w.group(0)[0].upper() for w in words):
        return m.start("name"), m.end("name")  # no capitals in this script
    kept: list[re.Match[str]] = []
    for w in reversed(words):
        word = w.group(0)
        if word in _NAME_PARTICLES or (word[0].isupper() and not word.isupper()):
            kept.insert(0, w)
        else:
            break  # "patient", "DOB": the name, if any, starts after it
    while kept and kept[0].group(0) in _NAME_PARTICLES:
        kept.pop(0)
    if sum(w.group(0) not in _NAME_PARTICLES for w in kept) < 2:
        return None  # "Patient", "The contractor's": a label or a sentence, not a name
    return m.start("name") + kept[0].start(), m.start("name") + kept[-1].end()


def _personal_detail_spans(text: str) -> list[Span]:
    out: list[Span] = []
    for m in _DOB.finditer(text):
        out.append((m.start("date"), m.end("date"), "date-of-birth"))
        name = _name_before(text, m.start())
        if name:
            out.append((*name, "date-of-birth"))
    for m in _HOME_ADDRESS.finditer(text):
        value = m.group("address").rstrip(" .;")
        if value[0].islower() or not re.search(r"\d", value):
            continue  # "… home address: see the CRM record": a pointer, not an address
        if not _is_placeholder(value) and "<" not in value:
            out.append((m.start("address"), m.start("address") + len(value), "home-address"))
    return out


# Numbers reserved for fiction and documentation: North America's 555-01xx, the UK's
# 07700 900xxx, Australia's 0491 570–572 xxx.
_FICTIONAL_PHONE = lazy_compile(r"(?:55501\d\d|7700900\d{3}|49157[0-2]\d{3})$")


def _pii_spans(text: str) -> list[Span]:
    out: list[Span] = _personal_detail_spans(text)
    for m in _EMAIL.finditer(text):
        line_before = text[text.rfind("\n", 0, m.start()) + 1 : m.start()]
        if line_before.endswith("://") or re.search(
            r"\b(?:ssh|scp|rsync|sftp|mosh|git\s+clone|git\s+remote|ssh-copy-id)\b", line_before
        ):
            continue
        found = m.group(0)
        if _MACHINE_EMAIL.search(found) or _ROLE_MAILBOX.match(found):
            continue  # service accounts and no-reply senders name machines, not people
        if _RESERVED_DOMAIN.search(found):
            continue  # a documentation or test address
        out.append((m.start(), m.end(), "email"))
    for m in _IBAN.finditer(text):
        s = m.group(0)
        # the match may run into a following word: shrink until it checks
        for end in range(len(s), 14, -1):
            if iban_ok(s[:end]):
                out.append((m.start(), m.start() + len(s[:end].rstrip(" -")), "iban"))
                break
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group(0))
        if (
            13 <= len(digits) <= 19
            and _luhn_ok(digits)
            and digits not in _TEST_CARDS
            and len(set(digits)) > 2
        ):
            out.append((m.start(), m.end(), "card-number"))
            out.extend(_card_details(text, m.end()))
    for rx in (_PHONE_INTL, _PHONE_00, _PHONE_NANP):
        for m in rx.finditer(text):
            digits = re.sub(r"\D", "", m.group(0))
            if 8 <= len(digits) <= 15 and not _FICTIONAL_PHONE.search(digits):
                out.append((m.start(), m.end(), "phone"))
    if _PHONE_CONTEXT.search(text):
        for m in _PHONE_NATIONAL.finditer(text):
            digits = re.sub(r"\D", "", m.group(0))
            before = text[max(0, m.start() - 40) : m.start()]
            if (
                9 <= len(digits) <= 12
                and not _FICTIONAL_PHONE.search(digits)
                and _PHONE_CONTEXT.search(before)
                and not re.fullmatch(r"(?:19|20)\d\d[-./]\d\d[-./]\d\d", m.group(0))
            ):
                out.append((m.start(), m.end(), "phone"))
    for m in _SSN.finditer(text):
        out.append((m.start(), m.end(), "ssn"))
    if _SSN_CONTEXT.search(text):
        for m in _SSN_BARE.finditer(text):
            out.append((m.start(), m.end(), "ssn"))
    for m in _DNI.finditer(text):
        num = m.group("num").upper()
        num = str("XYZ".index(num[0])) + num[1:] if num[0] in "XYZ" else num
        if len(num) == 8 and _DNI_LETTERS[int(num) % 23] == m.group("letter").upper():
            out.append((m.start(), m.end(), "national-id"))
    for m in _PHONE_FR.finditer(text):
        out.append((m.start(), m.end(), "phone"))
    ni_context = None  # looked up once: per match it made long lists of numbers quadratic
    for m in _NI_NUMBER.finditer(text):
        if ni_context is None:
            ni_context = bool(re.search(r"(?i)\bNI(?:NO)?\b|national\s+insurance", text))
        if " " in m.group(0) or ni_context:
            out.append((m.start(), m.end(), "national-id"))
    tax_context = None
    for m in _TAX_ID_DE.finditer(text):
        digits = m.group(0).replace(" ", "")
        spaced = m.group(0).count(" ") == 3
        if tax_context is None:
            tax_context = bool(re.search(r"(?i)steuer|tax\s*id|idnr", text))
        context = tax_context
        if (spaced and context) or ((spaced or context) and _tax_id_de_ok(digits)):
            out.append((m.start(), m.end(), "national-id"))
    return out


# ---------------------------------------------------------------- families


def _value_span(m: re.Match[str], group: str = "val") -> tuple[int, int, str, bool]:
    """(start, end, value, quoted) of a value group, quotes and trailing punctuation off."""
    s, e = m.span(group)
    v = m.group(group)
    quoted = len(v) >= 2 and v[0] in "\"'`" and v[-1] == v[0]
    if quoted:
        return s + 1, e - 1, v[1:-1], True
    stripped = v.rstrip(_TRAIL)
    if stripped.endswith(("!", "?")) and not re.search(r"[\d!?]", stripped[:-1]):
        stripped = stripped.rstrip("!?")
    return s, s + len(stripped), stripped, False


@lru_cache(maxsize=1)
def _password_patterns() -> tuple[tuple[re.Pattern[str], ...], KeywordIndex]:
    """The patterns of a password given on a command line or in a sentence, and the index
    that picks, in one pass, those a text may match (most texts match none of the 39)."""
    patterns = (_MYSQL_P, _CLI_SHORT, _USER_PASS_FLAG, _PGPASS, *_CLI_PASSWORDS, *_PASSWORD_SPOTS)
    return patterns, KeywordIndex([rx.keywords for rx in patterns])  # type: ignore[attr-defined]


def _assignment_spans(text: str) -> list[Span]:
    out: list[Span] = []
    patterns, index = _password_patterns()
    for i in sorted(index.candidates(text)):
        for m in patterns[i].finditer(text):
            s, e, value, quoted = _value_span(m)
            if not _is_placeholder(value) and len(value) >= 3:
                out.append((s, e, "password"))
    for m in _NETRC.finditer(text):
        g = "val" if m.group("val") else "val2"
        s, e, value, quoted = _value_span(m, g)
        if not _is_placeholder(value) and len(value) >= 4:
            out.append((s, e, "password"))
    for m in _SQL.finditer(text):
        g = next(g for g in ("val", "val2", "val3") if m.group(g))
        if g == "val" and not m.group("q"):  # unquoted: only in a statement making a user
            line_start = text.rfind("\n", 0, m.start()) + 1
            if not _SQL_USER.search(text, line_start, m.start()):
                continue  # "identified by UUID only": prose
        s, e, value, quoted = _value_span(m, g)
        if not _is_placeholder(value) and len(value) >= 3:
            out.append((s, e, "password"))
    if not re.search(_KEY_STEM, text, re.I):
        return out
    for m in _ASSIGN.finditer(text):
        key = m.group("key")
        strength = key_strength(key)
        if not strength:
            continue
        if text[max(0, m.start("key") - 2) : m.start("key")] == "${":
            continue  # `${DB_PASSWORD:?set me}`: a shell expansion and its message, no value
        s, e, value, quoted = _value_span(m)
        op = m.group("op")
        if not quoted and text[e : e + 1] == ":":
            continue  # the "value" is itself a key (`tokens: --brand-500: #3b82f6`)
        if (
            m.group("val").startswith("`")
            and text.count("`", text.rfind("\n", 0, m.start()) + 1, m.start()) % 2
        ):
            continue  # `KEY=` closes a code span: the backtick ends the span, the value is empty
        loose = op == ":" and not m.group("kq") and not key.startswith("-")
        if op == "->":
            continue
        if plausible_value(value, quoted=quoted, loose=loose, strong=strength == 2):
            out.append((s, e, "secret-assignment"))
    for rx in (
        _XML,
        _ENV_DIRECTIVE,
        _CALL_PAIR,
        _HCL_VARIABLE,
        _KEY_VALUE_ATTRS,
        _TYPED_ASSIGN,
        _DEFINE,
    ):
        for m in rx.finditer(text):
            strength = key_strength(m.group("key"))
            if strength:
                s, e, value, quoted = _value_span(m)
                if plausible_value(value, quoted=quoted, loose=False, strong=strength == 2):
                    out.append((s, e, "secret-assignment"))
    for m in _FLAG_SPACE.finditer(text):
        strength = key_strength(m.group("key"))
        if strength == 2 and "stdin" not in m.group("key").lower():
            s, e, value, quoted = _value_span(m)
            if plausible_value(value, quoted=quoted, loose=True, strong=True):
                out.append((s, e, "secret-assignment"))
    return out


def _sentence_spans(text: str) -> list[Span]:
    out: list[Span] = []
    for rx in (_SENTENCE, _SENTENCE_SET, _CJK_SENTENCE):
        for m in rx.finditer(text):
            s, e, value, quoted = _value_span(m)
            if _DIGEST.fullmatch(value) and _DIGEST_WORD.search(text, m.start(), s):
                continue  # "signed with the release key (its certificate SHA-256: …)"
            if quoted or m.groupdict().get("q"):
                quoted = True
                value = value.rstrip("\"'`»”“‘’")
                e = s + len(value)
            if rx is _CJK_SENTENCE:
                ok = plausible_value(value, quoted=True, loose=False, strong=True) and (
                    _classes(value) >= 2 or len(value) >= 8
                )
                if m.group("sp"):  # no copula, only a space: a word after it is prose
                    ok = ok and _classes(value) >= 3 and len(value) >= 8
            else:
                ok = plausible_value(value, quoted=False, loose=True, strong=True) and (
                    _classes(value) >= 2 and not re.fullmatch(r"[A-Z][a-z]+", value)
                )
            if ok:
                out.append((s, e, "password"))
    for m in _SPELLED.finditer(text):  # "spelled out: 4 Z m 1 z I y A …", "bQN4 pkqF 1OIu …"
        pieces = m.group("val").split()
        joined = "".join(pieces)
        if sum((len(p) >= 3 and _looks_like_word(p)) or p.isdigit() for p in pieces) * 3 > len(
            pieces
        ):
            continue  # a sentence after the colon ("min 12 chars, one digit")
        if _classes(joined) >= 3 or (_classes(joined) >= 2 and len(joined) >= 12):
            out.append((m.start("val"), m.end("val"), "password"))
    for rx in (_BARE_KEYWORD, _RESET_TO, _CRED_PAIR, _VALUE_FIRST):
        for m in rx.finditer(text):
            s, e, value, _ = _value_span(m)
            if _is_placeholder(value) or _looks_like_word(value):
                continue
            bare = value.strip("()[]*_")
            if len(bare) < 6 or re.fullmatch(r"\.\w{1,6}", bare):
                continue  # "API key (.p8)**": a file type in an aside, not a value
            if bare != value and (_looks_like_word(bare) or re.fullmatch(r"[A-Z][a-z]+", bare)):
                continue  # "an API key (Sunpool does)": a name in an aside
            if (
                _classes(value) >= 3
                or (_classes(value) >= 2 and re.search(r"\d", value) and len(value) >= 10)
                or (len(bare) >= 32 and re.fullmatch(r"[A-Z0-9]+", bare))
            ):
                out.append((s, e, "password"))
    for m in _PASSPHRASE.finditer(text):
        s, e, value, _ = _value_span(m)
        if len(value.split()) >= 3 and not _is_placeholder(value):
            out.append((s, e, "password"))
    return out


def _placeholder_pair(value: str) -> bool:
    """Whether a Basic credential is base64 of a placeholder pair ("username:password")."""
    decoded = _decode_b64(value)
    if not decoded or ":" not in decoded:
        return False
    return all(
        _is_placeholder(part) or part.lower() in ("user", "username", "pass", "password", "login")
        for part in decoded.split(":", 1)
    )


# An `Authorization:` header whatever its scheme (`Splunk <token>`, `SSWS <token>`).
_AUTHORIZATION = lazy_compile(
    r"(?i)\b(?:proxy-)?authorization\s*[:=]\s*[\"']?[A-Za-z][\w-]{1,20}\s+(?P<val>[A-Za-z0-9._~+/=:-]{16,})"
)


def _auth_header_spans(text: str) -> list[Span]:
    out: list[Span] = []
    for m in (*_AUTH_HEADER.finditer(text), *_AUTHORIZATION.finditer(text)):
        s, e, value, _ = _value_span(m)
        if re.match(r"(?i)(?:sha-?(?:1|224|256|384|512)|md5|blake2b?)[:=-]", value):
            continue  # "image digest sha256:…": a content digest, not the Digest scheme
        before = text[max(0, m.start() - 1) : m.start()]
        if before.isalnum():
            continue
        if _is_placeholder(value) or _looks_like_word(value) or _classes(value) < 2:
            continue
        if _placeholder_pair(value):
            continue  # base64 of "username:password": the docs' example header
        if len(value) >= 12 or re.search(r"\d", value):
            out.append((s, e, "bearer-token"))
    return out


# `user:password@host` without a scheme (Go and JDBC-style DSNs, rsync, proxies).
_BARE_USERINFO = lazy_compile(
    r"(?<![\w/:.@-])[\w.-]{1,40}:(?P<val>[^\s:@/\"'()]{4,100})@(?=(?:tcp|unix|udp)\(|[\w-]+(?:\.[\w-]+)+)"
)


def _url_spans(text: str) -> list[Span]:
    out: list[Span] = []
    if "@" in text:
        for m in _BARE_USERINFO.finditer(text):
            value = m.group("val")
            if (
                not _is_placeholder(value)
                and _classes(value) >= 2
                and not re.fullmatch(r"\d+", value)
            ):
                out.append((m.start("val"), m.end("val"), "connection-string"))
    if "://" not in text and "?" not in text and "&" not in text:
        return out
    for m in _URL.finditer(text):
        url = m.group(0)
        u = _USERINFO.match(url)
        if u:
            pw, user = u.group("pw"), u.group("user")
            if pw and not _is_placeholder(pw):
                out.append(
                    (m.start() + u.start("pw"), m.start() + u.end("pw"), "connection-string")
                )
            elif not pw and user and len(user) >= 16 and _classes(user) >= 2:
                out.append(
                    (m.start() + u.start("user"), m.start() + u.end("user"), "connection-string")
                )
    for m in _QUERY_PARAM.finditer(text):
        key = m.group("key").lower()
        value = m.group("val").rstrip(_TRAIL)
        if key in _QUERY_STRONG or key_strength(key) == 2:
            weak = key in ("key", "code", "sid", "session", "auth", "appid", "t")
            if _is_placeholder(value) or len(value) < (10 if weak else 6):
                continue
            if weak and _classes(value) < 2:
                continue
            if key == "t" and (len(value) < 24 or _classes(value) < 3):
                continue  # `?t=1699999999`: a timestamp; a magic-link token is long and mixed
            s = m.start("val")
            out.append((s, s + len(value), "url-secret"))
    return out


# A run of base64, also right after `=` (`TLS_KEY_B64=LS0t…`).
_B64_TOKEN = lazy_compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/]{16,}={0,2}(?![A-Za-z0-9+/=_-])")
_B64URL_TOKEN = lazy_compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])")


def _decode_b64(token: str) -> str | None:
    t = token.rstrip("=")
    for alt in (None, b"-_"):
        try:
            raw = base64.b64decode(t + "=" * (-len(t) % 4), altchars=alt, validate=True)
        except (binascii.Error, ValueError):
            continue
        try:
            out = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if out and sum(c.isprintable() or c in "\n\r\t" for c in out) / len(out) > 0.95:
            return out
    return None


def _wrapped_spans(text: str, depth: int) -> list[Span]:
    """Base64 that decodes to text holding a secret, and secrets split into quoted pieces."""
    out: list[Span] = []
    if depth > 0:
        return out
    for rx in (_B64_TOKEN, _B64URL_TOKEN):
        for m in rx.finditer(text):
            decoded = _decode_b64(m.group(0))
            if (
                decoded
                and len(decoded) >= 8
                and not _placeholder_pair(m.group(0))
                and (
                    "PRIVATE KEY" in decoded
                    or (
                        re.search(r"^[^:\s]{1,64}:[^\s]{3,}$", decoded)
                        and text[max(0, m.start() - 12) : m.start()]
                        .lower()
                        .rstrip()
                        .endswith(
                            ("basic", "_auth=", "_auth =", "auth:", 'auth":', "authorization:")
                        )
                    )
                    or secret_spans(decoded, depth=depth + 1)
                )
            ):
                out.append((m.start(), m.end(), "base64-secret"))
    # hex of a credential (`6a6f686e3a7333…` is "john:s3cr3t…"); digests decode to bytes
    for m in _HEX_RUN.finditer(text):
        try:
            decoded = bytes.fromhex(m.group(0)).decode("ascii")
        except ValueError:
            continue
        if decoded.isprintable() and (
            re.fullmatch(r"[^:\s]{1,64}:[^\s]{3,}", decoded) or secret_spans(decoded, depth=1)
        ):
            out.append((m.start(), m.end(), "hex-secret"))
    # "ghp_" + "abc…": pieces of one literal joined by an operator
    for m in re.finditer(
        r"([\"'])([^\"'\n]{2,})\1(?:\s*(?:\+|\.\.?|&|\|\||,|\s)\s*([\"'])([^\"'\n]{2,})\3)+", text
    ):
        pieces = list(re.finditer(r"([\"'])([^\"'\n]*)\1", m.group(0)))
        joined = "".join(p.group(2) for p in pieces)
        if (len(joined) >= 16 and _known_format_spans(joined)) or _entropy_spans(
            joined, standalone=False
        ):
            for p in pieces:
                out.append((m.start() + p.start(2), m.start() + p.end(2), "split-secret"))
    return out


_HEX_RUN = lazy_compile(r"(?<![0-9A-Fa-f])(?:[0-9a-fA-F]{2}){8,}(?![0-9A-Fa-f])")
_ENTROPY_TOKEN = lazy_compile(r"(?<![\w+/=-])[A-Za-z0-9+/_-]{16,}={0,2}(?![\w+/=-])")
_PUBLIC_BLOCK = lazy_compile(
    r"-----BEGIN (?:PUBLIC KEY|CERTIFICATE|RSA PUBLIC KEY|PGP PUBLIC KEY BLOCK|X509 CRL)-----.*?(?:-----END[^-]*-----|$)|"
    r"\b(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp\d+|sk-ssh-ed25519@openssh\.com)\s+[A-Za-z0-9+/=]+|"
    r"\bdata:[\w/+.-]+;base64,[A-Za-z0-9+/=]+",
    re.S,
)
_HASH_CONTEXT = lazy_compile(
    r"(?i)(?:sha\d*|md5|digest|hash|checksum|commit|revision|rev|etag|uuid|guid|nonce|"
    r"integrity|fingerprint|build|image|tag|run|job|trace|request|correlation|object|blob|"
    r"tree|ref|id|h1|zh|sum|@)[\s:=@\"'#-]*$"
)
_SECRET_CONTEXT = lazy_compile(
    r"(?i)\b(?:key|token|secret|password|passwd|credential|auth|bearer|api|private|signature|"
    r"hmac|salt|access|session|cookie|webhook|dsn|license|seed|pat)\w*\b[^.\n]{0,60}$"
)


_STRIPE_OBJECT = lazy_compile(
    r"^(?:ch|cus|po|pi|pm|in|sub|si|price|prod|evt|acct|txn|re|src|card|seti|tr|py|ba|btok|cs|ii|il|"
    r"inv|plink|qt|file|link|pyr|prv|ich|iauth|ipi|cbtxn|dp|fee|payatt)_[A-Za-z0-9]{8,}$"
)
_PUBLIC_CONTEXT = lazy_compile(
    r"(?i)\b(?:public|pub)[\s_-]?keys?\b(?:\s+(?:is|was|reads|equals))?[\s:=\"'`(]*$|"
    r"\b(?:minisign|signify)\b[^\n]{0,80}\s-P\s*$|"
    r"\b(?:minisign|signify)\s+public\s+key\b(?![^\n]*\b(?:private|secret)\b)[^.]{0,60}$"
)


def _benign_base64(token: str) -> bool:
    """Base64 of ordinary prose (a greeting, a banner): printable words, nothing secret."""
    if len(token) < 16 or len(token) % 4 == 1:
        return False
    decoded = _decode_b64(token)
    if not decoded or len(decoded) < 8:
        return False
    # without spaces, only base64 of a JSON document that is no token header ({"alg": …})
    json_doc = decoded.startswith("{") and decoded.rstrip().endswith("}") and '"alg"' not in decoded
    if " " not in decoded and not json_doc:
        return False
    printable = sum(c.isprintable() for c in decoded) / len(decoded)
    return printable > 0.95 and not secret_spans(decoded, depth=1)


def _entropy_spans(text: str, *, standalone: bool = True) -> list[Span]:
    out: list[Span] = []
    public = [m.span() for m in _PUBLIC_BLOCK.finditer(text)]
    for m in _ENTROPY_TOKEN.finditer(text):
        if any(ps <= m.start() < pe for ps, pe in public):
            continue
        word = m.group(0)
        core = word.strip("=-_")
        if len(core) < 20 or re.fullmatch(r"(?:sha\d+|md5)-.*|pk_(?:live|test)_.*", core, re.I):
            continue
        if _is_jose_header(core):
            continue  # a JWT header alone names an algorithm
        if re.fullmatch(r"[0-9a-fA-F-]+", core):  # hashes, digests, UUIDs, SHA pins
            before_hex = text[max(0, m.start() - 60) : m.start()]
            if (
                re.fullmatch(r"[0-9a-fA-F]{32,}", core)
                and re.search(
                    r"(?i)(?:\b|(?<=[a-z]))(?:key|secret|token|password|unseal|signing)\b[^.\n]{0,45}$",
                    before_hex,
                )
                and not _HASH_CONTEXT.search(before_hex)
            ):
                out.append((m.start(), m.end(), "hex-key"))  # "the unseal key is <64 hex>"
            continue
        if re.fullmatch(r"[\d_-]+", core) or not re.search(r"\d", core):
            continue
        if _STRIPE_OBJECT.match(core):
            continue  # a Stripe object id (payout, charge, customer…): an identifier
        if re.match(r"\d{4}[-./]\d{2}[-./]\d{2}", core):
            continue
        if len([w for w in re.split(r"[-_]", core) if re.fullmatch(r"[A-Za-z]{3,}", w)]) >= 2:
            continue  # a structured name (deps-linux-<hash>), not a random token
        if "/" in core and all(
            re.fullmatch(r"[A-Za-z._-]*\d{0,4}[A-Za-z._-]*", p) for p in core.split("/")
        ):
            continue  # a path
        if core.startswith(("/", "./", "~/")) or text[m.start() - 1 : m.start()] in ("/", "."):
            continue  # a path whose segments (hashes, ids) are not secrets
        if (
            "/" in core
            and sum(bool(re.fullmatch(r"[A-Za-z][A-Za-z-]*\d{0,3}", p)) for p in core.split("/"))
            >= 3
        ):
            continue  # a resource name (projects/x/locations/y/pipelines/<id>)
        before = text[max(0, m.start() - 80) : m.start()]
        if _HASH_CONTEXT.search(before) or _PUBLIC_CONTEXT.search(before):
            continue
        if word.endswith("=") and _placeholder_pair(word):
            continue
        if _benign_base64(core):
            continue
        context = bool(_SECRET_CONTEXT.search(before))
        ent = _shannon(core)
        classes = _classes(core)
        limit = 3.5 if context else 4.3
        if (
            (classes >= 3 or (context and classes >= 2))
            and ent >= limit
            and len(core) >= (16 if context else 24)
        ):
            out.append((m.start(), m.end(), "high-entropy-string"))
    return out


# ---------------------------------------------------------------- detect-secrets

# A text can only hold what a detect-secrets plugin matches if it has a long token.
# A word a detect-secrets plugin's pattern cannot match without, where the pattern would
# otherwise cost time in the square of a long line (npm's `//.+/:_authToken=`).
_PLUGIN_NEEDS = {"npm-tokens": "_authToken", "openai-token": "T3BlbkFJ"}
_DS_GATE = lazy_compile(r"[A-Za-z0-9_\-+/=.]{16,}|PRIVATE KEY|AccountKey")
_SKIPPED_PLUGINS = frozenset(
    {
        "IPPublicDetector",
        "KeywordDetector",
        "Base64HighEntropyString",
        "HexHighEntropyString",
        # our own `jwt` family matches the same tokens; this one's `eyJ[…]+\.` costs time in
        # the square of a run of `eyJ` without a dot
        "JwtTokenDetector",
    }
)


@lru_cache(maxsize=1)
def _plugins() -> tuple[tuple[tuple[str, re.Pattern[str]], ...], KeywordIndex]:
    """(kind, pattern) of each of detect-secrets' regex plugins, loaded once, and the index
    that picks those a text may match."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    patterns = []
    for cls in get_mapping_from_secret_type_to_class().values():
        if issubclass(cls, RegexBasedDetector) and cls.__name__ not in _SKIPPED_PLUGINS:
            kind = re.sub(r"[^a-z0-9]+", "-", cls.secret_type.lower()).strip("-") or "secret"
            patterns += [(kind, rx) for rx in cls.denylist]
    index = KeywordIndex([Keywords(required(rx.pattern, rx.flags)) for _, rx in patterns])
    return tuple(patterns), index


def _detect_secrets_spans(text: str) -> list[Span]:
    if not _DS_GATE.search(text):
        return []
    out: list[Span] = []
    patterns, index = _plugins()
    for i in sorted(index.candidates(text)):
        kind, rx = patterns[i]
        needs = _PLUGIN_NEEDS.get(kind)
        if needs is not None and needs not in text:
            continue  # its pattern backtracks over long lines without the word it looks for
        for m in rx.finditer(text):
            s, e = m.span()
            for g in range(1, (rx.groups or 0) + 1):
                if m.group(g):
                    s, e = m.span(g)
                    break
            value = text[s:e]
            if e - s < 8 or _is_placeholder(value) or "[REDACTED" in value:
                continue
            if kind == "private-key":
                continue  # a header alone; whole key blocks are matched by our own family
            if kind.startswith("artifactory") and (e - s < 20 or _classes(value) < 2):
                continue
            out.append((s, e, kind))
    return out


@lru_cache(maxsize=1)
def _known_format_index() -> KeywordIndex:
    return KeywordIndex([rx.keywords for _, rx in _KNOWN_FORMATS])  # type: ignore[attr-defined]


def _known_format_spans(text: str) -> list[Span]:
    out: list[Span] = []
    for i in sorted(_known_format_index().candidates(text)):
        kind, rx = _KNOWN_FORMATS[i]
        for m in rx.finditer(text):
            s, e = m.span()
            for g in ("val", "val2"):
                if g in rx.groupindex and m.group(g):
                    s, e = m.span(g)
            value = text[s:e]
            if re.search(r"(?i)example", value) or _mostly_repeated(value):
                continue  # documented sample keys and XXXX placeholders
            out.append((s, e, kind))
    return out


_PIECES_CUE = lazy_compile(
    r"(?i)\b(?:parts?\s*\d|halves|half|pieces?|join|concatenat\w*|together|glue|combine)\b"
)
_SECRET_WORD = lazy_compile(
    r"(?i)\b(?:password|passphrase|key|token|secret|credential|pass|pwd)s?\b"
)
_PIECE = lazy_compile(r"(?<![\w#!@$%^&*+=-])[^\s,;()\[\]\"']{5,}")
_HOOK_PATH = lazy_compile(
    r"(?i)/(?:hooks|webhooks?|webhookb2|incomingwebhook)(?P<val>/[^\s\"'<>)]+)"
)


def _piece_spans(text: str) -> list[Span]:
    """A secret given in pieces ("part 1: … part 2: …", "join them: … and …")."""
    if not (_PIECES_CUE.search(text) and _SECRET_WORD.search(text)):
        return []
    out: list[Span] = []
    public = [m.span() for m in _PUBLIC_BLOCK.finditer(text)]
    for m in _PIECE.finditer(text):
        if any(ps <= m.start() < pe for ps, pe in public):
            continue
        v = m.group(0).rstrip(".:")
        if _looks_like_word(v) or re.fullmatch(r"[\d.:-]+", v) or _is_placeholder(v):
            continue
        if _classes(v) >= 3 or (re.search(r"\d", v) and re.search(r"[A-Za-z]", v) and len(v) >= 6):
            out.append((m.start(), m.start() + len(v), "split-secret"))
    return out


def _hook_spans(text: str) -> list[Span]:
    """Path segments of a webhook URL that carry its token (`/hooks/<token>`)."""
    out: list[Span] = []
    for m in _HOOK_PATH.finditer(text):
        base = m.start("val")
        for seg in re.finditer(r"[^/@]+", m.group("val")):
            v = seg.group(0)
            if len(v) >= 16 and re.search(r"\d", v) and _classes(v) >= 2:
                out.append((base + seg.start(), base + seg.end(), "webhook-url"))
    return out


# National identity numbers that carry their own check digits: the check, not a digit count,
# tells them from order numbers. (name, pattern, checker, context needed for short ones)
def _cpf_ok(d: str) -> bool:
    if len(d) != 11 or len(set(d)) == 1:
        return False
    for n in (9, 10):
        total = sum(int(d[i]) * (n + 1 - i) for i in range(n))
        if (total * 10 % 11) % 10 != int(d[n]):
            return False
    return True


def _bsn_ok(d: str) -> bool:
    return len(d) == 9 and sum(
        int(c) * w for c, w in zip(d[:8], range(9, 1, -1), strict=True)
    ) % 11 == int(d[8])


def _pesel_ok(d: str) -> bool:
    if len(d) != 11:
        return False
    total = sum(int(c) * w for c, w in zip(d[:10], (1, 3, 7, 9, 1, 3, 7, 9, 1, 3), strict=True))
    return (10 - total % 10) % 10 == int(d[10])


def _cn_id_ok(d: str) -> bool:
    if len(d) != 18 or not d[:17].isdigit():
        return False
    total = sum(
        int(c) * w
        for c, w in zip(d[:17], (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2), strict=True)
    )
    return "10X98765432"[total % 11] == d[17].upper()


def _nir_ok(d: str) -> bool:
    if len(d) != 15:
        return False
    body = d[:13].replace("2A", "19").replace("2B", "18")
    return body.isdigit() and 97 - int(body) % 97 == int(d[13:])


def _personnummer_ok(d: str) -> bool:
    return len(d) in (10, 12) and _luhn_ok(d[-10:])


def _nhs_ok(d: str) -> bool:
    """An NHS number: ten digits, the last a mod-11 check of the others."""
    if len(d) != 10 or not d.isdigit():
        return False
    if d.startswith("999"):
        return False  # the range the NHS reserves for test records
    check = 11 - sum(int(c) * w for c, w in zip(d[:9], range(10, 1, -1), strict=True)) % 11
    return check != 10 and check % 11 == int(d[9])


def _hetu_ok(d: str) -> bool:
    """A Finnish henkilötunnus (DDMMYY, century sign, NNN, check character mod 31)."""
    if len(d) == 11:  # the century sign kept (a letter, or "+")
        d = d[:6] + d[7:]
    if len(d) != 10 or not d[:9].isdigit():
        return False
    return "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(d[:9]) % 31] == d[9].upper()


def _rrn_ok(d: str) -> bool:
    """A Korean resident registration number (13 digits, weighted mod-11 check)."""
    if len(d) != 13 or not d.isdigit():
        return False
    weights = (2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5)
    total = sum(int(c) * w for c, w in zip(d[:12], weights, strict=True))
    return (11 - total % 11) % 10 == int(d[12])


def _my_number_ok(d: str) -> bool:
    """A Japanese individual number (12 digits, mod-11 check digit last)."""
    if len(d) != 12 or not d.isdigit():
        return False
    body = d[:11][::-1]
    total = sum(int(c) * (n + 1 if n <= 6 else n - 5) for n, c in enumerate(body, start=1))
    rest = total % 11
    return (0 if rest <= 1 else 11 - rest) == int(d[11])


_CF_ODD = dict(zip("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                   (1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4,
                    18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23), strict=True))  # fmt: skip


def _codice_fiscale_ok(d: str) -> bool:
    """An Italian codice fiscale (16 characters, check letter from odd/even tables)."""
    d = d.upper()
    if len(d) != 16 or not d.isalnum():
        return False
    total = 0
    for i, c in enumerate(d[:15]):
        if i % 2 == 0:
            total += _CF_ODD[c]
        else:
            total += int(c) if c.isdigit() else ord(c) - ord("A")
    return chr(ord("A") + total % 26) == d[15]


_NATIONAL_IDS: tuple[tuple[re.Pattern[str], object, re.Pattern[str] | None], ...] = (
    (
        lazy_compile(r"(?<![\d.-])\d{3}\.?\d{3}\.?\d{3}-?\d{2}(?![\d.-])"),
        _cpf_ok,
        lazy_compile(r"(?i)\bcpf\b"),
    ),
    (
        lazy_compile(r"(?<![\d.-])\d{9}(?![\d.-])"),
        _bsn_ok,
        lazy_compile(r"(?i)\b(?:bsn|burgerservicenummer|sofi)"),
    ),
    (lazy_compile(r"(?<![\d.-])\d{11}(?![\d.-])"), _pesel_ok, lazy_compile(r"(?i)\bpesel\b")),
    (lazy_compile(r"(?<![\dXx])\d{17}[\dXx](?![\dXx])"), _cn_id_ok, None),
    (
        lazy_compile(r"(?<![\d-])(?:\d{2})?\d{6}[-+]\d{4}(?![\d-])"),
        _personnummer_ok,
        lazy_compile(r"(?i)\b(?:personnummer|personnr|samordningsnummer)\b"),
    ),
    (
        lazy_compile(
            r"(?<!\d)(?<!\d )[12] ?\d{2} ?\d{2} ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}(?![\d])"
        ),
        _nir_ok,
        None,
    ),
    (
        lazy_compile(r"(?<![\d-])\d{3}[ -]?\d{3}[ -]?\d{4}(?![\d-])"),
        _nhs_ok,
        lazy_compile(r"(?i)\bnhs\b"),
    ),
    (
        lazy_compile(r"(?<![\w-])\d{6}[-+AaBbCcDdEeFfUuVvWwXxYy]\d{3}[0-9A-Ya-y](?![\w-])"),
        _hetu_ok,
        lazy_compile(r"(?i)henkil\w*tunnus|\bhetu\b|\bsotu\b|personbeteckning|finnish"),
    ),
    (
        lazy_compile(r"(?<![\d-])\d{6}-?[1-8]\d{6}(?![\d-])"),
        _rrn_ok,
        lazy_compile(r"주민등록번호|주민번호|(?i:\brrn\b|resident\s+registration)"),
    ),
    (
        lazy_compile(r"(?<![\d-])\d{4}[ -]?\d{4}[ -]?\d{4}(?![\d-])"),
        _my_number_ok,
        lazy_compile(r"マイナンバー|個人番号|(?i:\bmy\s*number\b)"),
    ),
    (
        lazy_compile(r"(?<![\d-])\d{3}[ -]?\d{3}[ -]?\d{3}(?![\d-])"),
        _luhn_ok,
        lazy_compile(r"\bSIN\b|\bNAS\b|(?i:social\s+insurance|assurance\s+sociale)"),
    ),
    (
        lazy_compile(
            r"(?<![A-Za-z0-9])[A-Za-z]{6}\d{2}[A-EHLMPRSTa-ehlmprst]\d{2}[A-Za-z]\d{3}[A-Za-z](?![A-Za-z0-9])"
        ),
        _codice_fiscale_ok,
        None,
    ),
)


def _national_id_spans(text: str) -> list[Span]:
    if not re.search(r"\d{3}", text.replace(" ", "").replace(".", "")):
        return []  # every id below holds three digits in a row (a codice fiscale, three)
    out: list[Span] = []
    for rx, ok, context in _NATIONAL_IDS:
        if context is not None and not context.search(text):
            continue
        for m in rx.finditer(text):
            digits = re.sub(r"[ .-]", "", m.group(0))
            if ok(digits):  # type: ignore[operator]
                out.append((m.start(), m.end(), "national-id"))
    return out


# A key spaced into short chunks ("sk_l ive_ Y5Gl 6ecp …", "g h p _ 1 2 …"): the chunks,
# joined, are checked against the known formats.
_SPACED_RUN = lazy_compile(r"(?<!\S)(?:[A-Za-z0-9_+/=-]{1,12} ){3,}[A-Za-z0-9_+/=-]{1,12}(?!\S)")
# "recovery codes: a b c d": every code of the list, not only the first.
_CODE_LIST = lazy_compile(
    r"(?i)\b(?:recovery|backup|bypass|rescue|break-?glass|one-time)\s+codes?\b[^:\n]{0,50}:\s*"
    r"(?P<list>[A-Za-z0-9-]{4,}(?:[\s,;]+[A-Za-z0-9-]{4,})*)"
)
_TWILIO_SID = lazy_compile(r"\b(?:AC|SK)[0-9a-f]{32}\b")
_HEX32 = lazy_compile(r"(?<![0-9A-Za-z])[0-9a-f]{32}(?![0-9A-Za-z])")


# A one-time-password seed (RFC 4648 base32, as authenticator apps show it for manual
# entry: in capitals, or in lower-case groups of four) after the word for it.
_OTP_SEED = lazy_compile(
    r"(?i)\b(?:totp|hotp|2fa|mfa|otp|authenticator|two[- ]factor|setup\s+key|manual\s+entry)\b"
    r"[^\n]{0,40}?[:=]?\s(?P<val>(?-i:[A-Z2-7]{16,64})|(?-i:[a-z2-7]{4}(?: [a-z2-7]{4}){3,15}(?: [a-z2-7]{1,4})?)"
    r"|(?-i:[A-Z2-7]{4}(?: [A-Z2-7]{4}){3,15}(?: [A-Z2-7]{1,4})?))"
    r"(?![\w=])"
)


def _spaced_and_listed_spans(text: str) -> list[Span]:
    out: list[Span] = []
    for m in _OTP_SEED.finditer(text):
        value = m.group("val")
        joined = value.replace(" ", "")
        if not _looks_like_word(joined) and re.search(r"[2-7]", value) and len(set(joined)) >= 8:
            out.append((m.start("val"), m.end("val"), "otp-seed"))
    for m in _SPACED_RUN.finditer(text):
        pieces = m.group(0).split()
        if sum(len(p) > 1 and _looks_like_word(p) for p in pieces) * 3 > len(pieces):
            continue  # words of a sentence, not chunks of a key
        joined = "".join(pieces)
        if _known_format_spans(joined):
            if sum(len(p) == 1 for p in pieces) * 2 > len(pieces):  # spelled out: one span
                out.append((m.start(), m.end(), "split-secret"))
                continue
            out += [(m.start() + p.start(), m.start() + p.end(), "split-secret")
                    for p in re.finditer(r"\S+", m.group(0))]  # fmt: skip
    for m in _CODE_LIST.finditer(text):
        base = m.start("list")
        for c in re.finditer(r"[A-Za-z0-9-]+", m.group("list")):
            code = c.group(0)
            mixed = re.search(r"\d", code) and re.search(r"[A-Za-z]", code)
            if mixed or (code.isdigit() and len(code) >= 6):
                out.append((base + c.start(), base + c.end(), "recovery-code"))
    # A Twilio account or key SID names an account; the 32-hex value beside it is its token.
    for sid in _TWILIO_SID.finditer(text):
        line_start = text.rfind("\n", 0, sid.start()) + 1
        line_end = text.find("\n", sid.end())
        line = text[line_start : line_end if line_end >= 0 else len(text)]
        for h in _HEX32.finditer(line):
            out.append((line_start + h.start(), line_start + h.end(), "twilio-auth-token"))
    return out


# Kinds a hand-written file nobody reviewed keeps on read (`strict=False`): a team's own
# addresses, phone numbers and account numbers are its business, and the shapes no format
# names (a run that only looks random, a value cut in pieces) misfire on ordinary notes.
# Credentials in a known format, key material, passwords and connection strings are still
# redacted; what an agent proposes (`strict=True`) is screened for every kind.
LENIENT_KEPT_KINDS = frozenset(
    {
        "email",
        "phone",
        "iban",
        "bank-account",
        "date-of-birth",
        "home-address",
        "split-secret",
        "high-entropy-string",
    }
)


def secret_spans(text: str, *, depth: int = 0, strict: bool = True) -> list[Span]:
    """(start, end, kind) of every secret or personal datum in `text` (may overlap)."""
    spans = _all_spans(text, depth)
    if not text.isascii() and _INVISIBLE.search(text):
        spans += _spans_through_invisible(text, depth)
    return spans if strict else [sp for sp in spans if sp[2] not in LENIENT_KEPT_KINDS]


# Characters that show nothing: a value cut by them (`tzLHxK\u200beTQYB2…`, a soft hyphen
# every seven letters so it wraps) reads whole to a person and to a model.
_INVISIBLE = lazy_compile(r"[\u00ad\u180e\u200b-\u200d\u2060\ufeff]")


def _spans_through_invisible(text: str, depth: int) -> list[Span]:
    """The spans of `text` read without its invisible characters, in `text`'s positions."""
    keep = [i for i, ch in enumerate(text) if not _INVISIBLE.match(ch)]
    seen = "".join(text[i] for i in keep)
    return [
        (keep[s0], keep[e0 - 1] + 1, kind) for s0, e0, kind in _all_spans(seen, depth) if e0 > s0
    ]


_K8S_SECRET = lazy_compile(r"(?m)^[ \t-]*kind:[ \t]*Secret[ \t]*$")
_K8S_DATA = lazy_compile(
    r"(?m)^([ \t]*)(?:data|stringData):[ \t]*\n((?:\1[ \t]+[\w.-]+:[^\n]*(?:\n|$))+)"
)
_K8S_ITEM = lazy_compile(r"(?m)^[ \t]+[\w.-]+:[ \t]*(?P<val>[\"']?[^\s\"'#][^\n#]*?[\"']?)[ \t]*$")


def _k8s_secret_spans(text: str) -> list[Span]:
    """The values of a Kubernetes Secret manifest's `data`/`stringData` (base64 is not
    encryption: the value is the secret)."""
    if not _K8S_SECRET.search(text):
        return []
    out: list[Span] = []
    for block in _K8S_DATA.finditer(text):
        base = block.start(2)
        for m in _K8S_ITEM.finditer(block.group(2)):
            s, e, value, _ = _value_span(m)
            if not _is_placeholder(value) and len(value) >= 4:
                out.append((base + s, base + e, "secret-assignment"))
    return out


# A word-sized token bounded by spaces, and what makes one read as a password typed by a
# person or a generator: ASCII, upper and lower case or all four classes, a symbol of the
# kind password rules ask for, and classes changing often (`pw@vV1!1+EKvMRm65E3`), in any
# language's sentence around it. Paths, addresses, assignments and identifiers are not.
_TOKEN = lazy_compile(r"(?<!\S)[^\s\"'`<>()\[\]{},;|]{10,64}[.,:;!?]*(?!\S)")
_STRONG_SYMBOL = lazy_compile(r"[!@#$%^&*~+=]")
_NOT_PASSWORD = lazy_compile(
    r"[^@\s]+@[\w-]+(?:\.[\w-]+)+|[A-Za-z_][\w.-]*[:=].*|[\w.-]+|.*(?:://|\$\{|[/\\]).*"
)


def _password_shaped(t: str) -> bool:
    if len(t) < 10 or not t.isascii() or t[0] in "-$#@/~." or _NOT_PASSWORD.fullmatch(t):
        return False
    if t.startswith(("**", "__")) or not re.search(r"\d", t) or not re.search(r"[A-Za-z]", t):
        return False  # `**Workspace-Specific:**`: emphasis; a password holds a digit
    if not _STRONG_SYMBOL.search(t) or {c for c in t if not c.isalnum()} <= set("+/="):
        return False
    kinds = ["l" if c.islower() else "u" if c.isupper() else "d" if c.isdigit() else "s" for c in t]
    changes = sum(a != b for a, b in pairwise(kinds))
    present = set(kinds)
    return changes >= 6 and len(present) >= 3 and ({"l", "u"} <= present or len(present) == 4)


def _password_shaped_spans(text: str) -> list[Span]:
    out: list[Span] = []
    for m in _TOKEN.finditer(text):
        value = m.group(0).rstrip(".,:;!?")  # the sentence's own punctuation after it
        if _password_shaped(value) and not _is_placeholder(m.group(0)):
            out.append((m.start(), m.start() + len(value), "password"))
    return out


# A cookie header: every cookie in it is state the server handed out, a session when its
# value looks random (`metabase.SESSION=<uuid>`, `_shibsession_…=_5c01…`, `remember-me=…`).
_COOKIE_HEADER = lazy_compile(r"(?im)^[ \t>\"']*(?P<set>set-)?cookie:[ \t]*(?P<pairs>[^\n]+)")
_COOKIE_PAIR = lazy_compile(r"(?:^|;)\s*(?P<name>[^=;\s]+)=(?P<val>[^;\s\"']+)")


def _cookie_spans(text: str) -> list[Span]:
    out: list[Span] = []
    if "ookie" not in text and "OOKIE" not in text:
        return out
    for header in _COOKIE_HEADER.finditer(text):
        base = header.start("pairs")
        for n, m in enumerate(_COOKIE_PAIR.finditer(header.group("pairs"))):
            if header.group("set") and n > 0:
                break  # Set-Cookie: one cookie, then its attributes (path, expires, …)
            value = m.group("val")
            if (
                len(value) >= 16
                and _classes(value) >= 2
                and not _is_placeholder(value)
                and not re.fullmatch(r"[\d.:-]+", value)
            ):
                out.append((base + m.start("val"), base + m.end("val"), "session-cookie"))
    return out


# A value that unlocks something, written after its name on a command line or in a URL
# path: `/with/key/<key>`, `/token/<token>`, a `SecretStr("…")`, a PIN or a one-time code.
_PATH_SECRET = lazy_compile(
    r"(?i)/(?:key|keys|token|tokens|apikey|api-key|secret|[\w-]*webhooks?)/(?P<val>[A-Za-z0-9_-]{16,})(?=[/?#\s\"')]|$)"
)
_SECRET_CALL = lazy_compile(
    r"\b(?:SecretStr|SecretBytes|SecureString|Secret|Password|Passphrase)\(\s*(?P<val>\"[^\"\n]{6,200}\"|'[^'\n]{6,200}')\s*\)"
)
_PIN_CODE = lazy_compile(
    r"(?i)\b(?:(?-i:PIN)|pin\s+code|passcode|otp|one-time\s+(?:pass)?code|"
    r"(?:reset|verification|security|login|access|door|alarm|unlock|sign-in)\s+code)"
    r"(?:\s+(?:is|was|=)|\s*[:=]|(?<=PIN)\s)\s*(?P<val>\d{4,8})\b"
)
# The second member of a (user, password) pair in code: `auth=("id", "secret")`,
# `WiFi.begin("ssid", "password")`.
_PAIR_CALL = lazy_compile(
    r"(?:\bauth\s*=\s*\(|\bWiFi\.begin\(|\bHTTPBasicAuth\(|\bBasicAuth\()\s*(?P<q>[\"'])[^\"'\n]{1,80}(?P=q)\s*,\s*"
    r"(?P<val>\"[^\"\n]{4,200}\"|'[^'\n]{4,200}')"
)


def _unlock_value_spans(text: str) -> list[Span]:
    out: list[Span] = []
    for m in _PATH_SECRET.finditer(text):
        value = m.group("val")
        if _classes(value) >= 2 and not _is_placeholder(value) and not _looks_like_word(value):
            out.append((m.start("val"), m.end("val"), "url-secret"))
    for m in _SECRET_CALL.finditer(text):
        value = m.group("val")[1:-1]
        if _classes(value) >= 3 and len(value) >= 10 and not _is_placeholder(value):
            out.append((m.start("val") + 1, m.end("val") - 1, "password"))
    for m in _PAIR_CALL.finditer(text):
        value = m.group("val")[1:-1]
        if _classes(value) >= 2 and not _is_placeholder(value):
            out.append((m.start("val") + 1, m.end("val") - 1, "password"))
    for m in _PIN_CODE.finditer(text):
        if not _is_placeholder(m.group("val")) and len(set(m.group("val"))) > 2:
            out.append((m.start("val"), m.end("val"), "password"))
    return out


# The id of a credential written beside its secret (`DEERE_CLIENT_ID=…` above
# `DEERE_CLIENT_SECRET=…`, `key_id:` above `key_secret:`): half of the pair, useless alone and
# telling with it. Only next to a secret found on a neighbouring line.
_CREDENTIAL_ID = lazy_compile(
    r"(?im)^[ \t-]*[\"']?(?P<key>[\w.-]*?(?:client|key|access|token|app|api|account)[_.-]?id|x_login)[\"']?"
    r"[ \t]*[=:][ \t]*[\"']?(?P<val>[A-Za-z0-9._-]{8,80})[\"']?[ \t]*(?:#.*)?$"
)
_PAIRED_KINDS = frozenset({"secret-assignment", "password"})


def _paired_id_spans(text: str, spans: list[Span]) -> list[Span]:
    secrets_at = [s for s, _e, kind in spans if kind in _PAIRED_KINDS]
    if not secrets_at:
        return []
    out: list[Span] = []
    for m in _CREDENTIAL_ID.finditer(text):
        value = m.group("val")
        if _is_placeholder(value) or _looks_like_word(value) or _classes(value) < 2:
            continue
        line = text.count("\n", 0, m.start())
        if any(abs(text.count("\n", 0, s) - line) <= 2 for s in secrets_at):
            out.append((m.start("val"), m.end("val"), "secret-assignment"))
    return out


def _all_spans(text: str, depth: int) -> list[Span]:
    spans = _known_format_spans(text)
    spans += _detect_secrets_spans(text)
    spans += _assignment_spans(text)
    spans += _sentence_spans(text)
    spans += _auth_header_spans(text)
    spans += _url_spans(text)
    spans += _wrapped_spans(text, depth)
    spans += _entropy_spans(text)
    spans += _pii_spans(text)
    spans += _piece_spans(text)
    spans += _hook_spans(text)
    spans += _national_id_spans(text)
    spans += identity_number_spans(text)
    spans += _password_shaped_spans(text)
    spans += _spaced_and_listed_spans(text)
    spans += _k8s_secret_spans(text)
    spans += _cookie_spans(text)
    spans += _unlock_value_spans(text)
    spans += _paired_id_spans(text, spans)
    sids = {m.span() for m in _TWILIO_SID.finditer(text)} if "AC" in text or "SK" in text else set()
    return [
        sp
        for sp in spans
        if sp[1] > sp[0]
        and (sp[0], sp[1]) not in sids
        and not _published(text[sp[0] : sp[1]])
        and not _sops_encrypted(text, sp[0])
        and not _sealed(text, sp[0])
        and not _in_password_hash(text, sp[0])
        and not _labelled_harmless(text, sp)
    ]


# Values published in specifications and vendors' documentation as examples: every reader
# of those documents knows them, and a note that quotes one discloses nothing. And keys
# public by design, by their vendor's prefix (publishable, sent to every browser).
DOCUMENTED_VALUES = frozenset(
    {
        "JBSWY3DPEHPK3PXP",  # RFC 6238 / authenticator documentation seed
        "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ",  # RFC 6238 test seed, base32
        "AKIAIOSFODNN7EXAMPLE",  # AWS documentation key pair
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "DE89370400440532013000",  # ECBS / Wikipedia example IBANs
        "GB82WEST12345698765432",
        "078051120",  # the Woolworth wallet-card SSN
    }
)
PUBLIC_KEY_PREFIXES = ("pk_live_", "pk_test_", "phc_", "sq0idp-", "age1")


def _published(value: str) -> bool:
    bare = value.strip("\"'`").replace(" ", "").replace("-", "")
    return bare in DOCUMENTED_VALUES or bare.startswith(PUBLIC_KEY_PREFIXES)


def _sealed(text: str, at: int) -> bool:
    """Whether `at` is in the `encryptedData` of a Bitnami SealedSecret: encrypted for the
    cluster's key, safe in a repository by design."""
    if "SealedSecret" not in text:
        return False
    kind = text.rfind("kind: SealedSecret", 0, at)
    return kind >= 0 and text.find("encryptedData:", kind, at) >= 0


# A password hash in PHC or crypt(3) form (`$argon2id$v=19$m=…$salt$hash`, `$2b$12$…`):
# a one-way digest, not the password.
_PASSWORD_HASH = lazy_compile(
    r"\$(?:argon2(?:id|i|d)|scrypt|pbkdf2(?:-sha\d+)?|2[abxy]|[156]|y|gy|7)\$[\w$./=,+-]{16,}"
)


def _in_password_hash(text: str, at: int) -> bool:
    if "$" not in text:
        return False
    line_start = text.rfind("\n", 0, at) + 1
    return any(
        m.start() <= at < m.end() for m in _PASSWORD_HASH.finditer(text, line_start, at + 200)
    )


# A random-looking run its writer calls public (a site key, a recipient, a JWK's public
# members): only for the kind no format names; a credential in a known format stays.
_PUBLIC_LABEL = lazy_compile(
    r"(?i)\bpublic\b|\bsite[\s_-]?key\b|\bpublishable\b|\brecipient\b|\"(?:x|y|n|e)\"\s*:\s*\"$"
)


# A personal number its writer calls an example ("Published example henkilötunnus …",
# "Registry example IBAN for Gibraltar: …"): documentation, not a person's.
_EXAMPLE_LABEL = lazy_compile(r"(?i)\b(?:example|sample|specimen|fictitious|published)\b")
_EXAMPLE_KINDS = frozenset({"iban", "national-id", "card-number", "phone", "bank-account"})
# (the kinds, the label that makes them harmless, how far before the value it may stand)
_HARMLESS_LABELS = (
    (frozenset({"high-entropy-string"}), _PUBLIC_LABEL, 60),
    (_EXAMPLE_KINDS, _EXAMPLE_LABEL, 50),
)


def _labelled_harmless(text: str, span: Span) -> bool:
    """Whether the words just before a span, on its line, call it public or an example."""
    line_start = text.rfind("\n", 0, span[0]) + 1
    return any(
        span[2] in kinds and label.search(text, max(line_start, span[0] - width), span[0])
        for kinds, label, width in _HARMLESS_LABELS
    )


def _sops_encrypted(text: str, at: int) -> bool:
    """Whether position `at` is inside a SOPS-encrypted value (`ENC[AES256_GCM,data:…]`)."""
    opened = text.rfind("ENC[", max(0, at - 200), at)
    return opened >= 0 and "]" not in text[opened:at]
