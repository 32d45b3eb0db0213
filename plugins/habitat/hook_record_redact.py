"""The core's redaction (``echo_core.redact``), mirrored for the hook recorder.

The recorder runs in a bare interpreter (``python -S``, no site-packages: see
``hook_record``), so it cannot import ``echo_core``; this module is the same rule table
(``RULES``: name, pattern, hints, folded, accept) and the same algorithm over the
standard library's ``re``, so a record written by a hook is redacted exactly as a
capture is: ``<private>`` blocks dropped, each secret replaced by ``[REDACTED:<rule>]``.
``tests/test_habitat_record_hook.py`` holds the two together: the table equals the
core's rule by rule, and both give the same text on the redaction table and on
generated text. Change a rule in ``echo_core/redaction.py``, then here.

One shortcut the core does not take, with the same result: the ``env-secret`` rule runs
only on a text holding one of the words its names must end with (``key``, ``token``,
``secret``, ``pass``, ``pwd``, ``credential``); the others skip it as the core's hints do.
Patterns compile on first use (most texts compile none or two), with ``re.compile`` or
the compiler given to ``use_compiler`` (the recorder's cache of compiled patterns,
``hook_record_sre``).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing and re cost milliseconds: imported when needed
if TYPE_CHECKING:
    import re
    from collections.abc import Callable

__all__ = ["RULES", "redact_text", "use_compiler"]

MARKER = "[REDACTED:{}]"

#: the core's pieces of the command-line rules (``echo_core.redaction``: same text)
_SEP = r"(?:[ \t]|\\\r?\n){1,40}"
_ARG = r"(?:[^\s;&|]|&(?![&\s]))[^\s;|]{0,199}"
_VALUE = (r"(?![\"']?\[REDACTED:)(?P<secret>\"[^\"\n]{1,500}\"|'[^'\n]{1,500}'|"
          r"[^\s\"'`;&|<>()]{1,500})")
_SECRET_OPTION = (
    r"(?i)(?<![A-Za-z0-9_\-])-{1,2}(?!(?:no|ask|prompt|show|print|skip|require|generate|use|"
    r"with)[-_])(?:[A-Za-z0-9]{1,30}[-_]){0,4}(?:password|passwd|passphrase|secret|token|"
    r"bearer|api[-_]?key|apikey|auth[-_]?key|access[-_]?key|secret[-_]?key)")
_OPTION_HINTS = ("-pass", "_pass", "-secret", "_secret", "-token", "_token", "-bearer",
                 "_bearer", "-api", "_api", "-auth", "_auth", "-access", "_access")


def _after(command: str) -> str:
    again = (r"(?!(?:[^\s;|]{0,200}[^A-Za-z0-9_.\-\s;|])?" + command
             + r"(?:[ \t]|\\\r?\n))")
    return (r"(?<![A-Za-z0-9_.\-])" + command + "(?:" + _SEP + again + _ARG + "){0,24}?"
            + _SEP)


_CURL = r"curl(?:\.exe)?"
_MYSQL = (r"(?:mysql(?:dump|admin|import|check|show|slap|pump|binlog|sh)?|"
          r"mariadb(?:-?(?:dump|admin|import|check|show|slap|binlog))?)(?:\.exe)?")

#: (name, pattern, hints, folded, accept) in the order they apply; ``accept`` names the
#: core's check of a candidate (``mixed``: letters and digits; ``has_digit``).
RULES: tuple[tuple[str, str, tuple[str, ...], bool, str | None], ...] = (
    ('pem-private-key',
     ('-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:[\\s\\S]*?-----E'
      'ND [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|[\\s\\S]*\\Z)'),
     ('-----BEGIN ',), False, None),
    ('anthropic-key',
     '(?<![A-Za-z0-9_\\-])sk-ant-[A-Za-z0-9_\\-]{20,}',
     ('sk-ant-',), False, None),
    ('openai-key',
     ('(?<![A-Za-z0-9_\\-])(?P<secret>sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_'
      '\\-]{20,})'),
     ('sk-',), False, 'mixed'),
    ('aws-access-key-id',
     '(?<![A-Za-z0-9_\\-])(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![0-9A-Za-z])',
     ('AKIA', 'ASIA', 'ABIA', 'ACCA'), False, None),
    ('aws-secret-key',
     ('(?i)(?<![A-Za-z0-9])aws[A-Za-z_\\-]{0,20}secret[A-Za-z_\\-]{0,20}[\\"\']?\\'
      's{0,5}[:=]{1,2}\\s{0,5}[\\"\']?(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9'
      '/+=])'),
     ('aws',), True, None),
    ('aws-secret-key',
     ('\\[REDACTED:aws-access-key-id\\][\\s\\S]{0,30}?(?<![A-Za-z0-9/+])(?P<secret>[A-Za-z0'
      '-9/+]{40})(?![A-Za-z0-9/+=])'),
     ('[REDACTED:aws-access-key-id]',), False, 'base64_secret'),
    ('github-token',
     ('(?<![A-Za-z0-9_\\-])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9'
      '_]{22,})'),
     ('ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_'), False, None),
    ('gitlab-token',
     '(?<![A-Za-z0-9_\\-])glpat-[A-Za-z0-9_\\-]{20,}',
     ('glpat-',), False, None),
    ('slack-webhook',
     ('https://hooks\\.slack\\.com/services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z'
      '0-9]{16,}'),
     ('hooks.slack.com',), False, None),
    ('slack-token',
     '(?<![A-Za-z0-9_\\-])xox[abposr]-[A-Za-z0-9\\-]{10,}',
     ('xox',), False, 'has_digit'),
    ('stripe-key',
     '(?<![A-Za-z0-9_\\-])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}',
     ('_live_', '_test_'), False, None),
    ('google-api-key',
     '(?<![A-Za-z0-9_\\-])AIza[0-9A-Za-z_\\-]{35}(?![0-9A-Za-z_\\-])',
     ('AIza',), False, None),
    ('huggingface-token',
     '(?<![A-Za-z0-9_\\-])hf_[A-Za-z0-9]{30,}(?![A-Za-z0-9_])',
     ('hf_',), False, 'hf_token'),
    ('npm-token',
     '(?<![A-Za-z0-9_\\-])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])',
     ('npm_',), False, None),
    ('sendgrid-key',
     ('(?<![A-Za-z0-9_\\-])SG\\.[A-Za-z0-9_\\-]{22}\\.[A-Za-z0-9_\\-]{43}(?![A-Za-'
      'z0-9_\\-])'),
     ('SG.',), False, None),
    ('twilio-key',
     '(?<![A-Za-z0-9_\\-])(?:SK|AC)[0-9a-f]{32}(?![0-9A-Za-z])',
     ('SK', 'AC'), False, None),
    ('jwt',
     ('(?<![A-Za-z0-9_\\-])eyJ[A-Za-z0-9_\\-]{8,}\\.eyJ[A-Za-z0-9_\\-]{8,}\\.[A-Za'
      '-z0-9_\\-]*'),
     ('eyJ',), False, None),
    ('authorization',
     ('(?i)(?<![A-Za-z0-9_\\-])(?:proxy-)?authorization[\\"\']?\\s{0,5}[:=]\\s{0,5'
      '}[\\"\']?(?:bearer|basic|token|digest)\\s{1,5}(?!\\[REDACTED:)(?P<secret>['
      'A-Za-z0-9._~+/\\-]{4,}=*)'),
     ('authorization',), True, None),
    ('authorization',
     ('(?i)(?<![A-Za-z0-9_\\-])(?:proxy-)?authorization[\\"\']?[ \\t]{0,5}[:=][ \\t]'
      '{0,5}[\\"\']?(?:[A-Za-z][A-Za-z0-9_\\-]{0,30}[ \\t]{1,5})?(?![\\"\']?\\[REDACTE'
      'D:)(?P<secret>[A-Za-z0-9._~+/\\-]{16,}=*)'),
     ('authorization',), True, 'option_value_is_secret'),
    ('api-key-header',
     ('(?i)(?<![A-Za-z0-9_\\-])(?:[A-Za-z0-9]{1,30}-){0,5}(?:(?:api|auth|access|'
      'secret|subscription)-key|(?<=-)apikey)[\\"\']?:[ \\t]{0,5}[\\"\']?(?![\\"\']?\\['
      'REDACTED:)(?P<secret>[A-Za-z0-9._~+/\\-]{8,}=*)'),
     ('-key', '-apikey'), True, 'option_value_is_secret'),
    ('bearer-token',
     ('(?i)(?<![A-Za-z0-9_\\-])bearer\\s{1,5}(?!\\[REDACTED:)(?P<secret>[A-Za-z0'
      '-9._~+/\\-]{16,}=*)'),
     ('bearer',), True, 'has_digit'),
    ('url-password',
     ('(?<![A-Za-z0-9+.\\-])[A-Za-z][A-Za-z0-9+.\\-]{0,20}://[^\\s:/@?#]{1,200}:'
      '(?!\\[REDACTED:)(?P<secret>[^\\s@/?#]{1,200})@(?=[A-Za-z0-9\\[])'),
     ('://',), False, None),
    ('option-secret', _SECRET_OPTION + "=" + _VALUE, _OPTION_HINTS, True, 'option_assigned'),
    ('option-secret', _SECRET_OPTION + r"[ \t]{1,5}(?!-)" + _VALUE, _OPTION_HINTS, True,
     'option_value_is_secret'),
    ('curl-user-password',
     _after(_CURL) + r"(?:-u|-U|--user|--proxy-user)(?:[ \t]{1,5}|=)?[\"']?"
     r"[^\s:\"'`]{0,100}:(?!\[REDACTED:)(?P<secret>[^\s\"'`]{1,500})",
     ('curl',), False, 'cli_password'),
    ('mysql-password',
     _after(_MYSQL) + "-p" + _VALUE,
     ('mysql', 'mariadb'), False, 'cli_password'),
    ('sshpass-password',
     r"(?<![A-Za-z0-9_.\-])sshpass(?:" + _SEP + r"-[A-Za-oq-z][^\s;&|]{0,100}){0,4}"
     + _SEP + r"-p[ \t]{0,5}" + _VALUE,
     ('sshpass',), False, 'cli_password'),
    ('env-secret',
     ('(?<![A-Za-z0-9_.\\-])(?P<name>[A-Za-z_][A-Za-z0-9_.\\-]{0,80})[\\"\']?[ \\t'
      ']{0,5}(?:=|:|(?<=[ \\t])(?P<phrase>[iI][sS]|[wW][aA][sS])(?![A-Za-z0-9_])(?:[ \\'
      't]{0,5}:)?)[ \\t]{0,5}(?![\\"\']?\\[REDACTED:)(?P<secret>\\"[^\\"\\n]{1,500}\\"|\'['
      '^\'\\n]{1,500}\'|[^\\s\\"\',;#]{1,500})'),
     ('=', ':', ' is ', ' was '), True, None),
)

PRIVATE_TAG = r"<\s*(/?)\s*private\s*>"  # re.IGNORECASE
ENV_NAME = (r"(?i)(?:secret|password|passwd|passphrase|pwd|token|api_?key|apikey|access_?key|"
            r"private_?key|auth_?key|credentials?|_key)\Z")
SECRET_NAME_STRONG = (r"(?i)(?:secret|password|passwd|passphrase|pwd|token|api_?key|apikey|"
                      r"access_?key|private_?key|auth_?key|credentials?)\Z")
NOT_SECRET_VALUES = frozenset({
    "true", "false", "yes", "no", "on", "off", "null", "none", "nil", "undefined",
    "required", "optional", "redacted", "secret", "password", "changeme", "xxx", "your",
})
SYMBOLS = frozenset("!@#$%^&*+=?|\\~")
#: Words one of which every name ``ENV_NAME`` accepts contains (lower case).
ENV_NAME_WORDS = ("key", "token", "secret", "pass", "pwd", "credential")

_compiled: dict[str, re.Pattern[str]] = {}
_compiler: Callable[[str, int], re.Pattern[str]] | None = None


def use_compiler(compiler: Callable[[str, int], re.Pattern[str]] | None) -> None:
    """Compile patterns with ``compiler`` (``hook_record_sre.PatternCache.compile``: no
    ``re`` import in a cold process); ``None``: ``re.compile``."""
    global _compiler
    _compiler = compiler
    _compiled.clear()


def _pattern(source: str, flags: int = 0) -> re.Pattern[str]:
    found = _compiled.get(source)
    if found is None:
        if _compiler is not None:
            found = _compiler(source, flags)
        else:
            import re

            found = re.compile(source, flags)
        _compiled[source] = found
    return found


def _mixed(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _has_digit(value: str) -> bool:
    return any(c.isdigit() for c in value)


def _hf_token(value: str) -> bool:
    body = value[3:]
    return _mixed(value) or (len(body) >= 34 and any(c.isupper() for c in body)
                             and any(c.islower() for c in body))


def _base64_secret(value: str) -> bool:
    return (any(c.isupper() for c in value) and any(c.islower() for c in value)
            and any(c.isdigit() or c in "/+" for c in value))


def _bare(value: str) -> str:
    if len(value) >= 2 and value[0] in "\"'" and value[-1] == value[0]:
        return value[1:-1]
    return value


def _cli_password(value: str) -> bool:
    bare = _bare(value)
    if not bare or bare.lower() in NOT_SECRET_VALUES or bare[0] in "$<{%*[":
        return False
    metavar = bare.isupper() and bare.replace("_", "").replace("-", "").isalpha()
    return not (metavar or set(bare) <= {"*", "x", "X", "."})


def _option_assigned(value: str) -> bool:
    bare = _bare(value)
    if not _cli_password(value) or len(bare) < 3 or bare.isdigit() or bare[0] in "/~.-":
        return False
    name, equals, rest = bare.partition("=")
    return not (equals and rest[:1] not in ("", "=") and name.isidentifier())


def _option_value_is_secret(value: str) -> bool:
    if not _option_assigned(value):
        return False
    bare = _bare(value)
    return (bare != value or any(c.isdigit() or c in SYMBOLS for c in bare)
            or (any(c.isupper() for c in bare[1:]) and any(c.islower() for c in bare)))


_ACCEPT: dict[str, Callable[[str], bool]] = {
    "mixed": _mixed, "has_digit": _has_digit, "hf_token": _hf_token,
    "base64_secret": _base64_secret, "cli_password": _cli_password,
    "option_assigned": _option_assigned, "option_value_is_secret": _option_value_is_secret}


def _env_value_is_secret(name: str, value: str) -> bool:
    bare = value.strip("\"'")
    if len(bare) < 3 or bare.lower() in NOT_SECRET_VALUES or bare.isdigit():
        return False
    if bare[0] in "$<{%*." or set(bare) <= {"*", "x", "X", "."}:
        return False
    if _pattern(SECRET_NAME_STRONG).search(name):
        return True
    return _mixed(bare) and len(bare) >= 12


def _phrase_value_is_secret(name: str, value: str) -> bool:
    """The core's check of "``name`` is ``value``" (``my password is ...``)."""
    if name.lower().endswith("pwd"):
        return False
    quoted = value[:1] in "\"'"
    bare = value[1:-1] if quoted else value.rstrip(".:!?)]}>`").lstrip("`(<[")
    if len(bare) < 3 or bare.lower() in NOT_SECRET_VALUES or bare[0] in "$<{%*/~":
        return False
    if set(bare) <= {"*", "x", "X", "."}:
        return False
    if quoted:
        return True
    if bare.isdigit():
        return len(bare) >= 4
    return (any(c.isdigit() or c in SYMBOLS for c in bare)
            or (any(c.isupper() for c in bare[1:]) and any(c.islower() for c in bare)))


