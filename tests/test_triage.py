"""Inbox triage (SPEC §2.5): list, preview, apply with audit lines, idempotence, gate, errors."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from echo_core.context import EchoContext, create_context
from echo_core.errors import EchoError, ExitCode
from echo_core.models import CaptureRequest
from echo_core.ops.capture import capture
from echo_core.ops.init import init_vault
from echo_core.ops.triage import apply_proposals, list_inbox
from echo_core.protocols import VaultMissing
from tests.conftest import run_cli

INBOX = "inbox/captures/inbox.md"
LOG = "inbox/processing-log/2026-03-01.md"
ADA = "- 2026-02-20: met Ada at the engine demo"
VANTAGE = "- 2026-02-24: Vantage renewal is due in April"
GROUP = "- 2026-02-25: Vantage Systems Group sent a contract"
BANK = "- 2026-02-27: call the bank"


def _tree_hash(root: Path) -> str:
    """Paths, bytes and mtimes of every visible file (the vault lock file is transient)."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            continue
        digest.update(str(rel).encode())
        if path.is_file():
            digest.update(path.read_bytes())
            digest.update(str(path.stat().st_mtime_ns).encode())
    return digest.hexdigest()


@pytest.fixture
def ctx(isolated_env: dict[str, str], vault_dir: Path) -> EchoContext:
    """An initialised vault whose inbox holds four items among a heading and prose."""
    context = create_context(vault=str(vault_dir))
    init_vault(context)
    with (vault_dir / INBOX).open("a", encoding="utf-8") as inbox:
        inbox.write(f"{ADA}\nsome prose, not an item\n{VANTAGE}\n{GROUP}\n{BANK}\n")
    return context


def _company(ctx: EchoContext, title: str) -> None:
    env = capture(ctx, CaptureRequest(title=title, kind="company", body="A customer."))
    assert env.action == "created"


def _by_index(env: Any) -> dict[int, Any]:
    return {o.index: o for o in env.data.items}


def test_list_parses_dated_lines_with_age(ctx: EchoContext) -> None:
    env = list_inbox(ctx)
    assert env.ok
    items = env.data.items
    assert [i.line for i in items] == [ADA, VANTAGE, GROUP, BANK]
    assert (items[0].date, items[0].text, items[0].age_days) == (
        "2026-02-20", "met Ada at the engine demo", 9)
    assert [i.age_days for i in items] == [9, 5, 4, 2]


def test_list_on_missing_inbox_is_empty(ctx: EchoContext, vault_dir: Path) -> None:
    (vault_dir / INBOX).unlink()
    env = list_inbox(ctx)
    assert env.ok and env.data.items == ()
    with pytest.raises(VaultMissing):  # an absent vault folder is unreachable, not empty
        list_inbox(create_context(vault=str(vault_dir / "nowhere")))


def test_list_cli_json_and_prose(ctx: EchoContext, vault_dir: Path,
                                 isolated_env: dict[str, str]) -> None:
    out = run_cli(["triage", "list", "--vault", str(vault_dir), "--json"], env=isolated_env)
    assert out.returncode == 0, out.stderr
    items = json.loads(out.stdout)["items"]
    assert items[0] == {"line": ADA, "date": "2026-02-20",
                        "text": "met Ada at the engine demo", "age_days": 9}
    prose = run_cli(["triage", "list", "--vault", str(vault_dir)], env=isolated_env)
    assert "9d" in prose.stdout and "call the bank" in prose.stdout


def test_dry_run_classifies_and_writes_nothing(ctx: EchoContext, vault_dir: Path) -> None:
    _company(ctx, "Vantage Systems")
    before = _tree_hash(vault_dir)
    proposals = [
        {"line": ADA, "title": "Ada Lovelace", "kind": "person"},
        {"line": VANTAGE, "title": "Vantage Systems", "kind": "company"},
        {"line": GROUP, "title": "Vantage Systems Group", "kind": "company"},
        {"line": BANK, "title": "call the bank", "kind": None},
    ]
    env = apply_proposals(ctx, proposals, apply=False)
    assert _tree_hash(vault_dir) == before
    assert env.ok and env.action == "dry-run:triage" and env.data.applied is False
    got = _by_index(env)
    assert [got[i].classification for i in range(4)] == ["create", "update", "gated", "stay"]
    assert got[0].path == "resources/people/ada-lovelace.md"
    assert got[1].path == "resources/companies/vantage-systems.md"
    assert got[2].candidates[0]["slug"] == "vantage-systems"
    assert not (vault_dir / LOG).exists()


