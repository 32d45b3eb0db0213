"""Raw note verbs: ``get``, ``put``, ``append``, ``fm``, ``ls`` (SPEC §3.3 and the CLI).

The writing verbs (put, append, fm) stay in the write scope of SPEC §1.4
(``echo_core.write_scope``): only ``.md`` notes outside dot-folders and the agent's
internal files; anything else is ``EchoError`` (2) before the vault is touched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from echo_core.actions import Action
from echo_core.edit_retry import planned_again_if_edited
from echo_core.errors import EchoError, ExitCode, not_found, usage_error
from echo_core.models import Envelope, Note
from echo_core.notes import before_trailing_related, get_section, headings, truncate
from echo_core.ops.outbox_queue import QueuedResult, Replay, queue_or_raise
from echo_core.ops.patch_targets import set_field
from echo_core.paths import normalize_path
from echo_core.protocols import BackendUnavailable
from echo_core.write_scope import require_note_path, require_plain_line, require_text

if TYPE_CHECKING:
    from echo_core.context import EchoContext


@attrs.frozen
class GetResult:
    """A note (or one section of it) as read; ``version``: the whole note's
    (``note_version``), which ``evolve --base`` takes to refuse a stale edit."""

    path: str
    content: str
    frontmatter: dict[str, Any]
    truncated: bool
    section: str | None = None
    frontmatter_error: str | None = None
    version: str = ""


def note_version(text: str) -> str:
    """A note text's version: the first 12 hex digits of the SHA-256 of its UTF-8 bytes
    (the note history's version ids are the same)."""
    from echo_core import digests

    return digests.sha256(text.encode("utf-8")).hexdigest()[:12]


def get_note(
    ctx: EchoContext, path: str, *, section: str | None = None, max_chars: int | None = None
) -> Envelope[GetResult]:
    """Read ``path``; with ``section`` only that heading's section; cap at ``max_chars``.

    Errors: 44 when the note (or the section) is absent — the section error lists the
    note's real headings; 2 for a bad path or a non-positive ``max_chars``.
    """
    if max_chars is not None and max_chars <= 0:
        raise usage_error(f"max_chars must be a positive number, got {max_chars}")
    note = _read_note(ctx, path)
    content = note.text
    warnings: tuple[str, ...] = ()
    if section is not None:
        found = get_section(note.text, section)
        if found is None:
            real = ", ".join(headings(note.text)) or "(none)"
            raise not_found(f"{note.path} has no section {section!r}; its headings: {real}")
        content = found
        # not at the top: ops.patch imports ops.history, which imports this module
        from echo_core.ops.duplicate_headings import duplicate_heading

        twin = duplicate_heading(note.path, note.text, section, nested=False)
        warnings = (twin,) if twin else ()
    truncated = False
    if max_chars is not None:
        content, truncated = truncate(content, max_chars)
    result = GetResult(
        note.path, content, dict(note.frontmatter), truncated, section, note.frontmatter_error,
        note_version(note.text),
    )
    message = f"{note.path} ({len(content)} chars)"
    if note.frontmatter_error:
        message += f"; its frontmatter was not read: {note.frontmatter_error}"
    return Envelope(True, Action.READ, message, result, warnings)


def _read_note(ctx: EchoContext, path: str) -> Note:
    """``vault.read_note``; a folder's path is 2, pointing to ``ls``, not "no file"."""
    try:
        return ctx.vault.read_note(path)
    except EchoError as exc:
        if exc.code != ExitCode.NOT_FOUND:
            raise
        folder = normalize_path(path)
        try:
            files = ctx.vault.storage.list(folder)
        except EchoError:
            files = []
        if not files:
            raise
    raise usage_error(f"{folder} is a folder, not a note: `echo-memory ls {folder}` lists "
                      "its files") from None


@attrs.frozen
class WriteResult:
    """The outcome of a raw write."""

    path: str
    changed: bool
    chars: int | None = None


def put_note(ctx: EchoContext, path: str, text: str, *,
             replay: Replay | None = None) -> Envelope[WriteResult | QueuedResult]:
    """Write the whole note (atomic). An identical existing note is left untouched.
    Queued in the outbox when the vault is unreachable, unless it is a ``replay``."""
    clean = require_note_path(path)
    require_text(text, "text")
    try:
        return _put(ctx, clean, text)
    except BackendUnavailable as down:
        return queue_or_raise(ctx, "put", {"path": clean, "text": text}, down, replay=replay)


def _put(ctx: EchoContext, clean: str, text: str) -> Envelope[WriteResult]:
    """The write of ``put_note``: the text it replaces goes to the history, and a
    person's save that lands while it writes is not lost (it goes to the history on the
    next attempt: ``edit_retry``)."""

    def put_once() -> bool:
        current = ctx.vault.text_or_none(clean)
        if current == text:
            return False
        if current is None:
            refuse_taken_slug(ctx, clean, "write it there")
        ctx.vault.update_note(clean, text, current)
        return True

    with ctx.vault.storage.lock():
        changed = planned_again_if_edited(put_once)
    if not changed:
        return Envelope(True, Action.UNCHANGED, f"{clean} unchanged", WriteResult(clean, False, len(text)))
    return Envelope(True, Action.WRITTEN, f"wrote {clean} ({len(text)} chars)", WriteResult(clean, True, len(text)))


def append_line(ctx: EchoContext, path: str, line: str, *,
                replay: Replay | None = None) -> Envelope[WriteResult | QueuedResult]:
    """Append one line unless it is already present (idempotent). Queued in the outbox
    when the vault is unreachable, unless it is a ``replay``."""
    if "\n" in line or "\r" in line:
        raise usage_error("append takes a single line; it contains a line break")
    if not line.strip():
        raise usage_error("append needs a non-empty line")
    clean = require_note_path(path)
    require_text(line, "line")
    require_plain_line(line, "line")
    try:
        with ctx.vault.storage.lock():
            changed = planned_again_if_edited(lambda: _append_once(ctx, clean, line))
    except BackendUnavailable as down:
        return queue_or_raise(ctx, "append", {"path": clean, "line": line}, down,
                              replay=replay)
    message = f"appended to {clean}" if changed else f"{clean} already has that line"
    return Envelope(True, Action.APPENDED if changed else Action.UNCHANGED, message, WriteResult(clean, changed))


def refuse_taken_slug(ctx: EchoContext, path: str, verb_there: str) -> None:
    """Before a note is created at ``path``: 2 when a file in its folder has the same path
    but for letter case or Unicode normalisation (``_case_twin``); 44 when another note
    already has its name
    (its slug, the file name without ``.md``): most likely the note was moved by a person
    and the caller holds its old path, and a second note of that name would make
    ``[[name]]`` ambiguous. The entity index is brought up to date first (the quick
    check), so a move made a moment ago is seen."""
    from echo_core.ops.freshness import freshen_for

    twin = _case_twin(ctx, path)
    if twin is not None:
        raise usage_error(f"{path} and the existing {twin} differ only in letter case or "
                          "Unicode form: one file on macOS and Windows, and Obsidian Sync "
                          f"keeps one of them; write {twin}, or another name. Nothing was "
                          "written")
    freshen_for(ctx, "quick")
    slug = path.rsplit("/", 1)[-1][:-len(".md")]
    entity = ctx.entity_names.get(slug)
    if entity is None or entity.path == path or not ctx.vault.storage.exists(entity.path):
        return
    raise not_found(f"no note at {path}, and the note {slug!r} is at {entity.path} (moved?): "
                    f"{verb_there}, or give the new note another name ([[{slug}]] would "
                    "name two notes). Nothing was written")


def _case_twin(ctx: EchoContext, path: str) -> str | None:
    """A file in ``path``'s folder whose name equals ``path``'s after NFC normalisation
    and case folding, but is not ``path`` itself (``Inbox.md`` for ``inbox.md``,
    ``café.md`` decomposed for ``café.md`` composed), or None."""
    import unicodedata

    def key(name: str) -> str:
        return unicodedata.normalize("NFC", name).casefold()

    folder, _, name = path.rpartition("/")
    wanted = key(name)
    try:
        siblings = ctx.vault.storage.list(folder) if folder else ctx.vault.storage.list("")
    except EchoError:
        return None
    for sibling in siblings:
        head, _, other = sibling.rpartition("/")
        if head == folder and other != name and key(other) == wanted:
            return sibling
    return None


def _append_once(ctx: EchoContext, path: str, line: str) -> bool:
    """Add ``line`` to the note unless an identical line is there: before a ``## Related``
    section that ends the note (``notes.before_trailing_related``: what a person appends
    is content, not one of the links echo-memory keeps there), else at its end."""
    current = ctx.vault.text_or_none(path)
    if current is None:
        refuse_taken_slug(ctx, path, "append there")
    if current is not None and line not in (kept.rstrip("\r") for kept in current.split("\n")):
        placed = before_trailing_related(current, line)
        if placed is not None:
            ctx.vault.update_note(path, placed, current)
            return True
    return ctx.vault.append_line(path, line)


def set_frontmatter(ctx: EchoContext, path: str, key: str, value: Any, *,
                    replay: Replay | None = None) -> Envelope[WriteResult | QueuedResult]:
    """Set one frontmatter key surgically (only that key's line changes, a comment on it
    kept: ``patch_targets.set_field``), as ``vault.set_frontmatter`` but refusing (2) a
    block that is not a mapping. Queued in the outbox when the vault is unreachable,
    unless it is a ``replay``."""
    clean = require_note_path(path)
    require_text(key, "key")
    require_text(value, "value")

    def set_once() -> bool:
        before = ctx.vault.storage.read(clean)
        after = set_field(before, key, value)
        if after == before:
            return False
        ctx.vault.update_note(clean, after, before)
        return True

    try:
        with ctx.vault.storage.lock():
            changed = planned_again_if_edited(set_once)
    except BackendUnavailable as down:
        return queue_or_raise(ctx, "fm", {"path": clean, "key": key, "value": value}, down,
                              replay=replay)
    message = f"set {key} on {clean}" if changed else f"{clean}: {key} already has that value"
    return Envelope(True, Action.UPDATED if changed else Action.UNCHANGED, message, WriteResult(clean, changed))


@attrs.frozen
class ListResult:
    """Files under a folder."""

    prefix: str
    paths: tuple[str, ...]


def list_notes(ctx: EchoContext, prefix: str = "") -> Envelope[ListResult]:
    """List files under ``prefix`` (the whole vault by default), sorted. Nothing under a
    ``prefix`` is 44 (no such folder, or an empty one: a backend without folders cannot
    tell them apart), and 2 when ``prefix`` is a file (``get`` reads it): a typo in a
    folder name is not reported as an empty listing."""
    clean = normalize_path(prefix, allow_root=True)
    paths = tuple(ctx.vault.storage.list(clean))
    if clean and not paths:
        if ctx.vault.storage.exists(clean):
            raise usage_error(f"{clean} is a file, not a folder: `echo-memory get {clean}` "
                              "prints it")
        raise not_found(f"no files under {clean!r} in the vault: no such folder, or an empty "
                        "one (`echo-memory ls` lists the whole vault)")
    where = clean or "the vault"
    return Envelope(True, Action.LISTED, f"{len(paths)} files in {where}", ListResult(clean, paths))
