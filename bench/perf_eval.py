"""How long ``echo-memory eval`` takes, and what it reports, on a generated vault.

    python bench/perf_eval.py [--notes 1000] [--queries 200] [--runs 3]

The vault (``write_eval_vault``, deterministic for a seed): entity notes of five kinds
(90%) and journal notes (10%), titles of 1-3 Zipfian pseudo-words (so some repeat), an
alias on 30% of the entities, one or two ``##`` sections of their own besides the
template's ``## Notes`` / ``## Related``, sentences of Zipfian content words among English
stopwords, and the matching entity index; the recall index is built before timing.

Per run: the wall time of ``self_eval(ctx, queries=N, save=False)`` in this process (the
first run opens the index and warms the tokenizer's cache; later runs are warm), then the
figures of the last run, per kind. The issue's bound: <= 30 s at 1,000 notes.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.synthetic_vault import FILLERS, KINDS, ZipfSampler, vocabulary
from echo_core.context import EchoContext, create_context
from echo_core.entities import EntityIndex, EntityStore
from echo_core.models import Entity
from echo_core.names import slugify
from echo_core.ops.init import init_vault
from echo_core.ops.recall_index import rebuild_index
from echo_core.ops.self_eval import self_eval

BOUND_S = 30.0


def _sentences(sampler: ZipfSampler, rng: random.Random, count: int) -> str:
    """``count`` words in sentences of 6-20 words, about a third of them stopwords."""
    out: list[str] = []
    while count > 0:
        size = min(count, rng.randint(6, 20))
        words = [rng.choice(FILLERS) if rng.random() < 0.35 else sampler.draw(rng, 1)[0]
                 for _ in range(size)]
        out.append(" ".join(words).capitalize() + ".")
        count -= size
    return " ".join(out)


def write_eval_vault(ctx: EchoContext, root: Path, notes: int, seed: int = 5) -> list[str]:
    """Write ``notes`` notes into the initialised vault at ``root`` (``ctx`` opens it) and
    their entity index; returns the paths written. The recall index is not touched."""
    rng = random.Random(seed)
    words = vocabulary(20000, rng)
    rng.shuffle(words)
    sampler = ZipfSampler(words)
    index = EntityIndex()
    paths: list[str] = []
    for i in range(notes):
        title = " ".join(w.title() for w in sampler.draw(rng, rng.randint(1, 3)))
        if i % 10 == 9:
            day = f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}"
            path, kind, aliases = f"journal/daily/{day}-{i}.md", "daily", []
            title = f"Journal {day}"
        else:
            kind, folder = KINDS[i % len(KINDS)]
            path = f"{folder}/{slugify(title)}-{i}.md"
            aliases = ([" ".join(w.title() for w in sampler.draw(rng, 2))]
                       if rng.random() < 0.3 else [])
        sections = "".join(
            f"## {' '.join(w.title() for w in sampler.draw(rng, rng.randint(1, 3)))}\n\n"
            f"{_sentences(sampler, rng, rng.randint(15, 60))}\n\n"
            for _ in range(rng.randint(1, 2)))
        text = (f"---\ntype: {kind}\nstatus: active\ncreated: 2025-01-01\n"
                f"updated: 2025-{1 + i % 12:02d}-15\ntags: [{kind}]\n"
                + (f"aliases: [{aliases[0]}]\n" if aliases else "")
                + f"---\n# {title}\n\n{_sentences(sampler, rng, rng.randint(20, 120))}\n\n"
                + sections + "## Notes\n\n## Related\n")
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        if kind != "daily":
            index.put(Entity(slug=path.rsplit("/", 1)[-1][:-3], path=path, kind=kind,
                             title=title, aliases=tuple(aliases)))
        paths.append(path)
    EntityStore(ctx.storage).compact(index)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="perf-eval-") as tmp:
        work = Path(tmp)
        vault, state = work / "vault", work / "state"
        env = {"ECHO_TODAY": "2026-03-01", "ECHO_NOW": "2026-03-01T12:00:00",
               "HOME": str(work / "home"), "ECHO_CONFIG": str(work / "none.toml")}
        ctx = create_context(vault=str(vault), state_dir=str(state), env=env)
        init_vault(ctx)
        start = time.perf_counter()
        write_eval_vault(ctx, vault, args.notes)
        built = rebuild_index(ctx)
        print(f"vault: {args.notes} notes written and indexed in "
              f"{time.perf_counter() - start:.2f} s ({built.indexed} in the index)")
        times: list[float] = []
        result = None
        for _ in range(args.runs):
            ctx = create_context(vault=str(vault), state_dir=str(state), env=env)
            start = time.perf_counter()
            envelope = self_eval(ctx, queries=args.queries, save=False)
            times.append(time.perf_counter() - start)
            result = envelope.data
        assert result is not None
        print(f"eval --queries {args.queries}: first {times[0]:.2f} s, median "
              f"{statistics.median(times):.2f} s over {len(times)} runs "
              f"(bound {BOUND_S:.0f} s: {'ok' if max(times) <= BOUND_S else 'OVER'})")
        print(f"asked {result.queries} queries from {result.notes} of {result.corpus} notes: "
              f"R@5 {result.r5:.3f}  R@10 {result.r10:.3f}  MRR {result.mrr:.3f}")
        for kind in result.kinds:
            print(f"  {kind.kind:<9} {kind.queries:>4} queries  R@5 {kind.r5:.3f}  "
                  f"R@10 {kind.r10:.3f}  MRR {kind.mrr:.3f}")


if __name__ == "__main__":
    main()
