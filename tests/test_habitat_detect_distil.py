"""What distil calls a failure (``distil_failures``): the definitions of a streak, a
stuck loop (near-identical, no progress), an abandoned task and frustration, each with
the records it points at; signatures that cluster the same failure across sessions."""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Sequence

import pytest

from plugins.habitat.distil_failures import distil
from plugins.habitat.distil_frustration import frustration_signal
from plugins.habitat.distil_model import Failure, normalise, tool_call
from plugins.habitat.record import MAX_TEXT, Record

T0 = _dt.datetime(2026, 3, 1, 9, 0)
LATER = (T0 + _dt.timedelta(hours=5) - _dt.datetime(1970, 1, 1)).total_seconds()


class Session:
    """Records of one session, one second apart."""

    def __init__(self, sid: str = "s-1", agent: str = "agent-a") -> None:
        self.sid, self.agent, self.records = sid, agent, list[Record]()

    def add(self, kind: str, text: str = "", result: str = "", error: bool = False) -> Record:
        record = Record.new(ts=T0 + _dt.timedelta(seconds=len(self.records)), kind=kind,
                            agent_id=self.agent, session_id=self.sid, text=text,
                            result=result, is_error=error)
        self.records.append(record)
        return record

    def call(self, command: str, result: str = "ok", error: bool = False) -> Record:
        return self.add("tool", f"Bash {json.dumps({'command': command})}", result, error)


def kinds(found: Sequence[Failure]) -> list[str]:
    return [f.kind for f in found]


def test_three_failed_calls_in_a_row_are_a_streak_pointing_at_them() -> None:
    s = Session()
    s.add("prompt", "build it")
    bad = [s.call("make", "make: *** No rule to make target 'all'", True),
           s.call("make build", "make: *** No rule to make target 'build'", True)]
    s.add("prompt", "try again with the other target")  # a prompt does not end a streak
    bad.append(s.call("make dist", "make: *** No rule to make target 'dist'", True))
    s.call("ls")
    s.add("reply", "there is no Makefile target")
    found = distil(s.records, now=LATER)
    assert kinds(found) == ["error_streak"]
    assert found[0].record_ids == tuple(r.id for r in bad)
    assert found[0].signature == "error_streak|Bash|make: *** no rule to make target <s>"
    assert found[0].severity == "medium" and found[0].tool == "Bash"


def test_a_successful_call_breaks_a_streak() -> None:
    s = Session()
    s.add("prompt", "go")
    for command in ("a", "b", "ok", "c", "d"):
        s.call(command, "fine" if command == "ok" else "boom", command != "ok")
    s.add("reply", "done")
    assert distil(s.records, now=LATER) == []


def test_six_failures_in_a_row_are_severe() -> None:
    s = Session()
    s.add("prompt", "go")
    for n in range(6):
        s.call(f"step{n}", f"error {n}", True)
    s.add("reply", "gave up")
    assert [f.severity for f in distil(s.records, now=LATER)] == ["high"]


@pytest.mark.parametrize(("commands", "results", "loop"), [
    (["sleep 5 && make status"] * 3, ["building (12s)", "building (19s)", "building (31s)"],
     True),
    (["sleep 5 && make status", "sleep 10 && make status", "SLEEP 15  && make status"],
     ["building"] * 3, True),
    (["pytest tests/test_1.py", "pytest tests/test_2.py", "pytest tests/test_3.py"],
     ["1 failed"] * 3, False),
    (["sed -n 1,20p a.py", "sed -n 21,40p a.py", "sed -n 41,60p a.py"],
     ["def a():", "def b():", "def c():"], False),
    (["git status"] * 2, ["clean"] * 2, False),
])
def test_a_stuck_loop_is_near_identical_calls_without_progress(
        commands: list[str], results: list[str], loop: bool) -> None:
    s = Session()
    s.add("prompt", "wait for it")
    calls = [s.call(c, r) for c, r in zip(commands, results, strict=True)]
    s.add("reply", "done")
    found = distil(s.records, now=LATER)
    assert kinds(found) == (["stuck_loop"] if loop else [])
    if loop:
        assert found[0].record_ids == tuple(r.id for r in calls)


def test_a_json_input_compares_by_its_values() -> None:
    s = Session()
    s.add("prompt", "check")
    ids = [s.add("tool", text, "same").id for text in (
        'Read {"file_path": "/a.py"}', 'Read {"file_path":"/a.py"}', 'Read {"file_path" : "/a.py"}')]
    s.add("reply", "ok")
    found = distil(s.records, now=LATER)
    assert kinds(found) == ["stuck_loop"] and found[0].record_ids == tuple(ids)
    assert found[0].signature == "stuck_loop|Read|<path>"


def test_a_prompt_between_identical_calls_ends_the_loop() -> None:
    s = Session()
    s.add("prompt", "status?")
    s.call("make status", "building")
    s.call("make status", "building")
    s.add("prompt", "and now?")
    s.call("make status", "building")
    s.add("reply", "still building")
    assert distil(s.records, now=LATER) == []


def test_identical_failing_calls_are_one_loop_not_also_a_streak() -> None:
    s = Session()
    s.add("prompt", "deploy")
    loop = [s.call("kubectl apply -f k8s/", "error: connection refused", True)
            for _ in range(3)]
    s.add("reply", "the cluster is down")
    found = distil(s.records, now=LATER)
    assert kinds(found) == ["stuck_loop"] and found[0].record_ids == tuple(r.id for r in loop)
    s.records.insert(-1, s.call("kubectl get nodes", "error: connection refused", True))
    assert sorted(kinds(distil(s.records, now=LATER))) == ["error_streak", "stuck_loop"]


