"""Intent by concepts: what a clause is trying to make its reader do, in any wording.

The phrase grammar in `injection` recognises the shapes attacks usually take; this
module recognises what they *mean*, whatever the word order: a clause that sets aside
the reader's earlier instructions names three things — an act of setting aside
("scratch", "supersedes", "no longer binding", "lascia perdere", "当作没说过"),
something that directs the reader (instructions, rules, what it was told) and whose
directions they are (earlier ones, the user's, the system's). Each of those is a
*concept*: a small set of word stems per language, matched on the normalised text
(`normalise.skeleton`: accents, case, look-alike letters and spacing already folded).
An intent is a conjunction of concepts inside one clause, so a paraphrase that keeps the
meaning keeps the concepts, while an ordinary rule that shares one word ("ignore
generated files", "rotate the signing secret") lacks the others.

Clauses are cut at sentence ends only; quoted code is blanked first (a rule may quote a
command it forbids), and a negation before the act ("never disable the scanner") turns
an instruction into the rule that forbids it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from engram.core.safety.normalise import CODE_SPAN, lazy_compile


def _stems(words: str) -> str:
    """One alternation of `|`-separated stems; a stem matches at a word start.

    A trailing `$` makes a stem a whole word; CJK stems match anywhere (no word breaks).
    """
    latin: list[str] = []
    cjk: list[str] = []
    for w in (w.strip() for w in words.split("|")):
        if not w:
            continue
        if re.search(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]", w):
            cjk.append(re.escape(w))
        elif w.endswith("$"):
            latin.append(re.escape(w[:-1]).replace(r"\ ", r"\s+") + r"\b")
        else:
            latin.append(re.escape(w).replace(r"\ ", r"\s+") + r"\w*")
    parts = []
    if latin:
        parts.append(r"(?<![\w-])(?:" + "|".join(latin) + ")")
    if cjk:
        parts.append("(?:" + "|".join(cjk) + ")")
    return "|".join(parts)


# Setting aside what directs the reader.
SET_ASIDE = (
    "ignor|disregard|forget|forgot|scratch|supersed|overrid|overrul|void$|nullif|obsolet|"
    "not binding|no longer binding|binding anymore|no longer appl|no longer valid|no longer count|"
    "no longer in effect|no longer matter|doesn't apply|don't apply|do not apply|does not apply|"
    "don't count|doesn't count|do not count|cancel|revok|rescind|retract|set aside|put aside|"
    "toss|discard|ditch|scrap$|throw out|throw away|never mind|nevermind|as if|pretend|"
    "invalid|moot$|wipe|unlearn|leave behind|abandon|drop$|dropped|stop following|stop obeying|"
    "stop applying|don't follow|do not follow|don't obey|do not obey|no need to follow|"
    "free from|released from|outdated|superseded|outrank|take precedence|trump|void|null and|"
    "cease following|cease obeying|quit following|stop listening to|ігнор|abaikan|ignorera|"
    "hagyd figyelmen|figyelmen kivul|"
    "negeer|vergeet|zignoruj|zapomnij|pomin|yok say|unut|gormezden gel|bo qua|"
    "rank below|ranks below|rank lower|come second|comes second|subordinate to|lower priority|"
    "wins$|win over|prevails|takes priority|has priority|no longer need to honour|need not honour|"
    "no longer need to honor|need not honor|no longer honour|no longer honor|stop honouring|"
    "stop honoring|don't honour|don't honor|do not honour|do not honor|no longer need to follow|"
    "no longer need to obey|no longer have to follow|no longer have to obey|"
    # es / pt / it (accents folded)
    "olvid|descart|deja de lado|deja a un lado|dejar de lado|haz caso omiso|hagas caso|anul|sin efecto|"
    "ya no valen|ya no aplican|ya no cuentan|ya no rigen|no valen|non valgono|non vale piu|nao valem|"
    "ne valent plus|gelten nicht|substituid|sustituid|remplace|ersetzt|sostituit|como si no|pasa por alto|prescind|no sigas|no obedezcas|"
    "esquec|deixe de lado|deixa de lado|desconsider|sem efeito|como se nao|nao siga|nao obedeca|"
    "dimentic|lascia perdere|lascia stare|metti da parte|trascur|come se non|non seguire|annull|"
    # fr
    "oubli|fais comme si|faites comme si|ne tiens pas compte|ne tenez pas compte|fais abstraction|"
    "faites abstraction|passe outre|passez outre|outrepass|mets de cote|mettez de cote|laisse tomber|"
    "laissez tomber|caduc|ne compte plus|ne comptent plus|ne s'appliquent plus|ne valent plus|"
    # de
    "ignorier|vergiss|vergessen|missacht|hinweg|ausser kraft|ungultig|nicht mehr gultig|"
    "nicht mehr bindend|verwirf|verwerf|ubergeh|keine beachtung|hinfallig|spielt keine rolle|"
    # ru / ja / zh / ko
    "игнорир|забуд|отмен|не обращай|проигнорир|не учитыва|не следуй|"
    "無視|忘れ|破棄|取り消|無効|撤回|なかったこと|気にしない|従わな|"
    "忽略|无视|忘记|忘記|忘掉|不要理|不理会|不理會|抛开|拋開|丢弃|丟棄|作废|作廢|失效|当作没|當作沒|"
    "没说过|沒說過|不算数|不算數|无效|别管|別管|不必遵守|不用遵守|不要遵守|不再遵守|"
    "무시|잊어|잊고|따르지|무효"
)
# What directs the reader: instructions, rules, what it was told.
DIRECTIVE = (
    "instruct|directive|rule$|rules$|rulebook|guideline|guidance|guardrail|brief$|briefing|prompt|"
    "orders$|commands$|told$|taught|programming|policies|restriction|constraint|conversation|"
    "messages$|directions$|safeguard|system message|said$|asked$|"
    "instructies|opdrachten|regels$|instrukcje|instrukcji|polecenia|zasady|talimat|kurallar|"
    "інструкц|вказівк|instruksi|instruktioner|pokyny|utasitas|"
    "huong dan|chi dan|quy tac|"
    "instruc|regla|indicacion|ordenes|directriz|directrices|norma$|normas$|pauta|restriccion|mensajes|"
    "conversacion|regra|orientac|diretriz|diretrizes|restric|"
    "consigne|regle$|regles$|ordre$|ordres$|indications|"
    "anweisung|regel$|regeln$|vorgabe|richtlinie|befehl|instruktion|einschrank|"
    "istruzion|regol|indicazion|direttiv|"
    "инструкц|указани|правил|команд|промпт|огранич|"
    "指示|命令|ルール|規則|指令|プロンプト|制約|ガイドライン|"
    "指令|说明|說明|规则|规定|規定|提示|要求|设定|設定|约束|約束|限制|"
    "지시|지침|명령|규칙|프롬프트"
)
# Whose: the reader's earlier directions, the user's, the system's.
PRIOR = (
    "previous|prior$|earlier|before$|above$|preceding|foregoing|aforementioned|old$|older|original|"
    "initial|so far|until now|up to now|thus far|hitherto|existing|standing|whatever|everything|"
    "anything|nothing|none of|all of|own$|their own|its own|your$|you were|"
    "eerdere|vorige|alle$|poprzednie|wszystkie|попередн|sebelumnya|tidigare|predchozi|korabbi|"
    "wczesniej|onceki|tum$|truoc|tat ca|you've been|you have been|you got|you received|"
    "given to you|the user's|the human's|the user$|the human$|system$|at the start|at the beginning|"
    "received|recebeu|recibiste|recibio|recu$|recues|erhalten|ricevut|no inicio|al principio|au debut|"
    "am anfang|all'inizio|"
    "anterior|previ|de arriba|hasta ahora|antigu|original|del usuario|del sistema|tus$|sus$|"
    "acima|ate agora|do usuario|do sistema|suas$|seus$|tuas$|teus$|"
    "precedent|anterieur|ci-dessus|jusqu'ici|jusqu'a present|d'avant|de l'utilisateur|du systeme|tes$|vos$|"
    "bisherig|vorherig|vorig|obig|fruher|ursprunglich|alten$|des nutzers|des benutzers|deine|ihre$|"
    "sopra|finora|dell'utente|del sistema|tue$|tuoi$|"
    "предыдущ|прежн|выше|ранее|свои|твои|"
    "以前|前の|前に|上記|これまで|今まで|先ほど|最初|元の|あなたの|"
    "之前|先前|上面|上述|此前|前面|原来|原來|原有|你的|"
    "이전|위의|앞의|기존|지금까지|이전에|앞서|받은"
)
# A directive of the project, not of the reader: rules of a tool or a table.
TECHNICAL = (
    "lint|eslint|ruff|flake8|pylint|stylelint|prettier|css|firewall|iptables|nftables|routing|alert|"
    "alerting|validation|validator|business|naming|table|schema|migration|yaml|json|regex|rewrite|"
    "nginx|cors|waf|ingress|security group|retention|lifecycle|branch protection|codeowners|"
    "prometheus|recording|pricing|tax|discount|feature flag|renovate|dependabot|iam|rbac|acl|"
    "doc$|docs$|documentation|readme|wiki|page$|guide|onboarding|runbook|handbook|manual|gitignore|editorconfig|mypy|tsconfig|babel|webpack|kube|helm|terraform|sentry|pagerduty|"
    "cron|scheduler|queue|topic|grammar|parser|template|locale|format|formatter|config|settings|"
    "ci$|pipeline|workflow|test$|tests$|spec$|fixture|cache|build|lockfile|product|customer|client|"
    "tenant|api$|endpoint|app$|player|game|moderation|model's system prompt|prompt template|"
    "prompts/|llm feature|chatbot feature"
)
ADDRESSEE = (
    "you$|your$|yourself|you're|you've|you'll|assistant$|assistants$|ai$|llm|claude$|gpt|"
    "copilot$|gemini$|codex$|automated reader|tu$|usted|voce|vous$|dich$|"
    "ты|вы|あなた|君|你|您|너|당신"
)

# Safety controls and the acts that remove them.
CONTROL = (
    "guardrail|safeguard|safety|security check|security scan|security linter|security review|"
    "secret scan|secret-scan|scanner|linter|pre-commit|commit hook|git hook|hooks$|branch protection|"
    "code review|review$|reviews$|reviewer|approval|approvals|approve|confirmation|confirm|consent|"
    "permission|sign-off|signoff|2fa$|mfa$|two-factor|signature check|signature verification|"
    "signing|audit log|audit trail|sandbox|exfiltration check|content filter|filters$|refusal|"
    "redact|redaction|masking|secret detection|permission prompt|safety layer|restriction|"
    "ask the human|ask the user|asking the human|asking the user|check with the user|"
    "制限|signature$|assinatura|firma$|signatur|"
    "human review|human in the loop|checks$|check$|ci gate|status check|required check|"
    "validation|validacion|validacao|validazione|revisione|prufung|uberprufung|"
    "revision|aprobacion|aprovacao|approbation|genehmigung|freigabe|zustimmung|revision humana|"
    "revisao|controles de seguridad|comprobacion|verificac|securite|sicherheit|sicurezza|"
    "安全|セキュリティ|レビュー|承認|確認|审查|審查|审核|審核|批准|确认|確認|보안|검토|승인"
)
REMOVE = (
    "disable|disabling|turn off|turned off|switch off|deactivat|remove|bypass|circumvent|skip|"
    "skipping|silence|mute|suppress|comment out|uninstall|weaken|lift|without|w/o|no need|"
    "don't need|do not need|not needed|not required|no longer need|no longer required|unnecessary|"
    "is off|are off|now off|disabled|switched off|run without|go without|force-merge|"
    "force merge|--no-verify|admin merge|don't bother the|do not bother the|without bothering|"
    "answer yes|say yes|type yes|reply yes|auto-confirm|auto-accept|dispensad|exempt|exento|exenta|"
    "befreit|esonerat|paused|suspended|lifted|解除|撤廃|never wait for|don't wait for|do not wait for|"
    "without waiting for|no need to wait for|without asking|no verifiques|nao verifique|"
    "ne verifie pas|nicht prufen|non verificare|"
    "desactiv|deshabilit|apaga|sin$|omite|omitir|saltar|salta|desliga|desativ|desabilit|sem$|pule|"
    "pular|sans$|contourn|deaktivier|abschalt|ausschalt|umgeh|ohne$|uberspring|disattiv|disabilit|"
    "senza|salta|無効|オフ|スキップ|省略|なしで|せず|不要|待たず|必要ない|必要ありません|しなくていい|"
    "しなくてよい|关闭|關閉|禁用|停用|跳过|跳過|绕过|繞過|无需|無需|不需要|"
    "비활성|끄|건너뛰|없이"
)
# Secrets and the places they leave through.
SENSITIVE = (
    "credential|secret|secrets|api key|api keys|apikey|access key|private key|deploy key|ssh key|"
    "keys$|token|tokens|password|passwd|passphrase|cookie|session id|printenv|env$|environment variables|"
    ".env$|~/.aws|~/.ssh|~/.docker|~/.kube|~/.netrc|~/.npmrc|~/.pypirc|id_rsa|id_ed25519|"
    "keychain|vault|kubeconfig|service account|shell history|bash_history|zsh_history|git config|"
    "untracked files|zip of the repo|tarball of the repo|archive of the repo|copy of the repo|"
    "entire repo|whole repo|the codebase|clave|claves|contrasena|credencial|senha|chave|chaves|"
    "cle$|cles$|mot de passe|identifiant|schlussel|passwort|zugangsdaten|chiave|chiavi|"
    "ключ|парол|токен|鍵|キー|パスワード|トークン|秘密|密钥|密鑰|密码|密碼|令牌|凭证|憑證|키|비밀번호|토큰"
)
MOVE_OUT = (
    "send|sent$|post$|posting|upload|paste|attach|share|leak|email it|email them|email the|"
    "email this|email to|e-mail it|e-mail them|e-mail to|mail it|mail them|mail to|forward|publish|"
    "push it to|push them to|push to a|commit them to|copy them to|copy it to|put them in|put it in|"
    "put them into|put it into|include them in|include it in|add them to|add it to|print|echo|dump|"
    "exfil|beacon|submit|include|drop the result|drop it into|drop them into|the result into|"
    "the output into|the output to|copy|copie|copiez|kopier|scp$|rsync|upload|curl -d|curl --data|curl -f|--data-binary|transmit|report them|collect|gather|"
    "envia|enviar|manda|mandar|pega|pegar|publica|publicar|sube|subir|comparte|compartir|ponlas|ponlos|"
    "copia|copiar|envoie|envoyer|colle|coller|publie|partage|schick|send|sende|hochlad|poste|teile|"
    "veroffentlich|invia|inviare|incolla|pubblica|condividi|отправ|вставь|опубликуй|"
    "送信|送って|貼り付け|公開|共有|送|发送|發送|发到|發到|上传|上傳|粘贴|貼上|公开|公開|分享|보내|붙여|공개"
)
OUTSIDE = (
    "public|publicly|external|outside|third-party|pastebin|gist|webhook|http$|https$|#general|"
    "channel|slack|discord|telegram|issue$|bug report|comment$|pr body|pull request description|"
    "commit message|readme|email|@|server|endpoint|url|site|domain|ngrok|requestbin|"
    "commit$|next commit|pull request|merge request|pr comment|pr description|commentaire|comentario|kommentar|"
    "commento|"
    "publico|publica|publique|offentlich|pubblic|публичн|公開|公开|外部|공개"
)
# Hiding from the person who reviews.
HIDE = (
    "don't mention|do not mention|never mention|don't tell|do not tell|never tell|don't report|"
    "do not report|without telling|without mentioning|without letting|keep it quiet|keep this quiet|"
    "keep quiet|keep the user in the dark|in the dark|out of your summary|out of the summary|"
    "unmentioned|describe only|mention only|only mention|go unmentioned|unreported|"
    "from the history|from the log|de l'historique|del historial|do historico|aus dem verlauf|"
    "dalla cronologia|never sees|never see|won't see|doesn't see|never finds out|never know|won't know|"
    "to yourself|say it was|pretend it was|claim it was|tell them it was|"
    "without listing|doesn't need to know|does not need to know|need not know|needn't know|"
    "no need to mention|no need to tell|leave this out|leave it out|leave out|omit it from|omit this from|omit from|don't bring it up|"
    "do not bring it up|doesn't notice|don't notice|won't notice|not notice|never find out|"
    "without them knowing|behind their back|secretly|covertly|quietly|silently|stealth|"
    "no lo menciones|no se lo digas|sin decir|sin que|sans le dire|sans que|ne le dis pas|"
    "ne mentionne pas|nicht erwahnen|erwahne nicht|sag nicht|ohne dass|non dirlo|non menzionare|"
    "senza che|nao mencione|nao conte|sem que|heimlich|в тайне|не говори|不要告诉|不要告訴|别告诉|"
    "別告訴|悄悄|偷偷|暗中|黙って|こっそり|密かに|言わないで|伝えないで|말하지 마|몰래"
)
AUDIENCE = (
    "person$|people$|user|users$|human|reviewer|maintainer|owner|operator|developer|team|anyone|nobody|no one|"
    "summary|report|changelog|log$|logs$|pr description|final answer|response|"
    "usuario|utilisateur|nutzer|benutzer|utente|пользовател|ユーザー|利用者|用户|用戶|사용자"
)
# Granting the reader powers no one gave it.
GRANT = (
    "granted|grants you|grant you|gives you|has given you|have been given|clearance|authorized to|"
    "authorised to|allowed to|permitted to|full access|unrestricted|admin rights|root access|sudo|"
    "elevated|superuser|god mode|developer mode|no restrictions|no limits|no refusals|no filters|"
    "permisos completos|permissoes completas|pleins pouvoirs|tous les droits|volle rechte|"
    "permessi completi|full permissions|full rights|concedid|concedeu|no refusal|no rechaces|"
    "don't refuse|never refuse|do not refuse|senza regole|sin reglas|sans regles|ohne regeln|"
    "sem regras|without rules|no rules$|unfiltered|uncensored|before safety training|"
    "without safety training|stay in character|break character|"
    "pre-approved|preapproved|pre-approuv|pre-aprobad|pre-aprovad|vorab genehmigt|"
    "admin mode|administrator mode|modo administrador|mode administrateur|administratormodus|"
    "modalita amministratore|管理员模式|管理者モード|관리자 모드|already approved|already agreed|blanket|standing permission|"
    "considered approved|consider every|consider all|treat every|treat all|"
    "autorizado|permitido|acceso total|autorise|autorisation|berechtigt|erlaubt|autorizzato|"
    "許可され|権限|授权|授權|权限|권한"
)
# Making a failing check pass by changing the check rather than the code.
CHEAT = (
    "edit the check|edit the test|change the test|change the check|delete the check|delete the test|"
    "rewrite the test|weaken the test|loosen the test|lower the threshold|lower the coverage|"
    "mark it as passed|mark them as passed|mark the check|skip the failing|instead of the code|"
    "instead of fixing the code|make the check pass|make the tests pass by"
)
WRITE_MEMORY = (
    "memor|proposal|proposals|pending|candidate|write them|write it|to disk|directly|"
    "hashes.json|pending-approvals|engram"
)
AUTHORITY_HEAD = lazy_compile(
    r"(?:^|\n|[.!?:]\s)\s*(?:[#>*_\s]*)(?:\[\s*|<\s*|\(\s*|```\s*|\|\s*|【\s*|-{2,}\s*(?:begin\s+)?)?"
    r"(?:system|sys|admin|administrator|root|developer|operator|security(?:\s+team)?|engram|anthropic|"
    r"openai|google|assistant\s+config|policy|important|urgent|priority|override|notice|alert|"
    r"tool(?:[\s_-]*(?:output|result|response|call))?|function[\s_-]*(?:result|output)|"
    r"note\s+(?:from|to)\s+(?:the\s+)?(?:tool|system|ai|assistant|model|agent)|"
    r"(?:mensaje|mensagem|message|messaggio|nachricht)\s+(?:del?|do|du|dal|vom)\s+(?:sistema|systeme|system)|"
    r"systemhinweis|systemmeldung|avis\s+systeme|aviso\s+del?\s+sistema|aviso\s+do\s+sistema|"
    r"sistema|systeme|systemnachricht|(?:システム|系统|系統|시스템)(?:消息|通知|提示|公告|訊息|メッセージ|알림|메시지)?)"
    r"(?:[\s_-]*(?:notice|message|note|update|override|alert|directive|instruction|prompt|policy|"
    r"change|config|mode|priority|operator|admin|security)s?){0,2}\s*(?:[\]>):|】]|#{2,}|-{2,}|\(|\{|```|\n|\s+-\s|\s+—\s|\bpriority\s*=)",
    re.I,
)
_CLAUSE_END = lazy_compile(r"(?<=[.!?;])\s+|\n+|[。！？；]")
_NEGATED = lazy_compile(
    r"(?:\b(?:never|don'?t|do\s+not|must\s+not|mustn'?t|cannot|can'?t|should\s+not|shouldn'?t|"
    r"not\s+allowed\s+to|forbidden\s+to|avoid|(?:are|is|am|were|was|be)\s+not|nunca|jamas|jamais|niemals|nie|no\s+(?:debes|se\s+debe)|"
    r"ne\s+(?:jamais|pas)|nicht|non|nao)\b|不要|禁止|しないで|してはいけない|하지\s*마)[^.!?;]{0,60}$"
)


@lru_cache(maxsize=1)
def _compiled() -> dict[str, re.Pattern[str]]:
    names = {
        "set_aside": SET_ASIDE,
        "directive": DIRECTIVE,
        "prior": PRIOR,
        "technical": TECHNICAL,
        "addressee": ADDRESSEE,
        "control": CONTROL,
        "remove": REMOVE,
        "sensitive": SENSITIVE,
        "move_out": MOVE_OUT,
        "outside": OUTSIDE,
        "hide": HIDE,
        "audience": AUDIENCE,
        "grant": GRANT,
        "write_memory": WRITE_MEMORY,
        "cheat": CHEAT,
    }
    return {k: lazy_compile(_stems(v)) for k, v in names.items()}


_OWN_WORK = lazy_compile(
    r"\b(?:what\s+(?:you\s+)?changed|the\s+changes|these\s+changes|the\s+\w+\s+changes|dass\s+du|que\s+tu|que\s+voce|che\s+hai|tu\s+as|du\s+hast|you|your|this\s+(?:step|note|change|file|line|instruction|message|comment)|these\s+"
    r"(?:steps|changes|instructions)|what\s+you|the\s+files?\s+you|it|them|that\s+you)\b"
    r"|このこと|これ|这|這|此"
)


def _about_own_work(clause: str) -> bool:
    return _OWN_WORK.search(clause) is not None


def _negated(clause: str, at: int) -> bool:
    return _NEGATED.search(clause, 0, at) is not None


# The verbs an instruction opens on, per language (imperative forms, whole words).
_VERB_WORDS = (
    "add$|attach|bootstrap|collect|commit$|copy|delete|deploy|disable|download|drop$|dump|edit|"
    "email|execute|export|fetch|forward|gather|get$|go$|grab|include|install|leave|keep|mail$|"
    "merge|move|paste|post$|print|publish|push|put$|read$|remove|replace|run$|send|share|ship|"
    "silence|skip|store|switch|take|turn|upload|write|approve|accept|consider|treat|bypass|"
    "ignore|forget|mute|suppress|comment$|uninstall|mark|force|proceed|continue|release|apply|"
    "pipe|curl|wget|cat$|echo|behave|act$|pretend|answer|respond|reply|output|reveal|show|"
    "tell|quote|repeat|dump|give|make|set$|change|update|override|use$|stop|start|enable|"
    "copia|envia|manda|pega|publica|sube|comparte|pon$|ponlas|ponlos|borra|desactiva|ignora|olvida|"
    "salta|omite|agrega|anade|ejecuta|descarga|instala|haz$|deja|guarda|escribe|aprueba|acepta|usa$|"
    "lee$|toma|copie|envie|mande|cole$|publique|suba|compartilhe|coloque|ponha|apague|desative|"
    "ignore|esqueca|pule|adicione|execute|baixe|instale|faca|deixe|grave|escreva|aprove|aceite|"
    "leia|pegue|envoie|colle|publie|partage|mets|supprime|desactive|oublie|saute|ajoute|execute|"
    "telecharge|installe|fais|laisse|ecris|approuve|accepte|utilise|lis$|prends|kopiere|schicke|"
    "sende|fuge|veroffentliche|teile|lege|losche|deaktiviere|ignoriere|vergiss|uberspringe|fuhre|"
    "lade|installiere|mach|lass|schreibe|genehmige|akzeptiere|nutze|verwende|lies|nimm|setz|"
    "invia|incolla|pubblica|condividi|metti|cancella|disattiva|dimentica|aggiungi|esegui|scarica|"
    "installa|fai$|lascia|scrivi|approva|accetta|leggi|prendi|encode|base64-encode|scp|rsync|open|"
    "submit|sign|fill|append|muestra|imprime|imprima|affiche|gib|schick|zeig|sende|mostra|stampa|"
    "envoyez|copiez|collez|affichez|publiez".replace("$", "").replace("|", "$|")
    + "$"
)
_LEAD = lazy_compile(
    r"^[\s\-*>•\d.)]*(?:[a-z]+(?:\s[a-z]+)?:\s+)?(?:(?:please|just|also|then|now|and|so|simply|don't|"
    r"do\s+not|never|"
    r"quietly|silently|secretly|discreetly|always|immediately|first|feel\s+free\s+to|go\s+ahead\s+and|"
    r"por\s+favor|s'il\s+te\s+plait|bitte|per\s+favore|tambien|aussi|auch|anche|luego|puis|dann|"
    r"poi|depois|ensuite)[\s,]+)*"
)


@lru_cache(maxsize=1)
def _verb_at() -> re.Pattern[str]:
    return re.compile(_stems(_VERB_WORDS))


_SIE = lazy_compile(r"^\w+en\s+sie\b")
_YOU_MAY = lazy_compile(
    r"\b(?:you|u)\s+(?:can|may|should|must|are\s+(?:allowed|free|permitted|cleared)\s+to|"
    r"(?:do\s+not|don'?t|no\s+longer|won'?t|never)\s+need|needn'?t|have\s+(?:clearance|permission)|"
    r"are\s+(?:now\s+)?(?:authori[sz]ed|cleared))\b|\bno\s+need\s+(?:for\s+you\s+)?to\b|"
    r"\b(?:tu|usted|voce|vous|du)\s+(?:puedes|puede|pode|podes|peux|pouvez|kannst|darfst|no\s+necesitas|"
    r"nao\s+precisa|n'as\s+pas\s+besoin|brauchst\s+nicht)\b|"
    r"\b(?:voce\s+esta|tu\s+estas|usted\s+esta|estas)\s+(?:liberad[oa]|autorizad[oa])\s+(?:para|a)\b|"
    r"\b(?:voce|tu|usted|vous|du|you)\b[^.]{0,30}\b(?:esta|estas|es|etes|bist|are)\s+(?:dispensad|exent|"
    r"exempt|befreit|liberad|autorizad)|\btienes\s+permiso\s+para\b|\btu\s+as\s+le\s+droit\b|\bdu\s+darfst\b"
)
_SUBORDINATE = lazy_compile(
    r"^[\s\-*>•]*(?:when|whenever|if|unless|before|after|once|while|until|because|since|cuando|si|"
    r"quand|wenn|falls|se|quando)\b"
)
_CJK = lazy_compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


# The reader named in the third person with what it may or must do ("the assistant can
# bypass …", "o agente está autorizado a …", "maintainers want assistants to …").
_READER_SUBJECT = lazy_compile(
    r"\b(?:the\s+|an?\s+|any\s+|all\s+|o\s+|a\s+|el\s+|la\s+|l'|le\s+|der\s+|die\s+|il\s+|"
    r"lo\s+|los\s+|les\s+|os\s+|gli\s+)?(?:ai\s+)?(?:assistants?|agents?|ai|llms?|models?|claude|"
    r"copilot|gemini|codex|assistente|asistente|agente|ki|kis|ia|bots?)(?:\s+\w+){0,5}?\s+"
    r"(?:(?:should|must|shall|can|may|will|is\s+(?:now\s+)?(?:allowed|authori[sz]ed|permitted|cleared|"
    r"expected|required|supposed)|are\s+(?:now\s+)?(?:allowed|authori[sz]ed|permitted|expected|required)|"
    r"needs?\s+to|has\s+to|have\s+to|peut|doit|puede|debe|pode|deve|esta\s+autorizad[oa]|"
    r"kann|darf|soll|muss|puo|e\s+autorizzat[oa]|opera|operates|works)\b)|"
    r"\b(?:want|wants|expect|expects|ask|asks|require|requires|need|needs)\s+(?:the\s+|all\s+|every\s+)?"
    r"(?:ai\s+)?(?:assistants?|agents?|ai|models?)\s+to\b"
)


# The reader by name, not a thing of the project ("threat-model", "user agent", "build agents").
_READER_NOUN = lazy_compile(
    r"(?<![\w-])(?<!user\s)(?<!build\s)(?<!ssh\s)(?<!ci\s)(?<!data\s)"
    r"(?:assistants?|agents?|bots?|ai|llms?|copilot|claude)\s+"
)


def _reveal_names_its_object(clause: str, reveal: re.Match[str], own: re.Match[str]) -> bool:
    """Whether an English reveal verb takes the configuration as its object: it comes
    before it ("print your rules") or points back at it ("your rules: repeat them"); not
    "each desk has its own rules: print, web, social". Other languages put the verb last
    (把…贴出来, 表示して, zeigen) and are not held to the order."""
    if own.string is not clause or own.start() > reveal.start():
        return True
    if not _ENGLISH_REVEAL.fullmatch(reveal.group(0)):
        return True
    return re.match(r"\s+(?:\w+\s+)?(?:it|them|those|these)\b", clause[reveal.end() :]) is not None


_ENGLISH_REVEAL = lazy_compile(
    r"(?:quot|repeat|print|output|reveal|show|display|dump)\w*|copy|write|echo|paste|tell\s+me"
)


def names_the_agent_as_subject(text: str) -> bool:
    """Whether `text` has the agent as the subject of a duty or a permission ("the
    assistant should …", "agents may …")."""
    return _READER_SUBJECT.search(text) is not None


def main_clause(clause: str) -> str:
    """The clause without an opening subordinate ("when you finish, send …" → "send …");
    empty when the subordinate has no main clause after it."""
    sub = _SUBORDINATE.match(clause)
    if not sub:
        return clause
    comma = clause.find(",", sub.end())
    return clause[comma + 1 :] if comma >= 0 else ""


def aimed_at_reader(clause: str) -> bool:
    """Whether a clause tells its reader to act: it opens on a verb (after bullets, a short
    label and softeners), or says what "you" may or need not do. Descriptions of a system
    ("the service sends the token to …", "no merge without approval") are not aimed."""
    if _CJK.search(clause) or re.search(r"[\u0400-\u04ff]", clause):
        return True  # no reliable verb position to look for; the other concepts decide
    if _READER_SUBJECT.search(clause) or _YOU_MAY.search(clause):
        return True
    if _SUBORDINATE.match(clause):
        clause = main_clause(clause)
        if not clause:
            return False
    heads = [clause]
    colon = clause.find(":")
    if colon > 0 and len(clause[:colon].split()) <= 7:  # "quick favour for whoever …: run …"
        heads.append(clause[colon + 1 :])
    for m in _READER_NOUN.finditer(clause):  # "helpful bots here collect …"
        pos = m.end()
        for _ in range(3):
            if _verb_at().match(clause, pos):
                return True
            nxt = re.match(r"[\w'-]+\s+", clause[pos:])
            if not nxt:
                break
            pos += nxt.end()
    comma = clause.find(",")
    if comma > 0 and len(clause[:comma].split()) <= 6:  # "as part of onboarding, send …"
        heads.append(clause[comma + 1 :])
    for head in heads:
        rest = head[_LEAD.match(head).end() :]
        if _verb_at().match(rest) or _SIE.match(rest):
            return True
    return False


# Asking the reader for its own hidden configuration.
_REVEAL = lazy_compile(
    r"\b(?:quot\w*|repeat\w*|print\w*|output\w*|reveal\w*|show\w*|display\w*|copy|copie\w*|write|"
    r"dump\w*|echo|paste|tell\s+me|recopie\w*|muestra\w*|mostra\w*|riporta\w*|ripeti\w*|repite\w*|"
    r"repita\w*|imprime\w*|affiche\w*|zeig\w*|gib\w*|wiederhol\w*|begin\s+(?:its|your)\s+\w+\s+by\s+quoting)\b|"
    r"(?:表示|出力|教えて|输出|輸出|显示|顯示|告诉我|告訴我|复述|複述|重复|重複|贴出|貼出|发出来|打印|列出|原文)"
)
_OWN_CONFIG = lazy_compile(
    r"\b(?:your|its|the\s+assistant'?s|tu|tus|su|sus|seu|sua|o\s+seu|ton|tes|le\s+tuo|il\s+tuo|tuo|tue|"
    r"deine[nm]?|ihre[nm]?)\s+(?:\w+\s+){0,2}?(?:system\s+(?:prompt|message|instructions?)|prompt|"
    r"instructions?|configuration|config|guidelines|rules|instrucciones|instrucoes|consignes|istruzioni|"
    r"anweisungen|systemprompt|prompt\s+de\s+sistema|prompt\s+di\s+sistema|developer\s+(?:message|prompt|"
    r"instructions?))\b|"
    r"\b(?:instrucciones|instrucoes|instructions|consignes|istruzioni|anweisungen)\s+(?:que\s+(?:recibiste|"
    r"recebeu|tu\s+as\s+recues)|che\s+hai\s+ricevuto|die\s+du\s+erhalten|you\s+(?:received|were\s+given|got))|"
    r"\b(?:hidden|initial|original|secret|full|complete)\s+(?:\w+\s+)?(?:system\s+)?(?:prompt|instructions|"
    r"configuration)\b|\b(?:hidden|initial|original|secret|full|complete)\s+system\s+message\b|\bsystem\s+(?:prompt|message)\b[^.;]{0,30}\b(?:you|tu|que\s+tu)\b|"
    r"\bmessage\s+systeme\s+que\s+tu|\bistruzioni\s+nascoste|\binstrucciones\s+(?:de(?:l)?\s+sistema|ocultas)|"
    r"\bwhat\s+(?:\w+\s+)?(?:were\s+you|you\s+were|did\s+they\s+tell\s+you)\s+told\b|"
    r"\b(?:mensaje|mensagem|message|messaggio)\s+(?:de|del|do|du|di)\s+(?:sistema|systeme)\b|"
    r"\bcontents?\s+of\s+(?:the|your|its)\s+system\s+(?:prompt|message)\b|"
    r"\bsystem\s+(?:prompt|message)\s+(?:verbatim|word\s+for\s+word|in\s+full)\b|"
    r"\bque\s+te\s+(?:dieron|deram)\b|\bqu'on\s+t'a\s+donne|\bche\s+ti\s+hanno\s+dato\b|\bbefore\s+the\s+user'?s\s+first\s+message\b|"
    r"システムプロンプト|系统提示|系統提示|隐藏指令|初始指令"
)
# A settings block that switches the reader's controls off or opens everything to it.
_PERMISSION_SWITCH = lazy_compile(
    r"[\"']?(?:require|requires|need|enforce|enable|use)?[_-]?(?:human[_-])?(?:approval|review|confirm\w*|"
    r"redact\w*|safety|sandbox\w*|verif\w*|scan\w*|guardrails?)[\"']?\s*[:=]\s*[\"']?(?:false|off|no|0|none|"
    r"disabled)\b|[\"']?allow[_-]?\w+[\"']?\s*[:=]\s*[\"']?(?:\*|all|any|true)[\"']?"
)
_AGENTISH = lazy_compile(r"\b(?:agent|assistant|model|ai|llm|copilot|claude|permissions?)\w*")
_HIDE_RX = lazy_compile(
    r"\b(?:erwahn|sag|teil|berichte|meld)\w*\b[^.;]{0,40}\bnicht\b|"
    r"\bne\s+(?:lui\s+|leur\s+)?(?:signale|dis|mentionne|indique|previens|parle|raconte)\w*\s+pas\b|"
    r"\bno\s+(?:le\s+|les\s+)?(?:digas|menciones|cuentes|avises|informes|reportes)\b|"
    r"\bnao\s+(?:lhe\s+)?(?:conte|mencione|diga|avise|informe|relate)\b|"
    r"\bnon\s+(?:gli\s+|le\s+)?(?:dire|dirgli|menzionare|segnalare|informare|dirlo|raccontare)\b"
)
_SECRET_VAR = lazy_compile(
    r"\$\{?[a-z0-9_]*(?:secret|token|password|passwd|api_key|apikey|access_key|private_key|credential)[a-z0-9_]*"
)


_NO_NEED = lazy_compile(
    r"\bno\s+(?:\w+\s+){0,3}?(?:review|approval|confirmation|check|sign-?off)\w*\s+(?:is\s+|are\s+)?"
    r"(?:needed|required|necessary)\b"
)
_SPLIT_OFF = lazy_compile(r"\b(?:turn|switch|shut|swap)\s+(?:\w+\s+){1,3}?off\b")
# Quoted text introduced as an example is mentioned, not said ("send the chatbot the phrase
# 'ignore previous instructions'"): blanked before the intent is read.
_MENTIONED = lazy_compile(
    r"(?:the\s+(?:phrase|string|words?|payload)|(?:phrases?|strings?|payloads?|prompts?|inputs?|attacks?|"
    r"examples?|cases?|samples?|test\s+cases?)\s+like|"
    r"such\s+as|e\.g\.|for\s+example)\s*[:,]?\s*"
    r"[\"'“‘«](?P<body>[^\"'”’»\n]{3,60})[\"'”’»]"
)


# Short quoted phrases inside parentheses are examples given in passing ("text that looks
# like instructions ("approve this", "run that")"): mentioned, not said.
_QUOTED_IN_PARENS = lazy_compile(
    r"(?<![\w(])\((?P<body>[^(){}\n]{0,200}?[\"“«„][^(){}\n]{0,200}?)\)"
)
_QUOTED_SHORT = lazy_compile(r"[\"“«„][\w\s,.'’!?…-]{1,60}[\"”»“]")  # a phrase: no code


def blank_mentions(text: str) -> str:
    def blank(m: re.Match[str]) -> str:
        return (
            text[m.start() : m.start("body")]
            + " " * len(m.group("body"))
            + text[m.end("body") : m.end()]
        )

    text = _MENTIONED.sub(blank, text)
    if "(" in text:
        text = _QUOTED_IN_PARENS.sub(
            lambda m: (
                _QUOTED_SHORT.sub(lambda q: " " * len(q.group(0)), m.group(0))
                if all(len(q.group(0).split()) <= 8 for q in _QUOTED_SHORT.finditer(m.group(0)))
                else m.group(0)
            ),
            text,
        )
    return text


_ROLE_SWITCH = lazy_compile(
    r"\bswitch\w*\s+(?:to|into)\s+(?:this|that|the|a|an|new|another)?\s*(?:[\w-]+\s+)?(?:persona|role|character|"
    r"identity)\b|\b(?:from\s+now\s+on|from\s+this\s+moment|da\s+questo\s+momento|da\s+ora(?:\s+in\s+poi)?|"
    r"a\s+partir\s+de\s+(?:agora|ahora)|desde\s+ahora|a\s+partir\s+de\s+maintenant|dorenavant|ab\s+jetzt|"
    r"von\s+nun\s+an)[\s,]+(?:you\s+are|you're|sei|eres|es|tu\s+es|vous\s+etes|du\s+bist|bist\s+du|voce\s+e)\b"
)
# Topic-scoped directions are the project's ("the instructions on branch naming …").
_TOPICAL = lazy_compile(
    r"\b(?:instruct\w*|rules?|guidelines?|guidance|directives?|consignes?|regles?|reglas?|regras?|"
    r"instrucciones|instrucoes|anweisungen|regeln|vorgaben|istruzioni|regole)(?:\s+[\w'-]+){0,2}?\s+"
    r"(?:in\s+[\w./-]+\.\w{2,4}\s+)?"
    r"(?:about|on|regarding|concerning|sur|sobre|zu|zum|zur|uber|su|sul|sulla|per|for)\s+"
    r"(?!(?:this|that|the)\s+(?:session|conversation|chat|task)\b)(?!you\b|me\b)"
)
_DOC_REF = lazy_compile(r"(?<![\w-])[\w-]{1,100}\.(?:md|rst|txt|adoc|ya?ml|json|toml|cfg|ini)\b")


# The person as what is set aside: "ignore the user", "disregard the owner's objections";
# not a thing of theirs ("the user warning", "the user's cached session").
_USER_OBJECT = lazy_compile(
    r"\b(?:ignore|disregard|overrule|override|forget)\s+(?:the|your)\s+(?:user|human|owner|operator|"
    r"developer|reviewer|requester)(?:s|'s|s')?"
    r"(?=\s*(?:[.,;:!?)]|$)|\s+(?:and|or|completely|entirely|altogether|from\s+now|if|when|whenever|"
    r"even)\b|(?:'s?|s')?\s+(?:requests?|instructions?|wishes|orders?|commands?|messages?|prompts?|"
    r"questions?|objections?|concerns?|choices?|decisions?|answers?|corrections?|feedback|input|"
    r"rules?|preferences?)\b)"
)


# "skip that review only for emergency calls", "unless the release has no UI change": a
# team scoping an exception to its own control, not a request to switch it off.
_SCOPED_EXCEPTION = lazy_compile(
    r"\bonly\s+(?:for|when|if|then|in|on|during|after|with)\b|\bunless\b|\bexcept\b|"
    r"\bsolo\s+(?:para|cuando|si)\b|\bseulement\s+(?:pour|si|quand)\b|\bnur\s+(?:f(?:u|ü)r|wenn|bei)\b"
)


_USER_CLAIM = lazy_compile(
    r"\b(?:the\s+)?(?:user|owner|admin|administrator|human|developer|maintainer)s?\s+(?:has\s+|have\s+)?"
    r"(?:already\s+)?(?:asked|wants|told|instructed|approved|authori[sz]ed|said|requested|allowed)\b"
)
# A negation after the verb, where Korean and Japanese put it ("승인 없이 배포하지 마세요").
NEGATED_AFTER = lazy_compile(
    r"(?:하지\s*마|하지\s*않|지\s*마세요|しないで|してはいけない|禁止|不要|不得)"
)
_SENTENCE_END = lazy_compile(r"[.!?。！？](?=\s|$)|\n")


class _Concepts(dict):
    """The concepts of one clause, each searched the first time a rule asks for it: most
    rules fail on their first concept, and the others are then never searched."""

    def __init__(self, patterns: dict[str, re.Pattern[str]], clause: str) -> None:
        super().__init__()
        self._patterns, self._clause = patterns, clause

    def __missing__(self, name: str) -> re.Match[str] | None:
        found = self[name] = self._patterns[name].search(self._clause)
        return found


def clause_intent(clause: str, before: str = "", raw: str = "") -> tuple[str, str] | None:
    """(intent, evidence) for one normalised clause (and the one before it), or None.

    `raw` is the clause with its quoted code kept: a command there may read the secrets
    (`env | base64`) that the prose around it sends out."""
    c = _compiled()
    found = _Concepts(c, clause)

    def has(*names: str) -> bool:
        return all(found[n] for n in names)

    if has("set_aside", "directive", "prior") and not _TOPICAL.search(clause):
        d = found["directive"]
        owned = found["addressee"] or re.search(r"\b(?:the\s+)?(?:user|human|system)'?s?\b", clause)
        tech = found["technical"] or _DOC_REF.search(clause)
        if (not tech or owned) and not _negated(clause, found["set_aside"].start()):
            return "override", f"{found['set_aside'].group(0)} … {d.group(0)}"
    m = _USER_OBJECT.search(clause)
    if m and not _negated(clause, m.start()):
        return "override", m.group(0)
    m = _ROLE_SWITCH.search(clause)
    if m and not _negated(clause, m.start()):
        return "role_switch", m.group(0)
    reveal, own = _REVEAL.search(clause), _OWN_CONFIG.search(clause)
    if reveal and not own and re.search(r"\b(?:it|them|that|this)\b", clause):
        own = _OWN_CONFIG.search(before)  # "what were you told …? repeat it word for word"
    owned = own is not None and re.match(
        r"(?:your|its|tu|tus|seu|ton|tes|tuo|deine|what)\b", own.group(0)
    )
    if (
        reveal
        and own
        and (owned or not found["technical"])
        and not _negated(clause, reveal.start())
        and _reveal_names_its_object(clause, reveal, own)
    ):
        return "prompt_leak", f"{reveal.group(0)} … {own.group(0)}"
    if _AGENTISH.search(clause):
        m = _PERMISSION_SWITCH.search(clause)
        if m:
            return "disable_safety", m.group(0)
    aimed = aimed_at_reader(clause)
    whole = found  # concepts of the whole clause, subordinate part included
    full_clause = clause
    clause = main_clause(clause) if not _CJK.search(clause) else clause
    found = _Concepts(c, clause)
    for name in ("control", "audience", "addressee"):  # "when asked for confirmation, say yes"
        found[name] = found[name] or whole[name]
    control = found["control"] or (
        re.search(r"\b(?:them|it|those|these)\b", clause) and c["control"].search(before)
    )
    if not found["remove"]:
        found["remove"] = _SPLIT_OFF.search(clause) or _NO_NEED.search(clause)
    if found["cheat"] and aimed and not _negated(clause, found["cheat"].start()):
        return "disable_safety", found["cheat"].group(0)
    if found["remove"] and control and aimed and not _SCOPED_EXCEPTION.search(full_clause):
        r = found["remove"]
        if not _negated(clause, r.start()) and not NEGATED_AFTER.search(clause, r.end()):
            return "disable_safety", f"{r.group(0)} … {control.group(0)}"
    sensitive = (
        found["sensitive"]
        or _SECRET_VAR.search(clause)
        or (raw and (c["sensitive"].search(raw) or _SECRET_VAR.search(raw)))
    )
    if sensitive and found["move_out"] and (found["outside"] or found["hide"]) and aimed:
        m = found["move_out"]
        if not _negated(clause, min(m.start(), sensitive.start())):
            return "exfiltration", f"{m.group(0)} … {sensitive.group(0)}"
    if not found["hide"]:
        found["hide"] = _HIDE_RX.search(clause)
    if has("hide") and (found["audience"] or found["addressee"]):
        h = found["hide"]
        told_users = re.match(
            r"\s*(?:never|don'?t|do\s+not)\s+\w+\s+(?:the\s+)?(?:users?|customers?|patients?)\s+"
            r"(?:their|that|whether|if|about\s+their)\b",
            clause[h.start() :],
        )
        second_person = re.search(r"\b(?:you|your|du|dass\s+du|tu|que\s+tu|voce|hai)\b", clause)
        told_users = told_users or re.search(  # what the product tells its users
            r"\b(?:that|que|dass|che)\s+(?:[\w'-]+\s+){0,3}?(?:password|senha|contrasena|mot\s+de\s+passe|"
            r"passwort|credentials?|account|compte|conta|cuenta|konto|error|erreur|erro|fehler)",
            clause,
        )
        imperative_hide = _HIDE_RX.search(clause) is not None
        if not told_users and (
            (_about_own_work(full_clause) and (aimed or second_person)) or imperative_hide
        ):
            return "concealment", h.group(0)
    if found["grant"] and (aimed or found["addressee"]):
        g = found["grant"]
        if not _negated(clause, g.start()) and (
            found["addressee"] or found["write_memory"] or aimed
        ):
            return "grant", g.group(0)
    return None


# Installers documented by the tools themselves, on their own domains: piping these into a
# shell is what the tools' docs say to do. Anything else fetched and executed is refused.
_OFFICIAL_INSTALLERS = frozenset(
    "astral.sh sh.rustup.rs get.docker.com deno.land bun.sh get.pnpm.io install.python-poetry.org "
    "pyenv.run get.sdkman.io brew.sh starship.rs get.helm.sh tailscale.com ollama.com mise.run "
    "get.volta.sh install.determinate.systems get.k3s.io fnm.vercel.app foundry.paradigm.xyz "
    "nixos.org sh.vector.dev claude.ai opencode.ai cli.moonrepo.dev get.jetify.com "
    "raw.githubusercontent.com/homebrew raw.githubusercontent.com/nvm-sh".split()
)
_URL = lazy_compile(r"\b(https?|ftp)://([^/\s'\"`)]+)(/[^\s'\"`)]*)?", re.I)
_FETCH_RUN = lazy_compile(
    r"\b(?:curl|wget|iwr|invoke-webrequest|irm|invoke-restmethod|fetch)\b[^|\n;]{0,240}?\|\s*"
    r"(?:sudo\s+(?:-\w+\s+)*)?(?:(?:ba|z|k|da|fi)?sh|python\d?|perl|ruby|node|iex|invoke-expression)\b|"
    r"\b(?:(?:ba|z)?sh|python\d?|node|perl|ruby)\s+(?:-[ce]\s+)?[\"']?(?:<\(|\$\()\s*(?:curl|wget)\b|"
    r"\b(?:iex|invoke-expression)\b[^\n]{0,80}?(?:downloadstring|invoke-webrequest|iwr|irm)\b|"
    r"\bexec\s*\(\s*(?:urllib\.request\.)?urlopen|\beval\s*\(\s*(?:requests\.get|urlopen|fetch)|"
    r"\b(?:run|rode|roda|ejecuta|execute|lance|fuhre|esegui)\b[^;\n]{0,60}\b(?:downloaded|baixado|descargado|"
    r"telecharge|heruntergeladen|scaricato)\b|"
    r"\b(?:download|fetch|get|grab|descarga|baixe|telecharge|lade|scarica)\b[^;\n]{0,120}?"
    r"(?:chmod\s+\+?[0-7x]+|\b(?:run|execute|launch|start|ejecuta|execute|lance|fuhre|esegui)\b)"
)
_UNREVIEWED = lazy_compile(
    r"\b(?:no\s+need\s+to\s+(?:inspect|read|review|check|look)|without\s+(?:reading|reviewing|"
    r"inspecting|checking|looking)|(?:don'?t|do\s+not)\s+(?:inspect|read|review|check)\s+it|"
    r"as\s+root|with\s+sudo|sudo\s+\./)"
)


def _remote_exec(form: str) -> str | None:
    """A fetch whose result is executed, from a host that is not the tool's own installer."""
    m = _FETCH_RUN.search(form)
    if not m:
        return None
    line_start = form.rfind("\n", 0, m.start()) + 1
    line_end = form.find("\n", m.end())
    line = form[line_start : line_end if line_end >= 0 else len(form)]
    if _negated(line, m.start() - line_start) or re.search(r"\bnever\s+pipe\b", line):
        return None
    urls = list(_URL.finditer(line))
    for u in urls:
        host, path = u.group(2).lower(), (u.group(3) or "").lower()
        official = host in _OFFICIAL_INSTALLERS or any(
            (host + path).startswith(o) for o in _OFFICIAL_INSTALLERS if "/" in o
        )
        if u.group(1).lower() != "https" or re.fullmatch(r"[\d.:]+", host) or not official:
            return m.group(0)[:60]
    if not urls and _UNREVIEWED.search(line):
        return m.group(0)[:60]
    if urls and _UNREVIEWED.search(line) and "sudo" not in line:
        return m.group(0)[:60]
    return None


@lru_cache(maxsize=1)
def _trigger() -> re.Pattern[str]:
    """Every act an intent needs, in one pattern: most text has none and is done at once."""
    acts = "|".join((SET_ASIDE, REMOVE, MOVE_OUT, HIDE, GRANT, CHEAT))
    return lazy_compile(
        _stems(acts)
        + "|"
        + "|".join(
            rx.pattern
            for rx in (
                _REVEAL,
                _HIDE_RX,
                _ROLE_SWITCH,
                _USER_OBJECT,
                _PERMISSION_SWITCH,
                _SPLIT_OFF,
            )
        )
    )


# What opens a list of what must not be done ("Agents must not: - publish - approve …"),
# and the marks between its items (the folded form has one line).
_NEGATING_HEAD = lazy_compile(
    r"(?:\b(?:must|should|may|shall|will|can|do|does)\s+(?:not|never)|\bmustn'?t|\bnever|"
    r"\bdon'?t|\bcannot|\bcan'?t|\bnot\s+allowed\s+to|\bforbidden)\b[^:]{0,40}:(?=\s*[-*•+]\s)"
)
_LIST_MARK = lazy_compile(r"\s[-*•+]\s")


def _read_as_written(clause: str) -> list[str]:
    """The parts of a clause to read: itself, or, under a head that forbids ("Agents must
    not:"), the head and each item read as forbidden, as its writer meant it."""
    head = _NEGATING_HEAD.search(clause)
    if head is None:
        return [clause]
    items = _LIST_MARK.split(clause[head.end() :])
    return [clause[: head.end()], *("must not " + item for item in items if item.strip())]


def find_intent(form: str, *, loose: bool = False) -> tuple[str, str] | None:
    """The first (intent, evidence) in normalised `form`, clause by clause.

    `loose` is for text a renderer hides (comments, alt text): there any authority head
    or concept of power is enough, since nothing hidden has a reason to direct the reader.
    """
    hit = _remote_exec(form)
    if hit:
        return "remote_exec", hit
    blanked = blank_mentions(CODE_SPAN.sub(lambda m: " " * len(m.group(0)), form))
    if not _trigger().search(blanked) and not (loose or AUTHORITY_HEAD.search(form)):
        return None  # no act of any intent anywhere: nothing to read clause by clause
    before = ""
    start = 0
    cuts = [(m.start(), m.end()) for m in _CLAUSE_END.finditer(blanked)] + [
        (len(blanked), len(blanked))
    ]
    for cut_start, cut_end in cuts:
        clause, raw = blanked[start:cut_start], form[start:cut_start]
        start = cut_end
        if len(clause.strip()) < 6:
            continue
        hit = next(
            (h for part in _read_as_written(clause) if (h := clause_intent(part, before, raw))),
            None,
        )
        if not hit and before and len(clause.split()) <= 4:
            # "Those rules at the top of your context? Outdated.": one thought in two
            hit = clause_intent(before + " " + clause, "", raw)
        if hit:
            return hit
        before = clause
    for head in AUTHORITY_HEAD.finditer(form):
        # what a head introduces: its own sentence, not the rest of the note
        end = _SENTENCE_END.search(form, head.end())
        rest = form[head.end() : end.start() if end else len(form)]
        c = _compiled()
        # (naming a password after "Policy:" is a team's rule, not a forged order; moving
        # one out is)
        for name in ("grant", "control", "set_aside", "write_memory", "remove"):
            m = c[name].search(rest)
            if m:
                return "fake_system", f"{head.group(0).strip()} … {m.group(0)}"
        m = _READER_SUBJECT.search(rest)
        if m:
            return "fake_system", f"{head.group(0).strip()} … {m.group(0)}"
        m = _USER_CLAIM.search(rest)
        if m:  # "Tool output (policy): the user asked you earlier to …": authority claimed
            return "fake_system", f"{head.group(0).strip()} … {m.group(0)}"
        sensitive, moved = c["sensitive"].search(rest), c["move_out"].search(rest)
        if sensitive and moved:  # "NOTE TO MODEL: paste the contents of .env into …"
            return (
                "fake_system",
                f"{head.group(0).strip()} … {moved.group(0)} … {sensitive.group(0)}",
            )
    if loose:
        c = _compiled()
        if c["addressee"].search(blanked) and re.search(
            r"\b(?:add|replace|delete|remove|run|write|change|insert|create|push|merge|send|"
            r"approve|commit|install|download)\b",
            blanked,
        ):
            return "hidden_instruction", blanked.strip()[:50]
    return None
