"""Folding the delta into a new base segment, from index data only (no vault reads).

New doc order: the base docs not tombstoned (in their old order), then the delta docs
(by delta id). The result equals a fresh build of the same documents except for doc id
order, which affects nothing but ties (broken by path at query time).
Cost: one streaming pass over the base postings (in chunks of about a million, packed
straight into the output buffer), then ``assemble``'s two sorts. Peak extra memory is
about 26 bytes per posting.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from plugins.recall_bm25.delta_store import DeltaDoc
from plugins.recall_bm25.segment_format import SegmentArrays
from plugins.recall_bm25.segment_reader import BaseSegment
from plugins.recall_bm25.segment_writer import (
    DocColumns,
    assemble,
    doc_bits,
    encode_paths,
    key_offsets,
    pack_postings,
)

__all__ = ["merge_segment"]

#: Base postings handled per step of the streaming pass.
CHUNK_POSTINGS = 1 << 20


def merge_segment(base: BaseSegment, tombstones: npt.NDArray[np.int64],
                  delta: Sequence[DeltaDoc]) -> SegmentArrays:
    """The segment holding ``base`` minus ``tombstones`` plus ``delta``."""
    arr = base.arrays
    n_base = base.n_docs
    keep = np.ones(n_base, dtype=np.bool_)
    if tombstones.size:
        keep[tombstones[(tombstones >= 0) & (tombstones < n_base)]] = False
    new_id = (np.cumsum(keep, dtype=np.int64) - 1).astype(np.uint32)
    n_kept = int(keep.sum())
    n_docs = n_kept + len(delta)

    # One dictionary for both: base term ids map monotonically into it.
    n_base_terms = int(arr.term_key.shape[0])
    d_keys = np.concatenate([d.keys for d in delta]) if delta else np.empty(0, np.int64)
    keys, inverse = np.unique(np.concatenate([np.asarray(arr.term_key), d_keys]),
                              return_inverse=True)
    term_ids: npt.NDArray[np.uint32] = inverse.astype(np.uint32)
    del inverse
    d_bits = doc_bits(keys.shape[0], n_docs)

    n_live = int(np.diff(arr.fwd_ptr)[keep].sum())
    packed = np.empty(n_live + d_keys.shape[0], dtype=np.uint64)
    filled = _pack_base(base, keep, new_id, term_ids[:n_base_terms], d_bits, packed)
    d_doc = np.repeat(np.arange(n_kept, n_docs, dtype=np.uint32),
                      [d.keys.shape[0] for d in delta])
    d_tf = np.concatenate([d.tfs for d in delta]) if delta else np.empty(0, np.uint32)
    pack_postings(term_ids[n_base_terms:], d_doc, d_tf, d_bits, out=packed[filled:])
    del d_doc, d_tf, term_ids

    lengths = np.diff(arr.path_ptr)
    base_ptr = np.zeros(n_kept + 1, dtype=np.int64)
    np.cumsum(lengths[keep], out=base_ptr[1:])
    key_by_doc = np.empty(n_base, dtype=np.int64)
    key_by_doc[np.asarray(arr.path_doc, dtype=np.int64)] = arr.path_key
    d_blob, d_ptr, d_path_keys = encode_paths([d.path for d in delta])
    key_counts = np.concatenate([np.diff(np.asarray(arr.key_ptr))[keep],
                                 np.array([d.key_terms.shape[0] for d in delta], dtype=np.int64)])
    key_lens = np.diff(np.asarray(arr.key_ptr))
    columns = DocColumns(
        doc_len=np.concatenate([np.asarray(arr.doc_len)[keep],
                                np.array([d.length for d in delta], dtype=np.uint32)]),
        doc_weight=np.concatenate([np.asarray(arr.doc_weight)[keep],
                                   np.array([d.weight for d in delta], dtype=np.float64)]),
        doc_updated=np.concatenate([np.asarray(arr.doc_updated)[keep],
                                    np.array([d.updated for d in delta], dtype=np.int32)]),
        path_blob=np.concatenate([np.asarray(arr.path_blob)[np.repeat(keep, lengths)], d_blob]),
        path_ptr=np.concatenate([base_ptr, d_ptr[1:] + base_ptr[-1]]),
        path_keys=np.concatenate([key_by_doc[keep], d_path_keys]),
        key_hash=np.concatenate([np.asarray(arr.key_hash)[np.repeat(keep, key_lens)],
                                 *(d.key_terms for d in delta)]).astype(np.int64),
        key_ptr=key_offsets(key_counts),
    )
    holder = [packed]
    del packed
    return assemble(keys, holder, columns)


def _pack_base(base: BaseSegment, keep: npt.NDArray[np.bool_], new_id: npt.NDArray[np.uint32],
               term_map: npt.NDArray[np.uint32], d_bits: int, out: npt.NDArray[np.uint64]) -> int:
    """Pack the base postings of kept docs (renumbered) into ``out``; return the count.

    Walks whole terms in chunks of about ``CHUNK_POSTINGS`` postings, so the term id of
    each posting is a small ``np.repeat`` and temporaries stay bounded.
    """
    arr = base.arrays
    ptr = np.asarray(arr.term_ptr)
    n_terms = ptr.shape[0] - 1
    bounds = np.unique(np.concatenate([
        np.searchsorted(ptr, np.arange(0, int(ptr[-1]), CHUNK_POSTINGS)), [n_terms]]))
    filled = 0
    for t0, t1 in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        a, b = int(ptr[t0]), int(ptr[t1])
        docs = np.asarray(arr.post_doc[a:b])
        live = keep[docs]
        terms = np.repeat(term_map[t0:t1], np.diff(ptr[t0 : t1 + 1]))[live]
        count = terms.shape[0]
        pack_postings(terms, new_id[docs[live]], np.asarray(arr.post_tf[a:b])[live], d_bits,
                      out=out[filled : filled + count])
        filled += count
    return filled
