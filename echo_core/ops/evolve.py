"""``evolve``: replace a note with a new version, keeping the old one (SPEC §2.6).

``evolve_note(ctx, path, reason, text)``:

1. The note's current text is archived, byte for byte, at
   ``_agent/archive/<path without .md>--<today>.md`` (``-2``, ``-3``... when that name is
   taken), with three frontmatter lines added: ``superseded_by: "[[<note>]]"``,
   ``superseded_at: <today>`` and ``superseded_reason: <reason>``. Nothing else of it
   changes: removing those three lines gives the old text back exactly.
2. ``text`` is written in place with what it leaves out of the old note carried over
   (``carried_over``): each frontmatter key of the old note that ``text`` does not set
   (``type``, ``status``, ``created``, ``tags``, ``aliases``...), its lines as they were,
   and the old note's trailing ``## Related`` links when ``text`` has no ``## Related``.
   The new text's own keys win; a key it leaves empty (``aliases:`` or ``aliases: []``)
   drops that key of the old note (neither carried nor written). Then
   ``supersedes: "[[<archive>]]"`` (a list when the note superseded others before) and
   ``updated: <today>`` are set, one line each.

Both writes are one crash-consistent operation (``ops.write_intent``); the previous text
also goes to the note's history. Never deletes. An entity note's index entry follows its
new title and aliases. Evolving a note to the text it already holds changes nothing.

Errors: 2 for a path outside the write scope, an empty or multi-line reason, text that
is not UTF-8 or empty; 44 when the note does not exist; 75 when the lock is held.

``archived_versions(storage, path, text)`` finds every archived version of a note (its
timeline, for ``recall --as-of`` and ``restore``), however the note names them.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from echo_core.actions import Action
from echo_core.edit_retry import planned_again_if_edited
from echo_core.errors import EchoError, ExitCode, not_found, usage_error
from echo_core.frontmatter import (
    line_ending,
    parse_frontmatter,
    remove_frontmatter_key,
    set_frontmatter_key,
    split_frontmatter,
)
from echo_core.frontmatter_dates import as_date
from echo_core.models import Entity, Envelope
from echo_core.note_entities import entity_of_text, kind_folders
from echo_core.notes import find_section
from echo_core.ops.base_version import require_base
from echo_core.ops.supersession import mark_superseding, wikilink
from echo_core.ops.write_intent import StagedVault, commit, new_op_id, recover_pending
from echo_core.protocols import Storage
from echo_core.vault_seen import require_initialised
from echo_core.write_scope import require_note_path, require_text

ARCHIVE_FOLDER = "_agent/archive"
MAX_REASON = 500
#: The keys an archived version gets (and ``archived_original`` takes away).
ARCHIVE_KEYS = ("superseded_by", "superseded_at", "superseded_reason")

if TYPE_CHECKING:
    from echo_core.context import EchoContext


@attrs.frozen
class EvolveResult:
    """The evolved note, where its old version went, and whether anything changed."""

    path: str
    archive: str | None
    changed: bool = True


def archive_path(storage: Storage, path: str, day: str, text: str | None = None) -> str:
    """The first free archive name for ``path``'s version of ``day``; with ``text``, an
    archive of that day that already holds exactly ``text`` instead (an evolve killed
    after its archive was written, run again from a machine without its intent: the
    archive is taken as it is, not written a second time)."""
    base = f"{ARCHIVE_FOLDER}/{path.removesuffix('.md')}--{day}"
    candidate, n = f"{base}.md", 1
    while storage.exists(candidate):
        if text is not None and _text_at(storage, candidate) == text:
            return candidate
        n += 1
        candidate = f"{base}-{n}.md"
    return candidate


def _text_at(storage: Storage, path: str) -> str | None:
    """The note's text, None when it is absent or cannot be read as text."""
    try:
        return storage.read(path)
    except EchoError as exc:
        if exc.code in (ExitCode.NOT_FOUND, ExitCode.FAILURE):
            return None
        raise


def archived_version(old: str, path: str, reason: str, day: _dt.date) -> str:
    """``old`` with the ``ARCHIVE_KEYS`` lines added (see the module docstring)."""
    text = set_frontmatter_key(old, "superseded_by", wikilink(path))
    text = set_frontmatter_key(text, "superseded_at", day)
    return set_frontmatter_key(text, "superseded_reason", reason)


