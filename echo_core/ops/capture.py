"""``capture``: the write path of SPEC §2.1 — inbox, resolve, gate, update or create,
auto-link, index upkeep, agent log. Returns an envelope; never prints."""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any

import attrs

from echo_core.actions import Action
from echo_core.edit_retry import EDIT_ATTEMPTS, planned_again_if_edited
from echo_core.entities import Match, content_hash
from echo_core.errors import EditedMeanwhile, NotFoundError, not_found
from echo_core.frontmatter import render_frontmatter, set_frontmatter_key
from echo_core.gating import GateContext
from echo_core.models import CaptureRequest, Entity, Envelope, GateStop
from echo_core.name_matching import entity_name_tokens, name_score
from echo_core.names import name_key, name_tokens, slugify
from echo_core.notes import append_under_heading, parse_note
from echo_core.ops.capture_blocks import holds_body, update_block
from echo_core.ops.capture_names import gate_message, one_target, refuse_taken_aliases
from echo_core.ops.capture_request import validate_request
from echo_core.ops.capture_result import CaptureResult
from echo_core.ops.daily import append_agent_log
from echo_core.ops.index_sync import sync_paths
from echo_core.ops.links import (
    RELATED_HEADING,
    link_mentioned,
    link_target,
    named_entities,
)
from echo_core.ops.outbox_queue import QueuedResult, Replay, queue_capture
from echo_core.ops.redaction_overrides import report_capture_redaction
from echo_core.ops.telemetry import record_resolve_event
from echo_core.ops.write_intent import StagedVault, commit, new_op_id, recover_pending
from echo_core.protocols import BackendUnavailable, EntityLookup, Storage
from echo_core.routing import SEMANTIC, KindRoute
from echo_core.vault import INBOX_PATH
from echo_core.vault_seen import require_initialised
from echo_core.write_scope import require_note_path

if TYPE_CHECKING:
    from echo_core.context import EchoContext
    from echo_core.ops.contradiction_check import Contradiction

NEAR_DUPLICATE_SCORE = 0.5
#: A title merged into an entity at least this similar to one of its names is another
#: spelling of it (the duplicate gate's threshold, SPEC §2.2): learned as an alias at once.
SAME_NAME_SCORE = 0.8

__all__ = ["EDIT_ATTEMPTS", "CaptureResult", "capture", "gate_message", "require_initialised"]


def capture(ctx: EchoContext, request: CaptureRequest, *, op_id: str | None = None,
            replay: Replay | None = None) -> Envelope[CaptureResult | QueuedResult]:
    """Capture ``request`` (see module docstring). Errors: 2 invalid field, 44 unknown
    ``merge_into``, 75 lock held, 78 vault not initialised. A gate stop is an envelope
    with ``ok=False, action="duplicate-gate"``. When the vault is unreachable the capture
    is queued in the outbox as one record (``action="queued"``) if an outbox exists.

    ``op_id`` names the operation (a fresh one by default): a capture whose ``op_id`` has
    already been committed changes nothing (``action="unchanged"``), so a replay of a
    queued capture lands once. Writes are crash-consistent (``ops.write_intent``).

    ``replay``: the outbox replaying this capture; its day stands for today (dates, dated
    slugs, the daily note) and the capture never queues again.
    Secrets and ``<private>`` text are redacted at validation (``redacted`` in the
    result; ``redact=False`` writes as given and is logged, ``ops.redaction_overrides``).
    A gate stop's message names the arguments that answer it as the caller writes them
    (``echo_core.operations.spelling``)."""
    req = validate_request(request, ctx.manifest)
    op = op_id or new_op_id()
    today = replay.day if replay is not None else ctx.today()
    try:
        env = _capture_valid(ctx, req, op, today, rerun=replay is not None)
    except BackendUnavailable as down:
        if req.dry_run:
            raise
        return queue_capture(ctx, req, down, op_id=op, replay=replay)
    return report_capture_redaction(ctx, req, env)


