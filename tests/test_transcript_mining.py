"""Transcript mining over the fixture sessions (issue 17 item 2): the table test.

Each fixture in ``tests/data/transcripts/`` is a realistic Claude Code session in the
real line shape. The tables below are exactly what mining must yield for each, in
order: a rule change shows up here as a diff. Columns: title, kind, category,
confidence, occurrences, sessions, excerpts.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from echo_core.ops.session_end import validate_bundle
from echo_core.ops.transcript_mining import (
    HIGH,
    LOW,
    MEDIUM,
    MinedProposal,
    merge_mined,
    mine_file,
    mine_transcript,
)
from echo_core.routing import load_manifest

DATA = Path(__file__).parent / "data" / "transcripts"

PREFS_1 = "3f6b2c1e-8d4a-4f0e-9b7a-2c5d8e1f0a11"
PREFS_2 = "8c2d4e6f-1a3b-4c5d-9e7f-5a6b7c8d9e22"
ERRFIX = "d41e7a90-5b6c-4d7e-8f9a-0b1c2d3e4f33"
IDEAS = "5e9f1a2b-3c4d-4e5f-a6b7-c8d9e0f1a244"
SIDE = "a7b8c9d0-e1f2-4a3b-8c4d-5e6f7a8b9c55"
NOISE = "c0d1e2f3-a4b5-4c6d-8e7f-9a0b1c2d3e66"

Row = tuple[str, "str | None", str, float, int, tuple[str, ...], tuple[str, ...]]

EXPECTED: dict[str, list[Row]] = {
    "prefs-stated": [
        ("Use pytest, not unittest", "semantic", "preference", HIGH, 1, (PREFS_1,),
         ("Use pytest, not unittest.",)),
        ("Always run the tests with `pytest -q` before you commit", "semantic", "preference",
         HIGH, 1, (PREFS_1,), ("Always run the tests with `pytest -q` before you commit.",)),
        ("Never commit directly to main; open a branch first", "semantic", "preference", HIGH,
         1, (PREFS_1,), ("Never commit directly to main; open a branch first.",)),
    ],
    "prefs-restated": [
        ("Use pytest, not unittest", "semantic", "preference", HIGH, 1, (PREFS_2,),
         ("As I said, use pytest not unittest.",)),
        ("The pytest config belongs in pyproject.toml under [tool.pytest.ini_options]",
         "semantic", "correction", MEDIUM, 1, (PREFS_2,),
         ("No, the pytest config belongs in pyproject.toml under [tool.pytest.ini_options].",)),
        ("Prefer small, focused commits", "semantic", "preference", HIGH, 1, (PREFS_2,),
         ("I prefer small, focused commits.",)),
        ("Stop adding emoji to commit messages", "semantic", "preference", HIGH, 1, (PREFS_2,),
         ("Please stop adding emoji to commit messages.",)),
        ("Always run the tests with pytest -q before you commit", "semantic", "preference", HIGH,
         1, (PREFS_2,), ("always run the tests with pytest -q before you commit!",)),
    ],
    "error-then-fix": [
        ("Error then fix: Bash cargo test", "semantic", "error-fix", MEDIUM, 1, (ERRFIX,),
         ("error[E0432]: unresolved import `tilemap::serde_support`",
          "Bash `cargo test --features serde`")),
        ("Error then fix: Edit src/lib.rs", "semantic", "error-fix", MEDIUM, 1, (ERRFIX,),
         ("File has not been read yet. Read it first before writing to it.", "Edit src/lib.rs")),
        ("Don't force-push shared branches", "semantic", "preference", HIGH, 1, (ERRFIX,),
         ("Don't force-push shared branches.",)),
        ("Prefer explicit error types over anyhow in library code", "semantic", "preference",
         HIGH, 1, (ERRFIX,), ("Prefer explicit error types over anyhow in library code.",)),
    ],
    "ideas": [
        ("We should later add the same flag to the import command", None, "idea", LOW, 2,
         (IDEAS,), ("We should later add the same flag to the import command.",
                    "Idea: we should later add the same flag to the import command.")),
        ("It would be nice to have a progress bar for big exports too", None, "idea", LOW, 1,
         (IDEAS,), ("It would be nice to have a progress bar for big exports too.",)),
        ("Document the export formats in the README", None, "idea", LOW, 1, (IDEAS,),
         ("TODO: document the export formats in the README",)),
        ("Always use the staging database for export tests", "semantic", "preference", HIGH, 1,
         (IDEAS,), ("Always use the staging database for export tests.",)),
        ("Never hardcode the token [REDACTED:anthropic-key] in tests", "semantic", "preference",
         HIGH, 1, (IDEAS,), ("Never hardcode the token [REDACTED:anthropic-key] in tests.",)),
        ("Next time, start by reading CONTRIBUTING.md", None, "idea", LOW, 1, (IDEAS,),
         ("next time, start by reading CONTRIBUTING.md",)),
    ],
    "sidechain": [
        ("Error then fix: Read src/tile_id.rs", "semantic", "error-fix", MEDIUM, 1, (SIDE,),
         (("File content (28412 tokens) exceeds maximum allowed tokens (25000). Please use "
           "offset and limit parameters to read spec…"),
          "Read src/tile_id.rs (offset=1, limit=200)")),
        ("Tile IDs are parsed in src/tile_id.rs and in the loader", "semantic", "correction",
         MEDIUM, 1, (SIDE,), ("Actually, tile IDs are parsed in src/tile_id.rs and in the loader.",)),
        ("Never commit directly to main; open a branch first", "semantic", "preference", HIGH, 1,
         (SIDE,), ("Never commit directly to main; open a branch first.",)),
    ],
    "noise-truncated": [
        ("Never use tabs in YAML files", "semantic", "preference", HIGH, 1, (NOISE,),
         ("Never use tabs in YAML files.",)),
    ],
}

#: All six merged (file order): restated preferences count once per statement.
MERGED: list[tuple[str, int, tuple[str, ...]]] = [
    ("Use pytest, not unittest", 2, (PREFS_1, PREFS_2)),
    ("Always run the tests with `pytest -q` before you commit", 2, (PREFS_1, PREFS_2)),
    ("Never commit directly to main; open a branch first", 2, (PREFS_1, SIDE)),
    ("The pytest config belongs in pyproject.toml under [tool.pytest.ini_options]", 1, (PREFS_2,)),
    ("Prefer small, focused commits", 1, (PREFS_2,)),
    ("Stop adding emoji to commit messages", 1, (PREFS_2,)),
    ("Error then fix: Bash cargo test", 1, (ERRFIX,)),
    ("Error then fix: Edit src/lib.rs", 1, (ERRFIX,)),
    ("Don't force-push shared branches", 1, (ERRFIX,)),
    ("Prefer explicit error types over anyhow in library code", 1, (ERRFIX,)),
    ("We should later add the same flag to the import command", 2, (IDEAS,)),
    ("It would be nice to have a progress bar for big exports too", 1, (IDEAS,)),
    ("Document the export formats in the README", 1, (IDEAS,)),
    ("Always use the staging database for export tests", 1, (IDEAS,)),
    ("Never hardcode the token [REDACTED:anthropic-key] in tests", 1, (IDEAS,)),
    ("Next time, start by reading CONTRIBUTING.md", 1, (IDEAS,)),
    ("Error then fix: Read src/tile_id.rs", 1, (SIDE,)),
    ("Tile IDs are parsed in src/tile_id.rs and in the loader", 1, (SIDE,)),
    ("Never use tabs in YAML files", 1, (NOISE,)),
]

ORDER = ["prefs-stated", "prefs-restated", "error-then-fix", "ideas", "sidechain",
         "noise-truncated"]


def _row(item: MinedProposal) -> Row:
    return (item.title, item.kind, item.category, item.confidence, item.occurrences,
            item.sessions, item.excerpts)


def _all_text(item: MinedProposal) -> str:
    return json.dumps([item.title, item.body, item.rationale, item.excerpts,
                       item.to_proposal()])


@pytest.mark.parametrize("name", ORDER)
def test_mining_each_fixture_yields_exactly_the_expected_proposals(name: str) -> None:
    assert [_row(item) for item in mine_file(DATA / f"{name}.jsonl")] == EXPECTED[name]


def test_fixtures_are_the_real_line_shape_with_six_sessions_or_more() -> None:
    files = sorted(DATA.glob("*.jsonl"))
    assert len(files) >= 6 and {f.stem for f in files} == set(ORDER)
    for path in files:
        records = []
        for raw in path.read_bytes().splitlines():
            try:
                records.append(json.loads(raw))
            except (ValueError, RecursionError):  # the junk lines of noise-truncated
                continue
        turns = [r for r in records if isinstance(r, dict) and r.get("type") in
                 ("user", "assistant") and "uuid" in r]
        assert turns, path.name
        for record in turns:
            assert {"parentUuid", "sessionId", "cwd", "timestamp", "isSidechain",
                    "message"} <= set(record), (path.name, record.get("uuid"))
        uses = {b["id"] for r in turns for b in _blocks(r) if b.get("type") == "tool_use"}
        results = {b["tool_use_id"] for r in turns for b in _blocks(r)
                   if b.get("type") == "tool_result"}
        assert results <= uses, path.name  # every tool_result answers a tool_use


def _blocks(record: dict[str, object]) -> list[dict[str, object]]:
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def test_the_fixtures_cover_every_case_the_issue_lists() -> None:
    text = {name: (DATA / f"{name}.jsonl").read_bytes() for name in ORDER}
    assert b'"isSidechain": true' in text["sidechain"]
    assert b'"is_error": true' in text["error-then-fix"]
    for kind in (b'"summary"', b'"file-history-snapshot"', b'"progress"', b'"system"',
                 b'"attachment"', b'"queue-operation"'):
        assert any(b'"type": ' + kind in body for body in text.values()), kind
    noise = text["noise-truncated"]
    assert not noise.endswith(b"\n") and b"Always squash-merge" in noise.splitlines()[-1]
    with pytest.raises(UnicodeDecodeError):
        noise.decode("utf-8")


def test_restated_preferences_merge_across_sessions_with_both_sessions_listed() -> None:
    merged = merge_mined(mine_file(DATA / f"{name}.jsonl") for name in ORDER)
    assert [(m.title, m.occurrences, m.sessions) for m in merged] == MERGED
    pytest_pref = merged[0]
    assert pytest_pref.excerpts == ("Use pytest, not unittest.",
                                    "As I said, use pytest not unittest.")
    assert len(pytest_pref.turns) == 2


def test_sidechain_text_is_never_taken_as_the_operator() -> None:
    titles = " ".join(m.title for m in mine_file(DATA / "sidechain.jsonl"))
    assert "report file paths" not in titles and "modify files" not in titles
    assert "src/grid.rs" not in titles  # the subagent's "No, that's wrong" is not a correction


def test_private_text_and_secrets_never_leave_the_miner() -> None:
    mined = mine_file(DATA / "ideas.jsonl")
    text = " ".join(_all_text(m) for m in mined)
    assert "hunter2" not in text and "paste it anywhere" not in text
    assert "sk-ant-api03" not in text and "[REDACTED:anthropic-key]" in text


def test_secrets_in_tool_calls_and_errors_are_redacted_before_shortening() -> None:
    key = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9"
    lines = [
        _assistant("a1", [_use("t1", "Bash", {"command": f"curl -H 'Authorization: Bearer "
                                                         f"{key}' https://api.example.com/x"})]),
        _user("u1", [_result("t1", f"401 Unauthorized for token {key}", is_error=True)]),
        _assistant("a2", [_use("t2", "Bash", {"command": "curl --netrc https://api.example.com/x"})]),
        _user("u2", [_result("t2", "ok")]),
    ]
    (fix,) = mine_transcript(lines, source="s")
    assert key[:12] not in _all_text(fix) and "[REDACTED:" in fix.body


def test_every_mined_proposal_is_a_valid_reflect_proposal() -> None:
    mined = merge_mined(mine_file(DATA / f"{name}.jsonl") for name in ORDER)
    bundle = {"slug": "mined", "log_body": "x", "reflect": [m.to_proposal() for m in mined]}
    validated = validate_bundle(bundle, load_manifest())
    assert [p.title for p in validated.reflect] == [m.title for m in mined]
    ideas = [p for p in validated.reflect if p.confidence < 0.6]
    assert ideas and all(p.kind is None for p in ideas)
    first = mined[0].to_proposal()
    assert first["body"].startswith("Use pytest, not unittest\n\n> Use pytest, not unittest.")
    assert first["sources"] == [f"transcript:{PREFS_1}", f"transcript:{PREFS_2}"]
    assert first["tags"] == ["mined", "preference"]


def test_error_fix_body_says_what_failed_and_what_worked() -> None:
    by_title = {m.title: m for m in mine_file(DATA / "error-then-fix.jsonl")}
    cargo = by_title["Error then fix: Bash cargo test"]
    assert cargo.body == ("Failed: Bash `cargo test` -> error[E0432]: unresolved import "
                          "`tilemap::serde_support`\nWorked: Bash `cargo test --features serde`")
    edit = by_title["Error then fix: Edit src/lib.rs"]
    assert edit.body.splitlines()[1:] == ["Then: Read src/lib.rs",
                                          "Worked: Edit src/lib.rs (the same call, retried)"]
    assert "after Read src/lib.rs" in edit.rationale
    assert edit.turns[0] != edit.turns[1]


def test_correction_rationale_quotes_what_was_corrected() -> None:
    (fix,) = [m for m in mine_file(DATA / "prefs-restated.jsonl") if m.category == "correction"]
    assert "setup.cfg under [tool:pytest]" in fix.rationale
    assert fix.rationale.startswith("correction: no: the operator answered")
    assert "setup.cfg" in fix.body


def test_mining_the_same_lines_twice_gives_the_same_proposals() -> None:
    raw = (DATA / "error-then-fix.jsonl").read_bytes().splitlines(keepends=True)
    assert mine_transcript(raw) == mine_transcript(raw) == mine_file(DATA / "error-then-fix.jsonl")


def test_lines_without_session_ids_take_the_source_name_and_line_numbers() -> None:
    lines = [json.dumps({"type": "user", "message": {"role": "user",
                                                     "content": "Always use tabs in Makefiles."}})]
    (item,) = mine_transcript(lines, source="file-stem")
    assert item.sessions == ("file-stem",) and item.turns == ("line 1",)


def test_merge_keeps_the_highest_confidence_and_caps_excerpts() -> None:
    def one(session: str, excerpt: str, confidence: float) -> MinedProposal:
        return MinedProposal("Use uv", "semantic", "Use uv", confidence, "preference", "r",
                             (excerpt,), (session,), (f"{session}-t",))
    merged = merge_mined([[one("s1", "a", 0.7)], [one("s2", "b", 0.9), one("s3", "c", 0.4)],
                          [one("s4", "d", 0.7), one("s1", "a", 0.7)]])
    (item,) = merged
    assert item.occurrences == 5 and item.confidence == 0.9
    assert item.sessions == ("s1", "s2", "s3", "s4")
    assert item.excerpts == ("a", "b", "c")


def test_key_ignores_case_punctuation_and_spacing() -> None:
    a = MinedProposal("Use pytest, not unittest", None, "", 0.9, "preference", "", (), (), ())
    b = attrs.evolve(a, title="use  PYTEST not unittest!")
    assert a.key() == b.key() == "use pytest not unittest"


# -- line builders ---------------------------------------------------------------------


def _user(uuid: str, content: object, **extra: object) -> str:
    return json.dumps({"type": "user", "uuid": uuid, "sessionId": "s",
                       "message": {"role": "user", "content": content}, **extra})


def _assistant(uuid: str, blocks: list[dict[str, object]], **extra: object) -> str:
    return json.dumps({"type": "assistant", "uuid": uuid, "sessionId": "s",
                       "message": {"role": "assistant", "content": blocks}, **extra})


def _use(use_id: str, name: str, tool_input: dict[str, object]) -> dict[str, object]:
    return {"type": "tool_use", "id": use_id, "name": name, "input": tool_input}


def _result(use_id: str, text: str, *, is_error: bool = False) -> dict[str, object]:
    return {"type": "tool_result", "tool_use_id": use_id, "content": text, "is_error": is_error}
