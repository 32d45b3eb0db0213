"""``echo_core.redaction`` on the shapes a tester found it missed: a password said in
prose ("my password is hunter2"), a Hugging Face token of letters only, an AWS secret key
right after its access key id, and a secret inside a quoted value that is not itself a
secret (``"command": "export DB_PASSWORD=..."``), each with the look-alikes that must
survive. The hook recorder's copy of the rules gives the same text on each
(``test_habitat_record_redaction_values.py``)."""

from __future__ import annotations

import pytest

from echo_core.redaction import ordered, redact

AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
HF_LETTERS = "hf_" + "GOYqzjzXNHVfVvOUMcJpwYOoEmqGbHndIV"

#: (text, the secret that must go, the marker that replaces it)
PHRASES: list[tuple[str, str, str]] = [
    ("my password is hunter2", "hunter2", "env-secret"),
    ("the password is: P@ssword", "P@ssword", "env-secret"),
    ("Password was 'open sesame' then", "open sesame", "env-secret"),
    ("the db password is 1234abcd.", "1234abcd", "env-secret"),
    ("MY PASSWORD IS Hunter2!", "Hunter2", "env-secret"),
    ("the passphrase is swordFish", "swordFish", "env-secret"),
    ("the pin password is 4711", "4711", "env-secret"),
    (f"HF login {HF_LETTERS}", HF_LETTERS, "huggingface-token"),
    (f"{AWS_ID} {AWS_SECRET}", AWS_SECRET, "aws-secret-key"),
    (f"{AWS_ID},{AWS_SECRET}", AWS_SECRET, "aws-secret-key"),
    (f"key {AWS_ID}\nsecret: {AWS_SECRET}\n", AWS_SECRET, "aws-secret-key"),
    ('{"command":"export DB_PASSWORD=hunter2XYZ && ./migrate"}', "hunter2XYZ", "env-secret"),
    ('run: "export API_TOKEN=abc123xyz; make"', "abc123xyz", "env-secret"),
    ("cmd: 'echo \"GITHUB_TOKEN=abcdef123456\"'", "abcdef123456", "env-secret"),
]

LOOKALIKES: list[str] = [
    "the password is incorrect.",
    "password is required",
    "your password is too short",
    "the password was changed yesterday",
    "This password is WRONG",
    "the password is e.g. long enough",
    "password is 8 chars",
    "DB_PASSWORD is set",
    "pwd is /home/me/project",
    "the password is $DB_PASSWORD",
    "token: is required",
    "the key is island9",
    "hf_" + "abcdefghijabcdefghijabcdefghijabcd",
    "hf_hub_download(repo_id='x')",
    f"blob {AWS_SECRET} without an id",
    '{"command":"ls -la","cwd":"/work"}',
    "name: 'plain words here', level: \"debug\"",
]


@pytest.mark.parametrize(("text", "secret", "rule"), PHRASES)
def test_the_secret_goes_and_its_marker_stays(text: str, secret: str, rule: str) -> None:
    result = redact(text)
    assert secret not in result.text
    assert f"[REDACTED:{rule}]" in result.text
    assert rule in result.found
    assert redact(result.text).text == result.text  # idempotent


@pytest.mark.parametrize("text", LOOKALIKES)
def test_a_look_alike_survives_byte_for_byte(text: str) -> None:
    result = redact(text)
    assert result.text == text and result.found == ()


def test_a_phrase_keeps_its_words_and_a_quoted_value_its_quotes() -> None:
    assert redact("my password is hunter2 ok").text == "my password is [REDACTED:env-secret] ok"
    assert (redact('{"command":"export DB_PASSWORD=hunter2XYZ && ./migrate"}').text
            == '{"command":"export DB_PASSWORD=[REDACTED:env-secret] && ./migrate"}')
    assert redact("said 'password was \"x y z\"'").text == (
        "said 'password was \"[REDACTED:env-secret]\"'")


def test_the_id_and_its_secret_both_go_and_each_rule_is_named_once() -> None:
    text = (f"{AWS_ID} {AWS_SECRET}\naws_secret_access_key = {AWS_SECRET}\n"
            f"{AWS_ID}:{AWS_SECRET}")
    result = redact(text)
    assert AWS_ID not in result.text and AWS_SECRET not in result.text
    assert result.found == ("aws-access-key-id", "aws-secret-key")
    sha = "3f786850e387550fdab836ed7e6dc881de23001b"  # lower-case hex: not a secret key
    assert redact(f"{AWS_ID} commit {sha}").text == f"[REDACTED:aws-access-key-id] commit {sha}"
    assert ordered({"aws-secret-key", "aws-access-key-id", "env-secret"}) == (
        "aws-access-key-id", "aws-secret-key", "env-secret")
