"""``scope show`` / ``scope set`` (SPEC §4.2): what the agent is working on now.

The scope lives in ``_agent/context/current-context.md`` under ``## Scope``; setting it
moves the prior scope, dated, to the top of ``## Scope History`` and stamps
``scope_updated``.
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING

import attrs

from echo_core.actions import Action
from echo_core.errors import usage_error
from echo_core.frontmatter import set_frontmatter_key
from echo_core.models import Envelope
from echo_core.notes import parse_note, replace_section_body, section_body

if TYPE_CHECKING:
    from echo_core.context import EchoContext

CONTEXT_PATH = "_agent/context/current-context.md"
SESSIONS_DIR = "_agent/sessions"
PLACEHOLDER = "(no scope set yet)"
MAX_SCOPE = 2000


@attrs.frozen
class ScopeResult:
    """The scope as it stands (after a set, the new one)."""

    scope: str
    scope_updated: str
    sessions_since: int
    previous: str | None = None
    changed: bool = False


def session_date(path: str) -> str | None:
    """The ``YYYY-MM-DD`` of a session log path (``_agent/sessions/2026-03-01-0930-x.md``)."""
    name = path.rsplit("/", 1)[-1]
    day = name[:10]
    try:
        _dt.date.fromisoformat(day)
    except ValueError:
        return None
    return day


def sessions_since(ctx: EchoContext, day: str) -> int:
    """How many session logs are dated on or after ``day`` (an ISO date; "" counts all)."""
    count = 0
    for path in ctx.vault.storage.list(SESSIONS_DIR):
        logged = session_date(path)
        if logged is not None and logged >= day:
            count += 1
    return count


def _read_context(ctx: EchoContext) -> str:
    if ctx.vault.storage.exists(CONTEXT_PATH):
        return ctx.vault.storage.read(CONTEXT_PATH)
    today = ctx.today().isoformat()
    return (f"---\ntype: context\nscope_updated: {today}\n---\n# Current Context\n\n"
            f"## Scope\n\n{PLACEHOLDER}\n\n## Scope History\n")


def read_scope(ctx: EchoContext, text: str | None = None) -> ScopeResult:
    """The current scope, its date and the number of sessions logged since."""
    text = _read_context(ctx) if text is None else text
    note = parse_note(CONTEXT_PATH, text)
    scope = section_body(text, "Scope") or ""
    updated = str(note.frontmatter.get("scope_updated") or "")
    return ScopeResult(scope=scope, scope_updated=updated,
                       sessions_since=sessions_since(ctx, updated[:10]))


def show_scope(ctx: EchoContext) -> Envelope[ScopeResult]:
    """The scope, ``scope_updated`` and sessions logged since."""
    result = read_scope(ctx)
    shown = result.scope if result.scope and result.scope != PLACEHOLDER else "(none)"
    message = (f"scope: {shown}\nupdated {result.scope_updated or 'never'}; "
               f"{result.sessions_since} sessions logged since")
    return Envelope(True, Action.SCOPE, message, result)


def _history_line(day: str, scope: str) -> str:
    return f"- {day}: " + " / ".join(line.strip() for line in scope.splitlines() if line.strip())


def set_scope(ctx: EchoContext, scope: str) -> Envelope[ScopeResult]:
    """Replace the scope; the prior one goes (dated by its ``scope_updated``) to the top
    of Scope History. The same scope again changes nothing. Errors: 2 for an empty or
    over-long scope."""
    scope = scope.replace("\r\n", "\n").strip()
    if not scope:
        raise usage_error("scope: give the new scope text")
    if len(scope) > MAX_SCOPE:
        raise usage_error(f"scope: {len(scope)} characters; keep it under {MAX_SCOPE}")
    with ctx.vault.storage.lock():
        text = _read_context(ctx)
        before = read_scope(ctx, text)
        if before.scope == scope:
            return Envelope(True, Action.UNCHANGED, "scope unchanged", before)
        today = ctx.today().isoformat()
        if before.scope and before.scope != PLACEHOLDER:
            history = section_body(text, "Scope History") or ""
            entry = _history_line(before.scope_updated[:10] or today, before.scope)
            text = replace_section_body(text, "Scope History",
                                        entry + ("\n" + history if history else ""))
        text = replace_section_body(text, "Scope", scope)
        text = set_frontmatter_key(text, "scope_updated", _dt.date.fromisoformat(today))
        ctx.vault.write_note(CONTEXT_PATH, text)
    result = ScopeResult(scope=scope, scope_updated=today, sessions_since=sessions_since(ctx, today),
                         previous=before.scope if before.scope != PLACEHOLDER else None,
                         changed=True)
    return Envelope(True, Action.UPDATED, f"scope set: {scope.splitlines()[0]}", result)

