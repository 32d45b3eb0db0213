"""``SegmentBuilder``: a base segment from a stream of documents (``rebuild``).

Per document: its term ids (``TermIds``: a word seen before costs one C-level lookup),
appended to a batch. Every ``BATCH_DOCS`` documents one numpy pass drops the ids of
dropped words, sorts packed (doc, term) keys and counts the batch's term frequencies —
cheaper than a ``Counter`` per document — and appends (term, doc, tf) postings, grouped
by doc, to ``array`` buffers (10 bytes per posting).

The documents of a builder form a part (``TokenizedDocs``): its vocabulary hashed and
sorted by term key, its postings renumbered by that order and sorted by term within
each doc. ``tokenized`` builds such a part on its own (a forked child does, for half of
a rebuild: only arrays come back, no term strings); ``finish`` merges the builder's own
part with those handed to ``add_tokenized`` — a merge of sorted key arrays, the ids of
each part mapped through it (monotonic, so each doc's terms stay ascending, as the
segment format wants) — and hands the postings to ``assemble``. The same documents give
the same segment however they were cut into parts.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

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

Array = npt.NDArray[Any]


@attrs.frozen(eq=False)
class TokenizedDocs:
    """Documents tokenized and counted (``tokenized``), compact enough to hand from a
    forked child to a builder (numpy arrays and the paths; no term strings).

    ``keys``: the ``term_key`` of each local term, ascending (a term's local id is its
    place here; ``repeats``: two terms share a key). Postings, doc after doc:
    ``terms`` (local ids, ascending within a doc), ``tfs``, and ``doc_terms`` (postings
    per doc). Per doc: ``lens`` (token count), ``weights``, ``updated`` (date ordinal),
    ``paths`` and their ``encode_paths`` form (``path_blob``, ``path_ptr``,
    ``path_keys``). ``skipped``: the paths the docs' source skipped (``SplittableDocs``)."""

    keys: Array  # int64
    repeats: bool
    terms: Array  # uint32
    tfs: Array  # uint16
    doc_terms: Array  # int64
    lens: Array  # uint32
    weights: Array  # float64
    updated: Array  # int32
    paths: list[str]
    path_blob: Array  # uint8
    path_ptr: Array  # int64
    path_keys: Array  # int64
    skipped: list[str] = attrs.Factory(list)


def tokenized(tokenizer: Tokenizer, docs: Iterable[IndexDoc]) -> TokenizedDocs:
    """``docs`` tokenized and counted as one part, with a vocabulary of its own (see
    ``SegmentBuilder.add_tokenized``)."""
    builder = SegmentBuilder(tokenizer)
    for doc in docs:
        builder.add(doc)
    skipped = docs.skipped() if isinstance(docs, SplittableDocs) else []
    return builder.own_part(skipped)


