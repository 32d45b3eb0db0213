"""Peer BM25 engines for ``bench/perf_recall.py``, fed the same notes and queries.

Every peer gets plain tokens (lowercase words, porterlite's stopwords and 1-character
words dropped, no stemming) of the same ``IndexDoc.text`` our ranker indexes, and OR
(disjunctive) top-10 queries: bm25s (numpy, k1 1.5, b 0.75), SQLite FTS5 (``MATCH ...
ORDER BY bm25(...) LIMIT 10``), tantivy (optional) and a pure-Python dict-of-postings BM25.
Build times exclude reading the vault (the docs are handed over in memory).
"""

from __future__ import annotations

import heapq
import math
import re
import shutil
import sqlite3
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from plugins.stem_porterlite.stopwords import STOPWORDS

_WORD = re.compile(r"[^\W_]+")
K1, B, TOP = 1.5, 0.75, 10


def plain_tokens(text: str) -> list[str]:
    """Lowercase words without stopwords or 1-character words (no stemming)."""
    return [w for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in STOPWORDS]


def ms_stats(times: Sequence[float]) -> dict[str, float]:
    """p50 / p95 / max of durations given in seconds, in milliseconds."""
    ordered = sorted(t * 1000 for t in times)
    if not ordered:
        return {"p50_ms": float("nan"), "p95_ms": float("nan"), "max_ms": float("nan")}
    p95 = ordered[min(len(ordered) - 1, math.ceil(len(ordered) * 0.95) - 1)]
    return {"p50_ms": statistics.median(ordered), "p95_ms": p95, "max_ms": ordered[-1]}


