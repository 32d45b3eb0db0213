"""Issue 13, "notes and names": titles of every script, titles that name nothing, README,
one-letter typos at the gate, alias collisions, put's names, restore and the entity
index, and the gate message per surface. The acceptance table: 1,000 multilingual titles
give 1,000 notes, each resolvable by its title."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from echo_core.errors import EchoError
from echo_core.models import CaptureRequest
from echo_core.names import slugify
from echo_core.operations.invoke import invoke
from echo_core.ops.capture import capture
from echo_core.ops.history import restore_note
from echo_core.ops.notes_io import append_line, put_note, set_frontmatter
from echo_core.ops.recall import recall
from echo_core.ops.resolve import resolve
from echo_core.write_scope import require_note_path
from tests.capture_kit import VaultBox
from tests.conftest import REPO, run_cli
from tests.first_hour_titles import multilingual_titles
from tests.mcp_kit import call, make_server, with_client


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path).init()


def _refused(run: Any) -> EchoError:
    with pytest.raises(EchoError) as refused:
        run()
    return refused.value


# --- 1. titles and slugs --------------------------------------------------------------

@pytest.mark.parametrize(("title", "name"), [
    ("日本語のタイトル", "日本語のタイトル.md"),
    ("Привет мир", "привет-мир.md"),
    ("مرحبا بالعالم", "مرحبا-بالعالم.md"),
    ("Ωμέγα σχέδιο", "ωμέγα-σχέδιο.md"),
])
def test_non_latin_title_keeps_its_letters_in_the_note_name(box: VaultBox, title: str,
                                                           name: str) -> None:
    env = box.capture(title, kind="concept", body="x")
    assert env.action == "created" and env.data.path == f"resources/concepts/{name}"


@pytest.mark.parametrize("title", ["!!!", "???", "🎉", "— … —", "❤️"])
def test_a_title_naming_nothing_is_a_usage_error_not_untitled(box: VaultBox,
                                                             title: str) -> None:
    refused = _refused(lambda: box.capture(title, kind="concept", body="x"))
    assert refused.code == 2 and "no letter or digit" in refused.message
    assert "untitled" not in " ".join(box.entity_notes())


def test_a_title_naming_nothing_exits_2_on_the_cli(box: VaultBox) -> None:
    done = run_cli(["capture", "!!!", "--kind", "concept", "--vault", str(box.vault),
                    "--state-dir", str(box.state)], env=box.env())
    assert done.returncode == 2, done
    assert "no letter or digit" in done.stderr and "untitled" not in done.stdout


def test_untitled_is_its_own_note_not_a_placeholder_another_title_took(box: VaultBox) -> None:
    with pytest.raises(EchoError):
        box.capture("!!!", kind="concept", body="punctuation")
    env = box.capture("Untitled", kind="concept", body="a note called Untitled")
    assert env.action == "created" and env.data.path == "resources/concepts/untitled.md"
    assert "punctuation" not in box.read(env.data.path)


def test_a_title_never_merges_into_a_note_whose_slug_only_reads_like_it(box: VaultBox) -> None:
    con = box.capture("Con", kind="concept", body="the con")
    assert con.data.slug == "con-note"
    before = box.read(con.data.path)
    other = box.capture("Con Note", kind="concept", body="a different title")
    assert other.action != "updated", other  # stopped at the gate as similar, not merged
    assert box.read(con.data.path) == before
    forced = box.capture("Con Note", kind="concept", body="a different title", force=True)
    assert forced.action == "created" and forced.data.path != con.data.path
    hit = resolve(box.ctx(), "Con Note").data
    assert hit.match and hit.slug == forced.data.slug  # its own title first, not a slug


def test_kana_with_and_without_voicing_marks_are_different_names(box: VaultBox) -> None:
    kaki = box.capture("かき", kind="concept", body="persimmon")
    gagi = box.capture("がぎ", kind="concept", body="something else")
    assert gagi.action == "created" and gagi.data.path != kaki.data.path
    mine = box.capture("мой", kind="concept", body="mine")
    mine_plural = box.capture("мои", kind="concept", body="my (plural)")
    assert mine_plural.action == "created" and mine_plural.data.path != mine.data.path


def test_a_note_titled_readme_is_recallable(box: VaultBox) -> None:
    env = box.capture("README", kind="concept", body="How the lighthouse project is laid out.")
    assert env.action == "created" and env.data.path == "resources/concepts/readme-note.md"
    hits = recall(box.ctx(), "README lighthouse").data
    assert env.data.path in [h.path for h in hits.primary]
    assert resolve(box.ctx(), "README").data.path == env.data.path
    assert box.capture("readme", kind="concept", body="more").data.path == env.data.path


def _round_trip(box: VaultBox, titles: list[str]) -> None:
    """Capture every title (forced: the gate may find two random titles alike, as it
    should), then: one note per title, none named untitled or hidden, each resolved by its
    own title, and a seeded sample captured again lands in its own note."""
    ctx = box.ctx()
    paths: dict[str, str] = {}
    for title in titles:
        env = capture(ctx, CaptureRequest(title=title, kind="concept", body="x", force=True))
        assert env.action == "created", (title, env)
        paths[title] = env.data.path
    assert len(set(paths.values())) == len(titles)
    names = [p.rsplit("/", 1)[1] for p in paths.values()]
    assert not [n for n in names if n.startswith(("untitled", "."))]
    for title, path in paths.items():
        found = resolve(ctx, title).data
        assert found.match and found.path == path, (title, found)
    for title in random.Random(13).sample(titles, min(30, len(titles))):
        again = capture(ctx, CaptureRequest(title=title, kind="concept", body="again"))
        assert again.action == "updated" and again.data.path == paths[title], (title, again)


def test_the_thousand_title_table_gives_distinct_writable_slugs() -> None:
    titles = multilingual_titles(1000, seed=13)
    assert titles == multilingual_titles(1000, seed=13)  # deterministic
    slugs = [slugify(t) for t in titles]
    assert len(set(slugs)) == len(titles)
    for slug in slugs:
        assert slug != "untitled" and not slug.startswith(".")
        require_note_path(f"resources/concepts/{slug}.md")


def test_acceptance_a_thousand_multilingual_titles_give_a_thousand_notes(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 13's acceptance table in full: 1,000 seeded titles (Latin with accents, CJK,
    Cyrillic, Arabic, Greek, emoji, punctuation); about 20 s on one core."""
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # names, not durability, under test
    _round_trip(box, multilingual_titles(1000, seed=13))


