"""The loom's search index (``loom_index``, ``loom_search.search_records``): derived from
the day files and caught up from each one's indexed offset, so a record appended a
moment ago is found; never a record twice (a second catch-up, two processes at once);
rebuilt when a day file is replaced; hostile queries are words, never FTS5 syntax."""

from __future__ import annotations

import datetime as _dt
import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from plugins.habitat.loom import Loom
from plugins.habitat.loom_index import INDEX_NAME, LoomIndex
from plugins.habitat.loom_search import fts_words, search_records, time_window
from plugins.habitat.paths import habitat_dir
from plugins.habitat.record import Record
from tests.capture_kit import VaultBox
from tests.habitat_record_kit import box_at, loom_of

TS = _dt.datetime(2026, 3, 1, 9, 30)


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return box_at(tmp_path / "box")


def _add(loom: Loom, *texts: str, day: int = 1, agent: str = "a1", kind: str = "note",
         session: str = "s1") -> list[Record]:
    records = [Record.new(ts=TS.replace(day=day) + _dt.timedelta(microseconds=i), kind=kind,
                          agent_id=agent, session_id=session, text=text)
               for i, text in enumerate(texts)]
    loom.append(records)
    return records


def _texts(records: list[Record]) -> list[str]:
    return [r.text for r in records]


def test_a_record_appended_a_moment_ago_is_found(box: VaultBox) -> None:
    ctx = box.ctx()
    loom = loom_of(ctx)
    _add(loom, "deploy the web tier", "rotate the logs")
    assert _texts(search_records(ctx, "deploy", 10)) == ["deploy the web tier"]
    _add(loom, "deploy failed with exit 2", day=2)
    assert set(_texts(search_records(ctx, "deploy", 10))) == {
        "deploy the web tier", "deploy failed with exit 2"}
    assert _texts(search_records(ctx, "deploying", 10))  # stemmed


def test_every_word_ranks_first_then_any_word_fills(box: VaultBox) -> None:
    ctx = box.ctx()
    _add(loom_of(ctx), "cache flush", "deploy cache flush", "deploy only", "nothing here")
    found = _texts(search_records(ctx, "deploy cache", 10))
    assert found[0] == "deploy cache flush" and set(found) == {
        "deploy cache flush", "cache flush", "deploy only"}
    assert _texts(search_records(ctx, "deploy cache", 1)) == ["deploy cache flush"]


def test_filters_agent_kind_and_time_window(box: VaultBox) -> None:
    ctx = box.ctx()
    loom = loom_of(ctx)
    _add(loom, "build one", agent="a1", kind="note", day=1)
    _add(loom, "build two", agent="a2", kind="tool", day=2)
    _add(loom, "build three", agent="a2", kind="note", day=3)
    assert set(_texts(search_records(ctx, "build", 10, agent_id="a2"))) == {"build two",
                                                                           "build three"}
    assert _texts(search_records(ctx, "build", 10, kind="tool")) == ["build two"]
    assert _texts(search_records(ctx, "build", 10, since="2026-03-02",
                                 until="2026-03-02")) == ["build two"]
    assert set(_texts(search_records(ctx, "build", 10, until="2026-03-02"))) == {
        "build one", "build two"}


def test_time_window_bounds() -> None:
    now = _dt.datetime(2026, 3, 10, 12, 0)
    assert time_window("2026-03-01", "2026-03-02", now) == (
        "2026-03-01T00:00:00.000000", "2026-03-03T00:00:00.000000")
    assert time_window("24h", None, now) == ("2026-03-09T12:00:00.000000", None)
    assert time_window(None, "2026-03-01T09:30", now) == (
        None, "2026-03-01T09:30:00.000001")
    for bad in ("yesterday", "2026-13-01", "5y"):
        with pytest.raises(ValueError, match="ISO date"):
            time_window(bad, None, now)


@pytest.mark.parametrize("query", ['"', 'deploy" OR "x', "NEAR(a b)", "a*", "-deploy",
                                   "text:deploy", "^deploy", "deploy AND", "(", "' OR 1=1 --"])
def test_hostile_queries_are_plain_words(box: VaultBox, query: str) -> None:
    ctx = box.ctx()
    _add(loom_of(ctx), "deploy a b x text", "other")
    found = search_records(ctx, query, 10)
    assert all("other" != r.text for r in found)
    assert all(w.startswith('"') and w.endswith('"') and w.count('"') == 2
               for w in fts_words(query))


def test_a_query_without_words_finds_nothing(box: VaultBox) -> None:
    ctx = box.ctx()
    _add(loom_of(ctx), "anything")
    assert search_records(ctx, "!!! ...", 10) == [] and search_records(ctx, "x", 0) == []


