"""The duplicate gate (SPEC §2.2), end to end through capture: a table of seeded vaults and
one capture each, expected to stop, create or update; the GateContract suite; and the
gate plugin disabled."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

import plugins.gate_duplicate
from echo_core.entities import EntityIndex
from echo_core.gating import GateContext
from echo_core.models import CaptureRequest, Entity
from echo_core.routing import load_manifest
from echo_core.testing import GateContract
from tests.capture_kit import VaultBox, section
from tests.conftest import run_cli


@attrs.frozen
class Case:
    """Seed entities (each a capture's fields), then capture ``request``; ``expect`` is
    ``stop`` (gated, candidate ``target``), ``create`` (a new note; with ``warn`` the
    cross-kind ``target`` is a near duplicate) or ``update`` (of ``target``)."""

    id: str
    seeds: tuple[dict[str, Any], ...]
    request: dict[str, Any]
    expect: str
    target: str | None = None


def seed(title: str, kind: str, **fields: Any) -> dict[str, Any]:
    return {"title": title, "kind": kind, "body": "seeded", **fields}


VANTAGE = seed("Vantage Systems", "company")

CASES = [
    # --- same kind, same name up to legal form, article, case, hyphen, plural: stop
    Case("legal-suffix-inc", (VANTAGE,), seed("Vantage Systems Inc", "company"), "stop",
         "vantage-systems"),
    Case("lowercase-hyphen-ltd", (VANTAGE,), seed("vantage-systems ltd", "company"), "stop",
         "vantage-systems"),
    Case("leading-article", (VANTAGE,), seed("The Vantage Systems", "company"), "stop",
         "vantage-systems"),
    Case("singular-form", (VANTAGE,), seed("Vantage System", "company"), "stop",
         "vantage-systems"),
    Case("acronym-with-corporation", (seed("IBM", "company"),), seed("IBM Corporation", "company"),
         "stop", "ibm"),
    Case("person-two-shared-tokens", (seed("Ada Lovelace-Byron", "person"),),
         seed("Ada Lovelace", "person"), "stop", "ada-lovelace-byron"),
    Case("lone-token-unique-to-one-entity", (seed("Apollo", "project"),),
         seed("Apollo Rewrite", "project"), "stop", "apollo"),
    Case("request-alias-matches", (VANTAGE,),
         seed("VSG", "company", aliases=("Vantage Systems Group",)), "stop", "vantage-systems"),
    Case("existing-alias-matches", (seed("Vantage Systems", "company", aliases=("Vantix",)),),
         seed("Vantix Ltd", "company"), "stop", "vantage-systems"),
    Case("meeting-same-date-extra-word", (seed("Weekly Sync", "meeting"),),
         seed("Weekly Sync Meeting", "meeting"), "stop", "2026-03-01-weekly-sync"),
    Case("person-surname-first", (seed("Ada Lovelace", "person"),),
         seed("Lovelace, Ada", "person"), "stop", "ada-lovelace"),
    Case("two-legal-forms", (seed("Acme Corp", "company"),), seed("Acme Inc", "company"), "stop",
         "acme-corp"),
    Case("plural-title", (seed("Data Pipeline", "concept"),), seed("Data Pipelines", "concept"),
         "stop", "data-pipeline"),
    Case("meeting-explicit-same-date", (seed("Weekly Sync", "meeting", date="2026-02-22"),),
         seed("Weekly Sync Notes", "meeting", date="2026-02-22"), "stop",
         "2026-02-22-weekly-sync"),
    # --- legitimate distinct captures: pass (create)
    Case("decision-named-after-project", (seed("Echo Memory", "project"),),
         seed("Echo Memory launch", "decision"), "create", "echo-memory"),
    Case("same-title-other-kind", (seed("Grace Hopper", "company"),),
         seed("Grace Hopper", "person"), "create", "grace-hopper"),
    Case("shared-token-in-several-concepts",
         (seed("Echo Memory", "concept"), seed("Echo Server", "concept")),
         seed("Echo Plugin", "concept"), "create"),
    Case("lone-token-common-in-vault",
         (seed("Apollo", "project"), seed("Apollo Guidance", "concept")),
         seed("Apollo Rewrite", "project"), "create"),
    Case("person-half-overlap", (seed("Ada Lovelace", "person"),), seed("Ada Byron", "person"),
         "create"),
    Case("same-first-name", (seed("John Smith", "person"),), seed("John Doe", "person"),
         "create"),
    Case("weekly-meeting-other-date", (seed("Weekly Sync", "meeting", date="2026-02-22"),),
         seed("Weekly Sync", "meeting"), "create"),
    Case("decision-other-date", (seed("Adopt Postgres", "decision", date="2026-01-10"),),
         seed("Adopt Postgres", "decision"), "create"),
    Case("genuinely-distinct", (VANTAGE,), seed("Acme Robotics", "company"), "create"),
    Case("versioned-names", (seed("Budget 2025", "project"),), seed("Budget 2026", "project"),
         "create"),
    Case("people-sharing-two-of-three-names", (seed("Mary Jane Watson", "person"),),
         seed("Mary Jane Smith", "person"), "create"),
    # "a" is a name stopword, so "Series A Funding" is left with {series, funding}: a
    # subset of "Series B Funding" - the letter that tells the rounds apart is dropped
    Case("funding-rounds-differ-by-a-letter", (seed("Series A Funding", "project"),),
         seed("Series B Funding", "project"), "create"),
    Case("vitamins-differ-by-a-letter", (seed("Vitamin A", "concept"),),
         seed("Vitamin C", "concept"), "create"),
    # --- the same entity: resolves and updates, never gated
    Case("meeting-same-title-same-date", (seed("Weekly Sync", "meeting"),),
         seed("Weekly Sync", "meeting"), "update", "2026-03-01-weekly-sync"),
    Case("alias-exact", (seed("Vantage Systems", "company", aliases=("VS Corp",)),),
         seed("VS Corp", "company"), "update", "vantage-systems"),
    Case("case-and-hyphen-variant", (VANTAGE,), seed("VANTAGE-systems", "company"), "update",
         "vantage-systems"),
    Case("single-token-same-name", (seed("Apollo", "project"),), seed("apollo", "project"),
         "update", "apollo"),
    Case("accent-variant", (seed("José Núñez", "person"),), seed("Jose Nunez", "person"),
         "update", "jose-nunez"),
    Case("meeting-same-explicit-date", (seed("Weekly Sync", "meeting", date="2026-02-22"),),
         seed("weekly sync", "meeting", date="2026-02-22"), "update", "2026-02-22-weekly-sync"),
]


@attrs.frozen
class Outcome:
    action: str
    new_notes: frozenset[str]
    envelope: Any
    box: VaultBox
    before_digest: str
    after_digest: str


def run_case(case: Case, root: Path) -> Outcome:
    box = VaultBox(root).init()
    for fields in case.seeds:
        fields = dict(fields)
        env = box.capture(fields.pop("title"), **fields)
        assert env.action == "created", (case.id, env)
    notes_before = box.entity_notes()
    digest = box.tree_digest()
    request = dict(case.request)
    request["body"] = f"captured for {case.id}"
    env = box.capture(request.pop("title"), **request)
    return Outcome(env.action, frozenset(box.entity_notes() - notes_before), env, box, digest,
                   box.tree_digest())


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_duplicate_gate_table(case: Case, tmp_path: Path) -> None:
    out = run_case(case, tmp_path)
    env, box = out.envelope, out.box
    if case.expect == "stop":
        assert not env.ok and out.action == "duplicate-gate", env
        assert env.data.candidates[0]["slug"] == case.target
        assert all(c["score"] >= 0.8 for c in env.data.candidates)
        # in-process (Python): keyword arguments; the CLI names its flags, MCP its arguments
        assert f"merge_into={case.target!r}" in env.message and "force=True" in env.message
        assert "--" not in env.message and env.data.would_gate is True
        assert out.new_notes == frozenset()
        assert out.after_digest == out.before_digest, "a gated capture wrote to the vault"
    elif case.expect == "create":
        assert env.ok and out.action == "created", env
        assert out.new_notes == {env.data.path}
        assert f"captured for {case.id}" in box.read(env.data.path)
        if case.target is not None:  # a cross-kind near match only warns
            assert case.target in [c["slug"] for c in env.data.near_duplicates]
    else:
        assert env.ok and out.action == "updated", env
        assert out.new_notes == frozenset()
        assert env.data.slug == case.target
        assert f"captured for {case.id}" in box.read(env.data.path)


def test_gate_table_has_no_false_blocks_and_creates_no_duplicates(tmp_path: Path) -> None:
    false_blocks: list[str] = []
    duplicates: list[str] = []
    for n, case in enumerate(CASES):
        out = run_case(case, tmp_path / str(n))
        if case.expect != "stop" and out.action == "duplicate-gate":
            false_blocks.append(case.id)
        if case.expect != "create" and out.new_notes:
            duplicates.append(case.id)
    print(f"gate table: {len(CASES)} cases, {len(false_blocks)} false blocks, "
          f"{len(duplicates)} duplicates created")
    assert len(CASES) >= 12
    assert (false_blocks, duplicates) == ([], [])


# --- the contract suite ---------------------------------------------------------------

def _company(slug: str, title: str, *aliases: str) -> Entity:
    return Entity(slug=slug, path=f"resources/companies/{slug}.md", kind="company", title=title,
                  aliases=aliases)


class TestDuplicateGate(GateContract):
    @pytest.fixture
    def gate_plugin(self) -> object:
        return plugins.gate_duplicate

    @pytest.fixture
    def gate_context(self) -> GateContext:
        index = EntityIndex([_company("vantage-systems", "Vantage Systems", "VS Corp"),
                             _company("acme-tools", "Acme Tools")])
        return GateContext(entities=index, route=load_manifest().route("company"), echo=None)

    @pytest.fixture
    def passing_request(self) -> CaptureRequest:
        return CaptureRequest(title="Orbital Robotics", kind="company")

    @pytest.fixture
    def stopping_request(self) -> CaptureRequest:
        return CaptureRequest(title="Vantage Systems Inc", kind="company")


# --- the plugin disabled --------------------------------------------------------------

def test_disabling_the_gate_plugin_lets_the_duplicate_through_and_nothing_else_changes(
    isolated_env: dict[str, str], tmp_path: Path
) -> None:
    vault = tmp_path / "vault"
    box = VaultBox(tmp_path)
    enabled = dict(isolated_env)
    disabled = {**isolated_env, "ECHO_DISABLE_PLUGINS": "gate_duplicate"}

    def cli(env: dict[str, str], *args: str) -> Any:
        out = run_cli([*args, "--json", "--vault", str(vault)], env=env)
        return out.returncode, json.loads(out.stdout) if out.stdout.strip() else out.stderr

    assert cli(disabled, "init")[0] == 0
    code, created = cli(disabled, "capture", "Vantage Systems", "-k", "company", "--body", "vendor")
    assert (code, created["action"]) == (0, "created")
    # control: with the plugin the near duplicate is stopped
    assert cli(enabled, "capture", "Vantage Systems Inc", "-k", "company", "--body", "x")[0] == 76
    code, dup = cli(disabled, "capture", "Vantage Systems Inc", "-k", "company", "--body", "dup")
    assert (code, dup["action"]) == (0, "created")
    assert dup["path"] == "resources/companies/vantage-systems-inc.md"
    assert box.entity_notes() == {"resources/companies/vantage-systems.md",
                                  "resources/companies/vantage-systems-inc.md"}
    code, upd = cli(disabled, "capture", "vantage systems", "-k", "company", "--body", "renewed")
    assert (code, upd["action"]) == (0, "updated")
    assert "- 2026-03-01: renewed" in section(box.read("resources/companies/vantage-systems.md"),
                                             "Notes")
    code, inbox = cli(disabled, "capture", "call the bank", "--body", "loan")
    assert (code, inbox["action"]) == (0, "inbox")
    log = section(box.read("journal/daily/2026-03-01.md"), "Agent Log").strip().split("\n")
    assert log == ["- 2026-03-01: created company [[vantage-systems]]",
                   "- 2026-03-01: created company [[vantage-systems-inc]]",
                   "- 2026-03-01: updated company [[vantage-systems]]"]
    assert sorted(box.captured()) == ["vantage-systems", "vantage-systems-inc"]