def _capture_valid(ctx: EchoContext, req: CaptureRequest, op_id: str, today: _dt.date, *,
                   rerun: bool = False) -> Envelope[CaptureResult]:
    require_initialised(ctx)
    if req.kind is None:
        return _capture_inbox(ctx, req, today)
    route = ctx.manifest.route(req.kind)
    with ctx.vault.storage.lock():
        recover_pending(ctx)
        # the name cache, synced once under the lock: as current as a fresh load of the
        # entity store, without building every entity (SPEC §2.1 at any vault size)
        index = ctx.entity_names
        for _attempt in range(EDIT_ATTEMPTS):
            with index.one_snapshot():
                try:
                    return _capture_locked(ctx, req, route, index, op_id, today, rerun)
                except _NoteAppeared as appeared:  # index it, then resolve the title again
                    sync_paths(ctx, [appeared.path])
                    taken = appeared.path
                except _NoteGone as gone:  # moved or deleted meanwhile: find where it went
                    from echo_core.ops.freshness import freshen

                    sync_paths(ctx, [gone.path])  # its entry goes (an index older than
                    freshen(ctx, None)  # the notes too); every note stat-ed finds it again
                    taken = gone.path
        raise EditedMeanwhile(taken)


class _NoteAppeared(Exception):
    """A note a person saved at the path a capture was creating its note at (nothing
    written): ``_capture_valid`` indexes it and resolves the capture again, so the
    capture updates that note when it is the same entity instead of landing beside it."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


class _NoteGone(Exception):
    """The note a capture was updating is not at its indexed path any more (a person moved,
    renamed or deleted it while the capture ran; nothing written): ``_capture_valid``
    brings the indexes up to date and resolves the capture again, so it updates the note
    where it is now (or, deleted, creates it anew) instead of failing with 44."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


def _capture_locked(ctx: EchoContext, req: CaptureRequest, route: KindRoute,
                    index: EntityLookup, op_id: str, today: _dt.date,
                    rerun: bool = False) -> Envelope[CaptureResult]:
    """Resolve, gate, then update or create; the caller holds the vault lock. ``rerun``
    (an outbox replay): the agent-log line is not added twice when recovery of this
    operation's interrupted write logged it already (``write_intent``)."""
    if ctx.entity_names.has_op(op_id):
        return Envelope(True, Action.UNCHANGED, f"capture {op_id} landed already; nothing to do",
                        CaptureResult(kind=req.kind, changed=False))
    old: Entity | None = None
    if req.supersedes:  # supersession (ops.supersession): imported only when asked for
        from echo_core.ops.capture_supersede import supersede_line
        from echo_core.ops.supersession import find_superseded

        old = find_superseded(index, req.supersedes)
        if old is None:
            if route.kind != SEMANTIC:
                raise not_found(f"supersedes: no note has the slug, title or alias "
                                f"{req.supersedes!r} (a line of the operator preferences is "
                                "superseded by a capture of kind semantic)")
            return supersede_line(ctx, req, index, op_id, today)
    target = None if req.force else _resolve_target(ctx.vault.storage, index, req, route, today)
    near = tuple(c for c in _near_duplicates(index, req, target)
                 if old is None or c.get("slug") != old.slug)
    stop: GateStop | None = None
    if target is None and not req.force:
        gate_ctx = GateContext(entities=index, route=route, echo=ctx, today=today)
        stop = ctx.host.hook.gate_capture(request=req, ctx=gate_ctx)
        if stop is not None and old is not None and all(
                c.get("slug") == old.slug for c in stop.candidates):
            stop = None  # the near duplicate is the very note this capture replaces
    conflicts: list[Contradiction] = []
    if stop is None and old is None and not req.force and route.kind == SEMANTIC:
        from echo_core.ops.contradiction_check import find_contradictions

        conflicts = find_contradictions(ctx.vault.storage, req.title, req.body,
                                        own_path=target.path if target else None)
    if req.dry_run:
        return _dry_run(ctx, req, route, index, target, near, stop, today, old, conflicts)
    if stop is not None:
        candidates = tuple(dict(c) for c in stop.candidates)
        return Envelope(False, Action.DUPLICATE_GATE, gate_message(stop, str(req.kind)),
                        CaptureResult(kind=req.kind, near_duplicates=near,
                                      candidates=candidates, would_gate=True, changed=False))
    if conflicts:
        from echo_core.ops.contradiction_check import contradiction_message

        return Envelope(False, Action.CONTRADICTION, contradiction_message(conflicts),
                        CaptureResult(kind=req.kind, near_duplicates=near, would_gate=True,
                                      changed=False,
                                      contradictions=tuple(c.to_dict() for c in conflicts)))
    if target is not None:
        if req.merge_into:
            record_resolve_event(ctx, {"event": "merge_into", "mention": req.title,
                                       "slug": target.slug})
        found = target
        return planned_again_if_edited(
            lambda: _update(ctx, req, route, index, found, near, op_id, today, old,
                            rerun=rerun))
    return planned_again_if_edited(
        lambda: _create(ctx, req, route, index, near, op_id, today, old, rerun=rerun))