def test_a_session_ended_without_a_reply_to_its_last_prompt_is_abandoned() -> None:
    s = Session()
    s.add("session", "start startup")
    s.add("prompt", "fix the build")
    s.add("reply", "fixed")
    last = s.add("prompt", "now deploy it")
    work = s.call("make deploy", "deploying...")
    end = s.add("session", "end prompt_input_exit")
    found = distil(s.records, now=LATER)
    assert kinds(found) == ["abandoned"]
    assert found[0].record_ids == (last.id, work.id, end.id)
    assert found[0].signature == "abandoned|no reply"


def test_a_session_still_going_is_not_abandoned_until_idle() -> None:
    s = Session()
    s.add("prompt", "long task")
    s.call("make all", "running")
    just_after = (T0 + _dt.timedelta(minutes=30) - _dt.datetime(1970, 1, 1)).total_seconds()
    assert distil(s.records, now=just_after) == []
    assert kinds(distil(s.records, now=just_after + 3600)) == []  # never replies: not judged
    s.add("reply", "done")
    s.add("prompt", "another")
    assert kinds(distil(s.records, now=LATER)) == ["abandoned"]


def test_an_agent_that_never_replies_is_judged_only_when_it_stopped_on_a_failure() -> None:
    s = Session(agent="batch-bot")
    s.add("prompt", "nightly job")
    s.call("backup", "done")
    s.add("session", "end")
    assert distil(s.records, now=LATER) == []
    s.records.insert(-1, s.call("upload", "403 Forbidden", True))
    found = distil(s.records, now=LATER)
    assert kinds(found) == ["abandoned"]
    assert found[0].signature == "abandoned|after errors|Bash|# forbidden"


def test_frustration_points_at_the_prompt_and_what_it_answers() -> None:
    s = Session()
    s.add("prompt", "rename the function")
    answered = s.add("reply", "renamed it in utils.py")
    complaint = s.add("prompt", "No, that's the wrong file")
    s.add("reply", "sorry")
    found = distil(s.records, now=LATER)
    assert kinds(found) == ["frustration"]
    assert found[0].record_ids == (complaint.id, answered.id)
    assert found[0].signature == "frustration|wrong" and found[0].severity == "low"


@pytest.mark.parametrize(("prompt", "signal"), [
    ("No, that's wrong", "wrong"), ("this is incorrect", "wrong"), ("stop!", "stop"),
    ("Stop it now", "stop"), ("stop changing the tests", "stop"), ("again?", "again"),
    ("same error again", "again"), ("that is not what I asked", "not-what-i-asked"),
    ("I told you to use uv", "already-said"), ("how many times", "already-said"),
    ("still not working", "still-broken"), ("undo that", "undo"), ("wtf", "swearing"),
    ("stop the server and restart it", None), ("no need to hurry", None),
    ("run it again later", None), ("please add tests", None),
    ("x" * 400 + " still failing", None),
])
def test_the_frustration_lexicon(prompt: str, signal: str | None) -> None:
    assert frustration_signal(prompt) == signal


def test_a_repeated_prompt_is_frustration_but_a_repeated_word_is_not() -> None:
    assert frustration_signal("Please run the tests!", "please run the tests") == "repeated-prompt"
    assert frustration_signal("continue", "continue") is None


def test_the_same_failure_in_two_sessions_has_one_signature() -> None:
    signatures = set()
    for sid, path in (("s-1", "/home/a/app/x.py"), ("s-2", "/srv/b/y.py")):
        s = Session(sid)
        s.add("prompt", "test")
        for n, mode in enumerate(("fast", "slow", "full")):
            s.call(f"python {path} --mode {mode}",
                   f"FileNotFoundError: [Errno 2] '{path}' line {n}", True)
        s.add("reply", "missing")
        found = distil(s.records, now=LATER)
        signatures |= {f.signature for f in found}
    assert signatures == {"error_streak|Bash|filenotfounderror: [errno #] <s> line #"}


def test_hostile_records_are_read_not_trusted() -> None:
    s = Session("s-'); DROP TABLE patterns;--")
    s.add("prompt", "\ud800 broken surrogate and \x00 nul")
    for _ in range(3):
        s.add("tool", "}{ not a tool name " + "z" * 20_000, "\u202e" + "e" * 20_000, True)
    s.add("reply", "ok")
    found = distil(s.records, now=LATER)
    assert kinds(found) == ["stuck_loop"]
    assert found[0].tool == "?" and len(found[0].signature) < 200
    assert all(len(r.text) <= MAX_TEXT for r in s.records)
    assert len(found[0].summary) <= 300


def test_tool_call_reads_the_recorders_text_and_claude_codes_payload() -> None:
    def rec(text: str) -> Record:
        return Record.new(ts=T0, kind="tool", agent_id="a", session_id="s", text=text)

    assert tool_call(rec('Bash {"command": "ls"}')) == tool_call(
        rec('{"tool_name": "Bash", "tool_input": {"command": "ls"}}')).__class__(
        "Bash", '{"command": "ls"}')
    assert tool_call(rec("mcp__echo__echo_recall(query)")).name == "mcp__echo__echo_recall"
    assert tool_call(rec("")).name == "?"
    assert normalise("Error at 0xdeadbeef12 in /tmp/a/b.py:12") == "error at <id> in <path>:#"
