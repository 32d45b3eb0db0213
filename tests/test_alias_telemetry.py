"""Resolve-miss telemetry becomes aliases (SPEC §5.5), end to end through real captures."""

from __future__ import annotations

from pathlib import Path

from echo_core.ops.resolve import resolve
from echo_core.ops.sweep.full import full_sweep
from tests.capture_kit import VaultBox


def test_two_merge_into_confirmations_become_an_alias_on_sweep_apply(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    assert box.capture("Ada Lovelace", kind="person", body="Mathematician.").ok
    for body in ("Wrote the notes on the engine.", "Translated Menabrea."):
        env = box.capture("Countess of Lovelace", kind="person", body=body,
                          merge_into="ada-lovelace")
        assert env.ok and env.data.aliases_learned == ()
    assert not resolve(box.ctx(), "Countess of Lovelace").data.match
    digest = box.tree_digest()
    dry = full_sweep(box.ctx())
    assert [(a.slug, a.alias) for a in dry.data.aliases] == [("ada-lovelace",
                                                              "Countess of Lovelace")]
    assert box.tree_digest() == digest
    full_sweep(box.ctx(), apply=True)
    assert box.frontmatter("resources/people/ada-lovelace.md")["aliases"] == [
        "Countess of Lovelace"]
    found = resolve(box.ctx(), "countess of lovelace").data
    assert found.match and found.slug == "ada-lovelace"
    # the log was consumed: a second sweep proposes nothing and changes nothing
    again = full_sweep(box.ctx(), apply=True)
    assert list(again.data.aliases) == []


def test_one_confirmation_is_not_enough(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    assert box.capture("Ada Lovelace", kind="person").ok
    assert box.capture("Countess of Lovelace", kind="person", body="x",
                       merge_into="ada-lovelace").ok
    assert list(full_sweep(box.ctx()).data.aliases) == []
