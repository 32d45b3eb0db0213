"""Keeping the prior texts of one batch of sweep rewrites in the note history at once.

``Vault.update_note`` keeps each text it replaces as it writes (``NoteHistory.keep``):
a few small reads and writes of history files per note. Where the history lives in the
vault's own store (PostgreSQL, ``StorageHistoryFiles``) each of them is a round trip made
under the vault lock, together more than the note's own write. ``keep_priors`` keeps a
batch's prior texts through the same ``NoteHistory.keep``, over its files read in one
request before (``read_many_bytes``) and written in one transaction after
(``write_many``): the history ends as kept note by note, and a batch's versions land
all or none. Any other history (a local one, in the state dir) is kept note by note.
The caller holds the vault lock (history files are read, then rewritten).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from echo_core import digests
from echo_core.history import INDEX_NAME, PATHS_LOG, NoteHistory, path_key
from echo_core.history_files import StorageHistoryFiles
from echo_core.ops.sweep.plan import NoteWrite
from echo_core.ops.vault_transfer_io import ManyBytesReadable, ManyWritable
from echo_core.protocols import offers

if TYPE_CHECKING:
    from echo_core.context import EchoContext


class BatchHistoryFiles:
    """The ``HistoryFiles`` of a shared history for one batch: the files named at the
    start read in one request, every write and append held here until ``flush`` (one
    ``write_many``). A file not read at the start is read when asked; a delete goes to
    the store at once (a ring full: rare). ``names`` and ``folders`` ask the store
    (``keep`` needs neither)."""

    def __init__(self, inner: StorageHistoryFiles, prefetch: Iterable[str]) -> None:
        self.inner = inner
        self._known: dict[str, bytes | None] = {}
        self._pending: dict[str, bytes] = {}
        wanted = sorted(set(prefetch))
        if wanted and offers(inner.storage, ManyBytesReadable):
            reader: ManyBytesReadable = inner.storage  # type: ignore[assignment]
            got = reader.read_many_bytes([self._path(rel) for rel in wanted])
            for rel in wanted:
                data = got.get(self._path(rel))
                self._known[rel] = None if data is None or not _utf8(data) else data

    def _path(self, rel: str) -> str:
        return f"{self.inner.prefix}/{rel}"

    def read(self, rel: str) -> bytes | None:
        if rel not in self._known:
            self._known[rel] = self.inner.read(rel)
        return self._known[rel]

    def write(self, rel: str, data: bytes) -> None:
        self._known[rel] = self._pending[rel] = bytes(data)

    def append(self, rel: str, text: str) -> None:
        self.write(rel, (self.read(rel) or b"") + text.encode("utf-8"))

    def delete(self, rel: str) -> None:
        self._pending.pop(rel, None)
        self._known[rel] = None
        self.inner.delete(rel)

    def names(self, folder: str) -> list[str]:
        return self.inner.names(folder)

    def folders(self) -> list[str]:
        return self.inner.folders()

    def where(self, rel: str) -> str:
        return self.inner.where(rel)

    def flush(self) -> None:
        """Write every file written or appended to since the start, in one transaction."""
        if self._pending:
            writer: ManyWritable = self.inner.storage  # type: ignore[assignment]
            writer.write_many({self._path(rel): data for rel, data in self._pending.items()})
            self._pending.clear()


def _utf8(data: bytes) -> bool:
    """Whether ``data`` decodes (``StorageHistoryFiles.read`` gives None for what does not)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _read_by_keep(writes: Sequence[NoteWrite]) -> list[str]:
    """The history files ``NoteHistory.keep`` reads for ``writes``: the paths' list, each
    ring's log and the blob of each prior text."""
    wanted = [PATHS_LOG]
    for write in writes:
        key = path_key(write.path)
        sha = digests.sha256(write.prior.encode("utf-8")).hexdigest()
        wanted += [f"{key}/{INDEX_NAME}", f"{key}/{sha}"]
    return wanted


def keep_priors(ctx: EchoContext, writes: Sequence[NoteWrite]) -> None:
    """Keep the text each of ``writes`` replaces in the note history, as
    ``Vault.update_note`` would before writing it (module docstring). Errors as
    ``EchoContext.keep_prior_text``: nothing of the batch should be written then."""
    kept = [w for w in writes if w.prior != w.text]
    history = ctx.history
    files = history.files
    if not kept:
        return
    if not (isinstance(files, StorageHistoryFiles) and offers(files.storage, ManyWritable)):
        for write in kept:
            ctx.keep_prior_text(write.path, write.prior)
        return
    batch = BatchHistoryFiles(files, _read_by_keep(kept))
    batched = NoteHistory(batch, ring_size=history.ring_size)
    for write in kept:
        batched.keep(write.path, write.prior, saved_at=ctx.now().isoformat(timespec="seconds"))
    batch.flush()
