"""``ingest`` (the MCP ``echo_ingest``), declared once: a web page, a PDF, a markdown or
text file -> a reference note and its parts (the rules in ``echo_core.ops.ingest``)."""

from __future__ import annotations

from typing import Any

import attrs

from echo_core.models import Envelope
from echo_core.operations import (
    Access,
    Bounds,
    CliParam,
    CliSurface,
    McpSurface,
    Operation,
    lazy_type,
    param,
)


@attrs.frozen(kw_only=True)
class IngestParams:
    """What ``ingest`` / ``echo_ingest`` take."""

    source: str = param(help="An http(s) URL, or a local .html, .pdf, .md or .txt file "
                        "(over MCP: a URL of a public host only).",
                        min_length=1, max_length=4096,
                        cli=CliParam(positional=True, bounds=Bounds(max_length=4096)))
    dry_run: bool = param(False, help="Show the notes and their sizes; write nothing.")


def run_ingest(ctx: Any, p: IngestParams) -> Envelope[Any]:
    """``ops.ingest.ingest``."""
    from echo_core.operations.spelling import current_surface
    from echo_core.ops.ingest import ingest

    return ingest(ctx, p.source, dry_run=p.dry_run, remote=current_surface() == "mcp")


def ingest_access(p: IngestParams) -> Access:
    """A write, unless it is a dry run."""
    return "read" if p.dry_run else "write"


def render_ingest(env: Envelope[Any]) -> str:
    """The document, each part with its size and what happens to it, the message."""
    data = env.data
    lines = [f"{data.title}  <- {data.source} ({data.source_type}, {data.chars} chars)",
             f"  {data.document.step:<12} {data.document.path}"]
    for part in data.parts:
        size = f"  ({part.chars} chars)" if part.chars else ""
        lines.append(f"  {part.step:<12} {part.path}{size}")
    if data.redacted:
        lines.append(f"Redacted before writing: {', '.join(data.redacted)}.")
    if data.kept_edited:
        lines.append("Edited by hand, left as they are: " + ", ".join(data.kept_edited))
    lines.append(env.message)
    return "\n".join(lines)


INGEST = Operation(
    "ingest", "Store a web page, PDF, markdown or text file as a reference and its parts.",
    ("Store a web page (main text only), a PDF, or a markdown or text file as one "
     "reference note under resources/references/ plus linked parts sized for recall, "
     "secrets redacted; use it to keep a document the agent should be able to recall "
     "later (ingesting it again writes nothing unless it changed, and parts edited by "
     "hand are kept). Returns the document path and each part's path, size and step "
     "(create, update, unchanged, kept-edited, remove)."),
    IngestParams, run_ingest, lazy_type("echo_core.ops.ingest", "IngestResult"),
    access=ingest_access, render=render_ingest,
    mcp=McpSurface(tool="echo_ingest"),
    cli=CliSurface(help="""Store a web page, PDF, markdown or text file as a reference and its parts.

\b
Example:
  echo-memory ingest https://example.com/guide/gears.html
  echo-memory ingest ~/papers/engines.pdf --dry-run

\b
Writes (one crash-consistent operation):
  resources/references/<slug>.md            the document: title, source_url
                                            or source_path, fetched_at,
                                            content_hash, summary, part links
  resources/references/<slug>/<slug>-part-01.md, ...
                                            parts of ~1,500 characters, split
                                            at headings, each linking back

HTML keeps the main text only (trafilatura); PDF text comes from pypdf.
Secrets are replaced with a marker (in the text and in the URL recorded:
a password, a key) and <private>...</private> is dropped.
Ingesting the same source again: no change -> nothing written; changed ->
notes updated in place, surplus parts removed, notes edited by hand kept.

Only http(s) URLs and local files; redirects to other schemes are refused.
Limits: ECHO_INGEST_MAX_BYTES (10 MB) downloaded; ECHO_INGEST_TIMEOUT (15 s) to
connect and between reads, 4x that for the whole fetch; 2,000,000 characters of
text and 2,000 parts (a bigger source is refused: split it).
Exit 2 for a bad source, a malformed URL or content with no text, 44 for
HTTP 404, 69 when the host cannot be reached or the fetch misses its
deadline; nothing is written then."""),
    fresh="quick",
)
