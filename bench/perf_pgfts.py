"""Warm search latency of the ``pgfts`` ranker (PostgreSQL full-text search) against
``bm25`` on the same 100k-note vault, same queries, same run.

    python bench/perf_pgfts.py [--vault DIR] [--postgres URL] [--queries 200]
                               [--work DIR] [--reuse] [--out results.json]

``--vault``: a folder vault, by default the one ``bench/perf_recall.py --sizes 100000
--keep /tmp/b/recall`` keeps (``/tmp/b/recall/recall-100000/vault``); it is only read.
``--postgres``: a server (default ``ECHO_TEST_POSTGRES_URL``); without one a throwaway
cluster is started from the distribution's binaries (``bench.postgres_kit``) and
stopped at the end. Steps, one process:

1. ``bm25``: the folder vault indexed in a fresh state dir under ``--work`` (seconds),
   by ``ranker.rebuild`` of the corpus without taking the vault lock: the vault is only
   read, and a kept vault may be in use by another bench holding its lock;
2. ``pgfts``: the folder imported into the schema ``perf_pgfts`` with the import op
   (``import --from``: batches, then the imported notes indexed through the active
   ranker, here ``pgfts``), then ``reindex`` (one ``COPY`` rebuild) — both timed;
   ``--reuse`` keeps a schema already holding as many files;
3. warm latency over ``--queries`` Zipfian queries (``bench.synthetic_vault.draw_queries``,
   as ``perf_recall`` draws them), the two rankers interleaved query by query after five
   warm-up queries each: ``ranker.search`` of the plain terms, limit 10 (the ranker
   alone, as ``perf_recall``'s ``ranker_search``), and the whole ``recall`` (limit 8,
   no linked notes): p50 / p95 / max ms, and how many of bm25's top 10 pgfts also
   returns.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.perf_recall import TODAY
from bench.synthetic_vault import draw_queries, recall_sampler

DEFAULT_VAULT = Path("/tmp/b/recall/recall-100000/vault")
SCHEMA = "perf_pgfts"


def _env(work: Path, recall: str) -> dict[str, str]:
    config = work / f"{recall}.toml"
    config.write_text(f'recall = "{recall}"\n', encoding="utf-8")
    return {"ECHO_TODAY": TODAY, "HOME": str(work / "home"), "ECHO_CONFIG": str(config),
            "XDG_CONFIG_HOME": str(work / "home/.config"),
            "XDG_STATE_HOME": str(work / "home/.local/state")}


def _context(vault: str, state: Path, env: dict[str, str]) -> Any:
    from echo_core import create_context

    return create_context(vault=vault, state_dir=str(state), env=env)


@contextlib.contextmanager
def _server(given: str | None) -> Iterator[str]:
    """The server URL: ``given``, else a throwaway cluster for this run."""
    if given:
        yield given
        return
    from bench.postgres_kit import LocalCluster, server_binaries

    bindir = server_binaries()
    if bindir is None:
        raise SystemExit("no PostgreSQL server binaries (initdb, pg_ctl): pass --postgres URL")
    cluster = LocalCluster(bindir)
    try:
        cluster.start()
        print(f"started a throwaway PostgreSQL cluster at {cluster.url}")
        yield cluster.url
    finally:
        cluster.destroy()


def _stats(seconds: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in seconds)
    return {"p50_ms": statistics.median(ms), "p95_ms": ms[int(0.95 * (len(ms) - 1))],
            "max_ms": ms[-1], "n": len(ms)}


def _schema_files(url: str) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        found = conn.execute("SELECT 1 FROM pg_tables WHERE schemaname = %s AND "
                             "tablename = 'echo_files'", (SCHEMA,)).fetchone()
        if found is None:
            return -1
        row = conn.execute(f'SELECT count(*) FROM "{SCHEMA}".echo_files').fetchone()
        return int(row[0]) if row else 0


def _drop(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{SCHEMA}" CASCADE')


def _vault_files(vault: Path) -> int:
    return sum(1 for p in vault.rglob("*") if p.is_file()
               and not any(part.startswith(".") for part in p.relative_to(vault).parts))


def build_pgfts(vault: Path, server: str, work: Path, reuse: bool) -> tuple[Any, dict[str, Any]]:
    """The PostgreSQL copy of ``vault`` with its ``pgfts`` index; its context and the
    timings."""
    from echo_core.ops.recall_index import ensure_index, rebuild_index
    from echo_core.ops.vault_transfer import import_vault

    url = f"{server}{'&' if '?' in server else '?'}schema={SCHEMA}"
    res: dict[str, Any] = {"schema": SCHEMA}
    files = _vault_files(vault)
    ctx = _context(url, work / "state-pgfts", _env(work, "pgfts"))
    if reuse and _schema_files(server) == files:
        res["import"] = "reused"
        start = time.perf_counter()
        ensure_index(ctx)
        res["ensure_index_s"] = time.perf_counter() - start
    else:
        _drop(server)
        start = time.perf_counter()
        done = import_vault(ctx, str(vault))
        res["import_s"] = time.perf_counter() - start
        res["imported_files"] = done.data.files
        res["indexed_on_import"] = done.data.indexed
        start = time.perf_counter()
        built = rebuild_index(ctx)
        res["reindex_s"] = time.perf_counter() - start
        res["reindexed"] = built.indexed
    assert ctx.ranker_upkeep.name == "pgfts", ctx.ranker_upkeep.name
    return ctx, res


def measure(contexts: dict[str, Any], queries: list[str]) -> dict[str, Any]:
    """Warm ranker-only and whole-recall latency, the systems interleaved per query."""
    from echo_core import WeightedTerm
    from echo_core.ops.recall import recall

    searches: dict[str, Callable[[str], Any]] = {}
    recalls: dict[str, Callable[[str], Any]] = {}
    for name, ctx in contexts.items():
        def search(q: str, ctx: Any = ctx) -> Any:
            terms = [WeightedTerm(t) for t in dict.fromkeys(ctx.tokenizer.tokenize(q))]
            return ctx.ranker_upkeep.search(terms, 10)

        def whole(q: str, ctx: Any = ctx) -> Any:
            return recall(ctx, q, include_linked=False)

        searches[name], recalls[name] = search, whole
        for q in queries[:5]:
            whole(q)
            search(q)
    times: dict[str, dict[str, list[float]]] = {
        name: {"search": [], "recall": []} for name in contexts}
    tops: dict[str, list[list[str]]] = {name: [] for name in contexts}
    for q in queries:
        for name in contexts:
            start = time.perf_counter()
            found = searches[name](q)
            times[name]["search"].append(time.perf_counter() - start)
            tops[name].append([p for p, _ in found])
            start = time.perf_counter()
            recalls[name](q)
            times[name]["recall"].append(time.perf_counter() - start)
    out: dict[str, Any] = {name: {kind: _stats(values) for kind, values in parts.items()}
                           for name, parts in times.items()}
    shared = [len(set(a) & set(b)) / max(len(a), 1)
              for a, b in zip(tops["bm25"], tops["pgfts"], strict=True) if a]
    out["pgfts_share_of_bm25_top10"] = statistics.mean(shared) if shared else 0.0
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, default=DEFAULT_VAULT)
    parser.add_argument("--postgres", metavar="URL",
                        default=os.environ.get("ECHO_TEST_POSTGRES_URL") or None)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--work", type=Path, help="state dirs (default: a temp folder)")
    parser.add_argument("--reuse", action="store_true",
                        help="keep a perf_pgfts schema that already holds the vault")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    args = parser.parse_args(argv)
    if not (args.vault / "_agent").is_dir():
        parser.error(f"{args.vault} is not a kept vault; make one with "
                     "bench/perf_recall.py --sizes 100000 --keep /tmp/b/recall")
    from echo_core.corpus_docs import iter_corpus

    queries = draw_queries(recall_sampler(), args.queries)
    res: dict[str, Any] = {"vault": str(args.vault), "queries": len(queries),
                           "examples": queries[:5]}
    with contextlib.ExitStack() as stack:
        work = args.work or Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="perf-pgfts-")))
        work.mkdir(parents=True, exist_ok=True)
        server = stack.enter_context(_server(args.postgres))
        bm25 = _context(str(args.vault), work / "state-bm25", _env(work, "bm25"))
        start = time.perf_counter()
        persistent = bm25.ranker_upkeep.persistent
        assert persistent is not None
        indexed = persistent.rebuild(iter_corpus(bm25.vault.storage))  # no vault lock
        res["bm25_build"] = {"indexed": indexed, "seconds": time.perf_counter() - start}
        print(f"bm25: indexed {indexed} notes in {res['bm25_build']['seconds']:.1f} s")
        pgfts, res["pgfts_build"] = build_pgfts(args.vault, server, work, args.reuse)
        print(f"pgfts: {res['pgfts_build']}")
        try:
            res["warm"] = measure({"bm25": bm25, "pgfts": pgfts}, queries)
        finally:
            pgfts.vault.storage.close()
    print(f"\nwarm latency at {indexed} notes, {len(queries)} queries (ms):")
    print(f"{'':<8}{'search p50':>11}{'p95':>9}{'max':>9}{'recall p50':>12}{'p95':>9}")
    for name in ("bm25", "pgfts"):
        s, r = res["warm"][name]["search"], res["warm"][name]["recall"]
        print(f"{name:<8}{s['p50_ms']:>11.2f}{s['p95_ms']:>9.2f}{s['max_ms']:>9.2f}"
              f"{r['p50_ms']:>12.2f}{r['p95_ms']:>9.2f}")
    print(f"pgfts returns {res['warm']['pgfts_share_of_bm25_top10']:.0%} of bm25's top 10")
    if args.out:
        args.out.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    return res


if __name__ == "__main__":
    main()
