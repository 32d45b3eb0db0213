"""``patch``: append, prepend or replace one part of a note — the content under a
heading, a block reference or a frontmatter field (SPEC §6.2 ``patch_note``, §1.3).

Where the text goes is ``echo_core.ops.patch_targets``; this module reads the note,
writes it under the vault lock (atomic, within the note verbs' write scope of SPEC §1.4,
the prior text kept in the note's history, SPEC §5.6) and says what changed.
"""

from __future__ import annotations

import contextlib
import difflib
from typing import TYPE_CHECKING

import attrs

from echo_core.actions import Action
from echo_core.edit_retry import planned_again_if_edited
from echo_core.errors import usage_error
from echo_core.frontmatter import split_frontmatter
from echo_core.models import Envelope
from echo_core.ops.duplicate_headings import duplicate_heading
from echo_core.ops.history import reindex_entity
from echo_core.ops.patch_targets import (
    PatchOperation,
    TargetType,
    content_lines,
    heading_span,
    missing_heading,
    patch_block,
    patch_field,
    patch_heading,
)
from echo_core.write_scope import require_note_path, require_text

if TYPE_CHECKING:
    from echo_core.context import EchoContext

OPERATIONS: tuple[PatchOperation, ...] = ("append", "prepend", "replace")
TARGET_TYPES: tuple[TargetType, ...] = ("heading", "field", "block")


@attrs.frozen
class PatchResult:
    """One patch: where, how, whether the note changed (``dry_run``: would change), and
    the unified ``diff`` from the note's text to the patched one (empty: no change)."""

    path: str
    operation: str
    target_type: str
    target: str
    changed: bool
    dry_run: bool
    diff: str


def patched_text(path: str, text: str, operation: PatchOperation, target_type: TargetType,
                 target: str, content: str) -> str:
    """The note ``text`` with the patch applied (``text`` itself when it changes nothing).

    Errors: 2 for an unknown operation / target type, an empty target or content; 44
    for an absent heading (listing the real headings) or block id (listing the ids)."""
    if operation not in OPERATIONS:
        raise usage_error(f"operation: {operation!r} is not one of {', '.join(OPERATIONS)}")
    if target_type not in TARGET_TYPES:
        raise usage_error(f"target_type: {target_type!r} is not one of "
                          f"{', '.join(TARGET_TYPES)}")
    if not target.strip():
        raise usage_error("target: it is empty; name the heading, field or block")
    if target_type == "field":
        return patch_field(text, target.strip(), operation, content)
    new = content_lines(content)
    if target_type == "block":
        after = patch_block(path, text, target, operation, new)
    else:
        span = heading_span(text, target)
        if span is None:
            raise missing_heading(path, text, target)
        after = patch_heading(text, span, operation, new)
    if split_frontmatter(after)[0] != split_frontmatter(text)[0]:
        raise usage_error("content: it would change the note's frontmatter block (a '---' "
                          "line after an unclosed block); add the closing '---' line first")
    return after


def note_diff(path: str, before: str, after: str) -> str:
    """The unified diff from ``before`` to ``after`` (empty when they are equal)."""
    lines = difflib.unified_diff(before.splitlines(keepends=True),
                                 after.splitlines(keepends=True),
                                 fromfile=f"{path} (current)", tofile=f"{path} (patched)")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)


def patch_note(ctx: EchoContext, path: str, operation: PatchOperation,
               target_type: TargetType, target: str, content: str, *,
               dry_run: bool = False) -> Envelope[PatchResult]:
    """Patch the note at ``path`` (see ``patched_text`` and ``ops.patch_targets``).

    Writes under the vault lock unless ``dry_run`` (then nothing is written and the diff
    shows what would be); an entity's index entry (title, aliases) follows the patched
    text, as after a ``restore``. A patch that changes nothing (the lines already end the section,
    the item is already in the list, the value is already set) is action ``unchanged``.
    Errors: 2 for a bad path (write scope), operation, target or content; 44 when the
    note, heading or block is absent — the heading error lists the note's headings."""
    clean = require_note_path(path)  # a dry run too: it says what a real run would do
    require_text(content, "content")
    require_text(target, "target")
    def patch_once() -> tuple[str, str]:
        before = ctx.vault.storage.read(clean)
        after = patched_text(clean, before, operation, target_type, target, content)
        if after != before and not dry_run:  # a person's save meanwhile: patch it again
            ctx.vault.update_note(clean, after, before)
        return before, after

    with contextlib.nullcontext() if dry_run else ctx.vault.storage.lock():
        before, after = planned_again_if_edited(patch_once)
        changed = after != before
        twin = duplicate_heading(clean, before, target) if target_type == "heading" else None
        warnings: tuple[str, ...] = (twin,) if twin else ()
        if changed and not dry_run:
            warnings += reindex_entity(ctx, clean, after)
    diff = note_diff(clean, before, after)
    result = PatchResult(clean, operation, target_type, target, changed, dry_run, diff)
    where = f"{target_type} {target!r} of {clean}"
    if not changed:
        return Envelope(True, Action.UNCHANGED, f"{where} already has that ({operation}: "
                        "nothing to change)", result, warnings)
    if dry_run:
        return Envelope(True, Action.DRY_RUN, f"dry run: would {operation} at {where} "
                        "(nothing written)", result, warnings)
    return Envelope(True, Action.UPDATED, f"{operation} at {where} (the previous text is "
                    "kept: `echo-memory history` lists it)", result, warnings)
