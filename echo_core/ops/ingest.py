"""``ingest``: a web page, a PDF, a markdown or text file -> recallable notes (SPEC §2.1's
redaction rule applies; issue 17 item 5).

``ingest(ctx, source, dry_run=False)``:

1. read the source (``ingest_fetch``: http(s) or a local file, capped, typed; a URL's
   password or key redacted in the source recorded and reported, which identifies it);
2. extract a title and markdown (``ingest_extract``: main text only for HTML);
3. redact: secrets replaced with a marker, ``<private>...</private>`` dropped
   (``echo_core.redaction``), in the title and the text, before anything is planned;
4. plan the notes (``ingest_plan``): one document note under ``resources/references/``
   plus its parts, sized for recall; re-ingesting the same content changes nothing;
5. write them, with the day's agent-log line, as one crash-consistent operation
   (``ops.write_intent``: a killed ingest leaves the document with all its parts or the
   vault as it was), each note in the entity index; then delete surplus parts of an
   earlier, longer version (a killed delete is finished by the next ingest).

A person may save a note while it runs (their edits take no lock): each note is written,
and each surplus part deleted, only while it holds the text the plan was made from. A
note saved in between is seen by planning again (``edit_retry``, at most
``EDIT_ATTEMPTS`` times) and so kept as edited by hand; a surplus part saved after the
writes is kept and reported with them.

Dry run: steps 1-4, the planned paths and sizes, nothing written.
Errors (nothing written): 2 bad source or malformed URL, refused scheme, non-text
content, nothing extracted, more text or parts than one ingest takes
(``ingest_extract.MAX_CHARS``, ``ingest_plan.MAX_PARTS``); 44 HTTP 404/410; 69
unreachable, or slower than the fetch deadline (``ingest_fetch``); 75 lock held; 78
vault not initialised.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from echo_core.actions import Action
from echo_core.edit_retry import planned_again_if_edited
from echo_core.entities import content_hash
from echo_core.models import Entity, Envelope
from echo_core.note_entities import entity_of_text, kind_folders, unique_slug
from echo_core.ops.daily import append_agent_log
from echo_core.ops.ingest_extract import ExtractedText, extract, tidy
from echo_core.ops.ingest_fetch import read_source
from echo_core.ops.ingest_notes import markdown_hash
from echo_core.ops.ingest_plan import IngestDocument, IngestPlan, PlannedNote, plan_ingest
from echo_core.ops.links import link_target
from echo_core.ops.write_intent import StagedVault, commit, new_op_id, recover_pending
from echo_core.redaction import PRIVATE, ordered, redact_all
from echo_core.vault_seen import require_initialised

if TYPE_CHECKING:
    from echo_core.context import EchoContext

@attrs.frozen
class IngestResult:
    """The document note (``path``, ``title``), where it came from (``source``,
    ``source_type``: html, pdf, markdown or text), the stored text's ``content_hash`` and
    length, every part with what happened to it, the notes kept because they were
    edited by hand, the parts removed, the kinds of secrets redacted, and whether
    anything was written."""

    path: str
    title: str
    source: str
    source_type: str
    content_hash: str
    chars: int
    document: PlannedNote
    parts: tuple[PlannedNote, ...] = ()
    kept_edited: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    redacted: tuple[str, ...] = ()
    changed: bool = False


def _redact(extracted: ExtractedText) -> tuple[ExtractedText, tuple[str, ...]]:
    """The title and text with secrets masked and ``<private>`` spans dropped (SPEC §2.1);
    the rules that fired."""
    (title, text), found = redact_all((extracted.title, extracted.markdown))
    if extracted.dropped_private:
        found = ordered({*found, PRIVATE})
    return ExtractedText(title, text), found


def ingest(ctx: EchoContext, source: str, *, dry_run: bool = False,
           op_id: str | None = None, remote: bool = False) -> Envelope[IngestResult]:
    """Ingest ``source`` (module docstring); ``remote``: the caller is a model over MCP,
    which may give public http(s) URLs only (``ingest_fetch``)."""
    require_initialised(ctx)
    fetched = read_source(source, ctx.env, remote=remote)
    extracted, redacted = _redact(extract(fetched))
    redacted = ordered({*redacted, *fetched.redacted})
    doc = IngestDocument(extracted.title.strip() or "Untitled", tidy(extracted.markdown),
                         fetched.location, fetched.is_url)
    today = ctx.today()
    fetched_at = ctx.now().isoformat(timespec="seconds")
    storage = ctx.vault.storage
    if dry_run:
        plan = plan_ingest(storage, _taken(ctx), doc, fetched_at, today)
        return _envelope(plan, doc, fetched.kind, redacted, written=False, dry_run=True)
    operation = op_id or new_op_id()

    def planned_and_written() -> tuple[IngestPlan, tuple[str, ...]]:
        plan = plan_ingest(storage, _taken(ctx), doc, fetched_at, today)
        kept = _carry_out(ctx, plan, today, operation) if plan.changes else ()
        return plan, kept

    with storage.lock():
        recover_pending(ctx)
        plan, kept = planned_again_if_edited(planned_and_written)
    return _envelope(plan, doc, fetched.kind, redacted, written=plan.changes, dry_run=False,
                     kept_meanwhile=kept)


def _taken(ctx: EchoContext, claimed: set[str] | None = None) -> Callable[[str], bool]:
    """Whether a slug is in the entity index (or in ``claimed``)."""
    names = ctx.entity_names
    mine = claimed if claimed is not None else set()
    return lambda slug: slug in mine or names.get(slug) is not None


def _carry_out(ctx: EchoContext, plan: IngestPlan, today: _dt.date,
               op_id: str) -> tuple[str, ...]:
    """Write ``plan`` (caller holds the vault lock), each note only while it holds the
    text it was planned from (else ``EditedMeanwhile``, nothing written), then delete its
    surplus parts that still hold theirs; returns the surplus parts kept because they
    were saved meanwhile."""
    vault = StagedVault(ctx)
    folders = kind_folders(ctx.manifest)
    names = ctx.entity_names
    claimed: set[str] = set()
    taken = _taken(ctx, claimed)
    entities: list[Entity] = []
    for path in sorted(plan.writes):
        text = plan.writes[path]
        vault.update_note(path, text, plan.read.get(path))
        known = names.by_path(path)
        slug = known.slug if known is not None else unique_slug(path, taken)
        claimed.add(slug)
        entity = entity_of_text(path, text, slug, folders, ctx.manifest)
        if entity is not None:
            entities.append(attrs.evolve(entity, h=content_hash(text)))
    if plan.writes:
        verb = "ingested" if plan.document.step == "create" else "re-ingested"
        count = sum(1 for p in plan.parts if p.step not in ("remove", "kept-surplus"))
        append_agent_log(vault, today, f"- {today.isoformat()}: {verb} reference "
                                       f"[[{link_target(plan.document.path)}]] ({count} parts)")
        commit(ctx, vault, entities, op_id)
    gone: list[str] = []
    kept: list[str] = []
    for path in plan.removes:
        if ctx.vault.text_or_none(path) != plan.read.get(path):
            kept.append(path)  # saved since the plan: a person's text is not deleted
            continue
        known = names.by_path(path)
        ctx.vault.delete_note(path)
        if known is not None:
            gone.append(known.slug)
    if gone:
        ctx.entities.record(deletes=gone)
    return tuple(kept)


def _envelope(plan: IngestPlan, doc: IngestDocument, kind: str, redacted: tuple[str, ...],
              *, written: bool, dry_run: bool,
              kept_meanwhile: tuple[str, ...] = ()) -> Envelope[IngestResult]:
    parts = tuple(attrs.evolve(p, step="kept-surplus") if p.path in kept_meanwhile else p
                  for p in plan.parts)
    removed = tuple(p for p in plan.removes if p not in kept_meanwhile) if written else ()
    kept = (*plan.kept, *kept_meanwhile)
    result = IngestResult(
        path=plan.document.path, title=doc.title, source=doc.location, source_type=kind,
        content_hash=markdown_hash(doc.markdown), chars=len(doc.markdown),
        document=plan.document, parts=parts, kept_edited=kept,
        removed=removed, redacted=redacted, changed=written)
    count = sum(1 for p in plan.parts if p.step not in ("remove", "kept-surplus"))
    if dry_run:
        what = ("unchanged: nothing would be written" if not plan.changes
                else f"would write {len(plan.writes)} note(s)"
                + (f" and remove {len(plan.removes)}" if plan.removes else ""))
        return Envelope(True, Action.DRY_RUN, f"{plan.document.path} ({count} parts): {what}"
                        + (f"; {plan.advice}" if plan.advice else ""), result)
    advice = f"; {plan.advice}" if plan.advice else ""
    if not written:
        said = (f"the source changed since {plan.document.path} was edited by hand; nothing "
                "written" if plan.document.step == "kept-edited" else
                f"{plan.document.path} is up to date ({count} parts); nothing written")
        return Envelope(True, Action.UNCHANGED, said + advice, result)
    verb = "created" if plan.document.step == "create" else "updated"
    extra = f"; kept {len(kept)} note(s) edited by hand" if kept else ""
    action = Action.CREATED if verb == "created" else Action.UPDATED
    return Envelope(True, action,
                    f"{verb} {plan.document.path} with {count} parts{extra}{advice}", result)
