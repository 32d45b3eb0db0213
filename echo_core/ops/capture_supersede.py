"""The writes of a superseding capture (SPEC §2.6; the rules in ``ops.supersession``):
``supersede_line`` strikes an operator-preferences line and adds the capture's line in
one staged commit; ``supersede_note`` stages the old note's marks and links beside the
capture's own note, which the caller writes and commits."""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING

import attrs

from echo_core.actions import Action
from echo_core.entities import content_hash
from echo_core.errors import not_found, usage_error
from echo_core.frontmatter import set_frontmatter_key
from echo_core.models import CaptureRequest, Entity, Envelope
from echo_core.ops.capture_result import CaptureResult
from echo_core.ops.daily import append_agent_log
from echo_core.ops.links import add_related, link_target
from echo_core.ops.supersession import (
    PREFERENCES_PATH,
    SEMANTIC,
    check_supersedable,
    find_preference_line,
    has_line,
    mark_superseded,
    mark_superseding,
    new_preference_line,
    preference_lines,
    replace_preference_line,
)
from echo_core.ops.write_intent import StagedVault, commit
from echo_core.protocols import EntityLookup

if TYPE_CHECKING:
    from echo_core.context import EchoContext


def supersede_line(ctx: EchoContext, req: CaptureRequest, index: EntityLookup, op_id: str,
                    today: _dt.date) -> Envelope[CaptureResult]:
    """Strike the preference line ``req.supersedes`` names and add the capture's line to
    its section (``ops.supersession``); a second run of the same capture changes nothing."""
    assert req.supersedes is not None
    day = _dt.date.fromisoformat(req.date) if req.date else today
    storage = ctx.vault.storage
    if not storage.exists(PREFERENCES_PATH):
        raise not_found(f"supersedes: no note has the slug, title or alias "
                        f"{req.supersedes!r}, and {PREFERENCES_PATH} does not exist")
    original = storage.read(PREFERENCES_PATH)
    old = find_preference_line(original, req.supersedes)
    entity = index.by_path(PREFERENCES_PATH)
    slug = entity.slug if entity else None
    if old is None:  # struck already: done when its replacement is there too
        dated = any(line.dated for line in preference_lines(original))
        for new_line in (new_preference_line(req.title, req.body, day, dated=flag)
                         for flag in (dated, not dated)):
            if any(line.line.rstrip() == new_line for line in preference_lines(original)):
                return Envelope(True, Action.UNCHANGED,
                                f"{PREFERENCES_PATH} already has this supersession",
                                CaptureResult(path=PREFERENCES_PATH, slug=slug, kind=SEMANTIC,
                                              changed=False))
        raise usage_error(f"supersedes: the line {req.supersedes!r} in {PREFERENCES_PATH} "
                          "is struck already (superseded by another line)")
    new_line = new_preference_line(req.title, req.body, day, dated=old.dated)
    if req.dry_run:
        extra = "" if has_line(original, old.heading, new_line) else f" and add {new_line!r}"
        return Envelope(True, Action.DRY_RUN_UPDATE,
                        f"would strike {old.line.strip()!r} in {PREFERENCES_PATH}{extra}",
                        CaptureResult(path=PREFERENCES_PATH, slug=slug, kind=SEMANTIC,
                                      changed=False, superseded=old.line.strip()))
    vault = StagedVault(ctx)
    text = replace_preference_line(original, old, new_line, day)
    text = set_frontmatter_key(text, "updated", today)
    vault.write_note(PREFERENCES_PATH, text, prior=original)
    append_agent_log(vault, today, f"- {today.isoformat()}: superseded a preference in "
                                   f"[[{link_target(PREFERENCES_PATH)}]]")
    refreshed = [attrs.evolve(entity, h=content_hash(text))] if entity else []
    commit(ctx, vault, refreshed, op_id)
    return Envelope(True, Action.UPDATED,
                    f"superseded {old.line.strip()!r} in {PREFERENCES_PATH}",
                    CaptureResult(path=PREFERENCES_PATH, slug=slug, kind=SEMANTIC,
                                  superseded=old.line.strip()))


def supersede_note(vault: StagedVault, old: Entity, new_path: str, new_text: str,
                    today: _dt.date) -> tuple[str, Entity | None]:
    """Mark ``old`` superseded by the note at ``new_path`` (staged in ``vault``) and
    ``new_text`` superseding it, linked both ways; ``(new_text, old's refreshed entry)``,
    the entry None when ``old`` already names this note as its successor."""
    old_text = vault.storage.read(old.path)
    if not check_supersedable(old, old_text, new_path):
        return new_text, None
    # the Related links first: a link in the frontmatter would count as one already
    marked = mark_superseded(add_related(old_text, new_path)[0], new_path, today)
    vault.write_note(old.path, marked, prior=old_text)
    new_text = mark_superseding(add_related(new_text, old.path)[0], old.path)
    return new_text, attrs.evolve(old, h=content_hash(marked))
