"""Secrets and ``<private>`` text kept out of the vault (SPEC §2.1, last paragraph).

``redact(text)`` first drops every ``<private>...</private>`` block (``strip_private``),
then replaces each secret it recognises with ``[REDACTED:<rule>]`` and reports the rules
that fired. Capture applies it to every text field before anything is written; PreCompact
checkpoints, transcript mining and ingest call it on what they produce. It is pure (no
I/O, no clock), deterministic and idempotent: ``redact(redact(t).text).text ==
redact(t).text``.

The rules, in the order they apply (a later rule never re-matches a marker):

===================  ==========================================================  ==========
rule                 what it matches                                             keeps
===================  ==========================================================  ==========
pem-private-key      ``-----BEGIN ... PRIVATE KEY-----`` to its END line (an     nothing
                     unterminated block: to the end of the text)
anthropic-key        ``sk-ant-`` + 20 or more key characters                     nothing
openai-key           ``sk-`` / ``sk-proj-`` / ``sk-svcacct-`` / ``sk-admin-`` +   nothing
                     20 or more, with a digit and a letter ("sk-learn" survives)
aws-access-key-id    ``AKIA`` / ``ASIA`` / ``ABIA`` / ``ACCA`` + 16 [0-9A-Z]     nothing
aws-secret-key       40 base64 characters after a name saying "aws ... secret"   the name
                     or at most 30 characters after an access key id (mixed
                     case, with a digit, / or +: a git SHA there survives)       id marker
github-token         ``ghp_`` ``gho_`` ``ghu_`` ``ghs_`` ``ghr_`` + 36 or more,  nothing
                     ``github_pat_`` + 22 or more
gitlab-token         ``glpat-`` + 20 or more                                     nothing
slack-token          ``xoxa-`` ``xoxb-`` ``xoxp-`` ``xoxr-`` ``xoxs-`` ``xoxo-`` nothing
                     + 10 or more with a digit
slack-webhook        ``https://hooks.slack.com/services/T.../B.../...``          nothing
stripe-key           ``sk_live_`` ``sk_test_`` ``rk_live_`` ``rk_test_`` + 16    nothing
google-api-key       ``AIza`` + 35                                               nothing
huggingface-token    ``hf_`` + 30 or more letters and digits, with a digit, or   nothing
                     34 or more with upper and lower case letters
npm-token            ``npm_`` + 36                                               nothing
sendgrid-key         ``SG.`` + 22 + ``.`` + 43                                   nothing
twilio-key           ``SK`` or ``AC`` + 32 lower-case hex                        nothing
jwt                  ``eyJ...`` ``.eyJ...`` ``.signature`` (base64url)           nothing
authorization        ``Authorization: Bearer|Basic|Token <credential>``;         the scheme
                     another scheme word (``ApiKey``) or none: 16 or more
                     with a digit, a password symbol or mixed case
api-key-header       ``X-Api-Key: v`` ``"x-goog-api-key": "v"`` ``api-key: v``   the name
                     (a hyphenated name ending in ``api-key``, ``auth-key``,
                     ``access-key``, ``secret-key``, ``subscription-key`` or
                     ``-apikey``): 8 or more, judged as option-secret's
bearer-token         ``Bearer <token>`` elsewhere (16 or more, with a digit)     "Bearer"
url-password         ``scheme://user:PASSWORD@host``                             user, host
option-secret        ``--password=v`` ``--api-key v`` ``-token=v``: an option    the option
                     (one or two dashes) ending in password, passwd,
                     passphrase, secret, token, bearer, api-key, apikey,
                     auth-key, access-key, secret-key (not the ``--no-``,
                     ``--ask-``, ``--use-``... flags, ``--token-file``,
                     ``--password-stdin``); not a reference, a metavar
                     (``TOKEN``), a number, a path, an option (``--password
                     --user x``), a ``name=...`` spec (``--secret id=x,src=f``);
                     after a space: quoted or unlike a prose word ("use
                     --token to pass it" survives)
curl-user-password   ``curl ... -u|--user|-U|--proxy-user user:PASSWORD``        the user
                     (curl's arguments only: ``docker run -u app:app`` survives)
mysql-password       ``mysql`` ``mysqldump`` ``mariadb``... ``-pPASSWORD`` glued ``-p``
                     (``-p 3306``, ``ssh -p 22``: a port, survive)
sshpass-password     ``sshpass [-v -e ...] -p PASSWORD``                         ``-p``
env-secret           ``NAME=value`` / ``NAME: value`` / ``"name": "value"`` whose the name
                     name ends in SECRET, PASSWORD, PASSWD, PASSPHRASE, PWD,
                     TOKEN, API_KEY, APIKEY, ACCESS_KEY, PRIVATE_KEY, AUTH_KEY,
                     CREDENTIAL(S), or ``_KEY`` with a random-looking value;
                     ``my password is VALUE`` / ``the token was VALUE`` (one
                     token, quoted, or a word with a digit, a symbol or mixed
                     case: "the password is incorrect" survives)
===================  ==========================================================  ==========

Look-alikes that survive by design: git SHAs, sha256 hex, UUIDs, base64 in prose,
"sketch", "skill", "task-ant", "sk-learn", ``PORT=8080``, ``LOG_LEVEL=debug``,
``max_tokens=1000``, ``SORT_KEY=created_at``, URLs without a password, short tokens,
``ssh -p 2222``, ``docker run -u app:app``, ``--token-file f``, ``--password-stdin``.
An ``env-secret`` value that is a number, a boolean, empty, or a reference (``$VAR``,
``${VAR}``, ``<placeholder>``, ``***``) is not a secret and survives, and so does such a
value on a command line (``--api-key $API_KEY``, ``-p"$MYSQL_PWD"``, ``curl -u
"$USER:$PASS"``). A quoted value that is not a secret is searched in turn, so
``"command": "export DB_PASSWORD=x1y2z3"`` (JSON, YAML) loses the password.

Where it applies: ``capture`` redacts title, body, supersedes, tags, aliases and sources
at validation (``ops.capture_request``), so every caller (CLI, MCP, session-end and
reflect proposals, PreCompact checkpoints, the outbox) writes the redacted text; the
operator's ``capture --no-redact`` (CLI only, never over MCP) writes as given and is
logged (``ops.redaction_overrides``). Transcript mining and ingest redact what they
produce. The raw note verbs (``put``, ``append``, ``patch``) write the caller's text byte
for byte and do NOT redact: they edit files exactly (a ``get`` then ``put`` round trip,
a patch's anchor), and a marker in their text would break that; memory is captured.

Every pattern is linear: each starts at a token boundary (a look-behind), and each
repeated class is followed by something outside it, so no input makes a pattern
backtrack more than once over a run (``bench/bench_redaction.py`` times a hostile input).
The command-line rules read one command (up to ``;``, ``|``, ``&&`` or a line's end that
no backslash continues), at most 24 of its arguments, each up to 200 characters, and stop
at an argument that starts a match of its own: each argument is read once. An argument
list (``["mysql", "-pX"]``) and ``docker login -p X`` are not covered.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import attrs

from echo_core.lazy_pattern import LazyPattern

#: The marker a secret becomes; ``{}`` is the rule name.
MARKER = "[REDACTED:{}]"
#: What ``found`` names when a ``<private>`` block was dropped.
PRIVATE = "private"


@attrs.frozen
class RedactionResult:
    """The redacted text and the names of the rules that fired (table order, no repeats;
    ``"private"`` first when a ``<private>`` block was dropped)."""

    text: str
    found: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        """Whether anything was removed or replaced."""
        return bool(self.found)


@attrs.frozen
class Rule:
    """One named secret shape: ``pattern``'s group ``secret`` (or the whole match) becomes
    the marker, unless ``accept`` says the candidate is not a secret after all."""

    name: str
    pattern: LazyPattern  # compiled on first use: importing this module costs no compile
    accept: Callable[[str], bool] | None = None
    #: literal pieces one of which any match contains (lower-cased when ``folded``): a
    #: text holding none of them cannot match, and the pattern is neither compiled nor run
    #: (a short capture in a fresh process compiles none of the patterns)
    hints: tuple[str, ...] = ()
    folded: bool = False

    def may_match(self, text: str, lowered: str) -> bool:
        """False only when ``text`` cannot hold a match (no hint in it)."""
        if not self.hints:
            return True
        within = lowered if self.folded else text
        return any(hint in within for hint in self.hints)


def _mixed(value: str) -> bool:
    """A random-looking token: letters and digits both."""
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _has_digit(value: str) -> bool:
    return any(c.isdigit() for c in value)


def _hf_token(value: str) -> bool:
    """``hf_`` + a random-looking run: a digit in it, or (real tokens are 34 random
    letters) 34 or more characters with both cases ("hf_" + a lower-case word survives)."""
    body = value[3:]
    return _mixed(value) or (len(body) >= 34 and any(c.isupper() for c in body)
                             and any(c.islower() for c in body))


def _base64_secret(value: str) -> bool:
    """40 random base64 characters: both cases and a digit, ``/`` or ``+`` (a git SHA,
    lower-case hex, is not one)."""
    return (any(c.isupper() for c in value) and any(c.islower() for c in value)
            and any(c.isdigit() or c in "/+" for c in value))


_NOT_SECRET_VALUES = frozenset({
    "true", "false", "yes", "no", "on", "off", "null", "none", "nil", "undefined",
    "required", "optional", "redacted", "secret", "password", "changeme", "xxx", "your",
})
_SECRET_NAME_STRONG = LazyPattern(
    r"(?i)(?:secret|password|passwd|passphrase|pwd|token|api_?key|apikey|access_?key|"
    r"private_?key|auth_?key|credentials?)\Z")


def _env_value_is_secret(match_name: str, value: str) -> bool:
    """Whether ``value`` assigned to ``match_name`` is a secret (not a number, flag,
    reference or placeholder; a bare ``*_KEY`` also needs a random-looking value)."""
    bare = value.strip("\"'")
    if len(bare) < 3 or bare.lower() in _NOT_SECRET_VALUES or bare.isdigit():
        return False
    if bare[0] in "$<{%*." or set(bare) <= {"*", "x", "X", "."}:
        return False
    if _SECRET_NAME_STRONG.search(match_name):
        return True
    return _mixed(bare) and len(bare) >= 12


#: Password characters that prose words do not hold (``.``, ``-``, ``'``, ``/`` do).
_SYMBOLS = frozenset("!@#$%^&*+=?|\\~")


def _phrase_value_is_secret(match_name: str, value: str) -> bool:
    """Whether ``value`` in "``match_name`` is ``value``" is a secret: quoted, or one
    token unlike a prose word (a digit, a password symbol, a capital after its first
    letter, four or more digits) and unlike a reference, a path or a placeholder."""
    if match_name.lower().endswith("pwd"):  # "pwd is /home/me": the shell's
        return False
    quoted = value[:1] in "\"'"
    bare = value[1:-1] if quoted else value.rstrip(".:!?)]}>`").lstrip("`(<[")
    if len(bare) < 3 or bare.lower() in _NOT_SECRET_VALUES or bare[0] in "$<{%*/~":
        return False
    if set(bare) <= {"*", "x", "X", "."}:
        return False
    if quoted:
        return True
    if bare.isdigit():
        return len(bare) >= 4
    return (any(c.isdigit() or c in _SYMBOLS for c in bare)
            or (any(c.isupper() for c in bare[1:]) and any(c.islower() for c in bare)))


def _bare(value: str) -> str:
    """``value`` without the quotes around it, if it has a pair."""
    if len(value) >= 2 and value[0] in "\"'" and value[-1] == value[0]:
        return value[1:-1]
    return value


def _cli_password(value: str) -> bool:
    """A value in a password's place (``mysql -pVALUE``, ``sshpass -p VALUE``, ``curl -u
    user:VALUE``): anything but a reference (``$VAR``, ``${VAR}``, ``<name>``, ``%VAR%``),
    a placeholder (``***``, ``xxx``, ``password``) or a metavar (``PASSWORD``)."""
    bare = _bare(value)
    if not bare or bare.lower() in _NOT_SECRET_VALUES or bare[0] in "$<{%*[":
        return False
    metavar = bare.isupper() and bare.replace("_", "").replace("-", "").isalpha()
    return not (metavar or set(bare) <= {"*", "x", "X", "."})


def _option_assigned(value: str) -> bool:
    """``--password=VALUE``: a password's place, but not a number, a path, an option or a
    ``name=...`` spec (``docker build --secret id=npmrc,src=...``)."""
    bare = _bare(value)
    if not _cli_password(value) or len(bare) < 3 or bare.isdigit() or bare[0] in "/~.-":
        return False
    name, equals, rest = bare.partition("=")
    return not (equals and rest[:1] not in ("", "=") and name.isidentifier())


def _option_value_is_secret(value: str) -> bool:
    """``--password VALUE`` (or a header's value): as ``_option_assigned``, and unquoted a
    token unlike a prose word ("use --token to pass it"): a digit, a password symbol, or a
    capital after its first letter."""
    if not _option_assigned(value):
        return False
    bare = _bare(value)
    return (bare != value or any(c.isdigit() or c in _SYMBOLS for c in bare)
            or (any(c.isupper() for c in bare[1:]) and any(c.islower() for c in bare)))


_START = r"(?<![A-Za-z0-9_\-])"  # a token's first character
_KEYCH = r"[A-Za-z0-9_\-]"
#: a command line's separator (a line continued with a backslash too) and argument (up to
#: the next ``;``, ``|``, ``&&``, a lone ``&``: another command's arguments are not this one's)
_SEP = r"(?:[ \t]|\\\r?\n){1,40}"
_ARG = r"(?:[^\s;&|]|&(?![&\s]))[^\s;|]{0,199}"
#: a value on a command line: quoted, or up to a space, a quote or a shell operator
_VALUE = (r"(?![\"']?\[REDACTED:)(?P<secret>\"[^\"\n]{1,500}\"|'[^'\n]{1,500}'|"
          r"[^\s\"'`;&|<>()]{1,500})")
#: ``--password`` ``-token`` ``--client-secret`` ``--api-key`` (not ``--no-password``...)
_SECRET_OPTION = (
    r"(?i)(?<![A-Za-z0-9_\-])-{1,2}(?!(?:no|ask|prompt|show|print|skip|require|generate|use|"
    r"with)[-_])(?:[A-Za-z0-9]{1,30}[-_]){0,4}(?:password|passwd|passphrase|secret|token|"
    r"bearer|api[-_]?key|apikey|auth[-_]?key|access[-_]?key|secret[-_]?key)")
_OPTION_HINTS = ("-pass", "_pass", "-secret", "_secret", "-token", "_token", "-bearer",
                 "_bearer", "-api", "_api", "-auth", "_auth", "-access", "_access")


def _after(command: str) -> str:
    """``command`` as a word, then at most 24 of its arguments, up to one that is itself
    ``command`` (whose own match reads on from there: each argument is read once)."""
    again = (r"(?!(?:[^\s;|]{0,200}[^A-Za-z0-9_.\-\s;|])?" + command
             + r"(?:[ \t]|\\\r?\n))")
    return (r"(?<![A-Za-z0-9_.\-])" + command + "(?:" + _SEP + again + _ARG + "){0,24}?"
            + _SEP)


_CURL = r"curl(?:\.exe)?"
_MYSQL = (r"(?:mysql(?:dump|admin|import|check|show|slap|pump|binlog|sh)?|"
          r"mariadb(?:-?(?:dump|admin|import|check|show|slap|binlog))?)(?:\.exe)?")


def _rule(name: str, pattern: str, accept: Callable[[str], bool] | None = None, *,
          hints: tuple[str, ...] = (), folded: bool = False) -> Rule:
    return Rule(name, LazyPattern(pattern), accept, hints, folded)


RULES: tuple[Rule, ...] = (
    _rule("pem-private-key",
          r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
          r"(?:[\s\S]*?-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|[\s\S]*\Z)",
          hints=("-----BEGIN ",)),
    _rule("anthropic-key", _START + r"sk-ant-" + _KEYCH + r"{20,}", hints=("sk-ant-",)),
    _rule("openai-key", _START + r"(?P<secret>sk-(?:proj-|svcacct-|admin-)?"
          + _KEYCH + r"{20,})", _mixed, hints=("sk-",)),
    _rule("aws-access-key-id", _START + r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![0-9A-Za-z])",
          hints=("AKIA", "ASIA", "ABIA", "ACCA")),
    _rule("aws-secret-key",
          r"(?i)(?<![A-Za-z0-9])aws[A-Za-z_\-]{0,20}secret[A-Za-z_\-]{0,20}[\"']?"
          r"\s{0,5}[:=]{1,2}\s{0,5}[\"']?(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
          hints=("aws",), folded=True),
    _rule("aws-secret-key",  # an id just masked, then its secret ("AKIA... wJalr...")
          r"\[REDACTED:aws-access-key-id\][\s\S]{0,30}?(?<![A-Za-z0-9/+])"
          r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])", _base64_secret,
          hints=("[REDACTED:aws-access-key-id]",)),
    _rule("github-token", _START + r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
          hints=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    _rule("gitlab-token", _START + r"glpat-" + _KEYCH + r"{20,}", hints=("glpat-",)),
    _rule("slack-webhook",
          r"https://hooks\.slack\.com/services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{16,}",
          hints=("hooks.slack.com",)),
    _rule("slack-token", _START + r"xox[abposr]-[A-Za-z0-9\-]{10,}", _has_digit, hints=("xox",)),
    _rule("stripe-key", _START + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",
          hints=("_live_", "_test_")),
    _rule("google-api-key", _START + r"AIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])",
          hints=("AIza",)),
    _rule("huggingface-token", _START + r"hf_[A-Za-z0-9]{30,}(?![A-Za-z0-9_])", _hf_token,
          hints=("hf_",)),
    _rule("npm-token", _START + r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])", hints=("npm_",)),
    _rule("sendgrid-key", _START + r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}(?!"
          + _KEYCH + ")", hints=("SG.",)),
    _rule("twilio-key", _START + r"(?:SK|AC)[0-9a-f]{32}(?![0-9A-Za-z])", hints=("SK", "AC")),
    _rule("jwt", _START + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*",
          hints=("eyJ",)),
    _rule("authorization",
          r"(?i)(?<![A-Za-z0-9_\-])(?:proxy-)?authorization[\"']?\s{0,5}[:=]\s{0,5}[\"']?"
          r"(?:bearer|basic|token|digest)\s{1,5}(?!\[REDACTED:)(?P<secret>[A-Za-z0-9._~+/\-]"
          r"{4,}=*)", hints=("authorization",), folded=True),
    _rule("authorization",  # another scheme (ApiKey, SSWS) or none: a long credential
          r"(?i)(?<![A-Za-z0-9_\-])(?:proxy-)?authorization[\"']?[ \t]{0,5}[:=][ \t]{0,5}[\"']?"
          r"(?:[A-Za-z][A-Za-z0-9_\-]{0,30}[ \t]{1,5})?(?![\"']?\[REDACTED:)(?P<secret>"
          r"[A-Za-z0-9._~+/\-]{16,}=*)", _option_value_is_secret, hints=("authorization",),
          folded=True),
    _rule("api-key-header",  # X-Api-Key: ..., "x-goog-api-key": "...", api-key: ...
          r"(?i)(?<![A-Za-z0-9_\-])(?:[A-Za-z0-9]{1,30}-){0,5}(?:(?:api|auth|access|secret|"
          r"subscription)-key|(?<=-)apikey)[\"']?:[ \t]{0,5}[\"']?(?![\"']?\[REDACTED:)"
          r"(?P<secret>[A-Za-z0-9._~+/\-]{8,}=*)", _option_value_is_secret,
          hints=("-key", "-apikey"), folded=True),
    _rule("bearer-token",
          r"(?i)(?<![A-Za-z0-9_\-])bearer\s{1,5}(?!\[REDACTED:)(?P<secret>"
          r"[A-Za-z0-9._~+/\-]{16,}=*)", _has_digit, hints=("bearer",), folded=True),
    _rule("url-password",
          r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{0,20}://[^\s:/@?#]{1,200}:"
          r"(?!\[REDACTED:)(?P<secret>[^\s@/?#]{1,200})@(?=[A-Za-z0-9\[])", hints=("://",)),
    _rule("option-secret", _SECRET_OPTION + "=" + _VALUE, _option_assigned,
          hints=_OPTION_HINTS, folded=True),
    _rule("option-secret", _SECRET_OPTION + r"[ \t]{1,5}(?!-)" + _VALUE,
          _option_value_is_secret, hints=_OPTION_HINTS, folded=True),
    _rule("curl-user-password",  # curl ... -u user:PASSWORD (docker's -u uid:gid is not)
          _after(_CURL) + r"(?:-u|-U|--user|--proxy-user)(?:[ \t]{1,5}|=)?[\"']?"
          r"[^\s:\"'`]{0,100}:(?!\[REDACTED:)(?P<secret>[^\s\"'`]{1,500})", _cli_password, hints=("curl",)),
    _rule("mysql-password",  # mysql ... -pPASSWORD (glued; -p 8080 is a port elsewhere)
          _after(_MYSQL) + "-p" + _VALUE, _cli_password, hints=("mysql", "mariadb")),
    _rule("sshpass-password",  # sshpass [-v -e...] -p PASSWORD (-f file, then ssh -p port)
          r"(?<![A-Za-z0-9_.\-])sshpass(?:" + _SEP + r"-[A-Za-oq-z][^\s;&|]{0,100}){0,4}"
          + _SEP + r"-p[ \t]{0,5}" + _VALUE, _cli_password, hints=("sshpass",)),
    _rule("env-secret",
          r"(?<![A-Za-z0-9_.\-])(?P<name>[A-Za-z_][A-Za-z0-9_.\-]{0,80})[\"']?[ \t]{0,5}"
          r"(?:=|:|(?<=[ \t])(?P<phrase>[iI][sS]|[wW][aA][sS])(?![A-Za-z0-9_])(?:[ \t]{0,5}:)?)"
          r"[ \t]{0,5}(?![\"']?\[REDACTED:)(?P<secret>\"[^\"\n]{1,500}\"|'[^'\n]{1,500}'|"
          r"[^\s\"',;#]{1,500})", hints=("=", ":", " is ", " was "), folded=True),
)

_PRIVATE_TAG = LazyPattern(r"<\s*(/?)\s*private\s*>", re.IGNORECASE)
_ENV_NAME = LazyPattern(
    r"(?i)(?:secret|password|passwd|passphrase|pwd|token|api_?key|apikey|access_?key|"
    r"private_?key|auth_?key|credentials?|_key)\Z")


def strip_private(text: str) -> str:
    """``text`` without its ``<private>...</private>`` blocks (tags included).

    Tags are case-insensitive and may span lines; blocks nest (the text stays dropped
    until the outermost one closes); an unclosed ``<private>`` drops everything after it;
    a stray ``</private>`` is removed on its own.
    """
    if "private" not in text.lower():
        return text
    out: list[str] = []
    depth = 0
    pos = 0
    for tag in _PRIVATE_TAG.compiled().finditer(text):
        if depth == 0:
            out.append(text[pos:tag.start()])
        if tag.group(1):
            depth = max(depth - 1, 0)
        else:
            depth += 1
        pos = tag.end()
    if depth == 0:
        out.append(text[pos:])
    return "".join(out)


def _apply(rule: Rule, text: str) -> tuple[str, bool]:
    fired = False
    marker = MARKER.format(rule.name)

    pattern = rule.pattern.compiled()
    has_secret = "secret" in pattern.groupindex

    def replace(match: re.Match[str]) -> str:
        nonlocal fired
        secret = match.group("secret") if has_secret else match.group(0)
        if rule.name == "env-secret":
            name = match.group("name")
            judge = _phrase_value_is_secret if match.group("phrase") else _env_value_is_secret
            if not _ENV_NAME.search(name) or not judge(name, secret):
                return _within_quotes(match, lambda inner: pattern.sub(replace, inner))
        elif rule.accept is not None and not rule.accept(secret):
            return match.group(0)
        fired = True
        if not has_secret:
            return marker
        start, end = match.span("secret")
        if end - start >= 2 and secret[0] in "\"'" and secret[-1] == secret[0]:
            start, end = start + 1, end - 1  # a quoted value keeps its quotes
        base = match.start()
        whole = match.group(0)
        return whole[:start - base] + marker + whole[end - base:]

    return pattern.sub(replace, text), fired


def _within_quotes(match: re.Match[str], again: Callable[[str], str]) -> str:
    """A rejected ``env-secret`` match as it was, but for its quoted value's inside, which
    goes through the rule ``again`` (``"command": "export DB_PASSWORD=..."``); an
    unquoted value is kept. Linear: an inside holds no quote of its own kind, so this
    nests at most twice."""
    secret = match.group("secret")
    whole = match.group(0)
    if len(secret) < 2 or secret[0] not in "\"'" or secret[-1] != secret[0]:
        return whole
    start = match.start("secret") - match.start()
    end = start + len(secret)
    return whole[:start + 1] + again(secret[1:-1]) + whole[end - 1:]


def redact(text: str) -> RedactionResult:
    """``text`` with ``<private>`` blocks dropped and every secret of ``RULES`` replaced by
    ``[REDACTED:<rule>]``; ``found`` names what was removed (empty: ``text`` unchanged)."""
    found: list[str] = []
    clean = strip_private(text)
    if clean != text:
        found.append(PRIVATE)
    lowered = clean.lower()
    for rule in RULES:
        if not rule.may_match(clean, lowered):
            continue
        clean, fired = _apply(rule, clean)
        if fired:
            if rule.name not in found:  # two rules may share a name (aws-secret-key)
                found.append(rule.name)
            lowered = clean.lower()
    return RedactionResult(clean, tuple(found))


def redact_all(texts: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Each of ``texts`` redacted, and the rules that fired on any of them (in table
    order, no repeats)."""
    out: list[str] = []
    fired: set[str] = set()
    for text in texts:
        result = redact(text)
        out.append(result.text)
        fired.update(result.found)
    return tuple(out), ordered(fired)


def ordered(names: set[str] | frozenset[str]) -> tuple[str, ...]:
    """Rule names in table order (``"private"`` first), unknown names last, sorted."""
    order = list(dict.fromkeys([PRIVATE] + [r.name for r in RULES]))
    known = tuple(n for n in order if n in names)
    return known + tuple(sorted(names - set(order)))
