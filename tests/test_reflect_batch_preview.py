"""``reflect``'s preview of a batch sees the batch's earlier proposals (SPEC §4.4): each
proposal is previewed against the vault as it will be once the proposals before it are
applied, so the preview says what ``--apply`` then does, proposal by proposal, and
still writes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from echo_core.ops.recall import recall
from echo_core.ops.reflect import reflect
from tests.capture_kit import VaultBox

#: The preview's word for each applied outcome.
PREVIEW_OF = {"created": "create", "updated": "update", "superseded": "supersede",
              "inbox": "inbox", "unchanged": "unchanged", "gated": "gated",
              "contradiction": "supersede-suggested", "error": "error"}

GRACE = {"title": "Grace Hopper", "kind": "person", "body": "Wrote the first compiler.",
         "confidence": 0.9}
GRACE_AGAIN = {**GRACE, "body": "Coined the term debugging."}
GRACE_NAMED = {**GRACE, "title": "Hopper Grace", "body": "Navy rear admiral."}
GRACE_SUCCESSOR = {"title": "Grace Brewster Hopper", "kind": "person", "confidence": 0.9,
                   "body": "The full record of her career.", "supersedes": "grace-hopper"}
LOW = {"title": "Ask Grace about COBOL", "body": "Idea from the review.", "confidence": 0.3}


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path).init()


def outcomes(box: VaultBox, proposals: list[dict[str, Any]], *,
             apply: bool) -> list[tuple[str, str | None]]:
    envelope = reflect(box.ctx(), proposals, apply=apply)
    failed = any(i.classification == "error" for i in envelope.data.items)
    assert envelope.ok is not (apply and failed)  # an applied error item is not ok
    return [(i.classification, i.path) for i in envelope.data.items]


@pytest.mark.parametrize("proposals", [
    pytest.param([GRACE, GRACE_AGAIN], id="two-proposals-one-new-note"),
    pytest.param([GRACE, GRACE_AGAIN, GRACE], id="a-repeat-in-the-batch"),
    pytest.param([GRACE, GRACE_NAMED], id="the-second-is-a-near-duplicate-of-the-first"),
    pytest.param([GRACE, GRACE_SUCCESSOR], id="the-second-supersedes-the-first"),
    pytest.param([LOW, LOW], id="the-same-inbox-line-twice"),
])
def test_reflect_batch_preview_equals_what_apply_does(
        box: VaultBox, proposals: list[dict[str, Any]]) -> None:
    before = box.tree_digest()
    preview = outcomes(box, proposals, apply=False)
    assert box.tree_digest() == before  # a preview writes nothing
    applied = outcomes(box, proposals, apply=True)
    assert preview == [(PREVIEW_OF[c], path) for c, path in applied]


def test_reflect_batch_preview_of_two_proposals_for_one_note_is_create_then_update(
        box: VaultBox) -> None:
    assert recall(box.ctx(), "compiler").data.primary == ()  # the recall index is built
    state = sorted(p.relative_to(box.state).as_posix() for p in box.state.rglob("*")
                   if p.is_file() and "recall" not in p.parts)
    assert outcomes(box, [GRACE, GRACE_AGAIN], apply=False) == [
        ("create", "resources/people/grace-hopper.md"),
        ("update", "resources/people/grace-hopper.md")]
    assert recall(box.ctx(), "compiler").data.primary == ()  # nothing indexed either
    assert box.ctx().entity_names.get("grace-hopper") is None
    assert sorted(p.relative_to(box.state).as_posix() for p in box.state.rglob("*")
                  if p.is_file() and "recall" not in p.parts) == state


def test_reflect_batch_applied_twice_lands_once(box: VaultBox) -> None:
    batch = [GRACE, GRACE_AGAIN, GRACE_NAMED, LOW]
    outcomes(box, batch, apply=True)
    after = box.tree_digest()
    note = box.read("resources/people/grace-hopper.md")
    assert note.count("Wrote the first compiler.") == 1
    assert note.count("Coined the term debugging.") == 1
    assert [c for c, _ in outcomes(box, batch, apply=True)] == [
        "unchanged", "unchanged", "gated", "unchanged"]
    assert [c for c, _ in outcomes(box, batch, apply=False)] == [
        "unchanged", "unchanged", "gated", "unchanged"]
    assert box.tree_digest() == after


def test_reflect_preview_says_error_when_apply_would_refuse_an_alias_the_batch_takes(
        box: VaultBox) -> None:
    first = {**GRACE, "aliases": ["Amazing Grace"]}
    second = {"title": "Graceful shutdown", "kind": "concept", "body": "Drain, then stop.",
              "aliases": ["Amazing Grace"], "confidence": 0.9}
    preview = outcomes(box, [first, second], apply=False)
    applied = outcomes(box, [first, second], apply=True)
    assert preview == [(PREVIEW_OF[c], path) for c, path in applied]
    assert [c for c, _ in applied] == ["created", "error"]
