"""Issue 11, data integrity of the outbox: a replay lands exactly once (a flush killed
between replaying and marking, two flushes at once, a capture that partly landed before
the vault went away), and nothing is queued for, or replayed into, a folder that is not a
vault."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from echo_core.config import state_dir_for
from echo_core.context import EchoContext
from echo_core.entities import EntityStore
from echo_core.models import CaptureRequest
from echo_core.ops.capture import capture
from echo_core.ops.init import init_vault
from echo_core.ops.outbox import flush
from echo_core.ops.outbox_queue import queue_capture
from echo_core.protocols import BackendUnavailable
from plugins.queue_outbox.outbox import OutboxQueue
from tests.outbox_kit import make_ctx, outbox_env  # noqa: F401 - fixture env

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def ctx(tmp_path: Path, env: dict[str, str]) -> EchoContext:
    context = make_ctx(tmp_path, env)
    init_vault(context)
    return context


def outbox(tmp_path: Path, vault: Path) -> OutboxQueue:
    """The outbox of ``vault`` under the state base ``tmp_path/state``."""
    return OutboxQueue(str(state_dir_for(str(tmp_path / "state"), f"file:{vault.resolve()}")))


def occurrences(vault: Path, needle: str) -> int:
    return sum(p.read_text(encoding="utf-8").count(needle) for p in vault.rglob("*.md"))


def entity_paths(vault: Path, folder: str = "resources/concepts") -> list[str]:
    return sorted(p.name for p in (vault / folder).glob("*.md") if p.name != "README.md")


def queue_offline(tmp_path: Path, env: dict[str, str], captures: list[CaptureRequest]) -> None:
    """Queue captures as a capture meeting an outage does (one record each)."""
    offline = make_ctx(tmp_path, env)
    for request in captures:
        envelope = queue_capture(offline, request, BackendUnavailable("test outage"))
        assert envelope.action == "queued", envelope.message


def test_a_capture_queued_while_the_folder_is_away_lands_once_it_is_back(
        ctx: EchoContext, tmp_path: Path, env: dict[str, str]) -> None:
    vault, away = tmp_path / "vault", tmp_path / "vault-away"
    vault.rename(away)  # as an unmount would
    envelope = capture(make_ctx(tmp_path, env),
                       CaptureRequest(title="Graph Theory", kind="concept", body="kept fact"))
    assert (envelope.ok, envelope.action) == (False, "queued"), envelope.message
    away.rename(vault)
    assert flush(make_ctx(tmp_path, env)).data.synced == 1
    assert occurrences(vault, "kept fact") == 1


def test_a_flush_killed_between_replay_and_mark_does_not_replay_twice(
        ctx: EchoContext, tmp_path: Path, env: dict[str, str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    queue_offline(tmp_path, env, [
        CaptureRequest(title="Graph Theory", kind="concept", body="fact one alpha"),
        CaptureRequest(title="Graph Theory", kind="concept", body="fact two beta")])
    real_mark = OutboxQueue.mark

    def killed(self: OutboxQueue, record_id: str, state: str, detail: str = "") -> None:
        raise KeyboardInterrupt  # the process dies after the replay, before the mark

    monkeypatch.setattr(OutboxQueue, "mark", killed)
    with pytest.raises(KeyboardInterrupt):
        flush(make_ctx(tmp_path, env))
    monkeypatch.setattr(OutboxQueue, "mark", real_mark)
    result = flush(make_ctx(tmp_path, env)).data
    assert (result.synced, result.pending, result.needs_attention) == (2, 0, 0)
    vault = tmp_path / "vault"
    assert occurrences(vault, "fact one alpha") == 1
    assert occurrences(vault, "fact two beta") == 1
    assert entity_paths(vault) == ["graph-theory.md"]


def test_two_flushes_at_once_land_every_queued_capture_exactly_once(
        ctx: EchoContext, tmp_path: Path, env: dict[str, str]) -> None:
    titles = [f"Topic {i % 8}" for i in range(40)]
    queue_offline(tmp_path, env, [CaptureRequest(title=t, kind="concept", body=f"unique fact {i}")
                                  for i, t in enumerate(titles)])
    command = [sys.executable, "-c", "from plugins.cli_start import run; run()",
               "flush", "--vault", str(tmp_path / "vault"), "--state-dir",
               str(tmp_path / "state"), "--json"]
    procs = [subprocess.Popen(command, env=env, cwd=REPO, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    synced = sum(json.loads(out)["synced"] for out, _ in outs)
    assert synced == 40
    vault = tmp_path / "vault"
    lines = [line for p in (vault / "resources/concepts").glob("topic-*.md")
             for line in p.read_text(encoding="utf-8").splitlines() if "unique fact" in line]
    facts = sorted(int(line.rsplit(" ", 1)[1]) for line in lines)
    assert facts == list(range(40)), "every queued fact once, none doubled"
    assert entity_paths(vault) == [f"topic-{i}.md" for i in range(8)]
    assert outbox(tmp_path, vault).pending() == []


class FailingJournal(Exception):
    pass


def test_a_capture_that_partly_landed_is_finished_not_replayed_whole(
        ctx: EchoContext, tmp_path: Path, env: dict[str, str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The note is written, then the entity-journal append meets an outage (a 503 on a
    remote vault): the capture is queued; after the flush the fact is there once."""
    real_record = EntityStore.record
    calls = {"n": 0}

    def outage(self: EntityStore, *args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        raise BackendUnavailable("503 Service Unavailable (test)")

    capture(ctx, CaptureRequest(title="Lambda Calculus", kind="concept", body="first fact"))
    monkeypatch.setattr(EntityStore, "record", outage)
    queued = capture(ctx, CaptureRequest(title="Lambda Calculus", kind="concept",
                                         body="second fact lands once"))
    created = capture(ctx, CaptureRequest(title="Type Theory", kind="concept",
                                          body="created during the outage"))
    assert (queued.action, created.action) == ("queued", "queued")
    monkeypatch.setattr(EntityStore, "record", real_record)
    result = flush(make_ctx(tmp_path, env)).data
    assert (result.synced, result.pending, result.needs_attention) == (2, 0, 0)
    vault = tmp_path / "vault"
    assert occurrences(vault, "second fact lands once") == 1
    assert occurrences(vault, "created during the outage") == 1
    assert entity_paths(vault) == ["lambda-calculus.md", "type-theory.md"]
    index = EntityStore(make_ctx(tmp_path, env).storage).load()
    assert index.get("type-theory") is not None


def test_a_killed_capture_leaves_no_orphan_and_the_next_capture_makes_no_duplicate(
        ctx: EchoContext, tmp_path: Path, env: dict[str, str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    real_record = EntityStore.record

    def killed(self: EntityStore, *args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt  # killed after the note write, before the index entry

    monkeypatch.setattr(EntityStore, "record", killed)
    with pytest.raises(KeyboardInterrupt):
        capture(ctx, CaptureRequest(title="Monads", kind="concept", body="killed fact"))
    monkeypatch.setattr(EntityStore, "record", real_record)
    again = make_ctx(tmp_path, env)
    for n in range(3):
        envelope = capture(again, CaptureRequest(title="Monads", kind="concept",
                                                 body=f"later fact {n}"))
        assert envelope.ok, envelope.message
    vault = tmp_path / "vault"
    assert entity_paths(vault) == ["monads.md"]
    assert occurrences(vault, "killed fact") == 1
    assert EntityStore(again.storage).load().get("monads") is not None


def test_a_hand_made_note_at_the_title_path_is_adopted_not_duplicated(
        ctx: EchoContext, tmp_path: Path) -> None:
    note = tmp_path / "vault/resources/concepts/category-theory.md"
    note.write_text("# Category Theory\n\nWritten by a person.\n", encoding="utf-8")
    envelope = capture(ctx, CaptureRequest(title="Category Theory", kind="concept",
                                           body="an agent adds this"))
    assert envelope.action == "updated", envelope.message
    assert entity_paths(tmp_path / "vault") == ["category-theory.md"]
    assert "an agent adds this" in note.read_text(encoding="utf-8")


def run_cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c",
                           "from plugins.cli_start import run; run()", *args],
                          env=env, cwd=REPO, capture_output=True, text=True, timeout=60, check=False)


def test_a_vault_folder_gone_missing_is_not_called_uninitialised(
        ctx: EchoContext, tmp_path: Path, env: dict[str, str]) -> None:
    vault, state = tmp_path / "vault", tmp_path / "state"
    shutil.rmtree(vault)  # an unmounted drive: the path existed, as a vault
    out = run_cli(["capture", "Ada Lovelace", "-k", "person", "--body", "kept safe",
                   "--vault", str(vault), "--state-dir", str(state), "--json"], env)
    assert out.returncode == 69, out
    assert json.loads(out.stdout)["action"] == "queued"
    assert "init" not in out.stdout + out.stderr
    assert "missing" in out.stdout + out.stderr
    assert len(outbox(tmp_path, vault).pending()) == 1  # nothing lost
    refused = run_cli(["init", "--vault", str(vault), "--state-dir", str(state)], env)
    assert refused.returncode == 69 and not vault.exists(), refused


def test_nothing_is_queued_for_a_folder_that_never_was_a_vault(
        tmp_path: Path, env: dict[str, str]) -> None:
    state = tmp_path / "state"
    for args in (["capture", "Ada", "-k", "person", "--body", "x"],
                 ["put", "notes/x.md", "-"], ["append", "notes/x.md", "a line"]):
        out = subprocess.run(
            [sys.executable, "-c", "from plugins.cli_start import run; run()", *args,
             "--vault", str(tmp_path / "never"), "--state-dir", str(state)],
            env=env, cwd=REPO, capture_output=True, text=True, timeout=60, input="# X\n",
            check=False)
        assert out.returncode == 78, out  # not a vault: the same for every verb
        assert "queued" not in out.stdout and "not an echo-memory vault" in out.stderr
    assert outbox(tmp_path, tmp_path / "never").pending() == []
    assert not (tmp_path / "never").exists()


def test_flush_does_not_write_into_a_folder_without_a_vault_marker(
        ctx: EchoContext, tmp_path: Path, env: dict[str, str]) -> None:
    queue_offline(tmp_path, env, [CaptureRequest(title="Sets", kind="concept", body="x")])
    vault = tmp_path / "vault"
    shutil.rmtree(vault)
    vault.mkdir()  # an empty mount point where the vault used to be
    result = flush(make_ctx(tmp_path, env)).data
    assert (result.synced, result.pending) == (0, 1)
    assert list(vault.iterdir()) == []


def test_a_capture_whose_later_write_is_refused_rolls_back_what_landed(
        ctx: EchoContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from echo_core.errors import EchoError, usage_error
    from plugins.storage_fs.folder_storage import FolderStorage

    real_write, real_conditional = FolderStorage.write, FolderStorage.write_unless_changed

    def refuse_daily(self: FolderStorage, path: str, text: str) -> None:
        if path.startswith("journal/daily/"):
            raise usage_error("refused (test)")
        real_write(self, path, text)

    def refuse_daily_if_unchanged(self: FolderStorage, path: str, text: str,
                                  expected: str | None) -> bool:
        if path.startswith("journal/daily/"):
            raise usage_error("refused (test)")
        return real_conditional(self, path, text, expected)

    monkeypatch.setattr(FolderStorage, "write", refuse_daily)
    monkeypatch.setattr(FolderStorage, "write_unless_changed", refuse_daily_if_unchanged)
    with pytest.raises(EchoError):
        capture(ctx, CaptureRequest(title="Rolled Back", kind="concept", body="not half-done"))
    monkeypatch.setattr(FolderStorage, "write", real_write)
    monkeypatch.setattr(FolderStorage, "write_unless_changed", real_conditional)
    vault = tmp_path / "vault"
    assert occurrences(vault, "not half-done") == 0
    assert list((ctx.state_dir / "pending-writes").glob("*.json")) == []
    assert capture(make_ctx(tmp_path, env_of(ctx)),
                   CaptureRequest(title="Rolled Back", kind="concept", body="later")).ok
    assert entity_paths(vault) == ["rolled-back.md"]


def test_an_intent_that_cannot_be_finished_is_set_aside_and_blocks_nothing(
        ctx: EchoContext, tmp_path: Path) -> None:
    folder = ctx.state_dir / "pending-writes"
    folder.mkdir(exist_ok=True)
    (folder / "deadbeefdeadbeef.json").write_text(json.dumps({
        "op_id": "deadbeefdeadbeef", "entities": [],
        "writes": [{"path": "../outside.md", "text": "x", "prior_sha": None}]}))
    envelope = capture(make_ctx(tmp_path, env_of(ctx)),
                       CaptureRequest(title="Still Works", kind="concept", body="fine"))
    assert envelope.action == "created", envelope.message
    assert (folder / "deadbeefdeadbeef.failed").exists()
    assert not (tmp_path / "outside.md").exists()
    from echo_core.ops.doctor import run_doctor

    checks = [c for c in run_doctor(make_ctx(tmp_path, env_of(ctx))).data.checks
              if c.name == "interrupted-writes"]
    assert [c.status for c in checks] == ["warn"] and "could not be finished" in checks[0].detail


def env_of(ctx: EchoContext) -> dict[str, str]:
    return dict(ctx.env)