def test_a_torn_tail_is_indexed_only_once_whole(box: VaultBox) -> None:
    ctx = box.ctx()
    loom = loom_of(ctx)
    first = _add(loom, "alpha")[0]
    with open(loom.day_file("2026-03-01"), "ab") as f:
        f.write(b'{"id":"x","kind":"note","text":"beta"')
    assert _texts(search_records(ctx, "alpha beta", 10)) == ["alpha"]
    _add(loom, "beta whole")  # cuts the torn tail, appends
    assert _texts(search_records(ctx, "beta", 10)) == ["beta whole"]
    assert first.id in {r.id for r in search_records(ctx, "alpha", 10)}


def test_a_second_catch_up_adds_nothing_and_a_replaced_file_is_reindexed(tmp_path: Path) -> None:
    loom = Loom(tmp_path / "loom")
    _add(loom, "one", "two")
    _add(loom, "three", day=2)
    with LoomIndex.open(loom, tmp_path / INDEX_NAME) as index:
        assert index.catch_up() == 3 and index.catch_up() == 0
        kept = _add(loom, "four", day=2)
        assert index.catch_up() == 1
        loom.day_file("2026-03-01").write_bytes(b"")  # replaced by hand (restored...)
        _add(loom, "five")
        assert index.catch_up() == 3  # "five", and day 2 indexed again
        count = index.db.execute("SELECT count(*) FROM records").fetchone()[0]
        assert count == 3
        assert index.locate_id(kept[0].id) is not None


def _catch_up(args: tuple[str, str]) -> int:
    loom_root, path = args
    with LoomIndex.open(Loom(Path(loom_root)), Path(path)) as index:
        return index.catch_up()


def test_two_processes_catching_up_at_once_index_each_record_once(tmp_path: Path) -> None:
    loom = Loom(tmp_path / "loom")
    for day in range(1, 6):
        _add(loom, *(f"record {day}-{i} words" for i in range(2000)), day=day)
    path = tmp_path / INDEX_NAME
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(3) as pool:
        added = pool.map(_catch_up, [(str(loom.root), str(path))] * 3)
    assert sum(added) == 10_000
    db = sqlite3.connect(path)
    assert db.execute("SELECT count(*), count(DISTINCT id) FROM records").fetchone() == (
        10_000, 10_000)
    db.close()


def test_the_index_is_derived_delete_it_and_it_is_rebuilt(box: VaultBox) -> None:
    ctx = box.ctx()
    _add(loom_of(ctx), "gamma ray")
    assert _texts(search_records(ctx, "gamma", 5)) == ["gamma ray"]
    fresh = box.ctx()
    (habitat_dir(fresh) / INDEX_NAME).unlink()
    for suffix in ("-wal", "-shm"):
        (habitat_dir(fresh) / (INDEX_NAME + suffix)).unlink(missing_ok=True)
    from plugins.habitat import loom_open

    loom_open._LOCAL.indexes = {}
    assert _texts(search_records(fresh, "gamma", 5)) == ["gamma ray"]


# --- ranking on a big loom (loom_rank), shown on a small one with small bounds --------


@pytest.fixture
def small_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    from plugins.habitat import loom_rank

    monkeypatch.setattr(loom_rank, "COMMON_ROWS", 5)
    monkeypatch.setattr(loom_rank, "RANK_WINDOW", 4)


def test_common_words_filter_but_rare_ones_rank(box: VaultBox, small_bounds: None) -> None:
    ctx = box.ctx()
    loom = loom_of(ctx)
    _add(loom, *(f"deploy step {i}" for i in range(10)))
    _add(loom, "deploy kubernetes kubernetes", "deploy kubernetes", "kubernetes alone")
    found = _texts(search_records(ctx, "deploy kubernetes", 3))
    assert found[:2] == ["deploy kubernetes kubernetes", "deploy kubernetes"]
    assert "kubernetes alone" not in found[:2]  # "deploy" still has to match first


def test_when_every_word_is_common_the_newest_come_first(box: VaultBox,
                                                         small_bounds: None) -> None:
    ctx = box.ctx()
    _add(loom_of(ctx), *(f"deploy step {i}" for i in range(10)))
    hits = search_records(ctx, "deploy", 3)
    assert _texts(hits) == ["deploy step 9", "deploy step 8", "deploy step 7"]


def test_the_window_widens_until_the_filters_are_met(box: VaultBox, small_bounds: None) -> None:
    ctx = box.ctx()
    loom = loom_of(ctx)
    _add(loom, "rare word by the old agent", agent="old")
    _add(loom, *(f"rare word {i}" for i in range(20)), agent="new")
    found = search_records(ctx, "rare word", 5, agent_id="old")
    assert _texts(found) == ["rare word by the old agent"]
    assert len(search_records(ctx, "rare word", 25)) == 21
