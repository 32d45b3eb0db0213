"""``OutboxQueue``: an append-only NDJSON outbox, fsynced per record.

File ``<state_dir>/outbox.ndjson``. Each line is either a record
``{"kind": "record", "id", "ts", ...fields}`` or a state change
``{"kind": "state", "id", "state", "detail"}``; the current state of a record is its last
state line. Appends hold an exclusive ``flock`` on the file so processes never interleave;
a torn last line (a crash mid-append) is ignored on read, so a record is either fully
queued or not queued at all. When every record is done and the file is over
``COMPACT_BYTES``, it is truncated (atomically, under the same lock).
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from echo_core import usage_error

FILE_NAME = "outbox.ndjson"
STATES = ("pending", "done", "needs_attention")
RESERVED = ("id", "state", "detail", "kind")
COMPACT_BYTES = 1 << 20


class OutboxQueue:
    """The ``echo_core.protocols.Queue`` of the state dir ``state_dir``."""

    def __init__(self, state_dir: str) -> None:
        self.path = Path(state_dir) / FILE_NAME

    @contextmanager
    def _locked(self) -> Iterator[int]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield fd
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def _lines(self) -> list[dict[str, Any]]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        out = []
        for line in raw.split(b"\n"):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue  # torn by a crash mid-append: that write never completed
            if isinstance(item, dict) and "id" in item:
                out.append(item)
        return out

    def _state(self) -> tuple[dict[str, dict[str, Any]], dict[str, tuple[str, str]]]:
        records: dict[str, dict[str, Any]] = {}
        states: dict[str, tuple[str, str]] = {}
        for item in self._lines():
            if item.get("kind") == "record":
                records[str(item["id"])] = item
                states.setdefault(str(item["id"]), ("pending", ""))
            elif item.get("kind") == "state":
                states[str(item["id"])] = (str(item.get("state")), str(item.get("detail", "")))
        return records, states

    @staticmethod
    def _append(fd: int, item: Mapping[str, Any]) -> None:
        data = (json.dumps(item, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
        os.write(fd, data)
        os.fsync(fd)

    def put(self, record: Mapping[str, Any]) -> str:
        """Queue ``record`` durably and return its id. A record whose ``idempotency_key``
        matches one not yet done returns that record's id and queues nothing."""
        bad = [k for k in record if k in RESERVED]
        if bad:
            raise usage_error(f"outbox record: reserved field(s) {', '.join(bad)}")
        key = record.get("idempotency_key")
        with self._locked() as fd:
            if key is not None:
                records, states = self._state()
                for rid, rec in records.items():
                    if rec.get("idempotency_key") == key and states[rid][0] != "done":
                        return rid
            rid = os.urandom(8).hex()  # 16 hex digits, as uuid4().hex[:16] gave
            self._append(fd, {**record, "kind": "record", "id": rid, "ts": time.time()})
            return rid

    def pending(self) -> list[Mapping[str, Any]]:
        """Records not done, oldest first, with ``id``, ``state`` and ``detail``."""
        records, states = self._state()
        out: list[Mapping[str, Any]] = []
        for rid, rec in records.items():
            state, detail = states[rid]
            if state != "done":
                view = {k: v for k, v in rec.items() if k != "kind"}
                out.append({**view, "id": rid, "state": state, "detail": detail})
        return out

    def mark(self, record_id: str, state: str, detail: str = "") -> None:
        """Record a replay outcome: ``done`` or ``needs_attention`` (code 2 otherwise)."""
        if state not in ("done", "needs_attention"):
            raise usage_error(f"state: {state!r} is not one of done, needs_attention")
        with self._locked() as fd:
            self._append(fd, {"kind": "state", "id": record_id, "state": state, "detail": detail})
            self._compact_if_drained(fd)

    def _compact_if_drained(self, fd: int) -> None:
        if os.fstat(fd).st_size < COMPACT_BYTES:
            return
        records, states = self._state()
        if any(states[r][0] != "done" for r in records):
            return
        os.ftruncate(fd, 0)
        os.fsync(fd)

    def depth(self) -> int:
        """How many records are not done."""
        return len(self.pending())