def inbox_entry(title: str, body: str) -> str:
    """The text of the inbox item for ``title`` and ``body``: the title, then `` — `` and
    every non-blank line of the body, stripped and joined with `` / `` (an inbox item is
    one line; none of the body is left out)."""
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    return title + (" — " + " / ".join(lines) if lines else "")


def _capture_inbox(ctx: EchoContext, req: CaptureRequest,
                   today: _dt.date) -> Envelope[CaptureResult]:
    line = f"- {today.isoformat()}: {inbox_entry(req.title, req.body or '')}"
    if req.dry_run:
        return Envelope(True, Action.DRY_RUN_INBOX, f"would append to {INBOX_PATH}: {line}",
                        CaptureResult(path=INBOX_PATH, changed=False))
    with ctx.vault.storage.lock():
        changed = ctx.vault.append_line(INBOX_PATH, line)
    message = f"inbox: {line}" if changed else "already in the inbox"
    return Envelope(True, Action.INBOX, message, CaptureResult(path=INBOX_PATH, changed=changed))


def _resolve_target(storage: Storage, index: EntityLookup, req: CaptureRequest,
                    route: KindRoute, today: _dt.date) -> Entity | None:
    """The entity this capture updates: ``merge_into``'s, else the one whose title or
    alias is the title (any case or punctuation) or whose slug it is as written; never
    one whose slug only happens to read like the title (``EntityIndex.named``)."""
    if req.merge_into:
        entity = index.get(req.merge_into) or next(iter(index.exact(req.merge_into)), None)
        if entity is None:
            raise not_found(f"merge_into: no entity {req.merge_into!r}; check the slug with "
                            "`echo-memory resolve`")
        return entity
    matches = index.named(req.title, kind=req.kind) or [
        e for e in index.exact(req.title, kind=req.kind) if e.slug == req.title.casefold()]
    if route.dated:  # a meeting or decision is the same entity only on the same date
        day = (req.date or today.isoformat())
        matches = [e for e in matches if e.slug.startswith(day)]
    if matches:  # several: the title is ambiguous, a usage error naming them
        return one_target(req.title, route.kind, matches)
    return _unindexed_note(storage, index, req, route, today)


def _unindexed_note(storage: Storage, index: EntityLookup, req: CaptureRequest,
                    route: KindRoute, today: _dt.date) -> Entity | None:
    """The note already at this title's own path when the index does not know it (written
    by hand, or by a capture whose index entry a power cut lost), if its first heading
    names the same title: it is adopted as the entity instead of creating ``<slug>-2``."""
    slug = _base_slug(req, route, today)
    path = f"{route.folder_for(req.domain)}/{slug}.md"
    if index.get(slug) is not None or index.by_path(path) is not None or not storage.exists(path):
        return None
    note = parse_note(path, storage.read(path))
    title = next((line[2:].strip() for line in note.body.splitlines() if line.startswith("# ")), "")
    if name_key(title or slug) != name_key(req.title):
        return None
    raw = note.frontmatter.get("aliases") or []
    aliases = tuple(str(a) for a in (raw if isinstance(raw, list) else [raw]))
    return Entity(slug=slug, path=path, kind=route.kind, title=title or req.title, aliases=aliases)


