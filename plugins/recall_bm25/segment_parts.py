"""Parts of a base segment (``TokenizedDocs``) and their merge into one (``merge_parts``).

A part is what one ``SegmentBuilder`` counted, in a form a forked child can hand back
cheaply (numpy arrays and the paths, no term strings): its vocabulary as sorted term
keys (a term's local id is its place there), its postings in both orders the segment
stores — by term then doc, and each doc's terms ascending (the forward index) — and its
per-doc columns.

``merge_parts`` merges the parts' sorted key arrays into the term dictionary: each
part's local ids map into it monotonically, so both orders survive the mapping. Docs
are numbered part after part. The postings of the parts are then interleaved term by
term with a few O(postings) numpy passes (no sort); only when a path occurs twice (the
later version wins) or two terms share a key is the merged whole handed to
``segment_writer.assemble``, whose sorts handle both. Either way the segment depends
only on the documents and their order, not on how they were cut into parts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from plugins.recall_bm25.segment_format import SegmentArrays
from plugins.recall_bm25.segment_writer import (
    DocColumns,
    assemble,
    doc_bits,
    encode_paths,
    key_offsets,
    pack_postings,
)

__all__ = ["TokenizedDocs", "merge_parts"]

Array = npt.NDArray[Any]


@attrs.frozen(eq=False)
class TokenizedDocs:
    """Documents tokenized and counted as one part (module docstring).

    ``keys``: the ``term_key`` of each local term, ascending (``repeats``: two of them
    are equal, a collision). Postings by term: ``term_counts`` (postings per local term),
    then ``post_docs`` (local doc numbers, ascending within a term) and ``post_tfs``.
    Forward index: ``doc_terms`` (postings per doc) and ``fwd_terms`` (local term ids,
    doc after doc, ascending within a doc). Per doc: ``lens`` (token count), ``weights``,
    ``updated`` (date ordinal), ``paths`` and their ``encode_paths`` form (``path_blob``,
    ``path_ptr``, ``path_keys``), and the term keys of its key fields (``key_counts``
    per doc, ``key_hashes`` doc after doc). ``skipped``: the paths the docs' source
    skipped (``SplittableDocs``)."""

    keys: Array  # int64
    repeats: bool
    term_counts: Array  # int64
    post_docs: Array  # uint32
    post_tfs: Array  # uint16
    doc_terms: Array  # int64
    fwd_terms: Array  # uint32
    lens: Array  # uint32
    weights: Array  # float64
    updated: Array  # int32
    paths: list[str]
    path_blob: Array  # uint8
    path_ptr: Array  # int64
    path_keys: Array  # int64
    key_counts: Array  # int64
    key_hashes: Array  # int64
    skipped: list[str] = attrs.Factory(list)


def merge_parts(parts: Sequence[TokenizedDocs]) -> SegmentArrays:
    """The segment of the parts' docs, part after part (a path given twice keeps its
    last version); raises ``ValueError`` when term and doc ids do not fit (``doc_bits``)."""
    keys, maps, repeats = _vocabulary(parts)
    columns, keep = _columns(parts)
    if keep is None and not repeats:
        segment = laid_out(parts, keys, maps, columns)
        if segment is not None:
            return segment
    return assembled(parts, keys, maps, columns, keep, repeats)


def _vocabulary(parts: Sequence[TokenizedDocs]) -> tuple[Array, list[Array], bool]:
    """The sorted distinct keys of every part, each part's local id -> index there,
    and whether two terms of one part share a key."""
    all_keys = np.concatenate([part.keys for part in parts])
    order = np.argsort(all_keys, kind="stable")
    sorted_keys = all_keys[order]
    fresh = np.ones(order.shape[0], dtype=np.bool_)
    fresh[1:] = sorted_keys[1:] != sorted_keys[:-1]  # False: the same term, or a collision
    index = np.empty(order.shape[0], dtype=np.uint32)
    index[order] = np.cumsum(fresh) - 1
    maps, start = [], 0
    for part in parts:
        maps.append(index[start:start + part.keys.shape[0]])
        start += part.keys.shape[0]
    return sorted_keys[fresh], maps, any(part.repeats for part in parts)


def laid_out(parts: Sequence[TokenizedDocs], keys: Array, maps: Sequence[Array],
             columns: DocColumns) -> SegmentArrays | None:
    """The segment, each part's postings moved to their place in the term-major order
    (no path repeated, no key shared); None when a term has no posting."""
    n_docs = int(columns.doc_len.shape[0])
    doc_bits(keys.shape[0], n_docs)  # the same bound as assemble's
    counts = np.zeros(keys.shape[0], dtype=np.int64)
    for part, ids in zip(parts, maps, strict=True):
        counts[ids] += part.term_counts  # ids distinct within a part: no repeats
    if not counts.all():
        return None
    term_ptr = _offsets(counts)
    post_doc = np.empty(int(term_ptr[-1]), dtype=np.uint32)
    post_tf = np.empty(int(term_ptr[-1]), dtype=np.uint16)
    cursor = term_ptr[:-1].copy()  # where the next part's postings of each term go
    first_doc = 0
    for part, ids in zip(parts, maps, strict=True):
        if part.post_docs.shape[0]:
            shift = cursor[ids] - _offsets(part.term_counts)[:-1]
            dest = np.repeat(shift, part.term_counts)
            dest += np.arange(dest.shape[0], dtype=np.int64)
            post_doc[dest] = part.post_docs + np.uint32(first_doc)
            post_tf[dest] = part.post_tfs
        cursor[ids] += part.term_counts
        first_doc += int(part.lens.shape[0])
    fwd_term = _joined([ids[part.fwd_terms] for part, ids in zip(parts, maps, strict=True)],
                       np.uint32)
    key_order = np.argsort(columns.path_keys, kind="stable")
    return SegmentArrays(
        term_key=np.asarray(keys, dtype=np.int64), term_ptr=term_ptr,
        post_doc=post_doc, post_tf=post_tf,
        fwd_ptr=_offsets(_joined([part.doc_terms for part in parts], np.int64)),
        fwd_term=fwd_term,
        doc_len=np.asarray(columns.doc_len, dtype=np.uint32),
        doc_weight=np.asarray(columns.doc_weight, dtype=np.float64),
        doc_updated=np.asarray(columns.doc_updated, dtype=np.int32),
        path_blob=np.asarray(columns.path_blob, dtype=np.uint8),
        path_ptr=np.asarray(columns.path_ptr, dtype=np.int64),
        path_key=columns.path_keys[key_order].astype(np.int64),
        path_doc=key_order.astype(np.uint32),
        key_hash=np.asarray(columns.key_hash, dtype=np.int64),
        key_ptr=np.asarray(columns.key_ptr, dtype=np.int64))


def assembled(parts: Sequence[TokenizedDocs], keys: Array, maps: Sequence[Array],
              columns: DocColumns, keep: Array | None, repeats: bool) -> SegmentArrays:
    """The segment through ``assemble``: superseded docs (``keep`` False) dropped, a
    (term, doc) pair met twice through a shared key merged."""
    terms = _joined([ids[np.repeat(np.arange(part.keys.shape[0]), part.term_counts)]
                     for part, ids in zip(parts, maps, strict=True)], np.uint32)
    starts = np.cumsum([0] + [int(part.lens.shape[0]) for part in parts[:-1]])
    docs = _joined([part.post_docs + np.uint32(first)
                    for part, first in zip(parts, starts, strict=True)], np.uint32)
    tfs = _joined([part.post_tfs for part in parts], np.uint16)
    fwd = _joined([ids[part.fwd_terms] for part, ids in zip(parts, maps, strict=True)],
                  np.uint32)
    if keep is not None:
        doc_terms = _joined([part.doc_terms for part in parts], np.int64)
        fwd = fwd[np.repeat(keep, doc_terms)]
        live = keep[docs]
        terms, tfs = terms[live], tfs[live]
        docs = (np.cumsum(keep) - 1)[docs[live]].astype(np.uint32)
    packed = [pack_postings(terms, docs, tfs, doc_bits(keys.shape[0], len(columns.doc_len)))]
    del terms, docs, tfs
    return assemble(keys, packed, columns, fwd_term=fwd, may_repeat=repeats)


def _offsets(counts: Array) -> npt.NDArray[np.int64]:
    """0 then the running sums of ``counts``."""
    out = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


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
    key_counts = _joined([part.key_counts for part in parts], np.int64)
    key_hashes = _joined([part.key_hashes for part in parts], np.int64)
    if len(last) < len(paths):
        keep = np.zeros(len(paths), dtype=np.bool_)
        keep[np.fromiter(last.values(), dtype=np.int64, count=len(last))] = True
        kept = [p for p, k in zip(paths, keep.tolist(), strict=True) if k]
        blob, ptr, path_keys = encode_paths(kept)
        return DocColumns(lens[keep], weights[keep], updated[keep], blob, ptr, path_keys,
                          key_hashes[np.repeat(keep, key_counts)],
                          key_offsets(key_counts[keep])), keep
    offsets = np.cumsum([0] + [int(part.path_ptr[-1]) for part in parts[:-1]])
    ptr = np.concatenate([parts[0].path_ptr[:1]] + [
        part.path_ptr[1:] + offset for part, offset in zip(parts, offsets, strict=True)])
    return DocColumns(lens, weights, updated,
                      _joined([part.path_blob for part in parts], np.uint8), ptr,
                      _joined([part.path_keys for part in parts], np.int64),
                      key_hashes, key_offsets(key_counts)), None
