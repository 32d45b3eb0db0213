"""A long semantic memory list must not push the always-loaded notes (README: "in every
brief") and the operator preferences' observations (SPEC §4.1: the last 10) out of the
brief: the semantic lines past 1/``digest.SEMANTIC_SHARE`` of the budget go first, the rest is
trimmed last; an always-loaded note too long for its share is cut, not dropped."""

from __future__ import annotations

import datetime as _dt
import json
import re
from pathlib import Path

import pytest

from echo_core.ops import digest
from echo_core.ops.digest import (
    ALWAYS_LOAD_SHARE,
    TRUNCATED,
    Read,
    SemanticMemory,
    VaultSnapshot,
    render_digest,
    sections_text,
)
from echo_core.ops.load import load
from echo_core.ops.notes_io import set_frontmatter
from tests.capture_kit import VaultBox
from tests.conftest import run_cli

PREFS = "_agent/memory/semantic/operator-preferences.md"
SEMANTIC = "_agent/memory/semantic"
HIDDEN = re.compile(r"\(truncated\) (\d+) more semantic notes? not shown")


def _semantic_vault(box: VaultBox, notes: int, extra: str) -> list[str]:
    """``notes`` semantic notes, 20 observations, two pinned reference notes."""
    for i in range(notes):
        (box.vault / SEMANTIC / f"fact-{i:02d}.md").write_text(
            "---\ntype: semantic\nstatus: active\ncreated: 2026-02-01\nupdated: 2026-02-01\n"
            f"tags: [semantic]\n---\n# Fact {i:02d}\n\nThe build uses ruff, fact {i:02d}"
            f"{extra}.\n\n## Observations\n\n## Related\n", "utf-8")
    prefs = box.read(PREFS).replace("## Observations\n", "## Observations\n\n" + "".join(
        f"- 2026-02-{i % 27 + 1:02d}: observation-{i:02d} about the operator\n"
        for i in range(20)), 1)
    (box.vault / PREFS).write_text(prefs, "utf-8")
    pinned = []
    for title, body in (("Release checklist", "Tag, build wheel, upload."),
                        ("Deploy notes", "Deploy with make ship, never on Fridays.")):
        made = box.capture(title, kind="reference", body=body)
        assert made.ok, made.message
        assert set_frontmatter(box.ctx(), made.data.path, "always_load", True).ok
        pinned.append(body)
    return pinned


@pytest.mark.parametrize(("notes", "extra"), [(80, ", checked with twine before upload"),
                                            (60, ", " + "and more words " * 6)])
def test_pinned_notes_and_observations_stay_in_a_brief_full_of_semantic_notes(
        tmp_path: Path, notes: int, extra: str) -> None:
    box = VaultBox(tmp_path).init()
    pinned = _semantic_vault(box, notes, extra)
    data = load(box.ctx(), brief=True).data
    assert data.chars == len(data.digest) <= 8000
    sections = {s.name: s for s in data.sections}
    always = sections["always-load"]
    assert always.status == "ok" and always.text.startswith("## Always loaded\n")
    assert all(body in always.text for body in pinned)
    observations = sections["observations"]
    assert observations.status == "ok"
    assert observations.text.startswith("## Observations (last 10 of 20)\n")
    assert "observation-19 " in observations.text
    prefs = sections["preferences"]
    assert prefs.status == "truncated"
    hidden = HIDDEN.search(prefs.text)
    assert hidden is not None
    assert prefs.text.count("([[fact-") + int(hidden.group(1)) == notes


def test_the_session_start_hook_shows_the_pinned_notes(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    pinned = _semantic_vault(box, 80, ", checked with twine before upload")
    env = box.env(ECHO_VAULT=str(box.vault), ECHO_STATE_DIR=str(box.state))
    out = run_cli(["hook", "SessionStart"], env=env, stdin=b'{"source": "startup"}')
    assert out.returncode == 0, out.stderr
    context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "## Always loaded\n" in context and "always-loaded notes not shown" not in context
    assert all(body in context for body in pinned)
    assert "## Observations (last 10 of 20)" in context


def _snapshot(semantic: int, always: str = "") -> VaultSnapshot:
    prefs = ("---\ntype: semantic\n---\n# Prefs\n\n## Fact / Pattern\n\n- Prefers pytest\n\n"
             "## Observations\n\n" + "\n".join(f"- 2026-02-01: obs {i} " + "o" * 60
                                                for i in range(10)) + "\n")
    notes = tuple(Read(f"{SEMANTIC}/s-{i:02d}.md", "ok",
                       f"---\ntype: semantic\nupdated: 2026-02-{i + 1:02d}\n---\n# S {i:02d}\n\n"
                       f"rule {i:02d} " + "r" * 40 + "\n") for i in range(semantic))
    return VaultSnapshot(
        today=_dt.date(2026, 3, 1), expected_schema="1",
        marker=Read("_agent/echo-vault.md", "ok", "---\ntype: marker\nschema_version: 1\n---\n"),
        preferences=Read(PREFS, "ok", prefs), context=Read("c.md", "ok", ""),
        heartbeat=Read("h.md", "absent"), daily=Read("d.md", "absent"),
        inbox=Read("i.md", "absent"), semantic=SemanticMemory(SEMANTIC, notes),
        always_load=(Read("resources/references/pin.md", "ok",
                          f"---\nalways_load: true\n---\n# Pin\n\n{always}\n"),) if always else ())


def _render(snap: VaultSnapshot, budget: int) -> dict[str, tuple[str, str]]:
    sections = render_digest(snap, brief=True, budget=budget, full_budget=budget)
    assert len(sections_text(list(sections))) <= budget
    return {s.name: (s.status, s.text) for s in sections}


def test_semantic_lines_within_their_share_are_still_trimmed_last() -> None:
    snap = _snapshot(semantic=3)
    whole = _render(snap, 100_000)["preferences"][1]
    lines = sum(len(line) + 1 for line in whole.splitlines() if line.startswith("- S "))
    assert whole.count("\n- S ") == 3
    observations_first = 0
    for budget in range(len(sections_text(list(render_digest(
            snap, brief=True, budget=100_000, full_budget=100_000)))), 300, -10):
        sections = _render(snap, budget)
        if lines > budget // digest.SEMANTIC_SHARE:
            break  # past the share: those lines may go first
        if sections["preferences"][0] == "truncated":
            assert sections["observations"][0] == "truncated", budget
        observations_first += sections["observations"][0] == "truncated"
    assert observations_first  # observations were trimmed while every line stayed


def test_a_pinned_note_too_long_for_its_share_is_cut_not_dropped() -> None:
    budget = 1200  # the always-load share: 300 characters
    snap = _snapshot(semantic=0, always="pinned-start " + "word " * 150)
    status, text = _render(snap, budget)["always-load"]
    assert text.startswith("## Always loaded\n### [[pin]]\npinned-start word")
    assert f"{TRUNCATED} read resources/references/pin.md" in text
    assert "not shown" not in text and status == "truncated"
    assert len(text) <= budget // ALWAYS_LOAD_SHARE
