"""``sweep --apply`` writes its notes in batches, each under a short hold of the vault
lock, and lets the lock go between them (``ops.sweep.batches``): a capture from another
process lands while a long sweep runs instead of waiting for its end; notes saved by
hand between two batches are neither overwritten nor indexed as the sweep wrote them;
the result is the one a sweep in a single batch gives, on a folder vault and on
PostgreSQL (whose note history a batch keeps at once: ``ops.sweep.history_batch``);
killed between two batches, the next sweep finishes the work, nothing torn or doubled."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from echo_core.context import EchoContext, create_context
from echo_core.history import RING_SIZE
from echo_core.history_files import HISTORY_PREFIX
from echo_core.models import CaptureRequest, Envelope
from echo_core.ops.capture import capture
from echo_core.ops.fast_sweep import fast_sweep
from echo_core.ops.recall import query_terms
from echo_core.ops.sweep import SweepResult, batches, full_sweep, history_batch
from echo_core.ops.sweep.model import SweepPhases
from echo_core.ops.transfer_import import import_vault
from tests.capture_kit import VaultBox, isolated_env
from tests.conftest import REPO
from tests.postgres_kit import (
    drop_schema,
    new_schema_name,
    pg_schema_url,
    postgres_server,
    with_schema,
)

__all__ = ["pg_schema_url", "postgres_server"]  # fixtures

NOTES = [f"resources/concepts/n{i}.md" for i in range(1, 7)]
NOW = "2026-03-01T10:00:00"
WRITTEN_AT = 1767268800  # 2026-01-01: the hand-written notes' mtime (their ``created``)


def _text(i: int) -> str:
    related = "\n## Related\n- [[n2]]\n" if i == 1 else ""  # n2 gains a backlink
    return f"# Note {i}\n\nBody {i} about lanterns.\n{related}"


def _vault(tmp_path: Path) -> VaultBox:
    """A vault whose six hand-written notes each need a sweep write."""
    box = VaultBox(tmp_path).init()
    for i, path in enumerate(NOTES, 1):
        target = box.vault / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_text(i), encoding="utf-8")
        os.utime(target, (WRITTEN_AT, WRITTEN_AT))
    return box


def _batches_of(monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    monkeypatch.setattr(batches, "FIRST_BATCH", size)
    monkeypatch.setattr(batches, "MOST_PER_BATCH", size)


class _Watch:
    """The sweep's note writes through ``storage`` counted per outermost hold of its vault
    lock (``holds``), ``at[n]()`` run just before its ``n``-th note write."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, storage: Any,
                 at: dict[int, Callable[[], None]]) -> None:
        self.writes = 0
        self.holds: list[int] = []
        self._depth = 0
        real_write, real_lock = storage.write_unless_changed, storage.lock

        def write_unless_changed(path: str, text: str, expected: str | None) -> bool:
            self.writes += 1
            if self._depth:
                self.holds[-1] += 1
            if self.writes in at:
                at[self.writes]()
            return bool(real_write(path, text, expected))

        @contextlib.contextmanager
        def lock(timeout: float = 10.0) -> Iterator[None]:
            with real_lock(timeout=timeout):
                self._depth += 1
                if self._depth == 1:
                    self.holds.append(0)
                try:
                    yield
                finally:
                    self._depth -= 1

        monkeypatch.setattr(storage, "write_unless_changed", write_unless_changed)
        monkeypatch.setattr(storage, "lock", lock)


def _recalled(ctx: EchoContext, query: str) -> list[str]:
    ranker = ctx.ranker_upkeep.persistent
    assert ranker is not None
    return sorted(p for p, _ in ranker.search(query_terms(ctx, query)[0], 50))


