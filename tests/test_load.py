"""load / load --brief (SPEC §4.1): the digest's sections, order, budget and trimming,
absent and unreadable files, an uninitialised or unreachable vault, the outbox step and
the on_session_start event - checked on vaults built in tmp_path."""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.hookspecs import hookimpl
from echo_core.ops.digest import TRIM_ORDER, TRUNCATED, render_digest, sections_text
from echo_core.ops.load import load, parse_heartbeat, read_snapshot
from tests.capture_kit import VaultBox
from tests.conftest import run_cli

BRIEF_ORDER = ["marker", "scope", "preferences", "observations", "last-session", "agent-log",
               "inbox"]
SESSION_LOG = "_agent/sessions/2026-02-28-1700-recall-index.md"
PREFS = "_agent/memory/semantic/operator-preferences.md"


def _observations(n: int) -> str:
    return "\n".join(f"- 2026-02-{i % 28 + 1:02d}: observation-{i:02d} the operator likes "
                     f"short answers number {i}" + ("\n  a continuation line" if i == 3 else "")
                     for i in range(1, n + 1))


def write_rich_vault(box: VaultBox) -> None:
    """14 observations, a long scope history, a 20-item inbox, 3 sessions, a daily note."""
    files: dict[str, str] = {
        PREFS: ("---\ntype: semantic\nstatus: active\ntags: [semantic]\n---\n"
                "# Operator Preferences\n\n## Fact / Pattern\n\n- Prefers pytest over unittest\n"
                "- Wants short answers\n\n## Observations\n\n" + _observations(14) + "\n"),
        "_agent/context/current-context.md": (
            "---\ntype: context\nscope_updated: 2026-02-20\n---\n# Current Context\n\n"
            "## Scope\n\nShip the recall index, then the MCP server\n\n## Scope History\n\n"
            + "\n".join(f"- 2026-01-{i % 28 + 1:02d}: history-entry-{i:03d} an earlier focus "
                        "of the agent that is no longer current" for i in range(120)) + "\n"),
        "inbox/captures/inbox.md": (
            "# Inbox\n\nQuick captures, one `- YYYY-MM-DD: text` line each.\n\n"
            + "\n".join(f"- {_dt.date(2026, 1, 15) + _dt.timedelta(days=i)}: "
                        f"inbox-secret-{i:02d} call someone" for i in range(20)) + "\n"),
        "_agent/sessions/2026-02-10-0900-older.md": "# Session older\n\n## Goal\n\nold goal\n",
        "_agent/sessions/2026-02-25-1000-middle.md": "# Session middle\n\n## Goal\n\nmid\n",
        SESSION_LOG: ("---\ntype: session\n---\n# Session recall-index\n\n## Goal\n\n"
                      "Ship the recall index\n\n## Decisions Made\n\n- BM25 over embeddings\n"
                      "- porterlite stemmer\n\n## Open Threads\n\n- tune k1 and b\n\n"
                      "## Suggested Next Step\n\nRun the eval harness\n\n## Notes\n\n"
                      "not-in-summary detail\n"),
        "_agent/heartbeat/last-session.md": f"{SESSION_LOG} @ 2026-02-28T17:05:00\n",
        "journal/daily/2026-03-01.md": (
            "---\ntype: daily\n---\n# 2026-03-01\n\n## Agent Log\n\n"
            + "\n".join(f"- 2026-03-01: agent-log-line-{i:02d} created concept [[x{i}]]"
                        for i in range(12)) + "\n"),
    }
    for path, text in files.items():
        target = box.vault / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path).init()


@pytest.fixture
def rich(box: VaultBox) -> VaultBox:
    write_rich_vault(box)
    return box


def _names(sections: Any) -> list[str]:
    return [s.name for s in sections]


def _status(sections: Any) -> dict[str, str]:
    return {s.name: s.status for s in sections}


# --- the brief digest -----------------------------------------------------------------