def dir_bytes(path: Path) -> int:
    """Total size of the files under ``path`` (or of the file)."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def time_queries(run: Callable[[Any], object], queries: Sequence[Any],
                 warmup: int = 5) -> dict[str, float]:
    """Warm up on the first queries, then time each query once."""
    for q in queries[:warmup]:
        run(q)
    times = []
    for q in queries:
        start = time.perf_counter()
        run(q)
        times.append(time.perf_counter() - start)
    return ms_stats(times)


def bench_bm25s(docs: list[list[str]], queries: list[list[str]], work: Path) -> dict[str, Any]:
    """bm25s: build, per-query retrieve (single query, 1 thread), mmap load of the saved index."""
    import bm25s  # type: ignore[import-untyped]

    start = time.perf_counter()
    retriever = bm25s.BM25(k1=K1, b=B)
    retriever.index(docs, show_progress=False)
    build_s = time.perf_counter() - start
    vocab = retriever.vocab_dict
    known = [[t for t in q if t in vocab] for q in queries]
    known = [q for q in known if q]
    k = min(TOP, len(docs))
    out: dict[str, Any] = {"engine": "bm25s", "build_s": build_s,
                           "build_docs_per_s": len(docs) / build_s}
    out.update(time_queries(lambda q: retriever.retrieve([q], k=k, show_progress=False,
                                                          n_threads=1), known))
    folder = work / "bm25s"
    retriever.save(str(folder))
    out["index_bytes"] = dir_bytes(folder)
    start = time.perf_counter()
    loaded = bm25s.BM25.load(str(folder), mmap=True)
    out["load_mmap_ms"] = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    loaded.retrieve([known[0]], k=k, show_progress=False, n_threads=1)
    out["first_query_after_load_ms"] = (time.perf_counter() - start) * 1000
    return out


def bench_fts5(docs: list[list[str]], queries: list[list[str]], work: Path) -> dict[str, Any]:
    """SQLite FTS5 (file-backed, page cache warm): build in one transaction, OR queries."""
    db = work / "fts5.sqlite"
    conn = sqlite3.connect(db)
    try:
        conn.execute("CREATE VIRTUAL TABLE docs USING fts5(body, tokenize='unicode61')")
    except sqlite3.OperationalError as exc:
        conn.close()
        return {"engine": "fts5", "skipped": f"FTS5 not compiled in: {exc}"}
    start = time.perf_counter()
    with conn:
        conn.executemany("INSERT INTO docs(rowid, body) VALUES (?, ?)",
                         ((i, " ".join(d)) for i, d in enumerate(docs)))
    build_s = time.perf_counter() - start
    sql = "SELECT rowid, bm25(docs) FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT 10"
    out: dict[str, Any] = {"engine": "fts5", "sqlite": sqlite3.sqlite_version,
                           "build_s": build_s, "build_docs_per_s": len(docs) / build_s}
    out.update(time_queries(
        lambda q: conn.execute(sql, (" OR ".join(f'"{t}"' for t in q),)).fetchall(), queries))
    conn.close()
    out["index_bytes"] = dir_bytes(db)
    return out


def bench_tantivy(docs: list[list[str]], queries: list[list[str]], work: Path) -> dict[str, Any]:
    """tantivy (if installed): one writer, default tokenizer, disjunctive query parser."""
    try:
        import tantivy  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return {"engine": "tantivy", "skipped": "not installed (pip install tantivy)"}
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("body", stored=False)
    builder.add_integer_field("id", stored=True)
    schema = builder.build()
    folder = work / "tantivy"
    folder.mkdir()
    index = tantivy.Index(schema, path=str(folder))
    start = time.perf_counter()
    writer = index.writer(heap_size=256_000_000)
    for i, d in enumerate(docs):
        writer.add_document(tantivy.Document(id=i, body=" ".join(d)))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    build_s = time.perf_counter() - start
    searcher = index.searcher()
    out: dict[str, Any] = {"engine": "tantivy", "build_s": build_s,
                           "build_docs_per_s": len(docs) / build_s}
    out.update(time_queries(
        lambda q: searcher.search(index.parse_query(" ".join(q), ["body"]), TOP).hits, queries))
    out["index_bytes"] = dir_bytes(folder)
    return out


def bench_dict(docs: list[list[str]], queries: list[list[str]], work: Path) -> dict[str, Any]:
    """Pure Python: term -> {doc: tf} postings, dict accumulation, heapq top 10."""
    del work
    start = time.perf_counter()
    postings: dict[str, dict[int, int]] = {}
    lengths = []
    for i, d in enumerate(docs):
        lengths.append(len(d))
        for term, tf in Counter(d).items():
            postings.setdefault(term, {})[i] = tf
    n = len(docs)
    avgdl = sum(lengths) / max(n, 1)
    norm = [K1 * (1 - B + B * ln / avgdl) for ln in lengths]
    build_s = time.perf_counter() - start

    def search(q: list[str]) -> list[tuple[float, int]]:
        acc: dict[int, float] = {}
        for term in set(q):
            plist = postings.get(term)
            if not plist:
                continue
            idf = math.log1p((n - len(plist) + 0.5) / (len(plist) + 0.5)) * (K1 + 1)
            for doc, tf in plist.items():
                acc[doc] = acc.get(doc, 0.0) + idf * tf / (tf + norm[doc])
        return heapq.nlargest(TOP, ((s, d) for d, s in acc.items()))

    out: dict[str, Any] = {"engine": "py-dict", "build_s": build_s,
                           "build_docs_per_s": n / build_s}
    out.update(time_queries(search, queries))
    return out


PEERS = {"bm25s": bench_bm25s, "fts5": bench_fts5, "tantivy": bench_tantivy, "py-dict": bench_dict}


def run_peers(names: Sequence[str], docs: list[list[str]], queries: list[list[str]],
              work: Path) -> dict[str, dict[str, Any]]:
    """Run the named peers (a failing peer is reported, not fatal), each in a fresh
    folder (a kept ``--reuse`` folder holds the previous run's index: emptied first)."""
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        folder = work / f"peer-{name}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True, exist_ok=True)
        try:
            out[name] = PEERS[name](docs, queries, folder)
        except Exception as exc:  # noqa: BLE001 - a broken peer must not sink the run
            out[name] = {"engine": name, "skipped": f"{type(exc).__name__}: {exc}"}
    return out