def archived_original(archived: str) -> str:
    """The text an archived version was made from (its ``ARCHIVE_KEYS`` lines removed)."""
    for key in ARCHIVE_KEYS:
        archived = remove_frontmatter_key(archived, key)
    return archived


def _clean_reason(reason: str) -> str:
    require_text(reason, "reason")
    clean = " ".join((reason or "").split())
    if not clean:
        raise usage_error("reason: say why the note changes, e.g. 'the team moved to Postgres'")
    if "\n" in reason.strip() or "\r" in reason.strip():
        raise usage_error("reason: must be one line")
    if len(clean) > MAX_REASON:
        raise usage_error(f"reason: {len(clean)} characters; keep it under {MAX_REASON}")
    return clean


def evolve_note(ctx: EchoContext, path: str, reason: str, text: str, *,
                dry_run: bool = False, op_id: str | None = None,
                base: str | None = None) -> Envelope[EvolveResult]:
    """Archive the note at ``path`` and write ``text`` in its place (module docstring).
    ``base``: the version (``notes_io.note_version``, or a prefix of at least 4 hex
    digits) the caller made ``text`` from; when the note holds another now, nothing is
    written (exit 1: a capture or an edit since would be lost to the archive)."""
    clean = require_note_path(path)  # refuses an archived version (write_scope)
    why = _clean_reason(reason)
    require_text(text, "text")
    if not text.strip():
        raise usage_error("text: the new version is empty; give the note's whole new text")
    require_initialised(ctx)
    with ctx.vault.storage.lock():
        recover_pending(ctx)
        return planned_again_if_edited(
            lambda: _evolved(ctx, clean, why, text, dry_run=dry_run, op_id=op_id, base=base))


def _evolved(ctx: EchoContext, clean: str, why: str, text: str, *, dry_run: bool,
             op_id: str | None, base: str | None = None) -> Envelope[EvolveResult]:
    """``evolve_note`` under the vault lock: the archive and the new version committed
    together, the note only while it holds the text archived (``write_intent``: a
    person's save meanwhile raises ``EditedMeanwhile``, nothing written)."""
    storage = ctx.vault.storage
    if not storage.exists(clean):
        raise not_found(f"{clean}: no such note to evolve; `echo-memory ls` lists the notes")
    old = storage.read(clean)
    require_base(clean, old, base, "Get it again and redo the edit")
    day = ctx.today()
    archived = archived_version(old, clean, why, day)
    archive = archive_path(storage, clean, day.isoformat(), archived)
    text = carried_over(old, text)
    new = set_frontmatter_key(mark_superseding(text, archive), "updated", day)
    if _already_evolved(old, text):
        return Envelope(True, Action.UNCHANGED, f"{clean} already holds this version",
                        EvolveResult(clean, None, changed=False))
    if dry_run:
        return Envelope(True, Action.DRY_RUN,
                        f"would archive {clean} as {archive} and write the new version",
                        EvolveResult(clean, archive, changed=False))
    vault = StagedVault(ctx)
    if _text_at(storage, archive) != archived:  # else: kept by a run cut short
        vault.update_note(archive, archived, None)  # a new file
    vault.write_note(clean, new, prior=old)
    entity = _entity(ctx, clean, new)
    commit(ctx, vault, [entity] if entity else [], op_id or new_op_id())
    return Envelope(True, Action.WRITTEN, f"evolved {clean}; the old version is {archive}",
                    EvolveResult(clean, archive))


#: Values by which a key of the new text says "drop this key of the old note".
_EMPTY: tuple[object, ...] = (None, "", [], {})
_RELATED = "## Related"