def strip_private(text: str) -> str:
    """``text`` without its ``<private>...</private>`` blocks (the core's rule)."""
    if "private" not in text.lower():
        return text
    out: list[str] = []
    depth = 0
    pos = 0
    for tag in _pattern(PRIVATE_TAG, 2).finditer(text):  # 2: re.IGNORECASE
        if depth == 0:
            out.append(text[pos:tag.start()])
        depth = max(depth - 1, 0) if tag.group(1) else depth + 1
        pos = tag.end()
    if depth == 0:
        out.append(text[pos:])
    return "".join(out)


def _apply(name: str, source: str, accept: str | None, text: str) -> str:
    pattern = _pattern(source)
    has_secret = "secret" in pattern.groupindex
    marker = MARKER.format(name)
    check = _ACCEPT[accept] if accept else None

    def replace(match: re.Match[str]) -> str:
        secret = match.group("secret") if has_secret else match.group(0)
        if name == "env-secret":
            found = match.group("name")
            judge = _phrase_value_is_secret if match.group("phrase") else _env_value_is_secret
            if not _pattern(ENV_NAME).search(found) or not judge(found, secret):
                whole = match.group(0)  # a quoted value: its inside is searched in turn
                if len(secret) < 2 or secret[0] not in "\"'" or secret[-1] != secret[0]:
                    return whole
                start = match.start("secret") - match.start()
                end = start + len(secret)
                return whole[:start + 1] + pattern.sub(replace, secret[1:-1]) + whole[end - 1:]
        elif check is not None and not check(secret):
            return match.group(0)
        if not has_secret:
            return marker
        start, end = match.span("secret")
        if end - start >= 2 and secret[0] in "\"'" and secret[-1] == secret[0]:
            start, end = start + 1, end - 1
        base = match.start()
        whole = match.group(0)
        return whole[:start - base] + marker + whole[end - base:]

    return pattern.sub(replace, text)


def redact_text(text: str) -> str:
    """``text`` as ``echo_core.redact(text).text`` gives it."""
    clean = strip_private(text)
    lowered = clean.lower()
    for name, source, hints, folded, accept in RULES:
        within = lowered if folded else clean
        if hints and not any(hint in within for hint in hints):
            continue
        if name == "env-secret" and not any(w in lowered for w in ENV_NAME_WORDS):
            continue
        changed = _apply(name, source, accept, clean)
        if changed != clean:
            clean = changed
            lowered = clean.lower()
    return clean
