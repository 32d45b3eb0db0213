"""The trend of ``eval`` (``echo_core.ops.self_eval``): one JSON line per saved run in
``<state dir>/eval/history.jsonl``.

A line holds when the run was made (``ctx.now()``, so ``ECHO_NOW`` pins it), its figures
(R@5, R@10, MRR@10, overall and per kind of query) and a short fingerprint of what was
measured (ranker, tokenizer, corpus notes, queries asked, notes they came from). Lines are
appended atomically (``O_APPEND``, one ``write`` per line; a torn last line from a crash is
closed first so the next line stays whole). Reading skips any line that is not such a
record (garbage, a torn write, a record of another shape); it never fails on one.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import attrs

from echo_core.ops.self_eval_queries import KINDS

FOLDER = "eval"
FILE_NAME = "history.jsonl"


@attrs.frozen
class KindFigures:
    """R@5, R@10 and MRR@10 over the ``queries`` of one kind (or of all: kind ``all``)."""

    kind: str
    queries: int
    r5: float
    r10: float
    mrr: float


@attrs.frozen
class EvalRecord:
    """One run as the history keeps it: ``at`` (ISO date-time), the overall figures, the
    per-kind ones, and the fingerprint (ranker, tokenizer, corpus, queries, notes)."""

    at: str
    r5: float
    r10: float
    mrr: float
    ranker: str
    tokenizer: str
    corpus: int
    queries: int
    notes: int
    seconds: float
    kinds: tuple[KindFigures, ...] = ()

    @property
    def day(self) -> str:
        """The date part of ``at`` (``YYYY-MM-DD``)."""
        return self.at[:10]


def history_path(state_dir: Path) -> Path:
    """Where the history of the vault whose state dir is ``state_dir`` lives."""
    return state_dir / FOLDER / FILE_NAME


def _line(record: EvalRecord) -> str:
    data = attrs.asdict(record, recurse=True)
    data["kinds"] = {k["kind"]: {n: v for n, v in k.items() if n != "kind"} for k in data["kinds"]}
    return json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n"


def append_record(state_dir: Path, record: EvalRecord) -> Path:
    """Append ``record`` as one line (folder and file made when absent, the file 0600).
    Errors: ``OSError`` when the state dir cannot be written."""
    path = history_path(state_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        data = _line(record).encode("utf-8")
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data  # a torn line before ours stays apart from it
        os.write(fd, data)
    finally:
        os.close(fd)
    return path


def read_records(state_dir: Path) -> list[EvalRecord]:
    """Every well-formed record of the history, oldest first ([] when there is none).
    Errors: ``OSError`` when the file exists but cannot be read."""
    path = history_path(state_dir)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    records = []
    for line in raw.splitlines():
        record = parse_record(line)
        if record is not None:
            records.append(record)
    return records


def parse_record(line: bytes | str) -> EvalRecord | None:
    """The record on ``line``, or None when the line is not one."""
    try:
        data = json.loads(line)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    try:
        kinds = data.get("kinds", {})
        if not isinstance(kinds, dict):
            return None
        return EvalRecord(
            at=_text(data["at"]), r5=_share(data["r5"]), r10=_share(data["r10"]),
            mrr=_share(data["mrr"]), ranker=_text(data["ranker"]),
            tokenizer=_text(data["tokenizer"]), corpus=_count(data["corpus"]),
            queries=_count(data["queries"]), notes=_count(data["notes"]),
            seconds=_number(data["seconds"]),
            kinds=tuple(_kind(name, value) for name, value in sorted(kinds.items(), key=_order)))
    except (KeyError, TypeError, ValueError):
        return None


def _order(item: tuple[Any, Any]) -> tuple[int, str]:
    """``KINDS`` order, then any other kind by name."""
    name = str(item[0])
    return (KINDS.index(name) if name in KINDS else len(KINDS), name)


def _kind(name: Any, value: Any) -> KindFigures:
    if not isinstance(value, dict):
        raise TypeError("a kind's figures are an object")
    return KindFigures(_text(name), _count(value["queries"]), _share(value["r5"]),
                       _share(value["r10"]), _share(value["mrr"]))


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("not a string")
    return value


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise TypeError("not a finite number")
    return float(value)


def _share(value: Any) -> float:
    number = _number(value)
    if not 0.0 <= number <= 1.0:
        raise ValueError("not within 0..1")
    return number


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TypeError("not a count")
    return value