def carried_over(old: str, text: str) -> str:
    """``text`` with what it leaves out of ``old`` carried over (module docstring, step 2).

    Frontmatter: each key of ``old`` that ``text`` does not set is added before
    ``text``'s closing ``---`` (a block is made when ``text`` has none), its lines copied
    from ``old`` as they were (comment lines left behind when ``text`` has its own
    block); a key ``text`` leaves empty that ``old`` has is removed. Nothing is carried
    when either block cannot be read. Body: ``old``'s trailing ``## Related`` section,
    when it lists something, is added at the end when ``text`` has no such section. Pure;
    raises ``EchoError`` only as ``set_frontmatter_key`` does."""
    old_fm, _body, old_error = parse_frontmatter(old)
    new_fm, _body, new_error = parse_frontmatter(text)
    if old_error is None and new_error is None and old_fm:
        for key in [k for k, v in new_fm.items() if k in old_fm and v in _EMPTY]:
            text = remove_frontmatter_key(text, key)
        keep = [k for k in old_fm if k not in new_fm]
        if keep:
            text = _with_keys(text, old, keep, {k: old_fm[k] for k in keep})
    return _with_related(text, old)


def _with_keys(text: str, old: str, keep: list[str], values: dict[str, object]) -> str:
    """``text`` with the frontmatter lines of ``old``'s keys ``keep`` (``values``: what
    they read as) added; set one by one as values when the copied lines would not read
    back as ``values``."""
    carrier = old
    for key in parse_frontmatter(old)[0]:
        if key not in keep:
            carrier = remove_frontmatter_key(carrier, key)
    block = split_frontmatter(carrier)[0] or ""
    eol = line_ending(text)
    lines = block.replace("\r\n", "\n").splitlines(keepends=True)
    own_block, body, _error = split_frontmatter(text)
    if own_block is None:
        bom = "\ufeff" if text.startswith("\ufeff") else ""
        merged = bom + "---\n" + "".join(lines) + "---\n"
        merged = merged.replace("\n", eol) + body
    else:
        lines = [line for line in lines if not line.startswith("#")]
        head = text[:len(text) - len(body)]  # the opening line, the block, the closing line
        at = head.rfind("\n", 0, len(head.rstrip("\r\n"))) + 1
        merged = head[:at] + "".join(lines).replace("\n", eol) + head[at:] + body
    fm, _body, error = parse_frontmatter(merged)
    if error is None and all(fm.get(k) == v for k, v in values.items()):
        return merged
    for key, value in values.items():  # an unusual layout: each key as its value
        text = set_frontmatter_key(text, key, value)
    return text


def _with_related(text: str, old: str) -> str:
    """``text`` with ``old``'s trailing ``## Related`` section (a non-empty one) at its
    end, when ``text`` has no ``## Related`` section."""
    span = find_section(old, _RELATED)
    if span is None or span[1] != len(old) or find_section(text, _RELATED) is not None:
        return text
    section = old[span[0]:]
    if not section.partition("\n")[2].strip():
        return text
    eol = line_ending(text)
    if text and not text.endswith("\n"):
        text += eol
    if text.strip() and not text.endswith(("\n\n", "\n\r\n")):
        text += eol
    return text + section.replace("\r\n", "\n").replace("\n", eol)


def _already_evolved(current: str, text: str) -> bool:
    """Whether ``current`` is ``text`` as an evolve wrote it (``supersedes`` and
    ``updated`` aside), or ``text`` itself."""
    if current == text:
        return True
    strip = ("supersedes", "updated")
    a, b = current, text
    for key in strip:
        a, b = remove_frontmatter_key(a, key), remove_frontmatter_key(b, key)
    return a == b


def _entity(ctx: EchoContext, path: str, text: str) -> Entity | None:
    """The index entry of the note at ``path`` with ``text``, when it is an entity."""
    known = ctx.entity_names.by_path(path)
    slug = known.slug if known is not None else None
    if slug is None:
        return None
    return entity_of_text(path, text, slug, kind_folders(ctx.manifest), ctx.manifest)


#: The name ``archive_path`` gives a version: ``<note name>--<day>``, ``-N`` from the second
#: of one day on.
_ARCHIVE_NAME = re.compile(r"(?P<name>.+)--(?P<day>\d{4}-\d{2}-\d{2})(?:-(?P<n>\d+))?")


@attrs.frozen
class ArchivedVersion:
    """One archived version of a note: its archive ``path`` and ``text``, the day it
    stopped being current (``superseded_at``; None when unreadable) and its place among
    the versions archived that day (``n``: 1 for ``--<day>.md``, N for ``--<day>-N.md``)."""

    path: str
    text: str
    superseded_at: _dt.date | None
    n: int


