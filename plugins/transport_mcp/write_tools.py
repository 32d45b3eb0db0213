"""The built-in write tools: capture, set_scope, link, append_note, triage_inbox,
log_session.

Same shape as ``read_tools``: ``ctx`` first, typed parameters, an ``Envelope`` back.
Access marks (``plugins.transport_mcp.access``): ``append_note`` locks its note path;
the others are entity-level writes under the server's write lock; ``capture`` with
``dry_run``, ``triage_inbox`` without ``apply`` and ``log_session`` without ``apply``
only read. Nested proposal objects reject unknown keys, like the top-level parameters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, NotRequired

from pydantic import ConfigDict, Field, with_config
from typing_extensions import TypedDict  # pydantic needs this one on Python < 3.12

from echo_core.context import EchoContext
from echo_core.models import CaptureRequest, Envelope
from echo_core.protocols import McpTool
from echo_core.routing import load_manifest
from plugins.transport_mcp.access import Access, tool_access, write_unless, write_when

_MANIFEST = load_manifest()
KINDS = ", ".join(_MANIFEST.kinds)
DOMAINS = ", ".join(_MANIFEST.area_domains)
Names = Annotated[tuple[str, ...], Field(max_length=50)]


@with_config(ConfigDict(extra="forbid"))
class TriageProposal(TypedDict):
    """How to route one inbox line (unknown keys are rejected)."""

    line: Annotated[str, Field(description="The exact inbox line, e.g. '- 2026-02-20: met Ada'.")]
    title: NotRequired[Annotated[str, Field(description="The entity's name.")]]
    kind: NotRequired[Annotated[str | None, Field(description=f"One of: {KINDS}; null = stay.")]]
    body: NotRequired[str]
    tags: NotRequired[list[str]]
    aliases: NotRequired[list[str]]
    sources: NotRequired[list[str]]
    status: NotRequired[str]
    date: NotRequired[str]
    domain: NotRequired[str]
    merge_into: NotRequired[str]
    force: NotRequired[bool]
    action: NotRequired[Literal["stay"]]


@with_config(ConfigDict(extra="forbid"))
class ReflectProposal(TypedDict):
    """One thing the session learned, to be captured (unknown keys are rejected)."""

    title: str
    body: str
    confidence: Annotated[float, Field(ge=0, le=1, description="Below 0.6 goes to the inbox.")]
    kind: NotRequired[Annotated[str, Field(description=f"One of: {KINDS}.")]]
    tags: NotRequired[list[str]]
    aliases: NotRequired[list[str]]
    sources: NotRequired[list[str]]
    date: NotRequired[str]


@tool_access(write_unless("dry_run"))
def echo_capture(
    ctx: EchoContext,
    title: Annotated[str, Field(min_length=1, max_length=200, description=(
        "The thing's name (one line), e.g. 'Ada Lovelace' or 'Use pytest, not unittest'."))],
    kind: Annotated[str | None, Field(description=(
        f"One of: {KINDS}. Omit to drop a quick item in the inbox."))] = None,
    body: Annotated[str, Field(max_length=100000, description="Markdown text to record.")] = "",
    tags: Names = (),
    aliases: Annotated[tuple[str, ...], Field(max_length=50, description=(
        "Other names it goes by."))] = (),
    sources: Annotated[tuple[str, ...], Field(max_length=50, description=(
        "Where it came from (URLs, paths)."))] = (),
    status: Annotated[str | None, Field(description="One word, e.g. active; default by kind.")] = None,
    date: Annotated[str | None, Field(description="ISO date YYYY-MM-DD (default today).")] = None,
    domain: Annotated[str | None, Field(description=f"For kind area: one of {DOMAINS}.")] = None,
    merge_into: Annotated[str | None, Field(description=(
        "Slug of the existing note to update (the answer to a duplicate-gate)."))] = None,
    force: Annotated[bool, Field(description="Create even if the gate sees a duplicate.")] = False,
    dry_run: Annotated[bool, Field(description="Preview only; nothing is written.")] = False,
) -> Envelope:
    """``capture`` (SPEC §2.1)."""
    from echo_core.ops.capture import capture

    request = CaptureRequest(title=title, kind=kind, body=body, tags=tuple(tags),
                             aliases=tuple(aliases), sources=tuple(sources), status=status,
                             date=date, domain=domain, merge_into=merge_into, force=force,
                             dry_run=dry_run)
    return capture(ctx, request)


@tool_access("write")
def echo_set_scope(
    ctx: EchoContext,
    scope: Annotated[str, Field(min_length=1, max_length=2000, description=(
        "The new focus, e.g. 'Ship the recall index; then the MCP server'."))],
) -> Envelope:
    """``scope set`` (SPEC §4.2)."""
    from echo_core.ops.scope import set_scope

    return set_scope(ctx, scope)


@tool_access("write")
def echo_link(
    ctx: EchoContext,
    a: Annotated[str, Field(min_length=1, max_length=500, description="A note path or name.")],
    b: Annotated[str, Field(min_length=1, max_length=500, description="Another note path or name.")],
) -> Envelope:
    """``link`` (SPEC §2.4)."""
    from echo_core.ops.resolve import link

    return link(ctx, a, b)


@tool_access("write", lock_param="path")
def echo_append_note(
    ctx: EchoContext,
    path: Annotated[str, Field(min_length=1, max_length=500, description=(
        "Vault-relative note path; created when absent."))],
    line: Annotated[str, Field(min_length=1, max_length=10000, description=(
        "One line of text (no line breaks), e.g. '- 2026-03-01: shipped it'."))],
) -> Envelope:
    """``append`` (raw note verb); idempotent."""
    from echo_core.ops.notes_io import append_line

    return append_line(ctx, path, line)


def _triage_access(arguments: Mapping[str, Any]) -> Access:
    return "write" if arguments.get("apply") and arguments.get("proposals") else "read"


@tool_access(_triage_access)
def echo_triage_inbox(
    ctx: EchoContext,
    proposals: Annotated[list[TriageProposal] | None, Field(max_length=200, description=(
        "How to route inbox items. Omit to list the inbox."))] = None,
    apply: Annotated[bool, Field(description="false previews (default); true writes.")] = False,
) -> Envelope:
    """``triage list`` without proposals, else ``triage apply`` (SPEC §2.5)."""
    from echo_core.ops.triage import apply_proposals, list_inbox

    if proposals is None:
        return list_inbox(ctx)
    return apply_proposals(ctx, [dict(p) for p in proposals], apply=apply)


@tool_access(write_when("apply"))
def echo_log_session(
    ctx: EchoContext,
    slug: Annotated[str, Field(min_length=1, max_length=80, description=(
        "kebab-case name of the session, e.g. fix-recall-index."))],
    log_body: Annotated[str, Field(min_length=1, max_length=100000, description=(
        "Markdown log; '## Goal', '## Decisions Made', '## Open Threads', '## Suggested "
        "Next Step' sections fill the template."))],
    agent_log_line: Annotated[str | None, Field(max_length=500, description=(
        "One line for today's agent log (default: a link to the session log)."))] = None,
    scope: Annotated[str | None, Field(max_length=2000, description="New scope, if it changed.")] = None,
    reflect: Annotated[list[ReflectProposal] | None, Field(max_length=50, description=(
        "Things learned, each captured (gate-aware)."))] = None,
    apply: Annotated[bool, Field(description="false previews (default); true writes.")] = False,
) -> Envelope:
    """``session-end`` (SPEC §4.3)."""
    from echo_core.ops.session_end import session_end

    bundle: dict[str, Any] = {"slug": slug, "log_body": log_body}
    for key, value in (("agent_log_line", agent_log_line), ("scope", scope)):
        if value is not None:
            bundle[key] = value
    if reflect is not None:
        bundle["reflect"] = [dict(p) for p in reflect]
    return session_end(ctx, bundle, apply=apply)


WRITE_TOOLS: tuple[McpTool, ...] = (
    McpTool("echo_capture", (
        "Save something worth remembering across sessions (a person, project, decision, "
        "preference, idea...) as a note, updating the existing note when the title resolves "
        "to one; without kind it goes to the inbox. Use it when a durable fact or decision "
        "comes up. Returns the path and action; a likely duplicate returns ok=false with "
        "action duplicate-gate and candidates (retry with merge_into or force)."),
        echo_capture, "core"),
    McpTool("echo_set_scope", (
        "Replace the current scope (the previous one is kept, dated, in Scope History). Use "
        "it when the focus of work changes. Returns the new scope and the previous one."),
        echo_set_scope, "full"),
    McpTool("echo_link", (
        "Link two notes both ways under their Related sections. Use it when two notes "
        "belong together; give paths or exactly resolvable names. Returns both paths and "
        "whether anything changed."), echo_link, "full"),
    McpTool("echo_append_note", (
        "Append one line to a note unless the same line is already there. Use it for log "
        "bullets in a note you know the path of. Returns the path and whether it changed."),
        echo_append_note, "full"),
    McpTool("echo_triage_inbox", (
        "Work through the inbox: without proposals it lists the items (exact lines, ages); "
        "with proposals it routes each line to a note through capture. Preview first, then "
        "call again with apply=true. Returns each item's classification (create, update, "
        "stay, gated, done, error) and path."), echo_triage_inbox, "core"),
    McpTool("echo_log_session", (
        "Close a session: write its log, a line in today's agent log, the reflect proposals "
        "(via capture), the scope, then the heartbeat. Call it at the end of substantive "
        "work, first as a preview, then with apply=true. Returns every step and how each "
        "proposal was classified."), echo_log_session, "core"),
)