class SegmentBuilder:
    """Accumulates documents (``add``, then any parts built elsewhere with
    ``add_tokenized``) into a segment (``finish``, once).

    Memory: ~10 bytes per posting plus the vocabulary, and at ``finish`` about 24 bytes
    per posting more. A path added twice keeps its last version (docs added here come
    before the parts, which follow in the order given). Not thread-safe.
    """

    def __init__(self, tokenizer: Tokenizer) -> None:
        self._term_ids = TermIds(tokenizer)
        self._ids_of = self._term_ids.ids
        self._batch = array("I")  # term ids; 0 for a dropped word
        self._batch_lens: list[int] = []  # ids per doc of the batch, dropped words counted
        self._terms = array("I")  # postings: term id - 1, doc, tf
        self._docs = array("I")
        self._tfs = array("H")
        self._lens = array("I")
        self._weights = array("d")
        self._updated = array("i")
        self._paths: list[str] = []
        self._parts: list[TokenizedDocs] = []
        self._finished: int | None = None  # the distinct paths, once finished

    @property
    def count(self) -> int:
        """Distinct paths added so far."""
        if self._finished is not None:
            return self._finished
        return len(set(self._paths).union(*(part.paths for part in self._parts)))

    def add(self, doc: IndexDoc) -> None:
        """Tokenize ``doc.text`` and buffer its tokens and attributes."""
        if self._parts:
            raise ValueError("add() after add_tokenized(): the docs would lose their order")
        ids = self._ids_of(doc.text)
        self._batch.extend(ids)
        self._batch_lens.append(len(ids))
        self._paths.append(doc.path)
        self._lens.append(len(ids) - ids.count(0))
        self._weights.append(clean_weight(doc.weight))
        self._updated.append(date_ordinal(doc.updated))
        if len(self._batch_lens) >= BATCH_DOCS:
            self._flush()

    def add_tokenized(self, tokens: TokenizedDocs) -> None:
        """Add the docs ``tokenized`` found (elsewhere), after every doc added so far."""
        self._parts.append(tokens)

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

    def own_part(self, skipped: Sequence[str] = ()) -> TokenizedDocs:
        """The docs added here as a part (``TokenizedDocs``); the builder is then spent."""
        self._flush()
        vocab = self._term_ids.vocab
        local_keys = np.fromiter(map(term_key, vocab), dtype=np.int64, count=len(vocab))
        self._term_ids.clear()
        order = np.argsort(local_keys, kind="stable")
        keys = local_keys[order]
        rank = np.empty(order.shape[0], dtype=np.uint64)
        rank[order] = np.arange(order.shape[0], dtype=np.uint64)
        n_docs = len(self._paths)
        doc_bits(keys.shape[0], n_docs)  # raises when doc and term ids cannot be packed
        t_bits = max(1, (keys.shape[0] - 1).bit_length())
        # one in-place sort of doc | term | tf orders each doc's postings by term
        packed = rank[np.frombuffer(self._terms, dtype=np.uint32)] << np.uint64(16)
        packed |= np.frombuffer(self._docs, dtype=np.uint32).astype(np.uint64) \
            << np.uint64(t_bits + 16)
        packed |= np.frombuffer(self._tfs, dtype=np.uint16)
        self._terms, self._docs, self._tfs = array("I"), array("I"), array("H")
        del rank
        packed.sort()
        terms = ((packed >> np.uint64(16)) & np.uint64((1 << t_bits) - 1)).astype(np.uint32)
        tfs = (packed & np.uint64(0xFFFF)).astype(np.uint16)
        doc_terms = np.bincount((packed >> np.uint64(t_bits + 16)).astype(np.int64),
                                minlength=n_docs)
        del packed
        blob, ptr, path_keys = encode_paths(self._paths)
        return TokenizedDocs(
            keys=keys, repeats=bool((keys[1:] == keys[:-1]).any()), terms=terms, tfs=tfs,
            doc_terms=doc_terms, lens=np.frombuffer(self._lens, dtype=np.uint32).copy(),
            weights=np.frombuffer(self._weights, dtype=np.float64).copy(),
            updated=np.frombuffer(self._updated, dtype=np.int32).copy(),
            paths=self._paths, path_blob=blob, path_ptr=ptr, path_keys=path_keys,
            skipped=list(skipped))

    def finish(self) -> SegmentArrays:
        """The segment of every document added (last version of each path)."""
        parts = [self.own_part(), *self._parts]
        self._parts = []
        all_keys = np.concatenate([part.keys for part in parts])
        order = np.argsort(all_keys, kind="stable")
        sorted_keys = all_keys[order]
        fresh = np.ones(order.shape[0], dtype=np.bool_)
        fresh[1:] = sorted_keys[1:] != sorted_keys[:-1]  # False: the same term, or a collision
        rank = np.empty(order.shape[0], dtype=np.uint32)
        rank[order] = np.cumsum(fresh) - 1
        del order, all_keys
        mapped, start = [], 0
        for part in parts:  # each part's ids in ascending key order: mapped monotonically
            mapped.append(rank[start:start + part.keys.shape[0]][part.terms])
            start += part.keys.shape[0]
        terms = _joined(mapped, np.uint32)
        tfs = _joined([part.tfs for part in parts], np.uint16)
        doc_terms = _joined([part.doc_terms for part in parts], np.int64)
        docs = np.repeat(np.arange(doc_terms.shape[0], dtype=np.uint32), doc_terms)
        columns, keep = _columns(parts)
        self._finished = len(columns.doc_len)
        if keep is not None:
            live = keep[docs]
            terms, tfs = terms[live], tfs[live]
            docs = (np.cumsum(keep) - 1)[docs[live]].astype(np.uint32)
        keys = sorted_keys[fresh]
        packed = [pack_postings(terms, docs, tfs, doc_bits(keys.shape[0], len(columns.doc_len)))]
        del docs, tfs
        return assemble(keys, packed, columns, fwd_term=terms,
                        may_repeat=any(part.repeats for part in parts))


def _joined(arrays: Sequence[Array], dtype: type[np.generic]) -> Array:
    """The arrays one after another, as ``dtype`` (no copy for a single one)."""
    if len(arrays) == 1:
        return np.asarray(arrays[0], dtype=dtype)
    return np.concatenate(arrays).astype(dtype, copy=False)


def _columns(parts: Sequence[TokenizedDocs]) -> tuple[DocColumns, Array | None]:
    """Per-doc columns of the parts one after another, without superseded duplicates,
    and the keep mask (None when every doc is kept)."""
    paths = [path for part in parts for path in part.paths]
    last = {path: i for i, path in enumerate(paths)}  # a later version wins
    lens = _joined([part.lens for part in parts], np.uint32)
    weights = _joined([part.weights for part in parts], np.float64)
    updated = _joined([part.updated for part in parts], np.int32)
    if len(last) < len(paths):
        keep = np.zeros(len(paths), dtype=np.bool_)
        keep[np.fromiter(last.values(), dtype=np.int64, count=len(last))] = True
        kept = [p for p, k in zip(paths, keep.tolist(), strict=True) if k]
        blob, ptr, path_keys = encode_paths(kept)
        return DocColumns(lens[keep], weights[keep], updated[keep], blob, ptr, path_keys), keep
    offsets = np.cumsum([0] + [int(part.path_ptr[-1]) for part in parts[:-1]])
    ptr = np.concatenate([parts[0].path_ptr[:1]] + [
        part.path_ptr[1:] + offset for part, offset in zip(parts, offsets, strict=True)])
    return DocColumns(lens, weights, updated,
                      _joined([part.path_blob for part in parts], np.uint8), ptr,
                      _joined([part.path_keys for part in parts], np.int64)), None
