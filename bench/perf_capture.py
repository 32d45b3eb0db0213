"""Capture latency, in-process, on synthetic folder vaults of 1k and 10k notes.

    python bench/perf_capture.py [--sizes 1000 10000] [--captures 200]

Each run: build the vault, warm up (first capture loads the entity index), then time a
mix of creates (new titles, bodies naming existing entities) and updates (existing
titles with a multi-line body). Goal (issue 3): p50 <= 10 ms and no growth 1k -> 10k.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.synthetic_vault import build_vault  # noqa: E402
from echo_core.models import CaptureRequest  # noqa: E402
from echo_core.ops.capture import capture  # noqa: E402


def run(size: int, captures: int) -> dict[str, float]:
    """Time ``captures`` captures on a fresh ``size``-note vault; ms statistics."""
    with tempfile.TemporaryDirectory() as tmp:
        root, state = Path(tmp) / "vault", Path(tmp) / "state"
        ctx = build_vault(root, state, size)
        existing = sorted(ctx.entities.load().entities.values(), key=lambda e: e.slug)
        capture(ctx, CaptureRequest(title="Warm Up Entity", kind="concept", body="warm"))
        times = []
        for i in range(captures):
            other = existing[(i * 37) % len(existing)]
            if i % 2 == 0:
                req = CaptureRequest(title=f"Benchmark Topic {i}", kind="concept",
                                     body=f"Notes about {other.title}.\nSecond line {i}.")
            else:
                req = CaptureRequest(title=other.title, kind=other.kind,
                                     body=f"Update {i}\nline two\nline three")
            start = time.perf_counter()
            envelope = capture(ctx, req)
            times.append((time.perf_counter() - start) * 1000)
            assert envelope.ok, envelope.message
        times.sort()
        return {"notes": size, "captures": captures, "p50_ms": statistics.median(times),
                "p95_ms": times[int(len(times) * 0.95) - 1], "max_ms": times[-1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--captures", type=int, default=200)
    parser.add_argument("--out", type=Path, help="Write the results as JSON here.")
    opts = parser.parse_args()
    results = [run(size, opts.captures) for size in opts.sizes]
    for r in results:
        print(f"{r['notes']:>6} notes: capture p50 {r['p50_ms']:.2f} ms, p95 {r['p95_ms']:.2f} ms, "
              f"max {r['max_ms']:.2f} ms ({r['captures']} captures)")
    if opts.out:
        opts.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
