"""Recall hits counted per note, in the state dir (issue 16: the input of ``heat``).

Every ``recall`` through the verb layer (CLI, MCP) appends ONE line to
``<state_dir>/recall-hits.ndjson``: ``{"d": "<today>", "p": [<primary hit paths>]}``
(linked notes are not hits). One ``O_APPEND`` write of a short line per recall, never a
read-modify-write, and never an error: a failure to count is swallowed, recall answers
as always. ``compact_hits`` (run by ``heat``, or by ``record_hits`` once the file passes
``COMPACT_BYTES``) folds the lines into one ``{"d": day, "c": {path: n}}`` line per day
and drops days older than ``KEEP_DAYS``. Counts are advisory: a recall that appends while
a compaction rewrites the file may go uncounted.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from echo_core.tempfiles import temp_name

if TYPE_CHECKING:
    from echo_core.context import EchoContext
    from echo_core.models import Envelope

HITS_FILE = "recall-hits.ndjson"
KEEP_DAYS = 180
COMPACT_BYTES = 1_000_000


@attrs.frozen
class NoteHits:
    """Recall hits of one note in a window: how many, and the last day it was hit."""

    path: str
    hits: int
    last: str


def record_hits(state_dir: Path, day: _dt.date, paths: Iterable[str]) -> None:
    """Append the line for one recall that returned ``paths`` (none: nothing written).
    Never raises."""
    unique = list(dict.fromkeys(p for p in paths if isinstance(p, str) and p))
    if not unique:
        return
    line = json.dumps({"d": day.isoformat(), "p": unique}, ensure_ascii=False) + "\n"
    target = state_dir / HITS_FILE
    try:
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
        if size > COMPACT_BYTES:
            compact_hits(state_dir, day)
    except OSError:
        return


def count_recall_hits(ctx: EchoContext, envelope: Envelope[Any]) -> Envelope[Any]:
    """Count the primary hits of a recall's ``envelope`` and return it unchanged (the one
    line ``run_recall`` calls). Never raises."""
    try:
        primary = getattr(envelope.data, "primary", None) or ()
        record_hits(ctx.state_dir, ctx.today(), (getattr(h, "path", "") for h in primary))
    except Exception:  # noqa: BLE001, S110 - counting never fails a recall
        pass
    return envelope


def _lines(state_dir: Path) -> Iterator[tuple[str, Counter[str]]]:
    """(day, counts) of every readable line."""
    try:
        text = (state_dir / HITS_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(record, dict) or not isinstance(record.get("d"), str):
            continue
        counts: Counter[str] = Counter()
        if isinstance(record.get("p"), list):
            counts.update(p for p in record["p"] if isinstance(p, str))
        if isinstance(record.get("c"), dict):
            for path, n in record["c"].items():
                if isinstance(n, int) and n > 0:
                    counts[path] += n
        yield record["d"], counts


def hits_since(state_dir: Path, since: _dt.date) -> dict[str, NoteHits]:
    """path -> its hits on ``since`` or later."""
    first = since.isoformat()
    total: Counter[str] = Counter()
    last: dict[str, str] = {}
    for day, counts in _lines(state_dir):
        if day < first:
            continue
        total.update(counts)
        for path in counts:
            last[path] = max(day, last.get(path, day))
    return {p: NoteHits(p, n, last[p]) for p, n in total.items()}


def compact_hits(state_dir: Path, today: _dt.date) -> None:
    """One line per day (``c`` counts), days older than ``KEEP_DAYS`` dropped (atomic
    replace). Never raises."""
    keep = (today - _dt.timedelta(days=KEEP_DAYS)).isoformat()
    by_day: dict[str, Counter[str]] = {}
    for day, counts in _lines(state_dir):
        if day >= keep:
            by_day.setdefault(day, Counter()).update(counts)
    target = state_dir / HITS_FILE
    text = "".join(json.dumps({"d": day, "c": dict(sorted(c.items()))}, ensure_ascii=False)
                   + "\n" for day, c in sorted(by_day.items()))
    tmp = target.with_name(temp_name(HITS_FILE))
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, target)
    except OSError:
        return