def test_brief_digest_has_every_section_in_order_within_budget(rich: VaultBox) -> None:
    env = load(rich.ctx(), brief=True)
    assert env.ok and env.action == "loaded"
    data = env.data
    assert _names(data.sections) == BRIEF_ORDER
    assert set(_status(data.sections).values()) == {"ok"}
    assert data.budget == 8000 and data.chars == len(data.digest) <= 8000
    digest = data.digest
    anchors = ["echo-memory vault: schema 1, bootstrapped", "## Scope (updated 2026-02-20",
               "## Fact / Pattern", "## Observations (last 10 of 14)",
               "## Last session: [[2026-02-28-1700-recall-index]]", "## Agent Log (2026-03-01)",
               "## Inbox"]
    positions = [digest.index(anchor) for anchor in anchors]
    assert positions == sorted(positions) and positions[0] == 0
    assert digest == sections_text(list(data.sections))


def test_brief_digest_shows_scope_and_sessions_since(rich: VaultBox) -> None:
    digest = load(rich.ctx(), brief=True).data.digest
    assert "## Scope (updated 2026-02-20; 2 sessions logged since)" in digest
    assert "Ship the recall index, then the MCP server" in digest
    assert "history-entry" not in digest  # the long Scope History stays out of the brief
    assert "bootstrapped: 3 sessions logged, last committed 2026-02-28T17:05:00" in digest


def test_brief_digest_keeps_facts_in_full_and_the_last_10_observations(rich: VaultBox) -> None:
    digest = load(rich.ctx(), brief=True).data.digest
    assert "- Prefers pytest over unittest\n- Wants short answers" in digest
    assert "(last 10 of 14)" in digest
    shown = [i for i in range(1, 15) if f"observation-{i:02d} " in digest]
    assert shown == list(range(5, 15))


def test_brief_digest_summarises_the_last_session(rich: VaultBox) -> None:
    env = load(rich.ctx(), brief=True)
    digest = env.data.digest
    assert env.data.session_log == SESSION_LOG
    heads = ["### Goal\nShip the recall index", "### Decisions Made\n- BM25 over embeddings",
             "### Open Threads\n- tune k1 and b", "### Suggested Next Step\nRun the eval harness"]
    positions = [digest.index(h) for h in heads]
    assert positions == sorted(positions)
    assert "not-in-summary detail" not in digest


def test_brief_digest_shows_todays_agent_log(rich: VaultBox) -> None:
    digest = load(rich.ctx(), brief=True).data.digest
    assert all(f"agent-log-line-{i:02d}" in digest for i in range(12))


def test_inbox_is_a_count_and_an_age_never_its_contents(rich: VaultBox) -> None:
    env = load(rich.ctx(), brief=True)
    digest = env.data.digest
    assert "20 items waiting, oldest 45 days old" in digest
    assert "inbox-secret" not in digest and "call someone" not in digest
    assert "inbox-secret" not in json.dumps(env.to_dict())


def test_tiny_budget_truncates_with_markers_and_never_exceeds_it(rich: VaultBox) -> None:
    data = load(rich.ctx(ECHO_LOAD_BUDGET="600"), brief=True).data
    assert data.budget == 600 and len(data.digest) <= 600
    assert TRUNCATED in data.digest
    assert _status(data.sections)["observations"] == "truncated"
    assert data.digest.startswith("echo-memory vault: schema 1")


def test_trimming_order_is_observations_then_agent_log_then_session(rich: VaultBox) -> None:
    snapshot = read_snapshot(rich.ctx())

    def trimmed(budget: int) -> tuple[list[str], str]:
        sections = render_digest(snapshot, brief=True, budget=budget, full_budget=budget * 3)
        text = sections_text(list(sections))
        assert len(text) <= budget
        return [s.name for s in sections if s.status == "truncated"], text

    full = len(trimmed(100_000)[1])
    seen: list[int] = []
    for budget in range(full, 199, -23):
        names, text = trimmed(budget)
        if text.endswith("\n" + TRUNCATED):  # the last resort: a hard cut at the budget
            assert len(text) <= budget
            continue
        assert set(names) == set(TRIM_ORDER[: len(names)]), (budget, names)
        for name in names:
            block = next(s.text for s in render_digest(snapshot, brief=True, budget=budget,
                                                        full_budget=budget) if s.name == name)
            assert f"{TRUNCATED} " in block
        seen.append(len(names))
    assert seen == sorted(seen) and {0, 1, 2, 3} <= set(seen)


