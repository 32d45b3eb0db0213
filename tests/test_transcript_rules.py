"""Each mining rule on its own: preference, correction, idea, the tool target and the
error-then-fix tracker."""

from __future__ import annotations

import json

import pytest

from echo_core.ops.transcript_mining import mine_transcript
from echo_core.ops.transcript_parse import ToolUse, TranscriptTurn, parse_lines
from echo_core.ops.transcript_rules import correction, idea, preference, sentences
from echo_core.ops.transcript_rules_tools import ErrorFixTracker, command_head, tool_target


@pytest.mark.parametrize(("sentence", "title"), [
    ("Always use pathlib in new code.", "Always use pathlib in new code"),
    ("never push to main", "Never push to main"),
    ("Please always run ruff first!", "Always run ruff first"),
    ("From now on, never log tokens.", "Never log tokens"),
    ("I prefer tabs.", "Prefer tabs"),
    ("I really prefer small PRs", "Prefer small PRs"),
    ("Prefer composition over inheritance.", "Prefer composition over inheritance"),
    ("I'd prefer httpx to requests", "Prefer httpx over requests"),
    ("Use uv not pip.", "Use uv, not pip"),
    ("use ruff instead of flake8", "Use ruff, not flake8"),
    ("Use pathlib rather than os.path", "Use pathlib, not os.path"),
    ("Don't add type: ignore comments.", "Don't add type: ignore comments"),
    ("Do not commit generated files", "Don't commit generated files"),
    ("Please stop adding emoji to commits.", "Stop adding emoji to commits"),
    ("As I said, use pytest not unittest.", "Use pytest, not unittest"),
    ("That's wrong, never use sudo here.", "Never use sudo here"),
])
def test_preference_rule_matches_explicit_preferences(sentence: str, title: str) -> None:
    hit = preference(sentence)
    assert hit is not None and hit.title == title and hit.rule.startswith("preference: ")


@pytest.mark.parametrize("sentence", [
    "Should we always pin versions?",             # a question
    "Don't worry about the docs.",                 # reassurance
    "Don't bother with the legacy tests",
    "Never mind.",
    "I don't know why it fails.",
    "We always forget this step",                  # not imperative
    "The build never finishes on CI.",             # not at the start
    "Stop.",                                       # no activity named
    "Always " + "x " * 100,                        # too long to be a statement
    "Use the force, Luke.",                        # use without "not / instead of"
])
def test_preference_rule_leaves_everything_else(sentence: str) -> None:
    assert preference(sentence) is None


@pytest.mark.parametrize(("sentence", "title"), [
    ("No, the config lives in pyproject.toml.", "The config lives in pyproject.toml"),
    ("Nope - the tests are under tests/unit.", "The tests are under tests/unit"),
    ("That's wrong, the port is 8443.", "The port is 8443"),
    ("That is not what I asked: rename the module only.", "Rename the module only"),
    ("Actually, the API returns a list.", "The API returns a list"),
    ("Not the staging bucket but the archive bucket.",
     "The archive bucket, not the staging bucket"),
    ("You should have asked before deleting files.",
     "Should have asked before deleting files"),
])
def test_correction_rule_keeps_the_corrected_statement(sentence: str, title: str) -> None:
    hit = correction(sentence)
    assert hit is not None and hit.title == title and hit.rule.startswith("correction: ")


@pytest.mark.parametrize("sentence", [
    "No.", "Nope, not yet", "No, thanks, that's all.", "No worries at all.",
    "No, I don't think we need that.", "No problem, carry on.", "Is that wrong?",
    "Now run the tests.", "Nobody uses that flag.", "Actually fine",
])
def test_correction_rule_ignores_replies_that_correct_nothing(sentence: str) -> None:
    assert correction(sentence) is None


