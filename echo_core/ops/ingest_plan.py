"""What an ``ingest`` of one document changes in the vault, decided before anything is
written (so a dry run reports exactly what the write does). Reads only.

``plan_ingest(storage, taken, doc, fetched_at, today)``:

1. The document is found by its source: the note directly under
   ``resources/references/`` whose ``source_url`` / ``source_path`` is the source; when
   a person deleted that note, the parts left of it (a parts folder with no document,
   its parts ingested from the source) keep their slug. None: a new one at
   ``<slugify(title)>.md`` (``-2``, ``-3``... when the name, its parts folder or the
   slug is taken).
2. Same ``content_hash`` as stored and every part there: nothing to write
   (``unchanged``), except parts beyond ``parts`` left by an update that was killed
   before it removed them. A part a person deleted is written again (the rest, and the
   document with its ``fetched_at``, stay as they are).
3. Otherwise every note is rendered again. A note ingest wrote and nobody edited since
   (``ingest_notes.edited_by_hand``) is replaced, keeping its ``created`` date and its
   ``## Related`` section; one edited by hand is kept as it is (``kept-edited``). The
   document counts as edited only where ingest generates it
   (``ingest_notes.generated_intact``): a person's text under its ``## Notes`` and
   ``## Related`` is carried over. A document edited elsewhere is not written at all:
   its ``content_hash``, ``fetched_at`` and ``parts`` keep naming the version it
   describes, so every later ingest finds the source changed and reports it again
   (``IngestPlan.advice`` says what to do). Parts beyond the new count are removed,
   unless edited by hand (``kept-surplus``: reported by every later ingest).
4. A text that cuts into more than ``MAX_PARTS`` parts is refused (``UsageError``, 2,
   naming the cap and the size) before any note is rendered: like the character cap of
   ``ingest_extract``, a refusal rather than a document cut short.

The plan keeps the text each write and removal was decided from (``read``), so the
write lands only while the note still holds it: a person's save in between is seen by
planning again (``ops.ingest``), and then kept as edited by hand.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable

import attrs

from echo_core.errors import UsageError
from echo_core.frontmatter import parse_frontmatter
from echo_core.names import slugify
from echo_core.ops.ingest_chunks import Chunk, split_chunks
from echo_core.ops.ingest_notes import (
    FOLDER,
    HASH_KEY,
    chunk_text,
    doc_path,
    document_text,
    edited_by_hand,
    generated_intact,
    markdown_hash,
    own_notes,
    part_folder,
    part_path,
    part_title,
    related_section,
)
from echo_core.protocols import Storage
from echo_core.redaction import redact
from echo_core.storage_base import none_if_absent

#: The most parts one ingest writes: ``ingest_extract.MAX_CHARS`` of prose makes some
#: 1,500; more means a text that cuts into unusually small parts (many short sections).
MAX_PARTS = 2000


@attrs.frozen
class IngestDocument:
    """What was extracted: ``title``, ``markdown`` (redacted), and the source as
    recorded (``location``, a URL when ``is_url``, else a local path)."""

    title: str
    markdown: str
    location: str
    is_url: bool


@attrs.frozen
class PlannedNote:
    """One note of the plan: ``step`` is ``create``, ``update``, ``unchanged``,
    ``kept-edited`` (edited by hand: left as is), ``remove`` or ``kept-surplus`` (a part
    no longer in the document, edited by hand: left as is)."""

    path: str
    title: str
    chars: int
    step: str


@attrs.frozen
class IngestPlan:
    """The document's ``slug``, its note and parts, the texts to write (path -> text),
    the paths to delete, and the text each of those was decided from (``read``: path ->
    text, None for a note that was absent)."""

    slug: str
    document: PlannedNote
    parts: tuple[PlannedNote, ...]
    writes: dict[str, str]
    removes: tuple[str, ...]
    read: dict[str, str | None] = attrs.field(factory=dict)

    @property
    def changes(self) -> bool:
        """Whether carrying out the plan writes or deletes anything."""
        return bool(self.writes or self.removes)

    @property
    def kept(self) -> tuple[str, ...]:
        """Notes left as they are because they were edited by hand."""
        return tuple(n.path for n in (self.document, *self.parts)
                     if n.step in ("kept-edited", "kept-surplus"))

    @property
    def advice(self) -> str:
        """What a person does about the notes kept as edited ('' when none)."""
        said: list[str] = []
        if self.document.step == "kept-edited":
            said.append(f"{self.document.path} was edited by hand outside its ## Notes "
                        "section, so it still describes the earlier version of the source "
                        "(every ingest says so): move your text under ## Notes, which "
                        "ingest keeps, or delete the note, then ingest again")
        if any(n.step == "kept-surplus" for n in self.parts):
            said.append("parts no longer in the source were kept because they were "
                        "edited by hand: delete them once you have what you need")
        return "; ".join(said)


def _read(storage: Storage, path: str) -> str | None:
    return none_if_absent(lambda: storage.read(path))


def _same_source(text: str | None, doc: IngestDocument) -> bool:
    """Whether a note's frontmatter names ``doc``'s source: its URL as recorded now (a
    password or key in it redacted), or as an earlier version recorded it, unredacted."""
    redacted_url = doc.is_url and "[REDACTED:" in doc.location
    if not text or (doc.location not in text and not redacted_url):
        return False
    fm, _, error = parse_frontmatter(text)
    key = "source_url" if doc.is_url else "source_path"
    value = fm.get(key)
    if error is not None or not isinstance(value, str):
        return False
    return value == doc.location or (redacted_url and redact(value).text == doc.location)


def find_document(storage: Storage, doc: IngestDocument) -> tuple[str, str] | None:
    """The path and text of the document note already ingested from ``doc``'s source."""
    direct = [p for p in storage.list(FOLDER + "/")
              if p.endswith(".md") and "/" not in p[len(FOLDER) + 1:]]
    texts = storage.read_many(direct) if direct else {}
    for path in direct:
        text = texts.get(path)
        if _same_source(text, doc):
            return path, text or ""
    return None


