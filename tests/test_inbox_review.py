"""``inbox review`` (issue 16 item 6): one proposal per waiting item by fixed rules
(decision, done, merge, expire, needs-kind), dry run by default, struck never deleted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from echo_core.errors import EchoError, ExitCode
from echo_core.ops.inbox_review import review_inbox
from echo_core.ops.triage import apply_proposals, list_inbox
from tests.capture_kit import VaultBox
from tests.cli_inproc import vault_runner
from tests.mcp_kit import call, make_server, with_client

INBOX = "inbox/captures/inbox.md"
LOG = "inbox/processing-log/2026-03-01.md"
ADA_NOTE = "resources/people/ada-lovelace.md"
OLD = "- 2026-01-10: look at the old printer"
ADA = "- 2026-02-20: Ada Lovelace — call back about the demo"
FRESH = "- 2026-02-27: call the bank"
ALIAS = "- 2026-02-28: Countess — sent the notes"
ALL = (OLD, ADA, FRESH, ALIAS)


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    """A vault with one person (alias "Countess") and four waiting items."""
    vault = VaultBox(tmp_path).init()
    env = vault.capture("Ada Lovelace", kind="person", body="Wrote the first program.",
                        aliases=("Countess",))
    assert env.action == "created", env
    with (vault.vault / INBOX).open("a", encoding="utf-8") as inbox:
        inbox.write("".join(f"{line}\n" for line in ALL))
    return vault


def _by_line(env: Any) -> dict[str, Any]:
    return {item.line: item for item in env.data.items}


def test_preview_proposes_by_the_rules_with_reasons_and_writes_nothing(box: VaultBox) -> None:
    before = box.tree_digest()
    env = review_inbox(box.ctx())
    assert box.tree_digest() == before
    assert env.ok and env.action == "dry-run:triage" and env.data.applied is False
    got = _by_line(env)
    assert [item.line for item in env.data.items] == list(ALL)  # file order
    assert (got[OLD].proposal, got[OLD].outcome, got[OLD].age_days) == ("expire", "expire", 50)
    assert got[OLD].reason == "50 days old, over 30"
    assert (got[ADA].proposal, got[ADA].outcome, got[ADA].path) == ("merge", "update", ADA_NOTE)
    assert "'Ada Lovelace' names resources/people/ada-lovelace.md" in got[ADA].reason
    assert (got[ALIAS].proposal, got[ALIAS].path) == ("merge", ADA_NOTE)  # by its alias
    assert (got[FRESH].proposal, got[FRESH].outcome) == ("needs-kind", "stay")
    assert env.data.waiting == 4


def test_an_item_naming_two_entities_says_so_and_names_their_slugs(box: VaultBox) -> None:
    env = box.capture("Ada Lovelace", kind="concept", body="The idea of her.")
    assert env.action == "created" and env.data.path.endswith("ada-lovelace-2.md"), env
    got = _by_line(review_inbox(box.ctx()))
    assert (got[ADA].proposal, got[ADA].outcome) == ("needs-kind", "stay")
    assert "'Ada Lovelace' names several entities (ada-lovelace, ada-lovelace-2)" in (
        got[ADA].reason)


def test_apply_merges_expires_and_keeps_the_rest_waiting(box: VaultBox) -> None:
    env = review_inbox(box.ctx(), apply=True)
    got = _by_line(env)
    assert [got[line].outcome for line in ALL] == ["expired", "updated", "stay", "updated"]
    note = box.read(ADA_NOTE)
    assert "- 2026-02-20: call back about the demo" in note  # dated by the item, rest of text
    assert "- 2026-02-28: sent the notes" in note
    inbox = box.read(INBOX).splitlines()
    assert "- ~~2026-01-10: look at the old printer~~ (expired 2026-03-01)" in inbox
    assert ("- ~~2026-02-20: Ada Lovelace — call back about the demo~~ → "
            f"{ADA_NOTE} (processed 2026-03-01)") in inbox
    assert FRESH in inbox
    assert [i.line for i in list_inbox(box.ctx()).data.items] == [FRESH]
    assert env.data.waiting == 1
    log = box.read(LOG).splitlines()
    assert "- 2026-01-10: look at the old printer → (expired)" in log
    assert f"- 2026-02-20: Ada Lovelace — call back about the demo → {ADA_NOTE}" in log


def test_a_second_apply_does_nothing(box: VaultBox) -> None:
    review_inbox(box.ctx(), apply=True)
    before = box.tree_digest()
    again = review_inbox(box.ctx(), apply=True)
    assert [(i.line, i.outcome) for i in again.data.items] == [(FRESH, "stay")]
    assert box.tree_digest() == before


def test_decisions_come_first(box: VaultBox) -> None:
    decisions = [
        {"line": OLD, "action": "stay"},  # old, but the reviewer keeps it
        {"line": FRESH, "title": "Bank errands", "kind": "concept"},  # promote
        {"line": ALIAS, "action": "expire"},  # young, resolvable, but the reviewer says expire
    ]
    preview = _by_line(review_inbox(box.ctx(), decisions))
    assert (preview[OLD].proposal, preview[OLD].reason) == ("stay", "your decision")
    assert (preview[FRESH].proposal, preview[FRESH].outcome) == ("promote", "create")
    assert preview[ALIAS].proposal == "expire"
    assert preview[ADA].proposal == "merge"  # no decision: the rules
    env = review_inbox(box.ctx(), decisions, apply=True)
    got = _by_line(env)
    assert [got[line].outcome for line in ALL] == ["stay", "updated", "created", "expired"]
    assert "Bank errands" in box.read("resources/concepts/bank-errands.md")
    assert "sent the notes" not in box.read(ADA_NOTE)
    assert [i.line for i in list_inbox(box.ctx()).data.items] == [OLD]


def test_decisions_for_lines_not_waiting_are_reported(box: VaultBox) -> None:
    review_inbox(box.ctx(), apply=True)
    env = review_inbox(box.ctx(), [{"line": OLD, "action": "expire"},
                                   {"line": ADA, "title": "Ada Lovelace", "kind": "person"},
                                   {"line": "- 2026-02-01: never there", "action": "expire"}])
    got = _by_line(env)
    assert (got[OLD].outcome, got[OLD].age_days) == ("done", None)
    assert got[ADA].outcome == "done" and got[ADA].path == ADA_NOTE
    assert got["- 2026-02-01: never there"].outcome == "error"


def test_expire_after_is_a_parameter(box: VaultBox) -> None:
    got = _by_line(review_inbox(box.ctx(), expire_after=60))
    assert got[OLD].proposal == "needs-kind"
    got = _by_line(review_inbox(box.ctx(), expire_after=1))
    assert got[FRESH].proposal == "expire"  # 2 days old
    assert got[ADA].proposal == "merge"  # merging keeps the text: it wins over expiry


def test_an_item_routed_before_lines_were_struck_is_done(box: VaultBox) -> None:
    proposal = [{"line": FRESH, "title": "Bank errands", "kind": "concept"}]
    apply_proposals(box.ctx(), proposal, apply=True)
    path = box.vault / INBOX
    struck = [ln for ln in path.read_text().splitlines() if "call the bank~~" in ln]
    path.write_text(path.read_text().replace(struck[0], FRESH), encoding="utf-8")  # legacy
    concept = box.read("resources/concepts/bank-errands.md")
    env = review_inbox(box.ctx(), apply=True)
    item = _by_line(env)[FRESH]
    assert (item.proposal, item.outcome) == ("done", "done")
    assert "resources/concepts/bank-errands.md" in item.reason
    assert box.read("resources/concepts/bank-errands.md") == concept
    assert FRESH not in [i.line for i in list_inbox(box.ctx()).data.items]


@pytest.mark.parametrize(("decisions", "named"), [
    ([{"line": OLD, "action": "delete"}], "decisions[0].action"),
    ([{"line": OLD, "action": "expire"}, {"line": OLD, "action": "stay"}], "decisions[1].line"),
    ([{"line": FRESH, "kind": "concept"}], "decisions[0].title"),
    ([{"line": FRESH, "title": "x", "kind": "concept", "colour": "red"}], "decisions[0].colour"),
    ("not a list", "JSON list"),
])
def test_invalid_decisions_raise_before_any_write(box: VaultBox, decisions: Any,
                                                  named: str) -> None:
    before = box.tree_digest()
    with pytest.raises(EchoError) as raised:
        review_inbox(box.ctx(), decisions, apply=True)
    assert raised.value.code == ExitCode.USAGE and named in raised.value.message
    assert box.tree_digest() == before


def test_cli_preview_apply_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch,
                                      isolated_env: dict[str, str]) -> None:
    run = vault_runner(tmp_path, capsys, monkeypatch)
    inbox = run.vault / INBOX
    inbox.write_text(inbox.read_text() + f"{OLD}\n{FRESH}\n", encoding="utf-8")
    tree = inbox.read_bytes()

    preview = run("inbox", "review")
    assert preview.code == 0, preview.err
    assert "expire" in preview.out and "needs-kind" in preview.out
    assert "Run again with --apply" in preview.out
    assert inbox.read_bytes() == tree

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"line": OLD, "action": "delete"}]), encoding="utf-8")
    refused = run("inbox", "review", "--decisions", str(bad), "--apply")
    assert refused.code == 2 and "decisions[0].action" in refused.err
    zero = run("inbox", "review", "--expire-after", "0", "--apply")
    assert zero.code == 2 and "expire" in zero.err
    assert inbox.read_bytes() == tree

    decisions = tmp_path / "d.json"
    decisions.write_text(json.dumps({"proposals": [
        {"line": FRESH, "title": "Bank errands", "kind": "concept"}]}), encoding="utf-8")
    applied = run("inbox", "review", "--decisions", str(decisions), "--apply", "--json")
    assert applied.code == 0, applied.err
    data = json.loads(applied.out)
    assert [i["outcome"] for i in data["items"]] == ["expired", "created"]
    assert data["waiting"] == 0
    listed = json.loads(run("triage", "list", "--json").out)
    assert listed["items"] == [] and listed["processed"] == 2


def test_help_teaches_the_rules_and_the_difference_from_triage(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        isolated_env: dict[str, str]) -> None:
    run = vault_runner(tmp_path, capsys, monkeypatch)
    text = " ".join(run("inbox", "review", "--help").out.split())
    assert "echo-memory inbox review --decisions d.json --apply" in text
    assert '"action": "expire"' in text and "never deleted" in text
    assert "Difference from `triage apply`" in text


def test_over_mcp_preview_then_apply(box: VaultBox) -> None:
    server = make_server(box)

    async def body(client: Client) -> None:
        err, data, text = await call(client, "echo_inbox_review")
        assert not err and data["applied"] is False, text
        assert {i["line"]: i["proposal"] for i in data["items"]}[OLD] == "expire"
        err, data, text = await call(client, "echo_inbox_review", expire_after=0)
        assert err and "expire_after" in text
        err, data, _ = await call(client, "echo_inbox_review", apply=True, decisions=[
            {"line": FRESH, "action": "stay"}])
        assert not err and data["applied"] is True and data["waiting"] == 1

    try:
        with_client(server, body)
    finally:
        server.runner.close()
    assert [i.line for i in list_inbox(box.ctx()).data.items] == [FRESH]


def test_merge_into_an_area_finds_its_domain_from_the_path(box: VaultBox) -> None:
    env = box.capture("Home Finances", kind="area", domain="personal", body="Bills.")
    assert env.action == "created", env
    assert box.capture("Home Finances", body="pay the tax").action == "inbox"
    got = _by_line(review_inbox(box.ctx(), apply=True))["- 2026-03-01: Home Finances — pay the tax"]
    assert (got.proposal, got.outcome) == ("merge", "updated"), got.detail
    assert "- 2026-03-01: pay the tax" in box.read("areas/personal/home-finances.md")
