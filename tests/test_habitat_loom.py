"""The loom's day files: a record is one whole line, durable before the append returns;
a writer killed at any instant loses no acknowledged record and tears none; a torn
tail is cut by the next append, never joined; concurrent appends share a write (group
commit) and keep each caller's order."""

from __future__ import annotations

import datetime as _dt
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from plugins.habitat import group_commit, loom_file
from plugins.habitat.group_commit import GroupCommitter, committer_for
from plugins.habitat.loom import Loom, day_lines, read_day_file
from plugins.habitat.record import MAX_NAME, MAX_TEXT, Record
from tests.habitat_record_kit import REPO, raw_lines

TS = _dt.datetime(2026, 3, 1, 9, 30)


def _record(text: str = "x", *, session: str = "s1", ts: _dt.datetime = TS,
            **fields: object) -> Record:
    return Record.new(ts=ts, kind="note", agent_id="a1", session_id=session, text=text,
                      **fields)  # type: ignore[arg-type]


# --- the record ----------------------------------------------------------------------


def test_a_record_is_one_line_and_reads_back_equal() -> None:
    record = _record("two\nlines and \u2028 and \"quotes\"", refs=("r1",), tags=("t",))
    line = record.to_line()
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert Record.from_json(json.loads(line)) == record


def test_records_of_one_instant_differ_by_64_random_bits() -> None:
    """Records often share their instant (a pinned clock, a batch stamped once): their ids
    then differ by the random part alone, 8 bytes in both id makers (the kill test below
    met two 4-byte parts alike among 8,842 records of one instant)."""
    from plugins.habitat import hook_record
    from plugins.habitat.record import ID_RANDOM_BYTES, new_id

    instant = _dt.datetime(2026, 3, 1, 9, 30)
    ids = [new_id(instant) for _ in range(20_000)]
    assert len(set(ids)) == len(ids)
    assert ID_RANDOM_BYTES == hook_record.ID_RANDOM_BYTES == 8
    for made in (ids[0], hook_record._new_id("20260301T093000000000")):
        stamp, random_part = made.rsplit("-", 1)
        assert stamp == "20260301T093000000000" and len(random_part) == 16
        int(random_part, 16)


def test_text_utf8_cannot_hold_is_mended_not_fatal() -> None:
    record = _record("bad \ud800 surrogate")
    assert "\ufffd" in record.text
    assert Record.from_json(json.loads(record.to_line())).text == record.text


def test_long_text_is_cut_and_says_so() -> None:
    record = Record.new(ts=TS, kind="tool", agent_id="a", session_id="s", text="t" * 20000,
                        result="r" * 10)
    assert len(record.text) == MAX_TEXT and record.truncated
    assert not _record("short").truncated


@pytest.mark.parametrize("field", ["agent_id", "session_id", "parent_id"])
def test_an_overlong_name_is_refused(field: str) -> None:
    fields = {"agent_id": "a", "session_id": "s", field: "n" * (MAX_NAME + 1)}
    with pytest.raises(ValueError, match=field):
        Record.new(ts=TS, kind="note", **fields)  # type: ignore[arg-type]


def test_unknown_kind_and_empty_ids_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown record kind"):
        Record.new(ts=TS, kind="nope", agent_id="a", session_id="s")
    with pytest.raises(ValueError, match="agent_id"):
        Record.new(ts=TS, kind="note", agent_id=" ", session_id="s")


# --- appends -------------------------------------------------------------------------


def test_append_groups_by_day_and_keeps_order(tmp_path: Path) -> None:
    loom = Loom(tmp_path / "loom")
    first = [_record(f"r{i}") for i in range(3)]
    other_day = _record("next day", ts=TS + _dt.timedelta(days=1))
    loom.append([*first, other_day])
    assert loom.days() == ["2026-03-01", "2026-03-02"]
    assert [r.id for r in read_day_file(loom.day_file("2026-03-01"))] == [r.id for r in first]
    assert [r.id for r in loom.records()] == [*(r.id for r in first), other_day.id]
    assert oct(loom.day_file("2026-03-01").stat().st_mode & 0o777) == "0o600"


