"""Recall hit counts and ``heat`` (issue 16 item 4): every recall through the verb layer
appends one line of hits to the state dir (and never fails for it); ``heat`` proposes
promotions to and demotions from always-load by the documented policy, writes nothing
without ``--apply``, sets or removes one frontmatter line with it, and a second apply
does nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from echo_core import invoke
from echo_core.ops.always_load import load_registry
from echo_core.ops.heat import MAX_ALWAYS_LOAD, PROMOTE_MIN_HITS, WINDOW_DAYS, heat
from echo_core.ops.hit_counts import HITS_FILE, hits_since, record_hits
from echo_core.ops.load import load
from tests.capture_kit import VaultBox
from tests.cli_inproc import vault_runner

ADA = "resources/people/ada-lovelace.md"
GRACE = "resources/people/grace-hopper.md"


def _vault(tmp_path: Path) -> VaultBox:
    box = VaultBox(tmp_path).init()
    assert box.capture("Ada Lovelace", kind="person", body="Wrote the first program.").ok
    assert box.capture("Grace Hopper", kind="person", body="Built the first compiler.").ok
    return box


def _recall(box: VaultBox, query: str, times: int, **env: str) -> None:
    for _ in range(times):
        assert invoke(box.ctx(**env), "recall", {"query": query, "limit": 1}).ok


def test_each_recall_appends_one_line_with_its_primary_hits(tmp_path: Path) -> None:
    box = _vault(tmp_path)
    _recall(box, "first program", 2)
    _recall(box, "compiler", 1)
    state = box.ctx().state_dir
    lines = (state / HITS_FILE).read_text("utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [
        {"d": "2026-03-01", "p": [ADA]}, {"d": "2026-03-01", "p": [ADA]},
        {"d": "2026-03-01", "p": [GRACE]}]
    import datetime as _dt
    counts = hits_since(state, _dt.date(2026, 3, 1))
    assert counts[ADA].hits == 2 and counts[GRACE].hits == 1


def test_a_hits_file_that_cannot_be_written_never_fails_recall(tmp_path: Path) -> None:
    box = _vault(tmp_path)
    (box.ctx().state_dir / HITS_FILE).mkdir()  # a folder where the file should be
    _recall(box, "first program", 1)


def test_heat_proposes_a_hot_note_and_writes_nothing_without_apply(tmp_path: Path) -> None:
    box = _vault(tmp_path)
    _recall(box, "first program", PROMOTE_MIN_HITS)
    _recall(box, "compiler", PROMOTE_MIN_HITS - 1)
    before = box.tree_digest()
    env = heat(box.ctx())
    assert box.tree_digest() == before and env.action == "dry-run"
    assert [(c.path, c.hits) for c in env.data.promote] == [(ADA, PROMOTE_MIN_HITS)]
    assert "always_load" not in box.read(ADA)


def test_heat_apply_sets_one_line_then_the_brief_shows_the_note_and_a_rerun_does_nothing(
        tmp_path: Path) -> None:
    box = _vault(tmp_path)
    _recall(box, "first program", PROMOTE_MIN_HITS)
    before = box.read(ADA)
    env = heat(box.ctx(), apply=True)
    assert env.action == "updated" and [c.path for c in env.data.promote] == [ADA]
    after = box.read(ADA)
    assert [line for line in after.splitlines() if line not in before.splitlines()] == [
        "always_load: true"]
    assert after.replace("always_load: true\n", "") == before
    assert env.data.always_load == (ADA,)
    digest = load(box.ctx(), brief=True).data.digest
    assert "## Always loaded\n### [[ada-lovelace]]" in digest
    snapshot = box.tree_digest()
    again = heat(box.ctx(), apply=True)
    assert again.action == "unchanged" and box.tree_digest() == snapshot


def test_heat_demotes_an_always_load_note_without_hits_for_the_window(tmp_path: Path) -> None:
    box = _vault(tmp_path)
    path = box.vault / GRACE
    path.write_text(path.read_text("utf-8").replace("status: active",
                                                    "status: active\nalways_load: true"), "utf-8")
    early = heat(box.ctx(ECHO_TODAY="2026-01-01"))  # first seen then
    assert early.data.always_load == (GRACE,) and early.data.demote == ()
    plan = heat(box.ctx())
    assert [(c.path, c.hits) for c in plan.data.demote] == [(GRACE, 0)]
    assert f"no recall hit in {WINDOW_DAYS} days" in plan.data.demote[0].reason
    assert "always_load: true" in box.read(GRACE)  # dry run
    done = heat(box.ctx(), apply=True)
    assert done.data.demote and "always_load" not in box.read(GRACE)
    assert GRACE not in load_registry(box.ctx().state_dir)


def test_heat_promotes_at_most_the_policy_cap(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    state = box.ctx().state_dir
    import datetime as _dt
    names = [f"Topic Number {i}" for i in range(MAX_ALWAYS_LOAD + 2)]
    for name in names:
        assert box.capture(name, kind="concept", body=f"About {name}.").ok
    paths = [f"resources/concepts/topic-number-{i}.md" for i in range(len(names))]
    for i, path in enumerate(paths):
        for _ in range(PROMOTE_MIN_HITS + i):
            record_hits(state, _dt.date(2026, 3, 1), [path])
    env = heat(box.ctx())
    assert len(env.data.promote) == MAX_ALWAYS_LOAD
    assert [c.path for c in env.data.promote] == paths[::-1][:MAX_ALWAYS_LOAD]  # most hits
    assert len(env.data.skipped) == 2
    assert all(f"already {MAX_ALWAYS_LOAD} always-loaded" in c.reason for c in env.data.skipped)


def test_heat_leaves_out_a_hot_note_too_long_for_the_briefs_share(tmp_path: Path) -> None:
    box = _vault(tmp_path)
    path = box.vault / ADA
    path.write_text(path.read_text("utf-8").replace(
        "Wrote the first program.", "Wrote the first program. " + "long text " * 40), "utf-8")
    _recall(box, "first program", PROMOTE_MIN_HITS, ECHO_LOAD_BUDGET="800")
    env = heat(box.ctx(ECHO_LOAD_BUDGET="800"))
    assert env.data.promote == () and env.data.budget_chars == 200
    assert [c.path for c in env.data.skipped] == [ADA]
    assert "do not fit" in env.data.skipped[0].reason


# --- the CLI -------------------------------------------------------------------------------


@pytest.fixture
def run(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        isolated_env: dict[str, str]) -> Any:
    return vault_runner(tmp_path, capsys, monkeypatch)


def test_cli_heat_json_and_help_with_an_example(run: Any) -> None:
    done = run("heat", "--json")
    assert done.code == 0, done.err
    data = json.loads(done.out)
    assert data["action"] == "dry-run" and data["promote"] == [] and data["window_days"] == 30
    assert "echo-memory heat --apply" in run("heat", "--help").out
    bad = run("heat", "--apply", "--nope")
    assert bad.code == 2