# --- 2. the gate on names ---------------------------------------------------------------

@pytest.mark.parametrize("typo", ["Grace Hoper", "Grace Hopperr", "Grace Hopepr",
                                  "Grace Hopp3r", "GraceHopper", "grace hooper"])
def test_one_letter_typo_of_a_name_stops_at_the_gate(box: VaultBox, typo: str) -> None:
    box.capture("Grace Hopper", kind="person", body="COBOL")
    env = box.capture(typo, kind="person", body="typo")
    if typo == "Grace Hopp3r":  # a digit in the word: a different name (Budget 2025/2026)
        assert env.action == "created", env
        return
    assert env.action == "duplicate-gate", env
    assert env.data.candidates[0]["slug"] == "grace-hopper" and env.data.would_gate is True
    assert len(box.entity_notes()) == 1


@pytest.mark.parametrize(("existing", "new"), [
    ("Grace Hopper", "Grace Kelly"),
    ("Ann Lee", "Dan Lee"),  # two edits apart
    ("Jon Smith", "John Smith"),  # a four-letter word: as likely another person
    ("Mark Twain", "Mary Twain"),
    ("Vitamin A", "Vitamin C"),
])
def test_different_names_pass_the_gate(box: VaultBox, existing: str, new: str) -> None:
    box.capture(existing, kind="person", body="first")
    env = box.capture(new, kind="person", body="second")
    assert env.action == "created", env


def test_a_gate_stop_says_which_name_matched(box: VaultBox) -> None:
    box.capture("Vantage Systems", kind="company", body="x")
    env = box.capture("VSG", kind="company", body="y", aliases=("Vantage Sytems",))
    assert env.action == "duplicate-gate"
    assert env.message.startswith("'VSG' (by its alias 'Vantage Sytems') looks like existing "
                                  "company 'Vantage Systems'"), env.message


