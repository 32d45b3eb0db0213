"""``restore --base VERSION`` refuses a stale restore as ``evolve --base`` refuses a stale
edit: someone lists a note's history (its ``current_version``), a capture lands, then
``restore PATH previous --yes`` would silently revert that capture (``previous`` now
names the text before it). With the version listed as the base, nothing is written and
the exit is 1; with the current one the restore goes ahead; without a base, as before."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from echo_core.actions import Action
from echo_core.errors import EchoError, ExitCode
from echo_core.ops.evolve import evolve_note
from echo_core.ops.history import note_history, restore_note
from echo_core.ops.notes_io import get_note, note_version
from plugins.transport_mcp.server import EchoMcpServer
from tests.capture_kit import VaultBox
from tests.cli_inproc import run_main
from tests.mcp_kit import call, make_server, with_client

NOTE = "resources/concepts/deploy-process.md"


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    box = VaultBox(tmp_path).init()
    assert box.capture("Deploy Process", kind="concept", body="Deploys run from Jenkins.").ok
    assert box.capture("Deploy Process", kind="concept", body="Deploys take 10 min.").ok
    return box


def _capture_lands(box: VaultBox) -> None:
    """A capture between the listing and the restore."""
    assert box.capture("Deploy Process", kind="concept", body="Rollbacks take 5 min qvx.").ok


def _versions(box: VaultBox) -> list[str]:
    return [v.version_id for v in note_history(box.ctx(), NOTE).data.versions]


def test_history_names_the_notes_current_version(box: VaultBox) -> None:
    listed = note_history(box.ctx(), NOTE).data
    assert listed.current_version == note_version(box.read(NOTE))
    assert listed.current_version == get_note(box.ctx(), NOTE).data.version


def test_restore_from_a_stale_base_writes_nothing(box: VaultBox) -> None:
    looked = note_history(box.ctx(), NOTE).data.current_version
    _capture_lands(box)
    text, versions, before = box.read(NOTE), _versions(box), box.tree_digest()
    with pytest.raises(EchoError) as stale:
        restore_note(box.ctx(), NOTE, "previous", confirm=True, base=looked)
    assert stale.value.code == ExitCode.FAILURE
    assert f"changed since version {looked} was read" in stale.value.message
    assert "nothing was written" in stale.value.message
    assert box.read(NOTE) == text and "qvx" in text
    assert _versions(box) == versions and box.tree_digest() == before


def test_restore_refusal_reads_like_evolves(box: VaultBox) -> None:
    looked = note_history(box.ctx(), NOTE).data.current_version
    assert looked is not None
    _capture_lands(box)
    with pytest.raises(EchoError) as restore:
        restore_note(box.ctx(), NOTE, "previous", confirm=True, base=looked)
    with pytest.raises(EchoError) as evolve:
        evolve_note(box.ctx(), NOTE, "why", "# Deploy Process\n\nnew\n", base=looked)
    stem = restore.value.message.split("; nothing was written")[0]
    assert evolve.value.message.startswith(stem + "; nothing was written")
    assert restore.value.code == evolve.value.code == ExitCode.FAILURE


def test_restore_from_the_current_base_restores(box: VaultBox) -> None:
    _capture_lands(box)
    before_capture = box.read(NOTE)
    looked = note_history(box.ctx(), NOTE).data.current_version
    assert looked is not None
    env = restore_note(box.ctx(), NOTE, "previous", confirm=True, base=looked[:6].upper())
    assert env.action == Action.RESTORED and env.data.restored and not env.data.base_stale
    assert env.data.current_version == looked
    assert "qvx" not in box.read(NOTE) and box.read(NOTE) != before_capture


def test_a_preview_from_a_stale_base_says_so_and_writes_nothing(box: VaultBox) -> None:
    looked = note_history(box.ctx(), NOTE).data.current_version
    assert looked is not None
    _capture_lands(box)
    before, versions = box.tree_digest(), _versions(box)
    env = restore_note(box.ctx(), NOTE, "previous", confirm=False, base=looked)
    assert env.action == Action.PREVIEW and env.data.base_stale and not env.data.restored
    assert f"changed since version {looked} was read" in env.message
    assert "would be refused" in env.message
    assert env.data.current_version == note_version(box.read(NOTE))
    assert box.tree_digest() == before and _versions(box) == versions
    fresh = restore_note(box.ctx(), NOTE, "previous", confirm=False,
                         base=env.data.current_version)
    assert not fresh.data.base_stale and "changed since" not in fresh.message


def test_without_a_base_restore_reverts_as_before(box: VaultBox) -> None:
    _capture_lands(box)
    env = restore_note(box.ctx(), NOTE, "previous", confirm=True)
    assert env.action == Action.RESTORED and not env.data.base_stale
    assert "qvx" not in box.read(NOTE)  # the capture's text is now only in history


def test_cli_history_prints_the_base_and_restore_refuses_a_stale_one(
        box: VaultBox, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in box.env().items():
        monkeypatch.setenv(key, value)
    where = ["--vault", str(box.vault), "--state-dir", str(box.state)]
    listed = run_main(["history", *where, NOTE, "--json"], capsys, monkeypatch)
    looked = json.loads(listed.out)["current_version"]
    assert listed.code == 0 and looked == note_version(box.read(NOTE))
    text = run_main(["history", *where, NOTE], capsys, monkeypatch)
    assert f"--base {looked}" in text.out and f"version {looked}" in text.out
    _capture_lands(box)
    now = box.read(NOTE)
    preview = run_main(["restore", *where, NOTE, "previous", "--base", looked], capsys,
                       monkeypatch)
    assert preview.code == 0 and "would be refused" in preview.out
    refused = run_main(["restore", *where, NOTE, "previous", "--yes", "--base", looked],
                       capsys, monkeypatch)
    assert refused.code == 1 and "changed since" in refused.err
    assert f"echo-memory history {NOTE}" in refused.err
    assert box.read(NOTE) == now
    fresh = note_version(now)
    done = run_main(["restore", *where, NOTE, "previous", "--yes", "--base", fresh],
                    capsys, monkeypatch)
    assert done.code == 0, done
    assert "qvx" not in box.read(NOTE)


@pytest.fixture
def server(box: VaultBox) -> Iterator[EchoMcpServer]:
    built = make_server(box)
    yield built
    built.runner.close()


def test_mcp_restore_note_takes_a_base(server: EchoMcpServer, box: VaultBox) -> None:
    err, listed, text = with_client(server, lambda c: call(c, "echo_note_history", path=NOTE))
    looked = listed["current_version"]
    assert not err and f'base: "{looked}"' in text
    _capture_lands(box)
    now, before = box.read(NOTE), box.tree_digest()
    err, data, text = with_client(server, lambda c: call(
        c, "echo_restore_note", path=NOTE, version_id="previous", confirm=True, base=looked))
    assert err and data["error"]["code"] == "failure" and "changed since" in text
    assert "echo_note_history" in text and "echo-memory" not in text
    assert box.read(NOTE) == now and box.tree_digest() == before
    err, data, _ = with_client(server, lambda c: call(
        c, "echo_restore_note", path=NOTE, version_id="previous", confirm=True,
        base=note_version(now)))
    assert not err and data["restored"] is True and "qvx" not in box.read(NOTE)


def test_a_whole_sha_is_a_base_too() -> None:
    from echo_core.ops.base_version import base_is_stale
    from echo_core.ops.notes_io import note_version

    text = "# Ada\n\nfirst\n"
    whole = hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert whole.startswith(note_version(text))
    assert not base_is_stale(text, whole) and not base_is_stale(text, whole.upper())
    assert base_is_stale(text + "x", whole) and base_is_stale(None, whole)
