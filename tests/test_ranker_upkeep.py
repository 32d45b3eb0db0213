"""The core builds any registered ranker when absent and keeps it current on note writes
and deletions, with no listener of the ranker's own (issue 12, item 3)."""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs
import pytest

from echo_core import hookimpl, ranker_changes
from echo_core.context import EchoContext, create_context
from echo_core.corpus import corpus_paths
from echo_core.models import CaptureRequest
from echo_core.ops.capture import capture
from echo_core.ops.init import init_vault
from echo_core.ops.recall import recall
from echo_core.ops.recall_index import ensure_index, rebuild_index
from echo_core.plugins import create_host
from echo_core.protocols import IndexDoc, Tokenizer, WeightedTerm
from echo_core.ranker_changes import LogMark, NoteChangeLog
from tests.test_recall import CountingRanker as PlainRanker

NOTE = "---\ntype: concept\nstatus: active\nupdated: 2026-02-01\n---\n# {title}\n\n{body}\n"


class CountingRanker(PlainRanker):
    """A plain in-memory ranker (no listeners) that counts upserts per path. Its
    ``search`` iterates a dict, so unserialised concurrent upserts would break it."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        super().__init__(tokenizer)
        self.upserts: Counter[str] = Counter()

    def upsert(self, doc: IndexDoc) -> None:
        self.upserts[doc.path] += 1
        super().upsert(doc)


class CountingRankerPlugin:
    """Registers ``counting``; a fresh ranker per factory call (a new plugin instance
    stands for a new process: the core keys its shared plain ranker by the factory)."""

    def __init__(self) -> None:
        self.made: list[CountingRanker] = []

    @hookimpl
    def register_rankers(self, register: Any) -> None:
        register("counting", self.factory)

    def factory(self, tokenizer: Tokenizer, state_dir: str) -> CountingRanker:
        ranker = CountingRanker(tokenizer)
        self.made.append(ranker)
        return ranker


def _refuse(doc: IndexDoc) -> None:
    raise RuntimeError("index full")


class FakePersistentRanker(CountingRanker):
    """A ``PersistentRanker`` shape, to count how often the core opens one."""

    def needs_rebuild(self) -> bool:
        return False

    def rebuild(self, docs: Iterable[IndexDoc], progress: Any = None) -> int:
        return 0

    def set_today(self, today_ordinal: int) -> None:
        pass

    def paths(self) -> list[str]:
        return sorted(self.docs)


def make_ctx(tmp_path: Path, plugin: object, *, strict: bool = True) -> EchoContext:
    config = tmp_path / "config.toml"
    config.write_text('recall = "counting"\n')
    env = {"HOME": str(tmp_path / "home"), "ECHO_CONFIG": str(config),
           "ECHO_TODAY": "2026-03-01"}
    host = create_host(env=env, strict=strict, extra=[("counting_ranker", plugin)])
    ctx = create_context(vault=str(tmp_path / "vault"), state_dir=str(tmp_path / "state"),
                         env=env, host=host)
    init_vault(ctx)
    return ctx


def put(ctx: EchoContext, path: str, title: str, body: str) -> None:
    ctx.vault.write_note(path, NOTE.format(title=title, body=body))


def paths_of(ctx: EchoContext, query: str) -> list[str]:
    return [h.path for h in recall(ctx, query, include_linked=False).data.primary]


def test_a_plain_ranker_finds_existing_notes_in_a_fresh_process(tmp_path: Path) -> None:
    put(make_ctx(tmp_path, CountingRankerPlugin()), "notes/kiwi.md", "Kiwi", "kiwi orchard")
    fresh = make_ctx(tmp_path, CountingRankerPlugin())  # another factory: a new process
    result = recall(fresh, "kiwi", include_linked=False).data
    assert [h.path for h in result.primary] == ["notes/kiwi.md"]
    assert result.rebuilt_index
    assert not recall(fresh, "kiwi").data.rebuilt_index  # built once per process


def test_a_note_written_after_the_first_search_is_found(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, CountingRankerPlugin())
    assert paths_of(ctx, "cobalt") == []
    capture(ctx, CaptureRequest(title="Cobalt Migration", kind="project", body="cobalt soon"))
    found = paths_of(ctx, "cobalt")
    assert found and found[0].endswith("/cobalt-migration.md"), found


def test_a_note_written_before_the_first_search_is_indexed_once(tmp_path: Path) -> None:
    plugin = CountingRankerPlugin()
    ctx = make_ctx(tmp_path, plugin)
    env = capture(ctx, CaptureRequest(title="Harbor Registry", kind="concept", body="harbor"))
    assert env.ok
    found = [p for p in paths_of(ctx, "harbor") if p.endswith("/harbor-registry.md")]
    assert len(found) == 1, found
    (ranker,) = plugin.made
    assert ranker.upserts[found[0]] == 1  # the build read it; the write did not add it too


def test_a_deleted_note_leaves_the_plain_ranker(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, CountingRankerPlugin())
    put(ctx, "notes/kiwi.md", "Kiwi", "kiwi")
    assert paths_of(ctx, "kiwi") == ["notes/kiwi.md"]
    ctx.vault.delete_note("notes/kiwi.md")
    assert paths_of(ctx, "kiwi") == []
    put(ctx, "notes/kiwi.md", "Kiwi", "kiwi")
    ctx.vault.write_note("templates/kiwi.md", "kiwi\n")  # outside the corpus: never indexed
    assert paths_of(ctx, "kiwi") == ["notes/kiwi.md"]


def test_contexts_of_one_process_share_one_plain_ranker(tmp_path: Path) -> None:
    plugin = CountingRankerPlugin()
    writer, reader = make_ctx(tmp_path, plugin), make_ctx(tmp_path, plugin)
    assert paths_of(reader, "kiwi") == []
    put(writer, "notes/kiwi.md", "Kiwi", "kiwi")
    assert paths_of(reader, "kiwi") == ["notes/kiwi.md"]
    assert len(plugin.made) == 1 and writer.ranker is reader.ranker


def test_reindex_replaces_the_plain_ranker_with_the_corpus(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, CountingRankerPlugin())
    put(ctx, "notes/kiwi.md", "Kiwi", "kiwi")
    assert paths_of(ctx, "kiwi") == ["notes/kiwi.md"]
    (tmp_path / "vault" / "notes" / "kiwi.md").unlink()  # behind the core's back
    assert rebuild_index(ctx).indexed == len(corpus_paths(ctx.vault.storage))
    assert paths_of(ctx, "kiwi") == []


def test_ensure_index_builds_a_plain_ranker_once(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, CountingRankerPlugin())
    assert ensure_index(ctx) is True
    assert ensure_index(ctx) is False


def test_a_failing_ranker_never_fails_the_write(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    plugin = CountingRankerPlugin()
    ctx = make_ctx(tmp_path, plugin, strict=False)
    assert paths_of(ctx, "kiwi") == []
    plugin.made[0].upsert = _refuse  # type: ignore[method-assign]
    with caplog.at_level(logging.WARNING, logger="echo_memory"):
        put(ctx, "notes/kiwi.md", "Kiwi", "kiwi")
    assert (tmp_path / "vault" / "notes" / "kiwi.md").exists()
    assert "was not indexed" in caplog.text and "reindex" in caplog.text


def test_a_persistent_ranker_is_opened_once_per_context_not_per_write(tmp_path: Path) -> None:
    made: list[FakePersistentRanker] = []

    class Plugin:
        @hookimpl
        def register_rankers(self, register: Any) -> None:
            register("counting", lambda tok, folder: made.append(FakePersistentRanker(tok))
                     or made[-1])

    ctx = make_ctx(tmp_path, Plugin())
    for i in range(3):
        put(ctx, f"notes/n{i}.md", f"N{i}", "kiwi")
    assert paths_of(ctx, "kiwi") == ["notes/n0.md", "notes/n1.md", "notes/n2.md"]
    assert len(made) == 1
    assert [made[0].upserts[f"notes/n{i}.md"] for i in range(3)] == [1, 1, 1]


def test_concurrent_writes_and_searches_of_a_plain_ranker_are_serialised(
    tmp_path: Path,
) -> None:
    plugin = CountingRankerPlugin()
    ctx = make_ctx(tmp_path, plugin)
    ensure_index(ctx)
    shared, errors = ctx.ranker_upkeep.shared, []
    assert shared is not None
    docs = [IndexDoc(path=f"notes/n{i}.md", title="n", text="kiwi") for i in range(2000)]

    def write() -> None:
        for doc in docs:
            shared.note_changed(doc.path, doc)

    def search() -> None:
        try:
            for _ in range(300):
                shared.search([WeightedTerm("kiwi")], 5)
        except RuntimeError as exc:  # "dictionary changed size during iteration"
            errors.append(exc)

    threads = [threading.Thread(target=write), threading.Thread(target=search)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert set(plugin.made[0].docs) >= {doc.path for doc in docs}


def test_a_long_running_plain_ranker_sees_notes_other_processes_change(tmp_path: Path) -> None:
    server = make_ctx(tmp_path, CountingRankerPlugin())  # e.g. the MCP server
    assert paths_of(server, "kiwi") == []
    hook = make_ctx(tmp_path, CountingRankerPlugin())  # another process: a CLI capture
    put(hook, "notes/kiwi.md", "Kiwi", "kiwi")
    result = recall(server, "kiwi", include_linked=False).data
    assert [h.path for h in result.primary] == ["notes/kiwi.md"] and not result.rebuilt_index
    hook.vault.delete_note("notes/kiwi.md")
    assert paths_of(server, "kiwi") == []


def test_a_replaced_change_log_makes_a_plain_ranker_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ranker_changes, "MAX_BYTES", 40)
    server = make_ctx(tmp_path, CountingRankerPlugin())
    assert paths_of(server, "kiwi") == []
    hook = make_ctx(tmp_path, CountingRankerPlugin())
    for i in range(4):  # past 40 bytes: the log is replaced, the server's mark is stale
        put(hook, f"notes/kiwi-{i}.md", "Kiwi", "kiwi")
    result = recall(server, "kiwi", include_linked=False).data
    assert result.rebuilt_index
    assert [h.path for h in result.primary] == [f"notes/kiwi-{i}.md" for i in range(4)]


def test_change_log_reads_complete_new_lines_once(tmp_path: Path) -> None:
    log = NoteChangeLog(tmp_path)
    assert log.read_since(LogMark()) == ([], LogMark())
    start = log.mark()
    for path in ("a.md", "b.md", "a.md"):
        log.append(path)
    with open(log.path, "ab") as half:
        half.write(b"c.m")  # a line still being written is left for the next read
    paths, mark = log.read_since(start)
    assert paths == ["a.md", "b.md"]
    assert log.read_since(mark)[0] == []
    with open(log.path, "ab") as rest:
        rest.write(b"d\n")
    assert log.read_since(mark)[0] == ["c.md"]


def test_change_log_over_its_size_is_replaced_and_readers_told(tmp_path: Path) -> None:
    log = NoteChangeLog(tmp_path, max_bytes=10)
    log.append("notes/first.md")
    mark = log.mark()
    log.append("notes/second.md")  # the log is over 10 bytes: a new file
    paths, new_mark = log.read_since(mark)
    assert paths is None and new_mark == log.mark()
    assert log.read_since(LogMark())[0] == ["notes/second.md"]


def test_a_replaced_log_that_reuses_the_old_inode_number_is_still_seen_as_replaced(
        tmp_path: Path) -> None:
    """The filesystem hands a freed inode number to the next new file, so a replaced log
    can carry the number the reader's mark names (the flaky rebuild test): the header's
    token tells the logs apart."""
    log = NoteChangeLog(tmp_path, max_bytes=10)
    log.append("notes/a.md")
    old = log.mark()
    log.append("notes/b.md")  # over 10 bytes: a fresh log replaces it
    new = log.mark()
    assert new.token and new.token != old.token
    reused = attrs.evolve(old, inode=new.inode)  # as if the new log got the old number
    paths, _ = log.read_since(reused)
    assert paths is None
    assert log.read_since(attrs.evolve(new, offset=0))[0] is not None
    paths, _ = log.read_since(NoteChangeLog(tmp_path).mark())
    assert paths == []