def orphan_parts(storage: Storage, doc: IngestDocument) -> str | None:
    """The slug of parts ingested from ``doc``'s source whose document note is gone (a
    person deleted it): a folder ``<slug>/`` of ``<slug>-part-NN.md`` notes with no
    ``<slug>.md`` beside it, its first part naming the source. One part read a folder."""
    listed = set(storage.list(FOLDER + "/"))
    first: dict[str, str] = {}
    for path in sorted(listed):
        slug, _, name = path[len(FOLDER) + 1:].partition("/")
        if (name.startswith(f"{slug}-part-") and name.endswith(".md") and "/" not in name
                and doc_path(slug) not in listed):
            first.setdefault(slug, path)
    texts = storage.read_many(list(first.values())) if first else {}
    return next((slug for slug, path in first.items()
                 if _same_source(texts.get(path), doc)), None)


def _new_slug(storage: Storage, title: str, taken: Callable[[str], bool]) -> str:
    base = slugify(title, max_len=60) or "document"
    slug, n = base, 1
    while (taken(slug) or storage.exists(doc_path(slug))
           or storage.list(part_folder(slug) + "/")):
        n += 1
        slug = f"{base}-{n}"
    return slug


def _surplus(listed: list[str], slug: str, count: int) -> list[str]:
    """The parts of ``slug`` in ``listed`` (its parts folder) beyond the first ``count``."""
    wanted = {part_path(slug, n) for n in range(1, count + 1)}
    prefix = f"{part_folder(slug)}/{slug}-part-"
    return [p for p in listed if p.startswith(prefix) and p.endswith(".md") and p not in wanted]


def _removal(storage: Storage, path: str, read: dict[str, str | None]) -> PlannedNote:
    text = _read(storage, path)
    read[path] = text
    fm, _, _ = parse_frontmatter(text or "")
    action = "kept-surplus" if edited_by_hand(text or "", fm.get(HASH_KEY)) else "remove"
    return PlannedNote(path, str(fm.get("part_of") or path), len(text or ""), action)


def plan_ingest(storage: Storage, taken: Callable[[str], bool], doc: IngestDocument,
                fetched_at: str, today: _dt.date) -> IngestPlan:
    """See the module docstring. ``taken(slug)``: whether the entity index holds it."""
    found = find_document(storage, doc)
    digest = markdown_hash(doc.markdown)
    if found is None:
        slug = orphan_parts(storage, doc) or _new_slug(storage, doc.title, taken)
        return _render_all(storage, slug, None, doc, fetched_at, today)
    path, old_doc = found
    slug = path[len(FOLDER) + 1:-3]
    fm, _, _ = parse_frontmatter(old_doc)
    key = "source_url" if doc.is_url else "source_path"
    if fm.get("content_hash") != digest or fm.get(key) != doc.location:
        # changed, or recorded with the URL's secret by an earlier version: all rewritten
        return _render_all(storage, slug, old_doc, doc, fetched_at, today)
    stored = fm.get("parts")
    count = stored if isinstance(stored, int) else 0
    there = storage.list(part_folder(slug) + "/")
    if not {part_path(slug, n) for n in range(1, count + 1)} <= set(there):
        # a part deleted by hand: written again; the document keeps its fetched_at
        return _render_all(storage, slug, old_doc, doc,
                           str(fm.get("fetched_at") or fetched_at), today)
    read: dict[str, str | None] = {}
    stale = [_removal(storage, p, read) for p in _surplus(there, slug, count)]
    parts = tuple(PlannedNote(part_path(slug, n), "", 0, "unchanged")
                  for n in range(1, count + 1))
    return IngestPlan(slug, PlannedNote(path, doc.title, len(old_doc), "unchanged"),
                      parts + tuple(stale), {},
                      tuple(n.path for n in stale if n.step == "remove"), read)


