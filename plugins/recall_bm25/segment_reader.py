"""Reading a base segment: memory-mapped arrays, validated cheaply on open.

Opening maps 13 ``.npy`` files (16 with champion lists) and parses ``meta.json``;
nothing is read eagerly, so the cost does not grow with the vault (no unpickling, no
dictionary to load). Lookups touch only the pages they need: a term is a binary search
over ``term_key``; a path a binary search over ``path_key`` confirmed against the stored
path. The lookups a write needs (``find``, ``path``, ``doc_length``, ``doc_term_ids``,
``df``) read typed ``memoryview``s of the mapped files and never import numpy
(``npy_map``); ``arrays`` wraps the same bytes as numpy arrays on first use, for search
and merges. ``champions`` gives the optional champion lists (``champion_view``), None
for a segment written without them.
"""

from __future__ import annotations

import bisect
import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plugins.recall_bm25.champion_view import ChampionView
from plugins.recall_bm25.keys import path_key
from plugins.recall_bm25.layout import CorruptIndex
from plugins.recall_bm25.npy_map import MappedArrays
from plugins.recall_bm25.scalar_math import SCORING_MODEL
from plugins.recall_bm25.segment_format import (
    ARRAYS,
    CHAMPION_ARRAYS,
    CHAMPION_META,
    CHAMPION_MODEL_KEY,
    SCHEMA,
    SegmentArrays,
    champion_length,
    expected_length,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["HANDED_OUT_MAX", "BaseSegment"]

#: Paths ``BaseSegment.path`` remembers for ``find`` before it forgets them all.
HANDED_OUT_MAX = 1 << 14


class BaseSegment:
    """One immutable base generation (or the implicit empty one, ``generation == 0``).

    Attributes: ``generation``, ``arrays`` (``SegmentArrays``), ``n_docs``, ``total_len``,
    ``tokenizer``, ``derived`` (data searches compute from the immutable arrays and keep
    for the segment's life, e.g. ``pruning.BlockBounds``). Doc ids are ``0..n_docs-1``.
    """

    def __init__(self, generation: int, arrays: SegmentArrays | MappedArrays, total_len: int,
                 tokenizer: str, n_docs: int | None = None,
                 champions: tuple[int, int] | None = None) -> None:
        self.generation = generation
        self._champion_meta = champions  # (day, count) when the champ_* arrays are mapped
        self._mapped = arrays if isinstance(arrays, MappedArrays) else None
        self._arrays = arrays if isinstance(arrays, SegmentArrays) else None
        self._views: dict[str, memoryview] = {}
        self.n_docs = n_docs if n_docs is not None else len(self._view("doc_len"))
        self.total_len = total_len
        self.tokenizer = tokenizer
        self.derived: dict[str, Any] = {}
        #: path -> doc id of the paths ``path`` handed out (a search's results), so the
        #: ``find`` that follows a search (recall's key-field boost) skips its binary
        #: search, and doc id -> path, so the same hits are not decoded again; exact
        #: because the segment never changes. Bounded: both cleared when full.
        self._handed_out: dict[str, int] = {}
        self._path_of: dict[int, str] = {}

    @property
    def arrays(self) -> SegmentArrays:
        """Every array as numpy (over the mapped files: no copy; imports numpy)."""
        if self._arrays is None:
            assert self._mapped is not None
            mapped = self._mapped
            self._arrays = SegmentArrays(**{name: mapped.to_numpy(name) for name in ARRAYS})
        return self._arrays

    def _view(self, name: str) -> memoryview:
        """One array as a typed ``memoryview`` (no numpy needed)."""
        found = self._views.get(name)
        if found is None:
            if self._mapped is not None:
                found = self._mapped.view(name)
            else:
                assert self._arrays is not None
                found = memoryview(getattr(self._arrays, name))
            self._views[name] = found
        return found

    @classmethod
    def empty(cls) -> BaseSegment:
        """The base of an index never built: no documents."""
        return cls(0, SegmentArrays.empty(), 0, "")

    @classmethod
    def open(cls, folder: Path, generation: int) -> BaseSegment:
        """Map the segment in ``folder``. Raises ``CorruptIndex`` when ``meta.json`` is
        missing or malformed, the schema differs, or an array is missing or mis-sized;
        ``FileNotFoundError`` when the folder itself is gone."""
        try:
            raw = (folder / "meta.json").read_text("utf-8")
        except FileNotFoundError:
            if not folder.is_dir():
                raise
            raise CorruptIndex(f"{folder.name} has no meta.json (incomplete)") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise CorruptIndex(f"cannot read {folder.name}/meta.json: {exc}") from exc
        try:
            meta = json.loads(raw)
            schema = meta["schema"]
            sizes = [int(meta[k]) for k in ("n_docs", "n_terms", "n_postings", "n_path_bytes",
                                            "n_key_terms")]
            total_len, tokenizer = int(meta["total_len"]), str(meta["tokenizer"])
            champ = [int(meta[k]) for k in CHAMPION_META] \
                if meta.get(CHAMPION_MODEL_KEY) == SCORING_MODEL else None
        except (ValueError, KeyError, TypeError) as exc:
            raise CorruptIndex(f"{folder.name}/meta.json is malformed: {exc!r}") from exc
        if schema != SCHEMA:
            raise CorruptIndex(f"{folder.name} has schema {schema!r}, this code reads {SCHEMA}")
        expected = {name: (descr, expected_length(rule, *sizes))
                    for name, (descr, rule) in ARRAYS.items()}
        if champ is not None:  # absent (older segment) or of another model: unused
            _day, count, listed = champ
            expected.update({name: (descr, champion_length(rule, listed, count))
                             for name, (descr, rule) in CHAMPION_ARRAYS.items()})
        mapped = MappedArrays(folder, expected)
        segment = cls(generation, mapped, total_len, tokenizer, n_docs=sizes[0],
                      champions=None if champ is None else (champ[0], champ[1]))
        if segment._view("term_ptr")[-1] != sizes[2] or segment._view("fwd_ptr")[-1] != sizes[2] \
                or segment._view("path_ptr")[-1] != sizes[3] \
                or segment._view("key_ptr")[-1] != sizes[4]:
            raise CorruptIndex(f"{folder.name}: offsets do not end at the array sizes")
        return segment

    def champions(self) -> ChampionView | None:
        """The champion lists, without numpy; None when the segment has none (written
        before they existed, under other scoring constants, or the empty base)."""
        if self._champion_meta is None:
            return None
        day, count = self._champion_meta
        return ChampionView(day, count, *(self._view(name) for name in CHAMPION_ARRAYS))

    def term_ids(self, keys: Sequence[int]) -> npt.NDArray[np.int64]:
        """The term id of each key, or -1 where the dictionary lacks it."""
        import numpy as np

        table = self.arrays.term_key
        wanted = np.asarray(keys, dtype=np.int64)
        if table.shape[0] == 0 or wanted.size == 0:
            return np.full(wanted.shape, -1, dtype=np.int64)
        pos = np.searchsorted(table, wanted)
        clipped = np.minimum(pos, table.shape[0] - 1)
        return np.where(table[clipped] == wanted, clipped, -1).astype(np.int64)

    def postings(self, term_id: int) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint16]]:
        """(doc ids, term frequencies) of one term id (views into the mapped arrays)."""
        start, end = self.arrays.term_ptr[term_id : term_id + 2]
        return self.arrays.post_doc[start:end], self.arrays.post_tf[start:end]

    def df(self, term_id: int) -> int:
        """Document frequency of a term id in this segment."""
        ptr = self._view("term_ptr")
        return int(ptr[term_id + 1] - ptr[term_id])

    def doc_terms(self, doc: int) -> npt.NDArray[np.uint32]:
        """The term ids of one document (the forward index), as numpy."""
        start, end = self.arrays.fwd_ptr[doc : doc + 2]
        return self.arrays.fwd_term[start:end]

    def doc_term_ids(self, doc: int) -> list[int]:
        """The term ids of one document (the forward index), without numpy."""
        ptr = self._view("fwd_ptr")
        return self._view("fwd_term")[ptr[doc]:ptr[doc + 1]].tolist()

    def term_keys(self) -> memoryview:
        """The sorted term keys (the dictionary), without numpy."""
        return self._view("term_key")

    def posting_lists(self, term_id: int) -> tuple[memoryview, memoryview]:
        """(doc ids, term frequencies) of one term id, without numpy."""
        ptr = self._view("term_ptr")
        start, end = ptr[term_id], ptr[term_id + 1]
        return self._view("post_doc")[start:end], self._view("post_tf")[start:end]

    def doc_lengths(self) -> memoryview:
        """Every document's BM25 length, without numpy."""
        return self._view("doc_len")

    def doc_weights(self) -> memoryview:
        """Every document's static prior (``IndexDoc.weight``), without numpy."""
        return self._view("doc_weight")

    def doc_days(self) -> memoryview:
        """Every document's ``updated`` day ordinal (0: unknown), without numpy."""
        return self._view("doc_updated")

    def doc_length(self, doc: int) -> int:
        """The BM25 length (tokens) of one document."""
        return int(self._view("doc_len")[doc])

    def path(self, doc: int) -> str:
        """The vault path of one document (remembered, and remembered for ``find``)."""
        found = self._path_of.get(doc)
        if found is None:
            found = self._path_at(doc)
            if len(self._handed_out) >= HANDED_OUT_MAX:
                self._handed_out.clear()
                self._path_of.clear()
            self._handed_out[found] = doc
            self._path_of[doc] = found
        return found

    def _path_at(self, doc: int) -> str:
        ptr = self._view("path_ptr")
        return str(self._view("path_blob")[ptr[doc]:ptr[doc + 1]], "utf-8", "surrogatepass")

    def find(self, path: str) -> int | None:
        """The doc id holding ``path``, or None (a binary search of the mapped keys, or
        none for a path ``path`` returned)."""
        known = self._handed_out.get(path)
        if known is not None:
            return known
        table = self._view("path_key")
        key = path_key(path)
        pos = bisect.bisect_left(table, key)
        docs = self._view("path_doc")
        while pos < len(table) and table[pos] == key:
            doc = int(docs[pos])
            if self._path_at(doc) == path:
                return doc
            pos += 1
        return None

    def key_hashes(self, doc: int) -> memoryview:
        """The term keys of one document's key fields (title and aliases), without
        numpy."""
        ptr, hashes = self.key_table()
        return hashes[ptr[doc]:ptr[doc + 1]]

    def key_table(self) -> tuple[memoryview, memoryview]:
        """``(ptr, hashes)``: doc ``d``'s key-field term keys are ``hashes[ptr[d]:ptr[d +
        1]]`` (``key_hashes`` for many docs without a call per doc)."""
        return self._view("key_ptr"), self._view("key_hash")

    def all_paths(self) -> list[str]:
        """Every path, in doc id order (decodes the whole blob)."""
        text = bytes(self._view("path_blob")).decode("utf-8", "surrogatepass")
        ptr = self._view("path_ptr").tolist()
        if text.isascii():
            return [text[a:b] for a, b in itertools.pairwise(ptr)]
        return [self._path_at(d) for d in range(self.n_docs)]