def _near_duplicates(index: EntityLookup, req: CaptureRequest,
                     target: Entity | None) -> tuple[dict[str, Any], ...]:
    matches: list[Match] = index.fuzzy(req.title, min_score=NEAR_DUPLICATE_SCORE, limit=5)
    return tuple(m.to_candidate() for m in matches
                 if target is None or m.entity.slug != target.slug)


def _dry_run(ctx: EchoContext, req: CaptureRequest, route: KindRoute, index: EntityLookup,
             target: Entity | None, near: tuple[dict[str, Any], ...],
             stop: GateStop | None, today: _dt.date, old: Entity | None = None,
             conflicts: list[Contradiction] | None = None) -> Envelope[CaptureResult]:
    also = ""
    if old is not None:
        from echo_core.ops.supersession import check_supersedable

        still = check_supersedable(old, ctx.vault.storage.read(old.path),
                                   target.path if target else None)
        also = f"; would mark {old.path} superseded" if still else ""
    if conflicts:
        from echo_core.ops.contradiction_check import contradiction_message

        return Envelope(True, Action.DRY_RUN_CONTRADICTION,
                        f"would stop: {contradiction_message(conflicts)}",
                        CaptureResult(kind=req.kind, near_duplicates=near, would_gate=True,
                                      changed=False,
                                      contradictions=tuple(c.to_dict() for c in conflicts)))
    if stop is not None:
        message = f"would stop at the gate: {gate_message(stop, str(req.kind))}"
        return Envelope(True, Action.DRY_RUN_DUPLICATE_GATE, message,
                        CaptureResult(kind=req.kind, near_duplicates=near, would_gate=True,
                                      candidates=tuple(dict(c) for c in stop.candidates),
                                      changed=False))
    if target is not None:
        return Envelope(True, Action.DRY_RUN_UPDATE, f"would update {target.path}{also}",
                        CaptureResult(path=target.path, slug=target.slug, kind=target.kind,
                                      near_duplicates=near, changed=False,
                                      superseded=old.path if old else None))
    slug, path = _new_location(ctx, req, route, index, today)
    return Envelope(True, Action.DRY_RUN_CREATE, f"would create {path}{also}",
                    CaptureResult(path=path, slug=slug, kind=req.kind, near_duplicates=near,
                                  changed=False, superseded=old.path if old else None))


def _merge_list(text: str, fm: dict[str, Any], key: str, extra: list[str]) -> tuple[str, list[str]]:
    current = fm.get(key) or []
    current = [str(x) for x in (current if isinstance(current, list) else [current])]
    added = [x for x in extra if x not in current]
    if not added:
        return text, []
    return set_frontmatter_key(text, key, current + added), added