@pytest.mark.parametrize(("sentence", "title"), [
    ("We should later add a --json flag.", "We should later add a --json flag"),
    ("Later we should split this module.", "Later we should split this module"),
    ("TODO: document the retry policy", "Document the retry policy"),
    ("todo - add a dark mode", "Add a dark mode"),
    ("It would be nice to cache the index.", "It would be nice to cache the index"),
    ("Next time, start with the CHANGELOG.", "Next time, start with the CHANGELOG"),
    ("Idea: a progress bar for exports", "A progress bar for exports"),
    ("At some point we could drop Python 3.10.", "At some point we could drop Python 3.10"),
])
def test_idea_rule_finds_forward_looking_ideas(sentence: str, title: str) -> None:
    hit = idea(sentence)
    assert hit is not None and hit.title == title and hit.rule == "idea: forward-looking"


@pytest.mark.parametrize("sentence", [
    "TODO", "Idea: no", "Should we do it next time?", "We should fix this now.",
    "The TODO list is long.",
])
def test_idea_rule_ignores_the_rest(sentence: str) -> None:
    assert idea(sentence) is None


def test_sentences_drop_code_injected_tags_and_markup() -> None:
    text = ("Please fix it.\n```\nalways = True\n```\n<system-reminder>Never do X."
            "</system-reminder>\n- Never use tabs! And also: use uv not pip.\n> quoted"
            "\n`never inline`")
    assert sentences(text) == ["Please fix it.", "Never use tabs!", "And also: use uv not pip.",
                               "quoted"]


@pytest.mark.parametrize(("command", "head"), [
    ("cargo test", "cargo test"),
    ("cargo test --features serde", "cargo test"),
    ("npm run build -- --verbose", "npm run"),
    ("cd app && RUST_LOG=debug cargo build", "cargo build"),
    ("sudo apt-get install -y jq", "apt-get install"),
    ("python -m pytest -q tests/", "python -m pytest"),
    ("/usr/bin/python3 script.py", "python3"),
    ("pytest -q", "pytest"),
    ("ls | head", "ls"),
    ("FOO=1", ""),
    ("", ""),
])
def test_command_head_is_the_program_and_its_sub_command(command: str, head: str) -> None:
    assert command_head(command) == head


def test_tool_target_is_the_command_head_the_path_or_the_url() -> None:
    assert tool_target(ToolUse("1", "Bash", {"command": "git push -f"})) == "git push"
    assert tool_target(ToolUse("1", "Edit", {"file_path": "/w/src/a.py"}), "/w") == "src/a.py"
    assert tool_target(ToolUse("1", "Edit", {"file_path": "/other/a.py"}), "/w") == "/other/a.py"
    assert tool_target(ToolUse("1", "NotebookEdit", {"notebook_path": "n.ipynb"})) == "n.ipynb"
    assert tool_target(ToolUse("1", "WebFetch", {"url": "https://x.test/a"})) == "https://x.test/a"
    assert tool_target(ToolUse("1", "TodoWrite", {"todos": []})) == ""


# -- the error-then-fix tracker -----------------------------------------------------------


def _call(n: int, name: str, tool_input: dict[str, object]) -> str:
    return json.dumps({"type": "assistant", "uuid": f"a{n}", "sessionId": "s", "cwd": "/w",
                       "message": {"role": "assistant", "content": [
                           {"type": "tool_use", "id": f"t{n}", "name": name,
                            "input": tool_input}]}})


def _result(n: int, text: str, is_error: bool = False) -> str:
    return json.dumps({"type": "user", "uuid": f"u{n}", "sessionId": "s", "message": {
        "role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}",
                                     "content": text, "is_error": is_error}]}})


def _fixes(lines: list[str]) -> list[tuple[str, str, str, tuple[str, ...], bool]]:
    tracker = ErrorFixTracker()
    out = []
    for turn in parse_lines(lines):
        if turn.role == "assistant":
            tracker.saw_calls(turn)
        else:
            out += [(f.target, f.failed, f.worked, f.between, f.same_call)
                    for f in tracker.saw_results(turn)]
    return out