def test_a_capture_from_another_process_lands_between_two_batches_of_a_sweep(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = _vault(tmp_path)
    _batches_of(monkeypatch, 1)  # five times the lock is let go before the end
    other = box.ctx()  # another process's context: its own storage, the same lock
    asking = threading.Event()
    real_lock = other.vault.storage.lock

    def lock(timeout: float = 10.0) -> Any:
        asking.set()
        return real_lock(timeout=timeout)

    monkeypatch.setattr(other.vault.storage, "lock", lock)
    landed: dict[str, Any] = {}

    def capture_elsewhere() -> None:
        landed["capture"] = capture(other, CaptureRequest(
            title="Zephyr Lanterns", kind="concept", body="Lanterns on the zephyr quay."))
        landed["sweep writes by then"] = watch.writes

    elsewhere = threading.Thread(target=capture_elsewhere)

    def start_capture() -> None:  # in the sweep's first batch: the capture waits for it
        elsewhere.start()
        assert asking.wait(10)

    ctx = box.ctx()
    watch = _Watch(monkeypatch, ctx.vault.storage, {1: start_capture})
    swept = full_sweep(ctx, apply=True)
    elsewhere.join(30)
    made: Envelope[Any] = landed["capture"]
    assert swept.ok and made.ok and made.action == "created"
    assert landed["sweep writes by then"] < len(NOTES)  # it did not wait for the sweep's end
    assert sum(watch.holds) == len(NOTES) and max(watch.holds) == 1  # a note per hold
    assert {f.path for f in swept.data.frontmatter} == set(NOTES)
    path = made.data.path
    assert box.index().by_path(path) is not None  # the sweep's index keeps the capture
    assert path in _recalled(box.ctx(), "zephyr")
    after = fast_sweep(box.ctx()).data
    assert (after.new, after.changed, after.gone) == ((), (), ())


def test_notes_saved_by_hand_between_batches_are_kept_and_indexed_as_saved(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = _vault(tmp_path)
    _batches_of(monkeypatch, 2)
    first, last = box.vault / NOTES[0], box.vault / NOTES[-1]

    def saved_by_hand() -> None:  # the first batch wrote n1 and n2; n6 is not written yet
        first.write_text(first.read_text("utf-8").replace(
            "---\n", "---\naliases: [First By Hand]\n", 1), encoding="utf-8")
        with open(last, "a", encoding="utf-8") as note:
            note.write("- added by hand\n")

    ctx = box.ctx()
    _Watch(monkeypatch, ctx.vault.storage, {3: saved_by_hand})
    swept = full_sweep(ctx, apply=True)
    assert swept.ok
    assert box.read(NOTES[-1]) == _text(6) + "- added by hand\n"  # not overwritten
    assert [w for w in swept.warnings if NOTES[-1] in w and "edited while the sweep" in w]
    assert NOTES[-1] not in {f.path for f in swept.data.frontmatter}
    assert "aliases: [First By Hand]" in box.read(NOTES[0])
    entity = box.index().by_path(NOTES[0])
    assert entity is not None and "First By Hand" in entity.aliases  # indexed as saved
    after = fast_sweep(box.ctx()).data
    assert (after.new, after.changed, after.gone) == ((), (), ())  # the baseline is right
    monkeypatch.undo()
    again = full_sweep(box.ctx(), apply=True)
    assert [f.path for f in again.data.frontmatter] == [NOTES[-1]] and not again.warnings
    assert box.read(NOTES[-1]).endswith(_text(6) + "- added by hand\n")


def _report(result: SweepResult) -> SweepResult:
    return attrs.evolve(result, seconds=0.0, phases=SweepPhases())


def _files(box: VaultBox) -> dict[str, bytes]:
    """Every vault file's bytes (not the lock's own files, which are hidden)."""
    return {p.relative_to(box.vault).as_posix(): p.read_bytes()
            for p in sorted(box.vault.rglob("*")) if p.is_file() and not p.name.startswith(".")}


def _kept(ctx: EchoContext) -> dict[str, list[str]]:
    return {path: [ctx.history.text(path, v) for v in ctx.history.versions(path)]
            for path in NOTES}


def test_a_sweep_in_batches_leaves_what_a_sweep_in_one_batch_leaves(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one = _vault(tmp_path / "one")
    many = VaultBox(tmp_path / "many")
    shutil.copytree(one.vault, many.vault, dirs_exist_ok=True)
    _batches_of(monkeypatch, 1)
    in_batches = full_sweep(many.ctx(ECHO_NOW=NOW), apply=True)
    _batches_of(monkeypatch, 1000)
    at_once = full_sweep(one.ctx(ECHO_NOW=NOW), apply=True)
    assert _report(in_batches.data) == _report(at_once.data) and at_once.data.changes
    assert in_batches.message.split(" in ")[0] == at_once.message.split(" in ")[0]
    assert _files(many) == _files(one)
    assert _kept(many.ctx()) == _kept(one.ctx()) == {p: [_text(i)] for i, p in
                                                     enumerate(NOTES, 1)}


@contextlib.contextmanager
def _pg_vault(url: str, folder: Path, state: Path) -> Iterator[EchoContext]:
    env = isolated_env(state / "home", ECHO_NOW=NOW, ECHO_FRESHNESS="off")
    ctx = create_context(vault=url, state_dir=str(state), env=env)
    try:
        assert import_vault(ctx, str(folder)).ok
        for i in range(RING_SIZE):  # n1's ring is full: the sweep's version drops one
            ctx.history.keep(NOTES[0], f"# Note 1, version {i}\n", saved_at=NOW)
        yield ctx
    finally:
        ctx.vault.storage.close()  # type: ignore[attr-defined]


def _pg_files(ctx: EchoContext) -> dict[str, bytes]:
    storage: Any = ctx.vault.storage
    paths = storage.list("") + storage.list_hidden(HISTORY_PREFIX)
    return {p: storage.read_bytes(p) for p in paths}


def test_on_postgres_a_batch_keeps_the_history_note_by_note_keeping_would(
        tmp_path: Path, pg_schema_url: str, postgres_server: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _vault(tmp_path / "folder").vault
    schema = new_schema_name()
    other_url = with_schema(postgres_server, schema)
    try:
        with _pg_vault(pg_schema_url, folder, tmp_path / "a") as batched, \
                _pg_vault(other_url, folder, tmp_path / "b") as one_by_one:
            _batches_of(monkeypatch, 2)
            first = full_sweep(batched, apply=True)
            _batches_of(monkeypatch, 1000)
            monkeypatch.setattr(history_batch, "StorageHistoryFiles", type(None))
            second = full_sweep(one_by_one, apply=True)
            assert _report(first.data) == _report(second.data) and first.data.changes
            assert _pg_files(batched) == _pg_files(one_by_one)
            kept = _kept(batched)
            assert kept[NOTES[0]][0] == _text(1) and len(kept[NOTES[0]]) == RING_SIZE
            assert kept[NOTES[1]] == [_text(2)]
    finally:
        drop_schema(postgres_server, schema)


#: Runs ``sweep --apply`` in batches of two and dies (``os._exit``) as the second begins.
DIES_BETWEEN_BATCHES = """
import os, sys
sys.path.insert(0, {repo!r})
from echo_core.context import create_context
from echo_core.ops.sweep import batches, full_sweep
batches.FIRST_BATCH = batches.MOST_PER_BATCH = 2
kept = batches.keep_priors
calls = []
def keep_priors(ctx, batch):
    calls.append(batch)
    if len(calls) == 2:
        os._exit(9)
    kept(ctx, batch)
batches.keep_priors = keep_priors
full_sweep(create_context(vault={vault!r}, state_dir={state!r}, env={env!r}), apply=True)
"""


def test_a_sweep_killed_between_batches_is_finished_by_the_next_nothing_doubled(
        tmp_path: Path) -> None:
    box = _vault(tmp_path / "killed")
    whole = VaultBox(tmp_path / "whole")
    shutil.copytree(box.vault, whole.vault, dirs_exist_ok=True)
    env = box.env(ECHO_NOW=NOW)
    done = subprocess.run(
        [sys.executable, "-c", DIES_BETWEEN_BATCHES.format(
            repo=str(REPO), vault=str(box.vault), state=str(box.state), env=env)],
        capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 9, done.stderr
    assert [box.read(p).startswith("---\n") for p in NOTES] == [True, True] + [False] * 4
    assert [box.read(p) for p in NOTES[2:]] == [_text(i) for i in range(3, 7)]
    finished = full_sweep(box.ctx(ECHO_NOW=NOW), apply=True)
    assert [f.path for f in finished.data.frontmatter] == NOTES[2:] and not finished.warnings
    assert full_sweep(whole.ctx(ECHO_NOW=NOW), apply=True).data.changes
    assert _files(box) == _files(whole)  # as one uninterrupted sweep leaves it
    assert box.read(NOTES[1]).count("[[n1]]") == 1
    assert _kept(box.ctx()) == {p: [_text(i)] for i, p in enumerate(NOTES, 1)}
    again = full_sweep(box.ctx(ECHO_NOW=NOW), apply=True)
    assert again.action == "unchanged" and again.data.changes == 0
