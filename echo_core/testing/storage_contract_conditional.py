"""``ConditionalWriteContract``: the conditional write every ``Storage`` must get right.

Part of ``StorageContract`` (which inherits it), so every storage suite runs it; it uses
the same ``storage`` fixture. A backend that offers ``ConditionalWrite`` is checked
through its own ``write_unless_changed``; one that does not, through
``Vault.replace_note``, whose read-compare-write fallback must reach the same outcomes.
Which branch runs is ``offers(storage, ConditionalWrite)``; every test runs on either,
but one: threads racing to write from one text (exactly one may land) run only on a
storage's own conditional write, as the fallback reads then writes.

A path naming a folder holds no file: expecting text there gives False, nothing
written; expecting absence (None) lets the write go ahead, so it fails as ``write`` does
there.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import cast

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.protocols import ConditionalWrite, Storage, offers
from echo_core.routing import load_manifest
from echo_core.vault import Vault

#: Paths every backend must refuse with exit 2, naming the path in the message (every
#: path operation, ``StorageContract``; the conditional write, here).
BAD_PATHS = ("../x", "/etc/passwd", "a/../../b", "a\x00b")

#: Text a byte-exact round trip must keep: CRLF, a lone CR, no final newline, non-ASCII.
EXACT_TEXT = "---\r\ntype: concept\r\n---\r\nCafé 東京 🧠\rmixed\nend"


#: Rounds and threads of the concurrent conditional-write test: each round lines the
#: threads up on a barrier and has each write its own text over the same expected one.
#: Blocks of rounds follow one another until ``RACE_SECONDS`` have passed (a fast
#: storage gets more rounds, at most ``RACE_BLOCKS`` blocks; a slow one still one block).
RACE_ROUNDS = 24
RACE_THREADS = 4
RACE_SECONDS = 0.3
RACE_BLOCKS = 50


def named(message: str, path: str) -> bool:
    """Whether an error ``message`` names ``path`` (as given or as its ``repr``)."""
    return path in message or repr(path) in message


def write_unless_changed(storage: Storage, path: str, text: str, expected: str | None) -> bool:
    """The conditional write under test: the storage's own when it offers
    ``ConditionalWrite``, else ``Vault.replace_note`` (the core's fallback)."""
    if offers(storage, ConditionalWrite):
        return cast(ConditionalWrite, storage).write_unless_changed(path, text, expected)
    return Vault(storage, load_manifest()).replace_note(path, text, expected)


def outcome(attempt: Callable[[], object]) -> str:
    """``"error <code>"`` when ``attempt`` raises ``EchoError``, else ``repr`` of its result."""
    try:
        return repr(attempt())
    except EchoError as exc:
        return f"error {int(exc.code)}"


class ConditionalWriteContract:
    """Contract tests for ``echo_core.protocols.ConditionalWrite`` (mix-in of
    ``StorageContract``; module docstring). Fixture: ``storage``, as ``StorageContract``."""

    def test_conditional_write_from_current_text_writes_it_exactly(
            self, storage: Storage) -> None:
        storage.write("notes/a.md", "v1\n")
        assert write_unless_changed(storage, "notes/a.md", EXACT_TEXT, "v1\n") is True
        assert storage.read("notes/a.md") == EXACT_TEXT
        assert write_unless_changed(storage, "notes/a.md", "v3\n", EXACT_TEXT) is True
        assert storage.read("notes/a.md") == "v3\n"

    def test_conditional_write_from_stale_text_changes_nothing(self, storage: Storage) -> None:
        storage.write("notes/a.md", "line\r\nend")
        for stale in ("v0\n", "line\nend", "line\r\nend\n", "line\r\n", ""):
            assert write_unless_changed(storage, "notes/a.md", "new\n", stale) is False, stale
        assert storage.read("notes/a.md") == "line\r\nend"
        assert storage.stat("notes/a.md").size == len(b"line\r\nend")
        assert storage.list() == ["notes/a.md"]

    def test_of_two_conditional_writes_from_one_text_only_the_first_lands(
            self, storage: Storage) -> None:
        storage.write("notes/race.md", "round 0\n")
        assert write_unless_changed(storage, "notes/race.md", "by one\n", "round 0\n") is True
        assert write_unless_changed(storage, "notes/race.md", "by two\n", "round 0\n") is False
        assert storage.read("notes/race.md") == "by one\n"

    def test_of_concurrent_conditional_writes_from_one_text_exactly_one_lands(
            self, storage: Storage) -> None:
        """Threads of one process sharing ``storage``, lined up by a barrier, each write
        their own text expecting the same one (absence in odd rounds): in every round
        exactly one lands and the file holds its text. A read-then-write with nothing
        atomic about it lets several land (the others' reads come before its write).
        Only a storage's own ``ConditionalWrite`` promises this (skipped without it: the
        core's fallback, ``Vault.replace_note``, reads then writes)."""
        if not offers(storage, ConditionalWrite):
            pytest.skip("no ConditionalWrite of its own; the core's fallback promises no "
                        "atomicity between threads")
        started = time.monotonic()
        for block in range(RACE_BLOCKS):
            if block and time.monotonic() - started > RACE_SECONDS:
                break
            rounds = [(f"race/{block}/r{i}.md", None if i % 2 else f"v0 {i}\n")
                      for i in range(RACE_ROUNDS)]
            for path, expected in rounds:
                if expected is not None:
                    storage.write(path, expected)
            landed = race(storage, rounds)
            several = {path: ks for (path, _), ks in zip(rounds, landed, strict=True)
                       if len(ks) != 1}
            assert not several, (
                f"not exactly one of {RACE_THREADS} conditional writes from one text landed "
                f"in {len(several)} of {RACE_ROUNDS} rounds (path: threads): {several}")
            for (path, _), (k,) in zip(rounds, landed, strict=True):
                assert storage.read(path) == f"by {k}\n", path

    def test_conditional_write_expecting_absence_creates_only_an_absent_file(
            self, storage: Storage) -> None:
        assert write_unless_changed(storage, "new/sub/first.md", "first\n", None) is True
        assert storage.read("new/sub/first.md") == "first\n"
        assert write_unless_changed(storage, "new/sub/first.md", "second\n", None) is False
        assert storage.read("new/sub/first.md") == "first\n"
        storage.write("kept.md", "")  # an empty file is present, not absent
        assert write_unless_changed(storage, "kept.md", "x\n", None) is False
        assert storage.read("kept.md") == ""

    def test_conditional_write_expecting_text_of_an_absent_file_creates_nothing(
            self, storage: Storage) -> None:
        assert write_unless_changed(storage, "gone/sub/x.md", "x\n", "was here\n") is False
        assert write_unless_changed(storage, "empty.md", "x\n", "") is False
        storage.write("deleted.md", "old\n")
        storage.delete("deleted.md")
        assert write_unless_changed(storage, "deleted.md", "x\n", "old\n") is False
        for path in ("gone/sub/x.md", "empty.md", "deleted.md"):
            assert not storage.exists(path), path
        assert storage.read_many(["gone/sub/x.md"]) == {"gone/sub/x.md": None}
        assert storage.list() == []

    def test_conditional_write_is_seen_like_any_write(self, storage: Storage) -> None:
        storage.write("proj/b.md", "b1\n")
        assert write_unless_changed(storage, "./proj//a.md", "é🧠\n", None) is True
        assert write_unless_changed(storage, "proj/b.md", "b2\n", "b1\n") is True
        assert storage.exists("proj/a.md") and storage.exists("proj/b.md")
        assert storage.read_many(["proj/a.md", "proj/b.md"]) == {
            "proj/a.md": "é🧠\n", "proj/b.md": "b2\n"}
        assert storage.list("proj") == ["proj/a.md", "proj/b.md"]
        assert storage.stat("proj/a.md").size == len("é🧠\n".encode())
        assert storage.append_line("proj/b.md", "- more") is True
        assert write_unless_changed(storage, "proj/b.md", "b3\n", "b2\n") is False
        assert write_unless_changed(storage, "proj/b.md", "b3\n", "b2\n- more\n") is True
        storage.delete("proj/a.md")
        assert storage.list("proj") == ["proj/b.md"] and storage.read("proj/b.md") == "b3\n"

    @pytest.mark.parametrize("expected", [None, "text\n"])
    @pytest.mark.parametrize("bad_path", BAD_PATHS)
    def test_conditional_write_rejects_a_bad_path(
            self, storage: Storage, bad_path: str, expected: str | None) -> None:
        with pytest.raises(EchoError) as caught:
            write_unless_changed(storage, bad_path, "x\n", expected)
        assert caught.value.code == ExitCode.USAGE
        assert named(caught.value.message, bad_path), caught.value.message
        assert storage.list() == []

    def test_conditional_write_expecting_absence_at_a_folder_fails_as_write_does(
            self, storage: Storage) -> None:
        storage.write("one/n.md", "1\n")
        storage.write("two/n.md", "2\n")
        plain = outcome(lambda: storage.write("two", "x\n"))
        conditional = outcome(lambda: write_unless_changed(storage, "one", "x\n", None))
        assert (plain, conditional) in {("None", "True"), ("error 2", "error 2")}
        if conditional != "True":  # refused, as ``write`` refuses: nothing written
            assert not storage.exists("one")
            assert storage.list("one") == ["one/n.md"]

    def test_conditional_write_expecting_text_at_a_folder_writes_nothing(
            self, storage: Storage) -> None:
        storage.write("one/n.md", "1\n")
        got = outcome(lambda: write_unless_changed(storage, "one", "x\n", "1\n"))
        assert got == "False"
        assert not storage.exists("one")
        assert storage.list() == ["one/n.md"] and storage.read("one/n.md") == "1\n"


def race(storage: Storage, rounds: list[tuple[str, str | None]]) -> list[list[int]]:
    """Per round ``(path, expected)``: which of ``RACE_THREADS`` threads, released together
    by a barrier, got True from ``write_unless_changed(path, "by <k>\\n", expected)``. The
    interpreter switches threads as often as it can meanwhile, so a race in pure Python
    shows too; an error in a thread fails the test."""
    landed: list[list[int]] = [[] for _ in rounds]
    errors: list[BaseException] = []
    barrier = threading.Barrier(RACE_THREADS)

    def run(k: int) -> None:
        try:
            for i, (path, expected) in enumerate(rounds):
                barrier.wait(timeout=60)
                if write_unless_changed(storage, path, f"by {k}\n", expected):
                    landed[i].append(k)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=run, args=(k,)) for k in range(RACE_THREADS)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    first = next((e for e in errors if not isinstance(e, threading.BrokenBarrierError)), None)
    if first is not None:
        raise first
    assert not errors, errors
    return [sorted(ks) for ks in landed]
