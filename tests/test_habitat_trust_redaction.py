"""What the operator types into the habitat is redacted before it is stored (SPEC §2.1:
"before any write"): flag notes, pattern notes, rejection reasons, learning tags, agent
and session names, record refs and parents — in the loom, the registry, the learnings
store and the vault's notes. Pattern signatures are redacted before they are normalised
(lower case, digits masked), so the digest and ``habitat patterns`` never show a masked
but readable key."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from plugins.habitat.loom import Loom
from plugins.habitat.paths import loom_dir
from plugins.habitat.record import Record
from tests.capture_kit import VaultBox
from tests.cli_inproc import CliRun, run_main

# Fake keys, built from pieces so no scanner takes this file for a leak.
ANTHROPIC = "sk-" + "ant-" + "api03-" + "Zq" * 15
GITHUB = "gh" + "p_" + "Ab1" * 12
AWS = "AK" + "IA" + "QX7T" * 4
SECRETS = (ANTHROPIC, GITHUB, AWS)


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path / "box").init()


def cli(box: VaultBox, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        *args: str, stdin: bytes = b"") -> CliRun:
    """``echo-memory <args> --vault V --state-dir S`` in this process, time pinned."""
    for key in [k for k in os.environ if k.startswith("ECHO_") and k != "ECHO_PLUGIN_DISTS"]:
        monkeypatch.delenv(key)
    for key, value in box.env(ECHO_NOW="2026-03-01T09:30:00", ECHO_VAULT=str(box.vault),
                              ECHO_STATE_DIR=str(box.state)).items():
        monkeypatch.setenv(key, value)
    done = run_main(list(args), capsys, monkeypatch, stdin=stdin)
    assert done.code == 0, (args, done.err)
    return done


def leaks(box: VaultBox, *texts: str) -> list[str]:
    """Files under the box (vault and state: loom, sqlite and its WAL, notes) and texts
    that hold any secret, in any case, or its body with digits masked as the
    signatures mask them."""
    shapes = [s.lower().encode() for s in SECRETS]
    shapes += [s.lower().replace("0", "#").replace("3", "#").encode() for s in SECRETS]
    shapes += [b"zq" * 8, b"ab#ab#ab#ab#"]
    found = [str(p) for p in box.root.rglob("*") if p.is_file()
             and any(s in p.read_bytes().lower() for s in shapes)]
    return found + [t for t in texts if any(s.decode() in t.lower() for s in shapes)]


def only(box: VaultBox, monkeypatch: pytest.MonkeyPatch,
         capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(cli(box, monkeypatch, capsys, *args, "--json").out)
    return data


def test_record_names_are_redacted(box: VaultBox, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    done = cli(box, monkeypatch, capsys, "habitat", "record", "--session", f"s {ANTHROPIC}",
               "--agent", f"ci {GITHUB}", "--ref", AWS, "--parent", f"p {ANTHROPIC}",
               "--tag", GITHUB, "hello")
    batch = json.dumps([{"text": "a", "refs": [GITHUB], "parent_id": AWS}]).encode()
    more = cli(box, monkeypatch, capsys, "habitat", "record", "--session", "s2", "--file",
               "-", stdin=batch)
    fork = cli(box, monkeypatch, capsys, "habitat", "fork", more.out.split()[-1],
               "--session", f"f {GITHUB}", "--agent", ANTHROPIC)
    assert leaks(box, done.out, done.err, more.out, fork.out) == []
    record = json.loads(next(loom_dir(box.ctx()).glob("*.jsonl")).read_text().splitlines()[0])
    assert (record["session_id"], record["agent_id"], record["refs"], record["parent_id"]) == (
        "s [REDACTED:anthropic-key]", "ci [REDACTED:github-token]",
        ["[REDACTED:aws-access-key-id]"], "p [REDACTED:anthropic-key]")


def _seed_turn(box: VaultBox, monkeypatch: pytest.MonkeyPatch,
               capsys: pytest.CaptureFixture[str]) -> None:
    cli(box, monkeypatch, capsys, "habitat", "record", "--session", "sess-1", "--kind",
        "prompt", "deploy it")


def test_flag_and_pattern_notes_are_redacted_everywhere(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    _seed_turn(box, monkeypatch, capsys)
    flag = only(box, monkeypatch, capsys, "habitat", "flag", "sess-1", "1",
                f"used key {ANTHROPIC} and {AWS}")
    pid = flag["pattern_id"]
    moved = cli(box, monkeypatch, capsys, "habitat", "pattern", pid, "--status", "dismissed",
                "--note", f"not ours {GITHUB}")
    shown = cli(box, monkeypatch, capsys, "habitat", "pattern", pid)
    listed = cli(box, monkeypatch, capsys, "habitat", "patterns")
    digest = cli(box, monkeypatch, capsys, "habitat", "digest")
    assert leaks(box, json.dumps(flag), moved.out, shown.out, listed.out, digest.out) == []
    assert "[REDACTED:github-token]" in shown.out
    assert "[redacted:anthropic-key]" in listed.out  # normalised after redaction
    # The same note again doubles nothing (the stored note is the redacted one).
    again = only(box, monkeypatch, capsys, "habitat", "flag", "sess-1", "1",
                 f"used key {ANTHROPIC} and {AWS}")
    assert again["action"] == "unchanged" and again["pattern_id"] == pid


def test_a_proposed_fix_and_its_outcome_are_redacted(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    _seed_turn(box, monkeypatch, capsys)
    pid = only(box, monkeypatch, capsys, "habitat", "flag", "sess-1", "1", "bad")["pattern_id"]
    for status, note in (("proposed_fix", f"rotate {GITHUB}"), ("fixed", f"done {AWS}")):
        cli(box, monkeypatch, capsys, "habitat", "pattern", pid, "--status", status, "--note",
            note)
    shown = only(box, monkeypatch, capsys, "habitat", "pattern", pid)
    assert shown["pattern"]["fix"] == "rotate [REDACTED:github-token]"
    assert shown["pattern"]["fix_outcome"] == "done [REDACTED:aws-access-key-id]"
    assert leaks(box, json.dumps(shown)) == []


def test_learning_names_tags_and_rejection_reason_are_redacted(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    stored = only(box, monkeypatch, capsys, "habitat", "learn", "Pin numpy below 2",
                  "--tags", f"numpy,{GITHUB},{AWS}", "--tags", ANTHROPIC, "--agent-id",
                  f"codex {ANTHROPIC}", "--session-id", f"run {GITHUB}")
    learning = stored["learning"]
    assert learning["tags"] == ["numpy", "redacted-github-token", "redacted-aws-access-key-id",
                                "redacted-anthropic-key"]
    assert set(stored["redacted"]) == {"anthropic-key", "github-token", "aws-access-key-id"}
    approved = cli(box, monkeypatch, capsys, "habitat", "approve", learning["id"])
    rejected = cli(box, monkeypatch, capsys, "habitat", "reject", learning["id"],
                   f"leaked {ANTHROPIC}")
    listed = cli(box, monkeypatch, capsys, "habitat", "learnings")
    assert "rejected: leaked [REDACTED:anthropic-key]" in listed.out
    note = next((box.vault / "resources/concepts/insights").glob("pin-*.md")).read_text()
    assert '"redacted-github-token"' in note, note
    assert "reason: \"leaked [REDACTED:anthropic-key]\"" in note, note
    assert leaks(box, json.dumps(stored), approved.out, rejected.out, listed.out) == []


def _raw_day(box: VaultBox, records: list[Record]) -> None:
    """Records written by other means (an old loom, another tool), not redacted."""
    Loom(loom_dir(box.ctx())).append(records)


def test_signatures_are_redacted_before_they_are_normalised(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import datetime as _dt

    at = _dt.datetime(2026, 3, 1, 9, 0, 0)
    prompt = Record.new(ts=at, kind="prompt", agent_id="a", session_id="raw", text="go")
    errors = [Record.new(ts=at + _dt.timedelta(seconds=n), kind="tool", agent_id="a",
                         session_id="raw", text=f"Bash make step{n}", parent_id=prompt.id,
                         result=f"403 for key {AWS}", is_error=True) for n in (1, 2, 3)]
    other = Record.new(ts=at, kind="prompt", agent_id="b", session_id="raw-2", text="go")
    flag = Record.new(ts=at + _dt.timedelta(seconds=4), kind="flag", agent_id="operator",
                      session_id="raw-2", text=f"pasted {ANTHROPIC}", parent_id=other.id,
                      refs=(other.id,))
    _raw_day(box, [prompt, *errors, other, flag])
    listed = cli(box, monkeypatch, capsys, "habitat", "patterns", "--scan")
    titles = [p["title"] for p in only(box, monkeypatch, capsys, "habitat", "patterns")[
        "patterns"]]
    assert sorted(titles) == ["error streak: Bash — # for key [redacted:aws-access-key-id]",
                              "flagged: pasted [redacted:anthropic-key]"]
    assert leaks(box, listed.out) == [
        str(p) for p in loom_dir(box.ctx()).glob("*.jsonl")]  # only the raw loom itself
