"""Throughput of ``reflect corpus`` (issue 17 item 3): transcripts/s and MB/s.

    python bench/perf_reflect_corpus.py [--transcripts 2000] [--min-kb 2] [--max-kb 3000]
                                        [--batch 50] [--seed 17] [--keep DIR [--reuse]]

Generates ``--transcripts`` Claude Code transcripts with ``tests.transcript_kit`` (seeded;
sizes log-uniform from ``--min-kb`` to ``--max-kb``: most a few tens of KB, some a few
MB, like a real ~/.claude/projects), then times, each in a fresh process as the CLI runs
it (``mine_corpus``: no vault involved, a dry run writes nothing to one):

* cold: a full run with no state file (every transcript read, hashed, mined, merged;
  the state saved after each batch);
* resumed no-op: the same run again (every transcript stat-ed, none read);
* touched: every transcript's time changed, same bytes (each read and hashed, none mined).

The OS page cache is warm (the files were just written); the numbers are reading +
parsing + rules, not disk.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.machine_speed import speed_line
from tests.transcript_kit import write_corpus

_RUN = """
import json, sys, time
from echo_core.ops.reflect_corpus import mine_corpus
started = time.perf_counter()
scan = mine_corpus(sys.argv[1], sys.argv[2], batch=int(sys.argv[3]))
print(json.dumps({"seconds": time.perf_counter() - started, "mined": scan.mined,
                  "reused": scan.reused, "bytes": scan.bytes_read, "batches": scan.batches,
                  "proposals": len(scan.proposals), "skipped": len(scan.skipped),
                  "occurrences": sum(p.occurrences for p in scan.proposals)}))
"""


def _run(root: Path, state: Path, batch: int) -> dict[str, float]:
    proc = subprocess.run([sys.executable, "-c", _RUN, str(root), str(state), str(batch)],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(proc.stdout)
    return result


def _line(label: str, r: dict[str, float], count: int, total_bytes: int) -> str:
    s = r["seconds"]
    return (f"{label:<16} {s:7.2f} s  {count / s:8.1f} transcripts/s  "
            f"{total_bytes / 1e6 / s:7.1f} MB/s (of the corpus)  mined {int(r['mined'])}, "
            f"read {r['bytes'] / 1e6:.1f} MB, {int(r['batches'])} state saves")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transcripts", type=int, default=2000)
    parser.add_argument("--min-kb", type=int, default=2)
    parser.add_argument("--max-kb", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--keep", type=Path, help="keep the corpus in this folder")
    parser.add_argument("--reuse", action="store_true", help="reuse the corpus in --keep")
    args = parser.parse_args(argv)

    work = args.keep or Path(tempfile.mkdtemp(prefix="perf-reflect-corpus-"))
    root, state = work / "projects", work / "reflect-corpus.json"
    try:
        if not (args.reuse and root.is_dir()):
            shutil.rmtree(root, ignore_errors=True)
            started = time.perf_counter()
            write_corpus(root, args.seed, args.transcripts, min_bytes=args.min_kb * 1000,
                         max_bytes=args.max_kb * 1000)
            print(f"generated {args.transcripts} transcripts in "
                  f"{time.perf_counter() - started:.1f} s")
        files = sorted(root.rglob("*.jsonl"))
        sizes = sorted(p.stat().st_size for p in files)
        total = sum(sizes)
        print(f"corpus: {len(files)} transcripts, {total / 1e6:.1f} MB (median "
              f"{sizes[len(sizes) // 2] / 1e3:.0f} KB, largest {sizes[-1] / 1e6:.1f} MB)")
        print(speed_line())
        state.unlink(missing_ok=True)
        cold = _run(root, state, args.batch)
        print(_line("cold", cold, len(files), total))
        print(f"                 {int(cold['proposals'])} proposals ({int(cold['occurrences'])}"
              f" occurrences), {int(cold['skipped'])} skipped; state file "
              f"{state.stat().st_size / 1e6:.1f} MB")
        print(_line("resumed no-op", _run(root, state, args.batch), len(files), total))
        for path in files:
            st = path.stat()
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        print(_line("touched (hash)", _run(root, state, args.batch), len(files), total))
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
