"""``Vault`` = a storage backend + the routing manifest + the note events.

Every note write in the core goes through a ``Vault`` so that ``on_note_written`` /
``on_note_deleted`` fire exactly once per changed note (never for a no-op), and so that
``keep_prior`` (note history, SPEC §5.6) sees every text about to be replaced or deleted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from echo_core.thread_changes import count_change
from echo_core.edit_retry import planned_again_if_edited
from echo_core.errors import EchoError, EditedMeanwhile, ExitCode
from echo_core.frontmatter import set_frontmatter_key
from echo_core.models import Note
from echo_core.notes import parse_note
from echo_core.paths import normalize_path
from echo_core.protocols import ConditionalWrite, Storage, offers
from echo_core.routing import RoutingManifest

MARKER_PATH = "_agent/echo-vault.md"
ENTITY_INDEX_PATH = "_agent/index/entities.json"
INBOX_PATH = "inbox/captures/inbox.md"


class NoteReader(Protocol):
    """What note helpers read through: ``read`` and ``exists`` of a storage."""

    def read(self, path: str) -> str: ...

    def exists(self, path: str) -> bool: ...


class NoteWriter(Protocol):
    """What note helpers write through: a ``Vault``, or an operation's staged view of
    one (``echo_core.ops.write_intent.StagedVault``)."""

    @property
    def storage(self) -> NoteReader: ...

    def write_note(self, path: str, text: str, *, prior: str | None = None,
                   keep_history: bool = True) -> object: ...

    def update_note(self, path: str, text: str, prior: str | None, *,
                    keep_history: bool = True) -> object: ...


def _ignore_written(note: Note) -> None:
    return None


def _ignore_path(path: str) -> None:
    return None


class Vault:
    """Note-level access to one vault.

    ``on_written(note)`` / ``on_deleted(path)`` are called after each durable change;
    the context wires them to the event hooks. ``on_writing(path)`` is called just before
    each write, append or delete (the context notes the folder's stamp then:
    ``echo_core.own_writes``).

    ``keep_prior(path, text)``, when given, is called *before* ``write_note`` replaces an
    existing note whose text differs from the new one, and before ``delete_note``, with
    the text about to go (the context wires it to the note history). It costs one extra
    read per write (none when the caller passes ``prior``); a note that is absent or not
    UTF-8 has nothing to keep. An exception from it aborts the write.
    """

    def __init__(
        self,
        storage: Storage,
        manifest: RoutingManifest,
        *,
        on_written: Callable[[Note], None] = _ignore_written,
        on_deleted: Callable[[str], None] = _ignore_path,
        keep_prior: Callable[[str, str], None] | None = None,
        on_writing: Callable[[str], None] = _ignore_path,
    ) -> None:
        self.storage = storage
        self.manifest = manifest
        self._on_written = on_written
        self._on_deleted = on_deleted
        self._on_writing = on_writing
        self._keep_prior = keep_prior

    def read_note(self, path: str) -> Note:
        """The parsed note at ``path`` (code 44 when absent, 2 for a bad path)."""
        clean = normalize_path(path)
        return parse_note(clean, self.storage.read(clean))

    def _current_text(self, path: str) -> str | None:
        """The note's text, None when absent or not UTF-8 (``BackendUnavailable`` raises)."""
        try:
            return self.storage.read(path)
        except EchoError as exc:
            if exc.code in (ExitCode.NOT_FOUND, ExitCode.FAILURE):
                return None
            raise

    def write_note(self, path: str, text: str, *, prior: str | None = None,
                   keep_history: bool = True) -> Note:
        """Atomically write the whole note and fire ``on_written``, whatever the note
        holds now: a write planned from the note's text goes through ``update_note``
        instead, so a person's save made since the read is not replaced.

        ``prior``: the note's current text when the caller has just read it (under the
        vault lock); it saves the read ``keep_prior`` needs. None: read it here.
        ``keep_history=False`` is for pure insertions of system lines (the agent log), which
        lose nothing and would otherwise flood the history ring."""
        clean = normalize_path(path)
        if self._keep_prior is not None and keep_history:
            before = prior if prior is not None else self._current_text(clean)
            if before is not None and before != text:
                self._keep_prior(clean, before)
        self._on_writing(clean)
        self.storage.write(clean, text)
        count_change()
        note = parse_note(clean, text)
        self._on_written(note)
        return note

    def text_or_none(self, path: str) -> str | None:
        """The note's exact text now, None when it is absent (any other failure raises:
        a file that is not UTF-8 is not "absent")."""
        try:
            return self.storage.read(normalize_path(path))
        except EchoError as exc:
            if exc.code != ExitCode.NOT_FOUND:
                raise
            return None

    def replace_note(self, path: str, text: str, prior: str | None) -> bool:
        """Write ``text`` only while the note still holds ``prior`` (None: still absent)
        and fire ``on_written``; False, nothing written, when it changed meanwhile (a
        person's edit takes no lock). Checked as late as the storage allows: just before
        its rename (``ConditionalWrite``), else just before the write. Keeps no history:
        the caller kept ``prior`` already."""
        return self._replaced(normalize_path(path), text, prior) is not None

    def update_note(self, path: str, text: str, prior: str | None, *,
                    keep_history: bool = True) -> Note:
        """Replace the note the caller read as ``prior`` (None: it was absent) with
        ``text``: ``prior`` goes to ``keep_prior`` first (the history; not with
        ``keep_history=False``, as ``write_note``), then the note is written only while
        it still holds ``prior`` (``replace_note``). Raises ``EditedMeanwhile``, nothing
        written, when a person saved it in between; the caller reads and plans again
        (``echo_core.edit_retry``)."""
        clean = normalize_path(path)
        if (self._keep_prior is not None and keep_history and prior is not None
                and prior != text):
            self._keep_prior(clean, prior)
        note = self._replaced(clean, text, prior)
        if note is None:
            raise EditedMeanwhile(clean)
        return note

    def _replaced(self, clean: str, text: str, prior: str | None) -> Note | None:
        """``replace_note`` of a normalised path: the note written, None when not."""
        self._on_writing(clean)
        if offers(self.storage, ConditionalWrite):
            storage: ConditionalWrite = self.storage  # type: ignore[assignment]
            if not storage.write_unless_changed(clean, text, prior):
                return None
        else:
            if self.text_or_none(clean) != prior:
                return None
            self.storage.write(clean, text)
        count_change()
        note = parse_note(clean, text)
        self._on_written(note)
        return note

    def create_if_absent(self, path: str, text: str) -> bool:
        """Write ``text`` only when nothing is at ``path`` yet, checked as late as the
        storage allows (``replace_note``: a note a person saves there meanwhile is kept).
        True when created."""
        clean = normalize_path(path)
        if self.storage.exists(clean):
            return False
        return self.replace_note(clean, text, None)

    def append_line(self, path: str, line: str) -> bool:
        """Idempotently append one line; fires ``on_written`` only when appended."""
        clean = normalize_path(path)
        self._on_writing(clean)
        changed = self.storage.append_line(clean, line)
        if changed:
            count_change()
            self._on_written(parse_note(clean, self.storage.read(clean)))
        return changed

    def set_frontmatter(self, path: str, key: str, value: Any) -> bool:
        """Surgically set one frontmatter key. True when the file changed. Written only
        while the note holds the text the key was set in (``update_note``): read and set
        again when a person saved it meanwhile (``edit_retry``)."""
        clean = normalize_path(path)

        def set_key() -> bool:
            before = self.storage.read(clean)
            after = set_frontmatter_key(before, key, value)
            if after == before:
                return False
            self.update_note(clean, after, before)
            return True

        return planned_again_if_edited(set_key)

    def delete_note(self, path: str) -> None:
        """Delete the note (its text goes to ``keep_prior`` first) and fire ``on_deleted``."""
        clean = normalize_path(path)
        if self._keep_prior is not None and (before := self._current_text(clean)) is not None:
            self._keep_prior(clean, before)
        self._on_writing(clean)
        self.storage.delete(clean)
        count_change()
        self._on_deleted(clean)

    def is_initialized(self) -> bool:
        """Whether the vault has the echo-memory marker."""
        return self.storage.exists(MARKER_PATH)
