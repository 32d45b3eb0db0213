"""``SegmentBuilder``: a base segment from a stream of documents (``rebuild``).

Per document: its term ids (``TermIds``: a word seen before costs one C-level lookup),
appended to a batch. Every ``BATCH_DOCS`` documents one numpy pass drops the ids of
dropped words, sorts packed (doc, term) keys and counts the batch's term frequencies —
cheaper than a ``Counter`` per document — and appends (term, doc, tf) postings, grouped
by doc, to ``array`` buffers (10 bytes per posting). ``finish`` hashes the vocabulary,
sorts it into the term dictionary and hands the postings to ``assemble``.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable

import attrs
import numpy as np

from echo_core import IndexDoc, SplittableDocs, Tokenizer
from plugins.recall_bm25.keys import clean_weight, date_ordinal, term_key
from plugins.recall_bm25.segment_format import TF_MAX, SegmentArrays
from plugins.recall_bm25.segment_writer import (
    DocColumns,
    assemble,
    doc_bits,
    encode_paths,
    pack_postings,
)
from plugins.recall_bm25.term_ids import TermIds

__all__ = ["BATCH_DOCS", "SegmentBuilder", "TokenizedDocs", "tokenized"]

#: Documents tokenized between two numpy counting passes.
BATCH_DOCS = 1024


@attrs.frozen
class TokenizedDocs:
    """``tokenized``'s answer, compact enough to hand from a forked child to the builder:
    the terms in the order of their ids (id 1 first), every doc's term ids (uint32 bytes,
    doc after doc, dropped words left out), and per doc its token count, path, weight and
    date ordinal; ``skipped``: the paths the docs' source skipped (``SplittableDocs``)."""

    terms: list[str]
    ids: bytes
    lens: list[int]
    paths: list[str]
    weights: bytes  # float64
    updated: bytes  # int32
    skipped: list[str] = attrs.Factory(list)


def tokenized(tokenizer: Tokenizer, docs: Iterable[IndexDoc]) -> TokenizedDocs:
    """The tokens and attributes of ``docs``, with a vocabulary of their own (see
    ``SegmentBuilder.add_tokenized``)."""
    term_ids = TermIds(tokenizer)
    ids_of = term_ids.ids
    ids = array("I")
    lens: list[int] = []
    paths: list[str] = []
    weights = array("d")
    updated = array("i")
    for doc in docs:
        found = ids_of(doc.text)
        ids.extend(found)
        lens.append(len(found) - found.count(0))
        paths.append(doc.path)
        weights.append(clean_weight(doc.weight))
        updated.append(date_ordinal(doc.updated))
    every = np.frombuffer(ids, dtype=np.uint32)
    skipped = docs.skipped() if isinstance(docs, SplittableDocs) else []
    return TokenizedDocs(term_ids.terms(), every[every != 0].tobytes(), lens, paths,
                         weights.tobytes(), updated.tobytes(), skipped)


