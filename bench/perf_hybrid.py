"""Warm recall latency of the ``hybrid`` ranker against ``bm25`` on one large vault.

    python bench/perf_hybrid.py --work DIR [--queries 200] [--build-tokens 32]
                                [--sample 1000]

``DIR`` is a vault kept by ``bench/perf_recall.py --sizes 100000 --keep DIR`` (its
``recall-100000/vault``; another size works too). Steps, one process:

1. index the vault with ``recall = "hybrid"`` in a fresh state dir (``DIR/.../state-hybrid``,
   kept for ``--reuse``): the BM25 index, then every note's MiniLM vector. To keep a
   100k-note build to minutes on two cores, the build embeds the first
   ``--build-tokens`` tokens of each note (real vectors of the real notes, shorter texts:
   the search cost does not depend on how long the embedded text was);
2. embedding throughput at full length (``MAX_TOKENS`` = 256, and 128) on ``--sample``
   notes of the vault, each note's text and lead as a build embeds them: notes/s;
3. warm ``recall`` p50/p95 (limit 8, no linked notes) over ``--queries`` Zipfian queries,
   ``bm25`` and ``hybrid`` interleaved on the same vault, and ``search_text`` alone
   (query embedding + vector search + BM25 + fusion), plus the RSS at the end.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.perf_recall import TODAY  # noqa: E402
from bench.synthetic_vault import draw_queries, recall_sampler  # noqa: E402


def _env(work: Path, recall: str) -> dict[str, str]:
    config = work / f"{recall}.toml"
    config.write_text(f'recall = "{recall}"\n', encoding="utf-8")
    return {"ECHO_TODAY": TODAY, "HOME": str(work / "home"), "ECHO_CONFIG": str(config)}


def _context(vault: Path, state: Path, env: dict[str, str]):  # type: ignore[no-untyped-def]
    from echo_core import create_context

    return create_context(vault=str(vault), state_dir=str(state), env=env)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True,
                        help="a perf_recall --keep folder holding the vault")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--build-tokens", type=int, default=32)
    parser.add_argument("--sample", type=int, default=1000)
    args = parser.parse_args()

    import plugins.recall_hybrid.ranker as hybrid
    from echo_core.ops.recall import recall
    from echo_core.ops.recall_index import rebuild_index
    from plugins.recall_hybrid.minilm import MiniLmEmbedder

    work = args.work
    vault = work / "vault"
    state = work / "state-hybrid"
    state.mkdir(exist_ok=True)
    hybrid.MAX_TOKENS = args.build_tokens
    ctx = _context(vault, state, _env(work, "hybrid"))
    built = ""
    if ctx.ranker_upkeep.persistent is not None and ctx.ranker_upkeep.persistent.needs_rebuild():
        start = time.perf_counter()
        done = rebuild_index(ctx, lambda n: print(f"\r  embedded {n}", end="", file=sys.stderr))
        seconds = time.perf_counter() - start
        built = (f"built {done.indexed} notes in {seconds:.0f} s "
                 f"({done.indexed / seconds:.0f} notes/s at {args.build_tokens} tokens)")
        print(file=sys.stderr)
    hybrid.MAX_TOKENS = 256

    # throughput at full length on a sample of the vault's notes
    from echo_core.corpus import index_doc
    from echo_core.notes import parse_note

    sample_paths = ctx.ranker.paths()[:args.sample]
    texts = ctx.vault.storage.read_many(sample_paths)
    docs = [index_doc(parse_note(p, t)) for p, t in texts.items() if t is not None]
    sample = [hybrid.embed_text(d) for d in docs if d is not None]
    leads = [hybrid.lead_text(d) for d in docs if d is not None]
    rates = {}
    for tokens in (256, 128):
        embedder = MiniLmEmbedder(max_tokens=tokens)
        embedder.embed(["warm up"])
        start = time.perf_counter()
        embedder.embed(sample + leads)  # as a build does: each note's text and its lead
        rates[tokens] = len(sample) / (time.perf_counter() - start)
    mean_tokens = statistics.mean(MiniLmEmbedder(max_tokens=512).token_counts(sample))

    # warm latency, interleaved
    queries = draw_queries(recall_sampler(), args.queries + 50)
    bm25_ctx = _context(vault, work / "state", _env(work, "bm25"))
    warm, timed = queries[:50], queries[50:]
    for q in warm:
        recall(ctx, q, include_linked=False)
        recall(bm25_ctx, q, include_linked=False)
    times: dict[str, list[float]] = {"bm25 recall": [], "hybrid recall": [],
                                     "hybrid search_text": []}
    ranker = ctx.ranker
    from echo_core.ops.recall import query_terms

    for q in timed:
        for name, c in (("bm25 recall", bm25_ctx), ("hybrid recall", ctx)):
            start = time.perf_counter()
            recall(c, q, include_linked=False)
            times[name].append((time.perf_counter() - start) * 1000)
        plain, extra = query_terms(ctx, q)
        start = time.perf_counter()
        ranker.search_text(q, plain + extra, 30)  # type: ignore[attr-defined]
        times["hybrid search_text"].append((time.perf_counter() - start) * 1000)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(f"hybrid on {vault} ({len(ctx.ranker.paths())} notes)")
    if built:
        print(f"  {built}")
    print(f"  embedding throughput, {len(sample)} of its notes (mean {mean_tokens:.0f} tokens "
          f"untruncated), text and lead: {rates[256]:.1f} notes/s at 256 tokens, "
          f"{rates[128]:.1f} at 128")
    for name, values in times.items():
        print(f"  {name:<20} p50 {statistics.median(values):7.2f} ms   "
              f"p95 {_pct(values, 0.95):7.2f} ms   ({len(values)} queries)")
    print(f"  max RSS {rss:.0f} MB")


if __name__ == "__main__":
    main()
