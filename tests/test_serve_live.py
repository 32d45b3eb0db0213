"""A running `serve` sees the vault change under it (issue 14, live freshness): a hand
edit, a new hand-written note and a deletion reach `echo_recall` and `echo_resolve` within
2 s, over HTTP with file system events and over stdio with polling. Then the parts: what
the watcher ignores, its restart after a failure, its clean stop, and the scheduler's
logging and failure isolation with injected jobs."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from echo_core.errors import EchoError
from plugins.transport_mcp.jobs import Job, JobScheduler
from plugins.transport_mcp.upkeep import check_settings, plan_upkeep
from plugins.transport_mcp.vault_watch import (
    LiveFlag,
    VaultWatcher,
    WatchBatch,
    batch_of,
    ignored,
)
from tests.conftest import CLI, REPO
from tests.mcp_kit import ADA, ENGINE, call, seeded_box, subprocess_env
from tests.test_mcp_transports import TOKEN, RunningServer, start_server, with_http

WITHIN = 2.0  # seconds a change may take to reach recall and resolve
NEW_NOTE = "resources/concepts/difference-engine.md"
NEW_TEXT = ("# Difference Engine\n\nBabbage's earlier machine tabulated polynomials with "
            "brass gears and a zebrafish-shaped crank.\n")


def wait_for_log(server: RunningServer, needle: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while needle not in server.log_text():
        assert time.monotonic() < deadline, f"no {needle!r} in the log:\n{server.log_text()}"
        time.sleep(0.02)


async def holds_within(check: Callable[[], Awaitable[bool]], what: str) -> float:
    """Poll ``check`` until it is true; fail after ``WITHIN`` seconds. The seconds it took."""
    start = time.monotonic()
    while not await check():
        assert time.monotonic() - start < WITHIN, f"{what}: not seen within {WITHIN} s"
        await anyio.sleep(0.02)
    return time.monotonic() - start


async def recalled(client: Client, query: str) -> set[str]:
    err, data, _ = await call(client, "echo_recall", query=query)
    assert not err, data
    return {hit["path"] for hit in data["primary"]}


async def resolved(client: Client, mention: str) -> str | None:
    err, data, _ = await call(client, "echo_resolve", mention=mention)
    assert not err, data
    return data["path"] if data["match"] else None


async def new_note_is_seen(client: Client, vault: Path) -> None:
    """A note written by hand into a kind folder: recalled, and resolvable by its title."""
    (vault / NEW_NOTE).write_text(NEW_TEXT, "utf-8")

    async def seen() -> bool:
        return (NEW_NOTE in await recalled(client, "zebrafish crank polynomials")
                and await resolved(client, "Difference Engine") == NEW_NOTE)

    await holds_within(seen, "a new hand-written note")


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[RunningServer]:
    box = seeded_box(tmp_path)
    # the per-call freshness check off: only the watcher can bring the changes in
    server = start_server(box, tmp_path / "serve.log", ECHO_MCP_TOKEN=TOKEN,
                          ECHO_FRESHNESS="off")
    wait_for_log(server, "vault watch: watching")
    yield server
    server.stop()


def test_hand_edit_new_note_and_deletion_reach_recall_within_2s(
        live_server: RunningServer) -> None:
    vault = live_server.box.vault

    async def body(client: Client) -> None:
        assert ADA not in await recalled(client, "quaternion lattice")
        ada = vault / ADA
        ada.write_text(ada.read_text("utf-8") + "\nShe sketched a quaternion lattice.\n",
                       "utf-8")

        async def edit_seen() -> bool:
            return ADA in await recalled(client, "quaternion lattice")

        await holds_within(edit_seen, "a hand edit")

        await new_note_is_seen(client, vault)

        assert await resolved(client, "Analytical Engine") == ENGINE
        (vault / ENGINE).unlink()

        async def deletion_seen() -> bool:
            return (ENGINE not in await recalled(client, "analytical engine punched cards")
                    and await resolved(client, "Analytical Engine") is None)

        await holds_within(deletion_seen, "a deletion")

    anyio.run(with_http, f"{live_server.base}/mcp", TOKEN, body)
    log = live_server.log_text()
    assert "file system events" in log and "changed note(s) synced" in log
    assert "warm-up: fast sweep: first run" in log  # the start-up sweep, before the jobs
    assert "jobs: fast sweep every 60 min" in log
    assert "decay: not scheduled (no decay operation is installed)" in log


def _start_up_log(box: Any, log: Path) -> str:
    """The log of a server started on ``box`` until its watcher watches, then stopped."""
    server = start_server(box, log, ECHO_MCP_TOKEN=TOKEN)
    try:
        wait_for_log(server, "vault watch: watching")
        return server.log_text()
    finally:
        server.stop()


def test_a_first_start_builds_the_recall_index_once(tmp_path: Path) -> None:
    log = _start_up_log(seeded_box(tmp_path), tmp_path / "serve.log")
    warm = [line for line in log.splitlines() if "warm-up:" in line]
    assert len(warm) == 1, log
    # the start-up fast sweep built both indexes; ensure_index found recall ready
    assert "fast sweep: first run, rebuilt both indexes" in warm[0]
    assert warm[0].endswith("recall index ready"), warm[0]
    assert "job=fast-sweep" not in log  # its first run waits a whole interval
    assert log.count("rebuilt") == 1, log


def test_a_restart_sweeps_once_without_rebuilding(tmp_path: Path) -> None:
    box = seeded_box(tmp_path)
    _start_up_log(box, tmp_path / "one.log")
    log = _start_up_log(box, tmp_path / "two.log")
    warm = [line for line in log.splitlines() if "warm-up:" in line]
    assert len(warm) == 1 and "fast sweep:" in warm[0] and "first run" not in warm[0], log
    assert "rebuilt" not in log, log


def test_stdio_with_polling_sees_a_new_note_within_2s(tmp_path: Path) -> None:
    box = seeded_box(tmp_path)
    log = tmp_path / "stdio.log"
    params = StdioServerParameters(
        command=CLI[0], args=[*CLI[1:], "serve", "--stdio", "--vault", str(box.vault),
                              "--state-dir", str(box.state)],
        env=subprocess_env(box, ECHO_WATCH="poll", ECHO_FRESHNESS="off"), cwd=str(REPO))

    async def main() -> None:
        with log.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                deadline = time.monotonic() + 30
                while "vault watch: watching" not in log.read_text("utf-8"):
                    assert time.monotonic() < deadline, log.read_text("utf-8")
                    await anyio.sleep(0.02)
                await new_note_is_seen(client, box.vault)

    anyio.run(main)
    assert "polling every 300 ms" in log.read_text("utf-8")


def test_the_cli_and_serve_help_never_import_watchfiles() -> None:
    probe = ("import sys\nfrom plugins.transport_cli.app import main\n"
             "for argv in (['--help'], ['serve', '--help']):\n"
             "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
             "print('WATCHFILES=' + str('watchfiles' in sys.modules), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          cwd=REPO, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "ECHO_WATCH=auto" in done.stdout and "WATCHFILES=False" in done.stderr


# -- the watcher's parts ---------------------------------------------------------------


@pytest.mark.parametrize("path", [
    ".obsidian/workspace.json", ".git/index", ".trash/old.md", "notes/.hidden.md",
    "_agent/index/entities.json", "resources/people/.ada.md.0a1b2c3d-12-ff.tmp",
    "resources/people/ada.md~", "resources/people/ada.md.swp",
])
def test_the_watcher_ignores_hidden_temp_and_index_files(path: str) -> None:
    assert ignored(path)


def test_a_batch_names_notes_and_folders_under_the_root(tmp_path: Path) -> None:
    (tmp_path / "moved-in").mkdir()
    (tmp_path / "image.png").write_bytes(b"")
    changes = {(1, str(tmp_path / "resources/people/ada.md")),
               (3, str(tmp_path / "gone-folder")), (1, str(tmp_path / "moved-in")),
               (2, str(tmp_path / "image.png")), (1, str(tmp_path / ".obsidian/app.json")),
               (1, str(tmp_path.parent / "elsewhere.md")), (2, str(tmp_path))}
    assert batch_of(tmp_path, changes) == WatchBatch(("resources/people/ada.md",),
                                                     ("gone-folder", "moved-in"))


def _watch_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "echo-vault-watch"]


def test_a_failing_batch_is_logged_and_the_watcher_goes_on(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    seen: list[WatchBatch] = []
    done = threading.Event()

    def apply(batch: WatchBatch) -> None:
        seen.append(batch)
        if len(seen) == 1:
            raise RuntimeError("index on fire")
        done.set()

    watcher = VaultWatcher(tmp_path, apply, debounce_ms=100)
    watcher.start()
    try:
        assert watcher.ready.wait(10)
        (tmp_path / "one.md").write_text("# One\n", "utf-8")
        deadline = time.monotonic() + 5
        while not seen:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        (tmp_path / "two.md").write_text("# Two\n", "utf-8")
        assert done.wait(5), seen
    finally:
        watcher.stop()
    assert seen[0].notes == ("one.md",) and seen[-1].notes == ("two.md",)
    assert "applying changes failed (RuntimeError: index on fire)" in caplog.text
    assert not watcher.alive and _watch_threads() == []


def test_the_watcher_starts_again_after_a_failure_and_catches_up(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "echo_memory.mcp")
    root = tmp_path / "vault"  # not there yet: the first start fails
    resumed = threading.Event()
    watcher = VaultWatcher(root, lambda batch: None, on_resume=resumed.set,
                           first_backoff_s=0.05)
    watcher.start()
    try:
        deadline = time.monotonic() + 5
        while "vault watch: stopped (FileNotFoundError" not in caplog.text:
            assert time.monotonic() < deadline, caplog.text
            time.sleep(0.01)
        root.mkdir()
        assert resumed.wait(10), caplog.text
        assert watcher.ready.is_set() and watcher.restarts >= 1
    finally:
        watcher.stop()
    assert not watcher.alive and _watch_threads() == []


def test_the_live_flag_is_true_only_while_the_watcher_watches(tmp_path: Path) -> None:
    live = LiveFlag()
    assert not live
    watcher = VaultWatcher(tmp_path, lambda batch: None)
    live.watcher = watcher
    assert not live  # not watching yet: the per-call freshness check still runs
    watcher.start()
    try:
        assert watcher.ready.wait(10) and live
    finally:
        watcher.stop()


def test_a_bad_watch_or_interval_setting_is_a_usage_error() -> None:
    for env in ({"ECHO_WATCH": "sometimes"}, {"ECHO_SERVE_SWEEP_MINUTES": "hourly"},
                {"ECHO_SERVE_DECAY_HOURS": "-1"}):
        with pytest.raises(EchoError) as caught:
            check_settings(env)
        assert caught.value.code_name == "usage" and next(iter(env)) in caught.value.message
    check_settings({"ECHO_WATCH": "poll", "ECHO_SERVE_SWEEP_MINUTES": "0"})


def test_a_vault_that_is_not_a_folder_is_not_watched_and_says_so(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "echo_memory.mcp")
    ctx: Any = SimpleNamespace(storage=SimpleNamespace(identity="obsidian:https://127.0.0.1"))
    host: Any = SimpleNamespace()
    upkeep = plan_upkeep(host, {"ECHO_SERVE_DECAY_HOURS": "0"}, lambda: ctx)
    assert upkeep.watcher is None
    assert "obsidian:https://127.0.0.1 is not a folder vault" in caplog.text
    assert "fast sweep job" in caplog.text
    assert [job.name for job in upkeep.scheduler.jobs] == ["fast-sweep"]


# -- the scheduler ----------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_jobs_run_on_their_intervals_each_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "echo_memory.mcp")
    clock = FakeClock()
    ran: list[str] = []
    sweep = Job("sweep", 60, lambda: ran.append("sweep") or "3 notes re-indexed",
                first_after=0)
    decay = Job("decay", 300, lambda: ran.append("decay") or "nothing to decay")
    scheduler = JobScheduler([sweep, decay], clock=clock)
    assert scheduler.run_due(clock.now) == ["sweep"]
    clock.now += 59
    assert scheduler.run_due(clock.now) == []
    clock.now += 1
    assert scheduler.run_due(clock.now) == ["sweep"]
    clock.now += 240
    assert scheduler.run_due(clock.now) == ["sweep", "decay"]
    assert ran == ["sweep", "sweep", "sweep", "decay"]
    assert "job=sweep started" in caplog.text
    assert any(r.getMessage().startswith("job=sweep ok ms=")
               and r.getMessage().endswith(": 3 notes re-indexed") for r in caplog.records)
    assert scheduler.records["decay"].last == "nothing to decay"


def test_a_failing_job_is_logged_and_stops_nothing(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "echo_memory.mcp")
    clock = FakeClock()

    def broken() -> str:
        raise OSError("disk gone")

    calm: list[int] = []
    scheduler = JobScheduler([Job("broken", 10, broken, first_after=0),
                              Job("calm", 10, lambda: str(calm.append(1)), first_after=0)],
                             clock=clock)
    for _ in range(3):
        assert scheduler.run_due(clock.now) == ["broken", "calm"]
        clock.now += 10
    assert len(calm) == 3
    assert scheduler.records["broken"].failures == 3 and scheduler.records["calm"].failures == 0
    failed = [r for r in caplog.records if r.getMessage().startswith("job=broken failed ms=")]
    assert len(failed) == 3 and failed[0].getMessage().endswith(": OSError: disk gone")
    assert failed[0].exc_info is not None  # an unexpected error keeps its traceback


def test_the_scheduler_thread_runs_jobs_and_stops_cleanly() -> None:
    runs: list[float] = []
    failing = Job("failing", 0.02, lambda: str(1 / 0), first_after=0)
    counting = Job("counting", 0.02, lambda: str(runs.append(time.monotonic())), first_after=0)
    scheduler = JobScheduler([failing, counting])
    scheduler.start()
    deadline = time.monotonic() + 5
    while len(runs) < 3:
        assert time.monotonic() < deadline and scheduler.alive
        time.sleep(0.01)
    scheduler.stop()
    assert not scheduler.alive
    assert scheduler.records["failing"].failures >= 3
    assert [t for t in threading.enumerate() if t.name == "echo-serve-jobs"] == []


def test_a_folder_moved_out_and_back_in_leaves_and_rejoins_both_indexes(tmp_path: Path) -> None:
    from echo_core import recall
    from plugins.transport_mcp.upkeep import NoteSync

    box = seeded_box(tmp_path)
    ctx = box.ctx()
    sync = NoteSync(lambda: ctx)
    people = box.vault / "resources/people"
    aside = tmp_path / "people-aside"

    def state() -> tuple[bool, bool]:
        hits = {h.path for h in recall(ctx, "analytical engine punched cards").data.primary}
        return ADA in hits, ctx.entities.load().by_path(ADA) is not None

    assert state() == (True, True)
    people.rename(aside)  # the watcher names only the folder
    sync.apply(batch_of(box.vault, {(3, str(people))}))
    assert state() == (False, False)
    aside.rename(people)
    sync.apply(batch_of(box.vault, {(1, str(people))}))
    assert state() == (True, True)


def test_a_watcher_batch_and_a_job_never_run_at_once(tmp_path: Path) -> None:
    from plugins.transport_mcp.upkeep import NoteSync, serve_jobs

    box = seeded_box(tmp_path)
    ctx = box.ctx()
    serial = threading.Lock()
    [sweep] = serve_jobs(ctx.host, {}, lambda: ctx, serial)
    (box.vault / NEW_NOTE).write_text(NEW_TEXT, "utf-8")
    for work in (lambda: NoteSync(lambda: ctx, serial).apply(WatchBatch((NEW_NOTE,))),
                 sweep.run):
        with serial:  # the other one runs
            worker = threading.Thread(target=work)
            worker.start()
            worker.join(0.2)
            assert worker.is_alive()
        worker.join(10)
        assert not worker.is_alive()
    assert ctx.entities.load().by_path(NEW_NOTE) is not None