def test_apply_routes_audits_and_strikes_routed_lines_in_place(ctx: EchoContext,
                                                               vault_dir: Path,
                                                               isolated_env: dict[str, str],
                                                               tmp_path: Path) -> None:
    _company(ctx, "Vantage Systems")
    inbox_before = (vault_dir / INBOX).read_text()
    proposals = {"proposals": [
        {"line": ADA, "title": "Ada Lovelace", "kind": "person", "tags": ["contacts"]},
        {"line": VANTAGE, "title": "Vantage", "kind": "company", "merge_into": "vantage-systems"},
        {"line": BANK, "action": "stay"},
    ]}
    file = tmp_path / "proposals.json"
    file.write_text(json.dumps(proposals), encoding="utf-8")
    out = run_cli(["triage", "apply", str(file), "--apply", "--json", "--vault", str(vault_dir)],
                  env=isolated_env)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["applied"] is True
    assert [i["classification"] for i in result["items"]] == ["created", "updated", "stay"]
    ada = (vault_dir / "resources/people/ada-lovelace.md").read_text()
    assert "# Ada Lovelace" in ada and "met Ada at the engine demo" in ada and "contacts" in ada
    vantage = (vault_dir / "resources/companies/vantage-systems.md").read_text()
    assert "- 2026-02-24: Vantage renewal is due in April" in vantage  # dated by the item
    log = (vault_dir / LOG).read_text()
    assert log.startswith("# Processing log 2026-03-01\n")
    assert f"{ADA} → resources/people/ada-lovelace.md" in log.splitlines()
    assert f"{VANTAGE} → resources/companies/vantage-systems.md" in log.splitlines()
    assert BANK not in log
    expected = inbox_before.replace(
        ADA, "- ~~2026-02-20: met Ada at the engine demo~~ → resources/people/ada-lovelace.md"
             " (processed 2026-03-01)").replace(
        VANTAGE, "- ~~2026-02-24: Vantage renewal is due in April~~ → "
                 "resources/companies/vantage-systems.md (processed 2026-03-01)")
    assert (vault_dir / INBOX).read_text() == expected  # struck in place, the rest untouched


def test_reapply_creates_nothing_and_duplicates_no_audit_line(ctx: EchoContext,
                                                               vault_dir: Path) -> None:
    proposals = [{"line": ADA, "title": "Ada Lovelace", "kind": "person"},
                 {"line": VANTAGE, "title": "Vantage Systems", "kind": "company"}]
    first = apply_proposals(ctx, proposals, apply=True)
    assert [o.classification for o in first.data.items] == ["created", "created"]
    before = _tree_hash(vault_dir)
    again = apply_proposals(ctx, proposals, apply=True)
    assert [o.classification for o in again.data.items] == ["done", "done"]
    assert _tree_hash(vault_dir) == before
    log_lines = (vault_dir / LOG).read_text().splitlines()
    assert len([ln for ln in log_lines if " → " in ln]) == 2
    preview = apply_proposals(ctx, proposals, apply=False)
    assert {o.classification for o in preview.data.items} == {"done"}


def test_a_waiting_line_routed_before_is_done_and_gets_struck(ctx: EchoContext,
                                                              vault_dir: Path) -> None:
    """A vault triaged before lines were struck: the audit line (an earlier day's log)
    says the item was routed, the line still waits. Applying again routes nothing twice
    and only strikes the line."""
    proposal = [{"line": ADA, "title": "Ada Lovelace", "kind": "person"}]
    apply_proposals(ctx, proposal, apply=True)
    (vault_dir / LOG).rename(vault_dir / "inbox/processing-log/2026-02-28.md")
    inbox = vault_dir / INBOX
    inbox.write_text(inbox.read_text().replace(
        "- ~~2026-02-20: met Ada at the engine demo~~ → resources/people/ada-lovelace.md "
        "(processed 2026-03-01)", ADA))
    ada_before = (vault_dir / "resources/people/ada-lovelace.md").read_bytes()
    preview = apply_proposals(ctx, proposal, apply=False)
    assert preview.data.items[0].classification == "done"
    assert "applying marks its line processed" in preview.data.items[0].detail
    again = apply_proposals(ctx, proposal, apply=True)
    assert again.data.items[0].classification == "done"
    assert not (vault_dir / LOG).exists()
    assert (vault_dir / "resources/people/ada-lovelace.md").read_bytes() == ada_before
    assert ADA not in inbox.read_text().splitlines()
    assert [i.line for i in list_inbox(ctx).data.items] == [VANTAGE, GROUP, BANK]


def test_gated_item_is_reported_and_later_items_still_route(ctx: EchoContext,
                                                            vault_dir: Path) -> None:
    _company(ctx, "Vantage Systems")
    proposals = [{"line": GROUP, "title": "Vantage Systems Group", "kind": "company"},
                 {"line": ADA, "title": "Ada Lovelace", "kind": "person"}]
    env = apply_proposals(ctx, proposals, apply=True)
    gated, created = env.data.items
    assert env.ok
    assert gated.classification == "gated" and gated.path is None
    assert gated.candidates[0]["path"] == "resources/companies/vantage-systems.md"
    assert "merge" in gated.detail
    assert created.classification == "created"
    assert not (vault_dir / "resources/companies/vantage-systems-group.md").exists()
    log = (vault_dir / LOG).read_text()
    assert GROUP not in log and ADA in log


