"""``recall --as-of`` over a note's whole archive chain (SPEC §2.6, §3.3).

Every period of a note evolved several times answers with the text it held then, however
the note names its archives: a note that names only its newest archive (the chain runs
through the archives' own ``supersedes``), a note a ``restore`` rewrote (its text then is
archived like an evolve's, so the period before the restore is not lost), restores and
evolves mixed on one day, a moved note whose archives sit in two folders, and an archive
a person edited or deleted (the other periods still answer)."""

from __future__ import annotations

import datetime as _dt
import itertools
from pathlib import Path

import pytest

from echo_core.ops.evolve import evolve_note
from echo_core.ops.history import note_history, restore_note
from echo_core.ops.recall_as_of import recall_as_of
from echo_core.ops.sweep import full_sweep
from tests.capture_kit import VaultBox

NOTE = "resources/concepts/deploy-process.md"
ARCHIVE = "_agent/archive/resources/concepts/deploy-process"
TOOLS = ("Jenkins", "Argo CD", "Flux", "Tekton")


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    """The deploy-process concept, written on 2026-01-02: "Deploys run from Jenkins."."""
    box = VaultBox(tmp_path).init()
    assert box.capture("Deploy Process", kind="concept", today="2026-01-02",
                       body="Deploys run from Jenkins.").ok
    return box


def _evolve(box: VaultBox, day: str, old: str, new: str, *, only_newest: bool = False,
            path: str = NOTE) -> None:
    """Evolve ``path`` on ``day`` replacing the tool ``old`` by ``new``; ``only_newest``:
    the new text leaves ``supersedes`` empty, so the note names only its newest archive."""
    text = box.read(path).replace(old, new)
    if only_newest:
        head, sep, body = text.partition("\n---\n")
        head = "\n".join(line for line in head.split("\n")
                         if not line.startswith("supersedes:")) + "\nsupersedes:"
        text = head + sep + body
    env = evolve_note(box.ctx(ECHO_TODAY=day, ECHO_NOW=f"{day}T10:00:00"), path,
                      f"moved to {new}", text)
    assert env.ok and env.data.changed, env


def _restore(box: VaultBox, day: str, tool: str, path: str = NOTE) -> None:
    """Restore ``path`` on ``day`` to the newest kept version whose text names ``tool``."""
    ctx = box.ctx(ECHO_TODAY=day, ECHO_NOW=f"{day}T11:00:00")
    version = next(v for v in note_history(ctx, path).data.versions
                   if f"Deploys run from {tool}." in ctx.history.text(path, v))
    env = restore_note(ctx, path, version.version_id, confirm=True)
    assert env.ok and env.data.restored, env


def _then(box: VaultBox, day: str) -> str:
    """The tool the note said deploys run from, as of ``day`` (the top hit's excerpt)."""
    env = recall_as_of(box.ctx(ECHO_TODAY="2026-06-30"), "deploys run",
                       _dt.date.fromisoformat(day), include_linked=False)
    assert env.ok and env.data.primary, env
    hit = env.data.primary[0]
    assert hit.validity == "current", hit
    said = [tool for tool in TOOLS if f"Deploys run from {tool}." in hit.excerpt]
    assert len(said) == 1, hit.excerpt
    assert len(env.data.primary) == 1, [h.path for h in env.data.primary]  # no doubles
    return said[0]


def test_as_of_walks_the_chain_when_the_note_names_only_its_newest_archive(
        box: VaultBox) -> None:
    _evolve(box, "2026-02-01", "Jenkins", "Argo CD", only_newest=True)
    _evolve(box, "2026-03-01", "Argo CD", "Flux", only_newest=True)
    _evolve(box, "2026-04-01", "Flux", "Tekton", only_newest=True)
    assert box.frontmatter(NOTE)["supersedes"] == "[[deploy-process--2026-04-01]]"
    periods = {"2026-01-15": "Jenkins", "2026-02-15": "Argo CD", "2026-03-15": "Flux",
               "2026-04-15": "Tekton", "2026-02-01": "Argo CD", "2026-01-31": "Jenkins"}
    assert {day: _then(box, day) for day in periods} == periods


def test_as_of_after_a_restore_still_answers_with_what_was_true_before_it(
        box: VaultBox) -> None:
    for day, (old, new) in zip(("2026-02-01", "2026-03-01", "2026-04-01"),
                               itertools.pairwise(TOOLS), strict=True):
        _evolve(box, day, old, new)
    _restore(box, "2026-04-10", "Jenkins")
    assert "Deploys run from Jenkins." in box.read(NOTE)
    archived = box.read(f"{ARCHIVE}--2026-04-10.md")  # what the restore replaced
    assert "Deploys run from Tekton." in archived and "superseded_at: 2026-04-10" in archived
    periods = {"2026-01-15": "Jenkins", "2026-02-15": "Argo CD", "2026-03-15": "Flux",
               "2026-04-05": "Tekton", "2026-04-15": "Jenkins"}
    assert {day: _then(box, day) for day in periods} == periods


