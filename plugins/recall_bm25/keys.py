"""Stable 64-bit keys for terms and paths; the normalisations of document attributes.

Terms are never stored as strings: the base segment's dictionary and the delta's postings
both key a term by ``term_key(term)``, the first 8 bytes of its BLAKE2b digest read as a
signed little-endian int64 (signed so SQLite stores it natively). With 10^6 distinct
terms the chance that two collide is about 3e-8; a collision merges the two terms' postings
(both still match, with a summed document frequency). Paths are keyed the same way for the
base segment's path lookup, which always confirms the match against the stored path.
"""

from __future__ import annotations

import datetime as _dt
import math

from echo_core import Tokenizer, blake2b  # CPython's own BLAKE2b: no OpenSSL to load

__all__ = ["clean_weight", "date_ordinal", "path_key", "term_key", "tokenizer_id"]


def term_key(term: str) -> int:
    """The signed 64-bit key of ``term`` (deterministic across processes and machines)."""
    return int.from_bytes(blake2b(term.encode("utf-8", "surrogatepass"), digest_size=8).digest(),
                          "little", signed=True)


def path_key(path: str) -> int:
    """The signed 64-bit key of a vault path (a different domain from ``term_key``)."""
    digest = blake2b(path.encode("utf-8", "surrogatepass"), digest_size=8, person=b"path").digest()
    return int.from_bytes(digest, "little", signed=True)


def date_ordinal(updated: str) -> int:
    """``date.toordinal()`` of an ISO date or datetime (first 10 characters); 0 when empty
    or unparsable (0 means "unknown": no freshness decay)."""
    text = updated.strip()[:10]
    if not text:
        return 0
    try:
        return _dt.date.fromisoformat(text).toordinal()
    except ValueError:
        return 0


def tokenizer_id(tokenizer: Tokenizer) -> str:
    """Identity of a tokenizer recorded in the segment: ``name`` (or class) + ``version``."""
    name = getattr(tokenizer, "name", None) or type(tokenizer).__name__
    version = getattr(tokenizer, "version", None)
    return f"{name}@{version}" if version else str(name)


def clean_weight(weight: float) -> float:
    """A usable static prior: finite and >= 0 (anything else counts as 0)."""
    return float(weight) if math.isfinite(weight) and weight > 0 else 0.0
