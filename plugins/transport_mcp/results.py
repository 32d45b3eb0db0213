"""Tool results: what an operation's envelope or error becomes on the wire.

Every result carries ``structured_content`` (a JSON object: the envelope's ``to_dict()``,
or ``{"ok": false, "action": "error", "message", "error": {code, exit, message}}``) and a
text block a model can use on its own: 1-3 short summary lines, then the readable result
(the operation's ``render``, what the CLI prints; or the JSON when it has none). ``Outcome.label`` is the word the call log
records (``ok``, ``not-ok:<action>``, ``error:<code>``) — never arguments or bodies.

Error map (SPEC §6.2): an ``EchoError`` -> ``is_error`` with its code name (``not-found``,
``usage``...); the backend unreachable -> ``is_error`` with code ``unavailable``: on a read
"proceed without memory", on a write "nothing was written". Writes the operations queue
themselves in the offline outbox (capture, append, when an outbox plugin is installed)
come back as an ``ok`` envelope with ``action="queued"``: data, not an error. A gate stop
is NOT an error either (``ok=false``, ``action="duplicate-gate"``). A result holding text
that cannot be sent as UTF-8 JSON is a ``failure`` error (``sendable_outcome``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
from mcp.types import CallToolResult, TextContent

from echo_core import CODE_NAMES, Action, EchoError, Envelope, ExitCode, to_jsonable

log = logging.getLogger("echo_memory.mcp")
UNREACHABLE_READ = "vault unreachable; proceed without memory"
UNREACHABLE_WRITE = ("vault unreachable; nothing was written (this write could not be queued "
                     "offline): retry once the vault is back")
MAX_LINE = 300
MAX_LINES = 3


@attrs.frozen
class Outcome:
    """A tool result and the one-word label the call log records."""

    result: CallToolResult
    label: str


def _clip(line: str) -> str:
    line = line.strip()
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 1].rstrip() + "…"


def summary_text(*lines: str) -> str:
    """At most three non-empty lines, each at most 300 characters."""
    kept = [_clip(part) for line in lines for part in line.splitlines() if part.strip()]
    return "\n".join(kept[:MAX_LINES])


def _result(structured: dict[str, Any], text: str, *, is_error: bool) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=structured, is_error=is_error)


def readable_text(envelope: Envelope[Any], data: Mapping[str, Any],
                  render: Callable[[Envelope[Any]], str] | None) -> str:
    """The result as people read it: ``render(envelope)`` (the CLI's prose), else the
    structured content as JSON. A ``queued`` envelope has only its message."""
    if envelope.action == Action.QUEUED:
        return ""
    if render is not None:
        try:
            return render(envelope).strip()
        except Exception:
            log.warning("render of %s failed; sending the JSON", envelope.action, exc_info=True)
    return json.dumps(data, ensure_ascii=False, indent=1)


def envelope_outcome(envelope: Any, render: Callable[[Envelope[Any]], str] | None = None, *,
                     readable: bool = True) -> Outcome:
    """An operation's envelope: data, even when ``ok`` is false (a gate stop, a failed
    health check), except ``action="unreachable"`` (load with the vault down: an error).
    The text is the summary, a blank line, and ``readable_text`` (left out when not
    ``readable``: a caller that sends only the structured content)."""
    if not isinstance(envelope, Envelope):
        return value_outcome(envelope)
    data = envelope.to_dict()
    if envelope.action == Action.UNREACHABLE:
        message = envelope.message or UNREACHABLE_READ
        data["error"] = {"code": CODE_NAMES[ExitCode.UNAVAILABLE],
                         "exit": int(ExitCode.UNAVAILABLE), "message": message}
        return Outcome(_result(data, summary_text(f"error (unavailable): {message}"),
                               is_error=True), "error:unavailable")
    # a gate stop's message already names merge_into / force (capture's gate_message)
    extra: list[str] = []
    if envelope.warnings:
        extra.append(f"{len(envelope.warnings)} warning(s): see warnings")
    head = (envelope.message or envelope.action).splitlines() or [envelope.action]
    text = summary_text(*head[: max(1, MAX_LINES - len(extra))], *extra)
    prose = readable_text(envelope, data, render) if readable else ""
    if prose and prose != text:
        text = f"{text}\n\n{prose}"
    label = "ok" if envelope.ok else f"not-ok:{envelope.action}"
    return Outcome(_result(data, text, is_error=False), label)


def error_outcome(code: ExitCode, message: str, fields: Sequence[str] = ()) -> Outcome:
    """An ``is_error`` result with code name ``code`` and ``message`` (saying what to do)."""
    name = CODE_NAMES[code]
    error: dict[str, Any] = {"code": name, "exit": int(code), "message": message}
    if fields:
        error["fields"] = list(fields)
    data = {"ok": False, "action": str(Action.ERROR), "message": message, "error": error}
    return Outcome(_result(data, summary_text(f"error ({name}): {message}"), is_error=True),
                   f"error:{name}")


def echo_error_outcome(exc: EchoError) -> Outcome:
    """An ``EchoError`` as an ``is_error`` result keeping its code."""
    return error_outcome(exc.code, exc.message)


def unreachable_outcome(detail: str, *, write: bool, changed: int = 0) -> Outcome:
    """The backend is down: "proceed without memory" on a read, "nothing was written" on
    a write; on a call that had changed ``changed`` notes before it went down (a
    multi-step write such as session-end), how many were written."""
    base = UNREACHABLE_WRITE if write else UNREACHABLE_READ
    if changed:
        base = (f"vault unreachable after this call had written {changed} "
                f"note{'s' if changed != 1 else ''}; the rest was not written (this write "
                "could not be queued offline): retry once the vault is back")
    return error_outcome(ExitCode.UNAVAILABLE, f"{base} ({detail})" if detail else base)


def internal_outcome(exc: BaseException) -> Outcome:
    """An unexpected failure: the type only (details stay in the server log)."""
    return error_outcome(ExitCode.FAILURE, f"internal error ({type(exc).__name__}); the "
                                           "server log has details. Retry, or report a bug")


def _has_non_text(value: Any) -> bool:
    """True when a string in JSON-shaped ``value`` (keys included) is not valid UTF-8.
    A loop, not recursion: it runs on every result (~25 us for a 20-hit recall)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