def _render_all(storage: Storage, slug: str, old_doc: str | None, doc: IngestDocument,
                fetched_at: str, today: _dt.date) -> IngestPlan:
    chunks = split_chunks(doc.markdown)
    if len(chunks) > MAX_PARTS:
        raise UsageError(f"source: {doc.location!r} ({len(doc.markdown):,} characters) "
                         f"would make {len(chunks):,} parts; one ingest writes at most "
                         f"{MAX_PARTS:,}; nothing was ingested (split the document and "
                         "ingest the pieces)")
    titles = [part_title(doc.title, n, c) for n, c in enumerate(chunks, 1)]
    writes: dict[str, str] = {}
    read: dict[str, str | None] = {doc_path(slug): old_doc}
    parts: list[PlannedNote] = []
    for n, (chunk, title) in enumerate(zip(chunks, titles, strict=True), 1):
        path = part_path(slug, n)
        old = read[path] = _read(storage, path)

        def render(day: _dt.date, n: int = n, chunk: Chunk = chunk, title: str = title,
                   old: str | None = old) -> str:
            return chunk_text(doc.title, doc.location, doc.is_url, slug, n, title, chunk, day,
                              created=_created(old), related=_related(old))

        new = render(today)
        if old is not None and render(_updated(old, today)) == old:
            new = old  # the same part: its ``updated`` date stays
        parts.append(_decide(path, title, old, new, writes))
    document = _decide_document(doc_path(slug), doc, old_doc, writes, lambda day: (
        document_text(doc.title, doc.location, doc.is_url, doc.markdown, slug, titles,
                      fetched_at, day, created=_created(old_doc), related=_related(old_doc),
                      notes=own_notes(old_doc))), today)
    listed = storage.list(part_folder(slug) + "/")
    stale = [_removal(storage, p, read) for p in _surplus(listed, slug, len(chunks))]
    return IngestPlan(slug, document, (*parts, *stale), writes,
                      tuple(n.path for n in stale if n.step == "remove"), read)


def _created(old: str | None) -> str | None:
    if not old:
        return None
    value = parse_frontmatter(old)[0].get("created")
    return str(value) if value else None


def _updated(old: str, today: _dt.date) -> _dt.date:
    value = parse_frontmatter(old)[0].get("updated")
    try:
        return _dt.date.fromisoformat(str(value))
    except ValueError:
        return today


def _related(old: str | None) -> str | None:
    return related_section(old) if old else None


def _decide_document(path: str, doc: IngestDocument, old: str | None,
                     writes: dict[str, str], render: Callable[[_dt.date], str],
                     today: _dt.date) -> PlannedNote:
    """The document's step (module docstring, step 3); its text in ``writes`` when it
    is written. The source unchanged (a part was deleted), it is rendered as of its own
    ``updated`` first: the same note is left as it is."""
    if old is None:
        return _decide(path, doc.title, old, render(today), writes)
    fm = parse_frontmatter(old)[0]
    if not generated_intact(old, fm.get(HASH_KEY)):
        return PlannedNote(path, doc.title, len(old), "kept-edited")
    same = fm.get("content_hash") == markdown_hash(doc.markdown)  # a part was deleted
    new = old if same and render(_updated(old, today)) == old else render(today)
    if new == old:
        return PlannedNote(path, doc.title, len(old), "unchanged")
    writes[path] = new
    return PlannedNote(path, doc.title, len(new), "update")


def _decide(path: str, title: str, old: str | None, new: str,
            writes: dict[str, str]) -> PlannedNote:
    if old is None:
        writes[path] = new
        return PlannedNote(path, title, len(new), "create")
    if edited_by_hand(old, parse_frontmatter(old)[0].get(HASH_KEY)):
        return PlannedNote(path, title, len(old), "kept-edited")
    if old == new:
        return PlannedNote(path, title, len(new), "unchanged")
    writes[path] = new
    return PlannedNote(path, title, len(new), "update")