def test_over_budget_observations_keep_the_most_recent(rich: VaultBox) -> None:
    full = load(rich.ctx(), brief=True).data
    budget = full.chars - 60
    data = load(rich.ctx(ECHO_LOAD_BUDGET=str(budget)), brief=True).data
    status = _status(data.sections)
    assert status["observations"] == "truncated"
    assert status["agent-log"] == status["last-session"] == "ok"
    assert "observation-14 " in data.digest and "observation-05 " not in data.digest
    assert "older observations not shown" in data.digest


# --- the full digest ------------------------------------------------------------------

def test_full_load_adds_the_full_notes_within_three_times_the_budget(rich: VaultBox) -> None:
    brief = load(rich.ctx(), brief=True).data
    data = load(rich.ctx(), brief=False).data
    assert data.budget == 24000 and data.chars <= 24000
    assert data.digest.startswith(brief.digest + "\n\n## Full text: current context")
    assert _names(data.sections) == BRIEF_ORDER + ["context-note", "preferences-note",
                                                   "session-note"]
    assert "history-entry-119" in data.digest and "not-in-summary detail" in data.digest
    assert "observation-01 " in data.digest  # the preferences note in full


def test_full_load_with_a_tiny_budget_still_fits(rich: VaultBox) -> None:
    data = load(rich.ctx(ECHO_LOAD_BUDGET="600"), brief=False).data
    assert data.budget == 1800 and len(data.digest) <= 1800
    assert TRUNCATED in data.digest


@pytest.mark.parametrize("raw", ["abc", "50", "-1"])
def test_a_bad_budget_is_a_usage_error(box: VaultBox, raw: str) -> None:
    with pytest.raises(EchoError) as info:
        load(box.ctx(ECHO_LOAD_BUDGET=raw), brief=True)
    assert info.value.code == ExitCode.USAGE and "ECHO_LOAD_BUDGET" in info.value.message


# --- absent, unreadable, uninitialised, unreachable -----------------------------------

def test_missing_daily_note_and_inbox_are_absent_not_errors(box: VaultBox) -> None:
    (box.vault / "inbox/captures/inbox.md").unlink()
    env = load(box.ctx(), brief=True)
    assert env.ok
    status = _status(env.data.sections)
    assert status["agent-log"] == "absent" and status["inbox"] == "absent"
    assert status["last-session"] == "absent"
    assert "not bootstrapped yet" in env.data.digest
    assert "(no daily note yet today)" in env.data.digest


def test_an_unreadable_note_is_an_error_section_and_load_goes_on(rich: VaultBox) -> None:
    (rich.vault / PREFS).write_bytes(b"\xff\xfe not utf-8")
    env = load(rich.ctx(), brief=True)
    assert env.ok and "unreadable: preferences, observations" in env.message
    status = _status(env.data.sections)
    assert status["preferences"] == status["observations"] == "error"
    assert status["scope"] == status["last-session"] == "ok"
    assert f"could not read {PREFS}" in env.data.digest


def test_a_heartbeat_pointing_at_a_missing_log_is_an_error(rich: VaultBox) -> None:
    (rich.vault / SESSION_LOG).unlink()
    env = load(rich.ctx(), brief=True)
    assert env.ok and _status(env.data.sections)["last-session"] == "error"
    assert f"points at {SESSION_LOG}, which is missing" in env.data.digest


def test_heartbeat_lines_parse() -> None:
    assert parse_heartbeat(f"{SESSION_LOG} @ 2026-02-28T17:05:00\n") == (
        SESSION_LOG, "2026-02-28T17:05:00")
    assert parse_heartbeat("(no session yet) @ 2026-03-01T12:00:00\n") == (
        None, "2026-03-01T12:00:00")
    assert parse_heartbeat("") == (None, None)


