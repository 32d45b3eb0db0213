"""Always-load (issue 16 item 4): a note whose frontmatter says ``always_load: true`` is
in every brief, within its share of ``ECHO_LOAD_BUDGET``; over budget it is trimmed
after the last-session summary and before Fact / Pattern (``TRIM_ORDER``)."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from echo_core.ops.always_load import load_registry
from echo_core.ops.digest import (
    ALWAYS_LOAD_SHARE,
    TRIM_ORDER,
    TRUNCATED,
    Read,
    VaultSnapshot,
    render_digest,
)
from echo_core.ops.load import load
from echo_core.ops.sweep import full_sweep
from tests.capture_kit import VaultBox

RUNBOOK = "resources/references/deploy-runbook.md"


def _always(box: VaultBox, path: str, body: str) -> None:
    (box.vault / path).parent.mkdir(parents=True, exist_ok=True)
    (box.vault / path).write_text(f"---\ntype: reference\nstatus: active\nalways_load: true\n"
                                  f"---\n# {path}\n\n{body}\n\n## Related\n- [[x]]\n", "utf-8")


def test_an_always_load_note_is_in_the_brief_with_its_text(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    _always(box, RUNBOOK, "Deploy with `make ship`; never on Fridays.")
    full_sweep(box.ctx(), apply=True)  # the sweep finds the key (hand edit)
    assert RUNBOOK in load_registry(box.ctx().state_dir)
    brief = load(box.ctx(), brief=True).data
    section = next(s for s in brief.sections if s.name == "always-load")
    assert section.text.startswith("## Always loaded\n### [[deploy-runbook]]\n")
    assert "never on Fridays" in section.text and "## Related" not in section.text
    names = [s.name for s in brief.sections]
    assert names.index("observations") < names.index("always-load") < names.index("last-session")


def test_a_note_whose_key_was_removed_is_no_longer_in_the_brief(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    _always(box, RUNBOOK, "Deploy with make ship.")
    full_sweep(box.ctx(), apply=True)
    path = box.vault / RUNBOOK
    path.write_text(path.read_text("utf-8").replace("always_load: true\n", ""), "utf-8")
    brief = load(box.ctx(), brief=True).data
    assert "always-load" not in [s.name for s in brief.sections]


def _snapshot(notes: int, body: str) -> VaultSnapshot:
    ok = Read("x.md", "ok", "")
    prefs = ("---\ntype: semantic\n---\n# Prefs\n\n## Fact / Pattern\n\n- Prefers pytest\n\n"
             "## Observations\n\n" + "\n".join(f"- 2026-02-01: obs {i} " + "o" * 60
                                                for i in range(10)) + "\n")
    session = ("---\ntype: session\n---\n# S\n\n## Goal\n\n" + "\n".join(
        f"- goal line {i} " + "g" * 60 for i in range(10)) + "\n")
    return VaultSnapshot(
        today=_dt.date(2026, 3, 1), expected_schema="1",
        marker=Read("_agent/echo-vault.md", "ok", "---\ntype: marker\nschema_version: 1\n---\n"),
        preferences=Read("p.md", "ok", prefs), context=ok,
        heartbeat=Read("h.md", "ok", "_agent/sessions/s.md @ 2026-03-01T09:00"),
        daily=Read("d.md", "absent"), inbox=Read("i.md", "absent"),
        session_log=Read("_agent/sessions/s.md", "ok", session),
        heartbeat_time="2026-03-01T09:00",
        always_load=tuple(Read(f"resources/references/note-{i}.md", "ok",
                               f"---\nalways_load: true\n---\n# N{i}\n\n{body}\n")
                          for i in range(notes)))


def _sections(snap: VaultSnapshot, budget: int) -> dict[str, tuple[str, str]]:
    return {s.name: (s.status, s.text) for s in render_digest(snap, brief=True, budget=budget,
                                                              full_budget=budget * 3)}


def test_always_load_is_trimmed_after_the_last_session_and_before_fact_pattern() -> None:
    assert TRIM_ORDER.index("last-session") < TRIM_ORDER.index("always-load") < \
        TRIM_ORDER.index("preferences")
    snap = _snapshot(1, "text " * 10)
    roomy = _sections(snap, 8000)
    assert all(status != "truncated" for status, _text in roomy.values())
    whole = len("\n\n".join(t for _s, t in roomy.values() if t))
    first: dict[str, int] = {}  # the largest budget at which each section is trimmed
    for budget in range(whole, 300, -5):
        for name, (status, text) in _sections(snap, budget).items():
            if status == "truncated" and name not in first:
                first[name] = budget
                if name == "always-load":
                    assert "Prefers pytest" in _sections(snap, budget)["preferences"][1]
                    assert "over 1/" not in text  # trimmed to fit, not by its own share
    assert first["observations"] > first["last-session"] > first["always-load"]
    assert first.get("preferences", 0) < first["always-load"]


def test_always_load_block_keeps_to_its_share_of_the_budget() -> None:
    budget = 4000
    sections = _sections(_snapshot(6, "word " * 80), budget)
    status, text = sections["always-load"]
    assert len(text) <= budget // ALWAYS_LOAD_SHARE + 120  # the closing line says the rest
    assert status == "truncated" and f"{TRUNCATED} " in text and "not shown" in text
    assert text.startswith("## Always loaded (")


def test_a_key_set_by_hand_is_in_the_brief_after_the_next_freshness_check(
        tmp_path: Path) -> None:
    from echo_core.ops.freshness import freshen
    from echo_core.ops.recall import recall

    box = VaultBox(tmp_path).init()
    made = box.capture("Deploy Runbook", kind="reference", body="Deploy with make ship.")
    path = box.vault / made.data.path
    path.write_text(path.read_text("utf-8").replace("status: active\n",
                                                    "status: active\nalways_load: true\n"),
                    "utf-8")
    freshen(box.ctx(), budget=None)  # what a verb that reads the indexes does first
    assert made.data.path in load_registry(box.ctx().state_dir)
    assert recall(box.ctx(), "runbook").ok
    brief = load(box.ctx(), brief=True).data
    assert "always-load" in [s.name for s in brief.sections]


def test_a_key_set_or_cleared_by_a_write_updates_the_registry_at_once(tmp_path: Path) -> None:
    from echo_core.ops.notes_io import set_frontmatter

    box = VaultBox(tmp_path).init()
    made = box.capture("Deploy Runbook", kind="reference", body="Deploy with make ship.")
    assert set_frontmatter(box.ctx(), made.data.path, "always_load", True).ok
    assert made.data.path in load_registry(box.ctx().state_dir)
    assert set_frontmatter(box.ctx(), made.data.path, "always_load", False).ok
    assert made.data.path not in load_registry(box.ctx().state_dir)