def test_evolve_restore_evolve_keeps_every_period(box: VaultBox) -> None:
    _evolve(box, "2026-02-01", "Jenkins", "Argo CD")
    _restore(box, "2026-03-01", "Jenkins")
    _evolve(box, "2026-04-01", "Jenkins", "Flux")
    periods = {"2026-01-15": "Jenkins", "2026-02-15": "Argo CD", "2026-03-15": "Jenkins",
               "2026-04-15": "Flux"}
    assert {day: _then(box, day) for day in periods} == periods


def test_evolve_restore_evolve_on_one_day_answers_the_day_before_with_the_first_text(
        box: VaultBox) -> None:
    _evolve(box, "2026-03-09", "Jenkins", "Argo CD")
    _restore(box, "2026-03-09", "Jenkins")
    _evolve(box, "2026-03-09", "Jenkins", "Flux")
    assert sorted(p.name for p in (box.vault / ARCHIVE).parent.glob("deploy-process--*")) == [
        "deploy-process--2026-03-09-2.md", "deploy-process--2026-03-09-3.md",
        "deploy-process--2026-03-09.md"]
    assert _then(box, "2026-03-08") == "Jenkins"
    assert _then(box, "2026-03-09") == "Flux"


def test_restoring_the_same_version_twice_archives_once(box: VaultBox) -> None:
    _evolve(box, "2026-02-01", "Jenkins", "Argo CD")
    _restore(box, "2026-03-01", "Jenkins")
    before = box.files()
    ctx = box.ctx(ECHO_TODAY="2026-03-02")
    again = restore_note(ctx, NOTE, ctx.history.versions(NOTE)[-1].version_id, confirm=True)
    assert again.action == "unchanged" and box.files() == before


def test_a_hand_edited_or_missing_archive_loses_no_other_period(box: VaultBox) -> None:
    _evolve(box, "2026-02-01", "Jenkins", "Argo CD", only_newest=True)
    _evolve(box, "2026-03-01", "Argo CD", "Flux", only_newest=True)
    _evolve(box, "2026-04-01", "Flux", "Tekton", only_newest=True)
    newest = box.vault / f"{ARCHIVE}--2026-04-01.md"  # a person drops its supersedes line
    newest.write_text("".join(line for line in newest.read_text().splitlines(keepends=True)
                              if not line.startswith("supersedes:")))
    periods = {"2026-01-15": "Jenkins", "2026-02-15": "Argo CD", "2026-03-15": "Flux",
               "2026-04-15": "Tekton"}
    assert {day: _then(box, day) for day in periods} == periods
    (box.vault / f"{ARCHIVE}--2026-03-01.md").unlink()  # the Argo CD version is gone
    (box.vault / f"{ARCHIVE}--2026-02-01.md").write_text("---\nsuperseded_at: [oops\n---\n")
    assert _then(box, "2026-03-15") == "Flux"
    assert _then(box, "2026-04-15") == "Tekton"


def test_a_moved_then_evolved_project_answers_from_both_archive_folders(
        box: VaultBox) -> None:
    old, new = "projects/active/alpha-project.md", "projects/on-hold/alpha-project.md"
    assert box.capture("Alpha Project", kind="project", today="2026-01-02",
                       body="Deploys run from Jenkins.").data.path == old
    _evolve(box, "2026-02-01", "Jenkins", "Argo CD", path=old, only_newest=True)
    (box.vault / old).write_text(box.read(old).replace("status: active", "status: on-hold"))
    assert full_sweep(box.ctx(ECHO_TODAY="2026-02-10"), apply=True, decay=True).ok
    assert (box.vault / new).exists() and not (box.vault / old).exists()
    _evolve(box, "2026-03-01", "Argo CD", "Flux", path=new, only_newest=True)
    _restore(box, "2026-04-01", "Jenkins", path=new)

    def said(day: str) -> str:
        env = recall_as_of(box.ctx(ECHO_TODAY="2026-06-30"), "alpha project deploys",
                           _dt.date.fromisoformat(day), include_linked=False)
        hits = [h for h in env.data.primary if "alpha-project" in h.path]
        assert len(hits) == 1, [h.path for h in hits]
        return next(t for t in TOOLS if f"Deploys run from {t}." in hits[0].excerpt)

    periods = {"2026-01-15": "Jenkins", "2026-02-15": "Argo CD", "2026-03-15": "Flux",
               "2026-04-15": "Jenkins"}
    assert {day: said(day) for day in periods} == periods
