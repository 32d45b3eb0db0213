"""A loom writer process for the kill -9 tests: appends records until killed, printing
each record's id once its append has returned (acknowledged).

    python -m tests.habitat_loom_writer LOOM_DIR SEED THREADS [direct|group]

``group``: THREADS threads append through one ``GroupCommitter`` (the server's path);
``direct``: one thread, ``Loom.append`` per batch. Batches of 1-5 records, some with
long texts (several writes per append). Not a test module.
"""

from __future__ import annotations

import datetime as _dt
import random
import sys
import threading
from pathlib import Path

from plugins.habitat.group_commit import GroupCommitter
from plugins.habitat.loom import Loom
from plugins.habitat.record import Record

_OUT = threading.Lock()


def _batch(rng: random.Random, seed: int, n: int) -> list[Record]:
    size = rng.randint(1, 5)
    out = []
    for i in range(size):
        text = f"w{seed}-{n}-{i} " + "x" * rng.choice((10, 100, 9000))
        out.append(Record.new(ts=_dt.datetime(2026, 3, 1, 9, 30), kind="note",
                              agent_id=f"writer-{seed}", session_id=f"s{seed}", text=text))
    return out


def _run(append: object, seed: int, thread: int) -> None:
    rng = random.Random(seed * 1000 + thread)
    n = 0
    while True:
        batch = _batch(rng, seed, n)
        append(batch)  # type: ignore[operator]
        with _OUT:
            sys.stdout.write("".join(f"{r.id}\n" for r in batch))
            sys.stdout.flush()
        n += 1


def main() -> None:
    root, seed, threads = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    mode = sys.argv[4] if len(sys.argv) > 4 else "group"
    loom = Loom(root)
    append = GroupCommitter(loom).append if mode == "group" else loom.append
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    workers = [threading.Thread(target=_run, args=(append, seed, t), daemon=True)
               for t in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


if __name__ == "__main__":
    main()
