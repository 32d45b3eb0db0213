"""An inbox that drains (issue 16 item 6): routed lines are struck in place and kept, and
``triage list``, ``load --brief`` and the full ``load`` count only the waiting ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from echo_core.ops.inbox_marks import processed_line, strike, struck_original, struck_target
from echo_core.ops.lint.run import lint
from echo_core.ops.load import load
from echo_core.ops.sweep import full_sweep
from echo_core.ops.triage import apply_proposals, list_inbox
from tests.capture_kit import VaultBox
from tests.cli_inproc import vault_runner

INBOX = "inbox/captures/inbox.md"
ADA = "- 2026-02-20: met Ada at the engine demo"
VANTAGE = "- 2026-02-24: Vantage renewal is due in April"
BABBAGE = "- 2026-02-25: Babbage — the difference engine"
BANK = "- 2026-02-27: call the bank"
ITEMS = (ADA, VANTAGE, BABBAGE, BANK)
ROUTE_ALL = [
    {"line": ADA, "title": "Ada Lovelace", "kind": "person"},
    {"line": VANTAGE, "title": "Vantage Systems", "kind": "company"},
    {"line": BABBAGE, "title": "Charles Babbage", "kind": "person"},
    {"line": BANK, "title": "Bank errands", "kind": "concept"},
]
STRUCK_ADA = ("- ~~2026-02-20: met Ada at the engine demo~~ → resources/people/ada-lovelace.md"
              " (processed 2026-03-01)")


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    """An initialised vault whose inbox holds four items among its heading and prose."""
    vault = VaultBox(tmp_path).init()
    with (vault.vault / INBOX).open("a", encoding="utf-8") as inbox:
        inbox.write(f"{ADA}\nsome prose, not an item\n{VANTAGE}\n{BABBAGE}\n{BANK}\n")
    return vault


def _brief(box: VaultBox) -> str:
    digest: str = load(box.ctx(), brief=True).data.digest
    return digest


def test_after_apply_nothing_routed_waits_and_every_original_line_is_kept(
        box: VaultBox, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, isolated_env: dict[str, str]) -> None:
    assert "4 items waiting, oldest 9 days old" in _brief(box)
    run = vault_runner(tmp_path / "cli", capsys, monkeypatch)
    vault = run.vault
    (vault / INBOX).write_text((box.vault / INBOX).read_text(), encoding="utf-8")
    proposals = tmp_path / "proposals.json"
    proposals.write_text(json.dumps(ROUTE_ALL), encoding="utf-8")
    applied = run("triage", "apply", str(proposals), "--apply", "--json")
    assert applied.code == 0, applied.err
    assert [i["classification"] for i in json.loads(applied.out)["items"]] == ["created"] * 4

    listed = run("triage", "list", "--json")
    assert listed.code == 0 and json.loads(listed.out)["items"] == []
    assert json.loads(listed.out)["processed"] == 4
    brief = run("load", "--brief")
    assert brief.code == 0 and "## Inbox\nempty" in brief.out
    assert "waiting" not in brief.out.split("## Inbox", 1)[1]
    full = run("load", "--json")
    assert "## Inbox\nempty" in json.loads(full.out)["digest"]

    text = (vault / INBOX).read_text(encoding="utf-8")
    for line in ITEMS:  # each original, byte for byte, inside its strike
        struck = [ln for ln in text.splitlines() if struck_original(ln) == line]
        assert len(struck) == 1 and line.removeprefix("- ") in struck[0]
    assert STRUCK_ADA in text.splitlines()
    assert "some prose, not an item" in text


def test_only_routed_lines_stop_waiting_and_stay_keeps_waiting(box: VaultBox) -> None:
    env = apply_proposals(box.ctx(), [ROUTE_ALL[0], {"line": BANK, "action": "stay"}],
                          apply=True)
    assert [o.classification for o in env.data.items] == ["created", "stay"]
    waiting = list_inbox(box.ctx()).data
    assert [i.line for i in waiting.items] == [VANTAGE, BABBAGE, BANK]
    assert waiting.processed == 1
    assert "3 items waiting, oldest 5 days old" in _brief(box)
    full = load(box.ctx(), brief=False).data.digest
    assert "3 items waiting, oldest 5 days old" in full


def test_dry_run_writes_nothing(box: VaultBox) -> None:
    before = box.tree_digest()
    env = apply_proposals(box.ctx(), ROUTE_ALL, apply=False)
    assert {o.classification for o in env.data.items} == {"create"}
    assert box.tree_digest() == before
    assert len(list_inbox(box.ctx()).data.items) == 4


def test_a_second_apply_does_nothing(box: VaultBox) -> None:
    apply_proposals(box.ctx(), ROUTE_ALL, apply=True)
    before = box.tree_digest()
    again = apply_proposals(box.ctx(), ROUTE_ALL, apply=True)
    assert {o.classification for o in again.data.items} == {"done"}
    assert again.data.items[0].path == "resources/people/ada-lovelace.md"
    assert "already processed" in again.data.items[0].detail
    assert box.tree_digest() == before
    assert box.read(INBOX).count("(processed 2026-03-01)") == 4


def test_a_line_added_by_hand_after_apply_waits(box: VaultBox) -> None:
    apply_proposals(box.ctx(), ROUTE_ALL, apply=True)
    with (box.vault / INBOX).open("a", encoding="utf-8") as inbox:
        inbox.write("- 2026-02-28: ask Ada about the notes\n")
        inbox.write(f"{ADA}\n")  # the very same line again: a new item, not "processed"
    items = list_inbox(box.ctx()).data.items
    assert [i.line for i in items] == ["- 2026-02-28: ask Ada about the notes", ADA]
    assert "2 items waiting, oldest 9 days old" in _brief(box)


def test_removing_the_strike_by_hand_makes_the_line_wait_again(box: VaultBox) -> None:
    apply_proposals(box.ctx(), ROUTE_ALL[:1], apply=True)
    path = box.vault / INBOX
    path.write_text(path.read_text().replace(STRUCK_ADA, ADA), encoding="utf-8")
    assert ADA in [i.line for i in list_inbox(box.ctx()).data.items]
    # triage knows from the audit line that it was routed: done, struck again, no capture
    note = box.read("resources/people/ada-lovelace.md")
    env = apply_proposals(box.ctx(), ROUTE_ALL[:1], apply=True)
    assert env.data.items[0].classification == "done"
    assert box.read("resources/people/ada-lovelace.md") == note
    assert STRUCK_ADA in box.read(INBOX).splitlines()


def test_a_line_struck_by_hand_is_not_waiting(box: VaultBox) -> None:
    path = box.vault / INBOX
    path.write_text(path.read_text().replace(BANK, "- ~~2026-02-27: call the bank~~ done"),
                    encoding="utf-8")
    assert BANK not in [i.line for i in list_inbox(box.ctx()).data.items]
    assert list_inbox(box.ctx()).data.processed == 1


def test_capturing_the_text_of_a_processed_item_adds_a_new_waiting_item(box: VaultBox) -> None:
    """Pinned: the struck line does not swallow a new capture of the same text (the inbox
    append is idempotent only for an identical waiting line)."""
    assert box.capture("met Ada at the engine demo", today="2026-02-20").action == "inbox"
    line_count = len(box.read(INBOX).splitlines())  # ADA was there already: no-op append
    assert box.capture("met Ada at the engine demo", today="2026-02-20").data.changed is False
    assert len(box.read(INBOX).splitlines()) == line_count
    apply_proposals(box.ctx(), ROUTE_ALL[:1], apply=True)
    env = box.capture("met Ada at the engine demo", today="2026-02-20")
    assert env.action == "inbox" and env.data.changed is True
    assert ADA in [i.line for i in list_inbox(box.ctx()).data.items]
    assert STRUCK_ADA in box.read(INBOX).splitlines()


def test_struck_lines_survive_sweep_apply_and_lint_does_not_mind_them(box: VaultBox) -> None:
    apply_proposals(box.ctx(), ROUTE_ALL, apply=True)
    inbox = box.read(INBOX)
    swept = full_sweep(box.ctx(), apply=True)
    assert swept.ok
    assert box.read(INBOX) == inbox
    findings = lint(box.ctx()).data.findings
    assert not [f for f in findings if f.path.startswith("inbox/")], findings


def test_striking_keeps_crlf_line_endings_and_other_bytes(box: VaultBox) -> None:
    path = box.vault / INBOX
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    before = path.read_bytes()
    apply_proposals(box.ctx(), ROUTE_ALL[:1], apply=True)
    after = path.read_bytes()
    assert after == before.replace(ADA.encode(), STRUCK_ADA.encode())
    assert [i.line for i in list_inbox(box.ctx()).data.items] == [VANTAGE, BABBAGE, BANK]


def test_identical_waiting_lines_are_all_struck_by_one_routing(box: VaultBox) -> None:
    with (box.vault / INBOX).open("a", encoding="utf-8") as inbox:
        inbox.write(f"{ADA}\n")
    apply_proposals(box.ctx(), ROUTE_ALL[:1], apply=True)
    assert box.read(INBOX).splitlines().count(STRUCK_ADA) == 2
    assert ADA not in [i.line for i in list_inbox(box.ctx()).data.items]


@pytest.mark.parametrize("text", ["plain", "has ~~its own~~ strike", "ends with ~", "a → b"])
def test_the_original_is_recoverable_from_its_strike(text: str) -> None:
    line = f"- 2026-02-20: {text}"
    struck = processed_line(line, "resources/concepts/x.md", "2026-03-01")
    assert struck_original(struck) == line
    assert struck_target(struck) == "resources/concepts/x.md"
    assert strike(f"a\n{line}\r\nb", {line: struck}) == f"a\n{struck}\r\nb"


def test_triage_list_prose_says_what_is_processed(box: VaultBox, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  isolated_env: dict[str, str]) -> None:
    run = vault_runner(tmp_path / "cli", capsys, monkeypatch)
    (run.vault / INBOX).write_text(box.read(INBOX), encoding="utf-8")
    file = tmp_path / "p.json"
    file.write_text(json.dumps(ROUTE_ALL), encoding="utf-8")
    assert run("triage", "apply", str(file), "--apply").code == 0
    out = run("triage", "list").out
    assert "Nothing waiting in the inbox (4 processed" in out


def test_the_brief_points_at_inbox_review_once_an_item_is_older_than_30_days(
        box: VaultBox) -> None:
    assert "oldest 9 days old; triage with `echo-memory triage list`" in _brief(box)
    with (box.vault / INBOX).open("a", encoding="utf-8") as inbox:
        inbox.write("- 2026-01-20: an old thought\n")
    assert ("5 items waiting, oldest 40 days old; review them all with `echo-memory inbox "
            "review`") in _brief(box)