def test_an_uninitialised_vault_is_exit_78(tmp_path: Path) -> None:
    box = VaultBox(tmp_path)
    with pytest.raises(EchoError) as info:
        load(box.ctx(), brief=True)
    assert info.value.code == ExitCode.NOT_CONFIGURED and "echo-memory init" in info.value.message


def test_an_unreachable_vault_says_proceed_without_memory(tmp_path: Path) -> None:
    box = VaultBox(tmp_path)
    box.vault.rmdir()
    env = load(box.ctx(), brief=True)
    assert not env.ok and env.action == "unreachable"
    assert "vault unreachable; proceed without memory" in env.message
    assert env.data.digest == env.message and env.data.sections == ()


# --- outbox and event -----------------------------------------------------------------

class SessionProbe:
    def __init__(self) -> None:
        self.starts = 0

    @hookimpl
    def on_session_start(self, ctx: Any) -> None:
        self.starts += 1


def test_load_fires_on_session_start_once(box: VaultBox) -> None:
    ctx = box.ctx()
    probe = SessionProbe()
    assert ctx.host.add("probe", probe)
    load(ctx, brief=True)
    assert probe.starts == 1


def test_outbox_step_says_no_outbox_plugin(box: VaultBox) -> None:
    data = load(box.ctx(ECHO_DISABLE_PLUGINS="queue_outbox"), brief=True).data
    assert "no outbox plugin installed" in data.outbox


def test_load_flushes_queued_writes_first(box: VaultBox) -> None:
    from echo_core.ops.outbox_queue import idempotency_key

    ctx = box.ctx()
    args = {"title": "Queued Idea", "kind": "concept", "body": "made offline"}
    assert ctx.queue is not None
    ctx.queue.put({"op": "capture", "args": args, "day": "2026-03-01",
                   "idempotency_key": idempotency_key("capture", args, "2026-03-01")})
    data = load(ctx, brief=True).data
    assert "1 synced" in data.outbox
    assert "outbox: 1 queued write synced now, 0 still waiting, 0 need attention" in data.digest
    assert "made offline" in (box.vault / "resources/concepts/queued-idea.md").read_text()
    assert "created 1 note ([[queued-idea]])" in data.digest  # the digest saw the replay


# --- CLI ------------------------------------------------------------------------------

def test_cli_load_brief_json(isolated_env: dict[str, str], tmp_path: Path) -> None:
    box = VaultBox(tmp_path / "b").init()
    write_rich_vault(box)
    out = run_cli(["load", "--brief", "--json", "--vault", str(box.vault)], env=isolated_env)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["ok"] and [s["name"] for s in data["sections"]] == BRIEF_ORDER
    assert "(last 10 of 14)" in data["digest"] and data["chars"] <= data["budget"] == 8000


def test_cli_load_prints_the_digest(isolated_env: dict[str, str], tmp_path: Path) -> None:
    box = VaultBox(tmp_path / "b").init()
    out = run_cli(["load", "--vault", str(box.vault)], env=isolated_env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("echo-memory vault: schema 1")
    assert "## Full text: current context" in out.stdout


def test_cli_load_uninitialised_exits_78(isolated_env: dict[str, str], vault_dir: Path) -> None:
    out = run_cli(["load", "--brief", "--vault", str(vault_dir)], env=isolated_env)
    assert out.returncode == 78 and "echo-memory init" in out.stderr


def test_cli_load_unreachable_exits_69(isolated_env: dict[str, str], tmp_path: Path) -> None:
    import shutil

    assert run_cli(["init", "--vault", str(tmp_path / "gone")], env=isolated_env).returncode == 0
    shutil.rmtree(tmp_path / "gone")  # a vault this machine used, gone (not a typo: 78)
    out = run_cli(["load", "--brief", "--vault", str(tmp_path / "gone")], env=isolated_env)
    assert out.returncode == 69
    assert "vault unreachable; proceed without memory" in out.stdout
