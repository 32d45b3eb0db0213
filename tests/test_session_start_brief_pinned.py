"""A pinned note (``always_load: true``) in the brief: its title once, as the item's lead
(not a ``# Title`` line), its own headings demoted below the item's ``###`` so they never
read as the brief's ``##`` sections, the capture template's empty sections (``## Notes``,
``## Related``) left out; the rest of its text as written, cut as before."""

from __future__ import annotations

import json
import re
from pathlib import Path

from echo_core.ops.always_load import always_load_item
from echo_core.ops.load import load
from echo_core.ops.notes_io import set_frontmatter
from tests.capture_kit import VaultBox
from tests.conftest import run_cli

MARK = "(truncated)"
FM = "---\ntype: reference\nalways_load: true\n---\n"
BRIEF_SECTION = re.compile(r"^#{1,2} ", re.MULTILINE)


def test_a_captured_note_shows_its_text_under_one_lead() -> None:
    text = (FM + "# Release checklist\n\nTag, build wheel, upload.\n\n## Notes\n\n"
            "## Related\n")
    item = always_load_item("resources/references/release-checklist.md", text, 1200, MARK)
    assert item == "### [[release-checklist]]\nTag, build wheel, upload."


def test_a_title_other_than_the_file_name_leads_the_item() -> None:
    text = FM + "# Deploy runbook (prod)\n\nDeploy with `make ship`.\n"
    item = always_load_item("resources/references/deploy-runbook.md", text, 1200, MARK)
    assert item == "### Deploy runbook (prod) ([[deploy-runbook]])\nDeploy with `make ship`."


def test_the_notes_own_headings_are_demoted_and_empty_ones_left_out() -> None:
    text = (FM + "# Deploy notes\n\nDeploy with make ship.\n\n## Steps\n\n- build\n"
            "### Rollback\n\n```sh\n# not a heading\nmake rollback\n```\n\n## Caveats\n"
            "### None yet\n\n## Notes\n\n## Related\n- [[ops]]\n")
    item = always_load_item("concepts/deploy-notes.md", text, 1200, MARK)
    assert item == ("### [[deploy-notes]]\nDeploy with make ship.\n\n#### Steps\n\n- build\n"
                    "##### Rollback\n\n```sh\n# not a heading\nmake rollback\n```")
    assert not BRIEF_SECTION.search(item.replace("# not a heading", ""))


def test_a_long_note_is_still_cut_with_where_to_read_it() -> None:
    text = FM + "# Big\n\n## Part\n\n" + "word " * 400 + "\n"
    item = always_load_item("resources/references/big.md", text, 300, MARK)
    lead, shown = item.split("\n", 1)
    assert lead == "### [[big]]" and shown.startswith("#### Part\n\nword word")
    assert shown.endswith(f"…\n{MARK} read resources/references/big.md")
    assert len(shown) <= 300 + len(f"\n{MARK} read resources/references/big.md")


def _pinned_vault(root: Path) -> VaultBox:
    box = VaultBox(root).init()
    made = box.capture("Release checklist", kind="reference",
                       body="Tag, build wheel, upload.\n\n## Order\n\n- tag first")
    assert made.ok, made.message
    assert set_frontmatter(box.ctx(), made.data.path, "always_load", True).ok
    return box


def test_the_brief_holds_no_extra_sections_for_a_pinned_note(tmp_path: Path) -> None:
    box = _pinned_vault(tmp_path)
    data = load(box.ctx(), brief=True).data
    section = next(s for s in data.sections if s.name == "always-load")
    assert section.text == ("## Always loaded\n### [[release-checklist]]\n"
                            "Tag, build wheel, upload.\n\n#### Order\n\n- tag first")
    headings = [line for line in data.digest.splitlines() if BRIEF_SECTION.match(line)]
    assert "## Notes" not in headings and "## Order" not in headings
    assert not any(line.startswith("# ") for line in headings)


def test_the_session_start_context_shows_the_pinned_note_once(tmp_path: Path) -> None:
    box = _pinned_vault(tmp_path)
    env = box.env(ECHO_VAULT=str(box.vault), ECHO_STATE_DIR=str(box.state))
    out = run_cli(["hook", "SessionStart"], env=env, stdin=b'{"source": "startup"}')
    assert out.returncode == 0, out.stderr
    context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "### [[release-checklist]]\nTag, build wheel, upload." in context
    assert "# Release checklist" not in context and "## Notes" not in context
