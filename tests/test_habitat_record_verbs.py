"""``habitat record | fork | fold | ask`` on the CLI and ``echo_habitat_record``,
``echo_habitat_fork``, ``echo_habitat_fold``, ``echo_ask_habitat`` over MCP: what each
writes (durably, redacted, never editing a record), what it refuses, and that every
reference matches its declaration."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

import plugins.habitat
from echo_core import EchoError, Operation, OperationRef
from echo_core.testing import OperationsContract
from plugins.habitat.loom_ask import ask_habitat
from plugins.habitat.loom_fold import fold_session
from plugins.habitat.refs_record import RECORD_REFS
from tests.capture_kit import VaultBox
from tests.cli_inproc import run_main
from tests.habitat_record_kit import box_at, loom_json, loom_of, raw_lines
from tests.mcp_kit import call, make_server, with_client
from tests.secret_kit import SECRETS


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return box_at(tmp_path / "box")


class TestHabitatOperations(OperationsContract):
    """The habitat registers references (``OperationRef``): checked as they load."""

    @staticmethod
    def collect_operations(plugin: object) -> dict[str, Operation[Any]]:
        found = OperationsContract.collect_operations(plugin)
        return {name: op.load() if isinstance(op, OperationRef) else op
                for name, op in found.items()}

    @pytest.fixture
    def plugin(self) -> object:
        return plugins.habitat

    @pytest.fixture
    def examples(self) -> dict[str, dict[str, Any]]:
        return {"habitat-record": {"session_id": "s1", "text": "x", "kind": "tool",
                                   "is_error": True, "duration_ms": 5},
                "habitat-ask": {"query": "deploy", "agent_id": "a", "since": "7d"},
                "habitat-fold": {"session_id": "s1", "from_id": "r1"},
                "habitat-fork": {"record_id": "r1", "text": "why"}}


def test_every_reference_matches_its_declaration() -> None:
    assert [ref.mismatch() for ref in RECORD_REFS] == [None] * len(RECORD_REFS)
    from plugins.habitat.operations_index import GROUP_HELP

    assert {ref.group_help for ref in RECORD_REFS} == {GROUP_HELP}
    for ref in RECORD_REFS:
        assert ref.load().problems() == []


def _cli(box: VaultBox, args: list[str], capsys: pytest.CaptureFixture[str],
         monkeypatch: pytest.MonkeyPatch, stdin: bytes = b"") -> Any:
    for key, value in box.env(ECHO_NOW="2026-03-01T09:30:00", ECHO_VAULT=str(box.vault),
                              ECHO_STATE_DIR=str(box.state)).items():
        monkeypatch.setenv(key, value)
    return run_main(args, capsys, monkeypatch, stdin)


# --- record ---------------------------------------------------------------------------


def test_cli_record_writes_one_record_durably(box: VaultBox, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    run = _cli(box, ["habitat", "record", "--session", "s1", "--agent", "ci", "--kind", "tool",
                     "--result", "exit 1", "--is-error", "--duration-ms", "42", "--tag",
                     "nightly,build", "make test", "--json"], capsys, monkeypatch)
    assert run.code == 0, run.err
    out = json.loads(run.out)
    (record,) = loom_json(loom_of(box.ctx()))
    assert out["ids"] == [record["id"]] and out["action"] == "recorded"
    assert (record["kind"], record["text"], record["result"], record["is_error"],
            record["duration_ms"], record["agent_id"], record["session_id"]) == (
        "tool", "make test", "exit 1", True, 42, "ci", "s1")
    assert record["tags"] == ["nightly", "build"]


def test_cli_record_reads_a_batch_from_stdin(box: VaultBox, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    batch = [{"kind": "prompt", "text": "deploy it"},
             {"kind": "tool", "text": "Bash {}", "parent_id": "#0", "is_error": True},
             {"kind": "reply", "text": "failed", "parent_id": "#0"}]
    lines = "\n".join(json.dumps(b) for b in batch).encode()
    run = _cli(box, ["habitat", "record", "--session", "s2", "--file", "-"], capsys,
               monkeypatch, stdin=lines)
    assert run.code == 0, run.err
    prompt, tool, reply = loom_json(loom_of(box.ctx()))
    assert tool["parent_id"] == reply["parent_id"] == prompt["id"]
    assert prompt["id"] < tool["id"] < reply["id"]  # ids sort in batch order
    assert prompt["agent_id"] == "unknown-agent"


@pytest.mark.parametrize(("args", "message"), [
    (["--session", "s", "--kind", "nope", "x"], "kind: must be one of"),
    (["x"], "session"),
    (["--session", "s", "--file", "-", "text too"], "not both"),
])
def test_cli_record_refuses_bad_input(box: VaultBox, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch, args: list[str],
                                      message: str) -> None:
    run = _cli(box, ["habitat", "record", *args], capsys, monkeypatch,
               stdin=b'[{"text": "a"}]')
    assert run.code == 2 and message in run.err
    assert raw_lines(loom_of(box.ctx())) == []


async def _mcp_records(client: Client) -> dict[str, Any]:
    single = await call(client, "echo_habitat_record", session_id="codex-1", agent_id="codex",
                        kind="prompt", text="refactor the parser")
    assert not single[0], single
    parent = single[1]["ids"][0]
    batch = await call(client, "echo_habitat_record", session_id="codex-1", agent_id="codex",
                       records=[{"kind": "tool", "text": "pytest", "parent_id": parent,
                                 "result": "2 failed", "is_error": True, "duration_ms": 900},
                                {"kind": "tool", "text": "pytest -x", "parent_id": "#0"},
                                {"kind": "note", "text": "flaky?", "refs": ["#0"]}])
    assert not batch[0], batch
    errors = {
        "both": await call(client, "echo_habitat_record", session_id="x", text="a",
                           records=[{"text": "b"}]),
        "forward": await call(client, "echo_habitat_record", session_id="x",
                              records=[{"text": "a", "parent_id": "#0"}]),
        "kind": await call(client, "echo_habitat_record", session_id="x", kind="bogus"),
        "extra": await call(client, "echo_habitat_record", session_id="x", colour="red"),
        "empty": await call(client, "echo_habitat_record", session_id=""),
    }
    return {"single": single, "batch": batch, "errors": errors}


def test_mcp_record_one_or_a_batch_and_refuse_the_bad(box: VaultBox) -> None:
    server = make_server(box)
    try:
        out = with_client(server, _mcp_records)
    finally:
        server.runner.close()
    records = loom_json(loom_of(box.ctx()))
    assert [r["text"] for r in records] == ["refactor the parser", "pytest", "pytest -x",
                                            "flaky?"]
    prompt, first, second, note = records
    assert first["parent_id"] == prompt["id"] and second["parent_id"] == first["id"]
    assert note["refs"] == ["#0"]  # refs are ids as given; only parent_id knows #N
    assert (first["is_error"], first["duration_ms"]) == (True, 900)
    assert out["batch"][1]["ids"] == [r["id"] for r in records[1:]]
    for name, (is_error, data, _) in out["errors"].items():
        assert is_error and data["error"]["code"] == "usage", name


def test_secrets_are_redacted_before_they_are_recorded(box: VaultBox) -> None:
    row = SECRETS[0]
    server = make_server(box)
    try:
        with_client(server, lambda c: call(c, "echo_habitat_record", session_id="s",
                                           text=row.text, result=f"<private>x</private>{row.text}",
                                           tags=[row.secret]))
    finally:
        server.runner.close()
    data = b"".join(raw_lines(loom_of(box.ctx())))
    assert row.secret.encode() not in data and row.marker.encode() in data


# --- fork and fold --------------------------------------------------------------------


def _session(box: VaultBox, session: str = "s1") -> list[str]:
    from plugins.habitat.record_verbs import RecordParams, run_record

    items = ({"kind": "session", "text": "start"},
             {"kind": "prompt", "text": "make the build green", "parent_id": "#0"},
             {"kind": "tool", "text": "Bash {\"command\":\"make\"}", "parent_id": "#1",
              "is_error": True, "result": "exit 2"},
             {"kind": "tool", "text": "Read {\"file_path\":\"Makefile\"}", "parent_id": "#1"},
             {"kind": "tool", "text": "Bash {\"command\":\"make\"}", "parent_id": "#1"},
             {"kind": "reply", "text": "green now", "parent_id": "#1"})
    env = run_record(box.ctx(), RecordParams(session_id=session, agent_id="claude",
                                             records=items))
    return list(env.data.ids)


def test_fold_summarises_a_session_and_leaves_every_original(box: VaultBox) -> None:
    ids = _session(box)
    _session(box, "other")
    loom = loom_of(box.ctx())
    before = b"".join(raw_lines(loom))
    env = fold_session(box.ctx(), "s1")
    after = b"".join(raw_lines(loom))
    assert after.startswith(before) and after.count(b"\n") == before.count(b"\n") + 1
    fold = loom_json(loom)[-1]
    assert fold["kind"] == "fold" and fold["refs"] == ids and fold["parent_id"] == ids[0]
    summary = json.loads(fold["result"])
    assert summary["kinds"] == {"prompt": 1, "reply": 1, "session": 1, "tool": 3}
    assert (summary["errors"], summary["error_ids"]) == (1, [ids[2]])
    assert summary["tools"] == {"Bash": 2, "Read": 1}
    assert summary["first_prompt"] == "make the build green"
    assert "6 records" in fold["text"] and "Errors: 1." in fold["text"]
    assert env.data.refs == tuple(ids)
    again = fold_session(box.ctx(), "s1")  # the same span again: named, not folded twice
    assert again.data.refs == tuple(ids) and again.data.id == env.data.id
    assert again.action == "unchanged" and b"".join(raw_lines(loom)) == after


def test_fold_a_span_and_refuse_a_bad_one(box: VaultBox) -> None:
    ids = _session(box)
    env = fold_session(box.ctx(), "s1", from_id=ids[2], to_id=ids[4])
    assert env.data.refs == tuple(ids[2:5]) and env.data.summary.kinds == {"tool": 3}
    for frm, to, message in ((ids[4], ids[2], "before"), ("nope", "", "not a record")):
        with pytest.raises(EchoError, match=message):
            fold_session(box.ctx(), "s1", from_id=frm, to_id=to)
    with pytest.raises(EchoError, match="no record of session"):
        fold_session(box.ctx(), "missing")


def test_cli_fork_branches_from_a_record(box: VaultBox, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    ids = _session(box)
    run = _cli(box, ["habitat", "fork", ids[3], "--note", "try ninja instead", "--json"],
               capsys, monkeypatch)
    assert run.code == 0, run.err
    out = json.loads(run.out)
    fork = loom_json(loom_of(box.ctx()))[-1]
    assert (fork["id"], fork["parent_id"], fork["session_id"], fork["kind"], fork["tags"]) == (
        out["id"], ids[3], "s1", "event", ["fork"])
    assert fork["text"] == "fork try ninja instead"
    missing = _cli(box, ["habitat", "fork", "20260301T000000000000-deadbeef"], capsys,
                   monkeypatch)
    assert missing.code == 44 and "habitat ask" in missing.err


# --- ask ------------------------------------------------------------------------------


def test_ask_finds_records_with_filters(box: VaultBox) -> None:
    _session(box, "s1")
    from plugins.habitat.record_verbs import RecordParams, run_record

    run_record(box.ctx(), RecordParams(session_id="s9", agent_id="codex", kind="note",
                                       text="the build broke on the release branch"))
    found = ask_habitat(box.ctx(), "build", 10)
    assert {h.text for h in found.data.records} == {"make the build green",
                                                    "the build broke on the release branch"}
    only = ask_habitat(box.ctx(), "build", 10, agent_id="codex")
    assert [h.agent_id for h in only.data.records] == ["codex"]
    tools = ask_habitat(box.ctx(), "make", 10, kind="tool")
    assert {h.kind for h in tools.data.records} == {"tool"} and tools.data.learnings == ()
    assert ask_habitat(box.ctx(), "build", 10, until="2026-02-28").data.records == ()
    assert len(ask_habitat(box.ctx(), "build", 10, since="2026-03-01").data.records) == 2
    with pytest.raises(EchoError, match="since/until"):
        ask_habitat(box.ctx(), "build", 10, since="last tuesday")


def test_ask_merges_the_learnings_of_the_learn_part(box: VaultBox,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    _session(box)
    seen: dict[str, Any] = {}

    def fake_hits(ctx: Any, query: str, limit: int, *, agent_id: str | None = None,
                  since: str | None = None) -> list[dict[str, Any]]:
        seen.update(query=query, limit=limit, agent_id=agent_id, since=since)
        return [{"id": "L1", "content": "run make twice", "type": "learning",
                 "state": "approved", "recurrence": 3, "score": 1.5,
                 "updated": "2026-03-01T10:00:00"}]

    fake = types.ModuleType("plugins.habitat.learning_search")
    fake.learning_hits = fake_hits  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "plugins.habitat.learning_search", fake)
    env = ask_habitat(box.ctx(), "make", 5, agent_id="claude", since="2026-03-01")
    assert [item["id"] for item in env.data.learnings] == ["L1"]
    assert env.data.learnings_available and env.data.records
    assert seen == {"query": "make", "limit": 5, "agent_id": "claude",
                    "since": "2026-03-01T00:00:00.000000"}
    early = ask_habitat(box.ctx(), "make", 5, until="2026-03-01T09:00")
    assert early.data.learnings == ()


def test_ask_without_a_learnings_store_says_so(box: VaultBox,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "plugins.habitat.learning_search", None)
    env = ask_habitat(box.ctx(), "anything", 5)
    assert not env.data.learnings_available and "no learnings store" in env.message


def test_mcp_ask_habitat_answers_with_the_declared_schema(box: VaultBox) -> None:
    _session(box)

    async def body(client: Client) -> Any:
        return await call(client, "echo_ask_habitat", query="make build", limit=5,
                          agent_id="claude", kind="tool")

    server = make_server(box)
    try:
        is_error, data, text = with_client(server, body)
    finally:
        server.runner.close()
    assert not is_error and text.startswith("2 records")  # "Makefile" is another word
    assert all(hit["kind"] == "tool" for hit in data["records"])


def test_ask_finds_what_the_learn_part_stored(box: VaultBox) -> None:
    from plugins.habitat.learnings_ops import store_learning

    _session(box)
    store_learning(box.ctx(), "Run make twice when the build cache is cold", tags=("build",),
                   agent_id="claude", session_id="s1", rationale="seen in s1")
    env = ask_habitat(box.ctx(), "make build cache", 5)
    assert env.data.learnings_available
    assert [item["content"] for item in env.data.learnings] == [
        "Run make twice when the build cache is cold"]
    assert env.data.records and "1 learning" in env.message