def _update(ctx: EchoContext, req: CaptureRequest, route: KindRoute, index: EntityLookup,
            target: Entity, near: tuple[dict[str, Any], ...], op_id: str,
            today: _dt.date, old: Entity | None = None, *,
            rerun: bool = False) -> Envelope[CaptureResult]:
    vault = StagedVault(ctx)
    from echo_core.ops.supersession import check_supersedable  # only with --supersedes

    if old is not None and not check_supersedable(old, vault.storage.read(old.path),
                                                  target.path):
        old = None  # superseded by this note already
    route = ctx.manifest.route(target.kind)  # merge_into may name another kind's entity
    try:
        original = text = vault.storage.read(target.path)
    except NotFoundError:
        raise _NoteGone(target.path) from None
    changed = False
    if req.body and not holds_body(text, req.body):
        text, changed = append_under_heading(text, route.log_heading,
                                             update_block(req.date or today.isoformat(), req.body))
    fm = parse_note(target.path, text).frontmatter
    known = {name_key(n) for n in (target.title, *target.aliases, target.slug)}
    mentions = (req.title, *req.aliases) if _learns_title(req, target) else req.aliases
    new_aliases = [a for a in mentions if name_key(a) not in known]
    refuse_taken_aliases(index, new_aliases, target)
    text, learned = _merge_list(text, fm, "aliases", list(dict.fromkeys(new_aliases)))
    text, tags = _merge_list(text, fm, "tags", list(req.tags))
    text, sources = _merge_list(text, fm, "sources", list(req.sources))
    if req.status and fm.get("status") != req.status:
        text, changed = set_frontmatter_key(text, "status", req.status), True
    expiry = _expiry(ctx, req, route, today) if (req.ttl_days or req.expires) else None
    if expiry is not None and str(fm.get("expires") or "") != expiry.isoformat():
        text, changed = set_frontmatter_key(text, "expires", expiry), True
    changed = changed or bool(learned or tags or sources) or old is not None
    if not changed:
        return Envelope(True, Action.UNCHANGED, f"{target.path} already has this update",
                        CaptureResult(path=target.path, slug=target.slug, kind=target.kind,
                                      near_duplicates=near, changed=False))
    text = set_frontmatter_key(text, "updated", today)
    text, links, refreshed = _autolink(vault, index, target.path, target.slug, text, req.body)
    if old is not None:
        from echo_core.ops.capture_supersede import supersede_note

        text, old_entry = supersede_note(vault, old, target.path, text, today)
        refreshed += [old_entry] if old_entry else []
    vault.write_note(target.path, text, prior=original)
    entity = attrs.evolve(target, aliases=target.aliases + tuple(learned), h=content_hash(text))
    append_agent_log(vault, today, f"- {today.isoformat()}: updated {target.kind} "
                                   f"[[{link_target(target.path)}]]", rerun=rerun)
    commit(ctx, vault, [*refreshed, entity], op_id)
    also = f"; {old.path} is superseded by it" if old is not None else ""
    return Envelope(True, Action.UPDATED, f"updated {target.path}{also}",
                    CaptureResult(path=target.path, slug=target.slug, kind=target.kind,
                                  links_added=links, near_duplicates=near,
                                  aliases_learned=tuple(learned),
                                  superseded=old.path if old else None))


def _learns_title(req: CaptureRequest, target: Entity) -> bool:
    """Whether an update learns its title as an alias of ``target`` at once: always when
    the title resolved to it, and for ``merge_into`` when the title is another spelling of
    one of its names (token-set similarity >= ``SAME_NAME_SCORE``, what the duplicate gate
    stops: "Vantage Systems Inc" into Vantage Systems). A different name merged into an
    entity ("Countess of Lovelace" into Ada Lovelace, "Renewal call" into a company) is
    one confirmation in the resolve-miss log; sweep proposes it as an alias after the
    second (SPEC §5.5). ``--aliases`` are learned at once either way."""
    if not req.merge_into:
        return True
    return name_score(name_tokens(req.title), entity_name_tokens(target)) >= SAME_NAME_SCORE


def _base_slug(req: CaptureRequest, route: KindRoute, today: _dt.date) -> str:
    """The slug a new entity of this title gets before uniqueness suffixes."""
    base = slugify(req.title)
    return f"{req.date or today.isoformat()}-{base}" if route.dated else base


def _new_location(ctx: EchoContext, req: CaptureRequest, route: KindRoute,
                  index: EntityLookup, today: _dt.date) -> tuple[str, str]:
    base = _base_slug(req, route, today)
    folder = route.folder_for(req.domain)
    slug, n = base, 1
    while index.get(slug) is not None or ctx.vault.storage.exists(f"{folder}/{slug}.md"):
        n += 1
        slug = f"{base}-{n}"
    return slug, require_note_path(f"{folder}/{slug}.md")