def test_gated_item_exits_zero_on_the_cli(ctx: EchoContext, vault_dir: Path,
                                          isolated_env: dict[str, str]) -> None:
    _company(ctx, "Vantage Systems")
    stdin = json.dumps([{"line": GROUP, "title": "Vantage Systems Group", "kind": "company"}])
    out = run_cli(["triage", "apply", "-", "--apply", "--vault", str(vault_dir)],
                  env=isolated_env, stdin=stdin.encode())
    assert out.returncode == 0, out.stderr
    assert "gated" in out.stdout and "vantage-systems" in out.stdout


def test_item_errors_are_classified_without_stopping_others(ctx: EchoContext,
                                                            vault_dir: Path) -> None:
    proposals = [
        {"line": "- 2026-02-01: never captured", "title": "Ghost", "kind": "person"},
        {"line": VANTAGE, "title": "Vantage", "kind": "widget"},
        {"line": VANTAGE, "title": "Vantage", "kind": "company", "merge_into": "no-such"},
        {"line": BANK, "title": "Banking", "kind": "area"},  # area needs a domain
        {"line": ADA, "title": "Ada Lovelace", "kind": "person"},
    ]
    env = apply_proposals(ctx, proposals, apply=True)
    got = _by_index(env)
    assert [got[i].classification for i in range(5)] == [
        "error", "error", "error", "error", "created"]
    assert "not in the inbox" in got[0].detail
    assert "widget" in got[1].detail
    assert "no-such" in got[2].detail
    assert "domain" in got[3].detail
    assert (vault_dir / "resources/people/ada-lovelace.md").exists()
    assert len((vault_dir / LOG).read_text().splitlines()) == 3  # heading, blank, Ada


@pytest.mark.parametrize(("proposals", "named"), [
    ([{"line": ADA, "title": "Ada", "kind": "person", "colour": "red"}], "proposals[0].colour"),
    ([{"line": ADA, "kind": "person"}], "proposals[0].title"),
    ([{"title": "Ada", "kind": "person"}], "proposals[0].line"),
    ([{"line": ADA, "title": "Ada", "kind": "person"}, {"line": BANK, "title": "x",
                                                        "kind": "person", "tags": "a"}],
     "proposals[1].tags"),
    ([{"line": ADA, "title": "Ada", "kind": 3}], "proposals[0].kind"),
    ([{"line": BANK, "action": "delete"}], "proposals[0].action"),
    ({"proposals": [], "extra": 1}, "'extra'"),
    ({"line": ADA}, "'line'"),
    ("not a list", "JSON list"),
    (["just a string"], "proposals[0]"),
])
def test_file_level_problems_raise_before_any_write(ctx: EchoContext, vault_dir: Path,
                                                    proposals: Any, named: str) -> None:
    before = _tree_hash(vault_dir)
    with pytest.raises(EchoError) as raised:
        apply_proposals(ctx, proposals, apply=True)
    assert raised.value.code == ExitCode.USAGE
    assert named in raised.value.message
    assert _tree_hash(vault_dir) == before


def test_invalid_file_exits_2_naming_the_field(ctx: EchoContext, vault_dir: Path,
                                               isolated_env: dict[str, str],
                                               tmp_path: Path) -> None:
    file = tmp_path / "bad.json"
    file.write_text(json.dumps([{"line": ADA, "title": "Ada Lovelace", "kind": "person"},
                                {"line": BANK, "title": "x", "colour": "red"}]))
    before = _tree_hash(vault_dir)
    out = run_cli(["triage", "apply", str(file), "--apply", "--vault", str(vault_dir)],
                  env=isolated_env)
    assert out.returncode == 2
    assert "proposals[1].colour" in out.stderr
    assert _tree_hash(vault_dir) == before
    file.write_text("[{not json")
    broken = run_cli(["triage", "apply", str(file), "--json", "--vault", str(vault_dir)],
                     env=isolated_env)
    assert broken.returncode == 2 and "not valid JSON" in json.loads(broken.stdout)["error"]["message"]


def test_apply_help_teaches_the_format(isolated_env: dict[str, str]) -> None:
    out = run_cli(["triage", "apply", "--help"], env=isolated_env)
    assert out.returncode == 0
    text = " ".join(out.stdout.split())
    assert '"line": "- 2026-02-20' in text and '"action": "stay"' in text
    assert "Without --apply nothing is written" in text
    assert "stay in the inbox" in text