def sendable_outcome(outcome: Outcome, tool: str) -> Outcome:
    """``outcome`` when its result can be sent as UTF-8 JSON; else (a string holding a
    lone surrogate, e.g. from an undecodable file name) a ``failure`` error saying so,
    logged with ``tool``: the client gets an answer, never a crash or a silent stdio
    server."""
    result = outcome.result
    texts = [getattr(block, "text", "") for block in result.content]
    if not (_has_non_text(texts) or _has_non_text(result.structured_content)):
        return outcome
    log.error("tool=%s: the result holds text that is not valid UTF-8 (a lone surrogate); "
              "sent an error instead", tool)
    return error_outcome(ExitCode.FAILURE, "internal error (the result holds text that is "
                                           "not valid UTF-8 and cannot be sent); the server "
                                           "log has details. Report a bug")


def value_outcome(value: Any) -> Outcome:
    """What an operation returned when it is not an ``Envelope`` (a third party's
    mistake, served anyway): a ``CallToolResult`` (passed through), a mapping (structured
    as is), or anything else (JSON text)."""
    if isinstance(value, Envelope):
        return envelope_outcome(value)
    if isinstance(value, CallToolResult):
        return Outcome(value, "error:tool" if value.is_error else "ok")
    data = to_jsonable(value)
    if isinstance(data, Mapping):
        structured = dict(data)
        ok = structured.get("ok", True) is not False
        head = str(structured.get("message") or json.dumps(structured, ensure_ascii=False))
        return Outcome(_result(structured, summary_text(head), is_error=False),
                       "ok" if ok else "not-ok:result")
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return Outcome(_result({"ok": True, "result": data}, summary_text(text or "(empty)"),
                           is_error=False), "ok")


def _location(loc: Sequence[Any]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "arguments"


def validation_outcome(tool: str, errors: Sequence[Mapping[str, Any]],
                       allowed: Sequence[str]) -> Outcome:
    """Invalid arguments: one ``usage`` error naming every offending field (never values).

    ``errors`` are pydantic error dicts; an unknown top-level parameter lists the allowed
    ones."""
    problems: list[str] = []
    fields: list[str] = []
    for err in errors:
        loc = tuple(err.get("loc", ()))
        where = _location(loc)
        kind = err.get("type", "")
        if kind == "extra_forbidden":
            scope = "parameter" if len(loc) == 1 else "field"
            hint = f" (allowed: {', '.join(allowed)})" if len(loc) == 1 else ""
            problems.append(f"{where}: unknown {scope}{hint}")
        elif kind == "missing":
            problems.append(f"{where}: required")
        else:
            problems.append(f"{where}: {err.get('msg', 'invalid value')}")
        if where not in fields:
            fields.append(where)
    shown = "; ".join(problems[:8]) + (f"; ... {len(problems) - 8} more" if len(problems) > 8 else "")
    return error_outcome(ExitCode.USAGE, f"invalid arguments for {tool}: {shown}", fields)