def test_a_torn_tail_is_cut_by_the_next_append_never_joined(tmp_path: Path) -> None:
    loom = Loom(tmp_path / "loom")
    kept = _record("kept")
    loom.append([kept])
    with open(loom.day_file("2026-03-01"), "ab") as f:
        f.write(b'{"id":"torn","kind":"note","ag')  # a writer died mid-line
    assert [r.id for r in loom.records()] == [kept.id]  # readers skip it
    after = _record("after")
    loom.append([after])
    lines = raw_lines(loom)
    assert [json.loads(line)["id"] for line in lines] == [kept.id, after.id]
    assert all(line.endswith(b"\n") for line in lines)


def test_a_file_holding_only_a_torn_line_is_cut_to_empty(tmp_path: Path) -> None:
    loom = Loom(tmp_path / "loom")
    loom.root.mkdir()
    loom.day_file("2026-03-01").write_bytes(b"x" * 200_000)  # no newline at all
    record = _record()
    loom.append([record])
    assert raw_lines(loom) == [record.to_line()]


def test_a_failed_write_leaves_nothing_for_a_retry_to_double(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loom = Loom(tmp_path / "loom")
    kept = _record("kept")
    loom.append([kept])
    real_write = os.write
    calls = {"n": 0}

    def half_then_full(fd: int, data: memoryview | bytes) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            return real_write(fd, bytes(data)[:len(data) // 2])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(loom_file.os, "write", half_then_full)
    with pytest.raises(OSError, match="No space"):
        loom.append([_record("lost " * 50)])
    monkeypatch.undo()
    assert raw_lines(loom) == [kept.to_line()]


def test_day_lines_give_end_offsets_of_whole_lines(tmp_path: Path) -> None:
    loom = Loom(tmp_path / "loom")
    records = [_record(f"r{i}") for i in range(3)]
    loom.append(records)
    path = loom.day_file("2026-03-01")
    with open(path, "ab") as f:
        f.write(b"torn")
    ends = [end for end, _ in day_lines(path)]
    sizes = [len(r.to_line()) for r in records]
    assert ends == [sum(sizes[:i + 1]) for i in range(3)]
    assert [line for _, line in day_lines(path, ends[0])] == [r.to_line() for r in records[1:]]


# --- group commit --------------------------------------------------------------------


def test_concurrent_appends_share_writes_and_keep_each_callers_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = group_commit.append_lines

    def slow(path: object, data: bytes) -> None:
        time.sleep(0.005)  # a slow disk: callers queue up behind the leader
        real(path, data)  # type: ignore[arg-type]

    monkeypatch.setattr(group_commit, "append_lines", slow)
    committer = GroupCommitter(Loom(tmp_path / "loom"))
    per_thread = 25

    def writer(n: int) -> None:
        for i in range(per_thread):
            committer.append([_record(f"t{n}-{i}-a", session=f"s{n}"),
                              _record(f"t{n}-{i}-b", session=f"s{n}")])

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    records = list(committer.loom.records())
    assert len(records) == len({r.id for r in records}) == 16 * per_thread * 2
    for n in range(16):
        texts = [r.text for r in records if r.session_id == f"s{n}"]
        assert texts == [f"t{n}-{i}-{x}" for i in range(per_thread) for x in "ab"]
    assert committer.batches == 16 * per_thread
    assert committer.commits < committer.batches / 2  # most writes carried several calls


def test_a_failed_group_write_fails_every_caller_in_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(path: object, data: bytes) -> None:
        raise OSError(5, "I/O error")

    monkeypatch.setattr(group_commit, "append_lines", broken)
    committer = GroupCommitter(Loom(tmp_path / "loom"))
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            committer.append([_record()])
        except OSError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(errors) == 8
    monkeypatch.undo()
    committer.append([_record("works again")])
    assert [r.text for r in committer.loom.records()] == ["works again"]


def test_no_caller_leads_forever_under_steady_load(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The leader writes until its own batch is done, then hands the role on: a first
    caller returns while 8 others keep the queue full."""
    real = group_commit.append_lines

    def slow(path: object, data: bytes) -> None:
        time.sleep(0.002)
        real(path, data)  # type: ignore[arg-type]

    monkeypatch.setattr(group_commit, "append_lines", slow)
    committer = GroupCommitter(Loom(tmp_path / "loom"))
    stop = threading.Event()

    def busy(n: int) -> None:
        while not stop.is_set():
            committer.append([_record(f"busy {n}")])

    threads = [threading.Thread(target=busy, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    done = threading.Event()
    first = threading.Thread(target=lambda: (committer.append([_record("mine")]), done.set()))
    first.start()
    try:
        assert done.wait(5.0), "a caller stayed the leader while others kept writing"
    finally:
        stop.set()
        for t in [*threads, first]:
            t.join()
    texts = [r.text for r in committer.loom.records()]
    assert texts.count("mine") == 1
    assert len(texts) == committer.batches


def test_a_loom_folder_removed_while_serving_is_made_again(tmp_path: Path) -> None:
    committer = GroupCommitter(Loom(tmp_path / "loom"))
    committer.append([_record("before")])
    shutil.rmtree(tmp_path / "loom")
    committer.append([_record("after")])
    assert [r.text for r in committer.loom.records()] == ["after"]


def test_one_committer_per_loom_folder(tmp_path: Path) -> None:
    assert committer_for(tmp_path / "a") is committer_for(tmp_path / "a" / ".." / "a")
    assert committer_for(tmp_path / "a") is not committer_for(tmp_path / "b")


# --- kill -9 -------------------------------------------------------------------------


def _writer(root: Path, seed: int, threads: int, mode: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-m", "tests.habitat_loom_writer", str(root),
                             str(seed), str(threads), mode], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"ready\n", proc.stderr.read() if proc.stderr else ""
    return proc


def _acknowledged(proc: subprocess.Popen[bytes]) -> list[str]:
    """The ids the killed writer printed (whole lines only)."""
    assert proc.stdout is not None
    return [line.decode() for line in proc.stdout.read().split(b"\n")[:-1]]


@pytest.mark.parametrize("mode", ["group", "direct"])
def test_kill_9_at_random_instants_loses_no_acknowledged_record_and_tears_none(
        tmp_path: Path, mode: str) -> None:
    root = tmp_path / "loom"
    rng = random.Random(18)
    acknowledged: list[str] = []
    for round_ in range(6):
        proc = _writer(root, round_, 4 if mode == "group" else 1, mode)
        time.sleep(rng.uniform(0.05, 0.4))
        proc.kill()
        proc.wait(timeout=30)
        acknowledged += _acknowledged(proc)
        lines = raw_lines(Loom(root))
        complete = [line for line in lines if line.endswith(b"\n")]
        assert len(lines) - len(complete) <= 1  # at most the last write's torn tail
        ids = [Record.from_json(json.loads(line)).id for line in complete]  # every one parses
        assert len(ids) == len(set(ids)), "a record is doubled"
        missing = set(acknowledged) - set(ids)
        assert not missing, f"round {round_}: acknowledged but lost: {sorted(missing)[:3]}"
    # the next run appends after whatever the last kill left, intact
    final = Loom(root)
    last = _record("after the kills")
    final.append([last])
    lines = raw_lines(final)
    assert all(line.endswith(b"\n") for line in lines)
    records = [Record.from_json(json.loads(line)) for line in lines]
    assert records[-1] == last
    assert len({r.id for r in records}) == len(records)
    assert len(acknowledged) > 50, "the writers never got going"
