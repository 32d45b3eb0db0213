"""A line added to the inbox again after it was routed is a new waiting item (triage
apply and inbox review route it with its own proposal), while a line routed by a run
that stopped before striking it is shown by ``triage list`` as routed, not struck, and
is finished (struck, nothing routed twice) by the next apply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from echo_core.ops import triage
from echo_core.ops.inbox_review import review_inbox
from echo_core.ops.triage import RoutedLine, apply_proposals, list_inbox
from tests.capture_kit import VaultBox
from tests.cli_inproc import vault_runner

INBOX = "inbox/captures/inbox.md"
LOG = "inbox/processing-log/2026-03-01.md"
LINE = "- 2026-03-01: call the bank about the loan"
NOTE = "projects/active/bank-loan.md"
FIRST = [{"line": LINE, "title": "Bank Loan", "kind": "project", "body": "first call"}]
SECOND = [{"line": LINE, "title": "Bank Loan", "kind": "project",
           "body": "second call, rate agreed"}]
STRUCK = f"- ~~2026-03-01: call the bank about the loan~~ → {NOTE} (processed 2026-03-01)"


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    """An initialised vault whose inbox holds LINE."""
    vault = VaultBox(tmp_path).init()
    with (vault.vault / INBOX).open("a", encoding="utf-8") as inbox:
        inbox.write(f"{LINE}\n")
    return vault


def _add_again(box: VaultBox, line: str = LINE) -> None:
    with (box.vault / INBOX).open("a", encoding="utf-8") as inbox:
        inbox.write(f"{line}\n")


def _inbox_lines(box: VaultBox) -> list[str]:
    return box.read(INBOX).splitlines()


class _Killed(Exception):
    """Stands in for a SIGKILL between the captures and the strikes."""


def _killed_before_striking(monkeypatch: pytest.MonkeyPatch) -> None:
    def stop(*_args: object) -> int:
        raise _Killed
    monkeypatch.setattr(triage, "mark_inbox", stop)


def test_a_line_added_again_is_routed_with_its_new_body(box: VaultBox) -> None:
    assert [o.classification for o in apply_proposals(box.ctx(), FIRST, apply=True)
            .data.items] == ["created"]
    _add_again(box)
    listed = list_inbox(box.ctx()).data
    assert [i.line for i in listed.items] == [LINE] and listed.routed == ()
    preview = apply_proposals(box.ctx(), SECOND, apply=False).data.items[0]
    assert (preview.classification, preview.path) == ("update", NOTE)
    applied = apply_proposals(box.ctx(), SECOND, apply=True).data.items[0]
    assert (applied.classification, applied.path) == ("updated", NOTE)
    assert "second call, rate agreed" in box.read(NOTE)
    assert _inbox_lines(box).count(STRUCK) == 2 and LINE not in _inbox_lines(box)
    assert list_inbox(box.ctx()).data.items == ()
    before = box.tree_digest()  # applying again changes nothing
    again = apply_proposals(box.ctx(), SECOND, apply=True).data.items[0]
    assert again.classification == "done"
    assert box.tree_digest() == before


def test_inbox_review_routes_a_line_added_again(box: VaultBox) -> None:
    apply_proposals(box.ctx(), FIRST, apply=True)
    _add_again(box)
    auto = review_inbox(box.ctx()).data.items[0]
    assert auto.proposal != "done"  # no audit rule: it is a new item
    env = review_inbox(box.ctx(), SECOND, apply=True)
    item = env.data.items[0]
    assert (item.proposal, item.outcome, item.path) == ("promote", "updated", NOTE)
    assert "second call, rate agreed" in box.read(NOTE)
    assert env.data.waiting == 0 and _inbox_lines(box).count(STRUCK) == 2


def test_a_line_routed_to_two_notes_then_added_again_is_new(box: VaultBox) -> None:
    both = [FIRST[0], {"line": LINE, "title": "Bank", "kind": "company"}]
    assert [o.classification for o in apply_proposals(box.ctx(), both, apply=True)
            .data.items] == ["created", "created"]
    _add_again(box)
    assert list_inbox(box.ctx()).data.routed == ()
    applied = apply_proposals(box.ctx(), SECOND, apply=True).data.items[0]
    assert applied.classification == "updated"
    assert "second call, rate agreed" in box.read(NOTE)


def test_a_kill_before_striking_shows_routed_then_the_rerun_finishes(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as patched:
        _killed_before_striking(patched)
        with pytest.raises(_Killed):
            apply_proposals(box.ctx(), FIRST, apply=True)
    assert LINE in _inbox_lines(box)  # captured and audited, not struck
    note = box.read(NOTE)
    listed = list_inbox(box.ctx())
    assert [i.line for i in listed.data.items] == [LINE]
    assert listed.data.routed == (RoutedLine(LINE, NOTE, "2026-03-01"),)
    assert "1 routed but not struck" in listed.message
    rerun = apply_proposals(box.ctx(), FIRST, apply=True).data.items[0]
    assert (rerun.classification, rerun.path) == ("done", NOTE)
    assert box.read(NOTE) == note  # nothing routed twice
    assert STRUCK in _inbox_lines(box) and LINE not in _inbox_lines(box)
    assert box.read(LOG).count(f"{LINE} → {NOTE}") == 1
    _add_again(box)  # and a line added after that is new again
    assert apply_proposals(box.ctx(), SECOND, apply=True).data.items[0].classification \
        == "updated"


def test_a_kill_while_routing_a_line_added_again_neither_loses_nor_doubles(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    apply_proposals(box.ctx(), FIRST, apply=True)
    _add_again(box)
    with monkeypatch.context() as patched:
        _killed_before_striking(patched)
        with pytest.raises(_Killed):
            apply_proposals(box.ctx(), SECOND, apply=True)
    assert box.read(NOTE).count("second call, rate agreed") == 1
    rerun = apply_proposals(box.ctx(), SECOND, apply=True).data.items[0]
    assert rerun.classification == "unchanged"  # capture finds the bullet there
    assert box.read(NOTE).count("second call, rate agreed") == 1
    assert _inbox_lines(box).count(STRUCK) == 2 and LINE not in _inbox_lines(box)


def test_a_rerun_after_midnight_strikes_with_the_routing_day(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as patched:
        _killed_before_striking(patched)
        with pytest.raises(_Killed):
            apply_proposals(box.ctx(), FIRST, apply=True)
    tomorrow = box.ctx(ECHO_TODAY="2026-03-02")
    assert apply_proposals(tomorrow, FIRST, apply=True).data.items[0].classification == "done"
    assert STRUCK in _inbox_lines(box)  # processed the day it was routed
    _add_again(box)
    listed = list_inbox(tomorrow).data
    assert [i.line for i in listed.items] == [LINE] and listed.routed == ()


def test_triage_list_says_a_routed_line_is_not_struck(
        box: VaultBox, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, isolated_env: dict[str, str]) -> None:
    """A strike removed by hand: the audit line still says where the line went, so the
    list shows it as routed (and an apply naming it strikes it again, as before)."""
    run = vault_runner(tmp_path / "cli", capsys, monkeypatch)
    inbox = run.vault / INBOX
    inbox.write_text(inbox.read_text(encoding="utf-8") + f"{LINE}\n", encoding="utf-8")
    file = tmp_path / "p.json"
    file.write_text(json.dumps(FIRST), encoding="utf-8")
    assert run("triage", "apply", str(file), "--apply").code == 0
    inbox.write_text(inbox.read_text(encoding="utf-8").replace(STRUCK, LINE),
                     encoding="utf-8")
    listed = run("triage", "list")
    assert listed.code == 0, listed.err
    assert f"routed to {NOTE} on 2026-03-01, not struck" in listed.out
    assert "1 routed but not struck" in listed.out
    out = run("triage", "list", "--json")
    assert json.loads(out.out)["routed"] == [{"line": LINE, "to": NOTE, "day": "2026-03-01"}]
