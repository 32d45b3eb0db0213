"""``SegmentBuilder``: a base segment from a stream of documents (``rebuild``).

Per document: its term ids (``TermIds``: a word seen before costs one C-level lookup),
appended to a batch. Every ``BATCH_DOCS`` documents one numpy pass drops the ids of
dropped words, sorts packed (doc, term) keys and counts the batch's term frequencies —
cheaper than a ``Counter`` per document — and appends (term, doc, tf) postings, grouped
by doc, to ``array`` buffers (10 bytes per posting). The term keys of its key fields
(title and aliases) are kept too, each once (a word's key remembered by word).

The documents of a builder form a part (``segment_parts.TokenizedDocs``): its
vocabulary hashed and sorted by term key, its postings renumbered by that order and
sorted both ways. ``tokenized`` builds such a part on its own (a forked child does, for
half of a rebuild); ``finish`` merges the builder's own part with those handed to
``add_tokenized`` (``segment_parts.merge_parts``).
"""

from __future__ import annotations

from array import array
from collections.abc import Hashable, Iterable, Sequence

import numpy as np
import numpy.typing as npt

from echo_core import IndexDoc, SplittableDocs, Tokenizer, WordTokenizer
from plugins.recall_bm25.keys import clean_weight, date_ordinal, term_key
from plugins.recall_bm25.segment_format import TF_MAX, SegmentArrays
from plugins.recall_bm25.segment_parts import TokenizedDocs, merge_parts
from plugins.recall_bm25.segment_writer import doc_bits, encode_paths
from plugins.recall_bm25.term_ids import TermIds

__all__ = ["BATCH_DOCS", "SegmentBuilder", "TokenizedDocs", "tokenized"]

