"""The full sweep's changes: a dry run writes nothing, ``--apply`` writes each change
once (a second run changes no byte), frontmatter is added line by line (other lines and
CRLF kept), reciprocal links, notes gone, learned aliases."""

from __future__ import annotations

import json
from pathlib import Path

from echo_core.frontmatter import parse_frontmatter
from echo_core.ops.resolve import resolve
from echo_core.ops.sweep import full_sweep
from echo_core.ops.telemetry import MISSES_FILE
from tests.capture_kit import VaultBox

ADA = "resources/people/ada.md"
GRACE = "resources/people/grace.md"


def _vault(tmp_path: Path) -> VaultBox:
    """A vault with hand-written notes needing every kind of change."""
    box = VaultBox(tmp_path).init()
    assert box.capture("Vantage Systems", kind="company").ok
    notes = {
        ADA: "# Ada Lovelace\n\nMath.\n\n## Related\n- [[grace]]\n- [[vantage-systems]]\n",
        GRACE: "---\naliases: [Amazing Grace]\n# a comment\nrating:   5\n---\nGrace.\n",
        "resources/concepts/crlf.md": "---\r\ntitle: 'Kept'\r\n---\r\n# Engines\r\n\r\nBody.\r\n",
        "resources/concepts/flow.md": "---\n{type: concept}\n---\n# Flow\n",
        "resources/concepts/broken.md": "---\ntype: [concept\n---\n# Broken\n",
    }
    for path, text in notes.items():
        (box.vault / path).parent.mkdir(parents=True, exist_ok=True)
        (box.vault / path).write_bytes(text.encode("utf-8"))
    return box


def test_dry_run_changes_no_byte_and_reports_every_change(tmp_path: Path) -> None:
    box = _vault(tmp_path)
    before = box.tree_digest()
    env = full_sweep(box.ctx())
    assert box.tree_digest() == before
    data = env.data
    assert env.action == "dry-run" and not data.applied
    assert {e.path for e in data.entities_added} >= {ADA, GRACE, "resources/concepts/crlf.md"}
    assert {f.path for f in data.frontmatter} == {ADA, GRACE, "resources/concepts/crlf.md"}
    assert {(link.path, link.target) for link in data.links} == {
        (GRACE, ADA), ("resources/companies/vantage-systems.md", ADA)}
    assert {s.path for s in data.skipped} == {"resources/concepts/flow.md",
                                              "resources/concepts/broken.md"}
    assert "nothing was written" in env.message


def test_apply_twice_changes_nothing_the_second_time(tmp_path: Path) -> None:
    box = _vault(tmp_path)
    first = full_sweep(box.ctx(), apply=True)
    assert first.action == "updated" and first.data.changes
    after_first = box.tree_digest()
    second = full_sweep(box.ctx(), apply=True)
    assert box.tree_digest() == after_first
    assert second.action == "unchanged" and second.data.changes == 0, second.data
    grace = box.read(GRACE)
    assert grace.count("[[ada]]") == 1
    keys = [line.split(":")[0] for line in grace.split("---")[1].splitlines() if ":" in line]
    assert len(keys) == len(set(keys))
    for path in ("resources/concepts/flow.md", "resources/concepts/broken.md"):
        assert resolve(box.ctx(), path.rsplit("/", 1)[1][:-3]).data.match  # still entities


def test_backfill_keeps_other_lines_byte_for_byte_and_crlf(tmp_path: Path) -> None:
    box = _vault(tmp_path)
    flow_before = (box.vault / "resources/concepts/flow.md").read_bytes()
    full_sweep(box.ctx(), apply=True)
    grace = box.read(GRACE)
    assert grace.startswith("---\naliases: [Amazing Grace]\n# a comment\nrating:   5\n")
    assert grace.endswith("---\nGrace.\n\n## Related\n- [[ada]]\n")
    fm, _, error = parse_frontmatter(grace)
    assert error is None and fm["type"] == "person" and fm["tags"] == ["person"]
    crlf = (box.vault / "resources/concepts/crlf.md").read_bytes().decode("utf-8")
    assert crlf.count("\r\n") == crlf.count("\n")
    assert crlf.startswith("---\r\ntitle: 'Kept'\r\n") and crlf.endswith("---\r\n# Engines\r\n\r\nBody.\r\n")
    assert (box.vault / "resources/concepts/flow.md").read_bytes() == flow_before
    assert len(box.ctx().history.versions(GRACE)) == 1  # the prior text was kept


def test_a_note_deleted_by_hand_leaves_the_index_and_its_title_captures_anew(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    made = box.capture("Ada Lovelace", kind="person")
    (box.vault / made.data.path).unlink()
    env = full_sweep(box.ctx(), apply=True)
    assert [(e.slug, e.reason) for e in env.data.entities_dropped] == [("ada-lovelace", "note gone")]
    again = box.capture("Ada Lovelace", kind="person")
    assert again.action == "created" and again.data.path == made.data.path


def test_resolve_misses_become_aliases_on_apply_and_the_log_is_consumed(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    assert box.capture("Vantage Systems", kind="company").ok
    ctx = box.ctx()
    log = ctx.state_dir / MISSES_FILE
    lines = [{"event": "merge_into", "mention": "VS Corp", "slug": "vantage-systems"}] * 2
    lines += [{"event": "miss", "mention": "Vantage Sys", "candidates": ["x", "y"]}]
    log.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    dry = full_sweep(ctx)
    assert [(a.slug, a.alias) for a in dry.data.aliases] == [("vantage-systems", "VS Corp")]
    assert not resolve(box.ctx(), "VS Corp").data.match
    full_sweep(box.ctx(), apply=True)
    assert resolve(box.ctx(), "vs corp").data.path == "resources/companies/vantage-systems.md"
    assert "VS Corp" in box.read("resources/companies/vantage-systems.md")
    assert log.read_text(encoding="utf-8").splitlines() == [json.dumps(lines[2])]
