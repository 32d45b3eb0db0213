"""A note renamed by hand, then deleted by hand: ``history`` of its last path still finds
the versions kept at the paths it was renamed from (the rename log), and ``restore``
brings it back there (SPEC §5.6)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from echo_core.models import Envelope
from echo_core.operations.invoke import invoke
from tests.capture_kit import VaultBox
from tests.conftest import run_cli

OLD = "resources/concepts/n.md"
NEW = "resources/concepts/renamed.md"
V1, V2 = "# N\n\nv1\n", "# N\n\nv2\n"
NOW = {"ECHO_TODAY": "2026-03-10", "ECHO_NOW": "2026-03-10T10:00:00"}


def run(box: VaultBox, verb: str, **params: Any) -> Envelope[Any]:
    """``verb`` as every surface runs it (its vault-change check first)."""
    return invoke(box.ctx(**NOW), verb, params)


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    """OLD written twice (V1 kept), renamed by hand to NEW (seen by a command), then
    deleted by hand."""
    box = VaultBox(tmp_path).init()
    run(box, "history", path="inbox/captures/inbox.md")  # the manifest's baseline
    assert run(box, "put", path=OLD, text=V1).ok
    assert run(box, "put", path=OLD, text=V2).ok
    os.rename(box.vault / OLD, box.vault / NEW)
    assert [v.path for v in run(box, "history", path=NEW).data.versions] == [OLD]
    (box.vault / NEW).unlink()
    return box


def test_history_of_a_renamed_then_deleted_note_lists_its_old_paths_versions(
        box: VaultBox) -> None:
    env = run(box, "history", path=NEW)
    assert env.ok and not env.data.exists and env.data.moved_to is None
    assert [(v.path, v.size) for v in env.data.versions] == [(OLD, len(V1))]
    assert f"kept at {OLD}" in env.message
    assert env.data.deleted is not None and not env.data.deleted.kept  # V2 was never kept


def test_restore_brings_a_renamed_then_deleted_note_back_at_its_last_path(
        box: VaultBox) -> None:
    done = run(box, "restore", path=NEW, version_id="previous", confirm=True)
    assert done.data.restored and box.read(NEW) == V1
    assert not (box.vault / OLD).exists()
    assert any("not the note as it was" in w for w in done.warnings)


def test_the_cli_lists_them_too(box: VaultBox) -> None:
    env = {**box.env(**NOW), "ECHO_VAULT": str(box.vault), "ECHO_STATE_DIR": str(box.state)}
    done = run_cli(["history", NEW], env=env)
    assert done.returncode == 0, done.stderr
    assert f"(kept at {OLD})" in done.stdout and "deleted by hand" in done.stdout
