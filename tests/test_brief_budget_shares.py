"""load --brief within its budget when the scope or the Fact / Pattern section alone is
larger than the budget (SPEC §4.1, ``echo_core.ops.digest_fit``): those texts are cut to
their share with a marker naming the note to read, and every other section keeps at
least its heading - checked on vaults built in tmp_path."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from echo_core.ops.digest import FACTS_SHARE, SCOPE_SHARE, TRUNCATED
from echo_core.ops.load import load
from tests.capture_kit import VaultBox
from tests.conftest import run_cli
from tests.test_load import BRIEF_ORDER, PREFS, write_rich_vault

CONTEXT = "_agent/context/current-context.md"
HUGE_SCOPE = "SCOPE " + "lorem ipsum " * 4000
RICH_SCOPE = "Ship the recall index, then the MCP server"


def _set_scope(box: VaultBox, old: str, new: str) -> None:
    path = box.vault / CONTEXT
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def _add_facts(box: VaultBox, n: int) -> None:
    """``n`` Fact / Pattern bullets of about 200 characters each."""
    bullets = "".join(f"- fact-{i:02d} the operator {'prefers terse and exact answers ' * 6}\n"
                      for i in range(n))
    path = box.vault / PREFS
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("## Fact / Pattern\n\n", f"## Fact / Pattern\n\n{bullets}", 1),
                    encoding="utf-8")


def _add_inbox(box: VaultBox, n: int) -> None:
    path = box.vault / "inbox/captures/inbox.md"
    lines = "".join(f"- 2025-03-01: item {i}\n" for i in range(n))
    path.write_text(path.read_text(encoding="utf-8") + lines, encoding="utf-8")


def _sections(box: VaultBox, budget: str = "8000") -> dict[str, str]:
    data = load(box.ctx(ECHO_LOAD_BUDGET=budget), brief=True).data
    assert len(data.digest) <= int(budget)
    assert [s.name for s in data.sections] == BRIEF_ORDER
    return {s.name: s.text for s in data.sections}


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path).init()


def test_a_huge_scope_leaves_every_other_section_its_heading_and_content(box: VaultBox) -> None:
    _set_scope(box, "(no scope set yet)", HUGE_SCOPE)
    _add_inbox(box, 300)
    text = _sections(box)
    for name in BRIEF_ORDER[1:]:
        assert text[name].startswith("## "), (name, text[name][:80])
    assert "(none yet" in text["preferences"] and "(none yet)" in text["observations"]
    assert "(no session committed yet)" in text["last-session"]
    assert "(no daily note yet today)" in text["agent-log"]
    assert "300 items waiting" in text["inbox"]
    scope = text["scope"]
    assert scope.startswith("## Scope (updated ") and "SCOPE lorem ipsum" in scope
    assert re.search(rf"\n{re.escape(TRUNCATED)} the rest not shown \(\d+ chars; see "
                     rf"{re.escape(CONTEXT)}\)$", scope), scope[-200:]


def test_a_scope_over_its_share_is_cut_before_the_observations(box: VaultBox) -> None:
    write_rich_vault(box)
    _set_scope(box, RICH_SCOPE, HUGE_SCOPE)
    text = _sections(box)
    body = text["scope"].split("\n", 1)[1]
    assert len(body) <= 8000 // SCOPE_SHARE
    assert "(last 10 of 14)" in text["observations"]  # the SPEC's trim order kept them
    assert "### Goal\nShip the recall index" in text["last-session"]
    assert "agent-log-line-11" in text["agent-log"] and "20 items waiting" in text["inbox"]
    hidden = int(re.findall(r"\((\d+) chars; see ", body)[-1])
    assert hidden == len(HUGE_SCOPE.strip()) - len(body.rsplit("\n", 1)[0])  # shown + hidden = all


def test_many_long_facts_are_cut_to_their_share_and_the_rest_fits(box: VaultBox) -> None:
    write_rich_vault(box)
    _add_facts(box, 60)
    _add_inbox(box, 300)
    text = _sections(box)
    facts = text["preferences"]
    assert facts.startswith("## Fact / Pattern\n- fact-00 ")
    assert len(facts) <= 8000 // FACTS_SHARE + len("## Fact / Pattern\n")
    assert facts.endswith(f"; see {PREFS})") and "fact-59" not in facts
    assert "(last 10 of 14)" in text["observations"]
    assert "### Goal\nShip the recall index" in text["last-session"]
    assert "agent-log-line-11" in text["agent-log"] and "320 items waiting" in text["inbox"]
    assert RICH_SCOPE in text["scope"]


def test_a_small_budget_shows_a_not_shown_line_for_the_scope(box: VaultBox) -> None:
    write_rich_vault(box)
    _set_scope(box, RICH_SCOPE, HUGE_SCOPE)
    text = _sections(box, budget="800")
    body = text["scope"].split("\n", 1)[1]
    found = re.search(rf"(?:^|\n){re.escape(TRUNCATED)} (?:the rest )?not shown \((\d+) chars; "
                      rf"see {re.escape(CONTEXT)}\)$", body)
    assert found is not None, body
    assert int(found.group(1)) == len(HUGE_SCOPE.strip()) - len(body[: found.start()])
    for name in BRIEF_ORDER[1:]:
        assert text[name].startswith("## ") and not text[name].endswith("\n" + TRUNCATED)


def test_a_short_scope_and_facts_are_never_cut(box: VaultBox) -> None:
    write_rich_vault(box)
    text = _sections(box, budget="600")  # observations and more trimmed, scope whole
    assert RICH_SCOPE in text["scope"] and TRUNCATED not in text["scope"]
    assert "- Prefers pytest over unittest\n- Wants short answers" in text["preferences"]


def test_cli_load_brief_json_keeps_every_heading_with_a_huge_scope(
        isolated_env: dict[str, str], tmp_path: Path) -> None:
    box = VaultBox(tmp_path / "b").init()
    _set_scope(box, "(no scope set yet)", HUGE_SCOPE)
    _add_inbox(box, 300)
    out = run_cli(["load", "--brief", "--json", "--vault", str(box.vault)], env=isolated_env)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["chars"] <= data["budget"] == 8000
    assert len(re.findall(r"^## ", data["digest"], re.MULTILINE)) == len(BRIEF_ORDER) - 1
    assert "300 items waiting" in data["digest"]