def _new_note_text(ctx: EchoContext, req: CaptureRequest, route: KindRoute,
                   today: _dt.date) -> str:
    fm: dict[str, Any] = {
        "type": route.kind,
        "status": req.status or route.status,
        "created": today,
        "updated": today,
        "tags": list(dict.fromkeys([route.kind, *req.tags])),
    }
    if route.dated:
        fm["date"] = _dt.date.fromisoformat(req.date) if req.date else today
    if req.aliases:
        fm["aliases"] = list(req.aliases)
    if req.sources:
        fm["sources"] = list(req.sources)
    expiry = _expiry(ctx, req, route, today)
    if expiry is not None:
        fm["expires"] = expiry
    body = f"{req.body}\n\n" if req.body else ""
    return (f"{render_frontmatter(fm)}# {req.title}\n\n{body}"
            f"## {route.log_heading}\n\n## {RELATED_HEADING}\n")


def _expiry(ctx: EchoContext, req: CaptureRequest, route: KindRoute,
            today: _dt.date) -> _dt.date | None:
    """When a note of ``route`` captured now expires: ``req.expires``, else today plus
    ``req.ttl_days``, else plus ``ECHO_WORKING_TTL_DAYS`` (the kind's default); None for a
    kind that does not expire."""
    if route.expires_days is None:
        return None
    if req.expires:
        return _dt.date.fromisoformat(req.expires)
    ttl = req.ttl_days or int(ctx.env.get("ECHO_WORKING_TTL_DAYS", route.expires_days))
    return today + _dt.timedelta(days=ttl)


def _create(ctx: EchoContext, req: CaptureRequest, route: KindRoute, index: EntityLookup,
            near: tuple[dict[str, Any], ...], op_id: str,
            today: _dt.date, old: Entity | None = None, *,
            rerun: bool = False) -> Envelope[CaptureResult]:
    refuse_taken_aliases(index, req.aliases, None)
    vault = StagedVault(ctx)
    slug, path = _new_location(ctx, req, route, index, today)
    text = _new_note_text(ctx, req, route, today)
    text, links, refreshed = _autolink(vault, index, path, slug, text, req.body)
    if old is not None:
        from echo_core.ops.capture_supersede import supersede_note

        text, old_entry = supersede_note(vault, old, path, text, today)
        refreshed += [old_entry] if old_entry else []
    vault.update_note(path, text, None)  # written only while still absent (commit)
    entity = Entity(slug=slug, path=path, kind=route.kind, title=req.title,
                    aliases=req.aliases, h=content_hash(text))
    append_agent_log(vault, today, f"- {today.isoformat()}: created {route.kind} "
                                   f"[[{link_target(path)}]]", rerun=rerun)
    try:
        commit(ctx, vault, [*refreshed, entity], op_id)
    except EditedMeanwhile as edited:
        if edited.path == path:  # a person saved a note where this one was to go
            raise _NoteAppeared(path) from None
        raise
    also = f"; {old.path} is superseded by it" if old is not None else ""
    return Envelope(True, Action.CREATED, f"created {path}{also}",
                    CaptureResult(path=path, slug=slug, kind=route.kind, links_added=links,
                                  near_duplicates=near, superseded=old.path if old else None))


def _autolink(vault: StagedVault, index: EntityLookup, path: str, slug: str, text: str,
              body: str) -> tuple[str, tuple[str, ...], list[Entity]]:
    """Link the note at ``path`` with every other entity its ``body`` names (both ways,
    but never from a durable note to one that expires: ``links.link_mentioned``).

    The other notes' new texts are staged in ``vault``; returns the captured note's new
    text, the linked paths and each changed neighbour's entry with its new hash.
    """
    if not body:
        return text, (), []
    linked: list[str] = []
    refreshed: list[Entity] = []
    for other in named_entities(body, index, exclude={slug}):
        if not vault.storage.exists(other.path):
            continue
        text, changed = link_mentioned(vault, path, text, other.path)
        if changed:
            linked.append(other.path)
            refreshed.append(attrs.evolve(other, h=content_hash(vault.storage.read(other.path))))
    return text, tuple(linked), refreshed
