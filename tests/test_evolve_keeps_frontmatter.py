"""``evolve`` with a new text that leaves keys out (SPEC §2.6): the old note's frontmatter
keys and trailing ``## Related`` links carry over; the new text's keys win, an empty key
drops one; the archived version stays byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core.actions import Action
from echo_core.ops.evolve import archived_original, evolve_note
from echo_core.ops.lint.run import lint
from echo_core.ops.resolve import link, resolve
from tests.capture_kit import VaultBox
from tests.cli_inproc import run_main

GRACE = "resources/people/grace-hopper.md"
ADA = "resources/people/ada-lovelace.md"
ARCHIVE = "_agent/archive/resources/people/grace-hopper--2026-03-09.md"
BARE = "# Grace Hopper\n\nRear admiral.\n"
DAY = {"ECHO_TODAY": "2026-03-09", "ECHO_NOW": "2026-03-09T10:00:00"}


@pytest.fixture()
def box(tmp_path: Path) -> VaultBox:
    box = VaultBox(tmp_path).init()
    assert box.capture("Grace Hopper", kind="person", aliases=["Amazing Grace"],
                       tags=["navy"]).ok
    return box


def test_evolve_with_a_bare_text_keeps_the_frontmatter_and_the_alias(
        box: VaultBox, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    old = box.read(GRACE)
    for key, value in box.env(**DAY).items():
        monkeypatch.setenv(key, value)
    base = ["--vault", str(box.vault), "--state-dir", str(box.state)]
    run = run_main(["evolve", *base, GRACE, "detail", "-"], capsys, monkeypatch,
                   stdin=BARE.encode())
    assert run.code == 0, run
    assert box.read(GRACE) == (
        "---\ntype: person\nstatus: active\ncreated: 2026-03-01\nupdated: 2026-03-09\n"
        "tags: [person, navy]\naliases: [Amazing Grace]\n"
        'supersedes: "[[grace-hopper--2026-03-09]]"\n---\n' + BARE)
    assert archived_original(box.read(ARCHIVE)) == old
    found = resolve(box.ctx(**DAY), "Amazing Grace").data
    assert found.match and found.path == GRACE
    findings = lint(box.ctx(**DAY), ("incomplete-frontmatter",)).data.findings
    assert [f for f in findings if f.path == GRACE] == []


def test_the_new_texts_keys_win_and_an_empty_key_drops_the_old_one(box: VaultBox) -> None:
    new = "---\nstatus: complete\naliases:\n---\n" + BARE
    assert evolve_note(box.ctx(**DAY), GRACE, "retired", new).ok
    fm = box.frontmatter(GRACE)
    assert fm["status"] == "complete" and "aliases" not in fm
    assert fm["type"] == "person" and fm["tags"] == ["person", "navy"]
    assert fm["created"] == "2026-03-01" and fm["updated"] == "2026-03-09"
    assert box.read(GRACE).startswith("---\nstatus: complete\ntype: person\n")


def test_evolve_keeps_the_related_links_when_the_new_text_has_none(box: VaultBox) -> None:
    assert box.capture("Ada Lovelace", kind="person").ok
    assert link(box.ctx(), GRACE, ADA).ok
    related = box.read(GRACE).split("## Related", 1)[1]
    assert "[[ada-lovelace]]" in related
    assert evolve_note(box.ctx(**DAY), GRACE, "detail", BARE).ok
    assert box.read(GRACE).endswith(BARE + "\n## Related" + related)


def test_evolving_to_the_same_bare_text_again_changes_nothing(box: VaultBox) -> None:
    assert evolve_note(box.ctx(**DAY), GRACE, "detail", BARE).ok
    digest = box.tree_digest()
    again = evolve_note(box.ctx(**DAY), GRACE, "detail", BARE)
    assert again.action == Action.UNCHANGED and box.tree_digest() == digest