def test_a_typo_of_another_kinds_name_does_not_stop(box: VaultBox) -> None:
    box.capture("Grace Hopper", kind="company", body="a company")
    assert box.capture("Grace Hoper", kind="person", body="x").action == "created"


def test_the_cli_gate_exits_76_on_a_typo_naming_its_flags(box: VaultBox) -> None:
    box.capture("Grace Hopper", kind="person", body="COBOL")
    done = run_cli(["capture", "Grace Hoper", "--kind", "person", "--body", "x", "--json",
                    "--vault", str(box.vault), "--state-dir", str(box.state)], env=box.env())
    assert done.returncode == 76, done
    data = json.loads(done.stdout)
    assert data["would_gate"] is True
    assert "--merge-into grace-hopper" in data["message"] and "--force" in data["message"]
    assert "merge_into" not in data["message"] and "force=true" not in data["message"]


def test_merge_into_refuses_an_alias_that_names_another_entity(box: VaultBox) -> None:
    box.capture("Grace Hopper", kind="person", body="COBOL")
    hoper = box.capture("Grace Hoper", kind="person", body="typo", force=True)
    before = box.tree_digest()
    refused = _refused(lambda: box.capture("Grace Hoper", kind="person", body="x",
                                           merge_into="grace-hopper",
                                           aliases=("Grace Hoper",)))
    assert refused.code == 2 and hoper.data.path in refused.message
    assert "merge_into='grace-hoper'" in refused.message  # in Python: as a keyword
    assert box.tree_digest() == before
    assert box.entity("grace-hopper").aliases == ()


def test_capture_refuses_aliases_that_name_another_entity(box: VaultBox) -> None:
    box.capture("Vantage Systems", kind="company", body="x", aliases=("VSYS",))
    box.capture("Ada Lovelace", kind="person", body="x")
    for alias, title in (("VSYS", "Acme Robotics"), ("ada-lovelace", "Acme Labs")):
        refused = _refused(lambda a=alias, t=title: box.capture(t, kind="project", body="x",
                                                               aliases=(a,)))
        assert refused.code == 2 and "already names" in refused.message
    refused = _refused(lambda: box.capture("Vantage Systems", kind="company", body="y",
                                           aliases=("Ada Lovelace",)))
    assert refused.code == 2 and "resources/people/ada-lovelace.md" in refused.message
    assert box.entity("vantage-systems").aliases == ("VSYS",)
    assert len(box.entity_notes()) == 2


def test_rapidfuzz_is_not_imported_when_the_cli_starts() -> None:
    code = ("import sys; from plugins.transport_cli.app import main; sys.argv=['x','--help']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('rapidfuzz' in sys.modules, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=REPO)
    assert done.stderr.strip().splitlines()[-1] == "False"


# --- 15. the gate message per surface ------------------------------------------------------

def test_gate_message_names_argument_names_outside_the_cli(box: VaultBox) -> None:
    box.capture("Grace Hopper", kind="person", body="COBOL")
    env = invoke(box.ctx(), "capture", {"title": "Grace Hoper", "kind": "person"})
    assert env.action == "duplicate-gate" and env.data.would_gate is True
    assert "merge_into='grace-hopper'" in env.message and "force=True" in env.message
    assert "--" not in env.message


def test_gated_mcp_capture_names_mcp_arguments_and_would_gate(box: VaultBox) -> None:
    box.capture("Grace Hopper", kind="person", body="COBOL")
    server = make_server(box)
    try:
        err, data, text = with_client(server, lambda c: call(c, "echo_capture",
                                                             title="Grace Hoper", kind="person"))
    finally:
        server.runner.close()
    assert err is False and data["action"] == "duplicate-gate" and data["would_gate"] is True
    assert "merge_into" in text and "--merge-into" not in text and "--force" not in text
    summary = text.split("\n\n", 1)[0]  # the ways forward said once, in MCP's words
    assert summary.count("merge_into") == 1 and 'merge_into: "grace-hopper"' in summary, summary


# --- 3. put's names -------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["notes/con:fused?.md", "notes/a*b.md", 'notes/"q".md',
                                  "notes/a<b>.md", "notes/pipe|.md", "notes/back\\slash.md",
                                  "notes/trailing.md.", "notes/dot./x.md", "notes/space /x.md",
                                  "con.md", "notes/AUX.md", "notes/COM1.md", "notes/lpt9.md",
                                  "notes/CONIN$.md", "notes/conout$.md", "notes/COM¹.md",
                                  "notes/lpt³.md", "notes/com0.md"])