#: Documents tokenized between two numpy counting passes.
BATCH_DOCS = 1024

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
        self._key_hashes = array("q")  # each doc's key-field term keys, once each, doc after doc
        self._key_counts = array("q")
        self._key_of_word: dict[Hashable, int] = {}  # word -> term key, 0: dropped
        self._words = tokenizer.words if isinstance(tokenizer, WordTokenizer) else None
        self._term = tokenizer.term if isinstance(tokenizer, WordTokenizer) else None
        self._tokenize = tokenizer.tokenize
        self._parts: list[TokenizedDocs] = []
        self._sealed: TokenizedDocs | None = None  # the docs added here, counted (seal)
        self._finished: int | None = None  # the distinct paths, once finished

    @property
    def count(self) -> int:
        """Distinct paths added so far."""
        if self._finished is not None:
            return self._finished
        return len(set(self._paths).union(*(part.paths for part in self._parts)))

    def add(self, doc: IndexDoc) -> None:
        """Tokenize ``doc.text`` and buffer its tokens and attributes."""
        if self._parts or self._sealed is not None:
            raise ValueError("add() after add_tokenized() or seal(): the docs would lose "
                             "their order")
        ids = self._ids_of(doc.text)
        self._batch.extend(ids)
        self._batch_lens.append(len(ids))
        self._paths.append(doc.path)
        self._lens.append(len(ids) - ids.count(0))
        self._weights.append(clean_weight(doc.weight))
        self._updated.append(date_ordinal(doc.updated))
        keys = self._key_field_keys(f"{doc.title}\n{doc.aliases}")
        self._key_hashes.extend(keys)
        self._key_counts.append(len(keys))
        if len(self._batch_lens) >= BATCH_DOCS:
            self._flush()

    def _key_field_keys(self, text: str) -> dict[int, None]:
        """The term keys of ``text`` (a doc's title and aliases), each once, in text
        order; kept apart from the vocabulary (a word only there gets no term id)."""
        if self._words is None or self._term is None:
            return dict.fromkeys(map(term_key, self._tokenize(text)))
        known, term = self._key_of_word, self._term
        keys: dict[int, None] = {}
        for word in self._words(text):
            key = known.get(word)
            if key is None:
                found = term(word)
                key = known[word] = term_key(found) if found else 0
            if key:
                keys[key] = None
        return keys

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
            if not ids.shape[0]:  # every word of the batch dropped: no postings
                return
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
        key_hashes = np.frombuffer(self._key_hashes, dtype=np.int64).copy()
        key_counts = np.frombuffer(self._key_counts, dtype=np.int64).copy()
        self._key_hashes, self._key_counts = array("q"), array("q")
        self._key_of_word.clear()
        order = np.argsort(local_keys, kind="stable")
        keys = local_keys[order]
        rank = np.empty(order.shape[0], dtype=np.uint64)
        rank[order] = np.arange(order.shape[0], dtype=np.uint64)
        n_docs, n_terms = len(self._paths), int(keys.shape[0])
        d_bits = doc_bits(n_terms, n_docs)  # raises when the ids cannot be packed
        t_bits = max(1, (n_terms - 1).bit_length())
        terms = rank[np.frombuffer(self._terms, dtype=np.uint32)]
        docs = np.frombuffer(self._docs, dtype=np.uint32).astype(np.uint64)
        tfs = np.frombuffer(self._tfs, dtype=np.uint16)
        self._terms, self._docs, self._tfs = array("I"), array("I"), array("H")
        del rank
        by_doc = (docs << np.uint64(t_bits)) | terms  # each doc's terms, ascending
        by_doc.sort()
        fwd_terms = (by_doc & np.uint64((1 << t_bits) - 1)).astype(np.uint32)
        doc_terms = _run_lengths(by_doc, n_docs, t_bits)
        del by_doc
        by_term = terms << np.uint64(d_bits + 16)  # each term's docs, ascending
        by_term |= docs << np.uint64(16)
        by_term |= tfs
        del terms, docs, tfs
        by_term.sort()
        term_counts = _run_lengths(by_term, n_terms, d_bits + 16)
        post_docs = ((by_term >> np.uint64(16)) & np.uint64((1 << d_bits) - 1)).astype(np.uint32)
        post_tfs = (by_term & np.uint64(0xFFFF)).astype(np.uint16)
        del by_term
        blob, ptr, path_keys = encode_paths(self._paths)
        return TokenizedDocs(
            keys=keys, repeats=bool((keys[1:] == keys[:-1]).any()), term_counts=term_counts,
            post_docs=post_docs, post_tfs=post_tfs, doc_terms=doc_terms, fwd_terms=fwd_terms,
            lens=np.frombuffer(self._lens, dtype=np.uint32).copy(),
            weights=np.frombuffer(self._weights, dtype=np.float64).copy(),
            updated=np.frombuffer(self._updated, dtype=np.int32).copy(),
            paths=self._paths, path_blob=blob, path_ptr=ptr, path_keys=path_keys,
            key_counts=key_counts, key_hashes=key_hashes, skipped=list(skipped))

    def seal(self) -> None:
        """Count the docs added so far into their part now rather than in ``finish``: a
        build counts its own half this way while a forked child still tokenizes the other
        (~1 s less at 100k notes). ``add`` is refused afterwards; the segment is the same."""
        if self._sealed is None:
            self._sealed = self.own_part()

    def finish(self) -> SegmentArrays:
        """The segment of every document added (last version of each path)."""
        own = self._sealed if self._sealed is not None else self.own_part()
        parts = [own, *self._parts]
        self._sealed = None
        self._parts = []
        self._finished = len({path for part in parts for path in part.paths})
        return merge_parts(parts)


def _run_lengths(packed: npt.NDArray[np.uint64], n: int, shift: int) -> npt.NDArray[np.int64]:
    """How many elements of the sorted ``packed`` hold each value 0..n-1 above bit
    ``shift`` (a binary search per value: far cheaper than counting every element)."""
    bounds = np.empty(n + 1, dtype=np.int64)  # values 1..n-1 only: n << shift may overflow
    bounds[0], bounds[n] = 0, packed.shape[0]
    bounds[1:n] = np.searchsorted(packed, np.arange(1, n, dtype=np.uint64) << np.uint64(shift))
    return np.diff(bounds)
