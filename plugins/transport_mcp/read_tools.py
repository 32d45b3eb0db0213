"""The built-in read tools: load, recall, resolve, get_note, get_scope, health.

Each function takes the ``EchoContext`` first, then typed parameters (pydantic
``Annotated`` + ``Field`` give the ranges and descriptions the tool schema shows), and
returns the operation's ``Envelope``. Operations are imported inside the functions so
collecting tools stays cheap.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from echo_core.context import EchoContext
from echo_core.models import Envelope
from echo_core.protocols import McpTool
from plugins.transport_mcp.access import tool_access

MAX_TEXT = 2000


@tool_access("read")
def echo_load(
    ctx: EchoContext,
    brief: Annotated[bool, Field(description="true: the budgeted digest (default); false: "
                                             "the digest plus the full notes.")] = True,
) -> Envelope:
    """``load`` / ``load --brief`` (SPEC §4.1)."""
    from echo_core.ops.load import load

    return load(ctx, brief=brief)


@tool_access("read")
def echo_recall(
    ctx: EchoContext,
    query: Annotated[str, Field(min_length=1, max_length=MAX_TEXT,
                                description="What to look for, in plain words.")],
    limit: Annotated[int, Field(ge=1, le=20, description="Most primary hits to return.")] = 8,
    include_linked: Annotated[bool, Field(description="Also return notes linked from the "
                                                      "hits (labelled via).")] = True,
    budget_chars: Annotated[int | None, Field(ge=500, le=20000, description=(
        "Cap on the total excerpt characters; cut excerpts end with … and are marked "
        "truncated. Omit for no cap."))] = None,
) -> Envelope:
    """``recall`` (SPEC §3.1)."""
    from echo_core.ops.recall import recall

    return recall(ctx, query, limit=limit, include_linked=include_linked,
                  budget_chars=budget_chars)


@tool_access("read")
def echo_resolve(
    ctx: EchoContext,
    mention: Annotated[str, Field(min_length=1, max_length=300,
                                  description="A name as written: slug, title or alias.")],
) -> Envelope:
    """``resolve`` (SPEC §2.3)."""
    from echo_core.ops.resolve import resolve

    return resolve(ctx, mention)


@tool_access("read")
def echo_get_note(
    ctx: EchoContext,
    path: Annotated[str, Field(min_length=1, max_length=500, description=(
        "Vault-relative note path, e.g. resources/people/ada-lovelace.md."))],
    section: Annotated[str | None, Field(max_length=200, description=(
        "Only this heading's section (heading text without #). Omit for the whole "
        "note."))] = None,
    max_chars: Annotated[int, Field(ge=100, le=200000, description=(
        "Cut the content at this many characters (truncated=true when cut)."))] = 20000,
) -> Envelope:
    """``get`` (SPEC §3.3)."""
    from echo_core.ops.notes_io import get_note

    return get_note(ctx, path, section=section, max_chars=max_chars)


@tool_access("read")
def echo_get_scope(ctx: EchoContext) -> Envelope:
    """``scope show`` (SPEC §4.2)."""
    from echo_core.ops.scope import show_scope

    return show_scope(ctx)


@tool_access("read")
def echo_health(
    ctx: EchoContext,
    deep: Annotated[bool, Field(description=(
        "Ask for deep checks too. Lint-level checks are not available yet, so both "
        "modes run the readiness checks; deep=true adds a warning saying so."))] = False,
) -> Envelope:
    """``doctor`` (SPEC §5.3); ``deep`` reserved for the lint checks of SPEC §5.2."""
    import attrs

    from echo_core.ops.doctor import run_doctor

    envelope = run_doctor(ctx)
    if deep:
        note = "deep checks (lint) are not available yet; ran the readiness checks only"
        envelope = attrs.evolve(envelope, warnings=(*envelope.warnings, note))
    return envelope


READ_TOOLS: tuple[McpTool, ...] = (
    McpTool("echo_load", (
        "Load the memory digest that orients a session: scope, operator preferences, recent "
        "observations, the last session's summary, today's agent log and the inbox count. "
        "Call it once at the start of a session (brief=false adds the full notes). Returns "
        "the digest text and its sections."), echo_load, "core"),
    McpTool("echo_recall", (
        "Search memory (entity notes, session logs, journal) for what is known about a "
        "topic. Use it before answering questions about past work, people, decisions or "
        "preferences. Returns ranked primary hits and linked notes with path, score and "
        "excerpt; budget_chars caps the excerpt text (cut ones are marked truncated)."),
        echo_recall, "core"),
    McpTool("echo_resolve", (
        "Resolve a name to the entity note it refers to (slug, title or alias, forgiving "
        "case and punctuation). Use it before capturing or linking, to reuse an existing "
        "note instead of creating a duplicate. Returns the match (slug, path, kind, title, "
        "aliases) or match=false with fuzzy candidates and a suggested slug."),
        echo_resolve, "full"),
    McpTool("echo_get_note", (
        "Read one note, or one section of it, by its vault path. Use it after recall or "
        "resolve to see a note in full. Returns content, frontmatter and truncated=true when "
        "cut at max_chars; an unknown section is a not-found error listing the headings."),
        echo_get_note, "full"),
    McpTool("echo_get_scope", (
        "Show the current scope: what the agent is working on now. Use it to check the "
        "focus before planning work. Returns the scope text, scope_updated and how many "
        "sessions were logged since."), echo_get_scope, "full"),
    McpTool("echo_health", (
        "Check that memory works: config, vault reachable, plugins, marker and schema. Use "
        "it when memory tools fail or during setup. Returns each check as ok, warn or fail "
        "with the fix; ok=false when any check fails."), echo_health, "core"),
)