def frontmatter_link(value: Any) -> str:
    """The target of a frontmatter link value (``"[[x|label]]"``, ``[[x#h]]``, ``x``)."""
    text = str(value).strip().strip('"').strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2]
    return text.split("|", 1)[0].split("#", 1)[0].strip()


def _links(raw: Any) -> list[str]:
    """The targets a ``supersedes`` value links to (one link or a list of them)."""
    values = raw if isinstance(raw, list) else [raw] if raw else []
    return [t for t in (frontmatter_link(v) for v in values) if t]


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def archived_versions(storage: Storage, path: str, text: str, *,
                      listing: Sequence[str] | None = None) -> list[ArchivedVersion]:
    """Every archived version of the note at ``path`` (which holds ``text``), oldest
    first: by ``superseded_at``, then by their order that day (``n``); versions whose
    date cannot be read come last. Found two ways, so that neither a link nor a file
    that is missing loses the others:

    * the ``supersedes`` chain: the archives the note names, those each of them names,
      and so on (a loop, or a link to a missing or unreadable file, ends that branch);
    * by name: ``<ARCHIVE_FOLDER>/<folder>/<name>--<day>[-N].md`` whose ``superseded_by``
      names the note's ``<name>``, for the note's own folder and every folder where no
      note of that name is now (it was moved from there). So a note that names only its
      newest archive, or none (a ``restore`` wrote an older text), keeps its timeline.

    ``listing``: the files under ``ARCHIVE_FOLDER``, when the caller has them (else
    listed here). Reads only; never raises for a damaged archive (it is skipped)."""
    files = [p for p in (storage.list(ARCHIVE_FOLDER) if listing is None else listing)
             if p.endswith(".md")]
    listed = set(files)
    name = _name(path)
    absent: dict[str, bool] = {}

    def belongs(archive: str) -> bool:
        """Whether the folder ``archive`` mirrors is the note's, or holds no note of
        ``name`` now."""
        mirror = archive[len(ARCHIVE_FOLDER) + 1:].rsplit("--", 1)[0] + ".md"
        if mirror == path:
            return True
        if mirror not in absent:
            try:
                absent[mirror] = not storage.exists(mirror)
            except EchoError:
                absent[mirror] = False
        return absent[mirror]

    def resolved(target: str) -> list[str]:
        """The archive files a ``supersedes`` target names."""
        if "--" not in _name(target):
            return []
        if target.startswith(f"{ARCHIVE_FOLDER}/"):
            full = target if target.endswith(".md") else f"{target}.md"
            return [full] if full in listed else []
        named = [p for p in files if _name(p) == _name(target)]
        return named if len(named) <= 1 else [p for p in named if belongs(p)] or named

    by_name = {p for p in files if (m := _ARCHIVE_NAME.fullmatch(_name(p))) is not None
               and m.group("name") == name and belongs(p)}
    chained = {p for t in _links(parse_frontmatter(text)[0].get("supersedes"))
               for p in resolved(t)}
    found: dict[str, ArchivedVersion] = {}
    seen: set[str] = set()
    wanted = chained | by_name
    while wanted - seen:
        batch = sorted(wanted - seen)
        seen.update(batch)
        wanted = set()
        for archive, archived in storage.read_many(batch).items():
            if archived is None:
                continue
            fm = parse_frontmatter(archived)[0]
            if archive not in chained and not archive.startswith(
                    f"{ARCHIVE_FOLDER}/{path.removesuffix('.md')}--") and _name(
                    frontmatter_link(fm.get("superseded_by", ""))) != name:
                continue  # named like one, in another folder, but not this note's version
            match = _ARCHIVE_NAME.fullmatch(_name(archive))
            found[archive] = ArchivedVersion(archive, archived, as_date(fm.get("superseded_at")),
                                             int(match.group("n") or 1) if match else 1)
            links = {p for t in _links(fm.get("supersedes")) for p in resolved(t)}
            chained |= links
            wanted |= links
    return sorted(found.values(), key=lambda v: (v.superseded_at is None,
                                                 v.superseded_at or _dt.date.min, v.n, v.path))
