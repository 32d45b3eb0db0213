"""``QueueContract``: the behaviour every offline outbox (``Queue``) must show.

A mix-in suite (not collected on its own). Subclass it in a ``Test*`` class and override
the ``queue`` fixture::

    from echo_core.testing import QueueContract

    class TestOutbox(QueueContract):
        @pytest.fixture
        def queue(self, tmp_path):
            return OutboxQueue(str(tmp_path))

Record shape. ``put(record)`` takes a mapping of JSON-ready values; ``idempotency_key``
(optional) deduplicates. ``pending()`` returns, oldest first, one mapping per record not
yet ``done``, holding every original field plus:

* ``id`` -- the string ``put`` returned;
* ``state`` -- ``"pending"`` until marked, then ``"needs_attention"``;
* ``detail`` -- the ``detail`` given to ``mark(id, "needs_attention", detail)``.

The keys ``id``, ``state`` and ``detail`` are therefore reserved in records.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.protocols import Queue


def _record(n: int, **extra: Any) -> dict[str, Any]:
    return {"op": "capture", "n": n, "args": {"title": f"Note {n}", "tags": ["a", "b"]}, **extra}


def _by_id(queue: Queue) -> dict[str, Mapping[str, Any]]:
    return {str(rec["id"]): rec for rec in queue.pending()}


class QueueContract:
    """Contract tests for ``echo_core.protocols.Queue`` (see the module doc for shapes).

    Fixture to override:

    * ``queue`` -> a fresh, empty ``Queue`` for each test (e.g. on ``tmp_path``).

    Checks: ``put`` returns a string id; ``pending`` is oldest first and exposes ``id``,
    ``state`` and the original fields; a repeated ``idempotency_key`` returns the same id
    and is queued once; ``done`` removes a record; ``needs_attention`` keeps it visible
    with its detail; an unknown state is an ``EchoError`` with code 2.
    """

    @pytest.fixture
    def queue(self) -> Queue:
        raise NotImplementedError("override the `queue` fixture to build a fresh, empty queue")

    def test_implements_queue_protocol(self, queue: Queue) -> None:
        assert isinstance(queue, Queue)

    def test_new_queue_is_empty(self, queue: Queue) -> None:
        assert list(queue.pending()) == []

    def test_put_returns_distinct_string_ids(self, queue: Queue) -> None:
        ids = [queue.put(_record(n)) for n in range(3)]
        for record_id in ids:
            assert isinstance(record_id, str) and record_id, f"bad id {record_id!r}"
        assert len(set(ids)) == 3, f"ids must be distinct: {ids}"

    def test_pending_is_oldest_first(self, queue: Queue) -> None:
        ids = [queue.put(_record(n)) for n in (3, 1, 2, 10)]
        pending = queue.pending()
        assert [rec["id"] for rec in pending] == ids
        assert [rec["n"] for rec in pending] == [3, 1, 2, 10]

    def test_pending_records_expose_id_state_and_fields(self, queue: Queue) -> None:
        record = _record(7, idempotency_key="k-7", text="Café 東京 🧠\n")
        record_id = queue.put(record)
        (pending,) = queue.pending()
        assert pending["id"] == record_id
        assert pending["state"] == "pending"
        for key, value in record.items():
            assert pending[key] == value, f"field {key!r} changed: {value!r} -> {pending[key]!r}"

    def test_same_idempotency_key_is_queued_once(self, queue: Queue) -> None:
        first = queue.put(_record(1, idempotency_key="capture:abc"))
        queue.put(_record(2, idempotency_key="capture:other"))
        again = queue.put(_record(1, idempotency_key="capture:abc"))
        assert again == first, "a repeated idempotency_key must return the first id"
        keys = [rec["idempotency_key"] for rec in queue.pending()]
        assert keys == ["capture:abc", "capture:other"]

    def test_mark_done_removes_the_record(self, queue: Queue) -> None:
        ids = [queue.put(_record(n)) for n in range(3)]
        queue.mark(ids[1], "done")
        assert [rec["id"] for rec in queue.pending()] == [ids[0], ids[2]]
        queue.mark(ids[0], "done")
        queue.mark(ids[2], "done")
        assert list(queue.pending()) == []

    def test_needs_attention_stays_visible_with_detail(self, queue: Queue) -> None:
        ids = [queue.put(_record(n)) for n in range(2)]
        queue.mark(ids[0], "needs_attention", "conflict: note changed on the server")
        records = _by_id(queue)
        assert set(records) == set(ids), "a record needing attention must stay in pending()"
        flagged = records[ids[0]]
        assert flagged["state"] == "needs_attention"
        assert flagged["detail"] == "conflict: note changed on the server"
        assert flagged["n"] == 0
        assert records[ids[1]]["state"] == "pending"
        assert [rec["id"] for rec in queue.pending()] == ids, "marking must keep the order"

    def test_needs_attention_record_can_later_be_done(self, queue: Queue) -> None:
        record_id = queue.put(_record(1))
        queue.mark(record_id, "needs_attention", "backend said 500")
        queue.mark(record_id, "done")
        assert list(queue.pending()) == []

    @pytest.mark.parametrize("state", ["finished", "", "failed"])
    def test_unknown_state_is_a_usage_error(self, queue: Queue, state: str) -> None:
        record_id = queue.put(_record(1))
        try:
            queue.mark(record_id, state)
        except EchoError as exc:
            assert exc.code == ExitCode.USAGE, f"code {exc.code!r}, expected 2 (usage)"
        else:
            raise AssertionError(f"mark(id, {state!r}) must raise EchoError with code 2")
        assert [rec["id"] for rec in queue.pending()] == [record_id]
