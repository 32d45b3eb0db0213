"""``evolve`` (SPEC §2.6): the old version archived byte for byte, the new one in place."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from echo_core.actions import Action
from echo_core.errors import EchoError, ExitCode
from echo_core.ops.evolve import archived_original, evolve_note
from tests.capture_kit import VaultBox
from tests.cli_inproc import run_main
from tests.mcp_kit import call, make_server, with_client

NOTE = "resources/concepts/deploy-process.md"
ARCHIVE = "_agent/archive/resources/concepts/deploy-process--2026-03-09.md"


@pytest.fixture()
def box(tmp_path: Path) -> VaultBox:
    box = VaultBox(tmp_path).init()
    assert box.capture("Deploy Process", kind="concept", body="Deploys run from Jenkins.").ok
    return box


def _new_text(box: VaultBox) -> str:
    return box.read(NOTE).replace("Jenkins", "Argo CD")


def test_evolve_archives_every_byte_and_writes_the_new_version(box: VaultBox) -> None:
    old, new = box.read(NOTE), _new_text(box)
    env = evolve_note(box.ctx(ECHO_TODAY="2026-03-09"), NOTE, "moved to Argo CD", new)
    assert env.ok and env.action == Action.WRITTEN and env.data.archive == ARCHIVE
    archived = box.read(ARCHIVE)
    assert archived_original(archived) == old
    assert archived == old.replace("tags: [concept]\n", "tags: [concept]\n"
                                   "superseded_by: \"[[deploy-process]]\"\n"
                                   "superseded_at: 2026-03-09\n"
                                   "superseded_reason: moved to Argo CD\n")
    assert box.read(NOTE) == new.replace("updated: 2026-03-01", "updated: 2026-03-09").replace(
        "tags: [concept]\n", "tags: [concept]\nsupersedes: \"[[deploy-process--2026-03-09]]\"\n")


def test_evolving_to_the_same_text_again_changes_nothing(box: VaultBox) -> None:
    new = _new_text(box)
    assert evolve_note(box.ctx(ECHO_TODAY="2026-03-09"), NOTE, "moved", new).ok
    digest = box.tree_digest()
    again = evolve_note(box.ctx(ECHO_TODAY="2026-03-09"), NOTE, "moved", new)
    assert again.action == Action.UNCHANGED and box.tree_digest() == digest


def test_a_second_evolve_the_same_day_gets_its_own_archive(box: VaultBox) -> None:
    first = _new_text(box)
    assert evolve_note(box.ctx(ECHO_TODAY="2026-03-09"), NOTE, "moved", first).ok
    held = box.read(NOTE)
    second = held.replace("Argo CD", "Flux")
    env = evolve_note(box.ctx(ECHO_TODAY="2026-03-09"), NOTE, "moved again", second)
    assert env.data.archive == ARCHIVE.replace(".md", "-2.md")
    assert archived_original(box.read(env.data.archive)) == held
    assert box.frontmatter(NOTE)["supersedes"] == ["[[deploy-process--2026-03-09]]",
                                                  "[[deploy-process--2026-03-09-2]]"]


def test_an_archived_version_cannot_be_evolved(box: VaultBox) -> None:
    assert evolve_note(box.ctx(ECHO_TODAY="2026-03-09"), NOTE, "moved", _new_text(box)).ok
    digest = box.tree_digest()
    with pytest.raises(EchoError) as err:
        evolve_note(box.ctx(ECHO_TODAY="2026-03-10"), ARCHIVE, "edit the past",
                    box.read(ARCHIVE).replace("Jenkins", "Bamboo"))
    assert err.value.code == ExitCode.USAGE and "archived version" in err.value.message
    assert box.tree_digest() == digest


def test_dry_run_names_the_archive_and_writes_nothing(box: VaultBox) -> None:
    digest = box.tree_digest()
    env = evolve_note(box.ctx(ECHO_TODAY="2026-03-09"), NOTE, "moved", _new_text(box),
                      dry_run=True)
    assert env.ok and env.data.archive == ARCHIVE and box.tree_digest() == digest


@pytest.mark.parametrize(("path", "reason", "text", "code"), [
    ("resources/concepts/nope.md", "why", "# X\n", ExitCode.NOT_FOUND),
    (NOTE, "  ", "# X\n", ExitCode.USAGE),
    (NOTE, "two\nlines", "# X\n", ExitCode.USAGE),
    (NOTE, "why", "   \n", ExitCode.USAGE),
    ("_agent/index/entities.json", "why", "# X\n", ExitCode.USAGE),
])
def test_bad_evolve_arguments_write_nothing(box: VaultBox, path: str, reason: str, text: str,
                                           code: ExitCode) -> None:
    digest = box.tree_digest()
    with pytest.raises(EchoError) as err:
        evolve_note(box.ctx(), path, reason, text)
    assert err.value.code == code
    assert box.tree_digest() == digest


def test_the_index_follows_a_new_title(box: VaultBox) -> None:
    new = _new_text(box).replace("# Deploy Process", "# Release Process")
    assert evolve_note(box.ctx(ECHO_TODAY="2026-03-09"), NOTE, "renamed", new).ok
    assert box.entity("deploy-process").title == "Release Process"


def test_evolve_from_the_cli_reads_the_new_text_from_stdin(
        box: VaultBox, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in box.env(ECHO_TODAY="2026-03-09").items():
        monkeypatch.setenv(key, value)
    base = ["--vault", str(box.vault), "--state-dir", str(box.state)]
    run = run_main(["evolve", *base, NOTE, "moved to Argo CD", "-", "--json"], capsys,
                   monkeypatch, stdin=_new_text(box).encode())
    assert run.code == 0, run
    assert '"archive": "' + ARCHIVE in run.out
    assert "Argo CD" in box.read(NOTE)


def test_evolve_over_mcp(box: VaultBox) -> None:
    server = make_server(box, env=box.env(ECHO_TODAY="2026-03-09", ECHO_NOW="2026-03-09T10:00:00"))

    async def body(client: Any) -> tuple[bool, dict[str, Any], str]:
        return await call(client, "echo_evolve", path=NOTE, reason="moved to Argo CD",
                          text=_new_text(box))

    try:
        is_error, data, _text = with_client(server, body)
    finally:
        server.runner.close()
    assert not is_error and data["archive"] == ARCHIVE, data
    assert (box.vault / ARCHIVE).exists()


def test_an_evolve_cut_short_after_its_archive_and_run_again_elsewhere_archives_once(
        box: VaultBox, tmp_path: Path) -> None:
    """The run killed after writing its archive left its intent on its own machine; run
    again from another (no intent), the archive holding exactly that version is taken as
    it is: no second archive of the same text."""
    import datetime as dt

    from echo_core.ops.evolve import archived_version

    old, new = box.read(NOTE), _new_text(box)
    written = archived_version(old, NOTE, "moved", dt.date(2026, 3, 9))
    (box.vault / ARCHIVE).parent.mkdir(parents=True, exist_ok=True)
    (box.vault / ARCHIVE).write_text(written, "utf-8")  # what the killed run left
    elsewhere = VaultBox(box.root)
    elsewhere.state = tmp_path / "other-machine"  # its own state dir: no intent there
    env = evolve_note(elsewhere.ctx(ECHO_TODAY="2026-03-09"), NOTE, "moved", new)
    assert env.ok and env.data.archive == ARCHIVE
    assert box.read(ARCHIVE) == written
    archives = sorted(p.name for p in (box.vault / ARCHIVE).parent.iterdir())
    assert archives == ["deploy-process--2026-03-09.md"]
    assert "Argo CD" in box.read(NOTE)
