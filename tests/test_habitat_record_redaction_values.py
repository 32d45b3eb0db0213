"""The hook recorder redacts a tool's input and response string by string, as a capture
redacts its text, before they become JSON (where ``NAME=value`` sat inside JSON's quotes
and escapes and went unmasked), nested values and ``"password": ...`` keys included; its
copy of the rules gives the core's text on the new shapes; an event that is not a JSON
object (an empty stdin too) records nothing. Run as the built plugin runs it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from echo_core.redaction import redact
from plugins.habitat import hook_record_redact
from tests.capture_kit import VaultBox
from tests.habitat_record_kit import box_at, hook_env, loom_json, loom_of, payload, run_recorder
from tests.test_redaction_phrases import LOOKALIKES, PHRASES


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return box_at(tmp_path / "box")


def _records(box: VaultBox) -> list[dict[str, Any]]:
    return loom_json(loom_of(box.ctx()))


def _tool(box: VaultBox, tool_input: Any, response: Any = "ok") -> dict[str, Any]:
    proc = run_recorder("PostToolUse", payload("s", tool_name="Bash", tool_input=tool_input,
                                               tool_response=response), hook_env(box))
    assert proc.returncode == 0 and proc.stdout == b"", proc.stderr
    record: dict[str, Any] = _records(box)[-1]
    assert record["kind"] == "tool"
    return record


def _as_captured(value: Any) -> Any:
    """Each string of ``value`` as a capture stores it."""
    if isinstance(value, str):
        return redact(value).text
    if isinstance(value, dict):
        return {_as_captured(k): _as_captured(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_captured(v) for v in value]
    return value


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def test_an_env_secret_in_a_command_is_masked_as_a_capture_masks_it(box: VaultBox) -> None:
    command = "export DB_PASSWORD=hunter2XYZ && ./migrate"
    record = _tool(box, {"command": command}, {"stdout": "ok"})
    assert "hunter2XYZ" not in json.dumps(record)
    assert record["text"] == "Bash " + _json({"command": redact(command).text})
    assert record["text"] == 'Bash {"command":"export DB_PASSWORD=[REDACTED:env-secret] && ./migrate"}'


def test_nested_values_lists_keys_and_the_response_are_masked(box: VaultBox) -> None:
    tool_input = {"script": "a\nGITHUB_TOKEN=abcdef123456\nb", "opts": {
        "env": ["X=1", "API_KEY=sk9f8g7h6j5k"], "password": "pw-9xq!", "n": 3, "ok": True},
        "note": "my password is hunter2"}
    response = {"stdout": "OPENAI_API_KEY=abc123def456\n", "lines": [{"secret": "zz9yy8xx7"}]}
    record = _tool(box, tool_input, response)
    raw = json.dumps(record)
    for secret in ("abcdef123456", "sk9f8g7h6j5k", "pw-9xq!", "hunter2", "abc123def456",
                   "zz9yy8xx7"):
        assert secret not in raw, secret
    assert record["text"] == "Bash " + redact(_json(_as_captured(tool_input))).text
    assert json.loads(record["text"][len("Bash "):])["opts"]["n"] == 3
    assert record["result"] == redact(_json(_as_captured(response))).text


def test_a_long_input_is_cut_after_masking_and_says_so(box: VaultBox) -> None:
    tool_input = {"content": "DB_PASSWORD=hunter2XYZ\n" + "x" * 20000,
                  "later": ["TOKEN=zz9yy8xx7"] * 3000}
    record = _tool(box, tool_input)
    assert "hunter2XYZ" not in record["text"] and "zz9yy8xx7" not in record["text"]
    assert record["truncated"] is True and len(record["text"]) == 8000
    assert record["text"].startswith('Bash {"content":"DB_PASSWORD=[REDACTED:env-secret]\\nxxx')


def test_a_plain_or_absent_input_is_recorded_as_before(box: VaultBox) -> None:
    assert _tool(box, "ls -la\n")["text"] == "Bash ls -la"
    assert _tool(box, None)["text"] == "Bash"
    assert _tool(box, {"command": "ls"})["text"] == 'Bash {"command":"ls"}'


@pytest.mark.parametrize("stdin", [b"", b"\n", b"  \t\n", b"[]"])
def test_an_event_that_is_not_an_object_records_nothing(box: VaultBox, stdin: bytes) -> None:
    proc = run_recorder("PostToolUse", stdin, hook_env(box))
    assert proc.returncode == 0 and proc.stdout == b""
    assert not list(box.state.glob("vaults/*/habitat/loom/*.jsonl"))
    logs = list(box.state.glob("vaults/*/habitat/hook-errors.log"))
    assert logs and "PostToolUse" in logs[0].read_text()


@pytest.mark.parametrize("text", [t for t, _, _ in PHRASES] + LOOKALIKES)
def test_the_recorders_rules_give_the_cores_text(text: str) -> None:
    assert hook_record_redact.redact_text(text) == redact(text).text


def test_the_recorders_phrase_check_is_the_cores() -> None:
    from echo_core import redaction

    assert hook_record_redact.SYMBOLS == redaction._SYMBOLS
    for name, value in [("password", "hunter2"), ("password", "incorrect."), ("pwd", "/x1"),
                        ("token", "'two words'"), ("secret", "4711"), ("secret", "42")]:
        assert (hook_record_redact._phrase_value_is_secret(name, value)
                == redaction._phrase_value_is_secret(name, value))


_PEM = ("-----BEGIN RSA PRIVATE KEY-----\n" + ("A" * 64 + "\n") * 40
        + "-----END RSA PRIVATE KEY-----\n")


@pytest.mark.parametrize(("secret", "shown"), [
    ('DB_PASSWORD="Tr0ub4dor&3horse"', "Tr0ub4dor"),
    ("ghp_" + "Zx9" * 14, "Zx9Zx9Zx9Zx9"),
], ids=["env-secret", "github-token"])
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "in-json"])
def test_a_secret_cut_by_the_window_is_not_pulled_in_by_an_earlier_shorter_mask(
        box: VaultBox, secret: str, shown: str, as_json: bool) -> None:
    """The recorder redacts the first 8,000 + 512 characters and keeps 8,000. A PEM key
    early in the text shrinks to a short mask, so the kept 8,000 reached the window's
    end, where a secret cut short matched no rule (the tester's hook_cut_leak*.py)."""
    cut_at = 8000 + 512
    head = _PEM + "x" * (cut_at - len(_PEM) - len(secret) // 2 - 1) + " "
    response = head + secret + "\nmore"
    assert len(head) < cut_at < len(head) + len(secret)
    record = _tool(box, {"command": "cat .env"},
                   {"stdout": response} if as_json else response)
    assert shown not in json.dumps(record) and record["truncated"] is True
    assert "BEGIN RSA PRIVATE KEY" not in json.dumps(record)
