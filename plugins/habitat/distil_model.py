"""What distil finds in the record: ``Failure`` (one occurrence of a failure, pointing at
the records that show it) and the text normalisation its signatures are made of.

A failure's ``key`` names the occurrence: its kind and the id of the record it starts
at (``error_streak|<first error id>``). Found again by a later scan (the same records,
or the same streak grown longer) it has the same key, so the registry counts it once.
Its ``signature`` names the *kind of* failure: the kind, the tool and the normalised
error or call text (``signature_text``: secrets redacted, then ``normalise``: case,
numbers, paths, ids and quoted strings masked), so the same failure in another session
maps to the same pattern.
"""

from __future__ import annotations

import json
import re

import attrs

from plugins.habitat.record import Record

__all__ = ["FAILURE_KINDS", "SEVERITIES", "Failure", "args_text", "fold_key", "normalise",
           "record_time", "signature_text", "tool_call"]

#: What distil reports: ``error_streak`` (>= 3 consecutive failed tool calls of a
#: session), ``stuck_loop`` (near-identical calls without progress), ``abandoned`` (a
#: session over with its last prompt unanswered), ``frustration`` (an operator's prompt
#: saying something went wrong), ``flagged`` (an operator's flag of a turn).
FAILURE_KINDS = ("error_streak", "stuck_loop", "abandoned", "frustration", "flagged")
#: Severities, lowest first.
SEVERITIES = ("low", "medium", "high")
#: Longest normalised text kept in a signature (characters).
SIGNATURE_TEXT = 120

_QUOTED = re.compile(r"'[^'\n]{0,200}'|\"[^\"\n]{0,200}\"|`[^`\n]{0,200}`")
_PATH = re.compile(r"(?:[a-z]:)?(?:~|\.{1,2})?(?:/[\w.@+-]+)+/?|\b[\w.-]+\.(?:py|md|json|"
                   r"toml|txt|js|ts|rs|go|yaml|yml|sh|log|lock|cfg|ini)\b")
_ID = re.compile(r"\b(?:0x)?(?=[0-9a-f-]*\d)[0-9a-f]{8,}(?:-[0-9a-f]{4,})*\b")
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_LONE_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.:]\d+)*(?:ms|s|m|h|min|sec|kb|mb|gb|%)?"
                          r"(?![\w.])")
_SPACE = re.compile(r"\s+")
_TOOL_NAME = re.compile(r"[A-Za-z_][\w.:-]{0,99}")


def normalise(text: str, limit: int = SIGNATURE_TEXT, *, quoted: bool = True) -> str:
    """``text`` as a signature holds it: lower case; quoted strings (unless ``quoted`` is
    False), paths, hex ids and numbers masked (``<s>``, ``<path>``, ``<id>``, ``#``);
    whitespace collapsed; cut to ``limit`` characters. Two errors that differ only in a
    file, a line number or a request id normalise the same."""
    out = text[:4 * limit].lower()
    if quoted:
        out = _QUOTED.sub("<s>", out)
    out = _PATH.sub("<path>", out)
    out = _ID.sub("<id>", out)
    out = _NUMBER.sub("#", out)
    return _SPACE.sub(" ", out).strip()[:limit]


def signature_text(text: str, limit: int = SIGNATURE_TEXT, *, quoted: bool = True) -> str:
    """``normalise`` of ``text`` with its secrets redacted first (``echo_core.redact``):
    lower-cased and with its digits masked, a key no longer looks like one, and the
    redaction of whatever shows a signature (the digest, ``habitat patterns``) would let
    it through readable."""
    from echo_core import redact

    return normalise(redact(text).text, limit, quoted=quoted)


def fold_key(text: str, limit: int = 2000) -> str:
    """``text`` compared for sameness: lower case, whitespace collapsed, hex ids and
    standalone numbers (``sleep 5``, ``--timeout 30``, ``12:00:01``, ``(19s)``, ``40%``;
    not the digits of a name such as ``test_2.py``) masked; the first ``limit``
    characters."""
    out = _ID.sub("<id>", text[:2 * limit].lower())
    out = _LONE_NUMBER.sub("#", out)
    return _SPACE.sub(" ", out).strip()[:limit]


def args_text(args: str) -> str:
    """A call's arguments as words: the values of a JSON object input (``{"command":
    "make test"}`` -> ``make test``), else the text as it is."""
    stripped = args.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except ValueError:
            return args
        if isinstance(data, dict):
            return " ".join(v if isinstance(v, str) else json.dumps(v, sort_keys=True)
                            for v in data.values())
    return args


@attrs.frozen
class ToolCall:
    """A tool record read as a call: the tool's ``name`` and its ``args`` text."""

    name: str
    args: str


def tool_call(record: Record) -> ToolCall:
    """The tool and arguments of a ``tool`` record. The recorder writes ``text`` as the
    tool's name then its input (``Bash {"command": "ls"}``); a JSON object text with
    ``tool_name`` / ``tool_input`` (Claude Code's hook payload) is read too. A text of
    neither shape is all arguments of a tool named ``?``."""
    text = record.text.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("tool_name"), str):
            args = data.get("tool_input", "")
            return ToolCall(data["tool_name"][:100],
                            args if isinstance(args, str) else json.dumps(args, sort_keys=True))
    match = _TOOL_NAME.match(text)
    if match is None or (len(text) > match.end() and text[match.end()] not in " (:\t\n"):
        return ToolCall("?", text)
    return ToolCall(match.group(), text[match.end():].lstrip(" (:\t\n"))


def record_time(record: Record) -> float:
    """``record.ts`` as seconds (an aware time in UTC, a naive one as it is); 0.0 for a
    stamp that does not parse."""
    import datetime as _dt

    try:
        stamp = _dt.datetime.fromisoformat(record.ts)
    except ValueError:
        return 0.0
    if stamp.tzinfo is not None:
        stamp = stamp.astimezone().replace(tzinfo=None)
    return (stamp - _dt.datetime(1970, 1, 1)).total_seconds()


@attrs.frozen(kw_only=True)
class Failure:
    """One occurrence of a failure (see the module docstring).

    ``record_ids``: the records that show it (the evidence; the first is the record
    its ``key`` names);
    ``summary``: one line a person reads; ``tool``: the tool involved ("" when none);
    ``severity``: one of ``SEVERITIES``."""

    kind: str
    key: str
    signature: str
    severity: str
    session_id: str
    agent_id: str
    record_ids: tuple[str, ...]
    first_ts: str
    last_ts: str
    summary: str
    tool: str = ""

    @property
    def title(self) -> str:
        """What a pattern of this failure is called: its kind and signature's detail."""
        detail = self.signature.split("|", 1)[1] if "|" in self.signature else ""
        return f"{self.kind.replace('_', ' ')}: {detail.replace('|', ' — ')}".strip(": ")
