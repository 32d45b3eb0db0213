"""Insight injection (issue 18 item 3): a SessionStart in a matching project gets the
approved insights that match it, at most 5 within 500 tokens, ranked by recall; the same
over MCP and the CLI; a failing provider never costs the brief."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import plugins.habitat
from echo_core import hookimpl
from echo_core.ops.scope import set_scope
from echo_core.testing import PluginContract, SessionContextContract
from plugins.habitat.insight_context import HEADER, MAX_INSIGHTS, MAX_TOKENS, select_insights
from plugins.habitat.insight_tokens import estimate_tokens
from plugins.habitat.learnings_ops import approve, store_learning
from tests.capture_kit import VaultBox
from tests.hook_kit import context_of, hook_env, payload, run_hook, seeded_vault

PAYMENTS = ("In payments-service the refund worker must hold the ledger lock before it "
            "retries a failed refund.")
GARDEN = "The greenhouse sensor reports humidity every ten minutes."


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return seeded_vault(tmp_path / "box")


def project(tmp_path: Path, name: str) -> Path:
    """A repository folder named ``name`` and a subfolder the session starts in."""
    root = tmp_path / name
    (root / ".git").mkdir(parents=True, exist_ok=True)
    (root / "src" / "api").mkdir(parents=True, exist_ok=True)
    return root / "src" / "api"


def approved(box: VaultBox, text: str, **env: str) -> str:
    ctx = box.ctx(**env)
    stored = store_learning(ctx, text, agent_id="agent-a", session_id="s-1")
    done = approve(ctx, stored.data.learning.id)
    assert done.ok, done
    learning_id: str = stored.data.learning.id
    return learning_id


def insight_lines(context: str) -> list[str]:
    if HEADER not in context:
        return []
    block = context[context.index(HEADER):]
    return [line for line in block.splitlines()[1:] if line.startswith("- ")]


def start(box: VaultBox, cwd: Path, **env: str) -> str:
    proc = run_hook("SessionStart", payload("SessionStart", "s-new", None, cwd, source="startup"),
                    hook_env(box, **env), cwd)
    assert proc.returncode == 0, proc.stderr
    return context_of(proc.stdout, "SessionStart")


def test_a_session_start_in_a_matching_project_injects_the_insight(
        box: VaultBox, tmp_path: Path) -> None:
    learning_id = approved(box, PAYMENTS)
    approved(box, GARDEN)
    context = start(box, project(tmp_path, "payments-service"))
    assert "## Scope" in context  # the brief is still there, first
    lines = insight_lines(context)
    assert len(lines) == 1 and "ledger lock" in lines[0] and learning_id in lines[0]
    assert context.index("## Scope") < context.index(HEADER)


def test_a_session_start_elsewhere_injects_no_insight(box: VaultBox, tmp_path: Path) -> None:
    approved(box, PAYMENTS)
    context = start(box, project(tmp_path, "garden-planner"))
    assert "## Scope" in context and HEADER not in context


def test_an_insight_about_an_entity_the_brief_names_is_injected_in_any_project(
        box: VaultBox, tmp_path: Path) -> None:
    approved(box, "Vantage Systems wants the renewal quote in euros, never dollars.")
    context = start(box, project(tmp_path, "garden-planner"))
    assert "[[vantage-systems]]" in context  # today's agent log names the company
    assert [("renewal quote" in line) for line in insight_lines(context)] == [True]


def test_an_insight_rejected_in_the_note_is_not_injected_at_the_next_start(
        box: VaultBox, tmp_path: Path) -> None:
    approved(box, PAYMENTS)
    note = next((box.vault / "resources/concepts/insights").iterdir())
    note.write_text(note.read_text("utf-8").replace("status: approved", "status: rejected"),
                    encoding="utf-8")
    assert HEADER not in start(box, project(tmp_path, "payments-service"))


def test_a_pending_learning_is_never_injected(box: VaultBox, tmp_path: Path) -> None:
    store_learning(box.ctx(), PAYMENTS)
    assert HEADER not in start(box, project(tmp_path, "payments-service"))


def _twenty(box: VaultBox, long: bool, count: int = 20) -> None:
    subjects = ["refund", "ledger", "invoice", "payout", "webhook", "settlement", "dispute",
                "currency", "tax", "receipt", "chargeback", "subscription", "coupon",
                "statement", "audit", "reconcile", "merchant", "wallet", "escrow", "fraud"]
    tail = (" Check the dashboards, the retry queue, the dead letter topic, the alert "
            "routing, the runbook page and the on-call handover notes when it fires, and "
            "write down what was done in the incident channel." * 2) if long else ""
    ctx = box.ctx()
    for i, subject in enumerate(subjects[:count]):
        text = f"payments-service {subject} job number {i}: keep {subject}s idempotent{tail}"
        stored = store_learning(ctx, text, agent_id=f"agent-{i % 3}")
        assert stored.action == "stored", (text, stored.message)
        assert approve(ctx, stored.data.learning.id).ok


@pytest.mark.parametrize("long", [False, True], ids=["short", "long"])
def test_twenty_approved_insights_give_at_most_5_within_500_tokens(
        box: VaultBox, tmp_path: Path, long: bool) -> None:
    _twenty(box, long)
    context = start(box, project(tmp_path, "payments-service"))
    lines = insight_lines(context)
    block = context[context.index(HEADER):]
    assert 1 <= len(lines) <= MAX_INSIGHTS
    assert estimate_tokens(block) <= MAX_TOKENS
    if not long:
        assert len(lines) == MAX_INSIGHTS  # the count binds
    else:
        assert len(lines) < MAX_INSIGHTS  # the tokens bind
    result = select_insights(box.ctx(), cwd=str(project(tmp_path, "payments-service")))
    assert result.text == block.rstrip() and result.tokens <= MAX_TOKENS
    assert len(result.insights) == len(lines)


def test_insights_are_ranked_by_recall_for_the_prompt_and_entities(box: VaultBox) -> None:
    _twenty(box, long=False)
    result = select_insights(box.ctx(), project="payments-service",
                             prompt="why does the chargeback job fail?")
    assert "chargeback" in result.insights[0].text
    scores = [i.score for i in result.insights]
    assert scores == sorted(scores, reverse=True)
    by_entity = select_insights(box.ctx(), entities=("Escrow",))
    assert [("escrow" in i.text) for i in by_entity.insights] == [True]


def test_a_situation_that_names_nothing_gets_nothing(box: VaultBox) -> None:
    approved(box, PAYMENTS)
    assert select_insights(box.ctx()).insights == ()


# --- the hook's side: fail-safe, within the output limit ---------------------------------


class _Boom:
    @staticmethod
    @hookimpl
    def register_session_contexts(register: Any) -> None:
        def boom(ctx: Any, /, **situation: Any) -> list[str]:
            raise RuntimeError("provider exploded")

        def flood(ctx: Any, /, **situation: Any) -> list[str]:
            return ["x" * 50_000, 7, ""]  # type: ignore[list-item]

        register("aaa-boom", boom)
        register("aab-flood", flood)


def _session_start(box: VaultBox, cwd: Path, extra: list[tuple[str, object]]) -> str:
    from echo_core.context import create_context
    from echo_core.plugins import create_host
    from plugins.hooks_claude.handlers import session_start

    env = hook_env(box)
    host = create_host(env=env, extra=extra)
    ctx = create_context(vault=str(box.vault), state_dir=str(box.state), env=env, host=host)
    out = session_start({"source": "startup", "cwd": str(cwd), "session_id": "s"}, lambda: ctx)
    assert out is not None
    return str(out["hookSpecificOutput"]["additionalContext"])


def test_a_failing_or_flooding_provider_never_costs_the_brief_nor_the_insights(
        box: VaultBox, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    approved(box, PAYMENTS)
    context = _session_start(box, project(tmp_path, "payments-service"), [("boom", _Boom)])
    assert "## Scope" in context and "ledger lock" in context
    assert "x" * 100 not in context
    assert "provider exploded" in capsys.readouterr().err
    assert len(json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart",
                                                  "additionalContext": context}})) < 10_000


@pytest.mark.parametrize("load_budget", ["8000", "9800"])
def test_the_insights_come_whole_after_a_long_brief_or_not_at_all(
        box: VaultBox, tmp_path: Path, load_budget: str) -> None:
    """A long brief (every section filled to its share) and the insights after it within
    the hook's 10,000 characters: the block comes whole, or not at all (its header never
    alone). Which of the two a budget gives depends on how long the capped brief is; the
    cut itself is pinned by ``test_pack_cuts_the_first_insight_that_does_not_fit...``."""
    approved(box, PAYMENTS)
    prefs = box.vault / "_agent/memory/semantic/operator-preferences.md"
    facts = "\n".join(f"- Preference {i}: long enough to matter {'y' * 60}" for i in range(200))
    prefs.write_text(prefs.read_text("utf-8").replace(
        "## Fact / Pattern", f"## Fact / Pattern\n\n{facts}", 1), encoding="utf-8")
    for n in range(4):  # each section of the brief is capped to its share: fill several
        note = box.vault / f"resources/concepts/pinned-{n}.md"
        note.write_text(f"---\ntype: concept\nstatus: active\nalways_load: true\n---\n"
                        f"# Pinned {n}\n\n" + f"A rule worth keeping in view {'z' * 50}.\n" * 40,
                        encoding="utf-8")
    for n in range(12):
        box.capture(f"Observation topic {n}", kind="semantic",
                    body=f"Observed pattern {n}: {'w' * 150}")
    set_scope(box.ctx(), "\n".join(f"Working on part {i} {'v' * 70}" for i in range(22)))
    cwd = project(tmp_path, "payments-service")
    proc = run_hook("SessionStart", payload("SessionStart", "s", None, cwd, source="startup"),
                    hook_env(box, ECHO_LOAD_BUDGET=load_budget), cwd)
    assert proc.returncode == 0 and len(proc.stdout) <= 10_000
    context = context_of(proc.stdout, "SessionStart")
    assert len(context) > 7000  # the brief is long
    if HEADER in context:
        assert context.endswith(insight_lines(context)[0]) and "ledger lock" in context


# --- other surfaces -----------------------------------------------------------------------


def test_the_cli_shows_the_block_for_the_current_folder(
        box: VaultBox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from tests.test_habitat_learn_store import cli

    approved(box, PAYMENTS)
    monkeypatch.chdir(project(tmp_path, "payments-service"))
    done = cli(box, monkeypatch, capsys, "habitat", "insights")
    assert done.code == 0 and "ledger lock" in done.out and "'payments-service'" in done.out


def test_over_mcp_an_agent_stores_a_learning_and_gets_the_insights(box: VaultBox) -> None:
    from tests.mcp_kit import call, make_server, with_client

    server = make_server(box)
    try:
        async def body(client: Any) -> tuple[Any, Any, Any]:
            stored = await call(client, "echo_store_learning", content=PAYMENTS,
                                type="finding", tags=["payments"], agent_id="codex-1",
                                session_id="run-7", rationale="a double refund")
            again = await call(client, "echo_store_learning", content=PAYMENTS.lower(),
                               agent_id="codex-2")
            return stored, again, None

        stored, again, _ = with_client(server, body)
        assert not stored[0] and stored[1]["action"] == "stored"
        assert again[1]["learning"]["recurrence"] == 2
        assert approve(box.ctx(), stored[1]["learning"]["id"]).ok

        async def ask(client: Any) -> Any:
            return await call(client, "echo_habitat_insights", project="payments-service",
                              prompt="refunds")

        is_error, data, text = with_client(server, ask)
        assert not is_error and len(data["insights"]) == 1 and "ledger lock" in text
        assert data["tokens"] <= MAX_TOKENS
    finally:
        server.runner.close()


def test_approve_and_reject_are_not_offered_to_models() -> None:
    from plugins.habitat.learn_verbs import APPROVE, INSIGHTS, LEARN, LEARNINGS, REJECT

    assert APPROVE.mcp is None and REJECT.mcp is None and LEARNINGS.mcp is None
    assert (LEARN.tool_name, INSIGHTS.tool_name) == ("echo_store_learning",
                                                     "echo_habitat_insights")
    for op in (LEARN, INSIGHTS):
        sentences = re.split(r"(?<=[.!?])\s+", op.tool_description.strip())
        assert len(sentences) <= 3 and "Returns" in op.tool_description


def test_every_learn_reference_matches_its_declaration() -> None:
    from plugins.habitat.refs_learn import LEARN_REFS

    assert [ref.mismatch() for ref in LEARN_REFS] == [None] * len(LEARN_REFS)
    assert {ref.command for ref in LEARN_REFS} == {
        ("habitat", w) for w in ("learn", "learnings", "approve", "reject", "insights")}


# --- the contract of register_session_contexts --------------------------------------------


class TestHabitatSessionContext(SessionContextContract):
    @pytest.fixture
    def plugin(self) -> ModuleType:
        return plugins.habitat

    @pytest.fixture
    def session_context(self, tmp_path: Path) -> Any:
        box = seeded_vault(tmp_path / "contract")
        _twenty(box, long=True, count=3)
        return box.ctx()

    @pytest.fixture
    def situation(self) -> dict[str, Any]:
        return {"project": "payments-service", "prompt": "refund retries"}


class TestHabitatPlugin(PluginContract):
    @pytest.fixture
    def plugin(self) -> ModuleType:
        return plugins.habitat

    @pytest.fixture
    def plugin_name(self) -> str:
        return "habitat"


def test_the_provider_is_registered_by_the_installed_plugin() -> None:
    from echo_core.plugins import create_host

    host = create_host(env={}, strict=True)
    assert "habitat-insights" in host.collect("register_session_contexts")


def test_pack_cuts_the_first_insight_that_does_not_fit_and_stops_there() -> None:
    from plugins.habitat.insight_context import MIN_PIECE_TOKENS, pack

    long = " ".join(["idempotent"] * 400)
    kept, text, tokens = pack([("a1", "short one", 1, 3.0, "p/a.md"),
                               ("b2", long, 2, 2.0, "p/b.md"),
                               ("c3", "never reached", 1, 1.0, "p/c.md")])
    assert [k.id for k in kept] == ["a1", "b2"] and kept[1].cut and text.endswith("…")
    assert tokens == estimate_tokens(text) <= MAX_TOKENS
    assert MAX_TOKENS - tokens < MIN_PIECE_TOKENS + 5
    small, text, _ = pack([("a1", "short one", 1, 3.0, "p/a.md"),
                           ("b2", "another short one", 1, 2.0, "p/b.md")], budget_chars=185)
    assert len(text) <= 185 and [k.id for k in small] == ["a1", "b2"] and small[1].cut
    assert pack([], None) == ((), "", 0)
