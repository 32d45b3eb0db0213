"""Archived versions under ``_agent/archive/`` are kept as they were (SPEC §1.4, §2.6):
note verbs refuse them with exit 2 naming the rule; evolve, history and restore of the
current note still work."""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.ops.evolve import evolve_note
from echo_core.ops.history import restore_note
from echo_core.write_scope import require_note_path
from tests.capture_kit import VaultBox
from tests.cli_inproc import run_main

NOTE = "resources/concepts/deploy-process.md"
ARCHIVE = "_agent/archive/resources/concepts/deploy-process--2026-03-09.md"
DAY = {"ECHO_TODAY": "2026-03-09", "ECHO_NOW": "2026-03-09T10:00:00"}
RULE = "an archived version is kept as it was; restore it or evolve the current note"


@pytest.fixture()
def box(tmp_path: Path) -> VaultBox:
    box = VaultBox(tmp_path).init()
    assert box.capture("Deploy Process", kind="concept", body="Deploys run from Jenkins.").ok
    assert box.capture("Release Train", kind="concept", body="Weekly.").ok
    new = box.read(NOTE).replace("Jenkins", "Argo CD")
    assert evolve_note(box.ctx(**DAY), NOTE, "moved to Argo CD", new).data.archive == ARCHIVE
    return box


@pytest.mark.parametrize("verb", [
    ["link", ARCHIVE, "resources/concepts/release-train.md"],
    ["link", "resources/concepts/release-train.md", ARCHIVE],
    ["append", ARCHIVE, "- one more line"],
    ["fm", ARCHIVE, "status", '"draft"'],
    ["patch", ARCHIVE, "--op", "replace", "--field", "status", "draft"],
    ["put", ARCHIVE, "-"],
    ["append", "_Agent/Archive/resources/concepts/new-note.md", "- a new file there"],
])
def test_note_verbs_refuse_an_archived_version(
        box: VaultBox, verb: list[str], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in box.env(**DAY).items():
        monkeypatch.setenv(key, value)
    digest = box.tree_digest()
    base = ["--vault", str(box.vault), "--state-dir", str(box.state)]
    run = run_main([verb[0], *base, *verb[1:]], capsys, monkeypatch, stdin=b"# Edited\n")
    assert run.code == ExitCode.USAGE, run
    assert RULE in run.err + run.out, run
    assert box.tree_digest() == digest


def test_the_rule_is_named_by_require_note_path() -> None:
    with pytest.raises(EchoError) as err:
        require_note_path(ARCHIVE)
    assert err.value.code == ExitCode.USAGE and RULE in err.value.message


def test_the_current_note_is_still_evolved_and_restored(box: VaultBox) -> None:
    archived = box.read(ARCHIVE)
    second = box.read(NOTE).replace("Argo CD", "Flux")
    env = evolve_note(box.ctx(**DAY), NOTE, "moved to Flux", second)
    assert env.ok and env.data.archive == ARCHIVE.replace(".md", "-2.md")
    restored = restore_note(box.ctx(**DAY), NOTE, "previous", confirm=True)
    assert restored.ok and restored.data.restored
    assert "Argo CD" in box.read(NOTE) and box.read(ARCHIVE) == archived
