"""Helpers for the recall_bm25 tests: a fresh index in a folder, a deterministic corpus,
a fixed mix of changes, and BM25 written out independently of the plugin.

Not a test module (no ``test_`` prefix); imported by ``test_recall_bm25*.py``.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from echo_core.protocols import IndexDoc, WeightedTerm
from plugins.recall_bm25.index import Bm25Index
from plugins.stem_porterlite.tokenizer import PorterLiteTokenizer

TOK = PorterLiteTokenizer()
TODAY = 740_000  # a fixed day ordinal (2027-01-...)


def make(state: Path, **kwargs: object) -> Bm25Index:
    index = Bm25Index(TOK, str(state), **kwargs)  # type: ignore[arg-type]
    index.set_today(TODAY)
    return index


def corpus(n: int, seed: int = 3) -> list[IndexDoc]:
    """Deterministic docs over a small vocabulary (varied lengths, weights, dates)."""
    words = [f"{a}{b}" for a in ("zar", "mol", "quin", "tesk", "vor", "pil") for b in
             ("ak", "eb", "ix", "om", "ul", "yt", "ox", "en")]
    docs = []
    state = seed
    for i in range(n):
        body = []
        for _ in range(5 + i % 17):
            state = (state * 1103515245 + 12345) % (1 << 31)
            body.append(words[(state >> 8) % (1 + (state >> 4) % len(words))])
        docs.append(IndexDoc(path=f"notes/n{i:04d}.md", title=f"N{i}", text=" ".join(body),
                             weight=1.0 + (i % 3) * 0.1, updated=f"2026-0{1 + i % 9}-1{i % 10}"))
    return docs


def ranking(index: Bm25Index, words: list[str], limit: int = 50) -> list[tuple[str, float]]:
    return index.search([WeightedTerm(w) for w in words], limit)


QUERIES = [["zarak"], ["molix", "quinul"], ["teskyt", "vorox", "pilen"], ["zarom", "zarom"],
           ["pilox", "vorak", "molen", "teskak"]]


def changes(index: Bm25Index, docs: list[IndexDoc]) -> dict[str, IndexDoc]:
    """Apply a fixed mix of updates, additions and removals; return the final corpus."""
    final = {d.path: d for d in docs}
    for i, doc in enumerate(docs[:60:3]):
        new = IndexDoc(path=doc.path, title="", text=f"{doc.text} zarak molix", weight=0.9,
                       updated=f"2026-02-0{1 + i % 9}")
        index.upsert(new)
        final[new.path] = new
    for i in range(25):
        new = IndexDoc(path=f"fresh/f{i:02d}.md", title="", text=docs[i * 5].text[::-1] +
                       " teskyt vorox", updated="2025-12-24")
        index.upsert(new)
        final[new.path] = new
    for doc in docs[100:130:2]:
        index.remove(doc.path)
        del final[doc.path]
    index.remove("fresh/f03.md")
    del final["fresh/f03.md"]
    return final


def assert_same(got: list[tuple[str, float]], want: list[tuple[str, float]]) -> None:
    assert [p for p, _ in got] == [p for p, _ in want]
    for (_, a), (_, b) in zip(got, want, strict=True):
        assert a == pytest.approx(b, abs=1e-4)



def bm25(tf: int, dl: int, avgdl: float, n: int, df: int) -> float:
    """Textbook BM25 (k1 = 1.5, b = 0.75), written out independently of the plugin."""
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    return idf * tf * 2.5 / (tf + 1.5 * (1 - 0.75 + 0.75 * dl / avgdl))


HAND = [IndexDoc(path="d1.md", title="", text="cobalt harbor harbor"),
        IndexDoc(path="d2.md", title="", text="cobalt violin"),
        IndexDoc(path="d3.md", title="", text="tundra violin violin violin")]


