"""A name that several entities of one kind answer to (an alias two people share, added
by hand) is ambiguous: ``resolve`` says so (no match, ``ambiguous``, every entity it names
a candidate; exit 0 as for any miss), ``capture`` refuses to pick one (exit 2 naming the
slugs, nothing written) until a slug says which, as inbox review keeps such an item
waiting. And an initial "A." is a name token, not the article: a shared "A. Smith" does
not make every other Smith score 1.0 against it (resolve, the name cache, the gate)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from echo_core.errors import EchoError
from echo_core.models import Entity
from echo_core.ops.index_sync import sync_paths
from echo_core.ops.resolve import resolve
from tests.capture_kit import VaultBox
from tests.conftest import run_cli

PEOPLE = "resources/people"


def _person(box: VaultBox, title: str, *aliases: str) -> str:
    """A person note written by hand (indexed as a sync would); its path."""
    slug = title.lower().replace(" ", "-")
    path = f"{PEOPLE}/{slug}.md"
    listed = f"aliases: [{', '.join(aliases)}]\n" if aliases else ""
    (box.vault / path).write_text(f"---\ntype: person\nstatus: active\n{listed}---\n"
                                  f"# {title}\n", encoding="utf-8")
    sync_paths(box.ctx(), [path])
    return path


@pytest.fixture
def smiths(tmp_path: Path) -> VaultBox:
    box = VaultBox(tmp_path).init()
    _person(box, "Ana Smith", "A. Smith")
    _person(box, "Alan Smith", "A. Smith")
    return box


def test_resolve_says_a_shared_alias_is_ambiguous(smiths: VaultBox) -> None:
    found = resolve(smiths.ctx(), "A. Smith")
    assert found.ok and not found.data.match and found.data.ambiguous
    assert found.data.slug is None and found.data.suggest_slug is None
    assert [c["slug"] for c in found.data.candidates] == ["alan-smith", "ana-smith"]
    assert {c["score"] for c in found.data.candidates} == {1.0}
    assert "ambiguous" in found.message and "alan-smith" in found.message
    # the slug picks one; so does a name only one of them has
    assert resolve(smiths.ctx(), "ana-smith").data.slug == "ana-smith"
    assert resolve(smiths.ctx(), "Alan Smith").data.slug == "alan-smith"
    assert resolve(smiths.ctx(), "a smith", kind="person").data.ambiguous


def test_resolve_cli_json_reports_ambiguous_and_exits_zero(smiths: VaultBox) -> None:
    done = run_cli(["resolve", "A. Smith", "--json", "--vault", str(smiths.vault),
                    "--state-dir", str(smiths.state)], env=smiths.env())
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["match"] is False and data["ambiguous"] is True
    assert [c["slug"] for c in data["candidates"]] == ["alan-smith", "ana-smith"]


def test_a_different_kind_answering_too_is_no_ambiguity(smiths: VaultBox) -> None:
    assert smiths.capture("Zed Labs", kind="company", body="x", aliases=("Zed",)).ok
    _person(smiths, "Zed Person", "Zed")
    found = resolve(smiths.ctx(), "Zed")  # one company, one person: --kind picks one
    assert found.data.match and not found.data.ambiguous
    assert resolve(smiths.ctx(), "Zed", kind="person").data.slug == "zed-person"


def test_capture_refuses_an_ambiguous_title_and_writes_nothing(smiths: VaultBox) -> None:
    before = smiths.tree_digest()
    for dry_run in (True, False):
        with pytest.raises(EchoError) as refused:
            smiths.capture("A. Smith", kind="person", body="Owes us the signed contract.",
                           dry_run=dry_run)
        assert refused.value.code == 2
        assert "alan-smith" in refused.value.message and "ana-smith" in refused.value.message
        assert "merge_into='alan-smith'" in refused.value.message
    assert smiths.tree_digest() == before
    merged = smiths.capture("A. Smith", kind="person", body="Owes us the contract.",
                            merge_into="ana-smith")
    assert merged.ok and merged.data.path == f"{PEOPLE}/ana-smith.md"
    assert "contract" not in smiths.read(f"{PEOPLE}/alan-smith.md")


def test_capture_cli_ambiguous_title_exits_2_naming_the_slugs(smiths: VaultBox) -> None:
    done = run_cli(["capture", "A. Smith", "-k", "person", "-b", "signed contract",
                    "--vault", str(smiths.vault), "--state-dir", str(smiths.state)],
                   env=smiths.env())
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--merge-into alan-smith" in done.stderr and "ana-smith" in done.stderr
    assert "signed contract" not in smiths.read(f"{PEOPLE}/alan-smith.md")
    assert "signed contract" not in smiths.read(f"{PEOPLE}/ana-smith.md")


def test_an_initial_a_is_a_token_not_the_article() -> None:
    from echo_core.name_matching import entity_name_tokens, matching_tokens, name_score

    assert matching_tokens("A. Smith") == {"a", "smith"}
    assert matching_tokens("A Tale of Cities") == {"tale", "city"}  # the article goes
    ada = Entity(slug="ada-smith", path=f"{PEOPLE}/ada-smith.md", kind="person",
                 title="Ada Smith", aliases=("A. Smith",))
    assert name_score(matching_tokens("Hana Smith"), entity_name_tokens(ada)) == 0.5


def test_a_shared_initial_alias_inflates_no_score(smiths: VaultBox) -> None:
    _person(smiths, "Ada Smith", "A. Smith")
    _person(smiths, "Hanna Smith")
    index = smiths.ctx().entity_names  # the SQLite name cache
    scores = {m.entity.slug: m.score for m in index.fuzzy("Hana Smith", limit=10)}
    assert max(scores.values()) == 0.5
    assert scores == {m.entity.slug: m.score
                      for m in smiths.index().fuzzy("Hana Smith", limit=10)}
    found = resolve(smiths.ctx(), "Hana Smith")
    assert not found.data.match and not found.data.ambiguous
    assert found.data.candidates[0]["slug"] == "hanna-smith"  # spelt most alike


def test_the_gate_lets_a_namesake_of_a_shared_initial_through(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    assert box.capture("Ana Smith", kind="person", body="Sales.", aliases=("A. Smith",)).ok
    made = box.capture("Alan Smith", kind="person", body="Support.")
    assert made.ok and made.data.path == f"{PEOPLE}/alan-smith.md", made.message
