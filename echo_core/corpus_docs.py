"""``CorpusDocs``: the recall corpus as documents read on demand, in parts.

A rebuild hands a ranker the whole corpus. As a plain iterator it can only be read in
one process, one note after another; as ``CorpusDocs`` it can be cut (``split``) and
each part read, parsed and tokenized on its own core: a forked child reads its part
from the files itself, so nothing but the tokens comes back. The listing is taken once,
when the object is made; every note is read when its part is iterated.

Notes that cannot be read or parsed are skipped and remembered by path: every part of
one corpus shares that record (``skipped``), and a part read in another process hands
its skipped paths back with ``note_skipped`` (idempotent: a path is recorded once, so a
part iterated here and reported again is not counted twice).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from echo_core.corpus import corpus_paths, index_doc
from echo_core.notes import parse_note
from echo_core.protocols import IndexDoc, Storage

__all__ = ["READ_BATCH", "CorpusDocs", "iter_corpus"]

#: Called with each skipped note's path and error, in the process that met it.
OnError = Callable[[str, Exception], None]

#: Paths read per ``read_many`` call.
READ_BATCH = 256


class CorpusDocs:
    """The ``IndexDoc`` of every corpus note of ``storage`` (``SplittableDocs``)."""

    def __init__(self, storage: Storage, paths: Sequence[str] | None = None, *,
                 on_error: OnError | None = None,
                 skipped: dict[str, str] | None = None) -> None:
        self.storage = storage
        self.paths: Sequence[str] = corpus_paths(storage) if paths is None else paths
        self.on_error = on_error
        self._skipped: dict[str, str] = {} if skipped is None else skipped

    def __len__(self) -> int:
        """How many notes this part lists (an upper bound on the documents it yields)."""
        return len(self.paths)

    def __iter__(self) -> Iterator[IndexDoc]:
        """Read, parse and yield the documents, in path order, skipping (and recording)
        any note that cannot be read or parsed."""
        paths = self.paths
        for start in range(0, len(paths), READ_BATCH):
            chunk = paths[start:start + READ_BATCH]
            for path, text in self._read(chunk).items():
                if text is None:
                    continue
                try:
                    doc = index_doc(parse_note(path, text))
                except Exception as exc:  # noqa: BLE001 - one bad note never stops a rebuild
                    self._skip(path, exc)
                    continue
                if doc is not None:
                    yield doc

    def split(self, at: int) -> tuple[CorpusDocs, CorpusDocs]:
        """The first ``at`` paths and the rest, as two parts sharing the skipped record."""
        head, rest = self.paths[:at], self.paths[at:]
        return (CorpusDocs(self.storage, head, on_error=self.on_error, skipped=self._skipped),
                CorpusDocs(self.storage, rest, on_error=self.on_error, skipped=self._skipped))

    def skipped(self) -> list[str]:
        """The paths skipped so far by this corpus and its parts (recorded here)."""
        return list(self._skipped)

    def skip_reasons(self) -> dict[str, str]:
        """Skipped path -> why (the error's text)."""
        return dict(self._skipped)

    def note_skipped(self, paths: Sequence[str]) -> None:
        """Record ``paths`` as skipped by a part read elsewhere (once each)."""
        for path in paths:
            self._skipped.setdefault(path, "skipped while read in another process")

    def _read(self, chunk: Sequence[str]) -> dict[str, str | None]:
        try:
            return self.storage.read_many(chunk)
        except Exception:  # noqa: BLE001 - e.g. one non-UTF-8 file: read one by one
            texts: dict[str, str | None] = {}
            for path in chunk:
                try:
                    texts[path] = self.storage.read(path)
                except Exception as exc:  # noqa: BLE001 - recorded, the rest go on
                    self._skip(path, exc)
            return texts

    def _skip(self, path: str, exc: Exception) -> None:
        self._skipped.setdefault(path, f"{type(exc).__name__}: {exc}")
        if self.on_error is not None:
            self.on_error(path, exc)


def iter_corpus(storage: Storage, on_error: OnError | None = None) -> Iterator[IndexDoc]:
    """Read the corpus in batches and yield its documents (``CorpusDocs``, in one go)."""
    return iter(CorpusDocs(storage, on_error=on_error))