class SegmentBuilder:
    """Accumulates documents (``add``) into a segment (``finish``, once), streaming.

    Memory: ~10 bytes per posting plus the vocabulary, and at ``finish`` about 14 bytes
    per posting more. A path added twice keeps its last version. Not thread-safe.
    """

    def __init__(self, tokenizer: Tokenizer) -> None:
        self._term_ids = TermIds(tokenizer)
        self._ids_of = self._term_ids.ids
        self._vocab = self._term_ids.vocab
        self._batch = array("I")  # term ids; 0 for a dropped word
        self._batch_lens: list[int] = []  # ids per doc of the batch, dropped words counted
        self._terms = array("I")  # postings: term id - 1, doc, tf
        self._docs = array("I")
        self._tfs = array("H")
        self._lens = array("I")
        self._weights = array("d")
        self._updated = array("i")
        self._paths: list[str] = []
        self._slot: dict[str, int] = {}
        self._dead: list[int] = []

    @property
    def count(self) -> int:
        """Distinct paths added so far."""
        return len(self._slot)

    def add(self, doc: IndexDoc) -> None:
        """Tokenize ``doc.text`` and buffer its tokens and attributes."""
        ids = self._ids_of(doc.text)
        self._batch.extend(ids)
        self._batch_lens.append(len(ids))
        self._record(doc.path, len(ids) - ids.count(0), clean_weight(doc.weight),
                     date_ordinal(doc.updated))

    def add_tokenized(self, tokens: TokenizedDocs) -> None:
        """``add`` each doc ``tokenized`` found (elsewhere: its vocabulary ids are mapped
        onto this builder's), in its order."""
        remap = np.zeros(len(tokens.terms) + 1, dtype=np.uint32)
        remap[1:] = np.fromiter(map(self._vocab.__getitem__, tokens.terms), dtype=np.uint32,
                                count=len(tokens.terms))
        ids = remap[np.frombuffer(tokens.ids, dtype=np.uint32)]
        weights = np.frombuffer(tokens.weights, dtype=np.float64).tolist()
        updated = np.frombuffer(tokens.updated, dtype=np.int32).tolist()
        start = 0
        for path, count, weight, day in zip(tokens.paths, tokens.lens, weights, updated,
                                            strict=True):
            self._batch.frombytes(ids[start:start + count].tobytes())
            self._batch_lens.append(count)
            start += count
            self._record(path, count, weight, day)

    def _record(self, path: str, count: int, weight: float, day: int) -> None:
        """Buffer the attributes of the doc at ``path`` (``count`` tokens, its ids
        already in the batch; ``weight`` cleaned, ``day`` a date ordinal)."""
        old = self._slot.get(path)
        if old is not None:
            self._dead.append(old)
        self._slot[path] = len(self._paths)
        self._paths.append(path)
        self._lens.append(count)
        self._weights.append(weight)
        self._updated.append(day)
        if len(self._batch_lens) >= BATCH_DOCS:
            self._flush()

    def _flush(self) -> None:
        """Count the batch's tokens per (doc, term) and append the postings."""
        lens = np.array(self._batch_lens, dtype=np.int64)
        self._batch_lens = []
        if not len(self._batch):
            return
        first_doc = len(self._paths) - lens.shape[0]
        ids = np.frombuffer(self._batch, dtype=np.uint32)
        self._batch = array("I")
        docs = np.repeat(np.arange(lens.shape[0], dtype=np.uint64), lens)
        kept = ids != 0
        if not kept.all():
            ids, docs = ids[kept], docs[kept]
        tokens = (ids - np.uint32(1)).astype(np.uint64) | (docs << np.uint64(32))
        tokens.sort()
        starts = np.flatnonzero(np.concatenate(([True], tokens[1:] != tokens[:-1])))
        tf = np.diff(np.append(starts, tokens.shape[0]))
        pairs = tokens[starts]
        self._terms.frombytes((pairs & np.uint64(0xFFFFFFFF)).astype(np.uint32).tobytes())
        self._docs.frombytes(((pairs >> np.uint64(32)).astype(np.int64) + first_doc)
                             .astype(np.uint32).tobytes())
        self._tfs.frombytes(np.minimum(tf, TF_MAX).astype(np.uint16).tobytes())

    def finish(self) -> SegmentArrays:
        """The segment of every document added (last version of each path)."""
        self._flush()
        local_keys = np.fromiter(map(term_key, self._vocab), dtype=np.int64,
                                 count=len(self._vocab))
        self._term_ids.clear()
        order = np.argsort(local_keys)
        sorted_keys = local_keys[order]
        fresh = np.ones(order.shape[0], dtype=np.bool_)
        fresh[1:] = sorted_keys[1:] != sorted_keys[:-1]  # False: a key collision
        rank = np.empty(order.shape[0], dtype=np.uint32)
        rank[order] = np.cumsum(fresh) - 1
        terms = rank[np.frombuffer(self._terms, dtype=np.uint32)]
        docs = np.frombuffer(self._docs, dtype=np.uint32)
        tfs = np.frombuffer(self._tfs, dtype=np.uint16)
        self._terms, self._docs, self._tfs = array("I"), array("I"), array("H")
        columns, keep = self._columns()
        if keep is not None:
            live = keep[docs]
            terms, tfs = terms[live], tfs[live]
            docs = (np.cumsum(keep) - 1)[docs[live]].astype(np.uint32)
        keys = sorted_keys[fresh]
        packed = [pack_postings(terms, docs, tfs, doc_bits(keys.shape[0], len(columns.doc_len)))]
        del docs, tfs
        return assemble(keys, packed, columns, fwd_term=terms, may_repeat=not fresh.all())

    def _columns(self) -> tuple[DocColumns, np.ndarray | None]:
        """Per-doc columns without superseded duplicates, and the keep mask (None when
        every doc is kept)."""
        lens = np.frombuffer(self._lens, dtype=np.uint32)
        weights = np.frombuffer(self._weights, dtype=np.float64)
        updated = np.frombuffer(self._updated, dtype=np.int32)
        paths = self._paths
        keep = None
        if self._dead:
            keep = np.ones(len(paths), dtype=np.bool_)
            keep[self._dead] = False
            lens, weights, updated = lens[keep], weights[keep], updated[keep]
            paths = [p for p, k in zip(paths, keep.tolist(), strict=True) if k]
        blob, ptr, path_keys = encode_paths(paths)
        return DocColumns(lens, weights, updated, blob, ptr, path_keys), keep
