"""The base segment's on-disk format: which arrays, of which dtype and length.

A segment folder holds one ``.npy`` file per array below (memory-mapped when read) and
``meta.json`` (written last; its presence marks the folder complete)::

    term_key    int64   [V]     sorted unique term keys (``keys.term_key``): the dictionary
    term_ptr    int64   [V+1]   CSR offsets of each term's postings
    post_doc    uint32  [P]     postings: doc ids, ascending within a term
    post_tf     uint16  [P]     postings: term frequency (clamped to 65535)
    fwd_ptr     int64   [N+1]   forward index offsets of each doc's terms
    fwd_term    uint32  [P]     forward index: term ids of each doc, ascending
    doc_len     uint32  [N]     tokens per doc (BM25 length)
    doc_weight  float64 [N]     static prior (``IndexDoc.weight``)
    doc_updated int32   [N]     ``updated`` as a day ordinal, 0 = unknown
    path_blob   uint8   [B]     every doc's path, UTF-8, concatenated
    path_ptr    int64   [N+1]   offsets of each path in ``path_blob``
    path_key    int64   [N]     sorted ``keys.path_key`` of the paths
    path_doc    uint32  [N]     the doc id of each ``path_key`` entry
    key_hash    int64   [Q]     the term keys of each doc's key fields (``IndexDoc.title``
                                and ``aliases``), doc after doc, each once, in text order
    key_ptr     int64   [N+1]   offsets of each doc's keys in ``key_hash``

``meta.json``: ``schema``, ``n_docs`` (N), ``n_terms`` (V), ``n_postings`` (P),
``n_path_bytes`` (B), ``n_key_terms`` (Q), ``total_len`` (sum of ``doc_len``),
``tokenizer``, ``created``.

Optional champion lists (``champions``; a segment written before them lacks these files
and keys and is read without them: searches that need them take the slower path)::

    champ_term  uint32  [K]     the term ids that have a champion list, ascending
    champ_doc   uint32  [K*C]   each one's C champions, ascending doc ids
    champ_bound float64 [K*4]   each one's (rest_a, rest_b, top_a, top_b) impact bounds

with ``meta.json`` keys ``champion_day`` (the day the bounds' freshness is taken on),
``champion_count`` (C), ``n_champion_terms`` (K) and ``champion_model`` (the scoring
constants the bounds assume, ``scalar_math.SCORING_MODEL``: lists of another model are
not used).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    import numpy as np

__all__ = ["ARRAYS", "CHAMPION_ARRAYS", "CHAMPION_META", "CHAMPION_MODEL_KEY", "SCHEMA",
           "TF_MAX", "SegmentArrays", "champion_length", "expected_length"]

#: Largest stored term frequency (``post_tf`` is uint16); larger counts are clamped, in
#: the delta too, so a doc scores the same before and after a merge.
TF_MAX = 65535

#: Bump when the layout or the meaning of any array changes (forces a rebuild). 2: the
#: key fields (``key_hash``, ``key_ptr``).
SCHEMA = 2

#: name -> (numpy dtype as its little-endian ``descr``, length as a function of (N, V, P,
#: B, Q)). Strings, so that reading a segment's few numbers needs no numpy (``npy_map``).
ARRAYS: dict[str, tuple[str, str]] = {
    "term_key": ("<i8", "V"),
    "term_ptr": ("<i8", "V+1"),
    "post_doc": ("<u4", "P"),
    "post_tf": ("<u2", "P"),
    "fwd_ptr": ("<i8", "N+1"),
    "fwd_term": ("<u4", "P"),
    "doc_len": ("<u4", "N"),
    "doc_weight": ("<f8", "N"),
    "doc_updated": ("<i4", "N"),
    "path_blob": ("|u1", "B"),
    "path_ptr": ("<i8", "N+1"),
    "path_key": ("<i8", "N"),
    "path_doc": ("<u4", "N"),
    "key_hash": ("<i8", "Q"),
    "key_ptr": ("<i8", "N+1"),
}

#: The optional champion arrays (module docstring): name -> (descr, length rule over K,
#: the listed terms, and C, the champions per term).
CHAMPION_ARRAYS: dict[str, tuple[str, str]] = {
    "champ_term": ("<u4", "K"),
    "champ_doc": ("<u4", "K*C"),
    "champ_bound": ("<f8", "K*4"),
}
#: The integer ``meta.json`` keys of a segment that has champion lists (day, C, K), and
#: the key of its model string.
CHAMPION_META = ("champion_day", "champion_count", "n_champion_terms")
CHAMPION_MODEL_KEY = "champion_model"


def champion_length(rule: str, n_terms: int, count: int) -> int:
    """The length a champion array must have under its ``CHAMPION_ARRAYS`` rule, for
    ``n_terms`` (K) lists of ``count`` (C) champions."""
    return n_terms * {"K": 1, "K*C": count, "K*4": 4}[rule]


def expected_length(rule: str, n_docs: int, n_terms: int, n_postings: int,
                    n_path_bytes: int, n_key_terms: int) -> int:
    """The length an array must have under its ``ARRAYS`` rule."""
    base = {"N": n_docs, "V": n_terms, "P": n_postings, "B": n_path_bytes,
            "Q": n_key_terms}[rule[0]]
    return base + (1 if rule.endswith("+1") else 0)


@attrs.define(eq=False)
class SegmentArrays:
    """Every array of a segment, in memory or memory-mapped (see the module docstring)."""

    term_key: np.ndarray[Any, Any]
    term_ptr: np.ndarray[Any, Any]
    post_doc: np.ndarray[Any, Any]
    post_tf: np.ndarray[Any, Any]
    fwd_ptr: np.ndarray[Any, Any]
    fwd_term: np.ndarray[Any, Any]
    doc_len: np.ndarray[Any, Any]
    doc_weight: np.ndarray[Any, Any]
    doc_updated: np.ndarray[Any, Any]
    path_blob: np.ndarray[Any, Any]
    path_ptr: np.ndarray[Any, Any]
    path_key: np.ndarray[Any, Any]
    path_doc: np.ndarray[Any, Any]
    key_hash: np.ndarray[Any, Any]
    key_ptr: np.ndarray[Any, Any]

    @property
    def n_docs(self) -> int:
        """N, the number of documents."""
        return int(self.doc_len.shape[0])

    @property
    def n_terms(self) -> int:
        """V, the number of distinct term keys."""
        return int(self.term_key.shape[0])

    @property
    def n_postings(self) -> int:
        """P, the number of (term, doc) postings."""
        return int(self.post_doc.shape[0])

    def counts(self) -> dict[str, int]:
        """The sizes recorded in ``meta.json``."""
        import numpy as np

        return {"n_docs": self.n_docs, "n_terms": self.n_terms, "n_postings": self.n_postings,
                "n_path_bytes": int(self.path_blob.shape[0]),
                "n_key_terms": int(self.key_hash.shape[0]),
                "total_len": int(self.doc_len.sum(dtype=np.int64))}

    @classmethod
    def empty(cls) -> SegmentArrays:
        """A segment with no documents (the implicit base before the first build)."""
        import numpy as np

        arrays = {name: np.zeros(1 if rule.endswith("+1") else 0, dtype)
                  for name, (dtype, rule) in ARRAYS.items()}
        return cls(**arrays)