def test_put_refuses_names_obsidian_cannot_create_or_sync(box: VaultBox, path: str) -> None:
    refused = _refused(lambda: put_note(box.ctx(), path, "# x\n"))
    assert refused.code == 2


@pytest.mark.parametrize("marker", ["_agent/echo-vault.md", "_Agent/Echo-Vault.md",
                                    "./_agent/echo-vault.md", "_agent//echo-vault.md"])
def test_note_verbs_never_write_the_vault_marker(box: VaultBox, marker: str) -> None:
    before = box.read("_agent/echo-vault.md")
    ctx = box.ctx()
    for write in (lambda: put_note(ctx, marker, "# mine\n"),
                  lambda: append_line(ctx, marker, "- x"),
                  lambda: set_frontmatter(ctx, marker, "schema", 9)):
        assert _refused(write).code == 2
    assert box.read("_agent/echo-vault.md") == before


# --- 4. restore and the entity index ----------------------------------------------------------

def test_restore_brings_the_entity_index_back_in_line_with_the_note(box: VaultBox) -> None:
    first = box.capture("Grace Hopper", kind="person", body="COBOL", aliases=("Amazing Grace",))
    path = first.data.path
    box.capture("Grace Hopper", kind="person", body="Navy", aliases=("Queen of Code",))
    assert box.entity("grace-hopper").aliases == ("Amazing Grace", "Queen of Code")
    [older] = box.ctx().history.versions(path)
    env = restore_note(box.ctx(), path, older.version_id, confirm=True)
    assert env.action == "restored"
    assert box.entity("grace-hopper").aliases == ("Amazing Grace",)
    assert not resolve(box.ctx(), "Queen of Code").data.match
    assert resolve(box.ctx(), "Amazing Grace").data.path == path


def test_restore_indexes_the_restored_title_and_leaves_out_an_alias_now_taken(
        box: VaultBox) -> None:
    env = box.capture("Grace Hopper", kind="person", body="x", aliases=("Amazing Grace",))
    path = env.data.path
    first = box.read(path)
    second = first.replace("# Grace Hopper", "# Rear Admiral Hopper").replace(
        "Amazing Grace", "Admiral")
    put_note(box.ctx(), path, second)
    box.capture("Amazing Grace", kind="concept", body="a hymn")  # another kind, same name

    def version_of(text: str) -> str:
        ctx = box.ctx()
        return next(v.version_id for v in ctx.history.versions(path)
                    if ctx.history.text(path, v) == text)

    restored = restore_note(box.ctx(), path, version_of(first), confirm=True)
    assert restored.action == "restored"
    assert box.entity("grace-hopper").title == "Grace Hopper"
    assert box.entity("grace-hopper").aliases == ()  # the hymn has that name now
    assert any("Amazing Grace" in w for w in restored.warnings)
    restore_note(box.ctx(), path, version_of(second), confirm=True)
    assert box.entity("grace-hopper").title == "Rear Admiral Hopper"
    assert box.entity("grace-hopper").aliases == ("Admiral",)
    assert resolve(box.ctx(), "Rear Admiral Hopper").data.path == path


def test_restore_never_writes_the_vault_marker(box: VaultBox) -> None:
    marker = "_agent/echo-vault.md"
    before = box.read(marker)
    ctx = box.ctx()
    version = ctx.history.keep(marker, "# not a marker\n", saved_at="2026-03-01T09:00:00")
    assert restore_note(ctx, marker, version.version_id, confirm=False).action == "preview"
    refused = _refused(lambda: restore_note(ctx, marker, version.version_id, confirm=True))
    assert refused.code == 2 and "internal files" in refused.message
    assert box.read(marker) == before
