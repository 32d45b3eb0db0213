"""JSON a user hands a verb (a proposals file, a bundle, decisions) that Python's decoder
cannot read — nested deeper than its stack, or an integer longer than it converts — is a
usage error (exit 2, JSON on stdout with --json) naming the input, and nothing is written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.user_json import parse_user_json
from tests.cli_inproc import vault_runner

DEEP = "[" * 100_000 + "]" * 100_000
HUGE = "9" * 5000
PROPOSAL = '{"title": "Ada", "kind": "person", "body": "b", "confidence": ' + HUGE + "}"

#: (verb and its options before the file, how the file is given, file text, input name)
CASES = [
    (["reflect", "--apply"], [], f"[{PROPOSAL}]", "PROPOSALS"),
    (["triage", "apply", "--apply"], [], f"[{PROPOSAL}]", "proposals file"),
    (["inbox", "review", "--apply"], ["--decisions"], '[{"line": "- x", "n": ' + HUGE + "}]",
     "proposals file"),
    (["session-end", "--apply"], [], '{"reflect": [' + PROPOSAL + "]}", "bundle"),
]


def _files(vault: Path) -> dict[str, bytes]:
    return {str(p.relative_to(vault)): p.read_bytes() for p in sorted(vault.rglob("*"))
            if p.is_file()}


@pytest.mark.parametrize("hostile", ["deep", "huge"])
@pytest.mark.parametrize(("verb", "flag", "huge_text", "name"), CASES,
                         ids=[" ".join(c[0][:-1]) for c in CASES])
def test_hostile_json_is_a_usage_error_and_writes_nothing(
        isolated_env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, verb: list[str], flag: list[str], huge_text: str,
        name: str, hostile: str) -> None:
    run = vault_runner(tmp_path, capsys, monkeypatch)
    source = tmp_path / "input.json"
    source.write_text(DEEP if hostile == "deep" else huge_text, encoding="utf-8")
    before = _files(run.vault)
    done = run(*verb, "--json", *flag, str(source))
    assert done.code == ExitCode.USAGE, done
    error = json.loads(done.out)["error"]
    assert error["exit"] == ExitCode.USAGE
    assert error["message"].startswith(f"{name}: not valid JSON (")
    if hostile == "huge":
        assert "5000 digits" in error["message"]
    assert _files(run.vault) == before


def test_parse_user_json_names_the_field_holding_a_huge_integer() -> None:
    text = '{"reflect": [{"title": "a"}, {"confidence": -' + HUGE + "}]}"
    with pytest.raises(EchoError) as caught:
        parse_user_json(text, "bundle", "see `echo-memory session-end --help`")
    assert caught.value.code == ExitCode.USAGE
    assert str(caught.value) == (
        "bundle: not valid JSON (reflect[1].confidence: an integer of 5000 digits; at most "
        "4300 are read); see `echo-memory session-end --help`")


def test_parse_user_json_reads_ordinary_json_and_reports_syntax_with_its_place() -> None:
    assert parse_user_json('{"a": [1, 2.5, "x", null]}', "it") == {"a": [1, 2.5, "x", None]}
    with pytest.raises(EchoError, match=r"^it: not valid JSON \(line 2, column 1: "):
        parse_user_json("[1,\n]", "it")


def test_parse_user_json_refuses_nesting_deeper_than_the_decoder_can_go() -> None:
    with pytest.raises(EchoError, match="nested too deeply") as caught:
        parse_user_json(DEEP, "PROPOSALS")
    assert caught.value.code == ExitCode.USAGE


def test_a_key_given_twice_in_one_object_is_refused() -> None:
    from echo_core.errors import EchoError, ExitCode
    from echo_core.user_json import parse_user_json

    with pytest.raises(EchoError) as refused:
        parse_user_json('[{"title": "A", "body": "x", "title": "B"}]', "PROPOSALS")
    assert refused.value.code == ExitCode.USAGE
    assert "'title' is given twice" in refused.value.message
    assert parse_user_json('[{"a": {"a": 1}}]', "X") == [{"a": {"a": 1}}]  # nesting: fine