def test_a_failure_then_a_different_success_on_the_same_target_is_a_fix() -> None:
    lines = [_call(1, "Bash", {"command": "npm test"}), _result(1, "jest: not found", True),
             _call(2, "Bash", {"command": "npm install"}), _result(2, "added 3"),
             _call(3, "Bash", {"command": "npm test -- --ci"}), _result(3, "ok")]
    assert _fixes(lines) == [("npm test", "Bash `npm test`", "Bash `npm test -- --ci`",
                              ("Bash `npm install`",), False)]


def test_an_identical_shell_retry_is_not_a_lesson() -> None:
    lines = [_call(1, "Bash", {"command": "pytest"}), _result(1, "1 failed", True),
             _call(2, "Edit", {"file_path": "/w/a.py"}), _result(2, "ok"),
             _call(3, "Bash", {"command": "pytest"}), _result(3, "passed")]
    assert _fixes(lines) == []


def test_an_identical_file_tool_retry_after_other_calls_is_a_lesson() -> None:
    edit = {"file_path": "/w/a.py", "old_string": "x", "new_string": "y"}
    lines = [_call(1, "Edit", edit), _result(1, "File has not been read yet.", True),
             _call(2, "Read", {"file_path": "/w/a.py"}), _result(2, "x"),
             _call(3, "Edit", edit), _result(3, "updated")]
    assert _fixes(lines) == [("a.py", "Edit a.py", "Edit a.py", ("Read a.py",), True)]


def test_a_refusal_or_an_interruption_is_not_a_failure() -> None:
    lines = [_call(1, "Bash", {"command": "git push --force"}),
             _result(1, "The user doesn't want to proceed with this tool use.", True),
             _call(2, "Bash", {"command": "git push"}), _result(2, "ok"),
             _call(3, "Bash", {"command": "make all"}),
             _result(3, "[Request interrupted by user for tool use]", True),
             _call(4, "Bash", {"command": "make all -j2"}), _result(4, "ok")]
    assert _fixes(lines) == []


def test_results_without_a_known_call_or_target_are_ignored() -> None:
    lines = [_result(9, "boom", True), _call(1, "TodoWrite", {"todos": []}),
             _result(1, "bad", True), _call(2, "TodoWrite", {"todos": [1]}), _result(2, "ok"),
             _call(3, "Bash", {"command": "ls"}), _result(3, "boom", True),
             _call(4, "Bash", {"command": "cat x"}), _result(4, "ok")]
    assert _fixes(lines) == []


def test_a_success_on_another_target_does_not_close_the_failure() -> None:
    lines = [_call(1, "Edit", {"file_path": "/w/a.py", "old_string": "1"}),
             _result(1, "not found", True),
             _call(2, "Edit", {"file_path": "/w/b.py", "old_string": "1"}), _result(2, "ok"),
             _call(3, "Edit", {"file_path": "/w/a.py", "old_string": "2"}), _result(3, "ok")]
    assert _fixes(lines) == [("a.py", "Edit a.py", "Edit a.py", ("Edit b.py",), False)]


def test_a_preference_in_a_correcting_turn_is_only_a_preference() -> None:
    lines = [json.dumps({"type": "assistant", "uuid": "a1", "sessionId": "s", "message": {
                 "role": "assistant", "content": [{"type": "text", "text": "I used unittest."}]}}),
             json.dumps({"type": "user", "uuid": "u1", "sessionId": "s", "message": {
                 "role": "user", "content": "No, always use pytest for new tests."}})]
    (item,) = mine_transcript(lines)
    assert (item.title, item.category, item.confidence) == (
        "Always use pytest for new tests", "preference", 0.9)


def test_a_correction_needs_the_agent_to_have_spoken_first() -> None:
    line = json.dumps({"type": "user", "uuid": "u1", "sessionId": "s", "message": {
        "role": "user", "content": "Actually, the server runs on port 8443."}})
    assert mine_transcript([line]) == []


def test_turn_ref_prefers_the_uuid() -> None:
    assert TranscriptTurn(3, "user", "s", uuid="abc").ref == "abc"
    assert TranscriptTurn(3, "user", "s").ref == "line 3"
